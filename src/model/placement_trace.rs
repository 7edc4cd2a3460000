//! The estimator's placement decision by decision (`whatif --explain`, JSON `whatif.trace`): which build
//! family's rules were replayed and why, the families tried and what each gives, then the scheduler's tries,
//! the entry filter, the pre-charges, the blocks grouped by GPU, the first block a GPU refused, the last-layer
//! bucket and the final graph charges, each decision with its margin across the log's rounding.

use serde::Serialize;

use super::device::Device;
use super::quantity::human;

/// Free memory minus what a decision needed (positive: it fitted), at the three points of the rounding: every
/// printed figure at the end that leaves the least room, as printed, at the end that leaves the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Margin {
    pub low: i64,
    pub nominal: i64,
    pub high: i64,
    /// What the replay decided (at the point of the rounding it was taken at): it fitted.
    pub fitted: bool,
}

impl Margin {
    /// The margin in words: `missed by 52.5 MiB; within the log's rounding anywhere from 258.6 MiB short to
    /// 153.5 MiB spare, so this decision hangs on the rounding`.
    pub fn describe(&self) -> String {
        let side = |m: i64| {
            if m > 0 {
                format!("{} spare", human(m))
            } else {
                format!("{} short", human(m.saturating_neg()))
            }
        };
        let head = match (self.fitted, self.nominal > 0) {
            (true, true) => format!("fitted with {} to spare", human(self.nominal)),
            (false, false) => format!("missed by {}", human(self.nominal.saturating_neg())),
            (true, false) => format!(
                "fitted only inside the rounding (at the printed figures {} short)",
                human(self.nominal.saturating_neg())
            ),
            (false, true) => format!(
                "refused only inside the rounding (at the printed figures {} spare)",
                human(self.nominal)
            ),
        };
        if self.settled() {
            format!(
                "{head} (the same across the rounding: {} to {})",
                side(self.low),
                side(self.high)
            )
        } else {
            format!(
                "{head}; within the log's rounding anywhere from {} to {}, so this decision hangs on the rounding",
                side(self.low),
                side(self.high)
            )
        }
    }

    /// The decision is the same at every point of the rounding.
    pub fn settled(&self) -> bool {
        (self.low > 0) == (self.high > 0)
    }
}

/// What part of the placement a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceStage {
    /// A GPU set the scheduler offered the estimator before the one the log shows.
    Scheduler,
    /// Whether a GPU passed the entry filter.
    Entry,
    /// What a qualifying GPU is charged before any block.
    PreCharge,
    /// A run of consecutive blocks placed on one GPU.
    Blocks,
    /// A GPU refused a block and left the candidate list.
    Refused,
    /// Blocks no GPU took.
    Unplaced,
    /// The output layer (with the projector, on the Ollama engine from 0.7.1).
    LastLayer,
    /// The graph charged at the end.
    Graph,
    /// The totals the estimate line prints.
    Total,
}

/// One step of the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    pub stage: TraceStage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// The step in words, with its figures.
    pub text: String,
    /// The margin the decision hung on (the tightest of a run of blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<Margin>,
}

/// One family replayed on the log's own figures, and whether it gives what the log printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FamilyTry {
    pub family: String,
    pub builds: String,
    /// Why the family is a candidate.
    pub why: String,
    pub split: Vec<i64>,
    pub offloaded: i64,
    /// Per GPU, as printed figures are read: the replay's allocation (bytes, at the printed figures).
    pub allocations: Vec<i64>,
    pub split_reproduced: bool,
    pub allocations_reproduced: bool,
    /// Which point of the rounding reproduced it (`printed`, `tight`, `loose`), or the one shown.
    pub at: String,
}

/// The placement trace of the family replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacementTrace {
    pub family: String,
    pub builds: String,
    /// Why this family was replayed (evidence, and what it reproduced).
    pub chosen: String,
    /// The family's rules in words.
    pub rules: Vec<String>,
    /// Every family tried, most likely first.
    pub tried: Vec<FamilyTry>,
    pub steps: Vec<TraceStep>,
    /// How the runner reads the split: which blocks each GPU really holds (`createGPULayers` / the Ollama
    /// engine's cumulative proportions from blk.0, the output and vision tensors with the last layer).
    pub runner: Vec<String>,
}
