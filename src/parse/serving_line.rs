//! What one vLLM or SGLang memory line says (`docs/log-formats.md` §8), as typed data: the event the
//! builders of `parse::serving` make and `load::serving` reads. Kept apart from the builders so `event` can
//! name it without an import cycle.

use crate::model::Quantity;

/// A vLLM or SGLang memory line and the rank its prefix named (`TP1`, `DP1_TP1_EP3`, `pid1786`), if any.
#[derive(Debug, Clone, PartialEq)]
pub struct ServingEvent {
    pub rank: Option<String>,
    pub line: ServingLine,
}

/// Figures of vLLM's memory profile, as far as one line gives them (the multi-line block of late 2024 gives
/// one per line; the one-line forms several).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProfileFigures {
    /// `total_gpu_memory`.
    pub total: Option<Quantity>,
    /// `gpu_memory_utilization`.
    pub utilization: Option<f64>,
    /// What the instance can use: total × utilization.
    pub budget: Option<Quantity>,
    pub weights: Option<Quantity>,
    pub non_torch: Option<Quantity>,
    pub activation: Option<Quantity>,
    /// `Estimated CUDA graph memory: X GiB total` (≥ 0.21).
    pub graph_estimate: Option<Quantity>,
    /// What the budget leaves for the KV cache.
    pub kv: Option<Quantity>,
}

/// Why a vLLM or SGLang start failed, as its line says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServingFailure {
    /// `No available memory for the cache blocks`.
    NoCacheMemory,
    /// `The model's max seq len (L) is larger than the maximum number of tokens that can be stored in KV
    /// cache (T)`.
    MaxLenOverKv {
        len: i64,
        tokens: i64,
        /// The newer wording's KV cache one request of the max length needs, and the KV memory available.
        needed: Option<Quantity>,
        available: Option<Quantity>,
    },
    /// `Free memory on device (F/T GiB) on startup is less than desired GPU memory utilization (U, B GiB)`.
    FreeBelowBudget {
        free: Quantity,
        total: Quantity,
        utilization: f64,
        budget: Quantity,
    },
    /// PyTorch's allocator failed (`CUDA out of memory. Tried to allocate X GiB. GPU 0 has a total capacity
    /// of T GiB of which F GiB is free. … Of the allocated memory A GiB is allocated by PyTorch, and R GiB is
    /// reserved by PyTorch but unallocated`; `HIP out of memory` on ROCm), or SGLang's capture wrapping it.
    OutOfMemory(TorchOom),
    /// `EngineCore failed to start.`: the cause is in the lines before it.
    EngineFailed,
    /// A rank printed a Python traceback (`Traceback (most recent call last):`): it crashed, for a reason its
    /// lines say (not necessarily memory).
    Crashed,
}

/// vLLM's `--kv-cache-memory` advisory (`Free memory on device (F/T GiB) on startup …`): free and total at
/// startup, the budget, what each part used and the KV sizes to pin (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvAdvisory {
    pub free: Quantity,
    pub total: Quantity,
    pub utilization: f64,
    pub budget: Quantity,
    pub weights: Option<Quantity>,
    pub activation: Option<Quantity>,
    pub non_torch: Option<Quantity>,
    pub graph: Option<Quantity>,
    pub fit_kv: Option<i64>,
    pub full_kv: Option<i64>,
    pub current_kv: Option<i64>,
}

/// PyTorch's out-of-memory figures, as far as its message gives them (`T − F − A − R` is memory outside this
/// process's allocator: non-torch memory and other processes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TorchOom {
    /// What the failed allocation asked for.
    pub tried: Option<Quantity>,
    /// The GPU's total capacity and what was free then.
    pub total: Option<Quantity>,
    pub free: Option<Quantity>,
    /// What PyTorch had allocated, and what it held reserved but unallocated.
    pub allocated: Option<Quantity>,
    pub reserved: Option<Quantity>,
    /// What the message says each process on the GPU holds (PyTorch ≥ 2.1, from NVML): this process
    /// (`Including non-PyTorch memory, this process has X memory in use`) and the others by pid (`Process P
    /// has X memory in use`), which in a container include this process under its host pid.
    pub this_process: Option<Quantity>,
    pub processes: ProcessesInUse,
}

/// The `Process P has X memory in use` entries of torch's message, summed (the load stage decides which, if
/// any, is this process: `load/serving/failure.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessesInUse {
    pub count: u32,
    pub largest: Option<Quantity>,
    pub sum: Option<Quantity>,
}

/// The engine a failure line names by its wording (torch's messages and a traceback name none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureWording {
    Vllm,
    Sglang,
}

/// SGLang's memory stages, each printed per rank with the memory available then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SglangStage {
    /// `Init torch distributed ends. mem usage=…`.
    DistributedEnd,
    /// `Load weight begin. avail mem=…`.
    WeightsBegin,
    /// `Load weight end. … avail mem=…, mem usage=…`.
    WeightsEnd,
    /// `Memory pool end. avail mem=…`.
    PoolEnd,
    /// `Capture cuda graph begin. … avail mem=…` (2024 builds print no figure).
    GraphBegin,
    /// `Capture cuda graph end. … avail mem=… mem usage=…`.
    GraphEnd,
    /// An attention backend's workspace allocated after the pool (AITER's `workspace_buffer size: X GB`):
    /// `usage` is its size.
    Workspace,
}

/// One vLLM or SGLang memory line.
#[derive(Debug, Clone, PartialEq)]
pub enum ServingLine {
    /// vLLM's version (`vLLM API server version 0.10.2`, `Initializing a V1 LLM engine (v0.10.2)`); `v0` is
    /// true for vLLM's V0 engine, whose graphs lie outside the budget; the engine config's `max_seq_len`.
    Version {
        version: String,
        v0: bool,
        max_len: Option<i64>,
    },
    /// What the user set, from a command line or an arguments dump (`vllm serve …`, `non-default args: {…}`,
    /// `python -m sglang.launch_server …`, `server_args=ServerArgs(…)`): `sglang` says whose.
    Args(ServingArgs, Option<String>),
    /// `Automatically detected platform cuda.`
    Platform(String),
    /// The longest request the engine accepts (`Using max model len 262144`, `max_seq_len=4096`).
    MaxModelLen(i64),
    /// `Model loading took X GiB` / `Loading model weights took X GB`: the weights one rank loaded.
    WeightsLoaded(Quantity),
    /// Figures of the memory profile.
    Profile(ProfileFigures),
    /// `# GPU blocks: N, # CPU blocks: M` (V0).
    Blocks { gpu: i64, cpu: Option<i64> },
    /// `GPU KV cache size: N tokens`.
    KvTokens(i64),
    /// `Maximum concurrency for L tokens per request: Cx`.
    Concurrency { len: i64, times: f64 },
    /// `Graph capturing finished in N secs, took X GiB`.
    GraphCaptured(Quantity),
    /// `CUDA graph pool memory: A GiB (actual), E GiB (estimated)`.
    GraphPool {
        actual: Quantity,
        estimated: Quantity,
    },
    /// `The current --gpu-memory-utilization=U is equivalent to --gpu-memory-utilization=E without CUDA graph
    /// memory profiling. … increase --gpu-memory-utilization to S`.
    UtilAdvisory {
        current: f64,
        equivalent: f64,
        suggested: Option<f64>,
    },
    /// The `--kv-cache-memory` advisory.
    KvAdvisory(KvAdvisory),
    /// A start failed; `wording` names the engine whose message it is, if any.
    Failure {
        failure: ServingFailure,
        wording: Option<FailureWording>,
    },
    /// A rank began capturing CUDA graphs (vLLM V0's `Capturing the model for CUDA graphs`).
    CaptureBegin,
    /// SGLang's `--mem-fraction-static` as a build prints it alone (`mem_fraction_static 0.911`).
    MemFraction(f64),
    /// The start completed (`init engine (profile, create kv cache, warmup model) took …`, SGLang's `The
    /// server is fired up and ready to roll!`).
    Ready,
    /// An SGLang stage with the memory available and used then.
    SglangStage {
        stage: SglangStage,
        avail: Option<Quantity>,
        usage: Option<Quantity>,
    },
    /// `KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB` (K and V summed), or the later
    /// `…, KV size: X GB`.
    SglangPool { tokens: i64, kv: Quantity },
    /// `max_total_num_tokens=N, … context_len=C`.
    SglangTokens { tokens: i64, context: Option<i64> },
    /// `max_total_tokens=A is larger than the profiled value P. Use the profiled value instead.`
    SglangProfiled { asked: i64, profiled: i64 },
}

/// The memory settings of a vLLM or SGLang start, as far as one line gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServingArgs {
    /// SGLang's line (`sglang.launch_server`, `ServerArgs`), else vLLM's.
    pub sglang: bool,
    /// vLLM's `--gpu-memory-utilization`.
    pub utilization: Option<f64>,
    /// SGLang's `--mem-fraction-static`.
    pub mem_fraction: Option<f64>,
    /// vLLM's `--max-model-len`, SGLang's `--context-length`.
    pub max_len: Option<i64>,
    /// `--tensor-parallel-size`, `-tp`, `tp_size`.
    pub tp: Option<i64>,
    /// vLLM's `--max-num-seqs`.
    pub max_num_seqs: Option<i64>,
    /// vLLM's `--max-num-batched-tokens`, SGLang's `--chunked-prefill-size`.
    pub batched_tokens: Option<i64>,
    /// SGLang's `--cuda-graph-max-bs`.
    pub graph_max_bs: Option<i64>,
    /// The KV cache's type is an 8-bit float (`fp8`, `fp8_e4m3`, `fp8_e5m2`); false for `auto` and 16-bit types.
    pub kv_fp8: Option<bool>,
}
