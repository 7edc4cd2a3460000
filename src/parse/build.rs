//! Building typed events from the fields a grammar rule extracted. This is the only place that knows what
//! each event kind's fields mean; the grammar files only say where the fields are.

use super::command::runner_command;
use super::event::*;
use super::fit::fit_line;
use super::matcher::Fields;
use super::values::{
    parse_go_struct, parse_gpu_layers, parse_int, parse_int_list, parse_mib_truncated, parse_size,
    parse_size_list,
};
use crate::model::{normalize_bus_id, BufferKind, Device, OffloadShape};

/// Why a matched line could not become an event.
pub type BuildError = String;

pub(super) fn need<'f>(fields: &'f Fields, name: &str) -> Result<&'f str, BuildError> {
    fields
        .get(name)
        .ok_or_else(|| format!("field '{name}' missing"))
}

pub(super) fn size_of(fields: &Fields, name: &str) -> Result<crate::model::Quantity, BuildError> {
    let text = need(fields, name)?;
    parse_size(text).ok_or_else(|| format!("field '{name}' is not a size: '{text}'"))
}

pub(super) fn opt_size(fields: &Fields, name: &str) -> Option<crate::model::Quantity> {
    fields.get(name).and_then(parse_size)
}

pub(super) fn opt_int(fields: &Fields, name: &str) -> Option<i64> {
    fields.get(name).and_then(parse_int)
}

pub(super) fn opt_text(fields: &Fields, name: &str) -> Option<String> {
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
                free: opt_size(fields, "free"),
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
            model: opt_text(fields, "model"),
        },
        "load_request" => EventKind::LoadRequest(Box::new(load_request(need(fields, "request")?))),
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
            free: None,
            bus_id: None,
        }),
        "offloaded" => EventKind::Offloaded {
            done: parse_int(need(fields, "done")?).ok_or("bad layer count")?,
            total: parse_int(need(fields, "total")?).ok_or("bad layer count")?,
        },
        "buffer" => {
            let word = fields.get("kind").unwrap_or("");
            let kind = buffer_kind(word).ok_or_else(|| format!("unknown buffer kind '{word}'"))?;
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
            device: Device::named(need(fields, "device")?.trim()),
            size: size_of(fields, "size")?,
            phase: phase(fields),
        },
        "memory_total" => EventKind::MemoryTotal {
            size: size_of(fields, "size")?,
            phase: phase(fields),
        },
        "breakdown_header" => EventKind::BreakdownHeader,
        "breakdown_row" => EventKind::Breakdown(Box::new(breakdown(fields)?)),
        "fit_start" | "fit_projection" | "fit_initial" | "fit_decision" | "fit_context"
        | "fit_target" | "fit_probe" | "fit_set" | "fit_device" | "fit_done" => {
            EventKind::Fit(Box::new(fit_line(event, fields)?))
        }
        "runner_device" => EventKind::RunnerDevice(Box::new(RunnerDevice {
            device: Device::named(need(fields, "device")?.trim()),
            name: opt_text(fields, "name"),
            total: fields.get("total").and_then(parse_mib_truncated),
            free: parse_mib_truncated(need(fields, "free")?).ok_or("bad MiB figure")?,
        })),
        "side_estimate" => EventKind::SideEstimate {
            what: {
                let word = need(fields, "what")?;
                side_estimate(word).ok_or_else(|| format!("unknown side estimate '{word}'"))?
            },
            size: size_of(fields, "size")?,
        },
        "projector_backend" => EventKind::ProjectorBackend {
            device: Device::named(need(fields, "device")?.trim()),
        },
        "projector_offload_disabled" => EventKind::ProjectorOffloadDisabled {
            reason: opt_text(fields, "reason"),
        },
        "gpu_rejected" => EventKind::GpuRejected {
            name: need(fields, "name")?.to_string(),
            reason: rejection_reason(fields)?,
        },
        "kv_size" => EventKind::KvSize(Box::new(KvSizeLine {
            size: size_of(fields, "size")?,
            cells: opt_int(fields, "cells"),
            layers: opt_int(fields, "layers"),
            type_k: opt_text(fields, "type_k"),
            type_v: opt_text(fields, "type_v"),
            recurrent: fields.get("recurrent") == Some("true"),
        })),
        "model_param" => EventKind::ModelParam {
            key: need(fields, "key")?.to_string(),
            value: param_value(need(fields, "value")?.trim())?,
        },
        "model_loader" => EventKind::ModelLoader,
        "recovered" => EventKind::Recovered {
            message: need(fields, "message")?.trim().to_string(),
        },
        "kv_params" => EventKind::KvParams {
            cells: opt_int(fields, "cells"),
            type_k: opt_text(fields, "type_k").map(|t| t.trim_matches('\'').to_string()),
        },
        "context_param" => EventKind::ContextParam(context_param(
            need(fields, "key")?,
            need(fields, "value")?.trim(),
        )?),
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

/// A `load request` struct, by Ollama's Go field names.
fn load_request(text: &str) -> LoadRequest {
    let fields = parse_go_struct(text);
    let get = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    LoadRequest {
        commit: get("Operation") == Some("commit"),
        kv_size: get("KvSize").and_then(parse_int),
        batch_size: get("BatchSize").and_then(parse_int),
        parallel: get("Parallel").and_then(parse_int),
        gpu_layers: get("GPULayers")
            .and_then(parse_gpu_layers)
            .map(|(total, _)| total),
        flash_attention: get("FlashAttention").and_then(|v| match v {
            "true" | "Enabled" => Some(true),
            "false" | "Disabled" => Some(false),
            _ => None,
        }),
        kv_cache_type: get("KvCacheType")
            .filter(|v| !v.is_empty())
            .map(str::to_string),
    }
}

/// A context parameter by its llama.cpp key; a count that is not a number is an error (the line is reported).
/// A `print_info:` value: a per-layer array must be counts; a bare word that is not a count is text.
fn param_value(value: &str) -> Result<ParamValue, BuildError> {
    if value.starts_with('[') {
        let list = parse_int_list(value)
            .and_then(|l| l.into_iter().map(|n| u64::try_from(n).ok()).collect())
            .ok_or_else(|| format!("the per-layer array '{value}' is not a list of counts"))?;
        return Ok(ParamValue::PerLayer(list));
    }
    Ok(match parse_int(value).and_then(|n| u64::try_from(n).ok()) {
        Some(n) => ParamValue::Count(n),
        None => ParamValue::Text(value.to_string()),
    })
}

fn context_param(key: &str, value: &str) -> Result<ContextParam, BuildError> {
    let count = || parse_int(value).ok_or_else(|| format!("{key} is not a number: '{value}'"));
    Ok(match key {
        "n_ctx" => ContextParam::Ctx(count()?),
        "n_batch" => ContextParam::Batch(count()?),
        "n_ubatch" => ContextParam::Ubatch(count()?),
        "n_seq_max" => ContextParam::SeqMax(count()?),
        "n_ctx_seq" | "n_ctx_per_seq" => ContextParam::CtxPerSequence(count()?),
        "kv_unified" => ContextParam::KvUnified(match value {
            "1" | "true" => true,
            "0" | "false" => false,
            _ => return Err(format!("kv_unified is not a boolean: '{value}'")),
        }),
        "flash_attn" => ContextParam::FlashAttention(match value {
            "1" | "true" | "enabled" => Some(true),
            "0" | "false" | "disabled" => Some(false),
            _ => None,
        }),
        other => return Err(format!("unknown context parameter '{other}'")),
    })
}

/// The buffer kind a llama.cpp buffer line names (`KV`, `RS`, `compute` …; none for weights).
pub(super) fn buffer_kind(word: &str) -> Option<BufferKind> {
    Some(match word {
        "" | "model" => BufferKind::Model,
        "KV" => BufferKind::Kv,
        "RS" => BufferKind::Rs,
        "output" => BufferKind::Output,
        "compute" => BufferKind::Compute,
        "LoRA" => BufferKind::Lora,
        _ => return None,
    })
}

/// Which side estimate an `[mtmd]`/`[spec]` line gives.
pub(super) fn side_estimate(word: &str) -> Option<SideEstimate> {
    match word {
        "projector" => Some(SideEstimate::Projector),
        "draft" => Some(SideEstimate::Draft),
        _ => None,
    }
}

fn estimate(fields: &Fields) -> Result<EstimateLine, BuildError> {
    let list = |name: &str| {
        fields
            .get(name)
            .and_then(parse_size_list)
            .unwrap_or_default()
    };
    let e = EstimateLine {
        form: match fields.get("form") {
            None => OffloadShape::Unnamed,
            Some(word) => OffloadShape::named(word)
                .ok_or_else(|| format!("unknown estimate form '{word}'"))?,
        },
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
    let printed = need(fields, "device")?.trim();
    let mib = |name: &str| -> Result<crate::model::Quantity, BuildError> {
        let t = need(fields, name)?;
        parse_mib_truncated(t).ok_or_else(|| format!("field '{name}' is not a MiB figure: '{t}'"))
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
        device: Device::of_buffer(printed),
        // A host buffer type's row (`CPU_REPACK`) is named by its type; `Host` is the host itself.
        name: opt_text(fields, "name").or_else(|| {
            (printed != "Host" && Device::of_buffer(printed).is_host()).then(|| printed.to_string())
        }),
        total: fields.get("total").and_then(parse_mib_truncated),
        free: fields.get("free").and_then(parse_mib_truncated),
        self_: mib("self")?,
        model: mib("model")?,
        context: mib("context")?,
        compute: mib("compute")?,
        unaccounted,
        unaccounted_suspect: suspect,
    })
}

/// Why a GPU was rejected, with the figures the line gives (`driver 546, required 550 or newer`).
fn rejection_reason(fields: &Fields) -> Result<String, BuildError> {
    let mut reason = need(fields, "reason")?.trim().to_string();
    let details: Vec<String> = [
        ("driver", "driver"),
        ("required_driver", "required"),
        ("compute", "compute"),
        ("total", "total"),
        ("available", "available"),
    ]
    .iter()
    .filter_map(|(key, label)| opt_text(fields, key).map(|v| format!("{label} {v}")))
    .collect();
    if !details.is_empty() {
        reason.push_str(&format!(" ({})", details.join(", ")));
    }
    Ok(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sample-logs/009-…-kvf16-newengine.log:1` (ollama#15390).
    const COMMIT_009: &str = "{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}";

    #[test]
    fn a_commit_request_reads_into_its_settings() {
        assert_eq!(
            load_request(COMMIT_009),
            LoadRequest {
                commit: true,
                kv_size: Some(32768),
                batch_size: Some(1024),
                parallel: Some(1),
                gpu_layers: Some(20),
                flash_attention: Some(true),
                kv_cache_type: None,
            }
        );
        // `sample-logs/011-…-kvq4-newengine.log:1`: the same request with a quantised KV cache.
        let q4 = COMMIT_009.replace("KvCacheType: ", "KvCacheType:q4_0 ");
        assert_eq!(load_request(&q4).kv_cache_type.as_deref(), Some("q4_0"));
    }

    #[test]
    fn a_fit_request_cut_by_the_collector_keeps_what_came_before_the_cut() {
        // `sample-logs/032-journald-catalan-2x-quadro-newengine-fit.log:7`, cut inside GPULayers.
        let r = load_request("{Operation:fit LoraPath:[] Parallel:1 BatchSize:512 FlashAttention:true KvSize:4096 KvCacheType: NumThreads:8 GPULayers:37[ID:GPU-d5703024-26e4-303b-8104-7d33cce0eeb1 Layers:20(0..19) ID:");
        assert!(!r.commit);
        assert_eq!(
            (r.kv_size, r.batch_size, r.flash_attention),
            (Some(4096), Some(512), Some(true))
        );
    }

    #[test]
    fn model_parameters_are_counts_arrays_or_text() {
        // `sample-logs/founding-today-3090-4060-gemma4-31b.log:51,55`; the array form is llama.cpp's
        // `print_f` for values that differ per layer.
        assert_eq!(param_value("60"), Ok(ParamValue::Count(60)));
        assert_eq!(param_value("gemma4"), Ok(ParamValue::Text("gemma4".into())));
        assert_eq!(
            param_value("[8, 8, 0, 8]"),
            Ok(ParamValue::PerLayer(vec![8, 8, 0, 8]))
        );
        assert!(param_value("[8, -1]")
            .unwrap_err()
            .contains("not a list of counts"));
    }

    #[test]
    fn context_parameters_are_typed_and_a_bad_count_is_an_error() {
        // `sample-logs/001-kaggle-t4-llama31-8b.log:105,108`, `sample-logs/511-…-2loads.log:176,180`.
        assert_eq!(context_param("n_ctx", "8192"), Ok(ContextParam::Ctx(8192)));
        assert_eq!(
            context_param("flash_attn", "0"),
            Ok(ContextParam::FlashAttention(Some(false)))
        );
        assert_eq!(
            context_param("n_ctx_seq", "4096"),
            Ok(ContextParam::CtxPerSequence(4096))
        );
        assert_eq!(
            context_param("flash_attn", "auto"),
            Ok(ContextParam::FlashAttention(None))
        );
        assert!(context_param("n_batch", "lots")
            .unwrap_err()
            .contains("'lots'"));
    }
}
