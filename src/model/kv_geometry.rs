//! How big llama.cpp makes the KV cache of a [`ModelLayout`] for a given context, parallel slots, micro-batch
//! and cache type: the rules that turn "elements per token and layer" into the bytes of each cache. It exists so
//! the replay and `whatif --max-ctx` compute KV layer by layer (a sliding-window layer does not grow with the
//! context), and so that the figure can be checked against the log's own KV lines.
//!
//! The rules, as llama.cpp applies them (our reading of `llama_context` and `llama_kv_cache(_iswa)`; the corpus
//! logs agree, see `tests/kv_geometry.rs`):
//! - **Streams.** With `kv_unified = false` (llama-server's default since the `llama_context` era) every slot has
//!   its own stream of `n_ctx / n_seq` cells; otherwise (every earlier era, or `--kv-unified`) one stream holds
//!   `n_ctx` cells for all slots.
//! - **Padding.** A stream's cells are padded up to a multiple of [`CELL_PADDING`] (256). Builds before mid-2025
//!   padded to 32 without flash attention; every context in the corpus is a multiple of 256 either way.
//! - **Sliding window.** A window layer's cache has `min(cells, pad(n_swa × (unified ? n_seq : 1) + n_ubatch,
//!   256))` cells per stream.
//! - **A slot's context.** With `kv_unified = false` a slot sees `n_ctx / n_seq` tokens (`n_ctx_seq`); with
//!   `kv_unified = true` printed (llama-server's `-np auto`: 4 slots sharing one stream) every slot sees the
//!   whole `n_ctx`. Eras that print no `kv_unified` shared one stream of `n_ctx` cells, `n_ctx / n_seq` per
//!   slot (Ollama's `num_ctx × parallel`). [`SlotContext`] holds this.
//! - **Recurrent state.** One state per slot, whatever the context.
//! - **Types.** K and V rows are stored in their cache type ([`KvType::bytes`]).

use serde::Serialize;

use super::layout::{KvType, LayerAttention, LayerLayout, ModelLayout};

/// llama.cpp pads a KV stream's cells to a multiple of this.
pub const CELL_PADDING: u64 = 256;

/// llama.cpp's default micro-batch (`-ub`) when the log does not print one.
pub const DEFAULT_UBATCH: u64 = 512;

/// What sizes the caches besides the model: the context, the slots, the micro-batch and the types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheGeometry {
    /// Context over all slots (`--ctx-size`, `n_ctx`: `num_ctx × parallel` in Ollama).
    pub context: u64,
    /// Parallel slots (`n_seq_max`).
    pub parallel: u64,
    /// One stream for all slots (`kv_unified = true`, and every era before `llama_context`).
    pub unified: bool,
    /// Micro-batch (`n_ubatch`).
    pub ubatch: u64,
    pub type_k: KvType,
    pub type_v: KvType,
}

fn pad(n: u64, to: u64) -> u64 {
    n.div_ceil(to).saturating_mul(to)
}

/// Bytes as the replay's signed sizes (a figure past `i64::MAX` saturates; only hostile logs get there).
pub fn signed(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

impl CacheGeometry {
    /// KV streams: one per slot unless unified.
    pub fn streams(&self) -> u64 {
        if self.unified {
            1
        } else {
            self.parallel.max(1)
        }
    }

    /// Cells of one full-attention stream.
    pub fn cells(&self) -> u64 {
        pad(self.context / self.streams(), CELL_PADDING)
    }

    /// Cells of one sliding-window stream for a window of `window` tokens.
    pub fn window_cells(&self, window: u64) -> u64 {
        let slots = if self.unified {
            self.parallel.max(1)
        } else {
            1
        };
        self.cells().min(pad(
            window.saturating_mul(slots).saturating_add(self.ubatch),
            CELL_PADDING,
        ))
    }

    /// K and V bytes one layer holds in this geometry.
    pub fn layer_bytes(&self, layer: &LayerLayout) -> (u64, u64) {
        let rows = |cells: u64| cells.saturating_mul(self.streams());
        match layer.attention {
            LayerAttention::Full {
                k_elements,
                v_elements,
            } => (
                rows(self.cells()).saturating_mul(self.type_k.bytes(k_elements)),
                rows(self.cells()).saturating_mul(self.type_v.bytes(v_elements)),
            ),
            LayerAttention::SlidingWindow {
                window,
                k_elements,
                v_elements,
            } => (
                rows(self.window_cells(window)).saturating_mul(self.type_k.bytes(k_elements)),
                rows(self.window_cells(window)).saturating_mul(self.type_v.bytes(v_elements)),
            ),
            LayerAttention::Recurrent {
                state_bytes_per_slot,
            } => (state_bytes_per_slot.saturating_mul(self.parallel.max(1)), 0),
        }
    }

    /// Bytes of K and V one layer holds (the sum of [`Self::layer_bytes`]).
    pub fn layer_total(&self, layer: &LayerLayout) -> u64 {
        let (k, v) = self.layer_bytes(layer);
        k.saturating_add(v)
    }
}

/// One cache as llama.cpp prints its summary (`size = … MiB (N cells, L layers, S/S seqs), K (…): …, V (…): …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheSize {
    /// Cells per stream.
    pub cells: u64,
    pub streams: u64,
    pub layers: u64,
    pub k_bytes: u64,
    pub v_bytes: u64,
}

impl CacheSize {
    pub fn bytes(&self) -> u64 {
        self.k_bytes.saturating_add(self.v_bytes)
    }
}

/// The caches a layout needs: the full-attention one, the sliding-window one (a separate cache in llama.cpp,
/// `llama_kv_cache_iswa`), the recurrent state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct KvSizes {
    pub full: CacheSize,
    pub window: Option<CacheSize>,
    pub recurrent: Option<CacheSize>,
}

impl KvSizes {
    pub fn total(&self) -> u64 {
        self.full
            .bytes()
            .saturating_add(self.window.map_or(0, |c| c.bytes()))
            .saturating_add(self.recurrent.map_or(0, |c| c.bytes()))
    }
}

/// The caches `layout` needs in `geometry`.
pub fn kv_sizes(layout: &ModelLayout, geometry: &CacheGeometry) -> KvSizes {
    let mut sizes = KvSizes {
        full: CacheSize {
            cells: geometry.cells(),
            streams: geometry.streams(),
            ..CacheSize::default()
        },
        ..KvSizes::default()
    };
    for layer in &layout.layers {
        let (k, v) = geometry.layer_bytes(layer);
        let cache = match layer.attention {
            LayerAttention::Full { .. } => &mut sizes.full,
            LayerAttention::SlidingWindow { window, .. } => sizes.window.get_or_insert(CacheSize {
                cells: geometry.window_cells(window),
                streams: geometry.streams(),
                ..CacheSize::default()
            }),
            LayerAttention::Recurrent { .. } => sizes.recurrent.get_or_insert(CacheSize {
                cells: 1,
                streams: geometry.parallel.max(1),
                ..CacheSize::default()
            }),
        };
        cache.layers += 1;
        cache.k_bytes = cache.k_bytes.saturating_add(k);
        cache.v_bytes = cache.v_bytes.saturating_add(v);
    }
    sizes
}

/// How a runtime's `-c` relates to the context each slot sees: `-c = per_slot × slots` when the cache is split
/// per slot (or shared by an era that prints no `kv_unified`), `-c = per_slot` when llama.cpp printed
/// `kv_unified = true` (every slot sees the whole context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotContext {
    /// The context one slot sees (Ollama's `num_ctx`; llama.cpp's `n_ctx_seq`).
    pub per_slot: u64,
    pub parallel: u64,
    /// Every slot sees the whole `-c` (`kv_unified = true` printed).
    pub shared: bool,
}

impl SlotContext {
    /// The slots of a load's settings; `None` without a context.
    pub fn of(settings: &super::Settings) -> Option<SlotContext> {
        let total = u64::try_from(settings.ctx_size?).ok().filter(|&c| c > 0)?;
        let parallel = settings
            .parallel
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or(1)
            .max(1);
        let shared = settings.kv_unified == Some(true);
        Some(SlotContext {
            per_slot: if shared { total } else { total / parallel },
            parallel,
            shared,
        })
    }

    /// `-c`: the context over all slots.
    pub fn total(&self) -> u64 {
        if self.shared {
            self.per_slot
        } else {
            self.per_slot.saturating_mul(self.parallel.max(1))
        }
    }

    /// The same runtime with `per_slot` tokens a slot and `parallel` slots.
    pub fn with(self, per_slot: Option<u64>, parallel: Option<u64>) -> SlotContext {
        SlotContext {
            per_slot: per_slot.unwrap_or(self.per_slot).max(1),
            parallel: parallel.unwrap_or(self.parallel).max(1),
            shared: self.shared,
        }
    }
}

/// The geometry a load's settings give: its context, slots, `kv_unified`, micro-batch and cache types (f16
/// when not printed). `None` without a context or with a cache type other than f16, q8_0, q4_0.
pub fn kv_geometry_of(settings: &super::Settings) -> Option<CacheGeometry> {
    let context = u64::try_from(settings.ctx_size?).ok().filter(|&c| c > 0)?;
    let type_k = match &settings.kv_cache_type {
        Some(t) => kv_type(t)?,
        None => KvType::F16,
    };
    let type_v = match &settings.kv_cache_type_v {
        Some(t) => kv_type(t)?,
        None => type_k,
    };
    Some(CacheGeometry {
        context,
        parallel: settings
            .parallel
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or(1)
            .max(1),
        unified: settings.kv_unified != Some(false),
        ubatch: settings
            .ubatch_size
            .and_then(|u| u64::try_from(u).ok())
            .unwrap_or(DEFAULT_UBATCH),
        type_k,
        type_v,
    })
}

/// A cache type by the name llama.cpp and Ollama print (`f16`, `q8_0`, `q4_0`); `None` for others.
pub fn kv_type(name: &str) -> Option<KvType> {
    KvType::ALL
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LayoutSource;

    fn layout(attention: &[LayerAttention]) -> ModelLayout {
        ModelLayout {
            source: LayoutSource::LogHyperparameters { lines: Vec::new() },
            architecture: "test".into(),
            trained_context: None,
            layers: attention
                .iter()
                .enumerate()
                .map(|(i, a)| LayerLayout {
                    index: i as u32,
                    dense_bytes: None,
                    expert_bytes: None,
                    attention: *a,
                })
                .collect(),
            nonrepeating_bytes: None,
            output_bytes: None,
            projector_bytes: None,
        }
    }

    fn geometry(context: u64, parallel: u64, unified: bool) -> CacheGeometry {
        CacheGeometry {
            context,
            parallel,
            unified,
            ubatch: 512,
            type_k: KvType::F16,
            type_v: KvType::F16,
        }
    }

    #[test]
    fn cells_are_padded_to_256_per_stream() {
        let g = geometry(10_000, 2, false);
        assert_eq!(g.streams(), 2);
        assert_eq!(g.cells(), 5120);
        assert_eq!(geometry(10_000, 2, true).cells(), 10_240);
    }

    #[test]
    fn a_window_cache_stops_growing_with_the_context() {
        let full = LayerAttention::Full {
            k_elements: 1024,
            v_elements: 1024,
        };
        let swa = LayerAttention::SlidingWindow {
            window: 1024,
            k_elements: 1024,
            v_elements: 1024,
        };
        let l = layout(&[swa, full]);
        let small = kv_sizes(&l, &geometry(1024, 1, true));
        let big = kv_sizes(&l, &geometry(65_536, 1, true));
        assert_eq!(
            small.window.unwrap().cells,
            1024,
            "never more than the context"
        );
        assert_eq!(big.window.unwrap().cells, 1536, "window + ubatch, padded");
        assert_eq!(big.full.bytes(), 65_536 * 4096);
    }
}
