//! One model load as vramdiff understands it: where it is in the log, what the runner was asked to do, what
//! Ollama estimated, and what was actually allocated.
//!
//! These types are the public JSON contract (schema_version 1, see `report::json`). Field names are stable;
//! new fields may be added, none renamed or removed.

use serde::Serialize;

use super::device::Device;
use super::finding::{Finding, Suggestion};
use super::observed::ObservedRow;
use super::quantity::Quantity;
use super::reconciled::{ComponentRow, DeviceRow};
use super::whatif::WhatIf;

/// Where a load sits in its input.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadSource {
    pub path: String,
    pub first_line: u64,
    pub last_line: u64,
    /// The log starts or ends in the middle of this load (no start line seen, or cut before it finished).
    pub partial: bool,
    /// Why the load is partial, in words; empty when it is not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial_reasons: Vec<String>,
}

/// Which runner executed the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// llama.cpp (Ollama's llama runner, or plain llama-server).
    Llama,
    /// Ollama's own Go engine (`--ollama-engine`).
    Ollama,
    #[default]
    Unknown,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Llama => "llama",
            Engine::Ollama => "ollama",
            Engine::Unknown => "unknown",
        }
    }
}

/// The model file the load used.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelRef {
    pub path: Option<String>,
    pub blob: Option<String>,
    /// Architecture from the model header (`architecture=gemma3`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Repeating layers (`print_info: n_layer`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_count: Option<i64>,
}

/// Who placed the layers, which decides what the figures mean and which settings reach the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Era {
    /// Ollama's own estimator and scheduler (≤ v0.24): `msg=offload`, `load request`, the memory summary;
    /// knobs such as `OLLAMA_GPU_OVERHEAD` and `num_gpu` reach it.
    Ollama,
    /// llama-server with llama.cpp's `--fit` (Ollama ≥ v0.30, or llama-server run by hand): fit probes, the
    /// plan and the breakdown table; `OLLAMA_GPU_OVERHEAD` no longer reaches the placement.
    LlamaServer,
    #[default]
    Unknown,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Ollama => "ollama",
            Era::LlamaServer => "llama-server",
            Era::Unknown => "unknown",
        }
    }
}

/// Runner settings, from whichever line of the era carries them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    /// Total context as the runner prints it (num_ctx × parallel).
    pub ctx_size: Option<i64>,
    pub batch_size: Option<i64>,
    pub parallel: Option<i64>,
    pub gpu_layers: Option<i64>,
    /// K cache type (`q8_0`); the V type is `kv_cache_type_v` when it differs or is printed apart.
    pub kv_cache_type: Option<String>,
    pub flash_attention: Option<bool>,
    /// Physical batch (`-ub`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ubatch_size: Option<i64>,
    /// V cache type (`--cache-type-v`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_type_v: Option<String>,
    /// Whether the vision projector is offloaded to a GPU: `false` with `--no-mmproj-offload` or when Ollama
    /// disabled it; `null` when the log does not say (or the model has no projector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_offload: Option<bool>,
    /// Why the projector was kept off the GPU, as Ollama said (`limited-vram`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_offload_reason: Option<String>,
    /// The line that decided `projector_offload` (Ollama's `disabling …` line, else the command line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_offload_line: Option<u64>,
    /// `--split-mode` (`none` when Ollama's `main_gpu` pins the model to one GPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split_mode: Option<String>,
    /// `--main-gpu` (Ollama's `main_gpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_gpu: Option<i64>,
    /// `false` with `--no-mmap` (weights copied into memory rather than mapped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mmap: Option<bool>,
    /// Speculative decoding (`--spec-type draft-mtp`, or a draft model), when configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<String>,
    /// The `--fit` free-memory target per device (`--fit-target`), when the command sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit_target: Option<Quantity>,
}

/// A GPU the log describes for this load.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Gpu {
    /// `GPU-<uuid>` where printed, else the index as text.
    pub id: String,
    pub library: Option<String>,
    pub name: Option<String>,
    pub compute: Option<String>,
    /// Driver version as discovery printed it (`12.7`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Runner variant (`v12`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub total: Option<Quantity>,
    /// What Ollama's scheduler may use: free − minimum − `OLLAMA_GPU_OVERHEAD` (`gpu memory available=`), or
    /// discovery's `available` in older eras. Never the same figure as `free`.
    pub available: Option<Quantity>,
    /// Free memory as measured at load time (`gpu memory free=`, llama.cpp's `device_info` / `using device
    /// … MiB free`), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<Quantity>,
    /// PCI bus id (`pci_id=`, v0.12.4+), normalised like nvidia-smi's; joins the GPU to nvidia-smi captures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus_id: Option<String>,
    /// Line the GPU was described on.
    pub line: u64,
}

/// Ollama's layer counts from the estimate line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Layers {
    pub requested: Option<i64>,
    pub model: Option<i64>,
    pub offload: Option<i64>,
    /// Per-GPU layer counts (`layers.split`); empty when the line leaves it empty.
    pub split: Vec<i64>,
}

/// A GPU the server found and did not use (an old driver, too little memory).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RejectedGpu {
    /// The GPU's name or id as the line printed it.
    pub name: String,
    /// Why, in the log's words plus its figures (`NVIDIA driver too old: driver 546, 550 or newer required`).
    pub reason: String,
    pub line: u64,
}

/// What llama.cpp's `--fit` did before loading (llama-server era).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FitSummary {
    /// `no-change` (every device kept its margin: the user's settings are the plan), `changed` (layers or
    /// context were moved to meet the margins), or `unknown` (the log stops before the fit decided).
    pub outcome: String,
    /// The free-memory target per device (`vs. target of 1024`, `cannot meet free memory target of 1024 MiB`).
    pub target: Option<Quantity>,
    /// How much the first projection had to shed (`need to reduce device memory by 133 MiB`).
    pub reduce_by: Option<Quantity>,
    /// The context the fit settled on, when it printed one (`context size reduced from A to B`).
    pub context: Option<i64>,
    /// Whether the user's context was kept (`context size set by user to N -> no change`).
    pub context_by_user: Option<bool>,
    /// Breakdown tables printed while fitting (each a test allocation, none of them memory in use).
    pub probes: u32,
    /// Line of the table chosen as the plan (the probe matching the result, or the first table).
    pub plan_line: Option<u64>,
    /// `fitting params to free memory took N seconds`.
    pub seconds: Option<f64>,
    /// Free memory per device as the fit measured it (MiB, truncated), in device order.
    pub free: Vec<DeviceFree>,
    pub lines: Vec<u64>,
}

/// A device's free memory as llama.cpp measured it before loading.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceFree {
    pub device: Device,
    pub name: Option<String>,
    pub total: Option<Quantity>,
    pub free: Quantity,
    pub line: u64,
}

/// One device's share of a per-device estimate.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceEstimate {
    pub device: Device,
    pub weights: Option<Quantity>,
    pub kv: Option<Quantity>,
    pub graph: Option<Quantity>,
    pub total: Option<Quantity>,
    pub layers: Option<i64>,
}

impl DeviceEstimate {
    /// A device's share with nothing known yet.
    pub fn new(device: Device) -> DeviceEstimate {
        DeviceEstimate {
            device,
            weights: None,
            kv: None,
            graph: None,
            total: None,
            layers: None,
        }
    }
}

/// What Ollama (or llama-server's `--fit`) estimated before loading.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Estimate {
    pub library: Option<String>,
    pub layers: Layers,
    pub available: Vec<Quantity>,
    pub gpu_overhead: Option<Quantity>,
    pub required_full: Option<Quantity>,
    pub required_partial: Option<Quantity>,
    pub kv: Option<Quantity>,
    pub allocations: Vec<Quantity>,
    pub weights_total: Option<Quantity>,
    pub weights_repeating: Option<Quantity>,
    pub weights_nonrepeating: Option<Quantity>,
    pub graph_full: Option<Quantity>,
    pub graph_partial: Option<Quantity>,
    pub projector_weights: Option<Quantity>,
    pub projector_graph: Option<Quantity>,
    /// llama-server's own projector estimate, weights and compute together (`[mtmd] estimated worst-case
    /// memory usage of mmproj is X MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_total: Option<Quantity>,
    /// The device the estimate charges `projector_total` to (`CPU` when the projector is not offloaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_device: Option<Device>,
    /// The speculative draft's context (`[spec] estimated memory usage of MTP context is X MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_total: Option<Quantity>,
    /// What `--fit` did (llama-server era).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitSummary>,
    pub per_device: Vec<DeviceEstimate>,
    /// Which line shape the estimate came from: `offload-e4` … (Ollama's estimate line), `memory-summary`,
    /// `fit-plan` (the `--fit` table chosen as the plan), `fit-probe` (the last probe the fit accepted, the
    /// log stopping before its result), `fit-result` (the fit's per-device result lines, no matching table),
    /// `fit-projection` (the projection line alone), `breakdown-projection` (a table before any decision).
    pub form: String,
    /// How `memory.weights.*` must be read for this era (`blocks+kv` before v0.6.1, `blocks` after).
    pub weights_semantics: String,
    /// Line numbers the estimate was read from.
    pub lines: Vec<u64>,
}

/// What kind of buffer an allocation line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferKind {
    Model,
    Kv,
    Compute,
    Output,
    Rs,
    Lora,
}

impl BufferKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BufferKind::Model => "model",
            BufferKind::Kv => "kv",
            BufferKind::Compute => "compute",
            BufferKind::Output => "output",
            BufferKind::Rs => "rs",
            BufferKind::Lora => "lora",
        }
    }
}

/// One allocation the runner reported.
#[derive(Debug, Clone, Serialize)]
pub struct Buffer {
    /// Device the memory is on: a GPU (`CUDA0`) or the host (`CPU`).
    pub device: Device,
    /// The buffer name as printed (`CUDA_Host`, `CPU_Mapped`, `Metal_Mapped`).
    pub buffer: String,
    pub kind: BufferKind,
    pub host: bool,
    pub size: Quantity,
    pub line: u64,
    /// The printing function (`load_tensors`, `llama_context`, `ollama-engine`, `clip`).
    pub component: String,
    /// True when the buffer belongs to the vision projector (clip/mllama) rather than the text model.
    pub projector: bool,
    /// Other values the same (device, kind) printed in the same reserve round; the size is the last one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<Quantity>,
}

/// One device row of llama.cpp's memory breakdown table (MiB integers).
#[derive(Debug, Clone, Serialize)]
pub struct BreakdownRow {
    pub device: Device,
    /// The device description in parentheses, when printed (`RTX 5090`).
    pub name: Option<String>,
    pub total: Option<Quantity>,
    pub free: Option<Quantity>,
    #[serde(rename = "self")]
    pub self_: Quantity,
    pub model: Quantity,
    pub context: Quantity,
    pub compute: Quantity,
    /// Signed bytes; may be negative (a projection larger than the card) and is null when the printed value
    /// was an unsigned underflow.
    pub unaccounted: Option<i64>,
    /// The printed `unaccounted` could not be a real amount (negative or underflowed).
    pub unaccounted_suspect: bool,
    pub line: u64,
}

/// One KV cache (or recurrent state) as its summary line describes it: the geometry behind the KV buffers.
#[derive(Debug, Clone, Serialize)]
pub struct KvCache {
    pub size: Quantity,
    /// Token cells (the context it was sized for; a sliding-window cache has fewer).
    pub cells: Option<i64>,
    pub layers: Option<i64>,
    pub type_k: Option<String>,
    pub type_v: Option<String>,
    /// A recurrent state (R/S) of a hybrid model, not an attention KV cache: it does not grow with context.
    pub recurrent: bool,
    pub line: u64,
}

/// What the runner actually allocated.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Actual {
    pub buffers: Vec<Buffer>,
    pub breakdown: Vec<BreakdownRow>,
    pub offloaded_layers: Option<i64>,
    pub total_layers: Option<i64>,
    pub failed: bool,
    /// The failure message, when the load failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Where the buffers came from: `llama.cpp`, `ollama-engine`, `memory-summary`, `breakdown`.
    pub sources: Vec<String>,
    /// The runner's own total (`msg="total memory"` after the load), when printed.
    pub reported_total: Option<Quantity>,
    /// Where the vision projector ran, as the runner said (`CLIP using CPU backend` → `CPU`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_device: Option<Device>,
    /// The line that said where the projector ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_device_line: Option<u64>,
    /// The KV caches' summary lines (sizes, cells, layers, types).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kv_caches: Vec<KvCache>,
}

/// A load, reconciled.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Load {
    pub source: LoadSource,
    pub engine: Engine,
    /// Who placed the layers: Ollama's estimator or llama.cpp's `--fit`.
    pub era: Era,
    pub model: ModelRef,
    pub settings: Settings,
    pub gpus: Vec<Gpu>,
    /// GPUs the server found and rejected (driver too old, too little memory).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected_gpus: Vec<RejectedGpu>,
    pub estimate: Option<Estimate>,
    pub actual: Actual,
    pub components: Vec<ComponentRow>,
    pub devices: Vec<DeviceRow>,
    /// The load's GPUs as an nvidia-smi/rocm-smi capture saw them; empty without a capture.
    pub observed: Vec<ObservedRow>,
    /// What vramdiff concludes, most severe first.
    pub findings: Vec<Finding>,
    /// The placement replay; `null` when the log lacks the figures it needs.
    pub whatif: Option<WhatIf>,
    /// Settings to try, with their expected effect.
    pub suggestions: Vec<Suggestion>,
    /// Ollama's version when the log printed it (`Listening on … (version 0.9.6)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_version: Option<String>,
    /// Things vramdiff noticed while reading this load that a reader should know (duplicate lines, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
