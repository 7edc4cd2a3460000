//! The event kinds of the llama-server era (Ollama ≥ 0.30, `grammars/50-llama-server.toml`) other than the
//! `--fit` lines (`fit.rs`): llama.cpp's device inventory, the memory breakdown table and the `[mtmd]`/`[spec]`
//! side estimates.

use super::event::{BreakdownLine, EventKind, LlamaServerStart, RunnerDevice};
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
use super::values::parse_mib_truncated;
use super::words::side_estimate;
use crate::model::{Device, MIB};

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "llama_server_start",
        required: &[],
        optional: &["build", "commit", "model", "verbosity"],
        settable: &[],
        build: |f| {
            let build = f.opt_text("build").map(|b| match f.opt_text("commit") {
                Some(commit) => format!("b{b}-{commit}"),
                None => format!("b{b}"),
            });
            Ok(EventKind::LlamaServerStart(Box::new(LlamaServerStart {
                build,
                model: f.opt_text("model"),
                verbosity: f.opt_int("verbosity"),
            })))
        },
    },
    EventSpec {
        kind: "runner_device",
        required: &["device", "free"],
        optional: &["name", "total"],
        settable: &[],
        build: |f| {
            Ok(EventKind::RunnerDevice(Box::new(RunnerDevice {
                device: Device::named(f.need("device")?.trim()),
                name: f.opt_text("name"),
                total: f.opt_mib("total"),
                free: parse_mib_truncated(f.need("free")?).ok_or("bad MiB figure")?,
            })))
        },
    },
    EventSpec {
        kind: "breakdown_header",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::BreakdownHeader),
    },
    EventSpec {
        kind: "breakdown_row",
        required: &["device", "self", "model", "context", "compute"],
        optional: &["name", "total", "free", "unaccounted"],
        settable: &[],
        build: |f| Ok(EventKind::Breakdown(Box::new(breakdown(f)?))),
    },
    EventSpec {
        kind: "draft_context",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| Ok(EventKind::DraftContext),
    },
    EventSpec {
        kind: "side_estimate",
        required: &["what", "size"],
        optional: &[],
        settable: &[("what", Words::Check(|w| side_estimate(w).is_some()))],
        build: |f| {
            Ok(EventKind::SideEstimate {
                what: {
                    let word = f.need("what")?;
                    side_estimate(word).ok_or_else(|| format!("unknown side estimate '{word}'"))?
                },
                size: f.size("size")?,
            })
        },
    },
];

fn breakdown(f: &Fields) -> Result<BreakdownLine, BuildError> {
    let printed = f.need("device")?.trim();
    let (unaccounted, suspect) = match f.get("unaccounted").map(str::trim) {
        None | Some("") => (None, false),
        Some(text) => match text.parse::<i64>() {
            // llama.cpp prints a size_t difference: values near 2^64/2^20 are an underflow, not memory.
            Ok(v) if v.unsigned_abs() < (1u64 << 40) => (v.checked_mul(MIB), v < 0),
            _ => (None, true),
        },
    };
    Ok(BreakdownLine {
        device: Device::of_buffer(printed),
        // A host buffer type's row (`CPU_REPACK`) is named by its type; `Host` is the host itself.
        name: f.opt_text("name").or_else(|| {
            (printed != "Host" && Device::of_buffer(printed).is_host()).then(|| printed.to_string())
        }),
        total: f.opt_mib("total"),
        free: f.opt_mib("free"),
        self_: f.mib("self")?,
        model: f.mib("model")?,
        context: f.mib("context")?,
        compute: f.mib("compute")?,
        unaccounted,
        unaccounted_suspect: suspect,
    })
}
