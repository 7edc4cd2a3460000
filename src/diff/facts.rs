//! What a comparison of two runs needs from one load, whatever it was read from: the key it is matched on, its
//! estimate and actual per component and per device (quantities with their rounding), its placement and its
//! findings. Built from a [`Concluded`] load here, and from `batch` tables in `batch::diff_tables`.

use serde::Serialize;

use crate::model::{Concluded, Quantity, Severity};

/// What loads are matched on across runs: the model, the context, the parallel slots and the GPU set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MatchKey {
    /// The architecture (`gemma3`), else the model blob, else `?`.
    pub model: String,
    /// Total context as the runner printed it (num_ctx × parallel).
    pub ctx: Option<i64>,
    pub parallel: Option<i64>,
    /// The GPUs of the load, by name (or id when unnamed), sorted: a set, whatever order discovery printed.
    pub gpus: Vec<String>,
}

impl MatchKey {
    /// A key from its parts; the GPU names are sorted here.
    pub fn new(
        model: String,
        ctx: Option<i64>,
        parallel: Option<i64>,
        mut gpus: Vec<String>,
    ) -> MatchKey {
        gpus.sort();
        MatchKey {
            model,
            ctx,
            parallel,
            gpus,
        }
    }

    /// A concluded load's key.
    pub fn of(load: &Concluded) -> MatchKey {
        MatchKey::new(
            model_word(
                load.reconciled.load.model.architecture.as_deref(),
                load.reconciled.load.model.blob.as_deref(),
            ),
            load.reconciled.load.settings.ctx_size,
            load.reconciled.load.settings.parallel,
            load.reconciled
                .load
                .gpus
                .iter()
                .map(|g| g.name.clone().unwrap_or_else(|| g.id.clone()))
                .collect(),
        )
    }

    /// Same model on the same GPUs, whatever the settings: what a load whose context or parallel slots changed
    /// between the runs is paired on.
    pub fn same_model_and_gpus(&self, other: &MatchKey) -> bool {
        self.model == other.model && self.gpus == other.gpus
    }

    /// The settings that differ from `old`'s, in words: `ctx 4096 → 8192`.
    pub fn settings_changes(&self, old: &MatchKey) -> Vec<String> {
        let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
        let mut out = Vec::new();
        if self.ctx != old.ctx {
            out.push(format!("ctx {} → {}", opt(old.ctx), opt(self.ctx)));
        }
        if self.parallel != old.parallel {
            out.push(format!(
                "parallel {} → {}",
                opt(old.parallel),
                opt(self.parallel)
            ));
        }
        out
    }

    /// One line for a heading: `gemma3 ctx=4096 parallel=1 on Tesla K80 + Tesla K80`.
    pub fn label(&self) -> String {
        let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
        let model: String = if self.model.starts_with("sha256") {
            self.model.chars().take(19).collect()
        } else {
            self.model.clone()
        };
        format!(
            "{model} ctx={} parallel={} on {}",
            opt(self.ctx),
            opt(self.parallel),
            if self.gpus.is_empty() {
                "no GPU".to_string()
            } else {
                self.gpus.join(" + ")
            }
        )
    }
}

/// Estimate and actual of one component or one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowFacts {
    /// `weights_gpu`, …, or a device (`CUDA1`, `CPU`).
    pub name: String,
    /// True for the host (CPU) device row; false for components and GPUs.
    pub host: bool,
    pub estimated: Option<Quantity>,
    pub actual: Option<Quantity>,
}

/// Where the layers went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The logged split (`1,48`), empty when the log printed none.
    pub split: Vec<i64>,
    /// Layers on GPUs: what the runner offloaded, else what the estimate planned.
    pub layers_on_gpu: Option<i64>,
    pub layers_total: Option<i64>,
    /// The GPUs holding buffers (devices with an actual above zero), in order.
    pub gpus_used: Vec<String>,
}

/// A finding, as far as a comparison needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingFact {
    pub code: String,
    /// `None` when the source only kept the code (a `batch` table).
    pub severity: Option<Severity>,
    /// Empty when the source only kept the code.
    pub message: String,
    pub device: Option<String>,
    pub component: Option<String>,
    pub lines: Vec<u64>,
}

impl FindingFact {
    /// What identifies a finding across runs (its figures, and so its message, may differ).
    pub fn identity(&self) -> (&str, Option<&str>, Option<&str>) {
        (
            &self.code,
            self.device.as_deref(),
            self.component.as_deref(),
        )
    }
}

/// One load of one run, reduced to what is compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadFacts {
    pub path: String,
    pub first_line: u64,
    pub key: MatchKey,
    /// The model file's blob, when printed: among loads of one key, the one with the same blob is paired first.
    pub blob: Option<String>,
    pub components: Vec<RowFacts>,
    pub devices: Vec<RowFacts>,
    /// While serving: the peaks of host RAM the timeline holds (`prompt_cache_peak`, `checkpoints_peak`), as
    /// actual figures of host rows.
    pub serving: Vec<RowFacts>,
    /// While serving: the KV cache's fullest (vLLM, SGLang), as printed.
    pub kv_fill: Option<KvFill>,
    pub placement: Placement,
    pub findings: Vec<FindingFact>,
}

/// The KV cache's fill peak while serving, in hundredths of a percent, with half the unit the engine printed
/// it in: vLLM prints a percentage with one decimal (±0.05 %), SGLang a fraction with two (±0.5 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvFill {
    pub hundredths: i64,
    pub plus_minus: i64,
}

impl KvFill {
    /// The peak of an engine (`vllm`, `sglang`: the contract's `era`), `None` for any other runtime.
    pub fn of(era: &str, percent: f64) -> Option<KvFill> {
        let plus_minus = match era {
            "vllm" => 5,
            "sglang" => 50,
            _ => return None,
        };
        Some(KvFill {
            hundredths: (percent * 100.0).round() as i64,
            plus_minus,
        })
    }

    pub fn low(self) -> i64 {
        self.hundredths - self.plus_minus
    }

    pub fn high(self) -> i64 {
        self.hundredths + self.plus_minus
    }

    /// `99.2% (±0.05)`.
    pub fn words(self) -> String {
        let digits = if self.plus_minus < 10 { 1 } else { 0 };
        format!(
            "{:.digits$}% (±{})",
            self.hundredths as f64 / 100.0,
            trim(self.plus_minus as f64 / 100.0)
        )
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// As JSON: `{"percent": 99.2, "plus_minus": 0.05}`.
impl Serialize for KvFill {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = serializer.serialize_struct("KvFill", 2)?;
        st.serialize_field("percent", &(self.hundredths as f64 / 100.0))?;
        st.serialize_field("plus_minus", &(self.plus_minus as f64 / 100.0))?;
        st.end()
    }
}

/// The serving peaks as rows: the prompt cache's and the checkpoints', when the timeline has them.
pub fn serving_rows(
    prompt_cache: Option<Quantity>,
    checkpoints: Option<Quantity>,
) -> Vec<RowFacts> {
    [
        ("prompt_cache_peak", prompt_cache),
        ("checkpoints_peak", checkpoints),
    ]
    .into_iter()
    .filter_map(|(name, q)| {
        q.map(|q| RowFacts {
            name: name.to_string(),
            host: true,
            estimated: None,
            actual: Some(q),
        })
    })
    .collect()
}

/// The model part of a key, as `batch` keys it: the architecture, else the blob.
pub fn model_word(architecture: Option<&str>, blob: Option<&str>) -> String {
    architecture.or(blob).unwrap_or("?").to_string()
}

/// A concluded load's facts.
pub fn from_concluded(load: &Concluded) -> LoadFacts {
    let key = MatchKey::of(load);
    let components = load
        .reconciled
        .components
        .iter()
        .map(|r| RowFacts {
            name: r.component.as_str().to_string(),
            host: false,
            estimated: r.estimated,
            actual: r.actual,
        })
        .collect();
    let devices: Vec<RowFacts> = load
        .reconciled
        .devices
        .iter()
        .map(|d| RowFacts {
            name: d.device.to_string(),
            host: d.host,
            estimated: d.estimated,
            actual: d.actual,
        })
        .collect();
    let estimate_layers = load.reconciled.load.estimate.as_ref().map(|e| &e.layers);
    let placement = Placement {
        split: estimate_layers.map(|l| l.split.clone()).unwrap_or_default(),
        layers_on_gpu: load
            .reconciled
            .load
            .actual
            .offloaded_layers
            .or_else(|| estimate_layers.and_then(|l| l.offload)),
        layers_total: load
            .reconciled
            .load
            .actual
            .total_layers
            .or_else(|| estimate_layers.and_then(|l| l.model)),
        gpus_used: gpus_used(&devices),
    };
    let findings = load
        .findings
        .iter()
        .map(|f| FindingFact {
            code: f.code.as_str().to_string(),
            severity: Some(f.severity),
            message: f.message.clone(),
            device: f.device.as_ref().map(|d| d.to_string()),
            component: f.component.map(|c| c.as_str().to_string()),
            lines: f.lines.clone(),
        })
        .collect();
    LoadFacts {
        path: load.reconciled.load.source.path.clone(),
        first_line: load.reconciled.load.source.first_line,
        key,
        blob: load.reconciled.load.model.blob.clone(),
        components,
        devices,
        serving: {
            let t = load.reconciled.load.timeline.as_ref();
            serving_rows(
                t.and_then(|t| t.peaks.prompt_cache).map(|f| f.size),
                t.and_then(|t| t.peaks.checkpoints).map(|f| f.size),
            )
        },
        kv_fill: load
            .reconciled
            .load
            .timeline
            .as_ref()
            .and_then(|t| t.peaks.kv_percent)
            .and_then(|p| KvFill::of(load.reconciled.load.runtime.era().as_str(), p.value)),
        placement,
        findings,
    }
}

/// The GPU devices holding memory, in order.
pub fn gpus_used(devices: &[RowFacts]) -> Vec<String> {
    devices
        .iter()
        .filter(|d| !d.host && d.actual.is_some_and(|a| a.bytes > 0))
        .map(|d| d.name.clone())
        .collect()
}
