//! Typed events: what one recognised log line says, independent of the dialect it was written in.

use crate::model::{BufferKind, Device, OffloadShape, Quantity, RejectionCause};

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
    /// Decided by the line's position in the load (see `load::Assembler`): after the runner reported its
    /// layers or after a `commit` load request, the summary describes what was allocated.
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
    pub ubatch_size: Option<i64>,
    pub parallel: Option<i64>,
    pub gpu_layers: Option<i64>,
    pub tensor_split: Vec<i64>,
    pub mmproj: Option<String>,
    /// `false` with `--no-mmproj-offload` (the projector stays on the CPU).
    pub projector_offload: Option<bool>,
    pub flash_attention: Option<bool>,
    pub kv_cache_type: Option<String>,
    pub kv_cache_type_v: Option<String>,
    pub split_mode: Option<String>,
    pub main_gpu: Option<i64>,
    /// `false` with `--no-mmap`.
    pub mmap: Option<bool>,
    /// `--spec-type …` or a draft model (`--model-draft`, `-md`).
    pub speculative: Option<String>,
    /// `--fit-target` in MiB.
    pub fit_target: Option<i64>,
    pub ollama_engine: bool,
    pub llama_server: bool,
    /// The command is Ollama's runner (`ollama runner`, `ollama_llama_server`), not llama-server.
    pub ollama_runner: bool,
    /// The line was cut before the command's closing quote (flags after the cut are missing).
    pub cut: bool,
    /// Ollama's version when the program's path names it (Homebrew's keg: `…/Cellar/ollama/0.17.0/bin/ollama`).
    pub version: Option<String>,
}

impl RunnerCommand {
    /// A runner started without a model: Ollama ≥ 0.12 starts such runners to discover GPUs. Not a load. A
    /// command cut short may have lost its `--model`: it is not taken for one.
    pub fn is_discovery(&self) -> bool {
        self.model.is_none() && !self.cut
    }
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
    /// `gpu memory free=` (v0.11.5+), apart from `available`.
    pub free: Option<Quantity>,
    /// PCI bus id (`pci_id=` from v0.12.4 discovery), normalised.
    pub bus_id: Option<String>,
    /// `type=iGPU`: an integrated GPU sharing system memory, whose free memory is the system's.
    pub integrated: bool,
}

/// A device as llama.cpp inventories it: `device_info:` rows and `using device … MiB free`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerDevice {
    /// The device (`CUDA0`, or the host's `CPU` row).
    pub device: Device,
    pub name: Option<String>,
    pub total: Option<Quantity>,
    pub free: Quantity,
}

/// A `print_info:` value: a count, a per-layer array (printed when layers differ, `[8, 8, 0, 8]`), or text
/// (`arch = gemma3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamValue {
    Count(u64),
    PerLayer(Vec<u64>),
    Text(String),
}

impl ParamValue {
    /// The count, when the value is one.
    pub fn count(&self) -> Option<u64> {
        match self {
            ParamValue::Count(n) => Some(*n),
            ParamValue::PerLayer(_) | ParamValue::Text(_) => None,
        }
    }
}

/// One line of llama.cpp's `--fit` phase (`common_params_fit_impl`, `common_fit_params`).
#[derive(Debug, Clone, PartialEq)]
pub enum FitLine {
    /// `fitting params to device memory ...`: every table from here to the result is a probe.
    Start,
    /// `projected to use U MiB of device memory vs. F MiB of free device memory` (or `of host memory`).
    Projection {
        used: Quantity,
        free: Quantity,
        host: bool,
    },
    /// `  - CUDA0 (NAME): T total, U used, F free vs. target of M` (several devices).
    Initial {
        device: Device,
        name: Option<String>,
        total: Option<Quantity>,
        used: Quantity,
        free: Quantity,
        target: Option<Quantity>,
    },
    /// `will leave … no changes needed` / `targets … can be met on all devices` (`change: false`), or
    /// `cannot meet free memory target(s) …, need to reduce …` (`change: true`).
    Decision {
        change: bool,
        target: Option<Quantity>,
        amount: Option<Quantity>,
    },
    /// `context size reduced from A to B [-> need N MiB less memory in total]` / `context size set by user to N
    /// -> no change`.
    Context {
        from: Option<i64>,
        /// What the reduction saves over all devices (MiB, truncated).
        less: Option<Quantity>,
        to: i64,
        by_user: bool,
    },
    /// `id=K, target=T MiB`.
    Target { id: i64, target: Quantity },
    /// `id=K, n_layer=L, n_part=P, overflow_type=…, mem= M MiB`: a test allocation's device figures.
    Probe {
        id: i64,
        layers: i64,
        partial: Option<i64>,
        mem: Quantity,
    },
    /// `set ngl_per_device[K].n_layer=L` (a probe that fits) or `ngl_per_device_high[…]` (one that does not).
    Set { id: i64, layers: i64, high: bool },
    /// `  - CUDA0 (NAME): L layers, U MiB used, F MiB free`: the fit's result for one device.
    Result {
        device: Device,
        name: Option<String>,
        layers: Option<i64>,
        used: Quantity,
        free: Option<Quantity>,
        /// `L layers ( K overflowing)`: K of the layers overflow into host memory.
        overflowing: Option<i64>,
    },
    /// `failed to fit params to free device memory: …`: the fit stopped (aborted or failed).
    Stopped {
        cause: crate::model::FitStopCause,
        value: Option<i64>,
    },
    /// `successfully fit params …` / `fitting params to free memory took N seconds`.
    Done { seconds: Option<f64> },
}

/// Estimates llama-server prints beside the fit for parts the fit does not place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideEstimate {
    /// `[mtmd] estimated worst-case memory usage of mmproj is X MiB`.
    Projector,
    /// `[spec] estimated memory usage of MTP context is X MiB`.
    Draft,
}

/// A KV or recurrent-state cache summary: `size = X MiB (C cells, L layers, …), K (f16): …, V (f16): …`.
#[derive(Debug, Clone, PartialEq)]
pub struct KvSizeLine {
    pub size: Quantity,
    pub cells: Option<i64>,
    pub layers: Option<i64>,
    pub type_k: Option<String>,
    pub type_v: Option<String>,
    /// A recurrent state (`llama_memory_recurrent`, R/S) rather than an attention KV cache.
    pub recurrent: bool,
    /// The streams the cells are per (`2/2 seqs`: one cache of `cells` per sequence when not unified).
    pub streams: Option<i64>,
    /// The sliding-window cache of a pair (`creating SWA KV cache` just before it): its cells are the
    /// window's, not the context's. Set by the load from the line before.
    pub swa: Option<bool>,
}

/// The `estimate` line's fields, by canonical key.
#[derive(Debug, Clone, Default)]
pub struct EstimateLine {
    pub form: OffloadShape,
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
    /// `source=file:line` (the estimator build's fingerprint).
    pub source_position: Option<String>,
    /// The date of `time=` (`YYYY-MM-DD`).
    pub logged_on: Option<String>,
}

/// A row of llama.cpp's memory breakdown table.
#[derive(Debug, Clone)]
pub struct BreakdownLine {
    /// The device (`Host` and host buffer types such as `CPU_REPACK` are the host).
    pub device: Device,
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

/// What one of llama-server's start lines says (each field only where that line prints it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlamaServerStart {
    /// The build, as llama.cpp prints it: `b9026-a817a22bc`, `b0-unknown`, `b1 (d222767c7)`.
    pub build: Option<String>,
    /// The model file being loaded.
    pub model: Option<String>,
    /// `verbosity = N`: llama-server prints its memory lines only at 4 (`-lv 4`).
    pub verbosity: Option<i64>,
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
    /// A llama.cpp program's own command line, pasted with its log or logged by a wrapper (`$ llama-server -m
    /// … -c 8192`): the settings the user chose, and no sign of Ollama.
    CommandLine(Box<RunnerCommand>),
    /// `loading model "model layers"=N requested=N` (v0.11.5+) or `loading model via llama-server model=…`
    /// (v0.30+): a load's layout phase begins.
    LoadingModel {
        layers: Option<i64>,
        requested: Option<i64>,
        model: Option<String>,
    },
    /// llama-server's own start (`srv  llama_server: initializing`, `srv init: loading model`,
    /// `build_info: b9026-…`, `common_params_print_info: build N (…) with …`, its verbosity, `srv load_model:
    /// loading model '…'`): a run of llama.cpp's server begins, alone or under Ollama; each line gives what it
    /// says.
    LlamaServerStart(Box<LlamaServerStart>),
    /// The runner's `load request` (`fit`, `alloc`, `commit`).
    LoadRequest(Box<LoadRequest>),
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
        device: Device,
        size: Quantity,
        phase: SummaryPhase,
    },
    /// `msg="total memory" size=…`.
    MemoryTotal { size: Quantity, phase: SummaryPhase },
    /// The header of a memory breakdown table: a new table begins.
    BreakdownHeader,
    /// A device row of the memory breakdown table.
    Breakdown(Box<BreakdownLine>),
    /// A line of the `--fit` phase.
    Fit(Box<FitLine>),
    /// llama.cpp's device inventory: `device_info:` rows, `using device CUDA0 (…) - N MiB free`.
    RunnerDevice(Box<RunnerDevice>),
    /// llama-server's own estimate of the projector or of a speculative draft.
    SideEstimate { what: SideEstimate, size: Quantity },
    /// Where clip runs: `CLIP using CPU backend`, `CLIP using CUDA0 backend`.
    ProjectorBackend { device: Device },
    /// Metal's budget and what the process allocated against it: `recommendedMaxWorkingSetSize = X MB`,
    /// `allocated buffer, size = S MiB, ( current / budget )`, and the warning `current allocated size is
    /// greater than the recommended max working set size`.
    MetalWorkingSet {
        budget: Option<Quantity>,
        allocated: Option<Quantity>,
        exceeded: bool,
    },
    /// `creating MTP draft context …`: the buffers that follow belong to the speculative draft's own context.
    DraftContext,
    /// Ollama decided to keep the projector off the GPU (`disabling multimodal projector offload`).
    ProjectorOffloadDisabled { reason: Option<String> },
    /// A GPU discovery found and rejected (`NVIDIA driver too old`, too little memory).
    GpuRejected {
        name: String,
        reason: String,
        cause: RejectionCause,
    },
    /// A KV (or recurrent state) cache summary line.
    KvSize(Box<KvSizeLine>),
    /// A model hyperparameter from `print_info:` (`n_layer`, `n_head_kv`, `n_swa`, `arch`, …).
    ModelParam { key: String, value: ParamValue },
    /// `llama_model_loader: loaded meta data …`: llama.cpp is reading a model (a weak sign of the llama
    /// engine: the server's vocab-only load prints it too).
    ModelLoader,
    /// Something went wrong and was recovered (`failed to allocate … of pinned memory`, then a host
    /// buffer): worth a note, not a failure.
    Recovered { message: String },
    /// `kv_size = 2048, offload = 1, type_k = 'f16', type_v = 'f16'`.
    KvParams {
        cells: Option<i64>,
        type_k: Option<String>,
    },
    /// `llama_kv_cache_iswa: creating non-SWA KV cache` / `creating     SWA KV cache`: which of a
    /// sliding-window model's two caches the next KV lines describe.
    KvCacheCreated { swa: bool },
    /// A context parameter llama.cpp prints when it creates the context.
    ContextParam(ContextParam),
    /// Projector (clip/mllama) sizes printed in MiB-as-MB.
    ProjectorSize { graph: bool, size: Quantity },
    /// `llama_model_load: vocab only - skipping tensors`.
    VocabOnly,
    /// `llama runner started in N seconds` / `llama-server started`.
    RunnerStarted,
    /// An allocation failure or a crashed runner.
    LoadFailed(Box<FailureLine>),
    /// The runtime's own recovery from a failed layout (`model layout did not fit, applying backoff`, Ollama
    /// 0.11.5+): the failure before it is not the load's end; the load goes on with a smaller layout.
    LayoutBackoff { backoff: Option<String> },
    /// The model header (`architecture=gemma3`).
    ModelHeader { architecture: Option<String> },
    /// A vLLM or SGLang memory line, with its rank (`parse::serving`).
    Serving(Box<super::serving_line::ServingEvent>),
    /// Memory a server takes while it serves: prompt cache, checkpoints, slots, engine stats
    /// (`parse::serving_memory`).
    ServingMemory(Box<super::serving_memory_line::ServingMemoryLine>),
    /// A decision of Ollama's scheduler before llama-server starts, or evidence beside it (`ollama ps`).
    Scheduler(Box<SchedulerLine>),
    /// llama.cpp's `file size = X GiB`: the model file, the first term of Ollama's prediction.
    FileSize(Quantity),
    /// A line of Ollama's llama-server wrapper (`llm/llama_server.go`, 0.30 and later) that carries no figure
    /// (`waiting for llama-server …`): a sign that Ollama, not a user, started the llama-server of the open load.
    OllamaLlamaServer,
    /// A line only one runtime prints (`docs/log-formats.md` §0.1): the load's runtime and engine when nothing
    /// stronger says.
    RuntimeSign(RuntimeSign),
    /// A line we recognise and deliberately do not use.
    Known,
}

/// Who printed a line only one runtime prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedRuntime {
    /// llama.cpp's server or its `common` library: llama.cpp's `--fit` placed the layers.
    LlamaServer,
    /// Ollama's server or runner (Go slog): its placer is decided by the load's other lines.
    Ollama,
    /// Ollama ≥ 0.30's wrapper around llama-server.
    OllamaLlamaServer,
}

/// A runtime's signature line: the runtime, and the engine when the line tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSign {
    pub runtime: SignedRuntime,
    pub engine: crate::model::Engine,
}

/// What a `load request` asks of the runner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RequestOperation {
    /// Size the layout without allocating (a dry run).
    Fit,
    /// Allocate the layout (it may still fail, and the scheduler try another).
    Alloc,
    /// Load the weights into the allocated layout: the placement that was used.
    Commit,
    /// An operation vramdiff does not read (`close`), or none printed.
    #[default]
    Other,
}

/// The Ollama engine runner's `load request` (`runner.go`: a Go `%+v` struct), read into what vramdiff uses.
/// Ollama ≥ 0.11.5 sends `fit`, then `alloc`, then `commit`; the commit is the placement that was loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadRequest {
    /// `Operation:fit`, `alloc`, `commit`.
    pub operation: RequestOperation,
    /// `KvSize`: the context, in cells, over all parallel sequences.
    pub kv_size: Option<i64>,
    /// `BatchSize`.
    pub batch_size: Option<i64>,
    /// `Parallel`.
    pub parallel: Option<i64>,
    /// `GPULayers`: the number of layers on GPUs (the per-GPU shares summed).
    pub gpu_layers: Option<i64>,
    /// `FlashAttention` (`true`/`Enabled`, `false`/`Disabled`).
    pub flash_attention: Option<bool>,
    /// `KvCacheType`, when not empty.
    pub kv_cache_type: Option<String>,
}

/// A context parameter llama.cpp prints when it creates the context
/// (`llama_context: n_ctx = 8192`, `llama_new_context_with_model: flash_attn = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextParam {
    /// `n_ctx`: the context, in cells, over all sequences.
    Ctx(i64),
    /// `pipeline parallelism enabled (n_copies=N)`: the scheduler keeps N copies of the graph's buffers per
    /// device (several GPUs with every layer offloaded), so the compute buffers are N times one graph's.
    PipelineCopies(i64),
    /// `n_batch`.
    Batch(i64),
    /// `n_ubatch`.
    Ubatch(i64),
    /// `n_seq_max`: parallel sequences.
    SeqMax(i64),
    /// `n_parallel is set to auto, using n_parallel = N`: llama-server chose N slots itself (no `-np`).
    ParallelAuto(i64),
    /// `flash_attn`: `None` for `auto` (the line does not say what was chosen).
    FlashAttention(Option<bool>),
    /// `n_ctx_seq` / `n_ctx_per_seq`: one sequence's share of `n_ctx` (recognised; `n_ctx` is what is used).
    CtxPerSequence(i64),
    /// `kv_unified`: one KV stream shared by every sequence (`true`), or one stream of `n_ctx_seq` cells per
    /// sequence (`false`, llama-server's default since the `llama_context` era).
    KvUnified(bool),
}

pub use crate::model::RetryKind;

/// A row of a pasted `ollama ps` table (`NAME ID SIZE PROCESSOR CONTEXT UNTIL`).
#[derive(Debug, Clone, PartialEq)]
pub struct PsTableRow {
    pub name: String,
    /// SIZE, in Ollama's decimal units (`12 GB` is 12 × 10⁹ bytes, ± half the last digit).
    pub size: Quantity,
    /// PROCESSOR as printed (`100% GPU`, `48%/52% CPU/GPU`).
    pub processor: String,
    /// The share on GPUs, in percent, read from PROCESSOR.
    pub gpu_percent: Option<i64>,
    pub context: Option<i64>,
}

/// One scheduler line, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum SchedulerLine {
    /// `msg="server config" env="map[…]"`: every variable Ollama read, with its value (empty when unset).
    ServerConfig(Vec<(String, String)>),
    /// `msg="vram-based default context" total_vram=… default_num_ctx=…`.
    DefaultContext {
        total_vram: Option<Quantity>,
        num_ctx: Option<i64>,
    },
    /// `msg="using llama-server for model"`: the scheduler takes the llama-server path for this model.
    UsingLlamaServer,
    /// `msg="selecting single GPU for llama-server model"` (or `selecting requested single GPU`, when the client
    /// sent `main_gpu`): the prediction fitted one GPU, which alone goes to llama-server.
    SingleGpu {
        requested: Option<i64>,
        main_gpu: Option<i64>,
        id: Option<String>,
        name: Option<String>,
        description: Option<String>,
        predicted: Option<Quantity>,
        available: Option<Quantity>,
    },
    /// `requested main_gpu is outside the selected GPU group; passing value through to llama-server`.
    MainGpuPassedThrough,
    /// `msg="selecting GPU backend for llama-server model" library=… gpu_count=… available_gpu_count=…`.
    Backend {
        library: Option<String>,
        gpu_count: Option<i64>,
        available_gpu_count: Option<i64>,
    },
    /// `predicted to exceed available memory, evicting` (`evicting: true`) or `fits alongside existing models`.
    Eviction {
        evicting: bool,
        predicted: Option<Quantity>,
        predicted_num_ctx: Option<i64>,
        available: Option<Quantity>,
        gpu_free: Option<Quantity>,
        system_free: Option<Quantity>,
    },
    /// `model requires more gpu memory than is currently available, evicting a model to make space "loaded
    /// layers"=N` (the llama engine's layout before Ollama 0.30): only N layers fit beside the loaded models, so
    /// the scheduler evicts one and lays the same load out again.
    MakeSpace { loaded_layers: Option<i64> },
    /// `disabling mmap for llama-server load …` with its reason (`cpu`, `windows_cuda`, …, or host memory
    /// pressure).
    MmapDisabled { reason: Option<String> },
    /// `msg="invalid llama-server fit target" env=LLAMA_ARG_FIT_TARGET value=…`.
    InvalidFitTarget { value: Option<String> },
    /// `llama-server load failed; … retrying once` and the projector retry.
    Retry {
        kind: RetryKind,
        old_num_ctx: Option<i64>,
        new_num_ctx: Option<i64>,
        error: Option<String>,
    },
    /// `runtime OOM detected; expiring loaded models …`.
    RuntimeOom,
    /// `msg="predicted usage exceeds VRAM" gpu=… totalMemory=… predicted=…`.
    PredictedExceeds {
        gpu: Option<String>,
        total: Option<Quantity>,
        predicted: Option<Quantity>,
    },
    /// `llama-server VRAM tracking: no per-device buffer sizes were parsed …`: `ollama ps` falls back to the
    /// file size.
    NoBufferSizes,
    /// llama.cpp's `warn: LLAMA_ARG_X environment variable is set, but will be overwritten by command line
    /// argument --x`.
    EnvOverwritten { variable: String, flag: String },
    /// The header of a pasted `ollama ps` table.
    PsHeader,
    /// A row of a pasted `ollama ps` table.
    PsRow(PsTableRow),
}

/// One failure line: its message, why it says the load failed, and the allocation it names.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureLine {
    pub message: String,
    pub out_of_memory: bool,
    pub cause: crate::model::FailureCause,
    /// The allocation's size (`failed to allocate Vulkan0 buffer of size 4757131264`, `allocating 7577.60 MiB`).
    pub size: Option<Quantity>,
    /// The device it was asked of (`Vulkan0`; `on device 0` with the backend its function names).
    pub device: Option<crate::model::Device>,
    /// The line is printed only by llama.cpp's own programs (`common_init_from_params`, `main: error: unable to
    /// load model`), never by Ollama's runner: llama.cpp ran on its own.
    pub standalone: bool,
}
