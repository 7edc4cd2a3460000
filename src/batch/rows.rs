//! Flatten a reconciled load into table rows: one wide row per load and one long row per load × component and
//! load × device. Built in the worker that read the file, so only these small rows are kept, never the loads.

use crate::model::{Component, Concluded, Quantity, ReplayOutcome, Severity};

/// The components in table order.
pub const COMPONENTS: [Component; 5] = [
    Component::WeightsGpu,
    Component::WeightsHost,
    Component::Kv,
    Component::Graph,
    Component::Projector,
];

/// One component's figures in the wide row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComponentFigures {
    pub estimated: Option<i64>,
    pub actual: Option<i64>,
    pub delta: Option<i64>,
    pub verdict: String,
    /// actual / estimated, when both are known and the estimate is not zero.
    pub ratio: Option<f64>,
}

/// One row of `loads`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadRow {
    pub file: String,
    /// 1-based within its file.
    pub load: i64,
    pub first_line: i64,
    pub last_line: i64,
    /// Model × settings × GPUs: what `--baseline` matches loads on across runs.
    pub key: String,
    pub partial: bool,
    pub failed: bool,
    pub model: Option<String>,
    pub blob: Option<String>,
    pub engine: String,
    pub ollama_version: Option<String>,
    /// `0.9` from `0.9.6`; `llama-server` for llama.cpp without Ollama; `unknown` otherwise.
    pub era: String,
    /// Who sized the memory (the JSON's `era` word): `ollama`, `llama-server`, `vllm`, `sglang`, `unknown`.
    pub runtime: String,
    /// That runtime's version as its log printed it (Ollama's, vLLM's), when it did.
    pub runtime_version: Option<String>,
    pub library: Option<String>,
    pub gpu_count: i64,
    pub gpu_names: String,
    /// Compute capabilities (`3.7`, `gfx1103`), comma-joined, as printed.
    pub compute: String,
    pub ctx: Option<i64>,
    pub batch: Option<i64>,
    pub parallel: Option<i64>,
    pub gpu_layers: Option<i64>,
    pub kv_cache_type: Option<String>,
    pub flash_attention: Option<bool>,
    pub estimate_form: Option<String>,
    pub layers_model: Option<i64>,
    pub layers_offload: Option<i64>,
    /// `1,48`.
    pub layers_split: Option<String>,
    pub est_required_full: Option<i64>,
    pub est_required_partial: Option<i64>,
    pub est_kv: Option<i64>,
    pub est_graph_full: Option<i64>,
    pub est_graph_partial: Option<i64>,
    pub est_weights_repeating: Option<i64>,
    pub est_weights_nonrepeating: Option<i64>,
    pub est_projector_weights: Option<i64>,
    pub est_projector_graph: Option<i64>,
    /// The sum of the estimate's per-GPU allocations (device rows, host excluded).
    pub est_gpu_total: Option<i64>,
    /// The sum of the runner's buffers on GPUs (device rows, host excluded).
    pub act_gpu_total: Option<i64>,
    pub components: Vec<ComponentFigures>,
    pub observed_used: Option<i64>,
    pub observed_unattributed: Option<i64>,
    /// GPUs the measured replay needs for the whole model; `None` without a measured replay.
    pub replay_gpus: Option<i64>,
    pub replay_margin: Option<i64>,
    /// Finding codes, most severe first, comma-joined.
    pub findings: String,
    pub max_severity: Option<String>,
    /// While serving (`loads[].timeline`): the peaks of the prompt cache and of the slots' context checkpoints
    /// (bytes of host RAM), of the KV cache's fill (percent), and the prompt cache's limit.
    pub serving_prompt_cache_peak: Option<i64>,
    pub serving_checkpoints_peak: Option<i64>,
    pub serving_kv_percent_peak: Option<f64>,
    pub serving_prompt_cache_limit: Option<i64>,
}

/// One row of `components` (the long form).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComponentRecord {
    pub file: String,
    pub load: i64,
    pub first_line: i64,
    /// `component` or `device`.
    pub kind: &'static str,
    /// `weights_gpu`, …, or `CUDA0`.
    pub name: String,
    pub estimated: Option<i64>,
    pub estimated_low: Option<i64>,
    pub estimated_high: Option<i64>,
    pub actual: Option<i64>,
    pub actual_low: Option<i64>,
    pub actual_high: Option<i64>,
    pub delta: Option<i64>,
    pub verdict: String,
    pub ratio: Option<f64>,
    pub model: Option<String>,
    pub engine: String,
    pub era: String,
    /// As in [`LoadRow::runtime`].
    pub runtime: String,
    /// The GPU's name: the device's own for device rows, the load's (comma-joined) for component rows.
    pub gpu_name: String,
    pub compute: String,
}

fn ratio(estimated: Option<Quantity>, actual: Option<Quantity>) -> Option<f64> {
    match (estimated, actual) {
        (Some(e), Some(a)) if e.bytes > 0 => Some(a.bytes as f64 / e.bytes as f64),
        _ => None,
    }
}

/// The tables' `era` column: the Ollama release line a load ran on (`0.9` from `0.9.6`), for grouping a CI's
/// loads by release; without a version, `llama-server` for a `--fit` estimate, else `unknown`. A column of the
/// tables' contract, not who placed the layers (that is the load's [`crate::model::Runtime`]).
pub fn release_line(load: &Concluded) -> String {
    match &load.reconciled.load.ollama_version {
        Some(v) => v.split('.').take(2).collect::<Vec<_>>().join("."),
        None if load
            .reconciled
            .load
            .estimate
            .as_ref()
            .is_some_and(|e| e.form.is_fit()) =>
        {
            "llama-server".to_string()
        }
        None => "unknown".to_string(),
    }
}

fn joined<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(",")
}

fn q(v: Option<Quantity>) -> Option<i64> {
    v.map(|q| q.bytes)
}

/// The wide row and the long rows of one load (`index` is 1-based within its file).
pub fn rows(file: &str, index: usize, load: &Concluded) -> (LoadRow, Vec<ComponentRecord>) {
    let e = load.reconciled.load.estimate.as_ref();
    let era = release_line(load);
    let runtime = load.reconciled.load.runtime.era().as_str().to_string();
    // The engine that printed a version: a serving engine's own, else Ollama's.
    let runtime_version = load
        .reconciled
        .load
        .serving
        .as_ref()
        .and_then(|s| s.version.clone())
        .or_else(|| load.reconciled.load.ollama_version.clone());
    let gpu_names = joined(
        load.reconciled
            .load
            .gpus
            .iter()
            .map(|g| g.name.as_deref().unwrap_or(g.id.as_str())),
    );
    // Distinct compute capabilities in order: two K80 dies are one architecture, `3.7`.
    let mut computes: Vec<&str> = Vec::new();
    for c in load
        .reconciled
        .load
        .gpus
        .iter()
        .filter_map(|g| g.compute.as_deref())
    {
        if !computes.contains(&c) {
            computes.push(c);
        }
    }
    let compute = computes.join(",");
    let model = load.reconciled.load.model.architecture.clone();
    let components: Vec<ComponentFigures> = COMPONENTS
        .iter()
        .map(|c| {
            match load
                .reconciled
                .components
                .iter()
                .find(|r| r.component == *c)
            {
                Some(r) => ComponentFigures {
                    estimated: q(r.estimated),
                    actual: q(r.actual),
                    delta: q(r.delta),
                    verdict: r.verdict.as_str().to_string(),
                    ratio: ratio(r.estimated, r.actual),
                },
                None => ComponentFigures {
                    verdict: "unknown".to_string(),
                    ..ComponentFigures::default()
                },
            }
        })
        .collect();
    let gpu_devices = || load.reconciled.devices.iter().filter(|d| !d.host);
    let sum = |f: &dyn Fn(&crate::model::DeviceRow) -> Option<Quantity>| {
        Quantity::sum(gpu_devices().filter_map(f)).map(|q| q.bytes)
    };
    let max_severity = load.findings.iter().map(|f| f.severity).max();
    let timeline = load.reconciled.load.timeline.as_ref();
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    let key = format!(
        "{}|ctx={}|batch={}|parallel={}|kv={}|gpus={}",
        model
            .as_deref()
            .or(load.reconciled.load.model.blob.as_deref())
            .unwrap_or("?"),
        opt(load.reconciled.load.settings.ctx_size),
        opt(load.reconciled.load.settings.batch_size),
        opt(load.reconciled.load.settings.parallel),
        load.reconciled
            .load
            .settings
            .kv_cache_type
            .as_deref()
            .unwrap_or(""),
        gpu_names
    );
    let row = LoadRow {
        file: file.to_string(),
        load: index as i64,
        first_line: load.reconciled.load.source.first_line as i64,
        last_line: load.reconciled.load.source.last_line as i64,
        key,
        partial: load.reconciled.load.source.partial,
        failed: load.reconciled.load.actual.failed,
        model: model.clone(),
        blob: load.reconciled.load.model.blob.clone(),
        engine: load.reconciled.load.engine.as_str().to_string(),
        ollama_version: load.reconciled.load.ollama_version.clone(),
        era: era.clone(),
        runtime: runtime.clone(),
        runtime_version,
        library: e.and_then(|e| e.library.clone()).or_else(|| {
            load.reconciled
                .load
                .gpus
                .first()
                .and_then(|g| g.library.clone())
        }),
        gpu_count: load.reconciled.load.gpus.len() as i64,
        gpu_names: gpu_names.clone(),
        compute: compute.clone(),
        ctx: load.reconciled.load.settings.ctx_size,
        batch: load.reconciled.load.settings.batch_size,
        parallel: load.reconciled.load.settings.parallel,
        gpu_layers: load.reconciled.load.settings.gpu_layers,
        kv_cache_type: load.reconciled.load.settings.kv_cache_type.clone(),
        flash_attention: load.reconciled.load.settings.flash_attention,
        estimate_form: e.map(|e| e.form.to_string()),
        layers_model: e.and_then(|e| e.layers.model),
        layers_offload: e.and_then(|e| e.layers.offload),
        layers_split: e.filter(|e| !e.layers.split.is_empty()).map(|e| {
            joined(
                e.layers
                    .split
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str),
            )
        }),
        est_required_full: e.and_then(|e| q(e.required_full)),
        est_required_partial: e.and_then(|e| q(e.required_partial)),
        est_kv: e.and_then(|e| q(e.kv)),
        est_graph_full: e.and_then(|e| q(e.graph_full)),
        est_graph_partial: e.and_then(|e| q(e.graph_partial)),
        est_weights_repeating: e.and_then(|e| q(e.weights_repeating)),
        est_weights_nonrepeating: e.and_then(|e| q(e.weights_nonrepeating)),
        est_projector_weights: e.and_then(|e| q(e.projector_weights)),
        est_projector_graph: e.and_then(|e| q(e.projector_graph)),
        est_gpu_total: sum(&|d| d.estimated),
        act_gpu_total: sum(&|d| d.actual),
        components,
        observed_used: Quantity::sum(load.reconciled.observed.iter().filter_map(|o| o.used))
            .map(|q| q.bytes),
        observed_unattributed: Quantity::sum(
            load.reconciled
                .observed
                .iter()
                .filter_map(|o| o.unattributed),
        )
        .map(|q| q.bytes),
        replay_gpus: load
            .whatif
            .as_ref()
            .and_then(|w| w.measured.as_ref())
            .and_then(|m| match m.verdict.outcome {
                ReplayOutcome::Fits { gpus } => Some(gpus as i64),
                ReplayOutcome::CpuOffload { .. } => None,
            }),
        replay_margin: load
            .whatif
            .as_ref()
            .and_then(|w| w.measured.as_ref())
            .map(|m| m.margin),
        findings: joined(load.findings.iter().map(|f| f.code.as_str())),
        max_severity: max_severity.map(|s: Severity| s.as_str().to_string()),
        serving_prompt_cache_peak: timeline
            .and_then(|t| t.peaks.prompt_cache)
            .map(|f| f.size.bytes),
        serving_checkpoints_peak: timeline
            .and_then(|t| t.peaks.checkpoints)
            .map(|f| f.size.bytes),
        serving_kv_percent_peak: timeline.and_then(|t| t.peaks.kv_percent).map(|r| r.value),
        serving_prompt_cache_limit: timeline
            .and_then(|t| t.limits.prompt_cache)
            .map(|f| f.size.bytes),
    };
    let base =
        |kind: &'static str, name: String, gpu_name: String, compute: String| ComponentRecord {
            file: file.to_string(),
            load: index as i64,
            first_line: load.reconciled.load.source.first_line as i64,
            kind,
            name,
            model: model.clone(),
            engine: load.reconciled.load.engine.as_str().to_string(),
            era: era.clone(),
            runtime: runtime.clone(),
            gpu_name,
            compute,
            verdict: "unknown".to_string(),
            ..ComponentRecord::default()
        };
    let mut long = Vec::new();
    for c in &load.reconciled.components {
        let mut r = base(
            "component",
            c.component.as_str().to_string(),
            gpu_names.clone(),
            compute.clone(),
        );
        fill(&mut r, c.estimated, c.actual, c.delta, c.verdict.as_str());
        long.push(r);
    }
    for d in &load.reconciled.devices {
        let gpu = d
            .device
            .position()
            .and_then(|p| load.reconciled.load.gpus.get(p))
            .filter(|_| !d.host);
        let mut r = base(
            "device",
            d.device.to_string(),
            gpu.and_then(|g| g.name.clone()).unwrap_or_default(),
            gpu.and_then(|g| g.compute.clone()).unwrap_or_default(),
        );
        fill(&mut r, d.estimated, d.actual, d.delta, d.verdict.as_str());
        long.push(r);
    }
    (row, long)
}

fn fill(
    r: &mut ComponentRecord,
    estimated: Option<Quantity>,
    actual: Option<Quantity>,
    delta: Option<Quantity>,
    verdict: &str,
) {
    r.estimated = q(estimated);
    r.estimated_low = estimated.map(|q| q.low);
    r.estimated_high = estimated.map(|q| q.high);
    r.actual = q(actual);
    r.actual_low = actual.map(|q| q.low);
    r.actual_high = actual.map(|q| q.high);
    r.delta = q(delta);
    r.verdict = verdict.to_string();
    r.ratio = ratio(estimated, actual);
}
