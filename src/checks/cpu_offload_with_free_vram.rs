//! `cpu-offload-with-free-vram`: layers were left on the CPU although, by the measured sizes, the GPUs had room
//! for them — or, in the llama-server era, because the context the user asked for left no room: then it says at
//! which `num_ctx` every layer would fit. Decided by the placement replay.

use super::{finding, CheckDef, Context};
use crate::model::{human, Component, Finding, FindingCode, Launcher, Placer, Severity};
use crate::replay::llama_server;

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::CpuOffloadWithFreeVram,
    summary: "layers left on the CPU while the GPUs had room for them by the measured sizes, or at a smaller context",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let e = load.load.estimate.as_ref();
    let (Some(offloaded), Some(total)) = (
        load.load
            .actual
            .offloaded_layers
            .or(e.and_then(|e| e.layers.offload)),
        load.load
            .actual
            .total_layers
            .or(e.and_then(|e| e.layers.model)),
    ) else {
        return;
    };
    let requested = e
        .and_then(|e| e.layers.requested)
        .or(load.load.settings.gpu_layers);
    if offloaded >= total || requested.is_some_and(|n| n >= 0 && n <= offloaded) {
        // Everything on GPU, or the user asked for exactly this many layers.
        return;
    }
    // llama.cpp's own dry run of every layer missed the fit's target (`cannot meet free memory target`): that
    // measurement is exact where the replay approximates, so `partial-offload` speaks instead.
    let fit_measured_short = e
        .and_then(|e| e.fit.as_ref())
        .is_some_and(|f| f.reduce_by.is_some() && f.context_by_user == Some(true));
    if fit_measured_short && requested.is_none() {
        return;
    }
    // A `--fit` whose decision is not in the log (a paste that starts after it): whether its own dry run
    // already missed the target, and with which margin (a draft raises it), is unknown, and the free memory
    // the replay would use was read at another time.
    let fit_undecided = e
        .and_then(|e| e.fit.as_ref())
        .is_some_and(|f| f.outcome == crate::model::FitDecision::Unknown);
    if fit_undecided && requested.is_none() {
        return;
    }
    // llama-server left layers on the CPU, and neither its `--fit` lines nor the layer count asked for are in
    // the log: llama-server puts every layer or none on the GPUs unless the fit or the user's `-ngl` chose
    // fewer, and the paste starts after both (`sample-logs/706-…` from its `using device` line on). Why the
    // layers stayed, and against which margin, is not in the log.
    let chosen_unseen = matches!(load.load.runtime.placer(), Placer::LlamaFit(_))
        && e.and_then(|e| e.fit.as_ref()).is_none();
    if chosen_unseen && requested.is_none() {
        return;
    }
    // Premise: the runner's weight buffers were measured, otherwise the replay only repeats the estimate.
    let measured_weights = cx
        .component(Component::WeightsGpu)
        .and_then(|r| r.actual)
        .is_some_and(|a| a.bytes > 0);
    if !measured_weights {
        return;
    }
    let Some(m) = cx.whatif.and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let mut lines = cx.estimate_lines();
    if let Some(r) = cx.component(Component::WeightsGpu) {
        lines.extend(&r.lines);
    }
    let could = m.placement.offloaded;
    if could > offloaded {
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{} of {total} layers were left on the CPU, but by the measured sizes {could} of {total} fit on the GPUs ({} to spare on the tightest)",
                total - offloaded,
                human(m.margin.max(0))
            ),
            match load.load.runtime.placer() {
                Placer::LlamaFit(_) => {
                    "the --fit margin or the context took the room (see suggestions)"
                }
                Placer::OllamaScheduler => {
                    "set num_gpu to the number of layers that fit (see suggestions); the estimate reserved more than the runner uses"
                }
                Placer::Unknown => {
                    "the estimate reserved more than the runner uses: ask for that many layers on the GPUs"
                }
                // vLLM and SGLang keep every layer on their GPUs (no layer count to offload): not reached.
                Placer::ServingEngine(_) => {
                    "the serving engine keeps every layer on its GPUs: split over more ranks (-tp) instead"
                }
            },
            lines,
            None,
            None,
        ));
        return;
    }
    // Only llama.cpp's `--fit` shrinks the layers on the GPUs to the context asked for. Ollama's num_ctx is
    // per slot; llama.cpp's --ctx-size is all slots'.
    let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    let (at_most, per, hint) = match load.load.runtime.placer() {
        Placer::LlamaFit(Launcher::Ollama) => ("num_ctx", parallel, "lower num_ctx (or OLLAMA_CONTEXT_LENGTH), or quantise the KV cache with OLLAMA_KV_CACHE_TYPE=q8_0 (see suggestions)"),
        Placer::LlamaFit(Launcher::User) => ("--ctx-size", 1, "lower --ctx-size, or quantise the KV cache with --cache-type-k q8_0 --cache-type-v q8_0 (see suggestions)"),
        // The context as llama-server counts it (every slot's); the suggestions give Ollama's spelling beside it.
        Placer::LlamaFit(Launcher::Unknown) => ("-c", 1, "lower the context (-c, or num_ctx if Ollama ≥ 0.30 started llama-server), or quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0, or OLLAMA_KV_CACHE_TYPE=q8_0) (see suggestions)"),
        Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => return,
    };
    // The GPUs were full: the context decided. At which context would every layer fit?
    let (Some(ctx), Some(fits)) = (
        load.load.settings.ctx_size,
        llama_server::largest_context_that_fits(load),
    ) else {
        return;
    };
    if fits >= ctx {
        return;
    }
    let per_layer = llama_server::measured_shape(load)
        .map(|s| s.layer_kv_at(ctx))
        .unwrap_or(0);
    lines.extend(load.load.actual.kv_caches.iter().map(|k| k.line));
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{} of {total} layers are on the CPU because of the context: at {ctx} tokens each layer's KV cache is {}; all {total} layers fit on the GPUs at {at_most} {} or less{}",
            total - offloaded,
            human(per_layer),
            fits / per,
            if per > 1 { format!(" per slot ({parallel} slots)") } else { String::new() },
        ),
        hint,
        lines,
        None,
        None,
    ));
}
