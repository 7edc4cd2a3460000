//! The JSON contract (schema_version 1) pinned by strict deserialisation: every field vramdiff writes must
//! be declared here (`deny_unknown_fields`), and every contract field must be present. Renaming or removing
//! a field breaks this test; adding one means adding it here, on purpose.

#![allow(dead_code)]

use serde::Deserialize;

use crate::util::{run, sample_names};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Report {
    schema_version: u64,
    tool: Tool,
    inputs: Vec<Input>,
    loads: Vec<Load>,
    /// Pairs of loads of one model whose settings differ (issue 53); absent without one.
    #[serde(default)]
    pairs: Vec<LoadPair>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadPair {
    first: usize,
    second: usize,
    runtime: String,
    #[serde(default)]
    version: Option<String>,
    model: PairModel,
    changed: Vec<SettingChange>,
    figures: Vec<PairFigure>,
    #[serde(default)]
    suggestions: Vec<SuggestionOutcome>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairModel {
    by: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingChange {
    setting: String,
    before: String,
    after: String,
    modelled: bool,
    why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairFigure {
    component: String,
    #[serde(default)]
    device: Option<String>,
    #[serde(default)]
    before: Option<Q>,
    #[serde(default)]
    predicted: Option<Q>,
    #[serde(default)]
    measured: Option<Q>,
    #[serde(default)]
    error: Option<i64>,
    verdict: String,
    levers: Vec<String>,
    #[serde(default)]
    not_modelled: Vec<String>,
    #[serde(default)]
    unverified: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuggestionOutcome {
    setting: String,
    effect: String,
    #[serde(default)]
    delivered: Option<bool>,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
    version: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    path: String,
    lines: u64,
    recognized_lines: u64,
    unrecognized_memory_lines: u64,
    joined_lines: u64,
    #[serde(default)]
    unrecognized: Vec<Unrecognized>,
    #[serde(default)]
    cut_by_wrap: Vec<CutByWrap>,
    warnings: Vec<Warning>,
    error: Option<String>,
    discovered_gpus: Vec<Gpu>,
    role: Role,
    #[serde(default)]
    captures: Vec<Snapshot>,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    Log,
    Capture,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Snapshot {
    pub format: String,
    pub line: u64,
    pub end_line: u64,
    pub timestamp: Option<String>,
    pub driver_version: Option<String>,
    pub gpus: Vec<SmiGpu>,
    pub processes: Option<Vec<SmiProcess>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SmiGpu {
    pub index: Option<u32>,
    pub name: Option<String>,
    pub uuid: Option<String>,
    pub bus_id: Option<String>,
    pub used: Option<Q>,
    pub total: Option<Q>,
    pub reserved: Option<Q>,
    pub free: Option<Q>,
    pub mig: bool,
    pub mig_device: Option<u32>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SmiProcess {
    pub gpu_index: Option<u32>,
    pub gpu_uuid: Option<String>,
    pub gpu_bus_id: Option<String>,
    pub pid: Option<u32>,
    pub name: String,
    pub used: Option<Q>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Unrecognized {
    line: u64,
    text: String,
    #[serde(default)]
    figures: Vec<Figure>,
}

/// A line a terminal's wrap cut inside a figure, not read (issue 52, part 1).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CutByWrap {
    line: u64,
    text: String,
    width: u64,
    notice: String,
}

/// A size an unrecognised line prints (issue 52).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Figure {
    text: String,
    bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Warning {
    line: Option<u64>,
    message: String,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct Q {
    pub bytes: i64,
    pub low: i64,
    pub high: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Load {
    source: Source,
    engine: Engine,
    era: Era,
    model: Model,
    settings: Settings,
    gpus: Vec<Gpu>,
    #[serde(default)]
    rejected_gpus: Vec<RejectedGpu>,
    estimate: Option<Estimate>,
    actual: Actual,
    components: Vec<ComponentRow>,
    devices: Vec<DeviceRow>,
    observed: Vec<ObservedRow>,
    findings: Vec<Finding>,
    whatif: Option<WhatIf>,
    suggestions: Vec<Suggestion>,
    /// Added with vLLM and SGLang: the engine's version and memory figures per rank.
    #[serde(default)]
    serving: Option<serde_json::Value>,
    /// Added with issue 54: what the server held while it served.
    #[serde(default)]
    timeline: Option<Timeline>,
    #[serde(default)]
    ollama_version: Option<String>,
    #[serde(default)]
    llama_cpp_build: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
    /// Added with issue 22: four views of each GPU of an Ollama ≥ 0.30 load, and of all GPUs together.
    #[serde(default)]
    gpu_views: Vec<GpuView>,
    /// Added with `--ollama` (follow mode): what `/api/ps` said of the model when the load completed.
    #[serde(default)]
    ollama_ps: Option<OllamaPs>,
    /// Added with llama.cpp on its own (issue 21); omitted when the log prints none of it.
    #[serde(default)]
    lifecycle: Option<Lifecycle>,
    /// Added with issue 21: GPUs that are one memory pool.
    #[serde(default)]
    shared_pools: Vec<Vec<String>>,
    /// Added with Ollama's scheduler chain (issue 22): what the scheduler decided before llama-server started
    /// (Ollama ≥ 0.30 loads only).
    #[serde(default)]
    scheduler: Option<Scheduler>,
    /// Added with issue 52: the tries the load replaced (a scheduler's eviction, `--fit`'s rounds).
    #[serde(default)]
    attempts: Vec<Attempt>,
}

/// `loads[].attempts[]`: a try the load replaced, by `kind` (issue 52 part 3).
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum Attempt {
    /// Ollama's scheduler evicted a model to make space: what it asked, what it had, what it evicted.
    Eviction(EvictionAttempt),
    /// A round of llama.cpp's `--fit`: what it tried, what it projected per device, what the fit decided.
    FitProbe(FitProbe),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvictionAttempt {
    #[serde(default)]
    pub layers: Option<i64>,
    #[serde(default)]
    pub layers_fit: Option<i64>,
    pub gpus: Vec<AttemptGpu>,
    pub evicted: String,
    pub line: u64,
    pub lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FitProbe {
    pub round: u32,
    /// `user-settings` or `probe`.
    pub tried: String,
    #[serde(default)]
    pub context: Option<i64>,
    pub devices: Vec<FitProbeDevice>,
    /// `no-change`, `reduce`, `context-reduced`, `kept`, `too-large`, `plan` or `measured`.
    pub decision: String,
    #[serde(default)]
    pub reduce_by: Option<Q>,
    #[serde(default)]
    pub context_to: Option<i64>,
    #[serde(default)]
    pub buffer_lines: Vec<u64>,
    pub line: u64,
    pub lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FitProbeDevice {
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub layers: Option<i64>,
    #[serde(default)]
    pub partial_layers: Option<i64>,
    #[serde(default)]
    pub projected: Option<Q>,
    #[serde(default)]
    pub free: Option<Q>,
    #[serde(default)]
    pub budget: Option<Q>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttemptGpu {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub library: Option<String>,
    #[serde(default)]
    pub available: Option<Q>,
    #[serde(default)]
    pub free: Option<Q>,
    pub line: u64,
}

/// `loads[].gpu_views[]`: Ollama's prediction, llama.cpp's plan, buffers, driver, `ollama ps`, unattributed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GpuView {
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub ollama_prediction: Option<Q>,
    #[serde(default)]
    pub llama_cpp_plan: Option<Q>,
    #[serde(default)]
    pub buffers: Option<Q>,
    #[serde(default)]
    pub driver: Option<Q>,
    #[serde(default)]
    pub driver_join: Option<String>,
    #[serde(default)]
    pub ollama_ps: Option<Q>,
    #[serde(default)]
    pub unattributed: Option<Q>,
    /// An integrated GPU, left out of the row of all GPUs (addition, issue 22).
    #[serde(default)]
    pub integrated: bool,
}

/// `loads[].scheduler`: Ollama ≥ 0.30's decisions before llama-server started.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scheduler {
    #[serde(default)]
    pub environment: Vec<EnvSetting>,
    #[serde(default)]
    pub environment_line: Option<u64>,
    #[serde(default)]
    pub default_context: Option<DefaultContext>,
    #[serde(default)]
    pub prediction: Option<Prediction>,
    pub gpu_choice: GpuChoice,
    #[serde(default)]
    pub single_gpu_rule: Vec<SingleGpuTest>,
    #[serde(default)]
    pub eviction: Option<Eviction>,
    #[serde(default)]
    pub mmap_disabled: Option<Decision>,
    #[serde(default)]
    pub projector: Option<ProjectorGate>,
    #[serde(default)]
    pub retries: Vec<Retry>,
    #[serde(default)]
    pub overwritten: Vec<Overwritten>,
    #[serde(default)]
    pub invalid_fit_target: Option<Decision>,
    #[serde(default)]
    pub no_buffer_sizes_line: Option<u64>,
    #[serde(default)]
    pub runtime_oom_lines: Vec<u64>,
    #[serde(default)]
    pub ps_table: Vec<PsTableRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvSetting {
    pub name: String,
    pub value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Decision {
    #[serde(default)]
    pub reason: Option<String>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DefaultContext {
    #[serde(default)]
    pub total_vram: Option<Q>,
    #[serde(default)]
    pub num_ctx: Option<i64>,
    pub line: u64,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PredictionSource {
    Logged,
    Computed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Prediction {
    pub total: Q,
    pub source: PredictionSource,
    #[serde(default)]
    pub lines: Vec<u64>,
    #[serde(default)]
    pub file_size: Option<Q>,
    #[serde(default)]
    pub kv_f16: Option<Q>,
    #[serde(default)]
    pub context: Option<i64>,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum GpuChoice {
    SingleGpu {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        requested: Option<i64>,
        #[serde(default)]
        predicted: Option<QEq>,
        #[serde(default)]
        available: Option<QEq>,
        line: u64,
    },
    Backend {
        #[serde(default)]
        library: Option<String>,
        #[serde(default)]
        gpu_count: Option<i64>,
        line: u64,
    },
    MainGpu {
        main_gpu: i64,
        line: u64,
    },
    AllGpus {
        #[serde(default)]
        since_line: Option<u64>,
    },
    NotShown,
}

/// A quantity compared whole (inside an enum that derives `PartialEq`).
#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct QEq {
    pub bytes: i64,
    pub low: i64,
    pub high: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SingleGpuTest {
    pub gpu: String,
    #[serde(default)]
    pub name: Option<String>,
    pub available: Q,
    pub bar: Q,
    pub passes: bool,
    #[serde(default)]
    pub misses_by: Option<Q>,
    #[serde(default)]
    pub footprint_fits: Option<bool>,
    #[serde(default)]
    pub footprint_spare: Option<Q>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Eviction {
    pub evicting: bool,
    #[serde(default)]
    pub predicted: Option<Q>,
    #[serde(default)]
    pub available: Option<Q>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectorGate {
    pub offloaded: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub size: Option<Q>,
    #[serde(default)]
    pub fit_target: Option<Q>,
    pub fit_target_set_by_user: bool,
    /// `version`, `logged-target` or `assumed` (addition, issue 22).
    #[serde(default)]
    pub padding: Option<String>,
    /// The rule that kept the projector on the CPU for lack of VRAM (addition, issue 22).
    #[serde(default)]
    pub rule: Option<ProjectorRule>,
    pub lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectorRule {
    /// `floor-10gib` or `projector-plus-1gib`.
    pub kind: String,
    /// `version` or `figures`.
    pub by: String,
    pub gpu: String,
    pub available: Q,
    #[serde(default)]
    pub free: Option<Q>,
    #[serde(default)]
    pub bar: Option<Q>,
    #[serde(default)]
    pub unless_projector_over: Option<Q>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Retry {
    pub kind: String,
    #[serde(default)]
    pub old_num_ctx: Option<i64>,
    #[serde(default)]
    pub new_num_ctx: Option<i64>,
    #[serde(default)]
    pub error: Option<String>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Overwritten {
    pub variable: String,
    pub flag: String,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PsTableRow {
    pub name: String,
    pub size: Q,
    pub processor: String,
    #[serde(default)]
    pub gpu_percent: Option<i64>,
    #[serde(default)]
    pub context: Option<i64>,
    pub line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OllamaPs {
    pub url: String,
    pub name: String,
    pub size: Q,
    pub size_vram: Q,
    #[serde(default)]
    pub context_length: Option<i64>,
    pub models_listed: u64,
    pub matched_by: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Engine {
    Llama,
    Ollama,
    Unknown,
}

/// Who placed the layers (added with the llama-server era).
#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Era {
    Ollama,
    LlamaServer,
    /// Added with vLLM and SGLang.
    Vllm,
    Sglang,
    Unknown,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectedGpu {
    name: String,
    reason: String,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    path: String,
    first_line: u64,
    last_line: u64,
    partial: bool,
    #[serde(default)]
    partial_reasons: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    path: Option<String>,
    blob: Option<String>,
    #[serde(default)]
    architecture: Option<String>,
    #[serde(default)]
    block_count: Option<i64>,
    /// The GGUF file whose header gave the layout (`--gguf`, or the blob found on this machine).
    #[serde(default)]
    gguf: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Added with issue 21: llama-server chose the slots itself (`n_parallel is set to auto`).
    #[serde(default)]
    parallel_auto: Option<bool>,
    ctx_size: Option<i64>,
    batch_size: Option<i64>,
    parallel: Option<i64>,
    gpu_layers: Option<i64>,
    kv_cache_type: Option<String>,
    flash_attention: Option<bool>,
    #[serde(default)]
    ubatch_size: Option<i64>,
    #[serde(default)]
    kv_cache_type_v: Option<String>,
    #[serde(default)]
    projector_offload: Option<bool>,
    #[serde(default)]
    projector_offload_reason: Option<String>,
    #[serde(default)]
    projector_offload_line: Option<u64>,
    #[serde(default)]
    split_mode: Option<String>,
    #[serde(default)]
    main_gpu: Option<i64>,
    #[serde(default)]
    mmap: Option<bool>,
    #[serde(default)]
    speculative: Option<String>,
    #[serde(default)]
    fit_target: Option<Q>,
    #[serde(default)]
    kv_unified: Option<bool>,
    /// Added with issue 35: `pipeline parallelism enabled (n_copies=N)`.
    #[serde(default)]
    pipeline_copies: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Gpu {
    id: String,
    library: Option<String>,
    name: Option<String>,
    compute: Option<String>,
    #[serde(default)]
    driver: Option<String>,
    #[serde(default)]
    variant: Option<String>,
    total: Option<Q>,
    available: Option<Q>,
    #[serde(default)]
    free: Option<Q>,
    #[serde(default)]
    bus_id: Option<String>,
    /// Added with issue 22: an integrated GPU (`type=iGPU`).
    #[serde(default)]
    integrated: bool,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Layers {
    requested: Option<i64>,
    model: Option<i64>,
    offload: Option<i64>,
    split: Vec<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceEstimate {
    device: String,
    weights: Option<Q>,
    kv: Option<Q>,
    graph: Option<Q>,
    total: Option<Q>,
    layers: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Estimate {
    library: Option<String>,
    layers: Layers,
    available: Vec<Q>,
    gpu_overhead: Option<Q>,
    required_full: Option<Q>,
    required_partial: Option<Q>,
    kv: Option<Q>,
    allocations: Vec<Q>,
    weights_total: Option<Q>,
    weights_repeating: Option<Q>,
    weights_nonrepeating: Option<Q>,
    graph_full: Option<Q>,
    graph_partial: Option<Q>,
    projector_weights: Option<Q>,
    projector_graph: Option<Q>,
    #[serde(default)]
    projector_total: Option<Q>,
    #[serde(default)]
    projector_device: Option<String>,
    #[serde(default)]
    draft_total: Option<Q>,
    #[serde(default)]
    fit: Option<FitSummary>,
    per_device: Vec<DeviceEstimate>,
    form: String,
    weights_semantics: String,
    lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FitSummary {
    outcome: String,
    target: Option<Q>,
    reduce_by: Option<Q>,
    context: Option<i64>,
    context_by_user: Option<bool>,
    #[serde(default)]
    context_scaled_from: Option<i64>,
    probes: u32,
    plan_line: Option<u64>,
    seconds: Option<f64>,
    free: Vec<DeviceFree>,
    lines: Vec<u64>,
    /// Added with llama.cpp on its own (issue 21): why the fit stopped (`aborted`, `failed`).
    #[serde(default)]
    stopped: Option<FitStop>,
    /// Added with issue 21: the first projection's device use.
    #[serde(default)]
    projected: Option<Q>,
    /// Added with issue 21: layers the fit lets overflow into host memory.
    #[serde(default)]
    overflowing: Option<i64>,
    /// Added with issue 50: the host's total memory a fit without a GPU measured.
    #[serde(default)]
    host_total: Option<Q>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FitStop {
    cause: String,
    #[serde(default)]
    value: Option<i64>,
    line: u64,
}

/// Added with llama.cpp on its own (issue 21): the phase of every table and dry-run buffer line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lifecycle {
    #[serde(default)]
    phases: Vec<(String, u64)>,
    #[serde(default)]
    tables: Vec<TableRecord>,
    #[serde(default)]
    dry_run_buffers: Option<DryRunBuffers>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableRecord {
    line: u64,
    phase: String,
    evidence: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DryRunBuffers {
    lines: Vec<u64>,
    evidence: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceFree {
    device: String,
    name: Option<String>,
    total: Option<Q>,
    free: Q,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KvCache {
    size: Q,
    cells: Option<i64>,
    layers: Option<i64>,
    type_k: Option<String>,
    type_v: Option<String>,
    recurrent: bool,
    line: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Model,
    Kv,
    Compute,
    Output,
    Rs,
    Lora,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Buffer {
    device: String,
    buffer: String,
    kind: Kind,
    host: bool,
    size: Q,
    line: u64,
    component: String,
    projector: bool,
    #[serde(default)]
    superseded: Vec<Q>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Breakdown {
    device: String,
    name: Option<String>,
    total: Option<Q>,
    free: Option<Q>,
    #[serde(rename = "self")]
    self_: Q,
    model: Q,
    context: Q,
    compute: Q,
    unaccounted: Option<i64>,
    unaccounted_suspect: bool,
    line: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum FailureCause {
    Unstated,
    NotMemory,
    OutOfMemory,
    HostMemory,
    AllocationLimit,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailedAllocation {
    #[serde(default)]
    device: Option<String>,
    size: Q,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Actual {
    buffers: Vec<Buffer>,
    breakdown: Vec<Breakdown>,
    offloaded_layers: Option<i64>,
    total_layers: Option<i64>,
    failed: bool,
    #[serde(default)]
    failure: Option<String>,
    sources: Vec<String>,
    reported_total: Option<Q>,
    #[serde(default)]
    projector_device: Option<String>,
    #[serde(default)]
    projector_device_line: Option<u64>,
    #[serde(default)]
    kv_caches: Vec<KvCache>,
    /// Added with issue 21: the part a failure line names, with its line.
    #[serde(default)]
    failed_part: Option<(String, u64)>,
    /// Added with issue 35: why the load failed, read from every failure line.
    #[serde(default)]
    failure_cause: Option<FailureCause>,
    /// Added with issue 35: the allocation a failure line names, its size and device.
    #[serde(default)]
    failed_allocation: Option<FailedAllocation>,
    /// Added with issue 21: Metal's budget and what the process allocated against it.
    #[serde(default)]
    working_set: Option<WorkingSet>,
    /// Added with issue 35: failures the runtime recovered from (Ollama's layout backoff).
    #[serde(default)]
    recovered: Vec<Recovered>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Recovered {
    failure: String,
    failure_line: u64,
    #[serde(default)]
    cause: Option<FailureCause>,
    #[serde(default)]
    allocation: Option<FailedAllocation>,
    recovery: String,
    recovery_line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkingSet {
    #[serde(default)]
    budget: Option<Q>,
    #[serde(default)]
    budget_line: Option<u64>,
    #[serde(default)]
    peak: Option<(Q, u64)>,
    #[serde(default)]
    exceeded_lines: Vec<u64>,
}

#[derive(Deserialize, PartialEq, Debug)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Match,
    Over,
    Under,
    Unknown,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Component {
    WeightsGpu,
    WeightsHost,
    Kv,
    Graph,
    Projector,
    Draft,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComponentRow {
    component: Component,
    estimated: Option<Q>,
    estimated_from: String,
    actual: Option<Q>,
    actual_from: String,
    delta: Option<Q>,
    verdict: Verdict,
    lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceRow {
    device: String,
    estimated: Option<Q>,
    estimated_from: String,
    actual: Option<Q>,
    actual_from: String,
    delta: Option<Q>,
    verdict: Verdict,
    host: bool,
    lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservedRow {
    pub device: String,
    pub gpu_id: Option<String>,
    pub join: Join,
    pub name: Option<String>,
    pub used: Option<Q>,
    pub total: Option<Q>,
    pub baseline: Option<Q>,
    pub estimated: Option<Q>,
    pub buffers: Option<Q>,
    pub runner_process: Option<Q>,
    pub other_processes: Option<Q>,
    pub unattributed: Option<Q>,
    pub unattributed_from: String,
    pub capture: CaptureRef,
    pub lines: Vec<u64>,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Join {
    Uuid,
    Bus,
    Index,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureRef {
    pub path: String,
    pub line: u64,
    pub format: String,
    pub timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Finding {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    pub hint: String,
    pub lines: Vec<u64>,
    pub device: Option<String>,
    pub component: Option<String>,
}

#[derive(Deserialize, Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Info,
    Warning,
    Error,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Suggestion {
    pub setting: String,
    pub effect: String,
    pub because: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WhatIf {
    pub changes: Vec<String>,
    pub estimate: Option<EstimateReplay>,
    pub measured: Option<MeasuredReplay>,
    /// `whatif --max-ctx` only.
    #[serde(default)]
    pub max_ctx: Option<MaxContext>,
    /// Ollama's estimator: the build family replayed (addition, issue 23).
    #[serde(default)]
    pub family: Option<String>,
    /// When the logged split is reproduced: the decision it hung on, with its margin (addition, issue 23).
    #[serde(default)]
    pub hinge: Option<String>,
    /// `whatif --explain` only (addition, issue 23).
    #[serde(default)]
    pub trace: Option<PlacementTrace>,
    /// Ollama ≥ 0.31.2's padding of the fit margin for an offloaded projector, and its cost (addition, issue 22).
    #[serde(default)]
    pub projector_padding: Option<ProjectorPadding>,
    /// `whatif --ubatch/--ngl/--ctx/--kv-type`: what each lever does to a figure (addition, issue 35).
    #[serde(default)]
    pub effects: Vec<LeverEffect>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeverEffect {
    /// `ubatch`, `ngl`, `ctx`, `kv-type`.
    pub levers: Vec<String>,
    /// `compute-buffer`, `failed-allocation`, `kv-cache`, `layers`, `gpu-memory`.
    pub figure: String,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub before: Option<i64>,
    pub after: i64,
    /// `gpu-memory` only.
    #[serde(default)]
    pub free: Option<i64>,
    pub text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct ProjectorPadding {
    pub padded_target: Q,
    pub plain_target: Q,
    pub evidence: String,
    pub layers_padded: i64,
    pub layers_plain: i64,
    pub total_layers: i64,
    pub gpus_padded: i64,
    pub gpus_plain: i64,
    pub moved: Q,
    #[serde(default)]
    pub agrees_with_log: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct PlacementTrace {
    pub family: String,
    pub builds: String,
    pub chosen: String,
    pub rules: Vec<String>,
    pub tried: Vec<FamilyTry>,
    pub steps: Vec<TraceStep>,
    pub runner: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct FamilyTry {
    pub family: String,
    pub builds: String,
    pub why: String,
    pub split: Vec<i64>,
    pub offloaded: i64,
    pub allocations: Vec<i64>,
    pub split_reproduced: bool,
    pub allocations_reproduced: bool,
    pub at: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct TraceStep {
    pub stage: String,
    #[serde(default)]
    pub device: Option<String>,
    pub text: String,
    #[serde(default)]
    pub margin: Option<TraceMargin>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct TraceMargin {
    pub low: i64,
    pub nominal: i64,
    pub high: i64,
    pub fitted: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaxContext {
    pub replay: String,
    pub gpus: Vec<String>,
    /// Added with issue 50: a load fitted to system memory.
    #[serde(default)]
    pub on_host: bool,
    pub parallel: i64,
    pub step: i64,
    pub cap: i64,
    pub cap_from: String,
    pub assumptions: Vec<String>,
    pub rows: Vec<MaxContextRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaxContextRow {
    pub kv_type: String,
    pub num_ctx: Option<i64>,
    pub context: Option<i64>,
    pub at_cap: bool,
    pub margin: Option<i64>,
    /// Added with issue 50: the num_ctx the figures' printed rounding allows, when it is not one step.
    #[serde(default)]
    pub range: Option<[i64; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EstimateReplay {
    pub figures: ReplayFigures,
    pub strategy: String,
    pub placement: Placement,
    pub split_agrees: Option<bool>,
    pub allocations_agree: Option<bool>,
    #[serde(default)]
    pub layers_agree: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MeasuredReplay {
    pub figures: ReplayFigures,
    pub placement: Placement,
    pub margin: i64,
    pub verdict: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayFigures {
    pub layer_weights: i64,
    pub layer_kv: i64,
    pub blocks: i64,
    pub output: i64,
    pub first_gpu_extra: i64,
    pub graph: i64,
    pub graph_partial: i64,
    pub per_gpu_floor: i64,
    pub gpu_overhead: i64,
    pub layer_buffer: bool,
    pub from: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Placement {
    pub gpus: Vec<PlacedGpu>,
    pub offloaded: i64,
    pub total: i64,
    pub overflow: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlacedGpu {
    pub device: String,
    pub free: i64,
    pub layers: i64,
    pub allocation: i64,
}

fn bounded(q: &Q) {
    assert!(
        q.low <= q.bytes && q.bytes <= q.high,
        "quantity out of order: {} {} {}",
        q.low,
        q.bytes,
        q.high
    );
}

#[test]
fn every_sample_report_follows_the_contract() {
    // A `--smi` file applies to the last load read: put the log it was captured with last.
    let paired = "founding-k80-gemma3-12b.log";
    let mut files: Vec<String> = sample_names()
        .iter()
        .filter(|n| *n != paired)
        .map(|n| format!("sample-logs/{n}"))
        .collect();
    files.push(format!("sample-logs/{paired}"));
    let smi = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt";
    let mut args = vec!["--format", "json", "--show-unrecognized", "--smi", smi];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, b"");
    let report: Report = serde_json::from_slice(&out.stdout).expect("output follows the contract");
    assert_eq!(report.schema_version, 1);
    assert_eq!(report.tool.name, "vramdiff");
    assert_eq!(
        report.inputs.len(),
        files.len() + 1,
        "the --smi file is an input too"
    );
    assert_eq!(report.inputs.last().unwrap().role, Role::Capture);
    assert!(report.loads.len() >= 25);
    let observed: Vec<&ObservedRow> = report.loads.iter().flat_map(|l| &l.observed).collect();
    assert_eq!(
        observed.len(),
        6,
        "the founding load's two GPUs, twice: --smi and the CI log's own capture; the chain case's two"
    );
    for o in &observed {
        [
            o.used,
            o.total,
            o.buffers,
            o.estimated,
            o.runner_process,
            o.unattributed,
        ]
        .iter()
        .flatten()
        .for_each(bounded);
    }
    let captures: usize = report.inputs.iter().map(|i| i.captures.len()).sum();
    assert!(captures >= 10, "every sample capture parses: {captures}");
    for load in &report.loads {
        for f in &load.findings {
            assert!(!f.code.is_empty() && !f.message.is_empty() && !f.hint.is_empty());
        }

        for row in &load.components {
            row.estimated
                .iter()
                .chain(&row.actual)
                .chain(&row.delta)
                .for_each(bounded);
            if let (Some(e), Some(a), Some(d)) = (row.estimated, row.actual, row.delta) {
                assert_eq!(d.bytes, a.bytes - e.bytes, "delta = actual − estimated");
            }
            if row.estimated.is_none() || row.actual.is_none() {
                assert_eq!(row.verdict, Verdict::Unknown);
            }
        }
        for b in &load.actual.buffers {
            bounded(&b.size);
        }
        if let Some(s) = &load.scheduler {
            assert_eq!(load.era, Era::LlamaServer, "only Ollama ≥ 0.30 loads");
            s.prediction.iter().for_each(|p| bounded(&p.total));
            for t in &s.single_gpu_rule {
                bounded(&t.bar);
                assert_eq!(
                    t.passes,
                    t.misses_by.is_none(),
                    "a GPU misses the bar by something"
                );
            }
        }
        for f in load.findings.iter().map(|f| f.code.as_str()) {
            assert!(
                FINDING_CODES.contains(&f),
                "finding code {f} is not in the contract"
            );
        }
    }
    let eras: Vec<&Era> = report.loads.iter().map(|l| &l.era).collect();
    assert!(eras.contains(&&Era::LlamaServer) && eras.contains(&&Era::Ollama));
}

#[test]
fn every_jsonl_line_is_a_contract_load_with_its_input() {
    let mut files: Vec<String> = sample_names()
        .iter()
        .map(|n| format!("sample-logs/{n}"))
        .collect();
    files.sort();
    let mut args = vec!["--format", "jsonl", "--fail-on", "never"];
    args.extend(files.iter().map(String::as_str));
    let lines = run(&args, b"");
    let mut json_args = args.clone();
    json_args[1] = "json";
    let report: serde_json::Value = serde_json::from_slice(&run(&json_args, b"").stdout).unwrap();
    let text = String::from_utf8(lines.stdout).unwrap();
    let mut count = 0;
    for (line, element) in text.lines().zip(report["loads"].as_array().unwrap()) {
        let mut value: serde_json::Value = serde_json::from_str(line).expect("one object per line");
        let map = value.as_object_mut().unwrap();
        let input = map.remove("input").expect("input");
        assert_eq!(map.remove("schema_version"), Some(serde_json::json!(1)));
        assert_eq!(input, element["source"]["path"]);
        assert_eq!(&value, element, "the same serialisation as loads[]");
        let _: Load = serde_json::from_value(value).expect("a contract load");
        count += 1;
    }
    assert_eq!(count, report["loads"].as_array().unwrap().len());
    assert_eq!(count, text.lines().count());
}

/// Every finding code, in registry order: codes are part of the contract (added, never renamed).
/// `projector-on-cpu` and `gpu-unused` were added with the llama-server era.
const FINDING_CODES: &[&str] = &[
    "load-failed",
    "gpu-unused",
    "incomplete-load",
    "underestimate",
    "needless-split",
    "cpu-offload-with-free-vram",
    "projector-on-cpu",
    "projector-headroom",
    "graph-charged-per-gpu",
    "projector-double-counted",
    "kv-mismatch",
    "overestimate",
    "eviction-overestimate",
    "unattributed-memory",
    "ps-mismatch",
    "knob-ignored",
    "context-reduced",
    "host-not-vram",
    "rounding-limited",
    "fit-aborted",
    "partial-offload",
    // Added with vLLM and SGLang.
    "graph-estimate-off",
    "kv-too-small",
    "budget-exceeded",
    "foreign-memory",
    "rank-imbalance",
    // Added with llama.cpp on its own (issue 21).
    "working-set-exceeded",
    "runtime-growth",
    "compute-imbalance",
    // Added with the failure model (issue 35).
    "load-recovered",
    // Added with the memory of serving (issue 54).
    "prompt-cache-over-limit",
    "serving-host-memory",
    "client-timeout",
    "kv-cache-full",
];

#[test]
fn finding_codes_are_the_contract_s() {
    let codes: Vec<&str> = vramdiff::checks::REGISTRY
        .iter()
        .map(|c| c.code.as_str())
        .collect();
    assert_eq!(codes, FINDING_CODES);
    // The code type knows the same words, in the same order, and nothing else.
    let words: Vec<&str> = vramdiff::model::FindingCode::ALL
        .iter()
        .map(|(_, w)| *w)
        .collect();
    assert_eq!(words, FINDING_CODES);
}

/// `vramdiff whatif --format json`: `{schema_version, tool, loads: [{source, whatif}]}`; `whatif.max_ctx` with
/// `--max-ctx` (added with issue 14).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhatifDocument {
    schema_version: u32,
    #[allow(dead_code)]
    tool: serde_json::Value,
    loads: Vec<WhatifLoad>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhatifLoad {
    #[allow(dead_code)]
    source: serde_json::Value,
    whatif: Option<WhatIf>,
}

#[test]
fn whatif_explain_follows_the_contract() {
    let stages = [
        "scheduler",
        "entry",
        "pre-charge",
        "blocks",
        "refused",
        "unplaced",
        "last-layer",
        "graph",
        "total",
    ];
    for log in [
        "sample-logs/founding-k80-gemma3-12b.log",
        "sample-logs/014-multigpu-2x-split37-0-projector-estimate.log",
        "sample-logs/015-multigpu-4x-split11x4-estimate.log",
    ] {
        let out = run(
            &[
                "whatif",
                "--explain",
                "--no-model-search",
                "--format",
                "json",
                log,
            ],
            b"",
        );
        let doc: WhatifDocument = serde_json::from_slice(&out.stdout)
            .expect("whatif --explain JSON follows the contract");
        let w = doc.loads[0].whatif.as_ref().expect("a replay");
        let t = w.trace.as_ref().expect("--explain writes whatif.trace");
        assert_eq!(w.family.as_deref(), Some(t.family.as_str()));
        assert!(!t.tried.is_empty() && !t.steps.is_empty());
        for step in &t.steps {
            assert!(stages.contains(&step.stage.as_str()), "{}", step.stage);
        }
    }
}

#[test]
fn whatif_max_ctx_follows_the_contract() {
    for log in [
        "sample-logs/founding-k80-gemma3-12b.log",
        "sample-logs/founding-today-3090-4060-gemma4-31b.log",
    ] {
        let out = run(&["whatif", "--max-ctx", "--format", "json", log], b"");
        let doc: WhatifDocument =
            serde_json::from_slice(&out.stdout).expect("whatif JSON follows the contract");
        assert_eq!(doc.schema_version, 1);
        let m = doc.loads[0]
            .whatif
            .as_ref()
            .unwrap()
            .max_ctx
            .as_ref()
            .unwrap();
        let types: Vec<&str> = m.rows.iter().map(|r| r.kv_type.as_str()).collect();
        assert_eq!(types, ["f16", "q8_0", "q4_0"], "{log}");
        assert!(
            m.rows
                .iter()
                .all(|r| r.num_ctx.is_some_and(|n| n % m.step == 0)),
            "{log}"
        );
    }
}

/// The scheduler's chain and the four views of each GPU (added with issue 22), pinned on the reconstructed
/// second founding case of today: the prediction, the 80 % rule on each GPU, every GPU handed over, the
/// projector kept on the CPU, the pasted `ollama ps` row, and the views joined to nvidia-smi by PCI bus id.
#[test]
fn the_scheduler_chain_and_the_four_views_follow_the_contract() {
    let out = run(
        &[
            "--format",
            "json",
            "sample-logs/founding-today-chain-3090-4060-gemma4-31b.log",
        ],
        b"",
    );
    let report: Report = serde_json::from_slice(&out.stdout).expect("the contract");
    let load = &report.loads[0];
    let s = load.scheduler.as_ref().expect("loads[].scheduler");
    assert_eq!(s.environment_line, Some(1));
    assert!(s
        .environment
        .iter()
        .any(|e| e.name == "OLLAMA_KV_CACHE_TYPE" && e.value == "q8_0"));
    assert_eq!(
        s.default_context.as_ref().and_then(|d| d.num_ctx),
        Some(32768)
    );
    assert_eq!(
        s.gpu_choice,
        GpuChoice::AllGpus {
            since_line: Some(8)
        }
    );
    let p = s.prediction.as_ref().unwrap();
    assert_eq!(p.source, PredictionSource::Computed);
    assert_eq!(p.context, Some(16384));
    assert!(p.file_size.is_some() && p.kv_f16.is_some() && !p.lines.is_empty());
    assert_eq!(s.single_gpu_rule.len(), 2);
    assert!(s.single_gpu_rule.iter().all(|t| !t.passes));
    assert_eq!(s.single_gpu_rule[0].footprint_fits, Some(true));
    let gate = s.projector.as_ref().unwrap();
    assert!(!gate.offloaded && gate.fit_target.is_none() && !gate.fit_target_set_by_user);
    assert_eq!(gate.reason.as_deref(), Some("limited-vram"));
    assert!(s.retries.is_empty() && s.overwritten.is_empty() && s.eviction.is_none());
    assert!(s.mmap_disabled.is_none() && s.invalid_fit_target.is_none());
    assert!(s.no_buffer_sizes_line.is_none() && s.runtime_oom_lines.is_empty());
    assert_eq!(s.ps_table[0].processor, "100% GPU");
    assert_eq!(s.ps_table[0].gpu_percent, Some(100));
    assert_eq!(s.ps_table[0].context, Some(16384));
    // Four views: a row per GPU and one for all of them.
    let views = &load.gpu_views;
    assert_eq!(views.len(), 3);
    for v in &views[..2] {
        assert!(v.device.is_some() && v.name.is_some());
        assert_eq!(v.driver_join.as_deref(), Some("bus"));
        assert!(v.llama_cpp_plan.is_some() && v.buffers.is_some() && v.driver.is_some());
        assert!(v.unattributed.is_some());
        assert!(v.ollama_prediction.is_none(), "every GPU was handed over");
        assert!(v.ollama_ps.is_none());
    }
    let all = &views[2];
    assert!(all.device.is_none());
    assert_eq!(all.ollama_prediction.map(|q| q.bytes), Some(p.total.bytes));
    assert!(all.ollama_ps.is_some() && all.driver.is_some() && all.buffers.is_some());
    assert!(load.gpus.iter().all(|g| !g.integrated));
}

/// `ollama ps` splits CPU from GPU, never one GPU from another: a pasted table's GPU share (`35%/65% CPU/GPU`)
/// is the fifth view of the one GPU that holds the load, and of all GPUs together (the single-GPU load of
/// `tests/projector_headroom.rs`, with a table in the shape of `docs/log-formats.md` §5.6 item 8 pasted after it).
#[test]
fn a_pasted_ollama_ps_split_is_the_view_of_the_one_gpu_holding_the_load() {
    let log = format!(
        "{}PS C:\\> ollama ps\nNAME          ID              SIZE     PROCESSOR          CONTEXT    UNTIL\ngemma3:27b    a418f5838eaf    20 GB    35%/65% CPU/GPU    8192       4 minutes from now\n",
        crate::projector_headroom::PADDED
    );
    let out = run(
        &["--format", "json", "--fail-on", "never", "-"],
        log.as_bytes(),
    );
    let report: Report = serde_json::from_slice(&out.stdout).expect("the contract");
    let load = &report.loads[0];
    let row = &load.scheduler.as_ref().unwrap().ps_table[0];
    assert_eq!(
        (row.processor.as_str(), row.gpu_percent),
        ("35%/65% CPU/GPU", Some(65))
    );
    let views = &load.gpu_views;
    assert_eq!(views.len(), 2);
    // 65 % of 20 GB, on CUDA0's row and on the row of all GPUs.
    assert_eq!(
        views[0].ollama_ps.as_ref().map(|q| q.bytes),
        Some(13_000_000_000)
    );
    assert_eq!(
        views[1].ollama_ps.as_ref().map(|q| q.bytes),
        Some(13_000_000_000)
    );
    assert!(views[0].device.is_some() && views[1].device.is_none());
    let text = crate::util::stdout(&run(&["--fail-on", "never", "-"], log.as_bytes()));
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("CUDA0 ") && l.contains("12.11 GiB")),
        "CUDA0's row of the four views: {text}"
    );
}

#[test]
fn whatif_levers_follow_the_contract() {
    let figures = [
        "compute-buffer",
        "failed-allocation",
        "kv-cache",
        "layers",
        "gpu-memory",
    ];
    let levers = ["ubatch", "ngl", "ctx", "kv-type"];
    let mut seen = std::collections::BTreeSet::new();
    for (log, args) in [
        (
            "sample-logs/1003-llama-server-vulkan-strixhalo-uma-lmstudio-model-compute-4gib-alloc-limit.log",
            &["--ubatch", "256", "--ctx", "35008"][..],
        ),
        (
            "sample-logs/706-llama-server-vulkan-rtx3090-qwen38-27b-mtp-fit-65of66.log",
            &["--ubatch", "256", "--ngl", "40", "--kv-type", "q8_0"][..],
        ),
        ("sample-logs/001-kaggle-t4-llama31-8b.log", &["--ngl", "20", "--ctx", "4096"][..]),
    ] {
        let mut all = vec!["whatif", "--format", "json"];
        all.extend_from_slice(args);
        all.push(log);
        let out = run(&all, b"");
        assert_eq!(out.status.code(), Some(0), "{log}");
        let doc: WhatifDocument =
            serde_json::from_slice(&out.stdout).expect("whatif JSON follows the contract");
        let w = doc.loads[0].whatif.as_ref().expect("a whatif with effects");
        assert!(!w.effects.is_empty(), "{log}");
        for e in &w.effects {
            assert!(figures.contains(&e.figure.as_str()), "{}", e.figure);
            assert!(e.levers.iter().all(|l| levers.contains(&l.as_str())), "{:?}", e.levers);
            assert_eq!(e.free.is_some(), e.figure == "gpu-memory", "{}", e.text);
            assert!(!e.text.is_empty());
            seen.insert(e.figure.clone());
        }
    }
    assert_eq!(seen.len(), figures.len(), "{seen:?}");
}

/// `loads[].timeline` (issue 54): samples in log order, the limits printed, the peaks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct Timeline {
    samples: Vec<TimelineSample>,
    limits: TimelineLimits,
    peaks: TimelinePeaks,
    #[serde(default)]
    over_limit: Option<LineFigure>,
    #[serde(default)]
    strict_limit_line: Option<u64>,
    #[serde(default)]
    alloc_failed_line: Option<u64>,
    #[serde(default)]
    preemptions: Option<LineCount>,
    #[serde(default)]
    killed: Option<TimelineEnd>,
    #[serde(default)]
    slowest_prefill: Option<LineRatio>,
    #[serde(default)]
    request_failed: Option<FailedRequest>,
    #[serde(default)]
    cancelled_line: Option<u64>,
    lines: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct FailedRequest {
    status: i64,
    elapsed: String,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TimelineEnd {
    message: String,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TimelineSample {
    line: u64,
    #[serde(default)]
    prompt_cache: Option<Q>,
    #[serde(default)]
    checkpoints: Option<Q>,
    #[serde(default)]
    kv_percent: Option<f64>,
    #[serde(default)]
    running: Option<i64>,
    #[serde(default)]
    waiting: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TimelineLimits {
    #[serde(default)]
    prompt_cache: Option<LineFigure>,
    #[serde(default)]
    prompt_cache_unlimited: bool,
    #[serde(default)]
    prompt_cache_tokens: Option<LineCount>,
    #[serde(default)]
    checkpoints_per_slot: Option<LineCount>,
    #[serde(default)]
    slot_context: Option<LineCount>,
    #[serde(default)]
    host_total: Option<LineFigure>,
    #[serde(default)]
    host_free: Option<LineFigure>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TimelinePeaks {
    #[serde(default)]
    prompt_cache: Option<LineFigure>,
    #[serde(default)]
    checkpoints: Option<LineFigure>,
    #[serde(default)]
    kv_percent: Option<LineRatio>,
    #[serde(default)]
    running: Option<LineCount>,
    #[serde(default)]
    waiting: Option<LineCount>,
    #[serde(default)]
    checkpoint_size: Option<LineFigure>,
    #[serde(default)]
    entry: Option<TimelineEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LineFigure {
    bytes: i64,
    low: i64,
    high: i64,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LineCount {
    value: i64,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LineRatio {
    value: f64,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TimelineEntry {
    bytes: i64,
    low: i64,
    high: i64,
    tokens: i64,
    checkpoints: i64,
    line: u64,
}

#[test]
fn a_device_the_log_does_not_name_is_unknown_and_has_no_device_row() {
    // `sample-logs/founding-today-3090-4060-gemma4-31b.log` lines 109–114: clip's `load_hparams` block with its
    // `model size: 812.46 MiB`, without the `CLIP using CPU backend` line before it or clip's compute buffer
    // after it: the buffer's device is `unknown` (neither a GPU nor the host), and no `devices[]` row is it.
    let text = std::fs::read_to_string(
        crate::util::root().join("sample-logs/founding-today-3090-4060-gemma4-31b.log"),
    )
    .unwrap();
    let window: String = text
        .lines()
        .skip(108)
        .take(6)
        .map(|l| format!("{l}\n"))
        .collect();
    let out = run(&["--format", "json", "-"], window.as_bytes());
    let report: Report = serde_json::from_slice(&out.stdout).expect("output follows the contract");
    let load = &report.loads[0];
    let clip: Vec<&Buffer> = load.actual.buffers.iter().filter(|b| b.projector).collect();
    assert_eq!(clip.len(), 1);
    assert_eq!(clip[0].device, "unknown");
    assert!(!clip[0].host);
    assert!(load.devices.iter().all(|d| d.device != "unknown"));
}
