//! Ollama's layer placement (`llm/memory.go` `estimateGPULayers`) by the rules of one build family
//! (`families`), run on figures that carry the log's rounding: every figure at its low end, as printed and at
//! its high end. Decisions are taken at one [`Point`] of that rounding; allocations and each decision's margin
//! are carried at all three, so a replay can say how far a decision was from going the other way. The steps are
//! those of `docs/log-formats.md` §2.4a: entry filter and pre-charge, blocks, the last-layer bucket, the graph.
//! Each decision is recorded for `whatif --explain`.

use super::families::{BlockOrder, Buffer, Candidate, Overflow, Rules};
use super::placement::GpuSpace;
use crate::model::{
    human, Device, Margin, PlacedGpu, Placement, ReplayFigures, TraceStage, TraceStep,
};

/// A figure at the low end of its rounding, as printed, and at the high end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub low: i64,
    pub nominal: i64,
    pub high: i64,
}

impl Span {
    pub fn exact(v: i64) -> Span {
        Span {
            low: v,
            nominal: v,
            high: v,
        }
    }

    fn of(mut f: impl FnMut(usize) -> i64) -> Span {
        Span {
            low: f(0),
            nominal: f(1),
            high: f(2),
        }
    }

    fn plus(self, o: Span) -> Span {
        Span {
            low: self.low.saturating_add(o.low),
            nominal: self.nominal.saturating_add(o.nominal),
            high: self.high.saturating_add(o.high),
        }
    }

    fn times(self, n: i64) -> Span {
        Span {
            low: self.low.saturating_mul(n),
            nominal: self.nominal.saturating_mul(n),
            high: self.high.saturating_mul(n),
        }
    }

    /// `free − need` across the rounding: the least room (free low, need high) to the most.
    fn margin(free: Span, need: Span, fitted: bool) -> Margin {
        Margin {
            low: free.low.saturating_sub(need.high),
            nominal: free.nominal.saturating_sub(need.nominal),
            high: free.high.saturating_sub(need.low),
            fitted,
        }
    }
}

/// Where in the rounding the decisions are taken: −1000 (every need at the high end of its rounding, every
/// free figure at its low end: "tight"), 0 (as printed), +1000 (needs low, free high: "loose"), or a point
/// between, in thousandths of the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point(pub i32);

impl Point {
    pub const PRINTED: Point = Point(0);

    /// The points a replay tries, as printed first, then outward in tenths to both ends.
    pub const SEARCH: [Point; 21] = {
        let mut out = [Point::PRINTED; 21];
        let mut k = 1;
        while k <= 10 {
            out[2 * k as usize - 1] = Point(-100 * k);
            out[2 * k as usize] = Point(100 * k);
            k += 1;
        }
        out
    };

    /// The point in words.
    pub fn word(self) -> String {
        match self.0 {
            0 => "the printed figures".to_string(),
            -1000 => "the tight end of the rounding".to_string(),
            1000 => "the loose end of the rounding".to_string(),
            t if t < 0 => format!("{} % toward the tight end of the rounding", -t / 10),
            t => format!("{} % toward the loose end of the rounding", t / 10),
        }
    }

    fn toward(from: i64, to: i64, permille: i32) -> i64 {
        // In i64 whenever no step overflows (every figure a log prints): the same operations as the i128 ones
        // below, which the replay's innermost loop spent 4 % of a batch's cycles dividing (`__divti3`).
        let narrow = to
            .checked_sub(from)
            .and_then(|d| d.checked_mul(i64::from(permille)))
            .and_then(|m| from.checked_add(m / 1000));
        if let Some(v) = narrow {
            return v;
        }
        let d = i128::from(to) - i128::from(from);
        let v = i128::from(from) + d * i128::from(permille) / 1000;
        i64::try_from(v).unwrap_or(from)
    }

    /// Does `need` fit in `free` (the estimator's strict test) at this point?
    fn fits(self, free: Span, need: Span) -> bool {
        let t = self.0.clamp(-1000, 1000);
        let (free_at, need_at) = if t < 0 {
            (
                Point::toward(free.nominal, free.low, -t),
                Point::toward(need.nominal, need.high, -t),
            )
        } else {
            (
                Point::toward(free.nominal, free.high, t),
                Point::toward(need.nominal, need.low, t),
            )
        };
        free_at > need_at
    }
}

/// The figures at the low end of the rounding, as printed and at the high end, and the GPUs in the
/// estimator's order with their free memory at the same three points.
#[derive(Debug, Clone)]
pub struct Bounded {
    pub figures: [ReplayFigures; 3],
    /// The output's weights alone at the three points (0.7.0 may hold it back as the largest tensor group).
    pub output_weights: Span,
    pub gpus: Vec<(Device, Span)>,
}

impl Bounded {
    /// Figures without rounding (a what-if, the measured replay).
    pub fn exact(gpus: &[GpuSpace], f: &ReplayFigures) -> Bounded {
        Bounded {
            figures: [f.clone(), f.clone(), f.clone()],
            output_weights: Span::exact(0),
            gpus: gpus
                .iter()
                .map(|g| (g.device.clone(), Span::exact(g.free)))
                .collect(),
        }
    }

    /// The same figures on a subset of the GPUs (positions in `self.gpus`).
    pub fn on(&self, positions: &[usize]) -> Bounded {
        Bounded {
            figures: self.figures.clone(),
            output_weights: self.output_weights,
            gpus: positions
                .iter()
                .filter_map(|&i| self.gpus.get(i).cloned())
                .collect(),
        }
    }

    fn span(&self, f: impl Fn(&ReplayFigures) -> i64) -> Span {
        Span::of(|k| f(&self.figures[k]))
    }

    fn nominal(&self) -> &ReplayFigures {
        &self.figures[1]
    }
}

/// A placement with its allocations across the rounding and its trace.
#[derive(Debug, Clone)]
pub struct Traced {
    pub placement: Placement,
    pub allocations: Vec<Span>,
    pub overflow: Span,
    pub steps: Vec<TraceStep>,
    /// The last-layer bucket's decisions: (device, margin, placed).
    pub last_layer: Vec<(Device, Margin, bool)>,
    /// The first block each refusing GPU refused: (device, block, margin).
    pub refusals: Vec<(Device, i64, Margin)>,
    /// The last-layer bucket (output, and the Ollama engine's projector from 0.7.1), as printed.
    pub bucket: i64,
    /// The points of [`Point::SEARCH`] (bit `i` for the `i`-th) at which every decision this placement took
    /// comes out the same, and so the whole placement: placed at such a point, the estimator takes the same
    /// decisions from the same state, one after the other. Found by [`place_searched`]; 0 otherwise.
    pub alike: u32,
}

impl Traced {
    /// Σ allocations (`memory.required.partial`).
    pub fn partial(&self) -> Span {
        self.allocations
            .iter()
            .fold(Span::exact(0), |a, &b| a.plus(b))
    }

    /// Σ allocations + overflow (`memory.required.full`).
    pub fn full(&self) -> Span {
        self.partial().plus(self.overflow)
    }
}

/// A run of consecutive blocks placed on one GPU, for the trace.
struct Run {
    gpu: usize,
    first: i64,
    last: i64,
    count: i64,
    before: i64,
    tightest: Margin,
}

fn block_name(i: i64) -> String {
    format!("blk.{i}")
}

/// Place every block and the last-layer bucket on `b.gpus` (in the estimator's order) by `rules`, deciding at
/// `point`. `max_layers` is `num_gpu` when set (≥ 0).
pub fn place_by(rules: &Rules, b: &Bounded, max_layers: Option<i64>, point: Point) -> Traced {
    place(rules, b, max_layers, point, Detail::Words)
}

/// [`place_by`] without the trace's words: the same placement, allocations, margins, refusals and steps
/// (stage, device, margin), each step's `text` empty. A replay tries 21 rounding points for every candidate
/// family and the scheduler's GPU sets, and keeps one trace: writing every step's figures for the others was
/// a third of a run's instructions on a log of many loads (`docs/performance.md`).
pub fn place_quietly(rules: &Rules, b: &Bounded, max_layers: Option<i64>, point: Point) -> Traced {
    place(rules, b, max_layers, point, Detail::Steps)
}

/// [`place_by`] without the trace's steps (`steps` is empty): the same placement, allocations, overflow,
/// refusals and last-layer decisions, for a caller that reads the placement only (`placement::place_as`; the
/// rounding a replay searches, through [`place_searched`]). A round-robin placement makes a step of every
/// block, and keeping those steps was most of what a point of the search cost (`docs/performance.md`,
/// Speed II).
pub fn place_bare(rules: &Rules, b: &Bounded, max_layers: Option<i64>, point: Point) -> Traced {
    place(rules, b, max_layers, point, Detail::Placement)
}

/// [`place_bare`], also finding at which other points of the search the placement is the same
/// ([`Traced::alike`]): a replay's search of the rounding then places once for all of them
/// (`docs/performance.md`, Speed II, fourth stop).
pub fn place_searched(rules: &Rules, b: &Bounded, max_layers: Option<i64>, point: Point) -> Traced {
    place(rules, b, max_layers, point, Detail::Search)
}

/// How much of the trace [`place`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Every step with its words.
    Words,
    /// Every step, its `text` empty.
    Steps,
    /// No steps.
    Placement,
    /// No steps, and the points where every decision comes out the same ([`Traced::alike`]).
    Search,
}

impl Detail {
    fn keeps_steps(self) -> bool {
        match self {
            Detail::Words | Detail::Steps => true,
            Detail::Placement | Detail::Search => false,
        }
    }
}

/// [`place_by`], with as much of the trace as `detail` asks for.
fn place(
    rules: &Rules,
    b: &Bounded,
    max_layers: Option<i64>,
    point: Point,
    detail: Detail,
) -> Traced {
    let words = detail == Detail::Words;
    // A step's text, formatted only when the trace's words are wanted.
    macro_rules! say {
        ($($arg:tt)*) => {
            if words {
                format!($($arg)*)
            } else {
                String::new()
            }
        };
    }
    // A step, built (and its device's name copied) only when the trace keeps steps.
    macro_rules! step {
        ($steps:expr, $step:expr) => {
            if detail.keeps_steps() {
                $steps.push($step);
            }
        };
    }
    // Each decision, taken at `point`; with `Detail::Search`, the points where it comes out otherwise leave
    // `alike`.
    let mut alike: u32 = match detail {
        Detail::Search => (1 << Point::SEARCH.len()) - 1,
        Detail::Words | Detail::Steps | Detail::Placement => 0,
    };
    let mut decide = |free: Span, need: Span| {
        let fits = point.fits(free, need);
        if alike != 0 {
            for (i, other) in Point::SEARCH.iter().enumerate() {
                if alike & (1 << i) != 0 && other.fits(free, need) != fits {
                    alike &= !(1 << i);
                }
            }
        }
        fits
    };
    let f = b.nominal();
    let n = f.blocks;
    let count = b.gpus.len();
    let mut steps: Vec<TraceStep> = Vec::new();
    let cost = |i: i64| b.span(|f| f.block_cost(i));
    let kv0 = b.span(|f| f.block_parts(0).1);
    let layer_size = match rules.buffer {
        Buffer::FirstBlock => cost(0),
        Buffer::LargestGroup => Span::of(|k| {
            let out = [
                b.output_weights.low,
                b.output_weights.nominal,
                b.output_weights.high,
            ][k];
            b.figures[k].block_parts(0).0.max(out)
        })
        .plus(kv0),
    };
    let buffer = if f.layer_buffer {
        layer_size
    } else {
        Span::exact(0)
    };
    let graph_max = b.span(|f| f.graph.max(f.graph_partial));
    let floor = b.span(|f| f.per_gpu_floor);
    let overhead = b.span(|f| f.gpu_overhead);
    let first_extra = b.span(|f| f.first_gpu_extra);
    let graph_on = |g: usize| {
        Span::of(|k| {
            rules.graph_on(
                g,
                count,
                [graph_max.low, graph_max.nominal, graph_max.high][k],
            )
        })
    };
    let mut alloc = vec![Span::exact(0); count];
    let mut layers = vec![0i64; count];
    // 1. Entry filter and pre-charge, in list order.
    let mut with_space: Vec<usize> = Vec::new();
    for (i, (device, free)) in b.gpus.iter().enumerate() {
        let extra = if with_space.is_empty() {
            first_extra
        } else {
            Span::exact(0)
        };
        let need = overhead
            .plus(extra)
            .plus(graph_max)
            .plus(floor)
            .plus(buffer)
            .plus(layer_size);
        let qualifies = decide(*free, need);
        let margin = Span::margin(*free, need, qualifies);
        if qualifies {
            alloc[i] = floor.plus(buffer).plus(extra);
            with_space.push(i);
            step!(steps, TraceStep {
                stage: TraceStage::Entry,
                device: Some(device.clone()),
                text: say!(
                    "{device} qualifies: free {} > needed {} (graph {} + minimum {} + 2 × held-back layer {}{})",
                    human(free.nominal),
                    human(need.nominal),
                    human(graph_max.nominal),
                    human(floor.nominal),
                    human(layer_size.nominal),
                    if extra.nominal > 0 {
                        format!(" + first-GPU projector {}", human(extra.nominal))
                    } else {
                        String::new()
                    }
                ),
                margin: Some(margin),
            });
            step!(steps, TraceStep {
                stage: TraceStage::PreCharge,
                device: Some(device.clone()),
                text: say!(
                    "{device} pre-charged {} (minimum {} + held-back layer {}{}); graph charged while placing: {}",
                    human(alloc[i].nominal),
                    human(floor.nominal),
                    human(buffer.nominal),
                    if extra.nominal > 0 {
                        format!(" + projector {}", human(extra.nominal))
                    } else {
                        String::new()
                    },
                    human(graph_on(i).nominal)
                ),
                margin: None,
            });
        } else {
            step!(steps, TraceStep {
                stage: TraceStage::Entry,
                device: Some(device.clone()),
                text: say!(
                    "{device} rejected by the entry filter: free {} ≤ needed {} (graph {} + minimum {} + 2 × held-back layer {}{}); it gets 0 layers",
                    human(free.nominal),
                    human(need.nominal),
                    human(graph_max.nominal),
                    human(floor.nominal),
                    human(layer_size.nominal),
                    if extra.nominal > 0 {
                        format!(" + first-GPU projector {}", human(extra.nominal))
                    } else {
                        String::new()
                    }
                ),
                margin: Some(margin),
            });
        }
    }
    let mut overflow = Span::exact(0);
    if with_space.is_empty() {
        overflow = overflow.plus(first_extra);
    }
    // 2. Blocks.
    let order: Vec<i64> = match rules.order {
        BlockOrder::Ascending => (0..n).collect(),
        BlockOrder::Descending => (0..n).rev().collect(),
    };
    let mut placed = 0i64;
    let mut unplaced: Vec<i64> = Vec::new();
    let mut run: Option<Run> = None;
    let mut refusals = Vec::new();
    // A run of blocks on one GPU ends: its step, when the trace keeps steps (the graph's figure is read for it
    // only then).
    let flush = |run: &mut Option<Run>, steps: &mut Vec<TraceStep>, alloc: &[Span]| {
        let Some(r) = run.take() else {
            return;
        };
        let (device, free) = &b.gpus[r.gpu];
        step!(steps, {
            let graph = graph_on(r.gpu);
            TraceStep {
                stage: TraceStage::Blocks,
                device: Some(device.clone()),
                text: say!(
                    "{} → {} ({} block{}) on {device}: charged {} → {} (+ graph {} = {} of {} free)",
                    block_name(r.first),
                    block_name(r.last),
                    r.count,
                    if r.count == 1 { "" } else { "s" },
                    human(r.before),
                    human(alloc[r.gpu].nominal),
                    human(graph.nominal),
                    human(alloc[r.gpu].nominal.saturating_add(graph.nominal)),
                    human(free.nominal)
                ),
                margin: Some(r.tightest),
            }
        });
    };
    for &i in &order {
        if max_layers.is_some_and(|m| placed >= m) {
            unplaced.push(i);
            if rules.overflow == Overflow::PerBlock {
                overflow = overflow.plus(cost(i));
            }
            continue;
        }
        let c = cost(i);
        let mut j = with_space.len();
        let mut done = false;
        while j > 0 {
            let k = match rules.candidate {
                Candidate::IndexModJ => i.rem_euclid(j as i64) as usize,
                Candidate::LastListed => j - 1,
                Candidate::PlacedModJ => placed.rem_euclid(j as i64) as usize,
            };
            let g = with_space[k];
            let free = b.gpus[g].1;
            let need = overhead.plus(alloc[g]).plus(graph_on(g)).plus(c);
            let fits = decide(free, need);
            let margin = Span::margin(free, need, fits);
            if fits {
                if run.as_ref().is_some_and(|r| r.gpu != g) {
                    flush(&mut run, &mut steps, &alloc);
                }
                let r = run.get_or_insert(Run {
                    gpu: g,
                    first: i,
                    last: i,
                    count: 0,
                    before: alloc[g].nominal,
                    tightest: margin,
                });
                r.last = i;
                r.count += 1;
                if margin.nominal < r.tightest.nominal {
                    r.tightest = margin;
                }
                alloc[g] = alloc[g].plus(c);
                layers[g] += 1;
                placed += 1;
                done = true;
                break;
            }
            flush(&mut run, &mut steps, &alloc);
            let device = b.gpus[g].0.clone();
            step!(steps, TraceStep {
                stage: TraceStage::Refused,
                device: Some(device.clone()),
                text: say!(
                    "{device} refuses {} ({}): charged {} + graph {} + block > free {}; {device} leaves the list",
                    block_name(i),
                    human(c.nominal),
                    human(alloc[g].nominal),
                    human(graph_on(g).nominal),
                    human(free.nominal)
                ),
                margin: Some(margin),
            });
            refusals.push((device, i, margin));
            with_space.remove(k);
            j -= 1;
        }
        if !done {
            unplaced.push(i);
            if rules.overflow == Overflow::PerBlock {
                overflow = overflow.plus(c);
            }
        }
    }
    flush(&mut run, &mut steps, &alloc);
    let placed_blocks = placed;
    if !unplaced.is_empty() {
        if rules.overflow == Overflow::LastBlockTimesUnplaced {
            overflow = overflow.plus(cost(n - 1).times(n - placed_blocks));
        }
        step!(
            steps,
            TraceStep {
                stage: TraceStage::Unplaced,
                device: None,
                text: say!(
                    "{} block{} found no GPU ({}{}): left to the CPU",
                    unplaced.len(),
                    if unplaced.len() == 1 { "" } else { "s" },
                    block_name(unplaced[0]),
                    if unplaced.len() > 1 {
                        format!(" … {}", block_name(unplaced[unplaced.len() - 1]))
                    } else {
                        String::new()
                    }
                ),
                margin: None,
            }
        );
    }
    // 3. The last-layer bucket: a GPU that refuses it stays listed.
    let bucket = b.span(|f| f.output);
    let allowed = max_layers.is_none_or(|m| placed < m);
    let with_output = bucket.nominal.saturating_sub(b.output_weights.nominal);
    let bucket_parts = if words && b.output_weights.nominal > 0 && with_output > 0 {
        format!(
            " (output {} + projector weights and graph {})",
            human(b.output_weights.nominal),
            human(with_output)
        )
    } else {
        String::new()
    };
    let mut last_layer = Vec::new();
    let mut bucket_placed = false;
    if allowed {
        let listed = with_space.clone();
        let mut j = listed.len();
        while j > 0 {
            let k = match rules.candidate {
                Candidate::LastListed => j - 1,
                Candidate::IndexModJ | Candidate::PlacedModJ => {
                    placed.rem_euclid(j as i64) as usize
                }
            };
            let g = listed[k];
            let (device, free) = &b.gpus[g];
            let need = overhead.plus(alloc[g]).plus(graph_on(g)).plus(bucket);
            let fits = decide(*free, need);
            let margin = Span::margin(*free, need, fits);
            last_layer.push((device.clone(), margin, fits));
            step!(steps, TraceStep {
                stage: TraceStage::LastLayer,
                device: Some(device.clone()),
                text: say!(
                    "last-layer bucket {}{} offered to {device}: charged {} + graph {} + bucket = {} {} free {} → {}",
                    human(bucket.nominal),
                    bucket_parts,
                    human(alloc[g].nominal),
                    human(graph_on(g).nominal),
                    human(need.nominal),
                    if fits { "<" } else { "≥" },
                    human(free.nominal),
                    if fits {
                        format!("placed on {device} (it counts as one layer there)")
                    } else {
                        format!("does not fit on {device}")
                    }
                ),
                margin: Some(margin),
            });
            if fits {
                alloc[g] = alloc[g].plus(bucket);
                layers[g] += 1;
                placed += 1;
                bucket_placed = true;
                break;
            }
            j -= 1;
        }
    }
    if !bucket_placed {
        let counted = match rules.overflow {
            Overflow::LastBlockTimesUnplaced => allowed,
            Overflow::PerBlock | Overflow::BucketOnly => true,
        };
        if counted {
            overflow = overflow.plus(bucket);
        }
        step!(steps, TraceStep {
            stage: TraceStage::LastLayer,
            device: None,
            text: say!(
                "the last-layer bucket {} is on no GPU: {} of {} layers placed, so this GPU set does not hold the model (a fit needs BlockCount + 1)",
                human(bucket.nominal),
                placed,
                n + 1
            ),
            margin: None,
        });
    }
    // 4. The graph, on every GPU holding a layer.
    let fully = placed > n;
    for g in 0..count {
        if layers[g] == 0 {
            continue;
        }
        let graph = if fully {
            Span::of(|k| {
                rules.graph_on(
                    g,
                    count,
                    [&b.figures[0], &b.figures[1], &b.figures[2]][k].graph,
                )
            })
        } else {
            Span::of(|k| {
                rules.graph_on(
                    g,
                    count,
                    [&b.figures[0], &b.figures[1], &b.figures[2]][k].graph_partial,
                )
            })
        };
        alloc[g] = alloc[g].plus(graph);
        let device = &b.gpus[g].0;
        step!(
            steps,
            TraceStep {
                stage: TraceStage::Graph,
                device: Some(device.clone()),
                text: say!(
                    "{device} charged its graph {} → allocation {} ({} layer{})",
                    human(graph.nominal),
                    human(alloc[g].nominal),
                    layers[g],
                    if layers[g] == 1 { "" } else { "s" }
                ),
                margin: None,
            }
        );
    }
    let partial = alloc.iter().fold(Span::exact(0), |a, &x| a.plus(x));
    step!(steps, TraceStep {
        stage: TraceStage::Total,
        device: None,
        text: say!(
            "{} of {} layers on GPUs; allocations [{}], Σ {} (memory.required.partial) + overflow {} = {} (memory.required.full)",
            placed,
            n + 1,
            alloc
                .iter()
                .map(|a| human(a.nominal))
                .collect::<Vec<_>>()
                .join(" "),
            human(partial.nominal),
            human(overflow.nominal),
            human(partial.plus(overflow).nominal)
        ),
        margin: None,
    });
    let placement = Placement {
        gpus: b
            .gpus
            .iter()
            .enumerate()
            .map(|(i, (device, free))| PlacedGpu {
                device: device.clone(),
                free: free.nominal,
                layers: layers[i],
                allocation: alloc[i].nominal,
            })
            .collect(),
        offloaded: placed,
        total: n + 1,
        overflow: overflow.nominal,
    };
    Traced {
        placement,
        allocations: alloc,
        overflow,
        steps,
        last_layer,
        refusals,
        bucket: bucket.nominal,
        alike,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;
    use crate::replay::families::Family;

    /// The point between two figures is the i128 computation's, in i64 or not: near zero, at real sizes, and
    /// where a step overflows i64 (then the wide computation, and `from` when even that leaves i64).
    #[test]
    fn a_point_between_two_figures_is_the_wide_computations() {
        let wide = |from: i64, to: i64, permille: i32| {
            let v = i128::from(from)
                + (i128::from(to) - i128::from(from)) * i128::from(permille) / 1000;
            i64::try_from(v).unwrap_or(from)
        };
        let figures = [
            0,
            1,
            -1,
            999,
            51 * MIB,
            -(51 * MIB),
            24_000 * MIB,
            i64::MAX / 999,
            i64::MAX,
            i64::MIN,
        ];
        for &from in &figures {
            for &to in &figures {
                for permille in [-1000, -999, -100, -1, 0, 1, 100, 999, 1000] {
                    assert_eq!(
                        Point::toward(from, to, permille),
                        wide(from, to, permille),
                        "{from} → {to} at {permille}"
                    );
                }
            }
        }
    }

    fn figures() -> ReplayFigures {
        ReplayFigures {
            layer_weights: 100 * MIB,
            layer_kv: 10 * MIB,
            blocks: 10,
            output: 200 * MIB,
            first_gpu_extra: 0,
            graph: 300 * MIB,
            graph_partial: 300 * MIB,
            per_gpu_floor: 457 * MIB,
            gpu_overhead: 0,
            layer_buffer: true,
            from: Vec::new(),
            per_layer: Vec::new(),
        }
    }

    fn gpus(free_mib: &[i64]) -> Vec<GpuSpace> {
        free_mib
            .iter()
            .enumerate()
            .map(|(i, f)| GpuSpace {
                device: Device::named(&format!("CUDA{i}")),
                free: f * MIB,
            })
            .collect()
    }

    /// At every point a placement calls alike, placing there gives that placement, and a placement is alike
    /// at its own point: on figures with rounding (±51 MiB each, as Ollama prints one decimal of GiB) and GPU
    /// sizes around the edges where a layer or the bucket fits at some points and not at others.
    #[test]
    fn a_placement_is_the_same_at_every_point_it_calls_alike() {
        let rounded = |f: &ReplayFigures, by: i64| ReplayFigures {
            layer_weights: f.layer_weights + by,
            layer_kv: f.layer_kv + by,
            output: f.output + by,
            graph: f.graph + by,
            graph_partial: f.graph_partial + by,
            ..f.clone()
        };
        let f = figures();
        let mut some_not_alike = false;
        for free in (1500..2600).step_by(37) {
            for second in [0, 900, 2100] {
                let sizes: Vec<i64> = [free, second].into_iter().filter(|&m| m > 0).collect();
                let b = Bounded {
                    figures: [rounded(&f, -51 * MIB), f.clone(), rounded(&f, 51 * MIB)],
                    output_weights: Span::exact(0),
                    gpus: gpus(&sizes)
                        .into_iter()
                        .map(|g| {
                            let free = Span {
                                low: g.free - 51 * MIB,
                                nominal: g.free,
                                high: g.free + 51 * MIB,
                            };
                            (g.device, free)
                        })
                        .collect(),
                };
                for family in [Family::Ollama37Last, Family::Upstream063] {
                    let rules = family.rules();
                    for (i, &at) in Point::SEARCH.iter().enumerate() {
                        let t = place_searched(rules, &b, None, at);
                        assert_ne!(t.alike & (1 << i), 0, "{sizes:?} at {at:?}");
                        some_not_alike |= t.alike != (1 << Point::SEARCH.len()) - 1;
                        for (j, &other) in Point::SEARCH.iter().enumerate() {
                            if t.alike & (1 << j) != 0 {
                                let o = place_bare(rules, &b, None, other);
                                assert_eq!(o.placement, t.placement, "{sizes:?} {at:?} {other:?}");
                                assert_eq!(o.allocations, t.allocations);
                                assert_eq!(o.overflow, t.overflow);
                            }
                        }
                    }
                }
            }
        }
        assert!(some_not_alike, "no GPU size near an edge");
    }

    #[test]
    fn the_fork_fills_the_last_gpu_and_sends_a_bucket_that_misses_it_to_the_first() {
        // CUDA1: 457 + 110 held back + 10 × 110 + graph 300 = 1967 MiB; + bucket 200 = 2167 > 2100.
        let b = Bounded::exact(&gpus(&[2100, 2100]), &figures());
        let t = place_by(Family::Ollama37Last.rules(), &b, None, Point::PRINTED);
        assert_eq!(t.placement.split(), vec![1, 10]);
        // CUDA0: 457 + 110 + bucket 200 + the fork's 190 MiB graph; CUDA1 keeps the full graph.
        assert_eq!(
            t.placement.gpus[0].allocation,
            (457 + 110 + 200 + 190) * MIB
        );
        assert_eq!(
            t.placement.gpus[1].allocation,
            (457 + 110 + 1100 + 300) * MIB
        );
        let (device, margin, placed) = &t.last_layer[0];
        assert_eq!(device, &Device::named("CUDA1"));
        assert!(!placed);
        assert_eq!(margin.nominal, -67 * MIB);
        // The same figures by upstream 0.7.1's rules alternate the blocks.
        let up = place_by(Family::Upstream071.rules(), &b, None, Point::PRINTED);
        assert_eq!(up.placement.split(), vec![6, 5]);
    }

    #[test]
    fn a_decision_inside_the_rounding_flips_between_the_tight_and_the_loose_end() {
        // Free 2150 ± 60 MiB: the bucket misses CUDA1 by 17 MiB as printed, fits at the loose end.
        let mut b = Bounded::exact(&gpus(&[2150, 2150]), &figures());
        for g in &mut b.gpus {
            g.1.low -= 60 * MIB;
            g.1.high += 60 * MIB;
        }
        let rules = Family::Ollama37Last.rules();
        let printed = place_by(rules, &b, None, Point::PRINTED);
        assert_eq!(printed.placement.split(), vec![1, 10]);
        let margin = printed.last_layer[0].1;
        assert_eq!(
            (margin.low, margin.nominal, margin.high),
            (-77 * MIB, -17 * MIB, 43 * MIB)
        );
        assert!(!margin.settled());
        assert!(margin.describe().contains("hangs on the rounding"));
        let loose = place_by(rules, &b, None, Point(1000));
        assert_eq!(loose.placement.split(), vec![0, 11]);
        let tight = place_by(rules, &b, None, Point(-1000));
        assert_eq!(tight.placement.split(), vec![1, 10]);
    }

    #[test]
    fn old_builds_count_unplaced_blocks_by_the_last_block_and_walk_blocks_upward() {
        // One GPU of 1500 MiB: 457 + 110 + 300 = 867 before blocks; 5 blocks fit (1417 < 1500), the 6th not.
        let b = Bounded::exact(&gpus(&[1500]), &figures());
        let t = place_by(Family::Upstream05.rules(), &b, None, Point::PRINTED);
        assert_eq!(t.placement.offloaded, 5);
        assert_eq!(t.placement.overflow, 5 * 110 * MIB + 200 * MIB);
        let blocks = t
            .steps
            .iter()
            .find(|s| s.stage == TraceStage::Blocks)
            .unwrap();
        assert!(blocks.text.starts_with("blk.0 → blk.4"), "{}", blocks.text);
        // The fork's "revert" adds nothing for unplaced blocks, only the bucket.
        let revert = place_by(Family::Ollama37Revert.rules(), &b, None, Point::PRINTED);
        assert_eq!(revert.placement.overflow, 200 * MIB);
    }
}
