//! A try before the load that the load then replaced, kept as part of that load rather than as a load of its own
//! (issue 52 part 3). Two runtimes print such tries:
//!
//! * Ollama's scheduler, before 0.30: a layout that could not place every layer beside the models already
//!   loaded, so it evicted one and laid the same load out again (`docs/log-formats.md` §6.3). The load's
//!   measured buffers say whether the model would have fit without the eviction
//!   (`checks::eviction_overestimate`).
//! * llama.cpp's `--fit` (llama-server, and Ollama ≥ 0.30 which runs it): each round of test allocations — the
//!   user's settings first, then every probe of the search — with what it tried, what it projected per device
//!   against what was free, and what the fit decided next (`docs/log-formats.md` §5.4), so a report says why
//!   the load got its split and its context.
//!
//! The kinds are one enum matched without catch-alls: a new kind must be rendered everywhere.

use serde::Serialize;

use super::{Device, Quantity};

/// A try the load replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Attempt {
    /// Ollama's scheduler evicted a model to make space.
    Eviction(Eviction),
    /// A round of llama.cpp's `--fit`.
    FitProbe(FitProbe),
}

impl Attempt {
    /// The line the attempt is known by (the eviction line; the round's first line).
    pub fn line(&self) -> u64 {
        match self {
            Attempt::Eviction(e) => e.line,
            Attempt::FitProbe(p) => p.line,
        }
    }

    /// Every line of the attempt.
    pub fn lines(&self) -> &[u64] {
        match self {
            Attempt::Eviction(e) => &e.lines,
            Attempt::FitProbe(p) => &p.lines,
        }
    }
}

/// One GPU as the eviction attempt saw it (`gpu memory` before the eviction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptGpu {
    /// Ollama's id for the GPU (`id=0`, a UUID).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Free memory less Ollama's minimum and `OLLAMA_GPU_OVERHEAD`, as the layout used it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<Quantity>,
    pub line: u64,
}

/// The scheduler's attempt: what it asked, what it had, what it evicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// The model's layers the attempt laid out (`loading model "model layers"=N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<i64>,
    /// The layers that fit beside the loaded models (`"loaded layers"=N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_fit: Option<i64>,
    /// Each GPU's memory when the attempt was made.
    pub gpus: Vec<AttemptGpu>,
    /// What was evicted, as the log says it (Ollama names no model: "a model").
    pub evicted: String,
    /// The eviction line.
    pub line: u64,
    /// Every line of the attempt.
    pub lines: Vec<u64>,
}

impl Eviction {
    /// The memory every GPU of the attempt had available, summed (`None` when a GPU's figure is missing).
    pub fn available(&self) -> Option<Quantity> {
        let figures: Option<Vec<Quantity>> = self.gpus.iter().map(|g| g.available).collect();
        Quantity::sum(figures?)
    }
}

/// What a `--fit` round measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitProbeTried {
    /// The user's settings (`getting device memory data for initial parameters`): the default split at the
    /// configured context.
    UserSettings,
    /// A probe of the fit's search: layers per device (`id=K, n_layer=L`) or a smaller context.
    Probe,
}

/// What the fit decided after a round, as its lines say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitProbeDecision {
    /// Every device keeps its margin with the user's settings: the load goes on as asked
    /// (`… no changes needed`).
    NoChange,
    /// A device misses its margin with the user's settings: the fit must shed memory
    /// (`cannot meet free memory target …, need to reduce device memory by D MiB`).
    Reduce,
    /// The fit cut the context after this round (`context size reduced from A to B`).
    ContextReduced,
    /// The round fits: the search keeps its layers and tries more (`set ngl_per_device[K].n_layer=L`).
    Kept,
    /// The round does not fit (`set ngl_per_device_high[K]…`, or a device projected over what the fit lets it
    /// use).
    TooLarge,
    /// The round's figures are the fit's result: the split the load got.
    Plan,
    /// The log prints no decision on this round (a measurement the search builds on, or the log stops).
    Measured,
}

/// One device of a `--fit` round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitProbeDevice {
    /// The device, when the round's table or the fit's device lines name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// The device's place among the fit's devices (`id=K`), when a probe line gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// Layers the round put on the device (`n_layer=L`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<i64>,
    /// Of those, layers only partly on the device (`n_part=P`, a MoE's dense-only layers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_layers: Option<i64>,
    /// What the round projected the device would use (the table's `self`, the probe's `mem`, the projection's
    /// `used`), MiB truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projected: Option<Quantity>,
    /// The device's free memory as the fit measured it, MiB truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<Quantity>,
    /// What the fit lets the device use: its free memory less the margin (`id=K, target=T MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Quantity>,
    pub line: u64,
}

/// A round of llama.cpp's `--fit`: what it tried, what it projected, what the fit decided next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitProbe {
    /// The round's place in the fit as the log shows it (1 = the first round the log holds).
    pub round: u32,
    pub tried: FitProbeTried,
    /// The context the round was measured at, when the fit's lines say it (`context size reduced from A to B`,
    /// `context size set by user to N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<i64>,
    pub devices: Vec<FitProbeDevice>,
    pub decision: FitProbeDecision,
    /// What the user's settings had to shed (`need to reduce device memory by D MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduce_by: Option<Quantity>,
    /// The context the fit settled on after this round (`ContextReduced`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_to: Option<i64>,
    /// The test allocation's buffer lines (`load_tensors: … model buffer size`, KV and compute buffers) that
    /// llama.cpp printed while measuring this round, before its table or figures: the attempt's, never the
    /// load's (`loads[].lifecycle.dry_run_buffers` lists them all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buffer_lines: Vec<u64>,
    /// The round's first line.
    pub line: u64,
    /// Every line of the round.
    pub lines: Vec<u64>,
}
