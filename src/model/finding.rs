//! Findings: what vramdiff concludes about a load, in words a user can act on, with the log lines the
//! conclusion rests on. Codes are stable (part of the JSON contract); messages and hints may be reworded.

use serde::Serialize;

use super::device::Device;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parse a severity name as the command line accepts it.
    pub fn parse(text: &str) -> Option<Severity> {
        match text.to_ascii_lowercase().as_str() {
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// One conclusion about a load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable kebab-case code (`needless-split`).
    pub code: &'static str,
    pub severity: Severity,
    /// One line with the figures.
    pub message: String,
    /// The knob to turn.
    pub hint: String,
    /// Log lines the finding rests on.
    pub lines: Vec<u64>,
    pub device: Option<Device>,
    pub component: Option<String>,
}

/// A concrete setting to try, with its expected effect in figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The setting as a user would type it (`CUDA_VISIBLE_DEVICES=GPU-1e96…`, `num_ctx=2048`).
    pub setting: String,
    /// What it should change, in figures.
    pub effect: String,
    /// The finding codes it answers.
    pub because: Vec<&'static str>,
}
