//! What an estimate says about each component, with the terms it was summed from.
//!
//! Ollama's single-line estimate names totals, not per-component figures, and their meaning drifted across
//! versions (`docs/log-formats.md` §1.2 and §2). This module is the one place that turns
//! those totals into like-for-like figures, and says in words which terms it used.

use crate::model::{
    Device, DeviceEstimate, Engine, Estimate, EstimateForm, EstimatePart, Quantity,
    WeightsSemantics, MIB,
};

/// An estimated figure and the words that say how it was obtained.
#[derive(Debug, Clone)]
pub struct Term {
    pub value: Option<Quantity>,
    pub from: String,
}

impl Term {
    fn none(from: impl Into<String>) -> Term {
        Term {
            value: None,
            from: from.into(),
        }
    }
}

/// How a per-device estimate's column was summed, in the words of its source: Ollama's memory summary lines or
/// llama.cpp's `--fit` table.
fn per_device_words(e: &Estimate, summary: &str, table: &str) -> String {
    if let Some(engine) = serving_plan(e) {
        let part = if table.starts_with("model") {
            "weights"
        } else if table.starts_with("context") {
            "KV cache"
        } else if e.form == EstimateForm::VllmProfile {
            "CUDA-graph estimate + activation peak + non-torch"
        } else {
            "graphs (not in the static pool)"
        };
        return format!("Σ per rank of {engine}: {part}");
    }
    if e.from_llama_cpp() {
        format!("Σ the {} table's {table}", e.form)
    } else if summary.contains("on CPU") {
        format!("per-device {summary}")
    } else {
        format!("Σ per-device {summary}")
    }
}

/// The engine whose own plan per rank the estimate is (vLLM's profile, SGLang's pool), in words.
fn serving_plan(e: &Estimate) -> Option<&'static str> {
    match e.form {
        EstimateForm::VllmProfile => Some("vLLM's profile"),
        EstimateForm::SglangPool => Some("SGLang's pool"),
        EstimateForm::Offload(_)
        | EstimateForm::MemorySummary
        | EstimateForm::FitPlan
        | EstimateForm::FitProbe
        | EstimateForm::FitResult
        | EstimateForm::FitProjection
        | EstimateForm::BreakdownProjection => None,
    }
}

/// Layer bookkeeping of a single-line estimate.
struct Offload {
    /// Repeating blocks in the model (`layers.model` − 1 for the output layer).
    blocks: i64,
    /// Layers placed on GPUs, counting the output layer.
    offload: i64,
    /// Every layer (and the output) went to the GPUs.
    full: bool,
    /// GPUs that received at least one layer.
    gpus_used: i64,
}

fn offload(e: &Estimate) -> Option<Offload> {
    let model = e.layers.model?;
    let offload = e.layers.offload?;
    let gpus_used = if offload == 0 {
        0
    } else if e.layers.split.is_empty() {
        1
    } else {
        e.layers.split.iter().filter(|&&n| n > 0).count() as i64
    };
    Some(Offload {
        blocks: (model - 1).max(1),
        offload,
        full: offload >= model,
        gpus_used,
    })
}

pub(crate) fn is_single_line(e: &Estimate) -> bool {
    e.form.is_offload_line()
}

/// Block weights without KV, whatever the era's `memory.weights.*` meant.
pub(crate) fn block_weights(e: &Estimate) -> Option<(Quantity, &'static str)> {
    if e.weights_semantics == WeightsSemantics::BlocksWithKv {
        // Before v0.6.1, weights.total summed each block's weights *and* its KV share.
        Some((
            e.weights_total?.minus(e.kv?),
            "(memory.weights.total − memory.required.kv)",
        ))
    } else {
        Some((e.weights_repeating?, "memory.weights.repeating"))
    }
}

/// Weights the estimate places on GPUs.
pub fn weights_gpu(e: &Estimate, engine: Engine) -> Term {
    if !is_single_line(e) {
        let sum = Quantity::sum(
            e.per_device
                .iter()
                .filter(|d| d.device.is_gpu())
                .filter_map(|d| d.weights),
        );
        return Term {
            value: sum,
            from: per_device_words(e, "\"model weights\" on GPUs", "model column on GPUs"),
        };
    }
    let (Some(o), Some((blocks, blocks_from)), Some(nonrep)) =
        (offload(e), block_weights(e), e.weights_nonrepeating)
    else {
        return Term::none("the estimate line does not carry the weight terms");
    };
    if o.offload == 0 {
        return Term {
            value: Some(Quantity::exact(0)),
            from: "no layer offloaded (layers.offload=0)".to_string(),
        };
    }
    if !o.full {
        let on_gpu = o.offload.min(o.blocks);
        return Term {
            value: Some(blocks.scale(on_gpu, o.blocks)),
            from: format!(
                "{blocks_from} × {on_gpu}/{} blocks offloaded (pro-rata: blocks differ in size)",
                o.blocks
            ),
        };
    }
    let mut value = blocks.plus(nonrep);
    let mut from = format!("{blocks_from} + memory.weights.nonrepeating");
    if engine == Engine::Ollama {
        if let Some(p) = e.projector_weights {
            value = value.plus(p);
            from.push_str(" + projector.weights (the Ollama engine loads vision tensors into the weight buffers)");
        }
    }
    Term {
        value: Some(value),
        from,
    }
}

/// Weights the estimate leaves in host memory.
pub fn weights_host(e: &Estimate) -> Term {
    if !is_single_line(e) {
        let sum = e
            .per_device
            .iter()
            .find(|d| d.device.is_host())
            .and_then(|d| d.weights);
        return Term {
            value: sum,
            from: per_device_words(e, "\"model weights\" on CPU", "model column on the host"),
        };
    }
    let (Some(o), Some((blocks, blocks_from))) = (offload(e), block_weights(e)) else {
        return Term::none("the estimate line does not carry the weight terms");
    };
    if o.full {
        return Term::none(
            "not estimated: with every layer offloaded the estimate charges no host memory",
        );
    }
    let off = o.blocks - o.offload.min(o.blocks);
    let mut value = blocks.scale(off, o.blocks);
    let mut from = format!(
        "{blocks_from} × {off}/{} blocks left on the CPU (pro-rata)",
        o.blocks
    );
    if let Some(nonrep) = e.weights_nonrepeating {
        value = value.plus(nonrep);
        from.push_str(" + memory.weights.nonrepeating (output layer not offloaded)");
    }
    Term {
        value: Some(value),
        from,
    }
}

/// The KV cache over all layers, GPU and CPU.
pub fn kv(e: &Estimate) -> Term {
    if is_single_line(e) {
        return Term {
            value: e.kv,
            from: "memory.required.kv (all layers)".to_string(),
        };
    }
    let sum = Quantity::sum(e.per_device.iter().filter_map(|d| d.kv));
    let mut from = per_device_words(e, "\"kv cache\"", "context column");
    if let Some((Some(scaled_from), Some(to))) =
        e.fit.as_ref().map(|f| (f.context_scaled_from, f.context))
    {
        from.push_str(&format!(
            ", scaled from the {scaled_from} tokens it was measured at to the {to} the fit reduced the context to"
        ));
    }
    Term { value: sum, from }
}

/// The compute graph charged to GPUs.
pub fn graph(e: &Estimate, engine: Engine) -> Term {
    if !is_single_line(e) {
        let sum = Quantity::sum(
            e.per_device
                .iter()
                .filter(|d| d.device.is_gpu())
                .filter_map(|d| d.graph),
        );
        return Term {
            value: sum,
            from: per_device_words(e, "\"compute graph\" on GPUs", "compute column on GPUs"),
        };
    }
    let Some(o) = offload(e) else {
        return Term::none("the estimate line does not carry layer counts");
    };
    let (per_gpu, name) = if o.full {
        (e.graph_full, "memory.graph.full")
    } else {
        (e.graph_partial, "memory.graph.partial")
    };
    let Some(per_gpu) = per_gpu else {
        return Term::none(format!("{name} missing from the estimate line"));
    };
    let gpus = if o.gpus_used == 1 { "GPU" } else { "GPUs" };
    let mut value = per_gpu.times(o.gpus_used);
    let mut from = format!("{name} × {} {gpus} holding layers", o.gpus_used);
    if engine == Engine::Ollama && o.full {
        if let Some(p) = e.projector_graph {
            value = value.plus(p);
            from.push_str(" + projector.graph (charged with the output layer)");
        }
    }
    Term {
        value: Some(value),
        from,
    }
}

/// The vision projector (weights + graph), when the estimate has one.
pub fn projector(e: &Estimate) -> Option<Term> {
    if let Some(total) = e.projector_total {
        return Some(Term {
            value: Some(total),
            from: "llama-server's [mtmd] worst-case estimate (weights and compute)".to_string(),
        });
    }
    match (e.projector_weights, e.projector_graph) {
        (None, None) => None,
        (w, g) => Some(Term {
            value: Quantity::sum([w, g].into_iter().flatten()),
            from: "projector.weights + projector.graph".to_string(),
        }),
    }
}

/// The speculative draft's context, as llama-server estimated it apart (`[spec] estimated memory usage of MTP
/// context is X MiB`).
pub fn draft(e: &Estimate) -> Option<Term> {
    e.draft_total.map(|total| Term {
        value: Some(total),
        from: "llama-server's [spec] estimate of the draft's context (its KV and compute)"
            .to_string(),
    })
}

/// Host memory the estimate charges: what overflowed to the CPU in a partial offload.
pub fn host(e: &Estimate) -> Term {
    if !is_single_line(e) {
        let total = e
            .per_device
            .iter()
            .find(|d| d.device.is_host())
            .and_then(|d| d.total);
        return Term {
            value: total,
            from: "per-device figures on CPU".to_string(),
        };
    }
    match (offload(e), e.required_full, e.required_partial) {
        (Some(o), Some(full), Some(partial)) if !o.full => Term {
            value: Some(full.minus(partial)),
            from: "memory.required.full − memory.required.partial (what overflowed to the CPU)"
                .to_string(),
        },
        _ => Term::none(
            "not estimated: the estimate charges host memory only for layers it cannot offload",
        ),
    }
}

/// How a device's estimated total was obtained, in words.
pub fn device_estimate_from(e: &Estimate, d: &DeviceEstimate) -> String {
    if is_single_line(e) {
        let i = e
            .per_device
            .iter()
            .position(|x| x.device == d.device)
            .unwrap_or(0);
        return format!(
            "memory.required.allocations[{i}] (the estimator's GPU #{})",
            i + 1
        );
    }
    let mut from = match e.form {
        EstimateForm::FitPlan | EstimateForm::FitProbe | EstimateForm::BreakdownProjection => {
            let which = match e.form {
                EstimateForm::FitPlan => "the --fit plan",
                EstimateForm::FitProbe => {
                    "the last --fit probe accepted (the log stops before the result)"
                }
                _ => "the breakdown table printed before the fit decided",
            };
            let line = e
                .fit
                .as_ref()
                .and_then(|f| f.plan_line)
                .map(|l| format!(", table at line {l}"))
                .unwrap_or_default();
            format!("{which}{line}: self = model + context + compute")
        }
        EstimateForm::FitResult => "the --fit result line (MiB used)".to_string(),
        EstimateForm::VllmProfile => format!(
            "vLLM's budget for {} (total × --gpu-memory-utilization)",
            d.device
        ),
        EstimateForm::SglangPool => format!(
            "SGLang's static pool for {} (available before the weights × --mem-fraction-static)",
            d.device
        ),
        other => format!("{other} for {}", d.device),
    };
    if e.projector_device.as_ref() == Some(&d.device) {
        if let Some(p) = e.projector_total {
            from.push_str(&format!(
                " + the projector's [mtmd] estimate ({})",
                crate::model::human(p.bytes)
            ));
        }
    }
    from
}

/// Ollama's per-GPU `MinimumMemory` (gpu/gpu.go): CUDA and ROCm 457 MiB, Metal 512 MiB.
pub fn minimum_memory(library: Option<&str>) -> i64 {
    match library.map(str::to_ascii_lowercase).as_deref() {
        Some("metal") => 512 * MIB,
        _ => 457 * MIB,
    }
}

/// What an estimate charged to one device (`total` bytes), by part: itemised where the estimate is per device;
/// for Ollama's single line, the graph and the minimum it charges a GPU holding layers, the rest layers.
pub fn device_estimate_parts(
    e: &Estimate,
    device: &Device,
    total: i64,
) -> Vec<(EstimatePart, i64)> {
    let itemised = e.per_device.iter().find(|d| {
        d.device == *device && (d.weights.is_some() || d.kv.is_some() || d.graph.is_some())
    });
    if let Some(d) = itemised {
        let mut parts: Vec<(EstimatePart, i64)> = [
            (EstimatePart::Weights, d.weights),
            (EstimatePart::Kv, d.kv),
            (EstimatePart::Graph, d.graph),
        ]
        .into_iter()
        .filter_map(|(p, q)| q.map(|q| (p, q.bytes)))
        .collect();
        let known: i64 = parts.iter().map(|(_, b)| b).sum();
        if total > known {
            parts.push((EstimatePart::Layers, total - known));
        }
        return parts;
    }
    let Some(position) = device.position() else {
        return Vec::new();
    };
    let holds_layers = e.layers.split.get(position).is_none_or(|&n| n > 0);
    let graph = if holds_layers {
        e.graph_full.map(|q| q.bytes).unwrap_or(0).min(total)
    } else {
        0
    };
    let floor = minimum_memory(e.library.as_deref()).min(total - graph);
    vec![
        (EstimatePart::Graph, graph),
        (EstimatePart::Floor, floor),
        (EstimatePart::Layers, (total - graph - floor).max(0)),
    ]
}
