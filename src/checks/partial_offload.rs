//! `partial-offload`: layers (or most of the weights) stay in host memory because the GPU had no room for
//! them, as llama.cpp's own measurement says (`docs/log-formats.md` §5.5, §5.7): with every layer, `--fit`'s
//! dry run of the user's settings missed its free-memory target, so it moved layers to the host. The
//! suggestions (`suggest/fit.rs`) name the smallest change that brings them back: one slot instead of several
//! (each has its own recurrent state), a smaller fit target, a quantised KV cache, a smaller context.
//!
//! Weights that stay on the host by design (input and per-layer token embeddings with every layer offloaded)
//! are not a partial offload: without layer counts, the check fires only when the host holds more weights than
//! the GPUs.

use super::{finding, CheckDef, Context};
use crate::model::{human, Component, Finding, FindingCode, Placer, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::PartialOffload,
    summary: "layers or most of the weights left in host memory because the GPUs had no room, by llama.cpp's own measurement",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    match load.load.runtime.placer() {
        Placer::LlamaFit(_) | Placer::Unknown => {}
        // Ollama's estimator decides layers by its own figures (cpu-offload-with-free-vram judges those); vLLM
        // and SGLang place no layers on the host by a fit.
        Placer::OllamaScheduler | Placer::ServingEngine(_) => return,
    }
    let host = cx
        .component(Component::WeightsHost)
        .and_then(|r| r.actual.map(|a| (a, r.lines.clone())));
    let gpu = cx.component(Component::WeightsGpu).and_then(|r| r.actual);
    let e = load.load.estimate.as_ref();
    let fit = e.and_then(|e| e.fit.as_ref());
    let layers = match (
        load.load.actual.offloaded_layers,
        load.load.actual.total_layers,
    ) {
        (Some(o), Some(t)) => Some((o, t)),
        _ => None,
    };
    if let Some((offloaded, total)) = layers {
        if offloaded >= total {
            return;
        }
        // The fit's own dry run with every layer missed the target: that is why layers are on the host.
        let Some(fit) = fit.filter(|_| load.load.settings.gpu_layers.is_none()) else {
            return;
        };
        let Some(short) = fit.reduce_by else {
            return;
        };
        let on = fit
            .free
            .first()
            .map(|d| d.device.to_string())
            .unwrap_or_else(|| "the GPU".to_string());
        let measured = match (fit.projected, fit.free.first()) {
            (Some(used), Some(free)) => format!(
                ": with every layer --fit projected {} against {} free",
                human(used.low),
                human(free.free.low)
            ),
            _ => String::new(),
        };
        let mut lines = fit.lines.clone();
        let weights = host
            .as_ref()
            .map(|(w, l)| {
                lines.extend(l);
                format!(" ({} of weights in host memory)", human(w.low))
            })
            .unwrap_or_default();
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{} of {total} layers are in host memory{weights}{measured}, {} short of keeping {} free on {on}",
                total - offloaded,
                human(short.low),
                fit.target.map_or("its target".to_string(), |t| human(t.low)),
            ),
            "the smallest change that brings every layer onto the GPU is in the suggestions (one slot, a smaller fit target, a quantised KV cache, a smaller context)",
            lines,
            None,
            None,
        ));
        return;
    }
    // No layer counts: judged by where the weights are.
    let (Some((host, lines)), Some(gpu)) = (host, gpu) else {
        return;
    };
    if host.low <= gpu.high {
        return;
    }
    let share = host.low.saturating_mul(100) / host.low.saturating_add(gpu.low).max(1);
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{} of the weights are in host memory ({share} % of the weights this log shows), more than the {} on the GPUs: a deep partial offload, every token runs those layers on the CPU",
            human(host.low),
            human(gpu.low)
        ),
        match load.load.runtime.placer() {
            Placer::LlamaFit(_) => {
                "fewer layers fit than the model has: lower the context or the parallel slots, quantise the KV cache, or keep a MoE model's experts on the CPU and the rest on the GPU (-ot / --n-cpu-moe)"
            }
            Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => {
                "fewer layers fit than the model has: a smaller context, fewer parallel slots or a quantised KV cache leave room for more of them"
            }
        },
        lines,
        None,
        Some(Component::WeightsHost),
    ));
}
