//! `partial-offload`: layers (or most of the weights) stay in host memory because the GPU had no room for
//! them, as llama.cpp's own measurement says (`docs/log-formats.md` §5.5, §5.7): with every layer, `--fit`'s
//! dry run of the user's settings missed its free-memory target, so it moved layers to the host. The
//! suggestions (`suggest/fit.rs`) name the smallest change that brings them back: one slot instead of several
//! (each has its own recurrent state), a smaller fit target, a quantised KV cache, a smaller context.
//!
//! Ollama's estimator (`Placer::OllamaScheduler`) decides the layers by its own figures, printed on its estimate
//! line (`docs/log-formats.md` §2): when it places fewer layers than the model has and the measured sizes do
//! not say they would have fit (that is `cpu-offload-with-free-vram`), the layers are on the host because the
//! estimate for this context had no room for them. The finding names the estimate's figures — what the whole
//! model needs, the KV cache for the context, the graph with a partial offload, what was available — and the
//! suggestions (`suggest/ollama.rs`) the context and the KV cache type that bring the layers back.
//!
//! Weights that stay on the host by design (input and per-layer token embeddings with every layer offloaded)
//! are not a partial offload: without layer counts, the check fires only when the host holds more weights than
//! the GPUs.

use super::{finding, CheckDef, Context};
use crate::model::{human, Component, Finding, FindingCode, Part, Placer, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::PartialOffload,
    summary: "layers or most of the weights left in host memory because the GPUs had no room, by llama.cpp's own measurement",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    match load.load.runtime.placer() {
        Placer::LlamaFit(_) | Placer::Unknown => {}
        Placer::OllamaScheduler => return by_ollama_estimate(cx, out),
        // vLLM and SGLang place no layers on the host.
        Placer::ServingEngine(_) => return,
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
    // The KV cache split between host and GPU buffers (a sliding-window model prints both of its caches so):
    // with the KV offloaded (`--no-kv-offload` would put all of it on the host), a layer's KV sits where the
    // layer runs, so the layers whose KV is on the host run there.
    // Not when the user chose the layers (`-ngl N` at or below what was placed): that split is theirs.
    // Nor when nothing says who chose them: a fragment without the runner's command line or request, whose
    // runtime is unknown, may hide an `-ngl` or Ollama's own layer count.
    let chosen = match load.load.settings.gpu_layers {
        Some(n) => n >= 0 && load.load.actual.offloaded_layers.is_none_or(|o| n <= o),
        None => load.load.runtime.placer() == Placer::Unknown,
    };
    let kv_split = kv_split(cx).filter(|_| !chosen);
    if let Some((offloaded, total)) = layers {
        if offloaded >= total {
            return;
        }
        // The fit's own dry run with every layer missed the target: that is why layers are on the host.
        let Some(fit) = fit.filter(|_| load.load.settings.gpu_layers.is_none()) else {
            if let Some(split) = kv_split {
                out.push(kv_split_finding(Some((offloaded, total)), split));
            }
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
    // No layer counts: judged by where the weights are, else by where the KV cache is.
    let (Some((host, lines)), Some(gpu)) = (host, gpu) else {
        if let Some(split) = kv_split {
            out.push(kv_split_finding(None, split));
        }
        return;
    };
    if host.low <= gpu.high || chosen {
        if let Some(split) = kv_split {
            out.push(kv_split_finding(None, split));
        }
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

/// The KV cache's bytes in host buffers and on the GPUs, with their lines, when both hold some.
fn kv_split(cx: &Context) -> Option<(i64, i64, Vec<u64>)> {
    let load = cx.load;
    let host = load.grid.cell(&crate::model::Device::Host, Part::Kv)?;
    let gpus = load.grid.gpus_total(&[Part::Kv])?;
    // Both beyond a rounding of the buffer lines (two decimals of MiB): a cache of a few KiB on one side is
    // no split.
    if host.size.low <= crate::model::MIB || gpus.size.low <= crate::model::MIB {
        return None;
    }
    let mut lines = host.lines.clone();
    lines.extend(&gpus.lines);
    Some((host.size.bytes, gpus.size.bytes, lines))
}

fn kv_split_finding(
    layers: Option<(i64, i64)>,
    (host, gpus, lines): (i64, i64, Vec<u64>),
) -> Finding {
    let share = host.saturating_mul(100) / host.saturating_add(gpus).max(1);
    let which = match layers {
        Some((offloaded, total)) => {
            format!("{} of {total} layers are in host memory", total - offloaded)
        }
        None => "some layers are in host memory".to_string(),
    };
    finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{which}: the KV cache is split between host buffers ({}, {share} % of it) and the GPUs ({}); with the KV offloaded, a layer's cache sits where the layer runs, so every token runs those layers on the CPU",
            human(host),
            human(gpus)
        ),
        "fewer layers fit than the model has: a smaller context or a quantised KV cache leave room for more of them",
        lines,
        None,
        Some(Component::Kv),
    )
}

/// Ollama's estimator left layers on the host because, by its own figures for this context, they did not fit.
fn by_ollama_estimate(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = load
        .load
        .estimate
        .as_ref()
        .filter(|e| e.form.is_offload_line())
    else {
        return;
    };
    let (Some(offloaded), Some(total)) = (
        load.load.actual.offloaded_layers.or(e.layers.offload),
        load.load.actual.total_layers.or(e.layers.model),
    ) else {
        return;
    };
    // The user fixed the layers (`num_gpu`, the estimate's `layers.requested`): the estimate did not choose
    // them. The runner's `--n-gpu-layers` is the estimate's own answer, not a request.
    let user_fixed = e.layers.requested.is_some_and(|n| n >= 0);
    if offloaded >= total || user_fixed {
        return;
    }
    // By the measured sizes more layers would have fit: the estimate is wrong, not the context, and
    // `cpu-offload-with-free-vram` says so (its premise, `cpu_offload_with_free_vram.rs`).
    let measured_weights = cx
        .component(Component::WeightsGpu)
        .and_then(|r| r.actual)
        .is_some_and(|a| a.bytes > 0);
    let measured_more = cx
        .whatif
        .and_then(|w| w.measured.as_ref())
        .is_some_and(|m| m.placement.offloaded > offloaded);
    if measured_weights && measured_more {
        return;
    }
    let available = e
        .available
        .iter()
        .fold(None, |sum: Option<crate::model::Quantity>, q| {
            Some(sum.map_or(*q, |s| s.plus(*q)))
        });
    let Some(available) = available else {
        return;
    };
    let mut parts = Vec::new();
    if let Some(kv) = e.kv {
        parts.push(format!(
            "a KV cache of {} for this context",
            human(kv.bytes)
        ));
    }
    let graph = e.graph_partial.or(e.graph_full);
    if let Some(g) = graph {
        parts.push(format!(
            "a graph of {} with part of the model on the GPU",
            human(g.bytes)
        ));
    }
    let needs = match (e.required_full, parts.is_empty()) {
        (Some(full), false) => format!(
            "{} for the whole model ({})",
            human(full.bytes),
            parts.join(", ")
        ),
        (Some(full), true) => format!("{} for the whole model", human(full.bytes)),
        (None, _) => parts.join(", "),
    };
    let mut why = String::new();
    if graph.is_some_and(|g| g.low > available.high) {
        why.push_str("; the graph alone is more than is available, so not one layer fits");
    }
    let weights = crate::reconcile::terms::block_weights(e)
        .map(|(w, _)| w)
        .zip(e.weights_nonrepeating)
        .map(|(w, out)| w.plus(out));
    let weights_exceed = weights.filter(|w| w.low > available.high);
    if let Some(w) = weights_exceed {
        why.push_str(&format!(
            "; the weights alone, {}, are more than is available, so some layers stay on the host at any context",
            human(w.bytes)
        ));
    }
    let gpus = e.available.len();
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{} left in host memory by Ollama's estimate: it needs {needs} against {} available on {}{why}",
            if offloaded <= 0 {
                format!("all {total} layers")
            } else {
                format!("{} of {total} layers", total - offloaded)
            },
            human(available.bytes),
            if gpus == 1 { "the GPU".to_string() } else { format!("{gpus} GPUs") },
        ),
        if weights_exceed.is_some() {
            "a smaller context or a quantised KV cache free room for some layers (the suggestions say how many, when they help); every layer on the GPU needs a smaller quantisation of the model or more GPU memory"
        } else {
            "the context sets the KV cache and the graph: a smaller context or a quantised KV cache bring the layers back (see the suggestions); reserving more per GPU or forcing the layers would not"
        },
        cx.estimate_lines(),
        None,
        None,
    ));
}
