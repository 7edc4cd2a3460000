//! The last stage's result: a reconciled load with what vramdiff concludes about it — the placement replay,
//! the findings and the settings to try. This is what the reporters render.

use serde::Serialize;

use super::finding::{Finding, Suggestion};
use super::reconciled::Reconciled;
use super::whatif::WhatIf;

/// A load, concluded. An earlier stage's value is read by its path (`concluded.reconciled.devices`,
/// `concluded.reconciled.load.estimate`): the stage types contain each other, none stands in for another.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Concluded {
    #[serde(flatten)]
    pub reconciled: Reconciled,
    /// What vramdiff concludes, most severe first.
    pub findings: Vec<Finding>,
    /// The placement replay; `null` when the log lacks the figures it needs.
    pub whatif: Option<WhatIf>,
    /// Settings to try, with their expected effect.
    pub suggestions: Vec<Suggestion>,
}
