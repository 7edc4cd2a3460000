//! Typed events: what one recognised log line says, independent of the dialect it was written in.

use crate::model::{BufferKind, Quantity};

/// An event with the line it came from.
#[derive(Debug, Clone)]
pub struct Event {
    pub line: u64,
    /// The grammar rule that recognised the line.
    pub rule: std::sync::Arc<str>,
    pub kind: EventKind,
}

/// Which side of the comparison a per-device memory summary line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPhase {
    /// Decided by the line's position in the load (see `load::assemble`).
    ByPosition,
    Estimate,
    Actual,
}

/// Which part of memory a per-device summary line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPart {
    Weights,
    Kv,
    Graph,
}

/// The runner command line's memory-relevant flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunnerCommand {
    pub model: Option<String>,
    pub ctx_size: Option<i64>,
    pub batch_size: Option<i64>,
    pub parallel: Option<i64>,
    pub gpu_layers: Option<i64>,
    pub tensor_split: Vec<i64>,
    pub mmproj: Option<String>,
    pub flash_attention: Option<bool>,
    pub kv_cache_type: Option<String>,
    pub ollama_engine: bool,
    pub llama_server: bool,
}

/// A GPU description from discovery or from the runner's device list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuInfo {
    pub id: Option<String>,
    pub index: Option<i64>,
    pub library: Option<String>,
    pub name: Option<String>,
    pub compute: Option<String>,
    pub driver: Option<String>,
    pub variant: Option<String>,
    pub total: Option<Quantity>,
    pub available: Option<Quantity>,
    /// PCI bus id (`pci_id=` from v0.12.4 discovery), normalised.
    pub bus_id: Option<String>,
}

/// The `estimate` line's fields, by canonical key.
#[derive(Debug, Clone, Default)]
pub struct EstimateLine {
    pub form: String,
    pub library: Option<String>,
    pub requested: Option<i64>,
    pub model_layers: Option<i64>,
    pub offload: Option<i64>,
    pub split: Vec<i64>,
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
    /// The line was cut before its end (fields after the cut are missing).
    pub truncated: bool,
}

/// A row of llama.cpp's memory breakdown table.
#[derive(Debug, Clone)]
pub struct BreakdownLine {
    pub device: String,
    pub name: Option<String>,
    pub total: Option<Quantity>,
    pub free: Option<Quantity>,
    pub self_: Quantity,
    pub model: Quantity,
    pub context: Quantity,
    pub compute: Quantity,
    pub unaccounted: Option<i64>,
    pub unaccounted_suspect: bool,
}

/// What a line says.
#[derive(Debug, Clone)]
pub enum EventKind {
    /// `Listening on … (version X)`: a server (re)start.
    ServerStart { version: Option<String> },
    /// `inference compute`: a GPU the server discovered.
    InferenceCompute(GpuInfo),
    /// `gpu memory`: a GPU's free memory at load time.
    GpuMemory(GpuInfo),
    /// Ollama's single-line estimate (`offload to …`, `msg=offload`, the eviction copy).
    Estimate(Box<EstimateLine>),
    /// `starting llama server` / `starting runner` / `starting llama-server`.
    RunnerStart(Box<RunnerCommand>),
    /// `loading model "model layers"=N requested=N`.
    LoadingModel {
        layers: Option<i64>,
        requested: Option<i64>,
    },
    /// The runner's `load request` (`fit`, `alloc`, `commit`).
    LoadRequest {
        operation: String,
        fields: Vec<(String, String)>,
    },
    /// `starting ollama engine` / `starting go runner`.
    EngineStart { ollama: bool },
    /// `Device 0: Tesla K80, compute capability 3.7, …`.
    CudaDevice(GpuInfo),
    /// `offloaded N/M layers to GPU`.
    Offloaded { done: i64, total: i64 },
    /// A llama.cpp buffer line.
    Buffer {
        component: String,
        buffer: String,
        kind: BufferKind,
        size: Quantity,
        projector: bool,
    },
    /// Ollama engine `msg="model weights" buffer=…` (kind model) or
    /// `msg="compute graph" backend=… buffer_type=…` (kind compute).
    EngineBuffer {
        buffer: String,
        kind: BufferKind,
        size: Quantity,
    },
    /// `msg="model weights"|"kv cache"|"compute graph" device=… size=…`.
    MemorySummary {
        part: SummaryPart,
        device: String,
        size: Quantity,
        phase: SummaryPhase,
    },
    /// `msg="total memory" size=…`.
    MemoryTotal { size: Quantity, phase: SummaryPhase },
    /// A device row of the memory breakdown table.
    Breakdown(Box<BreakdownLine>),
    /// `common_params_fit_impl: projected to use N MiB of device memory vs. M MiB of free device memory`.
    FitProjection { used: Quantity, free: Quantity },
    /// `common_params_fit_impl:   - CUDA0 (NAME): 42 layers,   5658 MiB used,   1968 MiB free`.
    FitDevice {
        device: String,
        layers: Option<i64>,
        used: Quantity,
        free: Option<Quantity>,
    },
    /// `kv_size = 2048, offload = 1, type_k = 'f16', type_v = 'f16'`.
    KvParams {
        cells: Option<i64>,
        type_k: Option<String>,
    },
    /// A context parameter: `n_ctx`, `n_batch`, `n_seq_max`, `flash_attn`.
    ContextParam { key: String, value: String },
    /// Projector (clip/mllama) sizes printed in MiB-as-MB.
    ProjectorSize { graph: bool, size: Quantity },
    /// `llama_model_load: vocab only - skipping tensors`.
    VocabOnly,
    /// `llama runner started in N seconds` / `llama-server started`.
    RunnerStarted,
    /// An allocation failure or a crashed runner.
    LoadFailed {
        message: String,
        out_of_memory: bool,
    },
    /// The model header (`architecture=gemma3`).
    ModelHeader { architecture: Option<String> },
    /// A line we recognise and deliberately do not use.
    Known,
}
