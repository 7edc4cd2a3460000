//! `needless-split`: the model sits on two or more GPUs although, by the measured sizes, fewer of them hold it
//! all. Decided by the placement replay with the measured figures: Ollama's estimator in its era, llama.cpp's
//! `--fit` in the llama-server era, where no `layers.split` is printed and the GPUs a model sits on are read
//! from the runner's weight buffers.

use super::{finding, CheckDef, Context};
use crate::model::{
    human, Component, Finding, FindingCode, FitDecision, MeasuredReplay, ReplayOutcome, Runtime,
    Severity,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::NeedlessSplit,
    summary: "the model sits on several GPUs although the measured total fits on fewer (replay with measured sizes)",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let measured_gpus = load.grid.gpus_with_weights();
    let logged_split = load
        .load
        .estimate
        .as_ref()
        .map(|e| e.layers.split.iter().filter(|&&n| n > 0).count())
        .unwrap_or(0);
    let used = if measured_gpus.is_empty() {
        logged_split
    } else {
        measured_gpus.len().max(logged_split)
    };
    if used < 2 {
        return;
    }
    // Premise: reality was measured (weight and compute buffers), otherwise the replay only repeats the estimate.
    let measured = |c| cx.component(c).is_some_and(|r| r.actual.is_some());
    if !measured(Component::WeightsGpu) || !measured(Component::Graph) {
        return;
    }
    let Some(m) = cx.whatif.and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let ReplayOutcome::Fits { gpus: fits_on } = m.verdict.outcome else {
        return;
    };
    if fits_on >= used || m.margin <= 0 {
        return;
    }
    let placed: Vec<String> = m
        .placement
        .gpus_with_layers()
        .map(|g| {
            format!(
                "{}{}: {} of {} free",
                g.device,
                cx.gpu_label(&g.device),
                human(g.allocation),
                human(g.free)
            )
        })
        .collect();
    let holds = if fits_on == 1 {
        format!("one GPU holds it all, {}", placed.join(""))
    } else {
        format!("{fits_on} GPUs hold it all, {}", placed.join("; "))
    };
    let mut lines = cx.estimate_lines();
    for c in [Component::WeightsGpu, Component::Graph] {
        if let Some(r) = cx.component(c) {
            lines.extend(&r.lines);
        }
    }
    let (message, hint) = match load.load.runtime {
        Runtime::OllamaFit => (
            fit_message(cx, m, used, &holds),
            "pin the model to that GPU: CUDA_VISIBLE_DEVICES, or main_gpu, which Ollama passes to llama-server as --split-mode none --main-gpu (see suggestions)",
        ),
        Runtime::LlamaCpp => (
            fit_message(cx, m, used, &holds),
            "pin the model to that GPU: --device, or --split-mode none --main-gpu (see suggestions)",
        ),
        // vLLM and SGLang shard every layer over their ranks (no split by layers to judge): never replayed.
        Runtime::Vllm | Runtime::Sglang => return,
        Runtime::OllamaEstimator | Runtime::OllamaEngine | Runtime::Unknown => {
            let split: Vec<String> = load
                .load.estimate
                .as_ref()
                .map(|e| e.layers.split.iter().map(|n| n.to_string()).collect())
                .unwrap_or_default();
            (
                format!(
                    "split {} over {used} GPUs, but by the measured sizes the whole model fits on {}: {}, {} to spare",
                    split.join(","),
                    if fits_on == 1 { "one GPU".to_string() } else { format!("{fits_on} GPUs") },
                    m.placement.gpus_with_layers()
                        .map(|g| format!("{} ({} of {} free)", g.device, human(g.allocation), human(g.free)))
                        .collect::<Vec<_>>()
                        .join("; "),
                    human(m.margin)
                ),
                "pin the model to that GPU (CUDA_VISIBLE_DEVICES) and force the layers with num_gpu; the estimate overcharges (see the other findings)",
            )
        }
    };
    out.push(finding(
        DEF.code,
        Severity::Warning,
        message,
        hint,
        lines,
        None,
        None,
    ));
}

/// The message when llama.cpp's `--fit` placed the layers: where the model sits by its buffers, and why `--fit`
/// split it.
fn fit_message(cx: &Context, m: &MeasuredReplay, used: usize, holds: &str) -> String {
    let measured_gpus = cx.load.grid.gpus_with_weights();
    let sits: Vec<String> = cx
        .load
        .devices
        .iter()
        .filter(|d| measured_gpus.contains(&&d.device))
        .map(|d| {
            format!(
                "{}{} {}",
                d.device,
                cx.gpu_label(&d.device),
                d.actual.map(|a| human(a.bytes)).unwrap_or_default()
            )
        })
        .collect();
    let why = match cx.load.load.estimate.as_ref().and_then(|e| e.fit.as_ref()) {
        Some(f) if f.outcome == FitDecision::NoChange => {
            "; --fit kept llama.cpp's default split, proportional to free memory, because every GPU kept its margin (\"no changes needed\")"
        }
        _ => "",
    };
    format!(
        "the model sits on {used} GPUs ({}), but by the measured sizes {holds}, {} to spare above the {} --fit margin{why}; a split moves activations between GPUs for every token (in ollama#16599 it cost a third of the speed, 30 → 20 tok/s)",
        sits.join(", "),
        human(m.margin),
        human(m.figures.gpu_overhead),
    )
}
