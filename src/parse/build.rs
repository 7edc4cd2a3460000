//! Building typed events from the fields a grammar rule extracted. This is the only place that knows what
//! each event kind's fields mean; the grammar files only say where the fields are.

use super::event::*;
use super::matcher::Fields;
use super::values::{
    parse_go_struct, parse_int, parse_int_list, parse_mib_integer, parse_size, parse_size_list,
};
use crate::model::{normalize_bus_id, BufferKind};

/// The event kinds a grammar rule may name, with the fields each requires.
pub const EVENT_KINDS: &[(&str, &[&str])] = &[
    ("server_start", &[]),
    ("inference_compute", &["id"]),
    ("gpu_memory", &["id"]),
    ("estimate", &[]),
    ("runner_start", &["cmd"]),
    ("loading_model", &[]),
    ("load_request", &["request"]),
    ("engine_start", &["engine"]),
    ("cuda_device", &["index", "name"]),
    ("offloaded", &["done", "total"]),
    ("buffer", &["buffer", "size"]),
    ("engine_weights", &["buffer", "size"]),
    ("engine_graph", &["buffer", "size"]),
    ("memory_summary", &["part", "device", "size"]),
    ("memory_total", &["size"]),
    (
        "breakdown_row",
        &["device", "self", "model", "context", "compute"],
    ),
    ("fit_projection", &["used", "free"]),
    ("fit_device", &["device", "used"]),
    ("kv_params", &[]),
    ("context_param", &["key", "value"]),
    ("projector_size", &["what", "size"]),
    ("vocab_only", &[]),
    ("runner_started", &[]),
    ("load_failed", &[]),
    ("model_header", &[]),
    ("known", &[]),
];

/// Why a matched line could not become an event.
pub type BuildError = String;

fn need<'f>(fields: &'f Fields, name: &str) -> Result<&'f str, BuildError> {
    fields
        .get(name)
        .ok_or_else(|| format!("field '{name}' missing"))
}

fn size_of(fields: &Fields, name: &str) -> Result<crate::model::Quantity, BuildError> {
    let text = need(fields, name)?;
    parse_size(text).ok_or_else(|| format!("field '{name}' is not a size: '{text}'"))
}

fn opt_size(fields: &Fields, name: &str) -> Option<crate::model::Quantity> {
    fields.get(name).and_then(parse_size)
}

fn opt_int(fields: &Fields, name: &str) -> Option<i64> {
    fields.get(name).and_then(parse_int)
}

fn opt_text(fields: &Fields, name: &str) -> Option<String> {
    fields
        .get(name)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn phase(fields: &Fields) -> SummaryPhase {
    match fields.get("phase") {
        Some("estimate") => SummaryPhase::Estimate,
        Some("actual") => SummaryPhase::Actual,
        _ => SummaryPhase::ByPosition,
    }
}

/// Build the event a rule names from its fields.
pub fn build(event: &str, fields: &Fields) -> Result<EventKind, BuildError> {
    Ok(match event {
        "server_start" => EventKind::ServerStart {
            version: opt_text(fields, "version"),
        },
        "inference_compute" | "gpu_memory" => {
            let gpu = GpuInfo {
                id: opt_text(fields, "id"),
                index: None,
                library: opt_text(fields, "library"),
                name: opt_text(fields, "name"),
                compute: opt_text(fields, "compute"),
                driver: opt_text(fields, "driver"),
                variant: opt_text(fields, "variant"),
                total: opt_size(fields, "total"),
                available: opt_size(fields, "available"),
                bus_id: opt_text(fields, "pci_id").and_then(|t| normalize_bus_id(&t)),
            };
            if event == "gpu_memory" {
                EventKind::GpuMemory(gpu)
            } else {
                EventKind::InferenceCompute(gpu)
            }
        }
        "estimate" => EventKind::Estimate(Box::new(estimate(fields)?)),
        "runner_start" => {
            EventKind::RunnerStart(Box::new(runner_command(need(fields, "cmd")?, fields)))
        }
        "loading_model" => EventKind::LoadingModel {
            layers: opt_int(fields, "model layers"),
            requested: opt_int(fields, "requested"),
        },
        "load_request" => {
            let parsed = parse_go_struct(need(fields, "request")?);
            let operation = parsed
                .iter()
                .find(|(k, _)| k == "Operation")
                .map(|(_, v)| v.clone());
            EventKind::LoadRequest {
                operation: operation.unwrap_or_default(),
                fields: parsed,
            }
        }
        "engine_start" => EventKind::EngineStart {
            ollama: need(fields, "engine")? == "ollama",
        },
        "cuda_device" => EventKind::CudaDevice(GpuInfo {
            id: opt_text(fields, "uuid"),
            index: opt_int(fields, "index"),
            library: opt_text(fields, "library"),
            name: opt_text(fields, "name"),
            compute: opt_text(fields, "compute").or(opt_text(fields, "gfx")),
            driver: None,
            variant: None,
            total: None,
            available: None,
            bus_id: None,
        }),
        "offloaded" => EventKind::Offloaded {
            done: parse_int(need(fields, "done")?).ok_or("bad layer count")?,
            total: parse_int(need(fields, "total")?).ok_or("bad layer count")?,
        },
        "buffer" => {
            let kind = match fields.get("kind").unwrap_or("") {
                "" | "model" => BufferKind::Model,
                "KV" => BufferKind::Kv,
                "RS" => BufferKind::Rs,
                "output" => BufferKind::Output,
                "compute" => BufferKind::Compute,
                "LoRA" => BufferKind::Lora,
                other => return Err(format!("unknown buffer kind '{other}'")),
            };
            EventKind::Buffer {
                component: fields.get("component").unwrap_or("").to_string(),
                buffer: need(fields, "buffer")?.to_string(),
                kind,
                size: size_of(fields, "size")?,
                projector: fields.get("projector") == Some("true"),
            }
        }
        "engine_weights" | "engine_graph" => EventKind::EngineBuffer {
            buffer: need(fields, "buffer")?.to_string(),
            kind: if event == "engine_graph" {
                BufferKind::Compute
            } else {
                BufferKind::Model
            },
            size: size_of(fields, "size")?,
        },
        "memory_summary" => EventKind::MemorySummary {
            part: match need(fields, "part")? {
                "model weights" => SummaryPart::Weights,
                "kv cache" => SummaryPart::Kv,
                "compute graph" => SummaryPart::Graph,
                other => return Err(format!("unknown summary part '{other}'")),
            },
            device: need(fields, "device")?.to_string(),
            size: size_of(fields, "size")?,
            phase: phase(fields),
        },
        "memory_total" => EventKind::MemoryTotal {
            size: size_of(fields, "size")?,
            phase: phase(fields),
        },
        "breakdown_row" => EventKind::Breakdown(Box::new(breakdown(fields)?)),
        "fit_projection" => EventKind::FitProjection {
            used: parse_mib_integer(need(fields, "used")?).ok_or("bad MiB figure")?,
            free: parse_mib_integer(need(fields, "free")?).ok_or("bad MiB figure")?,
        },
        "fit_device" => EventKind::FitDevice {
            device: need(fields, "device")?.to_string(),
            layers: opt_int(fields, "layers"),
            used: parse_mib_integer(need(fields, "used")?).ok_or("bad MiB figure")?,
            free: fields.get("free").and_then(parse_mib_integer),
        },
        "kv_params" => EventKind::KvParams {
            cells: opt_int(fields, "cells"),
            type_k: opt_text(fields, "type_k").map(|t| t.trim_matches('\'').to_string()),
        },
        "context_param" => EventKind::ContextParam {
            key: need(fields, "key")?.to_string(),
            value: need(fields, "value")?.trim().to_string(),
        },
        "projector_size" => EventKind::ProjectorSize {
            graph: need(fields, "what")? == "graph",
            size: size_of(fields, "size")?,
        },
        "vocab_only" => EventKind::VocabOnly,
        "runner_started" => EventKind::RunnerStarted,
        "load_failed" => {
            let message = opt_text(fields, "message")
                .or_else(|| opt_text(fields, "rest"))
                .unwrap_or_default();
            let lower = message.to_ascii_lowercase();
            EventKind::LoadFailed {
                out_of_memory: lower.contains("out of memory")
                    || lower.contains("cudamalloc failed"),
                message,
            }
        }
        "model_header" => EventKind::ModelHeader {
            architecture: opt_text(fields, "architecture"),
        },
        "known" => EventKind::Known,
        other => return Err(format!("unknown event kind '{other}'")),
    })
}

fn estimate(fields: &Fields) -> Result<EstimateLine, BuildError> {
    let list = |name: &str| {
        fields
            .get(name)
            .and_then(parse_size_list)
            .unwrap_or_default()
    };
    let e = EstimateLine {
        form: fields.get("form").unwrap_or("offload").to_string(),
        library: opt_text(fields, "library"),
        requested: opt_int(fields, "layers.requested"),
        model_layers: opt_int(fields, "layers.model"),
        offload: opt_int(fields, "layers.offload"),
        split: fields
            .get("layers.split")
            .and_then(parse_int_list)
            .unwrap_or_default(),
        available: list("memory.available"),
        gpu_overhead: opt_size(fields, "memory.gpu_overhead"),
        required_full: opt_size(fields, "memory.required.full"),
        required_partial: opt_size(fields, "memory.required.partial"),
        kv: opt_size(fields, "memory.required.kv"),
        allocations: list("memory.required.allocations"),
        weights_total: opt_size(fields, "memory.weights.total"),
        weights_repeating: opt_size(fields, "memory.weights.repeating"),
        weights_nonrepeating: opt_size(fields, "memory.weights.nonrepeating"),
        graph_full: opt_size(fields, "memory.graph.full"),
        graph_partial: opt_size(fields, "memory.graph.partial"),
        projector_weights: opt_size(fields, "projector.weights"),
        projector_graph: opt_size(fields, "projector.graph"),
        truncated: false,
    };
    if e.required_full.is_none()
        && e.kv.is_none()
        && e.weights_total.is_none()
        && e.graph_full.is_none()
        && e.projector_weights.is_none()
        && e.available.is_empty()
    {
        return Err("estimate line carries no memory figure".to_string());
    }
    // A complete line ends with memory.graph.partial (E2–E6) or projector.graph (E7+ vision models).
    let truncated = e.graph_partial.is_none()
        || (fields.get("projector.weights").is_some() && e.projector_graph.is_none());
    Ok(EstimateLine { truncated, ..e })
}

fn breakdown(fields: &Fields) -> Result<BreakdownLine, BuildError> {
    let mib = |name: &str| -> Result<crate::model::Quantity, BuildError> {
        let t = need(fields, name)?;
        parse_mib_integer(t).ok_or_else(|| format!("field '{name}' is not a MiB figure: '{t}'"))
    };
    let (unaccounted, suspect) = match fields.get("unaccounted").map(str::trim) {
        None | Some("") => (None, false),
        Some(text) => match text.parse::<i64>() {
            // llama.cpp prints a size_t difference: values near 2^64/2^20 are an underflow, not memory.
            Ok(v) if v.unsigned_abs() < (1u64 << 40) => (v.checked_mul(crate::model::MIB), v < 0),
            _ => (None, true),
        },
    };
    Ok(BreakdownLine {
        // The breakdown's `Host` row is host memory: give it the host row's name everywhere downstream.
        device: match need(fields, "device")?.trim() {
            "Host" => crate::model::HOST_DEVICE.to_string(),
            other => other.to_string(),
        },
        name: opt_text(fields, "name"),
        total: fields.get("total").and_then(parse_mib_integer),
        free: fields.get("free").and_then(parse_mib_integer),
        self_: mib("self")?,
        model: mib("model")?,
        context: mib("context")?,
        compute: mib("compute")?,
        unaccounted,
        unaccounted_suspect: suspect,
    })
}

/// The memory-relevant flags of a runner command line.
fn runner_command(cmd: &str, fields: &Fields) -> RunnerCommand {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let mut c = RunnerCommand {
        llama_server: fields.get("runner") == Some("llama-server"),
        ..RunnerCommand::default()
    };
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let next = words.get(i + 1).copied();
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (word, None),
        };
        let value = inline.or(next);
        let takes_value = inline.is_none();
        let mut consumed = false;
        match flag {
            "--model" | "-m" => (c.model, consumed) = (value.map(str::to_string), takes_value),
            "--ctx-size" | "-c" => {
                (c.ctx_size, consumed) = (value.and_then(parse_int), takes_value)
            }
            "--batch-size" | "-b" => {
                (c.batch_size, consumed) = (value.and_then(parse_int), takes_value)
            }
            "--parallel" | "-np" => {
                (c.parallel, consumed) = (value.and_then(parse_int), takes_value)
            }
            "--n-gpu-layers" | "-ngl" | "--gpu-layers" => {
                (c.gpu_layers, consumed) = (value.and_then(parse_int), takes_value)
            }
            "--tensor-split" | "-ts" => {
                c.tensor_split = value.and_then(parse_int_list).unwrap_or_default();
                consumed = takes_value;
            }
            "--mmproj" => (c.mmproj, consumed) = (value.map(str::to_string), takes_value),
            "--kv-cache-type" | "--cache-type-k" | "-ctk" => {
                (c.kv_cache_type, consumed) = (value.map(str::to_string), takes_value)
            }
            "--flash-attn" | "-fa" => {
                // Old runners take no value; llama-server takes on/off/auto.
                match value {
                    Some("on") | Some("1") | Some("true") => {
                        (c.flash_attention, consumed) = (Some(true), takes_value)
                    }
                    Some("off") | Some("0") | Some("false") => {
                        (c.flash_attention, consumed) = (Some(false), takes_value)
                    }
                    Some("auto") => (c.flash_attention, consumed) = (None, takes_value),
                    _ => c.flash_attention = Some(true),
                }
            }
            "--ollama-engine" => c.ollama_engine = true,
            _ => {}
        }
        i += if consumed { 2 } else { 1 };
    }
    if words.first().is_some_and(|w| w.contains("llama-server")) {
        c.llama_server = true;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_command_flags() {
        // corpus 015.
        let c = runner_command("/teamspace/studios/this_studio/ollama/ollama runner --model /x/blobs/sha256-feef --ctx-size 64000 --batch-size 512 --n-gpu-layers 44 --threads 24 --flash-attn --parallel 1 --tensor-split 11,11,11,11 --port 1", &Fields::default());
        assert_eq!(c.ctx_size, Some(64000));
        assert_eq!(c.gpu_layers, Some(44));
        assert_eq!(c.flash_attention, Some(true));
        assert_eq!(c.parallel, Some(1));
        assert_eq!(c.tensor_split, vec![11, 11, 11, 11]);
        assert!(!c.ollama_engine);
    }
}
