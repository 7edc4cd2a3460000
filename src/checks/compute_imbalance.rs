//! `compute-imbalance`: one GPU's compute buffer is several times the others' (`docs/log-formats.md` §5.5,
//! §5.7). llama.cpp puts the output layer on the last device, and its compute buffer holds the logits of the
//! whole vocabulary for a micro-batch; pipeline parallelism keeps copies of the graph's buffers per device. The
//! GPU that carries it has that much less room for layers, and `--fit` moves layers off it. Judged on what was
//! allocated (compute buffers, or the exit table), else on the plan of a fit that concluded; never on a probe.
//! The levers, computed: a smaller micro-batch (the compute buffers shrink with it), and, when one GPU holds
//! the whole model with the largest compute buffer once, no split at all.

use super::{finding, CheckDef, Context};
use crate::model::grid::Part;
use crate::model::knobs::{self, Knob};
use crate::model::{
    human, Device, Finding, FindingCode, FitDecision, Reconciled, Severity, TablePhase, MIB,
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
    let Some((mut per_gpu, source)) = compute_per_gpu(cx.load) else {
        return;
    };
    // Devices that share one pool (Metal's virtual devices) are one GPU.
    if !cx.load.load.shared_pools.is_empty() {
        return;
    }
    per_gpu.sort_by_key(|(_, b, _)| std::cmp::Reverse(*b));
    let (big, big_bytes, _) = &per_gpu[0];
    let others = per_gpu[1].1;
    if big_bytes - others < FLOOR || *big_bytes < others.saturating_mul(RATIO) {
        return;
    }
    let times = big_bytes / others.max(MIB);
    let lines: Vec<u64> = per_gpu.iter().flat_map(|(_, _, l)| l.clone()).collect();
    let rest: Vec<String> = per_gpu[1..]
        .iter()
        .map(|(d, b, _)| format!("{d} {}", human(*b)))
        .collect();
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{big}'s compute buffer ({}) is {}× the others' ({}), by {source}: the output layer with the whole vocabulary's logits sits on one device (and a pipeline split keeps copies of the graph per device), so {big} has {} less room for layers",
            human(*big_bytes),
            if times >= RATIO { times.to_string() } else { format!("over {RATIO}") },
            rest.join(", "),
            human(big_bytes - others)
        ),
        &levers(cx, big, *big_bytes),
        lines,
        Some(big),
        None,
    ));
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
