//! `compute-imbalance`: one GPU's compute buffer is several times the others' (`docs/log-formats.md` §5.5,
//! §5.7). llama.cpp puts the output layer on the last device, and its compute buffer holds the logits of the
//! whole vocabulary for a micro-batch; pipeline parallelism keeps copies of the graph's buffers per device. The
//! GPU that carries it has that much less room for layers, and `--fit` moves layers off it. Judged on what was
//! allocated (compute buffers, or the exit table), else on the plan of a fit that concluded; never on a probe.
//!
//! With more than two GPUs the heavy buffers can be more than one (the last device's logits, and the first
//! device's when it runs the host layers' work): the heavy GPUs are the fewest largest buffers, at most half of
//! the GPUs, that are each `RATIO` times and `FLOOR` more than the largest of the rest, so a second heavy
//! buffer never hides the first and a lone small buffer (a GPU with few layers) is never the norm. Devices that
//! are one memory pool are never compared (`Load::shared_pools`, `src/load/lifecycle.rs`): four cards of one
//! model read the same total and free memory before the load (the fit's first table), so only the exit table
//! (memory in use) or devices that are one memory by design (Metal's virtual devices, one card named by two
//! backends) make a pool.
//!
//! The levers, computed: a smaller micro-batch (the compute buffers shrink with it), and, when one GPU holds
//! the whole model with the largest compute buffer once, no split at all.

use super::{finding, CheckDef, Context};
use crate::model::grid::Part;
use crate::model::knobs::{self, Knob};
use crate::model::{
    human, Device, Finding, FindingCode, FitDecision, Load, Reconciled, Severity, TablePhase, MIB,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ComputeImbalance,
    summary: "one GPU's compute buffer is several times the others' (the output layer and vocabulary, pipeline copies)",
    run: check,
};

/// How many times the others' largest the largest compute buffer must be …
const RATIO: i64 = 3;
/// … and by how much at least (a small buffer three times a tiny one is no imbalance).
const FLOOR: i64 = 256 * MIB;

/// A GPU's compute buffer in bytes, with the log lines it rests on.
pub type GpuCompute = (Device, i64, Vec<u64>);

/// Per GPU, its compute buffer and the lines it rests on, with what the figures are.
pub fn compute_per_gpu(load: &Reconciled) -> Option<(Vec<GpuCompute>, &'static str)> {
    let gpus: Vec<&Device> = load.grid.gpus();
    let buffers: Vec<(Device, i64, Vec<u64>)> = gpus
        .iter()
        .filter_map(|d| {
            load.grid
                .cell(d, Part::Graph)
                .map(|c| ((*d).clone(), c.size.low, c.lines.clone()))
        })
        .collect();
    if buffers.len() >= 2 {
        return Some((buffers, "compute buffers"));
    }
    let exit: Vec<(Device, i64, Vec<u64>)> = load
        .load
        .actual
        .breakdown
        .iter()
        .filter(|r| r.device.is_gpu())
        .map(|r| (r.device.clone(), r.compute.low, vec![r.line]))
        .collect();
    if exit.len() >= 2 {
        return Some((exit, "the exit table's compute column"));
    }
    let e = load.load.estimate.as_ref()?;
    let concluded = e
        .fit
        .as_ref()
        .is_some_and(|f| matches!(f.outcome, FitDecision::NoChange | FitDecision::Changed));
    let plan_line = load
        .load
        .lifecycle
        .tables
        .iter()
        .find(|t| t.phase == TablePhase::Plan)
        .map(|t| t.line);
    let plan: Vec<(Device, i64, Vec<u64>)> = e
        .per_device
        .iter()
        .filter(|d| d.device.is_gpu())
        .filter_map(|d| {
            Some((
                d.device.clone(),
                d.graph?.low,
                plan_line.into_iter().collect(),
            ))
        })
        .collect();
    (concluded && plan.len() >= 2).then_some((plan, "the --fit plan's compute column"))
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    // Ollama's estimator charges the graph per GPU by its own figures (graph-charged-per-gpu judges that);
    // vLLM and SGLang shard every layer over their ranks (rank-imbalance); unknown: no knob reaches it.
    if !cx.load.load.runtime.llama_cpp_places_layers() {
        return;
    }
    let Some((per_gpu, source)) = compute_per_gpu(cx.load) else {
        return;
    };
    let sizes: Vec<i64> = per_gpu.iter().map(|(_, b, _)| *b).collect();
    let Some((heavy, rest)) = split_heavy(&sizes) else {
        return;
    };
    let heavy: Vec<&GpuCompute> = heavy.iter().map(|&i| &per_gpu[i]).collect();
    let rest: Vec<&GpuCompute> = rest.iter().map(|&i| &per_gpu[i]).collect();
    // A heavy GPU that shares one pool with a light one has no less room than it.
    let pooled = heavy
        .iter()
        .any(|(h, _, _)| rest.iter().any(|(r, _, _)| one_pool(&cx.load.load, h, r)));
    if pooled {
        return;
    }
    let others = rest.iter().map(|(_, b, _)| *b).max().unwrap_or(0);
    let (big, big_bytes, _) = heavy[0];
    let lines: Vec<u64> = per_gpu.iter().flat_map(|(_, _, l)| l.clone()).collect();
    let rest_words: Vec<String> = rest
        .iter()
        .map(|(d, b, _)| format!("{d} {}", human(*b)))
        .collect();
    // To the nearest whole time (2100.03 MiB against 300.03 is 7×).
    let times = |bytes: i64| {
        let t = (bytes + others.max(MIB) / 2) / others.max(MIB);
        if t >= RATIO {
            t.to_string()
        } else {
            format!("over {RATIO}")
        }
    };
    let whose = match heavy.as_slice() {
        [_] => format!(
            "{big}'s compute buffer ({}) is {}× the others' ({}), by {source}",
            human(*big_bytes),
            times(*big_bytes),
            rest_words.join(", ")
        ),
        _ => format!(
            "{} are {} the others' ({}), by {source}",
            heavy
                .iter()
                .map(|(d, b, _)| format!("{d}'s compute buffer ({})", human(*b)))
                .collect::<Vec<_>>()
                .join(" and "),
            heavy
                .iter()
                .map(|(_, b, _)| format!("{}×", times(*b)))
                .collect::<Vec<_>>()
                .join(" and "),
            rest_words.join(", ")
        ),
    };
    let less: Vec<String> = heavy
        .iter()
        .map(|(d, b, _)| format!("{d} has {} less room for layers", human(b - others)))
        .collect();
    let why = match heavy.as_slice() {
        [_] => "the output layer with the whole vocabulary's logits sits on one device (and a pipeline split keeps copies of the graph per device)",
        _ => "the output layer with the whole vocabulary's logits sits on the last device, and a device's compute buffer also holds the work it runs for other devices and the copies of the graph a pipeline split keeps",
    };
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!("{whose}: {why}, so {}", less.join(", ")),
        &levers(cx, big, *big_bytes),
        lines,
        Some(big),
        None,
    ));
}

/// The heavy buffers of `sizes` and the rest, by position (the heavy ones largest first): the fewest largest
/// buffers, at most half of them, whose smallest is [`RATIO`] times the largest of the rest and [`FLOOR`] more.
/// `None` when no such split exists (every buffer within a few times the others', or fewer than two GPUs).
fn split_heavy(sizes: &[i64]) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    (1..=sizes.len() / 2).find_map(|k| {
        let (heavy, rest) = order.split_at(k);
        let lightest_heavy = sizes[*heavy.last()?];
        let largest_rest = sizes[*rest.first()?];
        (lightest_heavy - largest_rest >= FLOOR
            && lightest_heavy >= largest_rest.saturating_mul(RATIO))
        .then(|| (heavy.to_vec(), rest.to_vec()))
    })
}

/// `a` and `b` are one memory pool by the load's evidence (`Load::shared_pools`, decided where the tables are
/// read, `src/load/lifecycle.rs`: the exit table's alike devices, or before the load only devices that are one
/// memory by design).
fn one_pool(load: &Load, a: &Device, b: &Device) -> bool {
    load.shared_pools
        .iter()
        .any(|pool| pool.contains(a) && pool.contains(b))
}

/// The levers: a smaller micro-batch, and no split when one GPU holds everything, each with its figures.
fn levers(cx: &Context, big: &Device, big_bytes: i64) -> String {
    let load = cx.load;
    let runtime = load.load.runtime;
    let mut out = Vec::new();
    let ubatch = load.load.settings.ubatch_size.unwrap_or(512);
    if let (Some(ub), true) = (knobs::reaching(runtime, Knob::Ubatch), ubatch >= 128) {
        out.push(format!(
            "{} (the compute buffers scale with the micro-batch: {big}'s {} → about {})",
            ub.setting(ubatch / 2),
            human(big_bytes),
            human(big_bytes / 2)
        ));
    }
    if let Some((gpu, need, free)) = super::suggest::one_gpu_holds_it(load) {
        if let Some(one) = knobs::reaching(runtime, Knob::OneGpu) {
            out.push(format!(
                "{} (every layer and one compute buffer on {gpu}: {} of {} free, so no second copy of the graph)",
                one.setting(gpu.position().unwrap_or(0)),
                human(need),
                human(free)
            ));
        }
    }
    if out.is_empty() {
        "a smaller micro-batch shrinks the compute buffers; keeping the model on one GPU removes the split".to_string()
    } else {
        out.join(", or ")
    }
}

#[cfg(test)]
mod tests {
    use super::{split_heavy, MIB};

    fn heavy_of(mib: &[i64]) -> Option<Vec<usize>> {
        let sizes: Vec<i64> = mib.iter().map(|m| m * MIB).collect();
        split_heavy(&sizes).map(|(h, _)| h)
    }

    #[test]
    fn one_heavy_buffer_against_the_largest_of_the_rest() {
        // tests/llama_cpp_alone.rs's two GPUs: 2071 MiB against 612.
        assert_eq!(heavy_of(&[612, 2071]), Some(vec![1]));
        assert_eq!(heavy_of(&[300, 300, 300, 2100]), Some(vec![3]));
        // 3 × 700 is 2100: the largest of the rest bars it.
        assert_eq!(heavy_of(&[300, 300, 700, 2099]), None);
    }

    #[test]
    fn a_second_heavy_buffer_does_not_hide_the_first() {
        // Four GPUs: the first and the last several times the two in between.
        assert_eq!(heavy_of(&[1800, 300, 300, 2100]), Some(vec![3, 0]));
    }

    #[test]
    fn a_lone_small_buffer_is_not_the_norm_and_small_gaps_are_no_imbalance() {
        // Three of four alike and one small: the small one is the odd one out, not the others heavy.
        assert_eq!(heavy_of(&[1800, 1800, 1800, 300]), None);
        // Three times, but under 256 MiB more.
        assert_eq!(heavy_of(&[100, 100, 100, 340]), None);
        assert_eq!(heavy_of(&[2100]), None);
        assert_eq!(heavy_of(&[]), None);
    }
}
