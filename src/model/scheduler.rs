//! What Ollama's scheduler decided for a load before llama-server started (Ollama 0.30–0.34,
//! `docs/log-formats.md` §5.6): the environment in force, its own prediction and the single-GPU rule it judged
//! the GPUs by, which GPUs it handed over, the projector gate and the fit target, eviction, mmap, its retries —
//! each with the line that says so. The first half of the chain whose second half is llama.cpp's `--fit`
//! ([`super::FitSummary`]) and the buffers ([`super::Actual`]).
//!
//! Part of the JSON contract as `loads[].scheduler` (an addition of schema_version 1): present for loads of
//! [`super::Runtime::OllamaFit`] only.

use serde::Serialize;

use super::quantity::Quantity;

/// The share of a GPU's available memory Ollama's prediction must stay within for that GPU to be chosen alone
/// (80 %), as a fraction.
pub const SINGLE_GPU_SHARE: (i64, i64) = (4, 5);

/// The scheduler's part of one load.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scheduler {
    /// The variables of `server config` that reach (or are known not to reach) the placement, as set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<EnvSetting>,
    /// The `server config` line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment_line: Option<u64>,
    /// `vram-based default context`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_context: Option<DefaultContext>,
    /// Ollama's prediction: the figure its single-GPU rule and eviction check use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Prediction>,
    /// Which GPUs llama-server was given.
    pub gpu_choice: GpuChoice,
    /// The single-GPU rule replayed on each GPU of the load (empty without a prediction or GPU figures).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub single_gpu_rule: Vec<SingleGpuTest>,
    /// The eviction check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eviction: Option<Eviction>,
    /// Ollama turned mmap off, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mmap_disabled: Option<Decision>,
    /// The projector gate and the `--fit` target it implies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector: Option<ProjectorGate>,
    /// Retries Ollama made after this load failed (or that made this load), in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<Retry>,
    /// `LLAMA_ARG_*` variables llama.cpp said a flag on the command line overwrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overwritten: Vec<Overwritten>,
    /// `invalid llama-server fit target`: the value Ollama could not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_fit_target: Option<Decision>,
    /// `llama-server VRAM tracking: no per-device buffer sizes …`: `ollama ps` showed the file size instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_buffer_sizes_line: Option<u64>,
    /// `runtime OOM detected` lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runtime_oom_lines: Vec<u64>,
    /// Rows of a pasted `ollama ps` table that follow the load.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ps_table: Vec<PsRow>,
}

/// One variable of `server config`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvSetting {
    pub name: String,
    pub value: String,
}

/// A decision with the words the log gave for it and its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub line: u64,
}

/// `vram-based default context`: the default num_ctx from the total VRAM tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefaultContext {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_vram: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<i64>,
    pub line: u64,
}

/// Where Ollama's prediction comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PredictionSource {
    /// Printed by the scheduler (`predicted=` of the single-GPU or eviction line).
    Logged,
    /// Computed from the log as the scheduler computes it: file size + f16 KV.
    Computed,
}

/// Ollama's prediction: model file size + KV at f16 for num_ctx × parallel (whatever the KV type set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Prediction {
    pub total: Quantity,
    pub source: PredictionSource,
    /// The line that printed it (logged), or the `file size` line (computed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u64>,
    /// The terms, when computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_size: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_f16: Option<Quantity>,
    /// The context the KV term is for (num_ctx × parallel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<i64>,
}

/// Which GPUs llama-server was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GpuChoice {
    /// `selecting [requested] single GPU for llama-server model`: one GPU only.
    SingleGpu {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The client asked for this GPU (`requested_main_gpu`).
        #[serde(skip_serializing_if = "Option::is_none")]
        requested: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        predicted: Option<Quantity>,
        #[serde(skip_serializing_if = "Option::is_none")]
        available: Option<Quantity>,
        line: u64,
    },
    /// `selecting GPU backend for llama-server model`: one library's GPUs.
    Backend {
        #[serde(skip_serializing_if = "Option::is_none")]
        library: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        gpu_count: Option<i64>,
        line: u64,
    },
    /// `main_gpu` was set: Ollama passed `--split-mode none --main-gpu K`.
    MainGpu { main_gpu: i64, line: u64 },
    /// The scheduler took the llama-server path (`using llama-server for model`, or the buffers sit on several
    /// GPUs) and printed no single-GPU line: every GPU went to llama-server.
    AllGpus {
        #[serde(skip_serializing_if = "Option::is_none")]
        since_line: Option<u64>,
    },
    /// The log does not show the scheduler's choice.
    #[default]
    NotShown,
}

/// The single-GPU rule on one GPU: would the prediction have let Ollama choose it alone, and does the real
/// footprint fit it?
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SingleGpuTest {
    /// The GPU's id as the log gives it, and its name.
    pub gpu: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `gpu memory available=`.
    pub available: Quantity,
    /// 80 % of it.
    pub bar: Quantity,
    /// The prediction is within the bar (at its nominal value).
    pub passes: bool,
    /// By how much the prediction exceeds the bar (when it does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misses_by: Option<Quantity>,
    /// Every GPU buffer of the load, with the `--fit` margin, against this GPU's free memory: whether the real
    /// footprint would have fitted it alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint_fits: Option<bool>,
    /// Free memory left above the margin with the footprint on this GPU (negative: short by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint_spare: Option<Quantity>,
    pub line: u64,
}

/// The eviction check's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Eviction {
    pub evicting: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Quantity>,
    pub line: u64,
}

/// The projector gate: offloaded or kept on the CPU, and the `--fit` target that follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectorGate {
    /// The projector went to a GPU.
    pub offloaded: bool,
    /// Why Ollama kept it on the CPU (`limited-vram`), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The projector's size (llama-server's `[mtmd]` estimate), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// The `--fit` margin per GPU: ⌈projector + 1 GiB⌉ MiB when Ollama pads it for an offloaded projector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit_target: Option<Quantity>,
    /// The user set `LLAMA_ARG_FIT_TARGET` in the server's environment: Ollama does not pad it.
    pub fit_target_set_by_user: bool,
    /// How the padding of [`Self::fit_target`] is known, when Ollama padded it (absent when it did not, or
    /// when the target is the user's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padding: Option<PaddingEvidence>,
    /// Which of Ollama's rules kept the projector on the CPU for lack of VRAM (`reason=limited-vram`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<ProjectorRule>,
    pub lines: Vec<u64>,
}

/// Ollama 0.31.2 and later raise `--fit`'s margin to ⌈projector + 1 GiB⌉ for an offloaded projector
/// (`docs/log-formats.md` §5.6 item 4; ollama#17099); 0.30 and 0.31.0–0.31.1 do not.
pub const PADDING_SINCE: (u32, u32, u32) = (0, 31, 2);

/// Ollama 0.31 and later decide the projector's offload by its size plus 1 GiB (PR #16866); 0.30 by a flat
/// floor of [`PROJECTOR_FLOOR`] available.
pub const PROJECTOR_RULE_SINCE: (u32, u32, u32) = (0, 31, 0);

/// 0.30's flat floor: no projector offload on a GPU with less available (ollama#16496).
pub const PROJECTOR_FLOOR: i64 = 10 * super::GIB;

/// How the padding of the fit target is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PaddingEvidence {
    /// The log's Ollama version pads (≥ 0.31.2).
    Version,
    /// llama.cpp's fit printed the padded target.
    LoggedTarget,
    /// Neither the version nor the fit's target is in the log: the padding of ≥ 0.31.2 is assumed.
    Assumed,
}

/// The rule that kept the projector on the CPU, by the version (or, without one, by what the GPU's figures
/// rule out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectorRule {
    pub kind: ProjectorRuleKind,
    /// `version` (the log's Ollama version) or `figures` (the GPU's room rules the other rule out).
    pub by: RuleEvidence,
    /// The GPU with the least room, the one either rule stops at (its name, else `GPU <id>`) …
    pub gpu: String,
    /// … its `available=` (what 0.30's floor compares) …
    pub available: Quantity,
    /// … and its `free=` (what the projector rule compares), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<Quantity>,
    /// The bar it was held to: 10 GiB, or the projector + 1 GiB when the projector's size is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bar: Option<Quantity>,
    /// Without the version or the projector's size: the projector rule would have kept it on the CPU only
    /// for a projector larger than this (free − 1 GiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unless_projector_over: Option<Quantity>,
    /// The `gpu memory` line.
    pub line: u64,
}

/// Ollama's rules for keeping the projector on the CPU for lack of VRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProjectorRuleKind {
    /// 0.30: less than 10 GiB available.
    #[serde(rename = "floor-10gib")]
    Floor10Gib,
    /// 0.31 and later: some GPU has less free than the projector + 1 GiB.
    #[serde(rename = "projector-plus-1gib")]
    ProjectorPlus1Gib,
}

/// What a projector rule is known from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleEvidence {
    Version,
    Figures,
}

/// What Ollama retried a failed llama-server start with (`… retrying once`); the JSON has `reduce-context`,
/// `evict-others` or `projector-on-cpu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryKind {
    /// `reducing automatic context and retrying once`: a smaller num_ctx.
    ReduceContext,
    /// `evicting all other models and retrying once`.
    EvictOthers,
    /// `startup failed with projector GPU offload; retrying with projector CPU offload`.
    ProjectorOnCpu,
}

impl RetryKind {
    /// The contract's word.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryKind::ReduceContext => "reduce-context",
            RetryKind::EvictOthers => "evict-others",
            RetryKind::ProjectorOnCpu => "projector-on-cpu",
        }
    }
}

/// One retry Ollama made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Retry {
    pub kind: RetryKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_num_ctx: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_num_ctx: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub line: u64,
}

/// A `LLAMA_ARG_*` variable a command-line flag overwrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overwritten {
    pub variable: String,
    pub flag: String,
    pub line: u64,
}

/// A row of a pasted `ollama ps` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PsRow {
    pub name: String,
    /// SIZE (decimal units as printed, with their bounds).
    pub size: Quantity,
    pub processor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_percent: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<i64>,
    pub line: u64,
}

impl Scheduler {
    /// The value of a `server config` variable that is set (not empty).
    pub fn env(&self, name: &str) -> Option<&str> {
        self.environment
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The first GPU whose test the real footprint passes while the prediction missed the bar: the GPU that
    /// would have held the model alone had Ollama judged by what was allocated.
    pub fn footprint_fits_but_rule_missed(&self) -> Option<&SingleGpuTest> {
        self.single_gpu_rule
            .iter()
            .find(|t| !t.passes && t.footprint_fits == Some(true))
    }
}
