//! One model load as vramdiff understands it: where it is in the log, what the runner was asked to do, what
//! was estimated ([`super::estimate`]) and what was actually allocated ([`super::actual`]).
//!
//! These types are the public JSON contract (schema_version 1, see `report::json`). Field names are stable;
//! new fields may be added, none renamed or removed.

use serde::Serialize;

use super::actual::Actual;
use super::estimate::Estimate;
use super::quantity::Quantity;

/// Where a load sits in its input.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadSource {
    pub path: String,
    pub first_line: u64,
    pub last_line: u64,
    /// The log starts or ends in the middle of this load (no start line seen, or cut before it finished).
    pub partial: bool,
    /// Why the load is partial (the JSON has their sentences); empty when it is not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial_reasons: Vec<PartialReason>,
}

/// Why a load is partial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialReason {
    /// No start line before the load: the log (an excerpt) begins inside it.
    StartsMidLoad,
    /// The load was not seen to finish, and what ended the reading of it.
    Unfinished(LoadEnd),
}

/// What ended the lines of a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadEnd {
    /// The load's own last line (the runner started, or the load failed).
    Concluded,
    /// The server started again.
    ServerRestarted,
    /// Another load began.
    NextLoadStarted,
    /// The log's clock jumps back: another log was appended.
    ClockJumpsBack,
    /// The paste names another file here (a grep prefix or a file-name header): another log follows.
    AnotherFile,
    /// The input ended.
    LogEnds,
}

impl std::fmt::Display for LoadEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LoadEnd::Concluded => "the load concluded",
            LoadEnd::ServerRestarted => "the server restarted",
            LoadEnd::NextLoadStarted => "the next load started",
            LoadEnd::ClockJumpsBack => "the log's clock jumps back here: another log follows",
            LoadEnd::AnotherFile => "the paste names another file here: another log follows",
            LoadEnd::LogEnds => "the log ends first",
        })
    }
}

impl std::fmt::Display for PartialReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartialReason::StartsMidLoad => {
                f.write_str("the log starts in the middle of this load (no start line before it)")
            }
            PartialReason::Unfinished(end) => {
                write!(f, "the load was not seen to finish ({end})")
            }
        }
    }
}

impl Serialize for PartialReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
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
    /// The hyperparameters the log printed (`print_info:`), typed.
    #[serde(skip)]
    pub hyperparameters: Option<super::Hyperparameters>,
    /// The model's layers: from the GGUF file when one was read (see `gguf`), else from the hyperparameters.
    #[serde(skip)]
    pub layout: Option<super::ModelLayout>,
    /// The GGUF file whose header gave the layout (`--gguf`, or the blob the log names found on this machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gguf: Option<String>,
}

impl ModelRef {
    /// The GGUF file the path names (`-m …/qwen3-8b.gguf` → `qwen3-8b.gguf`; a redacting paste's
    /// `[model.gguf]` loses its brackets): `None` for a path cut short or one naming no `.gguf` (an Ollama
    /// blob, a Hugging Face repository).
    pub fn file_name(&self) -> Option<&str> {
        self.path
            .as_deref()
            .and_then(|p| p.rsplit(['/', '\\']).next())
            .map(|name| name.trim_matches(['[', ']', '<', '>']))
            .filter(|name| name.len() > 5 && name.to_ascii_lowercase().ends_with(".gguf"))
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
    /// `kv_unified` as llama.cpp printed it: `false` gives every slot its own KV stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_unified: Option<bool>,
    /// `pipeline parallelism enabled (n_copies=N)`: the compute buffers hold N copies of the graph's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline_copies: Option<i64>,
    /// The `--fit` free-memory target per device (`--fit-target`), when the command sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit_target: Option<Quantity>,
    /// llama-server chose the number of slots itself (`n_parallel is set to auto`): no `-np` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_auto: Option<bool>,
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
    /// An integrated GPU (`type=iGPU`): its "free" memory is the system's available memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub integrated: bool,
    /// Line the GPU was described on.
    pub line: u64,
}

/// A GPU the server found and did not use (an old driver, too little memory).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RejectedGpu {
    /// The GPU's name or id as the line printed it.
    pub name: String,
    /// Why, in the log's words plus its figures (`NVIDIA driver too old: driver 546, 550 or newer required`).
    pub reason: String,
    /// Why, as a type (the reason's words are the log's).
    #[serde(skip)]
    pub cause: RejectionCause,
    pub line: u64,
}

/// Why a GPU was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectionCause {
    /// The driver is older than the build requires (the line names the required version).
    DriverTooOld,
    /// Anything else the line says (its reason has the words).
    #[default]
    Other,
}

/// A load as the log describes it: assembled from its lines by the load stage, before anything is compared.
/// The later stages wrap it ([`super::Reconciled`], then [`super::Concluded`]); the JSON shows the three as
/// one object.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Load {
    pub source: LoadSource,
    pub engine: Engine,
    /// Who estimated and who placed the layers; the JSON contract shows it as `era` (see [`super::Era`]).
    #[serde(rename = "era", serialize_with = "super::Runtime::serialize_era")]
    pub runtime: super::Runtime,
    pub model: ModelRef,
    pub settings: Settings,
    pub gpus: Vec<Gpu>,
    /// GPUs the server found and rejected (driver too old, too little memory).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected_gpus: Vec<RejectedGpu>,
    pub estimate: Option<Estimate>,
    pub actual: Actual,
    /// A vLLM or SGLang start's memory figures per rank, its version among them (`load::serving`; added with
    /// those runtimes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving: Option<super::ServingFigures>,
    /// What the server held while it served, after the load: prompt cache, checkpoints, KV fill, requests
    /// (`load::serving_memory`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<super::ServingTimeline>,
    /// What Ollama's scheduler decided before llama-server started (Ollama ≥ 0.30 only): its prediction, the
    /// single-GPU rule, the GPUs handed over, the projector gate, retries (see [`super::Scheduler`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<super::Scheduler>,
    /// The scheduler's attempts before this load (an eviction to make space, then the layout again): part of
    /// this load, not loads of their own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<super::Attempt>,
    /// Ollama's version when the log printed it (`Listening on … (version 0.9.6)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_version: Option<String>,
    /// llama.cpp's build when llama-server printed it at its start (`build_info: b9026-a817a22bc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llama_cpp_build: Option<String>,
    /// Things vramdiff noticed while reading this load that a reader should know (duplicate lines, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// llama.cpp's lifecycle: the phase of every table and of dry-run buffer lines (`docs/log-formats.md`
    /// §5.7); empty for logs that print none of it.
    #[serde(skip_serializing_if = "super::Lifecycle::is_empty")]
    pub lifecycle: super::Lifecycle,
    /// GPUs that are one memory pool (the same total and free memory: virtual devices of one GPU, unified
    /// memory): their free memory is never added up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_pools: Vec<Vec<super::Device>>,
}
