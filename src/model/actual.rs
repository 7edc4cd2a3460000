//! What a load actually allocated: the runner's buffers, the breakdown table printed at exit, the layer counts,
//! the KV caches' geometry, and whether the load failed.

use serde::Serialize;

use super::device::Device;
use super::quantity::Quantity;

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
    /// Device the memory is on: a GPU (`CUDA0`), the host (`CPU`), or not known (`unknown`: clip's size lines
    /// without a line that says where clip runs, `load::clip_device`).
    pub device: Device,
    /// The buffer name as printed (`CUDA_Host`, `CPU_Mapped`, `Metal_Mapped`).
    pub buffer: String,
    pub kind: BufferKind,
    /// True on the host; false on a GPU and on a device the log does not name.
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
    /// What failed, when a failure line names it (the KV cache, a compute buffer, the weights, or the host's
    /// OOM killer / a cgroup limit), with its line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_part: Option<(FailedPart, u64)>,
    /// Why the load failed, read from every failure line of the load (`FailureCause::merge`): device memory
    /// exhausted, one allocation over the driver's limit, the host's OOM killer, or not memory at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_cause: Option<FailureCause>,
    /// The allocation a failure line names with its size (and device, where printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_allocation: Option<FailedAllocation>,
    /// Metal's budget for the process and what it allocated against it (Apple GPUs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_set: Option<WorkingSet>,
    /// Failures the runtime recovered from by itself (Ollama's layout backoff), in log order: the load went on
    /// after each, so none of them is the load's failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<Recovered>,
}

/// A failure the runtime recovered from: the failure line, what it said of the cause and the allocation, and
/// the recovery that followed (`model layout did not fit, applying backoff` with its backoff).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recovered {
    pub failure: String,
    pub failure_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<FailureCause>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<FailedAllocation>,
    /// How the runtime recovered, in its terms: `backoff 0.10`.
    pub recovery: String,
    pub recovery_line: u64,
}

/// Metal's budget for one process, `recommendedMaxWorkingSetSize` (not the machine's RAM: beyond it macOS
/// pages GPU memory), and what the process allocated against it (`docs/log-formats.md` §5.7).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkingSet {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_line: Option<u64>,
    /// The largest current allocation an `allocated buffer, size = …, ( current / budget )` line printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak: Option<(Quantity, u64)>,
    /// Lines of Metal's warning that the allocation passed the budget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exceeded_lines: Vec<u64>,
}

/// The allocation a failure line names (`docs/log-formats.md` §5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailedPart {
    /// `failed to allocate buffer for kv cache`.
    KvCache,
    /// A compute buffer (`sched_reserve`, `failed to allocate compute buffers`, `compute pp buffers`).
    Compute,
    /// The model's weights (`load_tensors`, a model buffer).
    Weights,
    /// The vision projector (`clip_…`, `mtmd`, `mmproj`).
    Projector,
    /// A speculative draft model's own context (`[spec]`, `draft`).
    DraftContext,
    /// A buffer in host memory (`ggml_backend_cpu_buffer_type_alloc_buffer`, a `CPU` or `_Host` buffer).
    HostBuffer,
    /// The host: the kernel's OOM killer or a cgroup limit (`Memory cgroup out of memory: Killed process`,
    /// systemd's `oom-kill`, `MemoryMax=`): host memory, never VRAM.
    HostKilled,
}

impl FailedPart {
    /// The part a failure message names, if any.
    pub fn named_in(message: &str) -> Option<FailedPart> {
        let m = message.to_ascii_lowercase();
        if m.contains("killed process")
            || m.contains("cgroup")
            || m.contains("oom-kill")
            || m.contains("oom_kill")
            || m.contains("memorymax")
        {
            Some(FailedPart::HostKilled)
        } else if m.contains("draft") || m.contains("[spec]") {
            Some(FailedPart::DraftContext)
        } else if m.contains("clip_") || m.contains("mtmd") || m.contains("mmproj") {
            Some(FailedPart::Projector)
        } else if m.contains("kv cache") || m.contains("kv_cache") {
            Some(FailedPart::KvCache)
        } else if (m.contains("compute") && m.contains("buffer")) || m.contains("sched_reserve") {
            Some(FailedPart::Compute)
        } else if m.contains("model buffer") || m.contains("load_tensors") {
            Some(FailedPart::Weights)
        } else if m.contains("ggml_backend_cpu_buffer")
            || m.contains("cpu buffer")
            || m.contains("_host buffer")
            || m.contains("host buffer")
        {
            Some(FailedPart::HostBuffer)
        } else {
            None
        }
    }

    /// The part is what memory is used for (the KV cache, the weights …), not only where it was (a host
    /// buffer) or what killed the process.
    pub fn is_a_use(self) -> bool {
        match self {
            FailedPart::KvCache
            | FailedPart::Compute
            | FailedPart::Weights
            | FailedPart::Projector
            | FailedPart::DraftContext => true,
            FailedPart::HostBuffer | FailedPart::HostKilled => false,
        }
    }

    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            FailedPart::KvCache => "the KV cache",
            FailedPart::Compute => "a compute buffer",
            FailedPart::Weights => "the model's weights",
            FailedPart::Projector => "the vision projector",
            FailedPart::DraftContext => "the speculative draft's context",
            FailedPart::HostBuffer => "a buffer in host memory",
            FailedPart::HostKilled => {
                "the process, killed for host memory (the kernel's OOM killer or a cgroup limit)"
            }
        }
    }
}

/// Why a load failed, as its failure lines say (`docs/findings.md`, "load-failed": the failure causes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureCause {
    /// The runtime failed without saying why (`error loading model`, `unable to load model`).
    Unstated,
    /// Not memory: a crash (a signal, a hardware exception, an assertion) with no allocation failing before it.
    NotMemory,
    /// Device (or host buffer) memory exhausted: `cudaMalloc failed: out of memory`, `failed to allocate`.
    OutOfMemory,
    /// The host ended the process for memory: the kernel's OOM killer or a cgroup limit.
    HostMemory,
    /// One allocation larger than the driver allows in a single buffer (Vulkan's `maxMemoryAllocationSize`,
    /// about 4 GiB on many drivers), however much memory is free.
    AllocationLimit,
}

impl FailureCause {
    /// The stronger of two readings of one load's failure lines: a line that names the allocation limit or the
    /// host's OOM killer explains an `out of memory` beside it, and any allocation failure explains a crash
    /// that follows it (an abort after a failed allocation is that allocation's failure).
    pub fn merge(self, other: FailureCause) -> FailureCause {
        self.max(other)
    }

    /// True when memory is the cause (a memory knob can help).
    pub fn is_memory(self) -> bool {
        match self {
            FailureCause::OutOfMemory
            | FailureCause::HostMemory
            | FailureCause::AllocationLimit => true,
            FailureCause::Unstated | FailureCause::NotMemory => false,
        }
    }

    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            FailureCause::Unstated => "the log does not say why",
            FailureCause::NotMemory => {
                "not memory: the runtime crashed with no allocation failing before it"
            }
            FailureCause::OutOfMemory => "out of memory",
            FailureCause::HostMemory => "host memory (the kernel's OOM killer or a cgroup limit)",
            FailureCause::AllocationLimit => {
                "one allocation over the driver's single-allocation limit, not a lack of memory"
            }
        }
    }
}

/// The allocation a failure line names: how much was asked, on which device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedAllocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    pub size: Quantity,
    pub line: u64,
}
