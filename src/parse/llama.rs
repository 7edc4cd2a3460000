//! The event kinds of llama.cpp's own lines, under every prefix it has used (`grammars/40-llama-cpp.toml`):
//! buffers, devices, the KV cache, model and context parameters, the projector, and the command line a user
//! pasted above them.

use super::command::shell_command;
use super::event::{ContextParam, EventKind, GpuInfo, KvSizeLine, ParamValue};
use super::fields::BuildError;
use super::kind::{EventSpec, Words};
use super::values::{parse_int, parse_int_list};
use super::words::buffer_kind;
use crate::model::{Device, Quantity};

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "command_line",
        required: &["cmd"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::CommandLine(Box::new(shell_command(
                f.need("cmd")?,
            ))))
        },
    },
    EventSpec {
        kind: "cuda_device",
        required: &["index", "name"],
        optional: &[
            "uuid", "library", "compute", "gfx", "vram", "vram_mb", "uma",
        ],
        settable: &[("library", Words::List(&["Vulkan", "SYCL"]))],
        build: |f| {
            // SYCL's table prints millions of bytes (`16225M`), the others whole MiB.
            let total = f.opt_mib("vram").or_else(|| {
                crate::model::Quantity::from_truncated(f.opt_int("vram_mb")?, 1_000_000)
            });
            // Builds that print the device's VRAM name their library by the device's kind: a compute
            // capability is CUDA, a gfx architecture ROCm (older builds' lines are left as they were read).
            let library = f.opt_text("library").or_else(|| {
                total?;
                if f.get("compute").is_some() {
                    Some("CUDA".to_string())
                } else {
                    f.get("gfx").map(|_| "ROCm".to_string())
                }
            });
            Ok(EventKind::CudaDevice(GpuInfo {
                id: f.opt_text("uuid"),
                index: f.opt_int("index"),
                library,
                name: f.opt_text("name").map(|n| n.trim().to_string()),
                compute: f.opt_text("compute").or(f.opt_text("gfx")),
                driver: None,
                variant: None,
                total,
                available: None,
                free: None,
                bus_id: None,
                // Vulkan's `uma: 1`: the device's memory is the host's (an integrated GPU).
                integrated: f.get("uma") == Some("1"),
            }))
        },
    },
    EventSpec {
        kind: "offloaded",
        required: &["done", "total"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::Offloaded {
                done: parse_int(f.need("done")?).ok_or("bad layer count")?,
                total: parse_int(f.need("total")?).ok_or("bad layer count")?,
            })
        },
    },
    EventSpec {
        kind: "buffer",
        required: &["buffer", "size"],
        optional: &["component", "kind", "projector"],
        settable: &[
            ("component", Words::Any),
            ("kind", Words::Check(|w| buffer_kind(w).is_some())),
            ("projector", Words::BOOL),
        ],
        build: |f| {
            let word = f.get("kind").unwrap_or("");
            let kind = buffer_kind(word).ok_or_else(|| format!("unknown buffer kind '{word}'"))?;
            Ok(EventKind::Buffer {
                component: f.get("component").unwrap_or("").to_string(),
                buffer: f.need("buffer")?.to_string(),
                kind,
                size: f.size("size")?,
                projector: f.get("projector") == Some("true"),
            })
        },
    },
    EventSpec {
        kind: "kv_size",
        required: &["size"],
        optional: &[
            "cells",
            "layers",
            "type_k",
            "type_v",
            "recurrent",
            "streams",
        ],
        settable: &[("recurrent", Words::BOOL)],
        build: |f| {
            Ok(EventKind::KvSize(Box::new(KvSizeLine {
                size: f.size("size")?,
                cells: f.opt_int("cells"),
                layers: f.opt_int("layers"),
                type_k: f.opt_text("type_k"),
                type_v: f.opt_text("type_v"),
                recurrent: f.get("recurrent") == Some("true"),
                streams: f.opt_int("streams"),
                swa: None,
            })))
        },
    },
    EventSpec {
        kind: "kv_cache_created",
        required: &["cache"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::KvCacheCreated {
                swa: f.get("cache") == Some("SWA"),
            })
        },
    },
    EventSpec {
        kind: "kv_params",
        required: &[],
        optional: &["cells", "type_k"],
        settable: &[],
        build: |f| {
            Ok(EventKind::KvParams {
                cells: f.opt_int("cells"),
                type_k: f
                    .opt_text("type_k")
                    .map(|t| t.trim_matches('\'').to_string()),
            })
        },
    },
    EventSpec {
        kind: "model_param",
        required: &["key", "value"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::ModelParam {
                key: f.need("key")?.to_string(),
                value: param_value(f.need("value")?.trim())?,
            })
        },
    },
    EventSpec {
        kind: "context_param",
        required: &["key", "value"],
        optional: &[],
        settable: &[("key", Words::List(&["n_copies", "flash_attn"]))],
        build: |f| {
            Ok(EventKind::ContextParam(context_param(
                f.need("key")?,
                f.need("value")?.trim(),
            )?))
        },
    },
    EventSpec {
        kind: "model_loader",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::ModelLoader),
    },
    EventSpec {
        kind: "recovered",
        required: &["message"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::Recovered {
                message: f.need("message")?.trim().to_string(),
            })
        },
    },
    EventSpec {
        kind: "vocab_only",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::VocabOnly),
    },
    EventSpec {
        kind: "projector_backend",
        required: &["device"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::ProjectorBackend {
                device: Device::named(f.need("device")?.trim()),
            })
        },
    },
    EventSpec {
        kind: "metal_working_set",
        required: &[],
        optional: &["budget_mb", "budget", "allocated", "exceeded"],
        settable: &[("exceeded", Words::BOOL)],
        build: |f| {
            // `recommendedMaxWorkingSetSize = X MB` is in 10^6 bytes (ggml-metal divides by 1e6), unlike the
            // `( current / budget )` pair of `allocated buffer`, which is in MiB.
            let budget_mb = match f.get("budget_mb") {
                Some(text) => Some(
                    text.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e12)
                        .ok_or_else(|| format!("bad MB figure '{text}'"))?,
                ),
                None => None,
            };
            let budget = budget_mb
                .map(|mb| {
                    let bytes = (mb * 1e6) as i64;
                    // Printed with two decimals of MB: ±5 kB.
                    Quantity {
                        bytes,
                        low: bytes - 5_000,
                        high: bytes + 5_000,
                    }
                })
                .or_else(|| f.get("budget").and_then(mib_2dp));
            Ok(EventKind::MetalWorkingSet {
                budget,
                allocated: f.get("allocated").and_then(mib_2dp),
                exceeded: f.get("exceeded") == Some("true"),
            })
        },
    },
    EventSpec {
        kind: "projector_size",
        required: &["what", "size"],
        optional: &[],
        settable: &[("what", Words::List(&["graph", "weights"]))],
        build: |f| {
            Ok(EventKind::ProjectorSize {
                graph: f.need("what")? == "graph",
                size: f.size("size")?,
            })
        },
    },
];

/// A figure in MiB printed with two decimals (`21845.34`).
fn mib_2dp(text: &str) -> Option<Quantity> {
    crate::parse::values::parse_size(&format!("{} MiB", text.trim()))
}

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

/// A context parameter by its llama.cpp key; a count that is not a number is an error (the line is reported).
fn context_param(key: &str, value: &str) -> Result<ContextParam, BuildError> {
    let count = || parse_int(value).ok_or_else(|| format!("{key} is not a number: '{value}'"));
    Ok(match key {
        "n_ctx" => ContextParam::Ctx(count()?),
        "n_batch" => ContextParam::Batch(count()?),
        "n_ubatch" => ContextParam::Ubatch(count()?),
        "n_copies" => ContextParam::PipelineCopies(count()?),
        "n_seq_max" => ContextParam::SeqMax(count()?),
        // Only `n_parallel is set to auto, using n_parallel = N` prints this key.
        "n_parallel" => ContextParam::ParallelAuto(count()?),
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

#[cfg(test)]
mod tests {
    use super::*;

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
