//! What was estimated before a load: Ollama's estimate (its single line, or the per-device memory summary) or
//! the plan llama.cpp's `--fit` chose, per device, with the lines it was read from.

use serde::Serialize;

use super::device::Device;
use super::quantity::Quantity;

/// Ollama's layer counts from the estimate line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Layers {
    pub requested: Option<i64>,
    pub model: Option<i64>,
    pub offload: Option<i64>,
    /// Per-GPU layer counts (`layers.split`); empty when the line leaves it empty.
    pub split: Vec<i64>,
}

/// What llama.cpp's `--fit` did before loading (llama-server era).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FitSummary {
    /// `no-change` (every device kept its margin: the user's settings are the plan), `changed` (layers or
    /// context were moved to meet the margins), or `unknown` (the log stops before the fit decided).
    pub outcome: String,
    /// The free-memory target per device (`vs. target of 1024`, `cannot meet free memory target of 1024 MiB`).
    pub target: Option<Quantity>,
    /// How much the first projection had to shed (`need to reduce device memory by 133 MiB`).
    pub reduce_by: Option<Quantity>,
    /// The context the fit settled on, when it printed one (`context size reduced from A to B`).
    pub context: Option<i64>,
    /// Whether the user's context was kept (`context size set by user to N -> no change`).
    pub context_by_user: Option<bool>,
    /// Breakdown tables printed while fitting (each a test allocation, none of them memory in use).
    pub probes: u32,
    /// Line of the table chosen as the plan (the probe matching the result, or the first table).
    pub plan_line: Option<u64>,
    /// `fitting params to free memory took N seconds`.
    pub seconds: Option<f64>,
    /// Free memory per device as the fit measured it (MiB, truncated), in device order.
    pub free: Vec<DeviceFree>,
    pub lines: Vec<u64>,
}

/// A device's free memory as llama.cpp measured it before loading.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceFree {
    pub device: Device,
    pub name: Option<String>,
    pub total: Option<Quantity>,
    pub free: Quantity,
    pub line: u64,
}

/// One device's share of a per-device estimate.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceEstimate {
    pub device: Device,
    pub weights: Option<Quantity>,
    pub kv: Option<Quantity>,
    pub graph: Option<Quantity>,
    pub total: Option<Quantity>,
    pub layers: Option<i64>,
}

impl DeviceEstimate {
    /// A device's share with nothing known yet.
    pub fn new(device: Device) -> DeviceEstimate {
        DeviceEstimate {
            device,
            weights: None,
            kv: None,
            graph: None,
            total: None,
            layers: None,
        }
    }
}

/// What Ollama (or llama-server's `--fit`) estimated before loading.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Estimate {
    pub library: Option<String>,
    pub layers: Layers,
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
    /// llama-server's own projector estimate, weights and compute together (`[mtmd] estimated worst-case
    /// memory usage of mmproj is X MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_total: Option<Quantity>,
    /// The device the estimate charges `projector_total` to (`CPU` when the projector is not offloaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projector_device: Option<Device>,
    /// The speculative draft's context (`[spec] estimated memory usage of MTP context is X MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_total: Option<Quantity>,
    /// What `--fit` did (llama-server era).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitSummary>,
    pub per_device: Vec<DeviceEstimate>,
    /// Which line shape the estimate came from: `offload-e4` … (Ollama's estimate line), `memory-summary`,
    /// `fit-plan` (the `--fit` table chosen as the plan), `fit-probe` (the last probe the fit accepted, the
    /// log stopping before its result), `fit-result` (the fit's per-device result lines, no matching table),
    /// `fit-projection` (the projection line alone), `breakdown-projection` (a table before any decision).
    pub form: String,
    /// How `memory.weights.*` must be read for this era (`blocks+kv` before v0.6.1, `blocks` after).
    pub weights_semantics: String,
    /// Line numbers the estimate was read from.
    pub lines: Vec<u64>,
}
