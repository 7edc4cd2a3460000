//! Helpers the vLLM and SGLang checks share: the load's serving figures, a rank's name, and the setting of
//! a knob of the load's runtime (`src/model/knobs.rs`), so a hint never names a flag the engine lacks.

use super::Context;
use crate::model::knobs::{self, Knob};
use crate::model::{
    human, Placer, Quantity, RankFigures, ServingEngine, ServingFigures, StartFailure,
};

/// The load's vLLM or SGLang figures, when it is such a load.
pub fn serving<'a>(cx: &Context<'a>) -> Option<&'a ServingFigures> {
    cx.load.load.serving.as_ref()
}

/// The serving figures when the engine's budget is a share of the whole GPU that holds everything it
/// allocates (vLLM: total × `--gpu-memory-utilization`). SGLang's static pool is sized from the memory
/// available and holds only weights and KV, so no check built on that premise applies to it.
pub fn budget_of_whole_gpu<'a>(cx: &Context<'a>) -> Option<&'a ServingFigures> {
    let s = serving(cx)?;
    match cx.load.load.runtime.placer() {
        Placer::ServingEngine(ServingEngine::Vllm) => Some(s),
        Placer::ServingEngine(ServingEngine::Sglang)
        | Placer::OllamaScheduler
        | Placer::LlamaFit(_)
        | Placer::Unknown => None,
    }
}

/// `rank TP1 (GPU1)`.
pub fn rank_name(r: &RankFigures) -> String {
    format!("rank {} ({})", r.rank, r.device)
}

/// The runtime's setting for `knob` with `value`, when it has one (`--max-model-len 81536`).
pub fn setting(cx: &Context, knob: Knob, value: impl std::fmt::Display) -> Option<String> {
    knobs::reaching(cx.load.load.runtime, knob).map(|e| e.setting(value))
}

/// A size in words.
pub fn size(q: Quantity) -> String {
    human(q.bytes)
}

/// `ratio` rounded down to two decimals, as the engines take a utilization.
pub fn floor2(ratio: f64) -> f64 {
    (ratio * 100.0).floor() / 100.0
}

/// What to change after a vLLM or SGLang start failed, by the cause its lines gave, in its own flags.
pub fn failure_hint(cx: &Context) -> Option<String> {
    let s = serving(cx)?;
    let cause = s.failure?;
    let set = |knob, value: &str| setting(cx, knob, value).unwrap_or_default();
    // (SGLang's, vLLM's): a torch out-of-memory alone names neither engine.
    let (sglang, vllm) = match cx.load.load.runtime.placer() {
        Placer::ServingEngine(ServingEngine::Sglang) => (true, false),
        Placer::ServingEngine(ServingEngine::Vllm) => (false, true),
        Placer::OllamaScheduler | Placer::LlamaFit(_) | Placer::Unknown => (false, false),
    };
    Some(match cause {
        StartFailure::Crashed => {
            let avail = s
                .ranks
                .iter()
                .filter_map(|r| r.avail_after_pool.or(r.avail_after_weights))
                .map(|f| size(f.size))
                .next_back()
                .map(|a| format!(" with {a} still available"))
                .unwrap_or_default();
            format!("not a memory failure: a rank crashed{avail}; read its traceback (a kernel or library error) and leave the memory flags alone; {} skips the step that crashed if it was graph capture", set(Knob::Eager, "").trim())
        }
        StartFailure::MaxLenOverKv { tokens, .. } => format!(
            "set {} or hold more tokens with {}",
            set(Knob::Context, &tokens.to_string()),
            set(Knob::KvCacheType, "fp8")
        ),
        StartFailure::FreeBelowBudget => "another process holds memory on the GPU (see foreign-memory for the utilization that fits)".to_string(),
        StartFailure::NoKvMemory if sglang => format!(
            "a profiled pool at or below zero is no KV pool: out of memory at startup, whatever the message; shrink what sits beside the pool ({}, {}) or add GPUs",
            set(Knob::GraphBatch, "N").trim(),
            set(Knob::Batch, "N").trim()
        ),
        StartFailure::NoKvMemory if s.ranks.iter().any(|r| r.graph_estimate.is_some()) => format!(
            "the CUDA-graph estimate is reserved inside the budget (see graph-estimate-off): {} leaves it out; or pin the KV cache with --kv-cache-memory",
            set(Knob::GraphEstimate, "0")
        ),
        StartFailure::NoKvMemory => format!(
            "the weights and the profiled peaks took the whole budget: raise {} if the GPU has room, shrink the activation peak ({}, {}, {}), or split over more GPUs (-tp)",
            set(Knob::MemoryFraction, "0.95").trim(),
            set(Knob::Batch, "N").trim(),
            set(Knob::Sequences, "N").trim(),
            set(Knob::Context, "N").trim()
        ),
        StartFailure::OutOfMemory {
            during_capture: true,
            ..
        } if sglang => format!(
            "the CUDA-graph capture did not fit in what the pool left: lower {}, or {} to leave it more room; {} skips the capture",
            set(Knob::GraphBatch, "N").trim(),
            set(Knob::MemoryFraction, "F").trim(),
            set(Knob::Eager, "").trim()
        ),
        StartFailure::OutOfMemory {
            during_capture: true,
            ..
        } if vllm => format!(
            "the CUDA graphs did not fit beside the budget: {} skips them, or lower {} to leave them room (see the suggestions for the figures)",
            set(Knob::Eager, "").trim(),
            set(Knob::MemoryFraction, "U").trim()
        ),
        StartFailure::OutOfMemory { .. } if sglang => format!(
            "lower {} to leave more beside the pool for activations, or shrink them ({}, {}) (see the suggestions for the figures)",
            set(Knob::MemoryFraction, "F").trim(),
            set(Knob::Batch, "N").trim(),
            set(Knob::GraphBatch, "N").trim()
        ),
        StartFailure::OutOfMemory { .. } if vllm => format!(
            "lower {} if memory outside this process's allocator is another process's, else the activation peak ({}, {}) (see the suggestions for the figures)",
            set(Knob::MemoryFraction, "U").trim(),
            set(Knob::Batch, "N").trim(),
            set(Knob::Sequences, "N").trim()
        ),
        StartFailure::OutOfMemory { .. } | StartFailure::EngineFailed => return None,
    })
}
