//! What a server held while it served, after the load: host RAM in llama-server's prompt cache and context
//! checkpoints, the KV cache's fill and the requests running and waiting (vLLM, SGLang), sampled in log order,
//! with the limits the log printed and the host's free memory at load where the log gives it.
//! `load::serving_memory` builds it from the `serving_memory` events; the JSON shows it as the load's
//! `timeline` object (`docs/json.md`), the reports draw it and the host-memory checks read it.

use serde::Serialize;

use super::quantity::Quantity;
use super::serving::{Count, Figure, Ratio};

/// One point of the timeline: what was held after the line `line`. A series the log has not printed yet is
/// absent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimelineSample {
    pub line: u64,
    /// Host RAM of the prompt cache (llama-server's `cache state`, or the cache plus an entry being saved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Quantity>,
    /// Host RAM of the context checkpoints the slots hold (count × size per slot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<Quantity>,
    /// The KV cache's fill in percent (vLLM's `KV cache usage`, SGLang's `token usage` × 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<i64>,
}

/// The limits the log printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TimelineLimits {
    /// The prompt cache's size limit (`--cache-ram`: `size limit: N MiB`, or the `limits:` of a cache state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Figure>,
    /// `size limit: no limit` (`--cache-ram -1`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prompt_cache_unlimited: bool,
    /// The cache's token limit (`limits: …, T tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_tokens: Option<Count>,
    /// Context checkpoints per slot (`--ctx-checkpoints`: `max = N`, or the `of M` of a created checkpoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints_per_slot: Option<Count>,
    /// Each slot's context (`n_ctx_slot = N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot_context: Option<Count>,
    /// The host's memory at load (Ollama's `system memory`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_total: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_free: Option<Figure>,
}

/// The highest value of each series, with its line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TimelinePeaks {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_percent: Option<Ratio>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<Count>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Count>,
    /// The largest single context checkpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_size: Option<Figure>,
    /// The largest prompt-cache entry (state plus its checkpoints), with its tokens and checkpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<CacheEntry>,
}

/// A prompt-cache entry as `- prompt 0x…: N tokens, checkpoints: K, X MiB` printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheEntry {
    #[serde(flatten)]
    pub size: Quantity,
    pub tokens: i64,
    pub checkpoints: i64,
    pub line: u64,
}

/// A request answered with a server error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedRequest {
    pub status: i64,
    /// How long it took, as the server printed it (`1m0s`).
    pub elapsed: String,
    pub line: u64,
}

/// How serving ended, as the line said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineEnd {
    pub message: String,
    pub line: u64,
}

/// What the server held while it served, for one load.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServingTimeline {
    /// The samples in log order (a sample equal to the one before it is not repeated).
    pub samples: Vec<TimelineSample>,
    pub limits: TimelineLimits,
    pub peaks: TimelinePeaks,
    /// The first cache state above its limit (the cache keeps one entry however large: `⚠ exceeds limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_limit: Option<Figure>,
    /// A line of the strict limit of newer builds (`exceeds cache size limit …, skipping`): this build never
    /// keeps an entry over its limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict_limit_line: Option<u64>,
    /// `failed to allocate memory for prompt cache state`: the host refused an entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_failed_line: Option<u64>,
    /// Requests preempted or retracted for lack of KV cache (the most the log counted), with the last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<Count>,
    /// The host killed the server while it served (`Killed process … (llama-server)`, `killed by the OOM
    /// killer`, a cgroup limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub killed: Option<TimelineEnd>,
    /// The slowest prompt processing the log printed (tokens per second), with its line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest_prefill: Option<Ratio>,
    /// The first request answered with a server error while serving (`status`, the time it took as printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_failed: Option<FailedRequest>,
    /// A task llama-server cancelled (its client went away), after the failed request or alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled_line: Option<u64>,
    /// Every line the timeline comes from.
    pub lines: Vec<u64>,
}

impl ServingTimeline {
    /// Whether the timeline holds host RAM (a prompt cache or checkpoints), not only engine stats.
    pub fn holds_host_ram(&self) -> bool {
        self.peaks.prompt_cache.is_some() || self.peaks.checkpoints.is_some()
    }
}
