//! The reconcile stage's result: a load with its rows, one per component and one per device, each with its
//! verdict, and what a GPU monitor saw.

use serde::Serialize;

use super::device::Device;

use super::grid::Grid;
use super::load::Load;
use super::observed::ObservedRow;
use super::quantity::{Ordering3, Quantity};

/// The outcome of comparing an estimate with reality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The intervals overlap: the gap is inside the rounding of the printed numbers.
    Match,
    /// The estimate is larger than reality beyond rounding.
    Over,
    /// The estimate is smaller than reality beyond rounding.
    Under,
    /// One side is missing.
    Unknown,
}

impl Verdict {
    /// Compare an estimate with an actual figure.
    pub fn judge(estimated: Option<&Quantity>, actual: Option<&Quantity>) -> Verdict {
        match (estimated, actual) {
            (Some(e), Some(a)) => match e.compare(a) {
                Ordering3::Overlap => Verdict::Match,
                Ordering3::Above => Verdict::Over,
                Ordering3::Below => Verdict::Under,
            },
            _ => Verdict::Unknown,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Match => "match",
            Verdict::Over => "over",
            Verdict::Under => "under",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The memory components vramdiff reconciles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    WeightsGpu,
    WeightsHost,
    Kv,
    Graph,
    Projector,
    /// A speculative draft's own context (an MTP head or a draft model): its KV and compute buffers, against
    /// llama-server's `[spec]` estimate; never the main context's KV or graph.
    Draft,
}

impl Component {
    pub fn as_str(self) -> &'static str {
        match self {
            Component::WeightsGpu => "weights_gpu",
            Component::WeightsHost => "weights_host",
            Component::Kv => "kv",
            Component::Graph => "graph",
            Component::Projector => "projector",
            Component::Draft => "draft",
        }
    }
}

/// Estimate against actual for one thing (a component, a device): the figures, how each was obtained, the gap
/// with its bounds and the verdict. Built only by [`Comparison::new`], so the delta and the verdict always
/// follow from the two figures.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub estimated: Option<Quantity>,
    /// The estimate terms summed, in words (`memory.weights.repeating + memory.weights.nonrepeating`).
    pub estimated_from: String,
    pub actual: Option<Quantity>,
    /// The buffers summed, in words.
    pub actual_from: String,
    /// `actual − estimated`, with bounds.
    pub delta: Option<Quantity>,
    pub verdict: Verdict,
    /// Log lines the row rests on.
    pub lines: Vec<u64>,
}

impl Comparison {
    /// Compare an estimate with an actual figure; `lines` are sorted and de-duplicated.
    pub fn new(
        (estimated, estimated_from): (Option<Quantity>, String),
        (actual, actual_from): (Option<Quantity>, String),
        mut lines: Vec<u64>,
    ) -> Comparison {
        lines.sort_unstable();
        lines.dedup();
        Comparison {
            verdict: Verdict::judge(estimated.as_ref(), actual.as_ref()),
            delta: match (estimated, actual) {
                (Some(e), Some(a)) => Some(a.minus(e)),
                _ => None,
            },
            estimated,
            estimated_from,
            actual,
            actual_from,
            lines,
        }
    }
}

/// Estimate against actual for one component, summed over devices.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentRow {
    pub component: Component,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// Estimate against actual for one device.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceRow {
    pub device: Device,
    /// True for the host (CPU) row.
    pub host: bool,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// What the estimate charged to the device, by part, summing to its estimate (empty without one).
    #[serde(skip)]
    pub estimated_parts: Vec<(EstimatePart, i64)>,
}

/// A part of what an estimate charged to one device. Per-device estimates (memory summary, `--fit` tables)
/// itemise weights, KV and graph; Ollama's single line only says the graph and the per-GPU minimum it charges
/// each GPU holding layers, the rest being layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimatePart {
    Weights,
    Kv,
    Graph,
    /// The per-GPU minimum Ollama reserves (`MinimumMemory`).
    Floor,
    /// Layers (weights, KV, projector) that the estimate does not itemise per device.
    Layers,
}

impl std::ops::Deref for ComponentRow {
    type Target = Comparison;

    fn deref(&self) -> &Comparison {
        &self.comparison
    }
}

impl std::ops::Deref for DeviceRow {
    type Target = Comparison;

    fn deref(&self) -> &Comparison {
        &self.comparison
    }
}

/// A load, reconciled: what the checks and the replay read. The load is read by its path
/// (`reconciled.load.estimate`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reconciled {
    #[serde(flatten)]
    pub load: Load,
    pub components: Vec<ComponentRow>,
    pub devices: Vec<DeviceRow>,
    /// The load's GPUs as an nvidia-smi/rocm-smi capture saw them; empty without a capture.
    pub observed: Vec<ObservedRow>,
    /// What Ollama's `/api/ps` said of this model when the load completed (`--ollama`); omitted without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_ps: Option<super::ps::OllamaPs>,
    /// Four views of each GPU (Ollama's prediction, llama.cpp's plan, buffers, driver; `ollama ps` for all
    /// GPUs): Ollama ≥ 0.30 loads only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_views: Vec<super::views::GpuView>,
    /// What the runner's buffers hold, per device and part: the one sum every later stage reads.
    #[serde(skip)]
    pub grid: Grid,
}
