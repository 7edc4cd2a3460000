//! `needless-split`: the model sits on two or more GPUs although, by the measured sizes, fewer of them hold it
//! all. Decided by the placement replay with the measured figures: Ollama's estimator in its era, llama.cpp's
//! `--fit` in the llama-server era, where no `layers.split` is printed and the GPUs a model sits on are read
//! from the runner's weight buffers.

use super::{finding, CheckDef, Context};
use crate::model::scheduler::GpuChoice;
use crate::model::{
    human, Component, Finding, FindingCode, FitDecision, Launcher, MeasuredReplay, Placer,
    Quantity, ReplayOutcome, Severity,
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
    let (message, hint) = match load.load.runtime.placer() {
        Placer::LlamaFit(Launcher::Ollama) => (
            fit_message(cx, m, used, &holds),
            "pin the model to that GPU: CUDA_VISIBLE_DEVICES, or main_gpu, which Ollama passes to llama-server as --split-mode none --main-gpu (see suggestions)",
        ),
        Placer::LlamaFit(Launcher::User) => (
            fit_message(cx, m, used, &holds),
            "pin the model to that GPU: --device, or --split-mode none --main-gpu (see suggestions)",
        ),
        Placer::LlamaFit(Launcher::Unknown) => (
            fit_message(cx, m, used, &holds),
            "pin the model to that GPU: --split-mode none --main-gpu, or main_gpu if Ollama ≥ 0.30 started llama-server (see suggestions)",
        ),
        // vLLM and SGLang shard every layer over their ranks (no split by layers to judge): never replayed.
        Placer::ServingEngine(_) => return,
        Placer::OllamaScheduler | Placer::Unknown => {
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

/// Why Ollama handed every GPU to llama-server, when its single-GPU rule is the cause: its prediction (file
/// size + f16 KV) missed 80 % of each GPU's available memory although the buffers fit one GPU
/// (`docs/log-formats.md` §5.6 item 2).
fn single_gpu_rule_cause(cx: &Context) -> String {
    let Some(s) = cx.load.load.scheduler.as_ref() else {
        return String::new();
    };
    let (Some(p), GpuChoice::AllGpus { .. }) = (&s.prediction, &s.gpu_choice) else {
        return String::new();
    };
    let Some(fits) = s.footprint_fits_but_rule_missed() else {
        return String::new();
    };
    format!(
        "; Ollama gave llama-server every GPU because its prediction, {} (file size + KV at f16), is above 80 % of {}'s {} available (the bar is {}, missed by {}): its single-GPU rule judged the model by that figure, not by the {} the buffers take",
        human(p.total.bytes),
        fits.name.clone().unwrap_or_else(|| format!("GPU {}", fits.gpu)),
        human(fits.available.bytes),
        human(fits.bar.bytes),
        fits.misses_by.map(|q| human(q.bytes)).unwrap_or_default(),
        cx.load
            .grid
            .gpus_with_weights()
            .iter()
            .filter_map(|d| cx.load.devices.iter().find(|r| r.device == **d))
            .filter_map(|r| r.actual)
            .reduce(Quantity::plus)
            .map(|q| human(q.bytes))
            .unwrap_or_default(),
    )
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
    let cause = single_gpu_rule_cause(cx);
    format!(
        "the model sits on {used} GPUs ({}), but by the measured sizes {holds}, {} to spare above the {} --fit margin{cause}{why}; a split moves activations between GPUs for every token (in ollama#16599 it cost a third of the speed, 30 → 20 tok/s)",
        sits.join(", "),
        human(m.margin),
        human(m.figures.gpu_overhead),
    )
}
