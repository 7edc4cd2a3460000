//! The per-GPU chart: for every GPU of a load, stacked bars of what the estimate charged, what the runner's
//! buffers hold and what nvidia-smi saw, by component, under a line at the GPU's capacity — so a needless
//! split (a big estimate over almost nothing real) or a near-OOM is visible at a glance.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{
    gib, CAPACITY, FLOOR, FONT, GRAPH, KV, OTHER, PROJECTOR, UNATTRIBUTED, WEIGHTS,
};
use super::{draw_legend, gib_axes, Axes, ChartError};
use crate::model::{human, Concluded, Device, DeviceRow, EstimatePart, Part, Quantity};

/// A stack segment's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    Weights,
    Kv,
    Graph,
    Projector,
    Floor,
    Layers,
    Unattributed,
    OtherProcesses,
}

impl Segment {
    const ALL: [Segment; 8] = [
        Segment::Weights,
        Segment::Kv,
        Segment::Graph,
        Segment::Projector,
        Segment::Layers,
        Segment::Floor,
        Segment::Unattributed,
        Segment::OtherProcesses,
    ];

    fn color(self) -> RGBColor {
        match self {
            Segment::Weights => WEIGHTS,
            Segment::Kv => KV,
            Segment::Graph => GRAPH,
            Segment::Projector => PROJECTOR,
            Segment::Floor => FLOOR,
            Segment::Layers => RGBColor(150, 180, 220),
            Segment::Unattributed => UNATTRIBUTED,
            Segment::OtherProcesses => OTHER,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Segment::Weights => "weights",
            Segment::Kv => "KV cache",
            Segment::Graph => "compute graph",
            Segment::Projector => "vision projector",
            Segment::Floor => "per-GPU minimum / measured context",
            Segment::Layers => "layers: weights+KV+projector (estimate, not itemised per GPU)",
            Segment::Unattributed => "unattributed (CUDA context, unlogged)",
            Segment::OtherProcesses => "other processes",
        }
    }
}

type Stack = Vec<(Segment, i64)>;

/// One GPU's bars (estimate, buffers, nvidia-smi) and the line drawn over them.
type Group<'a> = (
    &'a DeviceRow,
    [Option<Stack>; 3],
    Option<(Quantity, &'static str)>,
);

/// What the estimate charged to one device, by part (the reconcile stage itemises it).
fn estimated(row: &DeviceRow) -> Option<Stack> {
    row.estimated?;
    Some(
        row.estimated_parts
            .iter()
            .map(|(part, bytes)| {
                let segment = match part {
                    EstimatePart::Weights => Segment::Weights,
                    EstimatePart::Kv => Segment::Kv,
                    EstimatePart::Graph => Segment::Graph,
                    EstimatePart::Floor => Segment::Floor,
                    EstimatePart::Layers => Segment::Layers,
                };
                (segment, *bytes)
            })
            .collect(),
    )
}

/// The runner's buffers on one device, by component (the reconcile stage's grid).
fn buffers(load: &Concluded, device: &Device) -> Stack {
    let grid = &load.reconciled.grid;
    let bytes = |parts: &[Part]| parts.iter().map(|p| grid.bytes(device, *p)).sum::<i64>();
    let sums = [
        bytes(&[Part::Weights]),
        bytes(&[Part::Kv, Part::State]),
        bytes(&[Part::Graph, Part::Output]),
        bytes(&[Part::Projector]),
    ];
    [
        Segment::Weights,
        Segment::Kv,
        Segment::Graph,
        Segment::Projector,
    ]
    .into_iter()
    .zip(sums)
    .filter(|(_, b)| *b > 0)
    .collect()
}

/// What nvidia-smi saw: the buffers, then what no log line accounts for, then other processes.
fn observed(load: &Concluded, device: &Device) -> Option<Stack> {
    let o = load
        .reconciled
        .observed
        .iter()
        .find(|o| o.device == *device)?;
    let used = o.used?.bytes;
    let mut stack = buffers(load, device);
    let others = o.other_processes.map(|q| q.bytes).unwrap_or(0).max(0);
    let buffered: i64 = stack.iter().map(|(_, b)| b).sum();
    let residual = used - buffered - others;
    if residual < 0 {
        // The capture shows less than the buffers (taken mid-load?): show the used figure alone.
        return Some(vec![(Segment::Unattributed, used)]);
    }
    stack.push((Segment::Unattributed, residual));
    if others > 0 {
        stack.push((Segment::OtherProcesses, others));
    }
    Some(stack)
}

/// When the measured replay fits the model on fewer GPUs than the log used: the whole model on that GPU, by
/// the measured sizes (weights, KV, graph, the measured CUDA context).
fn single_gpu_replay(load: &Concluded) -> Option<(Device, Stack)> {
    let m = load.whatif.as_ref()?.measured.as_ref()?;
    let e = load.reconciled.load.estimate.as_ref()?;
    // GPUs the model sat on: the logged split, or (llama-server, which prints none) the GPUs holding weights.
    let with_weights = load.reconciled.grid.gpus_with_weights();
    let used_in_log = e
        .layers
        .split
        .iter()
        .filter(|&&n| n > 0)
        .count()
        .max(with_weights.len());
    let used = m.placement.gpus_with_layers().collect::<Vec<_>>();
    if used.len() != 1 || used_in_log < 2 || !m.placement.fully_offloaded() {
        return None;
    }
    let f = &m.figures;
    let stack = vec![
        (
            Segment::Weights,
            f.layer_weights * f.blocks + f.output + f.first_gpu_extra,
        ),
        (Segment::Kv, f.layer_kv * f.blocks),
        (Segment::Graph, f.graph),
        (Segment::Floor, f.per_gpu_floor),
    ];
    Some((used[0].device.clone(), stack))
}

/// The line drawn over a GPU's bars: its capacity when known, else the free memory the estimate worked with.
fn capacity(load: &Concluded, device: &Device) -> Option<(Quantity, &'static str)> {
    let position = device.position();
    let gpu = position.and_then(|p| load.reconciled.load.gpus.get(p));
    load.reconciled
        .observed
        .iter()
        .find(|o| o.device == *device)
        .and_then(|o| o.total)
        .or_else(|| gpu.and_then(|g| g.total))
        .map(|q| (q, "capacity"))
        .or_else(|| {
            let free = position
                .and_then(|p| {
                    load.reconciled
                        .load
                        .estimate
                        .as_ref()
                        .and_then(|e| e.available.get(p).copied())
                })
                .or_else(|| gpu.and_then(|g| g.available))?;
            Some((free, "free at load"))
        })
}

/// One stacked bar from `x0` to `x1` with its total written above it; notes which segments were drawn.
fn draw_stack<DB: DrawingBackend>(
    chart: &mut Axes<'_, DB>,
    (x0, x1): (f64, f64),
    stack: &Stack,
    y_max: f64,
    used: &mut Vec<Segment>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let mut base = 0i64;
    for (segment, bytes) in stack.iter().filter(|(_, b)| *b > 0) {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, gib(base)), (x1, gib(base + bytes))],
                segment.color().filled(),
            )))
            .map_err(ChartError::draw)?;
        if !used.contains(segment) {
            used.push(*segment);
        }
        base += bytes;
    }
    let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(std::iter::once(Text::new(
            human(base),
            ((x0 + x1) / 2.0, gib(base) + y_max * 0.01),
            style,
        )))
        .map_err(ChartError::draw)?;
    Ok(())
}

/// The capacity (or free-at-load) line over group `g`, labelled at its right end.
fn draw_capacity<DB: DrawingBackend>(
    chart: &mut Axes<'_, DB>,
    g: f64,
    (cap, word): (Quantity, &str),
    y_max: f64,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let y = gib(cap.bytes);
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(g + 0.03, y), (g + 0.97, y)],
            CAPACITY.stroke_width(3),
        )))
        .map_err(ChartError::draw)?;
    let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Right, VPos::Bottom));
    chart
        .draw_series(std::iter::once(Text::new(
            format!("{word} {}", human(cap.bytes)),
            (g + 0.97, y + y_max * 0.01),
            style,
        )))
        .map_err(ChartError::draw)?;
    Ok(())
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    load: &Concluded,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let devices: Vec<&DeviceRow> = load.reconciled.devices.iter().filter(|d| !d.host).collect();
    let groups: Vec<Group> = devices
        .iter()
        .map(|d| {
            let actual = buffers(load, &d.device);
            (
                *d,
                [
                    estimated(d),
                    (!actual.is_empty()).then_some(actual),
                    observed(load, &d.device),
                ],
                capacity(load, &d.device),
            )
        })
        .collect();
    let replay = single_gpu_replay(load);
    let total = |s: &Stack| s.iter().map(|(_, b)| b).sum::<i64>();
    let top = groups
        .iter()
        .flat_map(|(_, stacks, cap)| {
            stacks
                .iter()
                .flatten()
                .map(total)
                .chain(cap.map(|(c, _)| c.bytes))
        })
        .max()
        .unwrap_or(1 << 30);
    let y_max = gib(top) * 1.45 + 0.05;
    let n = (groups.len() + usize::from(replay.is_some())).max(1) as f64;
    let mut chart = gib_axes(root, title, n, y_max, 56)?;
    const BAR_NAMES: [&str; 3] = ["estimate", "buffers", "nvidia-smi"];
    let mut used_segments: Vec<Segment> = Vec::new();
    let small = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let device_style = TextStyle::from((FONT, 17).into_font().style(FontStyle::Bold))
        .pos(Pos::new(HPos::Center, VPos::Top));
    // Names under the axis, in pixel space: `dy` pixels below the axis at category position `x`.
    let label = |chart: &Axes<'_, DB>, x: f64, dy: i32, text: String, style: &TextStyle| {
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw(&Text::new(text, (px, py + dy), style.clone()))
            .map_err(ChartError::draw)
    };
    for (g, (row, stacks, cap)) in groups.iter().enumerate() {
        let g = g as f64;
        for (b, stack) in stacks.iter().enumerate() {
            let Some(stack) = stack else { continue };
            let x0 = g + 0.08 + b as f64 * 0.29;
            let x1 = x0 + 0.24;
            draw_stack(&mut chart, (x0, x1), stack, y_max, &mut used_segments)?;
            label(&chart, (x0 + x1) / 2.0, 4, BAR_NAMES[b].to_string(), &small)?;
        }
        if let Some(cap) = cap {
            draw_capacity(&mut chart, g, *cap, y_max)?;
        }
        label(&chart, g + 0.5, 24, row.device.to_string(), &device_style)?;
    }
    if let Some((device, stack)) = &replay {
        let g = groups.len() as f64;
        draw_stack(
            &mut chart,
            (g + 0.3, g + 0.7),
            stack,
            y_max,
            &mut used_segments,
        )?;
        if let Some(cap) = capacity(load, device) {
            draw_capacity(&mut chart, g, cap, y_max)?;
        }
        label(
            &chart,
            g + 0.5,
            4,
            "measured, all layers".to_string(),
            &small,
        )?;
        label(
            &chart,
            g + 0.5,
            24,
            format!("{device} alone (replay)"),
            &device_style,
        )?;
    }
    // Legend: one entry per segment kind drawn, in a fixed order.
    for segment in Segment::ALL.iter().filter(|s| used_segments.contains(s)) {
        let color = segment.color();
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(ChartError::draw)?
            .label(segment.label())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 14)
}
