//! What one line of memory while serving says, as typed data: the event the builders of
//! `parse::serving_memory` make and `load::serving_memory` reads. Kept apart from the builders so `event` can
//! name it without an import cycle (as `serving_line` is for `serving`).

use crate::model::Quantity;

/// What a `serving_memory` line says.
#[derive(Debug, Clone, PartialEq)]
pub enum ServingMemoryLine {
    /// `prompt cache is enabled, size limit: N MiB` (`None`: `no limit`); `prompt cache is disabled` is a
    /// limit of 0.
    CacheLimit { limit: Option<Quantity> },
    /// `- cache state: N prompts, X MiB (limits: Y MiB, T tokens, E est)`, with the `⚠ exceeds limit` suffix
    /// some builds print.
    CacheState {
        prompts: i64,
        size: Quantity,
        limit: Quantity,
        tokens: Option<i64>,
        exceeds: bool,
    },
    /// One entry of the cache (`- prompt 0x…: N tokens, checkpoints: K, X MiB`).
    CacheEntry {
        tokens: i64,
        checkpoints: i64,
        size: Quantity,
    },
    /// `- saving prompt with length N, total state size = X MiB`: a slot's state saved into the cache (its
    /// checkpoints come on top).
    PromptSave { tokens: i64, size: Quantity },
    /// `… removing oldest entry (size = X MiB)`: an entry evicted.
    CacheEvict { size: Quantity },
    /// `- prompt state size X MiB exceeds cache size limit Y MiB, skipping`: the strict limit of newer builds.
    CacheSkip { size: Quantity, limit: Quantity },
    /// `failed to allocate memory for prompt cache state`: the host refused the entry.
    CacheAllocFailed,
    /// `context checkpoints enabled, max = N` (`disabled`: 0).
    CheckpointsMax { max: i64 },
    /// `created context checkpoint N of M (… size = X MiB)`.
    CheckpointCreated {
        slot: Option<i64>,
        index: i64,
        max: i64,
        size: Quantity,
    },
    /// A checkpoint erased (`erased invalidated …`, `erasing old …`, `erasing … too close …`).
    CheckpointErased { slot: Option<i64>, size: Quantity },
    /// `restored context checkpoint (… n_past = P, size = X MiB)`.
    CheckpointRestored {
        slot: Option<i64>,
        n_past: Option<i64>,
        size: Quantity,
    },
    /// Each slot's context (`new prompt, n_ctx_slot = N`).
    SlotContext { tokens: i64 },
    /// vLLM's `Running: R reqs, Waiting: W reqs, … KV cache usage: X%` or SGLang's batch line
    /// (`token usage: F, #running-req: R, #queue-req: W`): the KV fill in percent.
    EngineStats {
        running: i64,
        waiting: Option<i64>,
        kv_percent: f64,
        swa_percent: Option<f64>,
        preemptions: Option<i64>,
    },
    /// vLLM V0's preemption warning (`… not enough KV cache space …`) or SGLang's retraction (`KV cache pool
    /// is full. Retract requests.`, `Decode out of memory happened.`): requests pushed back for lack of KV.
    Preempted { count: Option<i64>, retract: bool },
    /// Prompt processing's progress (`prompt processing, n_tokens = N, progress = P, t = T s / R tokens per
    /// second`): the prefill rate.
    PrefillRate { tokens_per_second: f64 },
    /// A request answered with a server error (Ollama's `[GIN] … | 500 | 1m0s | … | POST "/v1/…"`).
    RequestFailed { status: i64, elapsed: String },
    /// llama-server cancelled a task (`srv stop: cancel task, id_task = N`): its client went away.
    TaskCancelled,
    /// The host's memory when the load began (Ollama's `system memory total=… free=…`).
    HostMemory {
        total: Option<Quantity>,
        free: Quantity,
    },
}
