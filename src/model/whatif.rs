//! The placement replay's result: where Ollama's layer placement puts the layers with the estimate's own
//! figures (does it reproduce the log?) and with the measured ones (what would reality have allowed?).

use serde::Serialize;

use super::device::Device;
use super::quantity::human;

/// One GPU's outcome in a replayed placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedGpu {
    pub device: Device,
    /// Free memory the placement could use.
    pub free: i64,
    pub layers: i64,
    /// Everything charged to the GPU (minimum/context, buffer layer, layers, output, projector, graph).
    pub allocation: i64,
}

/// One replayed placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub gpus: Vec<PlacedGpu>,
    /// Layers placed on GPUs, the output "layer" included (Ollama's `layers.offload`).
    pub offloaded: i64,
    /// Layers of the model, the output included (Ollama's `layers.model`).
    pub total: i64,
    /// Bytes that did not fit on any GPU (left to the CPU).
    pub overflow: i64,
}

impl Placement {
    /// Per-GPU layer counts (`layers.split`).
    pub fn split(&self) -> Vec<i64> {
        self.gpus.iter().map(|g| g.layers).collect()
    }

    pub fn fully_offloaded(&self) -> bool {
        self.offloaded >= self.total
    }

    /// GPUs that received at least one layer.
    pub fn used_gpus(&self) -> usize {
        self.gpus_with_layers().count()
    }

    /// The GPUs that received at least one layer, in order.
    pub fn gpus_with_layers(&self) -> impl Iterator<Item = &PlacedGpu> {
        self.gpus.iter().filter(|g| g.layers > 0)
    }
}

/// The figures a replay ran on, so a reader can check them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayFigures {
    /// Weights of one repeating block.
    pub layer_weights: i64,
    /// KV cache of one block.
    pub layer_kv: i64,
    pub blocks: i64,
    /// Output layer (plus, for the Ollama engine, the vision projector's weights and graph).
    pub output: i64,
    /// Charged to the first GPU (llama-engine projector weights).
    pub first_gpu_extra: i64,
    /// Compute graph charged to every GPU holding a layer when every layer is on a GPU.
    pub graph: i64,
    /// Compute graph charged instead when some layers stay on the CPU.
    pub graph_partial: i64,
    /// Per-GPU floor: Ollama's MinimumMemory in the estimate replay, the measured CUDA context in the
    /// measured one.
    pub per_gpu_floor: i64,
    /// OLLAMA_GPU_OVERHEAD.
    pub gpu_overhead: i64,
    /// Whether one layer is held back as a buffer on every GPU (the estimator does; reality does not).
    pub layer_buffer: bool,
    /// Where each figure came from, in words.
    pub from: Vec<String>,
    /// Weights and KV of each block (block 0 first) when the model's layout gives them (a GGUF file, or the
    /// log's hyperparameters for the KV); empty: every block costs `layer_weights + layer_kv`.
    #[serde(skip)]
    pub per_layer: Vec<(i64, i64)>,
}

impl ReplayFigures {
    /// Block `i`'s weights and KV.
    pub fn block_parts(&self, i: i64) -> (i64, i64) {
        match usize::try_from(i).ok().and_then(|i| self.per_layer.get(i)) {
            Some(&(w, kv)) => (w, kv),
            None => (self.layer_weights, self.layer_kv),
        }
    }

    /// What block `i` costs on a GPU.
    pub fn block_cost(&self, i: i64) -> i64 {
        match usize::try_from(i).ok().and_then(|i| self.per_layer.get(i)) {
            Some((w, kv)) => w.saturating_add(*kv),
            None => self.layer_weights.saturating_add(self.layer_kv),
        }
    }
}

/// The replay with the estimate's figures, and how it compares with what the log printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EstimateReplay {
    pub figures: ReplayFigures,
    /// The layer distribution the replay used (`round-robin` upstream, `fill-first` as the log suggests).
    pub strategy: String,
    pub placement: Placement,
    /// The log's `layers.split` equals the replay's; `None` when the log has none.
    pub split_agrees: Option<bool>,
    /// Every logged `memory.required.allocations` entry overlaps the replay's range; `None` without them.
    pub allocations_agree: Option<bool>,
    /// The placer logs allocations to compare with (Ollama's estimator does; llama.cpp's `--fit` does not), so
    /// the report says whether they agree even when the log has none.
    #[serde(skip)]
    pub logs_allocations: bool,
    /// The replay puts as many layers on GPUs as the log says (and, for `--fit`, comes to the same decision:
    /// no change, or a change); `None` when the log does not say. A split or allocation list is never called
    /// reproduced when this is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_agree: Option<bool>,
}

/// The replay with measured figures, on the fewest GPUs that hold the whole model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeasuredReplay {
    pub figures: ReplayFigures,
    pub placement: Placement,
    /// Free memory left on the tightest used GPU (negative: it does not fit).
    pub margin: i64,
    /// Whether every layer fits, in words with the figures.
    pub verdict: ReplayVerdict,
}

/// What the measured replay concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// Every layer on this many GPUs.
    Fits { gpus: usize },
    /// This many layers stay on the CPU even by the measured sizes.
    CpuOffload { layers: i64 },
}

/// The measured replay's conclusion and the sentence that states it with the figures (`fits on 1 GPU (CUDA1
/// …), 1.3 GiB to spare on the tightest`). Serialized as the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayVerdict {
    pub outcome: ReplayOutcome,
    pub text: String,
}

impl ReplayVerdict {
    /// Every layer fits on `gpus` GPUs: `fits on 1 GPU (CUDA0 17.2 GiB of 23.6 GiB), {spare}`.
    pub fn fits(placement: &Placement, gpus: usize, spare: String) -> ReplayVerdict {
        let used: Vec<String> = placement
            .gpus_with_layers()
            .map(|g| format!("{} {} of {}", g.device, human(g.allocation), human(g.free)))
            .collect();
        ReplayVerdict {
            outcome: ReplayOutcome::Fits { gpus },
            text: format!(
                "fits on {gpus} GPU{} ({}), {spare}",
                if gpus == 1 { "" } else { "s" },
                used.join("; ")
            ),
        }
    }
}

impl std::fmt::Display for ReplayVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for ReplayVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// Everything the replay found for one load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WhatIf {
    /// What-if changes applied on top of the log (`ctx 8192`, `gpus 0`), empty for a plain replay.
    pub changes: Vec<String>,
    pub estimate: Option<EstimateReplay>,
    pub measured: Option<MeasuredReplay>,
    /// `whatif --max-ctx`: the largest context that keeps every layer on the GPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ctx: Option<super::MaxContext>,
    /// The estimator family replayed with the estimate's figures (`ollama37-241a0340`, `upstream-0.7.1` …),
    /// for Ollama's estimator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The decision the logged placement hung on, with its margin across the rounding (`the last layer
    /// missed CUDA1 by …`), when the replay reproduces the logged split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hinge: Option<String>,
    /// When Ollama's estimator rules reproduce the logged split: what they charged where (not serialized; the
    /// report and the checks read it).
    #[serde(skip)]
    pub charges: Option<EstimatorCharges>,
    /// `whatif --explain`: the estimator's placement decision by decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<super::PlacementTrace>,
    /// Ollama ≥ 0.31.2 with its projector offloaded: what padding `--fit`'s margin by the projector cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_padding: Option<ProjectorPadding>,
    /// What the levers asked for (`--ubatch`, `--ngl`, `--ctx`, `--kv-type`) do to the load's own figures;
    /// empty without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<LeverEffect>,
}

/// What a `vramdiff whatif` lever does to one figure of the load, computed as the suggestions compute the same
/// setting (`src/checks/suggest/failure.rs`, `fit.rs`). Part of the JSON contract as `whatif.effects[]` (an
/// addition of schema_version 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeverEffect {
    /// The levers that change the figure (`ubatch`, `ngl`, `ctx`, `kv-type`).
    pub levers: Vec<String>,
    pub figure: EffectFigure,
    /// The device the figure is on, when it is one device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// The figure as logged (bytes; layers for `layers`), when the log gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
    /// The figure with the change.
    pub after: i64,
    /// `gpu-memory`: the free memory before the load the need is judged against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<i64>,
    /// The effect in words, with its figures and what it assumes.
    pub text: String,
}

/// Which figure a lever changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectFigure {
    /// One GPU's compute buffer (it scales with the micro-batch).
    ComputeBuffer,
    /// The compute allocation the load failed on.
    FailedAllocation,
    /// The KV cache, every layer's.
    KvCache,
    /// Layers on the GPUs (the output layer counted), of the model's.
    Layers,
    /// What one GPU needs with the layers fixed (`--ngl`), against its free memory.
    GpuMemory,
}

/// What Ollama's padding of `--fit`'s margin for an offloaded projector (⌈projector + 1 GiB⌉ per GPU instead of
/// llama.cpp's 1 GiB) cost: llama.cpp's fit replayed with the measured figures at both margins, the projector's
/// own buffers counted on its GPU in both. Part of the JSON contract as `whatif.projector_padding` (an addition
/// of schema_version 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectorPadding {
    /// The margin per GPU the fit kept: the one it printed (llama-server's own reserve for the projector
    /// included), else Ollama's ⌈projector + 1 GiB⌉ (the projector's buffers then counted on its GPU).
    pub padded_target: super::Quantity,
    /// The same without Ollama's padding: the printed target less ⌈projector + 1 GiB⌉ − 1 GiB, else llama.cpp's
    /// default 1 GiB.
    pub plain_target: super::Quantity,
    /// How the padding is known: `version`, `logged-target` or `assumed` (see `scheduler.projector.padding`).
    pub evidence: super::scheduler::PaddingEvidence,
    /// Layers on the GPUs, of `total_layers`, at each margin.
    pub layers_padded: i64,
    pub layers_plain: i64,
    pub total_layers: i64,
    /// GPUs holding layers at each margin.
    pub gpus_padded: i64,
    pub gpus_plain: i64,
    /// The memory the plain margin would place on the GPUs beyond the padded one (layers' weights and KV).
    pub moved: super::Quantity,
    /// Whether the replay at the padded margin puts as many layers on the GPUs as the log's `offloaded N/M`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agrees_with_log: Option<bool>,
}

impl ProjectorPadding {
    /// Layers the padding sent to the CPU.
    pub fn layers_lost(&self) -> i64 {
        (self.layers_plain - self.layers_padded).max(0)
    }

    /// GPUs the padding spread the model over beyond what the plain margin needs.
    pub fn gpus_added(&self) -> i64 {
        (self.gpus_padded - self.gpus_plain).max(0)
    }

    /// The padding cost nothing: the same layers on the same number of GPUs.
    pub fn cost_nothing(&self) -> bool {
        self.layers_lost() == 0 && self.gpus_added() == 0
    }
}

/// What the replayed estimator charged where, when it reproduces the logged split: the graph per GPU (a fork
/// build charges every GPU but the last a fixed 190 MiB) and the last-layer bucket against where the runner ran
/// the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimatorCharges {
    /// The family's name.
    pub family: String,
    /// The graph charged to each GPU holding layers, in the estimate's order.
    pub graph: Vec<(Device, i64)>,
    /// The last-layer bucket when the estimate booked it on another GPU than the one the runner ran the output
    /// on (the runner maps the split from blk.0 upward, the output last).
    pub bucket_moved: Option<BucketMove>,
}

/// The estimator's last-layer bucket (output, and the Ollama engine's projector) and the runner's output GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketMove {
    pub bytes: i64,
    pub booked_on: Device,
    pub runs_on: Device,
}
