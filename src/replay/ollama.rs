//! The replay of Ollama's estimator with the estimate's own figures: every candidate build family (`families`)
//! is replayed on the log's figures across their rounding, the one that reproduces the logged split and
//! allocations is kept (the most likely by the evidence when several do, the closest when none does), and its
//! placement is traced decision by decision for `whatif --explain`. What-if changes then replay with that
//! family's rules.

use super::estimator::{place_by, place_quietly, place_searched, Bounded, Point, Span, Traced};
use super::families::{candidates, Evidence, Family, Rules};
use super::figures::{self, Changes, End};
use super::placement::{schedule, Scheduler};
use super::{gpus, max_layers};
use crate::model::{
    human, BucketMove, Device, EstimateReplay, EstimatorCharges, FamilyTry, Margin, Placement,
    PlacementTrace, Quantity, Reconciled, ReplayFigures, TraceStage, TraceStep,
};

/// The estimate replay, the family it used and why, and the trace.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub estimate: EstimateReplay,
    pub family: Family,
    /// The decision the logged split hung on, when the split is reproduced.
    pub hinge: Option<String>,
    pub trace: PlacementTrace,
    /// What the family charged where, when it reproduces the logged split.
    pub charges: Option<EstimatorCharges>,
}

/// The figures of `rules`' reading of the estimate and the GPUs, at the three points of the rounding.
fn bounded(load: &Reconciled, changes: &Changes, rules: &Rules) -> Option<Bounded> {
    let e = load.load.estimate.as_ref()?;
    let ends = [End::Low, End::Nominal, End::High];
    let figures = [
        figures::from_estimate_by(load, changes, ends[0], rules)?,
        figures::from_estimate_by(load, changes, ends[1], rules)?,
        figures::from_estimate_by(load, changes, ends[2], rules)?,
    ];
    let at: Vec<Vec<super::placement::GpuSpace>> =
        ends.iter().map(|&end| gpus(load, changes, end)).collect();
    let gpus = at[1]
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let free = |k: usize| at[k].get(i).map_or(g.free, |x| x.free);
            (
                g.device.clone(),
                Span {
                    low: free(0),
                    nominal: free(1),
                    high: free(2),
                },
            )
        })
        .collect();
    let out = e.weights_nonrepeating.unwrap_or(Quantity::exact(0));
    Some(Bounded {
        figures,
        output_weights: Span {
            low: out.low,
            nominal: out.bytes,
            high: out.high,
        },
        gpus,
    })
}

/// How one replay compares with the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Agreement {
    layers: Option<bool>,
    split: Option<bool>,
    allocations: Option<bool>,
}

impl Agreement {
    fn split_ok(&self) -> bool {
        self.layers != Some(false) && self.split != Some(false)
    }

    fn all_ok(&self) -> bool {
        self.split_ok() && self.allocations != Some(false)
    }
}

fn overlaps(s: Span, q: Quantity) -> bool {
    s.low.min(s.nominal) <= q.high && q.low <= s.high.max(s.nominal)
}

fn compare(load: &Reconciled, t: &Traced) -> Agreement {
    let Some(e) = load.load.estimate.as_ref() else {
        return Agreement {
            layers: None,
            split: None,
            allocations: None,
        };
    };
    let layers = e.layers.offload.map(|o| t.placement.offloaded == o);
    let split = (!e.layers.split.is_empty())
        .then(|| layers != Some(false) && t.placement.split() == e.layers.split);
    let allocations = (e.allocations.len() == t.allocations.len()).then(|| {
        layers != Some(false)
            && e.allocations
                .iter()
                .zip(&t.allocations)
                .all(|(q, s)| overlaps(*s, *q))
            && e.required_partial.is_none_or(|q| overlaps(t.partial(), q))
            && e.required_full.is_none_or(|q| overlaps(t.full(), q))
    });
    Agreement {
        layers,
        split,
        allocations,
    }
}

/// How far a replay is from the log: split counts apart, then layers apart.
fn distance(load: &Reconciled, t: &Traced) -> (i64, i64) {
    let Some(e) = load.load.estimate.as_ref() else {
        return (0, 0);
    };
    let split = t.placement.split();
    let apart = if e.layers.split.len() == split.len() {
        e.layers
            .split
            .iter()
            .zip(&split)
            .map(|(a, b)| (a - b).abs())
            .sum()
    } else {
        i64::from(!e.layers.split.is_empty()) * 1000
    };
    let layers = e
        .layers
        .offload
        .map_or(0, |o| (o - t.placement.offloaded).abs());
    (apart, layers)
}

/// One family replayed on the log's figures: the point of the rounding that reproduces the log best.
struct Run {
    family: Family,
    why: String,
    point: Point,
    /// The placement at `point`, without the trace's steps: only the chosen family's is traced
    /// ([`replay`]).
    traced: Traced,
    agreement: Agreement,
    bounded: Bounded,
}

fn run(load: &Reconciled, family: Family, why: String) -> Option<Run> {
    let rules = family.rules();
    let b = bounded(load, &Changes::default(), rules)?;
    let limit = max_layers(load);
    // The first point (in the search's order) that reproduces everything, else the first that reproduces the
    // split, else the printed figures: the points after the first that reproduces everything cannot change
    // the choice and are not tried. They are placed without the trace's steps (the same decisions); the chosen
    // family's point is placed again with them (`replay`).
    let (mut first, mut first_split, mut all) = (None, None, None);
    // A point where a placement already made takes every decision the same places the same: its agreement
    // is that placement's, and so is its placement (`Traced::alike`).
    let mut placed: Vec<(Traced, Agreement)> = Vec::new();
    for (i, &p) in Point::SEARCH.iter().enumerate() {
        let a = match placed.iter().find(|(t, _)| t.alike & (1 << i) != 0) {
            Some(&(_, a)) => a,
            None => {
                let t = place_searched(rules, &b, limit, p);
                let a = compare(load, &t);
                placed.push((t, a));
                a
            }
        };
        if a.all_ok() {
            all = Some((i, a));
            break;
        }
        if first_split.is_none() && a.split_ok() {
            first_split = Some((i, a));
        }
        first.get_or_insert((i, a));
    }
    let (chosen, agreement) = all.or(first_split).or(first)?;
    let point = Point::SEARCH[chosen];
    let at = placed
        .iter()
        .position(|(t, _)| t.alike & (1 << chosen) != 0)?;
    let (traced, _) = placed.swap_remove(at);
    Some(Run {
        family,
        why,
        point,
        traced,
        agreement,
        bounded: b,
    })
}

fn split_text(split: &[i64]) -> String {
    split
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn family_try(r: &Run) -> FamilyTry {
    FamilyTry {
        family: r.family.name().to_string(),
        builds: r.family.builds().to_string(),
        why: r.why.clone(),
        split: r.traced.placement.split(),
        offloaded: r.traced.placement.offloaded,
        allocations: r
            .traced
            .placement
            .gpus
            .iter()
            .map(|g| g.allocation)
            .collect(),
        split_reproduced: r.agreement.split_ok()
            && (r.agreement.split.is_some() || r.agreement.layers.is_some()),
        allocations_reproduced: r.agreement.all_ok() && r.agreement.allocations.is_some(),
        at: r.point.word(),
    }
}

/// The decision the placement hung on: the closest refusal (a GPU refusing a block, the last layer, the
/// entry filter), else the tightest fit.
fn hinge(t: &Traced) -> Option<(String, Margin)> {
    let mut refused: Vec<(String, Margin)> = Vec::new();
    for (device, m, placed) in &t.last_layer {
        if !placed {
            refused.push((format!("the last layer missed {device}"), *m));
        }
    }
    for (device, block, m) in &t.refusals {
        refused.push((format!("{device} refused blk.{block}"), *m));
    }
    for s in &t.steps {
        if s.stage == TraceStage::Entry {
            if let (Some(d), Some(m)) = (&s.device, s.margin) {
                if !m.fitted {
                    refused.push((format!("{d} failed the entry filter"), m));
                }
            }
        }
    }
    refused.sort_by_key(|(_, m)| m.nominal.saturating_abs());
    if let Some(first) = refused.into_iter().next() {
        return Some(first);
    }
    t.steps
        .iter()
        .filter(|s| matches!(s.stage, TraceStage::Blocks | TraceStage::LastLayer))
        .filter_map(|s| Some((s.device.clone()?, s.margin?)))
        .filter(|(_, m)| m.fitted)
        .min_by_key(|(_, m)| m.nominal)
        .map(|(d, m)| (format!("the tightest layer on {d}"), m))
}

fn hinge_text((what, m): &(String, Margin)) -> String {
    let d = m.describe();
    // "the last layer missed CUDA1" + "missed by …" reads once.
    match d.strip_prefix("missed ") {
        Some(rest)
            if what.contains("missed") || what.contains("refused") || what.contains("failed") =>
        {
            format!("{what} {rest}")
        }
        _ => format!("{what}: {d}"),
    }
}

/// The scheduler's tries before the GPU set the log shows, by the family's rules.
fn scheduler_steps(rules: &Rules, b: &Bounded, limit: Option<i64>, point: Point) -> Vec<TraceStep> {
    let count = b.gpus.len();
    if count < 2 {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(b.gpus[i].1.nominal));
    let sets: Vec<Vec<usize>> = match Scheduler::of(rules.tries) {
        Scheduler::FewestFirst => (1..count).map(|k| order[..k].to_vec()).collect(),
        Scheduler::Upstream | Scheduler::OfFamily => order.iter().map(|&i| vec![i]).collect(),
    };
    sets.into_iter()
        .map(|set| {
            let names: Vec<String> = set.iter().map(|&i| b.gpus[i].0.to_string()).collect();
            let t = place_quietly(rules, &b.on(&set), limit, point);
            let p = &t.placement;
            let why = match hinge(&t) {
                Some((what, _)) if !p.fully_offloaded() => format!(": {what}"),
                _ => String::new(),
            };
            TraceStep {
                stage: TraceStage::Scheduler,
                device: None,
                text: if p.fully_offloaded() {
                    format!(
                        "tried {} alone: all {} layers fit, so the scheduler would have stopped here (the log shows {} GPUs)",
                        names.join(" + "),
                        p.total,
                        count
                    )
                } else {
                    format!(
                        "tried {}{}: {} of {} layers placed, not a fit{why}",
                        names.join(" + "),
                        if set.len() == 1 { " alone" } else { "" },
                        p.offloaded,
                        p.total
                    )
                },
                margin: hinge(&t).map(|h| h.1),
            }
        })
        .collect()
}

/// How the runner reads the split: cumulative proportions of the counts from blk.0 upward, the output (and the
/// vision tensors with it) as the last layer, over the last `offloaded` layers.
pub fn runner_mapping(
    devices: &[Device],
    split: &[i64],
    blocks: i64,
    offloaded: i64,
) -> Vec<(Device, i64, i64, bool)> {
    let total: i64 = split.iter().sum();
    if total <= 0 || offloaded <= 0 || devices.len() != split.len() {
        return Vec::new();
    }
    let layers = blocks + 1;
    let start = (layers - offloaded.min(layers)).max(0);
    let span = layers - start;
    let mut cumulative = Vec::with_capacity(split.len());
    let mut sum = 0i64;
    for c in split {
        sum += c;
        cumulative.push(sum);
    }
    let mut out: Vec<(Device, i64, i64, bool)> = Vec::new();
    for layer in start..layers {
        // Layer goes to the first GPU whose cumulative share exceeds its position: (layer−start)/span < cum/total.
        let pos = layer - start;
        let Some(g) = cumulative
            .iter()
            .position(|&c| i128::from(pos) * i128::from(total) < i128::from(c) * i128::from(span))
        else {
            continue;
        };
        let is_output = layer == blocks;
        match out.last_mut() {
            Some(last) if last.0 == devices[g] && !last.3 => {
                if is_output {
                    last.3 = true;
                } else {
                    last.2 = layer;
                }
            }
            _ => out.push((
                devices[g].clone(),
                if is_output { -1 } else { layer },
                if is_output { -1 } else { layer },
                is_output,
            )),
        }
    }
    out
}

fn runner_lines(load: &Reconciled, t: &Traced) -> Vec<String> {
    let p = &t.placement;
    let devices: Vec<Device> = p.gpus.iter().map(|g| g.device.clone()).collect();
    let blocks = p.total - 1;
    let mapping = runner_mapping(&devices, &p.split(), blocks, p.offloaded);
    if mapping.is_empty() || p.used_gpus() < 2 {
        return Vec::new();
    }
    let mut lines: Vec<String> = mapping
        .iter()
        .map(|(d, first, last, output)| {
            let blocks = if *first < 0 {
                String::new()
            } else if first == last {
                format!("blk.{first}")
            } else {
                format!("blk.{first} – blk.{last}")
            };
            let output = if *output {
                if load.load.engine == crate::model::Engine::Ollama {
                    "the output and the vision tensors"
                } else {
                    "the output"
                }
            } else {
                ""
            };
            let both = if !blocks.is_empty() && !output.is_empty() {
                " and "
            } else {
                ""
            };
            format!("the runner puts {blocks}{both}{output} on {d}")
        })
        .collect();
    let bucket_gpu = t
        .last_layer
        .iter()
        .find(|(_, _, placed)| *placed)
        .map(|x| &x.0);
    let output_gpu = mapping.iter().find(|m| m.3).map(|m| &m.0);
    if let (Some(b), Some(o)) = (bucket_gpu, output_gpu) {
        if b != o {
            lines.push(format!(
                "the estimate booked the last-layer bucket ({}) on {b}, but the runner runs the output on {o}: \
                 per-GPU estimate-vs-actual rows compare {b}'s estimate with blocks it did not get",
                human(t.bucket)
            ));
        }
    }
    lines
}

/// The graph the family charged each GPU holding layers, and the bucket against the runner's output GPU.
fn charges(rules: &Rules, family: Family, b: &Bounded, t: &Traced) -> EstimatorCharges {
    let p = &t.placement;
    let f = &b.figures[1];
    let full = if p.fully_offloaded() {
        f.graph
    } else {
        f.graph_partial
    };
    let count = p.gpus.len();
    let graph = p
        .gpus
        .iter()
        .enumerate()
        .filter(|(_, g)| g.layers > 0)
        .map(|(i, g)| (g.device.clone(), rules.graph_on(i, count, full)))
        .collect();
    let devices: Vec<Device> = p.gpus.iter().map(|g| g.device.clone()).collect();
    let mapping = runner_mapping(&devices, &p.split(), p.total - 1, p.offloaded);
    let booked = t
        .last_layer
        .iter()
        .find(|(_, _, placed)| *placed)
        .map(|x| x.0.clone());
    let runs = mapping.iter().find(|m| m.3).map(|m| m.0.clone());
    let bucket_moved = match (booked, runs) {
        (Some(booked_on), Some(runs_on)) if booked_on != runs_on && p.used_gpus() > 1 => {
            Some(BucketMove {
                bytes: t.bucket,
                booked_on,
                runs_on,
            })
        }
        _ => None,
    };
    EstimatorCharges {
        family: family.name().to_string(),
        graph,
        bucket_moved,
    }
}

/// Every candidate family (or the one `--family` names) replayed on the log's figures, and the position of
/// the one [`replay`] reports with; `None` without a single-line estimate to replay. Of the changes, only
/// `family` is read: the log alone decides the family.
fn choose(load: &Reconciled, changes: &Changes) -> Option<(Vec<Run>, usize)> {
    let tried: Vec<(Family, String)> = match changes.family {
        Some(f) => vec![(f, "named with --family".to_string())],
        None => candidates(&Evidence::of(load)),
    };
    let runs: Vec<Run> = tried
        .into_iter()
        .filter_map(|(f, why)| run(load, f, why))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let chosen = runs
        .iter()
        .position(|r| r.agreement.all_ok())
        .or_else(|| runs.iter().position(|r| r.agreement.split_ok()))
        .unwrap_or_else(|| {
            (0..runs.len())
                .min_by_key(|&i| distance(load, &runs[i].traced))
                .unwrap_or(0)
        });
    Some((runs, chosen))
}

/// The family [`replay`] replays the estimate with (it depends on the log and `changes.family` only);
/// `None` when `replay` gives nothing.
pub fn family_for(load: &Reconciled, changes: &Changes) -> Option<Family> {
    let (runs, chosen) = choose(load, changes)?;
    Some(runs[chosen].family)
}

/// True when [`replay`] reports the log's own placement for `changes` (none, or only `--family`), not a
/// placement with the changes.
pub fn keeps_the_logs_placement(changes: &Changes) -> bool {
    let unchanged = *changes == Changes::default()
        || changes.family.is_some()
            && Changes {
                family: None,
                ..changes.clone()
            } == Changes::default();
    unchanged && changes.scheduler.is_none()
}

/// The placement [`replay`] reports for `changes` that change something ([`keeps_the_logs_placement`]
/// false), by `family`'s rules ([`family_for`]), with the figures it places; `None` when the estimate's
/// figures cannot be read.
pub fn changed_placement(
    load: &Reconciled,
    changes: &Changes,
    family: Family,
) -> Option<(Placement, ReplayFigures)> {
    let rules = family.rules();
    let figures = figures::from_estimate_by(load, changes, End::Nominal, rules)?;
    let gpus = gpus(load, changes, End::Nominal);
    // `--ngl` is the estimator's num_gpu (`src/model/knobs.rs`): it caps the layers as the log's would.
    let limit = changes.gpu_layers.or(max_layers(load));
    let placement = match changes.scheduler {
        Some(s) => schedule(rules, &gpus, &figures, limit, s),
        None => super::placement::place_as(rules, &gpus, &figures, limit),
    };
    Some((placement, figures))
}

/// Replay the estimate with every candidate family; `None` without a single-line estimate to replay.
pub fn replay(load: &Reconciled, changes: &Changes) -> Option<Replayed> {
    let (runs, chosen) = choose(load, changes)?;
    let best = &runs[chosen];
    let family = best.family;
    let rules = family.rules();
    let logs_placement = keeps_the_logs_placement(changes);
    let reproduced: Vec<&str> = runs
        .iter()
        .filter(|r| r.agreement.split_ok() && r.agreement.split.is_some())
        .map(|r| r.family.name())
        .collect();
    let e = load.load.estimate.as_ref()?;
    let logged_split = split_text(&e.layers.split);
    let chosen_text = if best.agreement.split_ok() && best.agreement.split.is_some() {
        let others: Vec<&str> = reproduced
            .iter()
            .copied()
            .filter(|n| *n != family.name())
            .collect();
        format!(
            "{}; reproduces the logged split {logged_split}{} (decisions taken at {}){}",
            best.why,
            if best.agreement.allocations == Some(true) {
                " and the allocations"
            } else if best.agreement.allocations == Some(false) {
                " (allocations NOT within rounding)"
            } else {
                ""
            },
            best.point.word(),
            if others.is_empty() {
                String::new()
            } else {
                format!("; also reproduced by {}", others.join(", "))
            }
        )
    } else if e.layers.split.is_empty() && e.layers.offload.is_none() {
        format!("{}; the log prints no split to compare", best.why)
    } else {
        let closest: Vec<String> = runs
            .iter()
            .map(|r| {
                format!(
                    "{} gives {} ({} layers)",
                    r.family.name(),
                    split_text(&r.traced.placement.split()),
                    r.traced.placement.offloaded
                )
            })
            .collect();
        let logged = match (e.layers.split.is_empty(), e.layers.offload) {
            (false, Some(o)) => format!("the logged split {logged_split} ({o} layers)"),
            (false, None) => format!("the logged split {logged_split}"),
            (true, Some(o)) => format!("the logged {o} layers on GPUs"),
            (true, None) => "the log".to_string(),
        };
        format!(
            "no family tried reproduces {logged}: {}; closest: {}",
            closest.join("; "),
            family.name()
        )
    };
    let limit = max_layers(load);
    // The chosen family's placement again, traced step by step with its words (the same decisions).
    let traced = place_by(rules, &best.bounded, limit, best.point);
    let mut steps = scheduler_steps(rules, &best.bounded, limit, best.point);
    steps.extend(traced.steps.iter().cloned());
    let trace = PlacementTrace {
        family: family.name().to_string(),
        builds: family.builds().to_string(),
        chosen: chosen_text,
        rules: rules.describe(),
        tried: runs.iter().map(family_try).collect(),
        steps,
        runner: runner_lines(load, &traced),
    };
    let hinge = (best.agreement.split_ok() && best.agreement.split.is_some())
        .then(|| hinge(&traced).map(|h| hinge_text(&h)))
        .flatten();
    // The replay reported: the chosen family's, with the user's changes when there are any.
    let (placement, strategy, agreement) = if logs_placement {
        (
            traced.placement.clone(),
            format!(
                "{} rules, {}, on the GPUs the log used",
                family.name(),
                family.builds()
            ),
            Some(best.agreement),
        )
    } else {
        let (placement, _) = changed_placement(load, changes, family)?;
        let scheduler = changes
            .scheduler
            .map_or("on the GPUs the log used".to_string(), |s| {
                s.describe().to_string()
            });
        (
            placement,
            format!("{} rules, {}, {scheduler}", family.name(), family.builds()),
            None,
        )
    };
    let figures = figures::from_estimate_by(load, changes, End::Nominal, rules)?;
    let agreement = agreement.filter(|_| logs_placement);
    let estimate = EstimateReplay {
        figures,
        strategy,
        placement,
        split_agrees: agreement.and_then(|a| a.split.map(|s| s && a.layers != Some(false))),
        allocations_agree: agreement.and_then(|a| a.allocations),
        logs_allocations: true,
        layers_agree: agreement.and_then(|a| a.layers),
    };
    let charges = (best.agreement.split_ok() && best.agreement.split.is_some())
        .then(|| charges(rules, family, &best.bounded, &traced));
    Some(Replayed {
        estimate,
        family,
        hinge,
        trace,
        charges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices(n: usize) -> Vec<Device> {
        (0..n).map(|i| Device::named(&format!("CUDA{i}"))).collect()
    }

    #[test]
    fn the_runner_reads_counts_as_shares_from_blk0_with_the_output_last() {
        // "1,48" over 48 blocks + output: blk.0 on CUDA0, blk.1–47 and the output on CUDA1.
        let m = runner_mapping(&devices(2), &[1, 48], 48, 49);
        assert_eq!(
            m,
            vec![
                (Device::named("CUDA0"), 0, 0, false),
                (Device::named("CUDA1"), 1, 47, true)
            ]
        );
        // A partial offload maps the last `offloaded` layers, the output counting as one (as `--n-gpu-layers`
        // does): 44 of 80 blocks + output are blk.37 … blk.79 and the output, 11 per GPU.
        let m = runner_mapping(&devices(4), &[11, 11, 11, 11], 80, 44);
        assert_eq!(m.len(), 4);
        assert_eq!((m[0].1, m[0].2), (37, 47));
        assert_eq!((m[3].1, m[3].2, m[3].3), (70, 79, true));
    }

    #[test]
    fn family_names_are_unique_and_name_their_family() {
        for f in Family::ALL {
            assert_eq!(Family::named(f.name()), Some(f));
        }
        assert_eq!(Family::named("upstream-9"), None);
    }
}
