//! What was estimated before a load: Ollama's estimate (its single line, or the per-device memory summary) or
//! the plan llama.cpp's `--fit` chose, per device, with the lines it was read from.

use serde::{Serialize, Serializer};

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

/// What llama.cpp's `--fit` decided (the JSON has `no-change`, `changed`, `aborted`, `failed`
/// or `unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitDecision {
    /// Every device kept its margin: the user's settings are the plan ("no changes needed").
    NoChange,
    /// Layers or the context were moved to meet the margins.
    Changed,
    /// The fit gave up because a setting it may not change was set by the user (`-ngl`, a tensor split,
    /// tensor overrides) or the split mode is not supported: the load goes on unfitted.
    Aborted,
    /// The fit failed with an error: the load goes on unfitted.
    Failed,
    /// The log stops before the fit decided.
    #[default]
    Unknown,
}

/// What llama.cpp's `--fit` did before loading.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FitSummary {
    pub outcome: FitDecision,
    /// The free-memory target per device (`vs. target of 1024`, `cannot meet free memory target of 1024 MiB`).
    pub target: Option<Quantity>,
    /// How much the first projection had to shed (`need to reduce device memory by 133 MiB`).
    pub reduce_by: Option<Quantity>,
    /// The context the fit settled on, when it printed one (`context size reduced from A to B`).
    pub context: Option<i64>,
    /// Whether the user's context was kept (`context size set by user to N -> no change`).
    pub context_by_user: Option<bool>,
    /// The context the plan's table was measured at, when the fit reduced it afterwards: the plan's KV
    /// figures are scaled from it to [`Self::context`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_scaled_from: Option<i64>,
    /// Breakdown tables printed while fitting (each a test allocation, none of them memory in use).
    pub probes: u32,
    /// Line of the table chosen as the plan (the probe matching the result, or the first table).
    pub plan_line: Option<u64>,
    /// `fitting params to free memory took N seconds`.
    pub seconds: Option<f64>,
    /// Free memory per device as the fit measured it (MiB, truncated), in device order.
    pub free: Vec<DeviceFree>,
    pub lines: Vec<u64>,
    /// Why the fit stopped without placing anything (aborted or failed), with its line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<FitStop>,
    /// What the first projection (the user's settings) said a device would use
    /// (`projected to use U MiB of device memory`), MiB truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projected: Option<Quantity>,
    /// The host's total memory as a fit without a GPU measured it (`projected to use U MiB of host memory vs.
    /// T MiB of total host memory`), MiB truncated: what that fit fills, less its target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_total: Option<Quantity>,
    /// Layers the result lets overflow into host memory (`N layers ( K overflowing)`), summed over devices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflowing: Option<i64>,
}

/// Why llama.cpp's fit stopped (`failed to fit params to free device memory: …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitStopCause {
    /// `n_gpu_layers already set by user to N, abort` (`-ngl`; Ollama's `num_gpu`).
    GpuLayersSetByUser,
    /// `tensor_split already set by user, abort` (`-ts`).
    TensorSplitSetByUser,
    /// `model_params::tensor_buft_overrides already set by user, abort` (`-ot`, `--n-cpu-moe`).
    OverridesSetByUser,
    /// `llama_params_fit is not implemented for SPLIT_MODE_TENSOR`.
    SplitModeTensor,
    /// Any other reason: the fit failed.
    Error,
}

impl FitStopCause {
    /// The user's setting stopped the fit (it aborted rather than failed).
    pub fn is_abort(self) -> bool {
        !matches!(self, FitStopCause::Error)
    }
}

/// The fit's stop line, read.
#[derive(Debug, Clone, Serialize)]
pub struct FitStop {
    pub cause: FitStopCause,
    /// The value the user set, when the line prints it (`-ngl 999999`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    pub line: u64,
}

impl FitStop {
    /// Why the fit stopped, in words (the report's facts and `fit-aborted` say it alike).
    pub fn reason(&self) -> String {
        match self.cause {
            FitStopCause::GpuLayersSetByUser => match self.value {
                Some(n) => format!("the GPU layers were set by the user ({n})"),
                None => "the GPU layers were set by the user".to_string(),
            },
            FitStopCause::TensorSplitSetByUser => "a tensor split was set by the user".to_string(),
            FitStopCause::OverridesSetByUser => "tensor overrides were set by the user".to_string(),
            FitStopCause::SplitModeTensor => {
                "the fit does not support the tensor split mode".to_string()
            }
            FitStopCause::Error => "an error".to_string(),
        }
    }
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
    /// The line of the `[spec]` estimate.
    #[serde(skip)]
    pub draft_line: Option<u64>,
    /// What `--fit` did (llama-server era).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitSummary>,
    pub per_device: Vec<DeviceEstimate>,
    /// Which line shape the estimate came from.
    pub form: EstimateForm,
    /// How `memory.weights.*` must be read for this era.
    pub weights_semantics: WeightsSemantics,
    /// Line numbers the estimate was read from.
    pub lines: Vec<u64>,
    /// The estimate line's `source=file:line` (where the build printed it): the build family's fingerprint.
    #[serde(skip)]
    pub source_position: Option<String>,
    /// The estimate line's date (`time=`'s `YYYY-MM-DD`).
    #[serde(skip)]
    pub logged_on: Option<String>,
}

impl Estimate {
    /// llama.cpp printed it (its `--fit` lines or a breakdown table), not Ollama: its per-device figures are a
    /// table's columns, summed by llama.cpp's rules.
    pub fn from_llama_cpp(&self) -> bool {
        self.fit.is_some() || self.form == EstimateForm::BreakdownProjection
    }
}

/// The historical shapes of Ollama's `offload to <library>` line (`docs/log-formats.md` §1), as the grammar
/// rules name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OffloadShape {
    E1,
    E2,
    E3,
    E4E6,
    E7E8,
    /// The estimate printed again when a model is evicted to make room (`msg="evicting model to make room"`).
    Eviction,
    /// A rule that does not name its shape.
    #[default]
    Unnamed,
}

impl OffloadShape {
    /// Every named shape with the word a grammar rule sets (`set = { form = "e4-e6" }`).
    pub const NAMED: [(OffloadShape, &'static str); 6] = [
        (OffloadShape::E1, "e1"),
        (OffloadShape::E2, "e2"),
        (OffloadShape::E3, "e3"),
        (OffloadShape::E4E6, "e4-e6"),
        (OffloadShape::E7E8, "e7-e8"),
        (OffloadShape::Eviction, "eviction"),
    ];

    /// The shape a grammar word names.
    pub fn named(word: &str) -> Option<OffloadShape> {
        Self::NAMED
            .iter()
            .find(|(_, w)| *w == word)
            .map(|(s, _)| *s)
    }

    /// The grammar's word for the shape.
    pub fn as_str(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("offload", |(_, w)| w)
    }

    /// Shapes from before v0.6.1, whose `memory.weights.total` summed each block's weights with its KV share.
    pub fn weights_include_kv(self) -> bool {
        matches!(
            self,
            OffloadShape::E1 | OffloadShape::E2 | OffloadShape::E3 | OffloadShape::E4E6
        )
    }
}

/// Which line shape an estimate came from. Serialized as the word the JSON contract carries
/// (`offload-e4-e6`, `memory-summary`, `fit-plan` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimateForm {
    /// Ollama's `offload to <library>` line.
    Offload(OffloadShape),
    /// The Ollama engine's per-device memory summary (`msg="model weights" … phase=estimate`).
    MemorySummary,
    /// The `--fit` breakdown table chosen as the plan.
    FitPlan,
    /// The last probe the fit accepted, the log stopping before its result.
    FitProbe,
    /// The fit's per-device result lines, no table matching them.
    FitResult,
    /// The fit's projection line alone.
    FitProjection,
    /// A breakdown table printed before any fit decision.
    BreakdownProjection,
    /// vLLM's memory profile per rank: its budget split into weights, non-torch, activation peak, the
    /// CUDA-graph estimate and the KV cache.
    VllmProfile,
    /// SGLang's pool per rank: the weights, the KV pool and what is left of `--mem-fraction-static`.
    SglangPool,
}

impl Default for EstimateForm {
    fn default() -> Self {
        EstimateForm::Offload(OffloadShape::Unnamed)
    }
}

impl EstimateForm {
    /// The contract's word for the form.
    pub fn as_str(self) -> &'static str {
        match self {
            EstimateForm::Offload(shape) => match shape {
                OffloadShape::E1 => "offload-e1",
                OffloadShape::E2 => "offload-e2",
                OffloadShape::E3 => "offload-e3",
                OffloadShape::E4E6 => "offload-e4-e6",
                OffloadShape::E7E8 => "offload-e7-e8",
                OffloadShape::Eviction => "offload-eviction",
                OffloadShape::Unnamed => "offload",
            },
            EstimateForm::MemorySummary => "memory-summary",
            EstimateForm::FitPlan => "fit-plan",
            EstimateForm::FitProbe => "fit-probe",
            EstimateForm::FitResult => "fit-result",
            EstimateForm::FitProjection => "fit-projection",
            EstimateForm::BreakdownProjection => "breakdown-projection",
            EstimateForm::VllmProfile => "vllm-profile",
            EstimateForm::SglangPool => "sglang-pool",
        }
    }

    /// Ollama's single estimate line (any shape).
    pub fn is_offload_line(self) -> bool {
        matches!(self, EstimateForm::Offload(_))
    }

    /// Read from a llama.cpp memory breakdown table (the `--fit` plan, an accepted probe, or a table printed
    /// before the fit decided).
    pub fn is_table(self) -> bool {
        matches!(
            self,
            EstimateForm::FitPlan | EstimateForm::FitProbe | EstimateForm::BreakdownProjection
        )
    }

    /// Printed by llama.cpp's `--fit` (its plan, a probe, its result or its projection).
    pub fn is_fit(self) -> bool {
        matches!(
            self,
            EstimateForm::FitPlan
                | EstimateForm::FitProbe
                | EstimateForm::FitResult
                | EstimateForm::FitProjection
        )
    }
}

impl std::fmt::Display for EstimateForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EstimateForm {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How an estimate's `memory.weights.*` figures must be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightsSemantics {
    /// Before v0.6.1: `memory.weights.total` summed each block's weights *and* its KV share.
    BlocksWithKv,
    /// From v0.6.1: block weights alone (v0.6.3 added the output layer).
    #[default]
    Blocks,
    /// Per-device figures (memory summary, `--fit` tables): weights are their own column.
    PerDevice,
}

impl WeightsSemantics {
    /// The contract's word.
    pub fn as_str(self) -> &'static str {
        match self {
            WeightsSemantics::BlocksWithKv => "blocks+kv",
            WeightsSemantics::Blocks => "blocks",
            WeightsSemantics::PerDevice => "per-device",
        }
    }
}

impl Serialize for WeightsSemantics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_offload_shape_reads_back_from_its_grammar_word() {
        for (shape, word) in OffloadShape::NAMED {
            assert_eq!(OffloadShape::named(word), Some(shape));
            assert_eq!(shape.as_str(), word);
            assert_eq!(
                EstimateForm::Offload(shape).as_str(),
                format!("offload-{word}")
            );
        }
        assert_eq!(OffloadShape::named("e9"), None);
    }

    #[test]
    fn forms_serialize_as_the_contract_words() {
        let json =
            serde_json::to_string(&[EstimateForm::FitPlan, EstimateForm::MemorySummary]).unwrap();
        assert_eq!(json, r#"["fit-plan","memory-summary"]"#);
        assert_eq!(
            serde_json::to_string(&WeightsSemantics::BlocksWithKv).unwrap(),
            r#""blocks+kv""#
        );
    }
}
