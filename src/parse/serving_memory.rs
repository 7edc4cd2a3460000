//! The event kind of the memory a server takes while it serves, after the load (`serving_memory`, one kind with
//! a `what` word per line shape): llama-server's host-RAM prompt cache and context checkpoints and its slots
//! (`grammars/38-llama-server-serving.toml`), vLLM's periodic engine stats and preemption warnings
//! (`grammars/35-vllm.toml`), SGLang's batch stats and retractions (`grammars/36-sglang.toml`), and the host's
//! memory at load where the log gives it (Ollama's `system memory`, `grammars/10-ollama-server.toml`).
//! `load::serving_memory` turns them into the load's timeline.
//!
//! llama-server prints the cache and checkpoint sizes with three decimals of MiB (`%.3f MiB`,
//! `tools/server/server-task.cpp`), read here with the bounds of that precision; vLLM prints the KV fill in
//! percent with one decimal, SGLang as a fraction with two.

use super::event::EventKind;
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
pub use super::serving_memory_line::ServingMemoryLine;
use crate::model::Quantity;

const WHAT: &[&str] = &[
    "cache_limit",
    "cache_state",
    "cache_entry",
    "prompt_save",
    "cache_evict",
    "cache_skip",
    "cache_alloc_failed",
    "checkpoints_max",
    "checkpoint_created",
    "checkpoint_erased",
    "checkpoint_restored",
    "slot_context",
    "engine_stats",
    "preempted",
    "retracted",
    "host_memory",
    "prefill_rate",
    "request_failed",
    "task_cancelled",
];

pub const SPECS: &[EventSpec] = &[EventSpec {
    kind: "serving_memory",
    required: &["what"],
    optional: &[
        "limit",
        "unlimited",
        "prompts",
        "size",
        "tokens",
        "exceeds",
        "checkpoints",
        "slot",
        "index",
        "max",
        "n_past",
        "running",
        "waiting",
        "kv_percent",
        "kv_fraction",
        "swa_fraction",
        "preemptions",
        "count",
        "total",
        "free",
        "rate",
        "status",
        "elapsed",
    ],
    settable: &[
        ("what", Words::List(WHAT)),
        ("max", Words::Check(|w| w.parse::<i64>().is_ok())),
        ("limit", Words::Check(|w| w.parse::<i64>().is_ok())),
    ],
    build: |f| Ok(EventKind::ServingMemory(Box::new(build(f)?))),
}];

fn build(f: &Fields) -> Result<ServingMemoryLine, BuildError> {
    Ok(match f.need("what")? {
        "cache_limit" => ServingMemoryLine::CacheLimit {
            limit: match f.opt_text("unlimited") {
                Some(_) => None,
                None => Some(mib_or_size(f, "limit")?),
            },
        },
        "cache_state" => ServingMemoryLine::CacheState {
            prompts: f.int("prompts")?,
            size: f.size("size")?,
            limit: f.size("limit")?,
            tokens: f.opt_int("tokens"),
            exceeds: f.opt_text("exceeds").is_some(),
        },
        "cache_entry" => ServingMemoryLine::CacheEntry {
            tokens: f.int("tokens")?,
            checkpoints: f.int("checkpoints")?,
            size: f.size("size")?,
        },
        "prompt_save" => ServingMemoryLine::PromptSave {
            tokens: f.int("tokens")?,
            size: f.size("size")?,
        },
        "cache_evict" => ServingMemoryLine::CacheEvict {
            size: f.size("size")?,
        },
        "cache_skip" => ServingMemoryLine::CacheSkip {
            size: f.size("size")?,
            limit: f.size("limit")?,
        },
        "cache_alloc_failed" => ServingMemoryLine::CacheAllocFailed,
        "checkpoints_max" => ServingMemoryLine::CheckpointsMax { max: f.int("max")? },
        "checkpoint_created" => ServingMemoryLine::CheckpointCreated {
            slot: f.opt_int("slot"),
            index: f.int("index")?,
            max: f.int("max")?,
            size: f.size("size")?,
        },
        "checkpoint_erased" => ServingMemoryLine::CheckpointErased {
            slot: f.opt_int("slot"),
            size: f.size("size")?,
        },
        "checkpoint_restored" => ServingMemoryLine::CheckpointRestored {
            slot: f.opt_int("slot"),
            n_past: f.opt_int("n_past"),
            size: f.size("size")?,
        },
        "slot_context" => ServingMemoryLine::SlotContext {
            tokens: f.int("tokens")?,
        },
        "engine_stats" => ServingMemoryLine::EngineStats {
            running: f.int("running")?,
            waiting: f.opt_int("waiting"),
            kv_percent: match (number(f, "kv_percent"), number(f, "kv_fraction")) {
                (Some(p), _) => p,
                (None, Some(x)) => x * 100.0,
                (None, None) => return Err("no KV fill (kv_percent or kv_fraction)".into()),
            },
            swa_percent: number(f, "swa_fraction").map(|x| x * 100.0),
            preemptions: f.opt_int("preemptions"),
        },
        "preempted" => ServingMemoryLine::Preempted {
            count: f.opt_int("count"),
            retract: false,
        },
        "retracted" => ServingMemoryLine::Preempted {
            count: f.opt_int("count"),
            retract: true,
        },
        "host_memory" => ServingMemoryLine::HostMemory {
            total: f.opt_size("total"),
            free: f.size("free")?,
        },
        "prefill_rate" => ServingMemoryLine::PrefillRate {
            tokens_per_second: number(f, "rate").ok_or("no prefill rate")?,
        },
        "request_failed" => ServingMemoryLine::RequestFailed {
            status: f.int("status")?,
            elapsed: f.need("elapsed")?.trim().to_string(),
        },
        "task_cancelled" => ServingMemoryLine::TaskCancelled,
        other => return Err(format!("unknown serving_memory what '{other}'")),
    })
}

/// A limit printed as whole MiB (`size limit: 8192 MiB`, or a `set` number) or with its unit.
fn mib_or_size(f: &Fields, name: &str) -> Result<Quantity, BuildError> {
    let text = f.need(name)?.trim();
    match text.parse::<i64>() {
        Ok(mib) => Ok(Quantity::exact(mib * crate::model::MIB)),
        Err(_) => f.size(name),
    }
}

/// A decimal number (a percentage, a fraction), finite.
fn number(f: &Fields, name: &str) -> Option<f64> {
    f.get(name)
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite())
}
