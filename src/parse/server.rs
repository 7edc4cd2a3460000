//! The event kinds of Ollama's server lines that frame a load (`grammars/10-ollama-server.toml`): the server
//! start, GPU discovery, the runner it starts and its `load request`s, failures. Each kind's spec sits with
//! its builder.

use super::command::runner_command;
use super::event::{EventKind, FailureLine, GpuInfo, LoadRequest, RequestOperation};
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
use super::values::{parse_go_struct, parse_gpu_layers, parse_int};
use crate::model::{normalize_bus_id, Backend, Device, FailureCause, Quantity, RejectionCause};

/// The fields a discovery line (`inference compute`, `gpu memory`) may carry besides its `id`.
const GPU_FIELDS: &[&str] = &[
    "library",
    "name",
    "compute",
    "driver",
    "variant",
    "total",
    "available",
    "free",
    "pci_id",
    "description",
    "type",
];

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "server_start",
        required: &[],
        optional: &["version"],
        settable: &[],
        build: |f| {
            Ok(EventKind::ServerStart {
                version: f.opt_text("version"),
            })
        },
    },
    EventSpec {
        kind: "inference_compute",
        required: &["id"],
        optional: GPU_FIELDS,
        settable: &[],
        build: |f| Ok(EventKind::InferenceCompute(discovered_gpu(f))),
    },
    EventSpec {
        kind: "gpu_memory",
        required: &["id"],
        optional: GPU_FIELDS,
        settable: &[],
        build: |f| Ok(EventKind::GpuMemory(discovered_gpu(f))),
    },
    EventSpec {
        kind: "runner_start",
        required: &["cmd"],
        optional: &["runner", "closed"],
        settable: &[("runner", Words::List(&["llama-server"]))],
        build: |f| {
            Ok(EventKind::RunnerStart(Box::new(runner_command(
                f.need("cmd")?,
                f,
            ))))
        },
    },
    EventSpec {
        kind: "loading_model",
        required: &[],
        optional: &["model layers", "requested", "model"],
        settable: &[],
        build: |f| {
            Ok(EventKind::LoadingModel {
                layers: f.opt_int("model layers"),
                requested: f.opt_int("requested"),
                model: f.opt_text("model"),
            })
        },
    },
    EventSpec {
        kind: "load_request",
        required: &["request"],
        optional: &[],
        settable: &[],
        build: |f| {
            Ok(EventKind::LoadRequest(Box::new(load_request(
                f.need("request")?,
            ))))
        },
    },
    EventSpec {
        kind: "engine_start",
        required: &["engine"],
        optional: &[],
        settable: &[("engine", Words::List(&["llama", "ollama"]))],
        build: |f| {
            Ok(EventKind::EngineStart {
                ollama: f.need("engine")? == "ollama",
            })
        },
    },
    EventSpec {
        kind: "gpu_rejected",
        required: &["name", "reason"],
        optional: &["driver", "required_driver", "compute", "total", "available"],
        settable: &[("reason", Words::Any)],
        build: |f| {
            Ok(EventKind::GpuRejected {
                name: f.need("name")?.to_string(),
                reason: rejection_reason(f)?,
                // The line names the driver the build requires.
                cause: if f.get("required_driver").is_some() {
                    RejectionCause::DriverTooOld
                } else {
                    RejectionCause::Other
                },
            })
        },
    },
    EventSpec {
        kind: "projector_offload_disabled",
        required: &[],
        optional: &["reason"],
        settable: &[],
        build: |f| {
            Ok(EventKind::ProjectorOffloadDisabled {
                reason: f.opt_text("reason"),
            })
        },
    },
    EventSpec {
        kind: "runner_started",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::RunnerStarted),
    },
    EventSpec {
        kind: "load_failed",
        required: &[],
        optional: &[
            "message",
            "rest",
            "bytes",
            "size",
            "device",
            "index",
            "cause",
            "standalone",
        ],
        settable: &[
            ("cause", Words::Check(|w| cause_named(w).is_some())),
            ("standalone", Words::BOOL),
            // A host allocator's failure (`ggml_backend_cpu_buffer_type_alloc_buffer`): the buffer was in RAM.
            ("device", Words::List(&["CPU"])),
        ],
        build: load_failed,
    },
    EventSpec {
        kind: "layout_backoff",
        required: &[],
        optional: &["backoff"],
        settable: &[],
        build: |f| {
            Ok(EventKind::LayoutBackoff {
                backoff: f.opt_text("backoff"),
            })
        },
    },
    EventSpec {
        kind: "model_header",
        required: &[],
        optional: &["architecture"],
        settable: &[],
        build: |f| {
            Ok(EventKind::ModelHeader {
                architecture: f.opt_text("architecture"),
            })
        },
    },
    EventSpec {
        kind: "ollama_llama_server",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::OllamaLlamaServer),
    },
    EventSpec {
        kind: "known",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::Known),
    },
];

/// A GPU as discovery describes it (`inference compute`, `gpu memory`).
fn discovered_gpu(f: &Fields) -> GpuInfo {
    GpuInfo {
        id: f.opt_text("id"),
        index: None,
        library: f.opt_text("library"),
        // Ollama ≥ 0.12.4 prints llama.cpp's device name as `name` (`CUDA0`) and the card as `description`.
        name: f.opt_text("description").or_else(|| f.opt_text("name")),
        compute: f.opt_text("compute"),
        driver: f.opt_text("driver"),
        variant: f.opt_text("variant"),
        total: f.opt_size("total"),
        available: f.opt_size("available"),
        free: f.opt_size("free"),
        bus_id: f.opt_text("pci_id").and_then(|t| normalize_bus_id(&t)),
        integrated: f.get("type") == Some("iGPU"),
    }
}

/// An allocation failure or a crashed runner; out of memory when the message says so.
/// A shell prompt and the command typed after it (`$ journalctl -k | grep -i 'out of memory'`,
/// `user@host:~$ dmesg`): the words a failure line uses, but typed by the user, not printed by a runner.
pub fn is_shell_command(message: &str) -> bool {
    let t = message.trim_start();
    if ["$ ", "# ", "% ", "> ", "❯ "]
        .iter()
        .any(|p| t.starts_with(p))
    {
        return true;
    }
    // `user@host:~/dir$ cmd`: a first word with `@` and ending in a prompt sign, then a space.
    let first = t.split(' ').next().unwrap_or_default();
    first.contains('@') && (first.ends_with('$') || first.ends_with('#') || first.ends_with('%'))
}

fn load_failed(f: &Fields) -> Result<EventKind, BuildError> {
    let message = f
        .opt_text("message")
        .or_else(|| f.opt_text("rest"))
        .unwrap_or_default();
    if is_shell_command(&message) {
        // A prompt line that merely contains "out of memory" is not a failure (docs/log-formats.md §5.7).
        return Ok(EventKind::Known);
    }
    let lower = message.to_ascii_lowercase();
    let cause = match f.get("cause") {
        Some(word) => cause_named(word).ok_or_else(|| format!("unknown failure cause '{word}'"))?,
        None => cause_in(&lower),
    };
    let size = f
        .opt_int("bytes")
        .map(Quantity::exact)
        .or_else(|| f.opt_size("size"));
    let device = f.opt_text("device").map(|d| Device::named(&d)).or_else(|| {
        // `on device 0`: the backend is the load's (a ROCm build prints CUDA's function names), read in `load`.
        let index = u32::try_from(f.opt_int("index")?).ok()?;
        Some(Device::gpu(Backend::Unknown, index))
    });
    Ok(EventKind::LoadFailed(Box::new(FailureLine {
        out_of_memory: lower.contains("out of memory") || lower.contains("cudamalloc failed"),
        message,
        cause,
        size,
        device,
        standalone: f.get("standalone") == Some("true"),
    })))
}

/// A failure cause as a grammar's `set` spells it.
fn cause_named(word: &str) -> Option<FailureCause> {
    Some(match word {
        "unstated" => FailureCause::Unstated,
        "not-memory" => FailureCause::NotMemory,
        "out-of-memory" => FailureCause::OutOfMemory,
        "host-memory" => FailureCause::HostMemory,
        "allocation-limit" => FailureCause::AllocationLimit,
        _ => return None,
    })
}

/// Why a failure message says the load failed, by its words (`docs/log-formats.md` §5.7): the driver's
/// single-allocation limit, the host's OOM killer, an allocation failure, a crash, or nothing said.
pub(crate) fn cause_in(lower: &str) -> FailureCause {
    let any = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if any(&[
        "allocation limit",
        "maxmemoryallocationsize",
        "max buffer length",
        "maxbufferlength",
    ]) {
        FailureCause::AllocationLimit
    } else if any(&[
        "killed process",
        "oom-kill",
        "oom_kill",
        "oom killer",
        "memorymax",
    ]) {
        FailureCause::HostMemory
    } else if any(&[
        "out of memory",
        "cudamalloc failed",
        "hipmalloc failed",
        "failed to allocate",
        "insufficient memory",
        "erroroutofdevicememory",
        "unable to allocate",
        "not enough memory",
    ]) {
        FailureCause::OutOfMemory
    } else if any(&[
        "sigsegv",
        "sigabrt",
        "sigbus",
        "sigill",
        "signal arrived",
        "signal: aborted",
        "signal: segmentation",
        "hardware exception",
        "memory access fault",
        "illegal memory access",
        "illegal instruction",
        "segmentation fault",
        "core dumped",
        "ggml_assert",
        "exception",
    ]) {
        FailureCause::NotMemory
    } else {
        FailureCause::Unstated
    }
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
        operation: match get("Operation") {
            Some("fit") => RequestOperation::Fit,
            Some("alloc") => RequestOperation::Alloc,
            Some("commit") => RequestOperation::Commit,
            Some(_) | None => RequestOperation::Other,
        },
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

/// Why a GPU was rejected, with the figures the line gives (`driver 546, required 550 or newer`).
fn rejection_reason(f: &Fields) -> Result<String, BuildError> {
    let mut reason = f.need("reason")?.trim().to_string();
    let details: Vec<String> = [
        ("driver", "driver"),
        ("required_driver", "required"),
        ("compute", "compute"),
        ("total", "total"),
        ("available", "available"),
    ]
    .iter()
    .filter_map(|(key, label)| f.opt_text(key).map(|v| format!("{label} {v}")))
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
    fn discovery_of_today_names_the_card_by_its_description_and_marks_an_integrated_gpu() {
        // `grammars/10-ollama-server.toml`, the `inference compute` examples of `docs/log-formats.md` §5.6 item 1.
        let gpu = |line: &str| match crate::load::event_of(line) {
            EventKind::InferenceCompute(g) => g,
            other => panic!("{other:?}"),
        };
        let discrete = gpu(
            r#"time=2026-06-07T18:11:41.905+07:00 level=INFO source=types.go:50 msg="inference compute" id=0 filter_id=0 library=CUDA compute=8.6 name=CUDA0 description="NVIDIA GeForce RTX 3090" libdirs=ollama,cuda_v12 driver=13.0 pci_id=0000:01:00.0 type=discrete total="24.0 GiB" available="23.5 GiB""#,
        );
        assert_eq!(discrete.id.as_deref(), Some("0"));
        assert_eq!(discrete.name.as_deref(), Some("NVIDIA GeForce RTX 3090"));
        assert_eq!(discrete.bus_id.as_deref(), Some("00000000:01:00.0"));
        assert!(!discrete.integrated);
        let integrated = gpu(
            r#"time=2026-06-20T09:00:01.200Z level=INFO source=types.go:50 msg="inference compute" id=0 filter_id=0 library=Vulkan compute=0.0 name=Vulkan0 description="AMD Radeon 890M Graphics" libdirs=ollama,vulkan driver=0.0 pci_id=0000:c5:00.0 type=iGPU total="32.0 GiB" available="29.1 GiB""#,
        );
        assert!(integrated.integrated);
    }

    #[test]
    fn a_commit_request_reads_into_its_settings() {
        assert_eq!(
            load_request(COMMIT_009),
            LoadRequest {
                operation: RequestOperation::Commit,
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
        assert_eq!(r.operation, RequestOperation::Fit);
        assert_eq!(
            (r.kv_size, r.batch_size, r.flash_attention),
            (Some(4096), Some(512), Some(true))
        );
    }
}
