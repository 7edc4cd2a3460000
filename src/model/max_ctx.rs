//! `vramdiff whatif --max-ctx`: the largest context that keeps every layer on the chosen GPUs, per KV cache
//! type. The number users ask for first and no log prints (ollama#12353, llama.cpp#27501).

use serde::Serialize;

use super::layout::KvType;

/// The answer for one KV cache type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaxContextRow {
    pub kv_type: KvType,
    /// The largest `num_ctx` (context per slot, a multiple of [`MaxContext::step`]); `None` when even one step
    /// does not fit.
    pub num_ctx: Option<i64>,
    /// `num_ctx × parallel`: the context over all slots (llama.cpp's `n_ctx`).
    pub context: Option<i64>,
    /// `num_ctx` is the cap (the trained context), not a limit of memory: more would fit.
    pub at_cap: bool,
    /// Memory left at `num_ctx` on the tightest GPU holding layers (above the `--fit` margin in the
    /// llama-server era; above the overhead in Ollama's estimator).
    pub margin: Option<i64>,
    /// The lowest and highest `num_ctx` the printed rounding of the figures allows, when they differ
    /// (`num_ctx` is the answer at the figures as printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<[i64; 2]>,
}

/// The largest contexts, with the assumptions they rest on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaxContext {
    /// Which replay decided "fits": Ollama's estimator or llama.cpp's `--fit` with the measured figures.
    pub replay: String,
    /// The GPUs the layers had to stay on.
    pub gpus: Vec<String>,
    /// A load without a GPU fitted to system memory: the context had to fit there, no layer moves.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub on_host: bool,
    pub parallel: i64,
    /// The search step per slot (llama.cpp pads a KV stream to 256 cells).
    pub step: i64,
    /// The largest `num_ctx` searched, and why.
    pub cap: i64,
    pub cap_from: String,
    /// How the compute buffer (graph) is treated as the context grows, and where the KV comes from.
    pub assumptions: Vec<String>,
    pub rows: Vec<MaxContextRow>,
}
