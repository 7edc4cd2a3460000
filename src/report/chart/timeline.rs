//! The timeline chart (`loads[].timeline`, `src/model/timeline.rs`): what the server held while it served, one
//! point per sample in log order. Host RAM (the prompt cache, the slots' context checkpoints and their sum) in GiB
//! against the limits the log printed (the cache's limit, the host's free memory at load) as dashed lines; a
//! serving engine's KV fill in percent against 100 % when the timeline has no host RAM. The first and last
//! samples' log lines are written under the axis.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{gib, CAPACITY, FONT, KV, UNATTRIBUTED, WEIGHTS};
use super::{draw_legend, gib_axes, Axes, ChartError};
use crate::model::ServingTimeline;

/// Whether the timeline has a series to draw.
pub fn has_series(t: &ServingTimeline) -> bool {
    t.samples
        .iter()
        .any(|s| s.prompt_cache.is_some() || s.checkpoints.is_some() || s.kv_percent.is_some())
}

fn series<DB: DrawingBackend>(
    chart: &mut Axes<'_, DB>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    label: &str,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    if points.is_empty() {
        return Ok(());
    }
    chart
        .draw_series(LineSeries::new(points.clone(), color.stroke_width(3)))
        .map_err(ChartError::draw)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
    chart
        .draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )
        .map_err(ChartError::draw)?;
    Ok(())
}

fn dashed<DB: DrawingBackend>(
    chart: &mut Axes<'_, DB>,
    y: f64,
    n: f64,
    color: RGBColor,
    label: String,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    // Dashes drawn as short segments: plotters 0.3's paths have no dash style.
    let pieces = 40;
    let step = n / pieces as f64;
    chart
        .draw_series((0..pieces).step_by(2).map(|i| {
            let x = i as f64 * step;
            PathElement::new(vec![(x, y), (x + step, y)], color.stroke_width(2))
        }))
        .map_err(ChartError::draw)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(2)));
    Ok(())
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    t: &ServingTimeline,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let n = t.samples.len().max(1) as f64;
    let x = |i: usize| i as f64 + 0.5;
    let host = t.holds_host_ram();
    let mut chart = if host {
        let limit = t.limits.prompt_cache.filter(|l| l.size.bytes > 0);
        let free = t.limits.host_free;
        let top = t
            .samples
            .iter()
            .map(|s| s.prompt_cache.map_or(0, |q| q.high) + s.checkpoints.map_or(0, |q| q.high))
            .chain(limit.map(|l| l.size.high))
            .chain(free.map(|f| f.size.high))
            .max()
            .unwrap_or(1 << 30);
        let y_max = gib(top) * 1.15 + 0.05;
        let mut chart = gib_axes(root, title, n, y_max, 40)?;
        let points = |f: &dyn Fn(&crate::model::TimelineSample) -> Option<i64>| -> Vec<(f64, f64)> {
            t.samples
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some((x(i), gib(f(s)?))))
                .collect()
        };
        series(
            &mut chart,
            points(&|s| s.prompt_cache.map(|q| q.bytes)),
            WEIGHTS,
            "prompt cache (host RAM)",
        )?;
        series(
            &mut chart,
            points(&|s| s.checkpoints.map(|q| q.bytes)),
            KV,
            "context checkpoints (host RAM)",
        )?;
        let both = points(&|s| match (s.prompt_cache, s.checkpoints) {
            (Some(c), Some(k)) => Some(c.bytes + k.bytes),
            (Some(_), None) | (None, Some(_)) | (None, None) => None,
        });
        series(&mut chart, both, UNATTRIBUTED, "cache + checkpoints")?;
        if let Some(l) = limit {
            dashed(
                &mut chart,
                gib(l.size.bytes),
                n,
                CAPACITY,
                format!("cache limit (line {})", l.line),
            )?;
        }
        if let Some(f) = free {
            dashed(
                &mut chart,
                gib(f.size.bytes),
                n,
                RGBColor(200, 70, 70),
                format!("host free at load (line {})", f.line),
            )?;
        }
        chart
    } else {
        root.fill(&WHITE).map_err(ChartError::draw)?;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 22).into_font().style(FontStyle::Bold))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n, 0f64..110f64)
            .map_err(ChartError::draw)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("KV cache fill (%)")
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(ChartError::draw)?;
        let points: Vec<(f64, f64)> = t
            .samples
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((x(i), s.kv_percent?)))
            .collect();
        series(&mut chart, points, KV, "KV cache fill")?;
        dashed(&mut chart, 100.0, n, CAPACITY, "full".to_string())?;
        chart
    };
    let style = TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let ends = [t.samples.first(), t.samples.last()];
    for (i, s) in ends.iter().enumerate() {
        let Some(s) = s else { continue };
        let index = if i == 0 { 0 } else { t.samples.len() - 1 };
        let (px, py) = chart.backend_coord(&(x(index), 0.0));
        root.draw(&Text::new(
            format!("line {}", s.line),
            (px, py + 8),
            style.clone(),
        ))
        .map_err(ChartError::draw)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 15)
}
