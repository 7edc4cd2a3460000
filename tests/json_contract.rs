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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Warning {
    line: Option<u64>,
    message: String,
}

#[derive(Deserialize, Clone, Copy)]
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
    #[serde(default)]
    ollama_version: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
    /// Added with `--ollama` (follow mode): what `/api/ps` said of the model when the load completed.
    #[serde(default)]
    ollama_ps: Option<OllamaPs>,
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
    probes: u32,
    plan_line: Option<u64>,
    seconds: Option<f64>,
    free: Vec<DeviceFree>,
    lines: Vec<u64>,
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
        4,
        "the founding load's two GPUs, twice: --smi and the CI log's own capture"
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
    "graph-charged-per-gpu",
    "projector-double-counted",
    "kv-mismatch",
    "overestimate",
    "unattributed-memory",
    "ps-mismatch",
    "host-not-vram",
    "rounding-limited",
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
