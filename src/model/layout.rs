//! The model's own shape, layer by layer: what each repeating layer weighs, what it costs in KV cache per token,
//! and what does not repeat. It exists because logs print totals only, and a per-layer average is wrong for
//! models whose layers differ (MoE experts, sliding-window attention, hybrid recurrent layers, vision towers).
//!
//! Two sources fill it: the GGUF file's header (exact tensor sizes, every hyperparameter) and, without the file,
//! the hyperparameters the log prints (`print_info: n_layer`, `n_head_kv`, `n_embd_head_k`, `n_swa`, …), which
//! give the KV side but not the weights. The replay and `whatif --max-ctx` read it; they do not care which.

use serde::Serialize;

/// Where a [`ModelLayout`] came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LayoutSource {
    /// A GGUF file's header (`--gguf`, or the blob the log names, found on this machine).
    Gguf { path: String },
    /// The hyperparameters the log prints (`print_info:` lines); weights per layer are then unknown.
    LogHyperparameters { lines: Vec<u64> },
}

/// How a layer keeps its per-token state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LayerAttention {
    /// Attention over the whole context: `k_elements + v_elements` per token and per sequence position.
    Full { k_elements: u64, v_elements: u64 },
    /// Attention over a sliding window of `window` tokens (gemma2/3/4, gpt-oss, …): the cache holds at most
    /// about `window` tokens per slot, whatever the context.
    SlidingWindow {
        window: u64,
        k_elements: u64,
        v_elements: u64,
    },
    /// A recurrent layer (Mamba, RWKV, hybrid models): a fixed state per slot, independent of the context.
    Recurrent { state_bytes_per_slot: u64 },
}

impl LayerAttention {
    /// K and V bytes one token costs in this layer with a `kv` cache (0 for a recurrent layer, whose state does
    /// not grow with the context).
    pub fn kv_bytes_per_token(&self, kv: KvType) -> u64 {
        match *self {
            LayerAttention::Full {
                k_elements,
                v_elements,
            }
            | LayerAttention::SlidingWindow {
                k_elements,
                v_elements,
                ..
            } => kv.bytes(k_elements).saturating_add(kv.bytes(v_elements)),
            LayerAttention::Recurrent { .. } => 0,
        }
    }
}

/// The sliding-window pattern llama.cpp sets in code for an architecture (`llama_hparams::set_swa_pattern(n)`),
/// for a model file without `sliding_window_pattern` and a log without `n_swa_pattern`. gemma4 reads a per-layer
/// array from its file; 6 is what gemma-4-31b's array gives (10 full-attention layers of 60, as its KV lines
/// show), used when only the log is at hand.
pub fn architecture_swa_pattern(architecture: &str) -> Option<u64> {
    SWA_PATTERNS
        .iter()
        .find(|p| p.architecture == architecture)
        .map(|p| p.every)
}

/// Whether the architecture's pattern puts the full-attention layer first in each group
/// (`set_swa_pattern(n, dense_first = true)`); `false` for an architecture the table does not know.
pub fn swa_dense_first(architecture: &str) -> bool {
    SWA_PATTERNS
        .iter()
        .any(|p| p.architecture == architecture && p.dense_first)
}

/// One architecture's sliding-window layers as llama.cpp sets them in code.
pub struct SwaPattern {
    /// llama.cpp's architecture name (`general.architecture`, `print_info: arch`).
    pub architecture: &'static str,
    /// One layer in every `every` attends to everything.
    pub every: u64,
    /// That layer is the first of its group, not the last.
    pub dense_first: bool,
}

const fn swa(architecture: &'static str, every: u64, dense_first: bool) -> SwaPattern {
    SwaPattern {
        architecture,
        every,
        dense_first,
    }
}

/// The architectures with sliding-window layers and their pattern: the one table every stage reads (the KV
/// geometry, the GGUF layout, the `kv-mismatch` check's causes). Read from llama.cpp b11549's
/// `load_swa_pattern(ml, n[, dense_first])` calls, one per architecture (`src/models/*.cpp` there); a model
/// file's own `sliding_window_pattern` comes first, as in llama.cpp.
pub const SWA_PATTERNS: &[SwaPattern] = &[
    swa("gemma2", 2, false),
    swa("gpt-oss", 2, false),
    swa("gptoss", 2, false),
    swa("afmoe", 4, false),
    swa("cohere2", 4, false),
    swa("cohere2moe", 4, true),
    swa("exaone4", 4, false),
    swa("exaone-moe", 4, false),
    swa("laguna", 4, true),
    swa("llama4", 4, false),
    swa("mellum", 4, false),
    swa("muse-glimmer", 4, false),
    swa("olmo2", 4, false),
    swa("smallthinker", 4, true),
    swa("gemma3n", 5, false),
    swa("gemma3", 6, false),
    swa("gemma-embedding", 6, false),
    swa("gemma4", 6, false),
    swa("plamo3", 8, false),
];

/// Whether layer `index` attends through the window under `set_swa_pattern(pattern, dense_first)`: the last
/// layer of every group of `pattern` (the first with `dense_first`) attends to everything (0: every layer uses
/// the window).
pub fn uses_window(index: u64, pattern: u64, dense_first: bool) -> bool {
    match (pattern, dense_first) {
        (0, _) => true,
        (p, true) => !index.is_multiple_of(p),
        (p, false) => index % p < p - 1,
    }
}

/// One repeating layer (`blk.N.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LayerLayout {
    pub index: u32,
    /// Weights that always go with the layer (attention, norms, a dense FFN, shared experts). `None` when the
    /// source does not know them (log hyperparameters only).
    pub dense_bytes: Option<u64>,
    /// Expert weights (`ffn_*_exps`); 0 for a dense layer.
    pub expert_bytes: Option<u64>,
    pub attention: LayerAttention,
}

/// A model's layers as the file (or the log) describes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelLayout {
    pub source: LayoutSource,
    /// `general.architecture` (`llama`, `gemma3`, `qwen3moe`, …).
    pub architecture: String,
    /// `{arch}.context_length`: the trained context.
    pub trained_context: Option<u64>,
    /// The repeating layers, index 0 first.
    pub layers: Vec<LayerLayout>,
    /// Tensors outside `blk.N.*` of the language model (`token_embd`, `output`, `output_norm`, `rope_freqs`, …).
    pub nonrepeating_bytes: Option<u64>,
    /// What goes with the output layer on the last GPU (`output.weight`, `output_norm.weight`; the tied
    /// embedding when there is no `output.weight`).
    pub output_bytes: Option<u64>,
    /// The vision projector/tower (`v.*`, `mm.*` in the main file, or a separate mmproj file), when present.
    pub projector_bytes: Option<u64>,
}

/// A KV cache element type, as `--cache-type-k/v` / `OLLAMA_KV_CACHE_TYPE` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KvType {
    F16,
    Q8_0,
    Q4_0,
}

impl KvType {
    /// Bytes of `elements` cache elements of this type (q8_0 and q4_0 store blocks of 32 elements in 34 and 18
    /// bytes; llama.cpp's rows are whole blocks, which every real head dimension is a multiple of).
    pub fn bytes(self, elements: u64) -> u64 {
        match self {
            KvType::F16 => elements * 2,
            KvType::Q8_0 => elements.div_ceil(32) * 34,
            KvType::Q4_0 => elements.div_ceil(32) * 18,
        }
    }

    pub const ALL: [KvType; 3] = [KvType::F16, KvType::Q8_0, KvType::Q4_0];

    pub fn name(self) -> &'static str {
        match self {
            KvType::F16 => "f16",
            KvType::Q8_0 => "q8_0",
            KvType::Q4_0 => "q4_0",
        }
    }
}

impl ModelLayout {
    /// Number of repeating layers.
    pub fn block_count(&self) -> usize {
        self.layers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_types_store_blocks_of_32() {
        // A 128-wide head: 256 bytes in f16, 4 blocks of 34 in q8_0, 4 blocks of 18 in q4_0.
        assert_eq!(KvType::F16.bytes(128), 256);
        assert_eq!(KvType::Q8_0.bytes(128), 136);
        assert_eq!(KvType::Q4_0.bytes(128), 72);
    }

    #[test]
    fn window_patterns_put_the_full_layer_last_or_first() {
        let full = |arch: &str, n: u64| -> Vec<u64> {
            let every = architecture_swa_pattern(arch).unwrap();
            (0..n)
                .filter(|&il| !uses_window(il, every, swa_dense_first(arch)))
                .collect()
        };
        // set_swa_pattern(6): every sixth layer, the last of its group.
        assert_eq!(full("gemma3", 12), vec![5, 11]);
        // set_swa_pattern(4, dense_first = true): the first of each group.
        assert_eq!(full("smallthinker", 12), vec![0, 4, 8]);
        assert_eq!(full("plamo3", 16), vec![7, 15]);
        assert!(uses_window(3, 0, false) && uses_window(3, 0, true));
        assert!(architecture_swa_pattern("llama").is_none() && !swa_dense_first("llama"));
    }
}
