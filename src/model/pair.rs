//! Two loads of one model on one runtime whose settings differ, and what the replay of the first with the
//! second's settings predicted beside what the second measured (issue 53). A user who restarts with another
//! context, micro-batch, KV type or layer count and pastes both runs has measured a lever of `whatif`: these
//! types hold that check, per component and per device, with the rounding of both sides. Part of the JSON
//! contract as the report's `pairs[]` (an addition of schema_version 1, written only when a pair is found).

use serde::Serialize;

use super::device::Device;
use super::quantity::Quantity;

/// How the two loads were taken to be of one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "by", content = "value")]
pub enum ModelIdentity {
    /// Ollama's blob digest (`sha256-…`).
    Digest(String),
    /// The model file's name (`-m …/gpt-oss-20b-mxfp4.gguf`).
    File(String),
    /// The model a serving engine's arguments name (`meta-llama/Meta-Llama-3-8B`, a local folder).
    Name(String),
    /// No model named, but the same weight buffers to the byte on the same devices (a paste of buffer lines).
    Weights(String),
}

impl ModelIdentity {
    /// The identity in words.
    pub fn words(&self) -> String {
        match self {
            ModelIdentity::Digest(d) => format!("blob {d}"),
            ModelIdentity::File(f) | ModelIdentity::Name(f) => f.clone(),
            ModelIdentity::Weights(w) => format!("model not named; the same weights ({w})"),
        }
    }
}

/// One setting that differs between the two loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingChange {
    /// The setting in vramdiff's words (`ctx`, `ubatch`, `kv-type`, `flash-attention`, `ngl`…).
    pub setting: String,
    pub before: String,
    pub after: String,
    /// Whether the replay models it (a `whatif` lever reaches it); when not, `why` says so.
    pub modelled: bool,
    /// What the replay does with it, or why it cannot (`flash attention on → off: not modelled`).
    pub why: String,
}

/// How a prediction met the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairVerdict {
    /// The prediction's range and the measurement's overlap: no error can be claimed.
    WithinRounding,
    /// Predicted above what was measured, beyond the rounding of both.
    Over,
    /// Predicted below what was measured, beyond the rounding of both.
    Under,
    /// A setting that changed moves this figure and the replay cannot model it: no prediction.
    NotModelled,
    /// The second load did not log this figure, or the first did not log what the prediction starts from.
    NotMeasured,
}

impl LoadPair {
    /// The figures a chart of the pair draws: those in bytes (not the layer counts) either load logged.
    pub fn figures_in_bytes(&self) -> Vec<&PairFigure> {
        self.figures
            .iter()
            .filter(|f| f.component != "layers" && (f.before.is_some() || f.measured.is_some()))
            .collect()
    }
}

impl PairFigure {
    /// The verdict in words, an unverified lever's said so (`within rounding (unverified lever)`).
    pub fn verdict_words(&self) -> String {
        if self.unverified {
            format!("{} (unverified lever)", self.verdict.as_str())
        } else {
            self.verdict.as_str().to_string()
        }
    }
}

impl PairVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            PairVerdict::WithinRounding => "within rounding",
            PairVerdict::Over => "over",
            PairVerdict::Under => "under",
            PairVerdict::NotModelled => "not modelled",
            PairVerdict::NotMeasured => "not measured",
        }
    }
}

/// One component (on one device, or in all) predicted and measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairFigure {
    /// `weights`, `kv`, `compute` or `layers` (the layers on the GPUs: counts, not bytes).
    pub component: String,
    /// The device, when the figure is one device's; `null`: every device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// The first load's figure as logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Quantity>,
    /// The replay's figure at the second load's settings, its range carried from the first load's rounding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Quantity>,
    /// The second load's figure as logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Quantity>,
    /// predicted − measured (nominal), when both are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<i64>,
    pub verdict: PairVerdict,
    /// The levers that move the figure in the replay (empty: the replay predicts it unchanged).
    pub levers: Vec<String>,
    /// The changed settings that move this figure and that the replay cannot model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_modelled: Vec<String>,
    /// The prediction rests on a lever no real pair has checked yet on this runtime
    /// (`crate::pairs::settings::verified`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
}

/// A suggestion the first load printed whose setting is the change the user made, and whether it delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuggestionOutcome {
    /// The suggestion's setting, as the first load's report printed it.
    pub setting: String,
    /// Its promised effect, as printed.
    pub effect: String,
    /// Whether the figures it moves came within the rounding of the replay (`null`: nothing to judge by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered: Option<bool>,
    pub text: String,
}

/// Two loads of one model and runtime, the second's settings replayed on the first, beside what it measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadPair {
    /// The loads' numbers in the report (from 1).
    pub first: usize,
    pub second: usize,
    /// The runtime's name (`llama.cpp`, `Ollama's engine`…).
    pub runtime: String,
    /// The llama.cpp build or Ollama version the second load printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub model: ModelIdentity,
    /// The settings that differ; empty when the log prints neither load's settings.
    pub changed: Vec<SettingChange>,
    /// The figures compared, totals first, then per device.
    pub figures: Vec<PairFigure>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<SuggestionOutcome>,
    /// What kept the pair from a prediction, when something did (no settings logged, a lever refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
