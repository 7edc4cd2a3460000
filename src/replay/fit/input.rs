//! What the fit decides from: the devices (free memory, margin, compute buffer), the model's layers, the
//! context and the user's settings, described plainly (the module knows nothing of logs).

use serde::Serialize;

use super::MIB;

/// llama.cpp's default free-memory margin per device (`--fit-target`, `LLAMA_ARG_FIT_TARGET`, §5.3): a reserve
/// the fit keeps free, not memory in use. Ollama raises it when it offloads a projector (§5.5 step 1).
pub const DEFAULT_FIT_TARGET: i64 = 1024 * MIB;

/// One device the fit may place layers on, as llama.cpp sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitDevice {
    /// llama.cpp's name for it (`CUDA0`, `ROCm1`, `Vulkan0`); only reported back, never interpreted.
    pub name: String,
    /// Free memory when the load starts (`using device CUDA0 (…) - N MiB free`). It is also the default
    /// split's weight for this device.
    pub free: i64,
    /// The margin to keep free (`--fit-target`, [`DEFAULT_FIT_TARGET`] unless raised).
    pub target: i64,
    /// The compute buffer the device needs once it holds at least one layer (the output layer counts).
    pub compute: i64,
}

impl FitDevice {
    /// What the fit may fill: `free − target` (llama.cpp's `targets[id]`, printed `id=K, target=T MiB`).
    pub fn budget(&self) -> i64 {
        self.free.saturating_sub(self.target)
    }
}

/// One repeating layer of the model (layers may differ: sliding-window, recurrent or dense-in-MoE layers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FitLayer {
    /// Weights that always go with the layer (attention, norms, shared experts, a dense FFN).
    pub dense: i64,
    /// Expert weights (`ffn_*_exps`), 0 for a dense layer. The fit can leave them in system memory.
    pub experts: i64,
    /// KV cache or recurrent state of the layer at the configured context ([`FitContext::configured`]).
    pub kv: i64,
}

impl FitLayer {
    /// `n` equal layers from model totals, since logs print totals only (the breakdown table's model and
    /// context columns, the buffer lines). Remainder bytes go to the first layers, so the sums are exact.
    pub fn spread(n: usize, dense: i64, experts: i64, kv: i64) -> Vec<FitLayer> {
        let share = |total: i64, i: usize| {
            let n = n as i64;
            total / n + i64::from((i as i64) < total % n)
        };
        (0..n)
            .map(|i| FitLayer {
                dense: share(dense, i),
                experts: share(experts, i),
                kv: share(kv, i),
            })
            .collect()
    }
}

/// The context the load asked for, and how far the fit may reduce it (§5.5 step 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FitContext {
    /// Context (tokens, all slots) at which [`FitLayer::kv`] was measured: the user's `-c`, else the model's
    /// trained context, which is what llama.cpp uses then.
    pub configured: i64,
    /// Whether the user set it. Ollama always passes `-c`, so this is the usual case, and the fit then leaves
    /// the context alone (`context size set by user to N -> no change`).
    pub set_by_user: bool,
    /// The smallest context the fit may reduce to (llama.cpp's `n_ctx_min`, `--fit-ctx`).
    pub min: i64,
}

/// Everything the fit decides from: a plain description of the devices, the model and the user's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitInput {
    /// In llama.cpp's order.
    pub devices: Vec<FitDevice>,
    /// The repeating layers, index 0 first (the model's first layer, the first to stay on the CPU).
    pub layers: Vec<FitLayer>,
    /// The output layer's weights (norm and `lm_head`): placed like a layer at index `n_layer`, never partial.
    pub output: i64,
    /// The user's `-ngl N` (Ollama passes it when `num_gpu` is set; any value, 999 included, stops the fit from
    /// moving layers). `None`: llama.cpp's default, every layer.
    pub n_gpu_layers: Option<u32>,
    /// The user's `--tensor-split` proportions, one per device (missing entries read as 0). `None` or all
    /// zero: no split given, layers are split by free memory. A given split stops the fit from moving layers.
    pub tensor_split: Option<Vec<f32>>,
    /// The context [`FitLayer::kv`] was measured at, and whether the fit may reduce it.
    pub context: FitContext,
}

impl FitInput {
    /// Number of repeating layers (`n_layer`); the model has one more, the output layer.
    pub fn n_layer(&self) -> usize {
        self.layers.len()
    }

    /// Whether any layer has expert weights: then the fit first keeps all experts in system memory (step 6).
    pub fn is_moe(&self) -> bool {
        self.layers.iter().any(|l| l.experts > 0)
    }

    /// The user's tensor split when one was given and is not all zero (llama.cpp's `all_zero` test).
    fn user_split(&self) -> Option<&[f32]> {
        self.tensor_split
            .as_deref()
            .filter(|s| s.iter().any(|&w| w != 0.0))
    }

    /// The proportions the loader splits layers by: the user's tensor split if given, else each device's
    /// free memory (llama.cpp's `splits[i] = free`, as `float`).
    pub fn split_weights(&self) -> Vec<f32> {
        match self.user_split() {
            Some(s) => (0..self.devices.len())
                .map(|i| s.get(i).copied().unwrap_or(0.0))
                .collect(),
            None => self.devices.iter().map(|d| d.free as f32).collect(),
        }
    }

    /// `-ngl` or a tensor split was given: llama.cpp's fit may then not move layers (step 4).
    pub fn layers_forced(&self) -> bool {
        self.n_gpu_layers.is_some() || self.user_split().is_some()
    }
}
