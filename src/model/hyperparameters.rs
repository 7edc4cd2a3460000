//! The model hyperparameters a llama.cpp log prints (`print_info:` / `llm_load_print_meta:`), typed. They exist
//! because without the model file they are the only source of the model's KV shape: with them vramdiff computes
//! the KV cache layer by layer (and checks it against the log's own KV lines) instead of averaging a total.

use serde::Serialize;

/// A hyperparameter llama.cpp prints once when every layer has the same value, or as a per-layer array
/// (`n_head_kv = [8, 8, 0, 8]`) when layers differ (hybrid models).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PerLayer {
    All(u64),
    Each(Vec<u64>),
}

impl PerLayer {
    /// The value for layer `il` (an array too short for it gives `None`).
    pub fn at(&self, il: usize) -> Option<u64> {
        match self {
            PerLayer::All(v) => Some(*v),
            PerLayer::Each(values) => values.get(il).copied(),
        }
    }
}

/// What the log printed of the model's shape; every field is optional because eras print different subsets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Hyperparameters {
    /// `arch` (`llama`, `gemma3`, `qwen3next`, …).
    pub architecture: Option<String>,
    pub n_layer: Option<u64>,
    pub n_ctx_train: Option<u64>,
    /// Query heads (`n_head`): the attention scores llama.cpp keeps without flash attention grow with it.
    pub n_head: Option<PerLayer>,
    pub n_head_kv: Option<PerLayer>,
    pub n_embd_head_k: Option<u64>,
    pub n_embd_head_v: Option<u64>,
    /// Per-head K and V widths under multi-head latent attention (`n_embd_head_k_mla`, printed for the
    /// DeepSeek-2 family): when they differ from `n_embd_head_k`/`n_embd_head_v` the model uses MLA, and
    /// llama.cpp's cache holds the compressed K row alone, no V.
    pub n_embd_head_k_mla: Option<u64>,
    pub n_embd_head_v_mla: Option<u64>,
    /// K elements per token and layer (`n_head_kv × n_embd_head_k`).
    pub n_embd_k_gqa: Option<PerLayer>,
    pub n_embd_v_gqa: Option<PerLayer>,
    /// Sliding window in tokens (0: none).
    pub n_swa: Option<u64>,
    /// Every `n_swa_pattern`-th layer attends to the whole context, the others to the window (printed by
    /// llama.cpp builds of mid-2025 only).
    pub n_swa_pattern: Option<u64>,
    /// `is_swa_any` (later builds): whether any layer uses the window.
    pub is_swa_any: Option<bool>,
    pub n_expert: Option<u64>,
    pub ssm_d_conv: Option<u64>,
    pub ssm_d_inner: Option<u64>,
    pub ssm_d_state: Option<u64>,
    pub ssm_n_group: Option<u64>,
    /// The lines they were printed on.
    pub lines: Vec<u64>,
}
