//! Findings: what vramdiff concludes about a load, in words a user can act on, with the log lines the
//! conclusion rests on. Codes are stable (part of the JSON contract); messages and hints may be reworded.

use serde::{Serialize, Serializer};

use super::device::Device;
use super::reconciled::Component;

/// A finding's stable code: the kebab-case word of the JSON contract (`needless-split`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingCode {
    LoadFailed,
    GpuUnused,
    IncompleteLoad,
    Underestimate,
    NeedlessSplit,
    CpuOffloadWithFreeVram,
    ProjectorOnCpu,
    ProjectorHeadroom,
    GraphChargedPerGpu,
    ProjectorDoubleCounted,
    KvMismatch,
    Overestimate,
    EvictionOverestimate,
    UnattributedMemory,
    PsMismatch,
    KnobIgnored,
    ContextReduced,
    HostNotVram,
    RoundingLimited,
    FitAborted,
    PartialOffload,
    GraphEstimateOff,
    KvTooSmall,
    BudgetExceeded,
    ForeignMemory,
    RankImbalance,
    WorkingSetExceeded,
    RuntimeGrowth,
    ComputeImbalance,
    LoadRecovered,
    PromptCacheOverLimit,
    ServingHostMemory,
    ClientTimeout,
    KvCacheFull,
}

impl FindingCode {
    /// Every code with its word, in the order of the check registry.
    pub const ALL: [(FindingCode, &'static str); 34] = [
        (FindingCode::LoadFailed, "load-failed"),
        (FindingCode::GpuUnused, "gpu-unused"),
        (FindingCode::IncompleteLoad, "incomplete-load"),
        (FindingCode::Underestimate, "underestimate"),
        (FindingCode::NeedlessSplit, "needless-split"),
        (
            FindingCode::CpuOffloadWithFreeVram,
            "cpu-offload-with-free-vram",
        ),
        (FindingCode::ProjectorOnCpu, "projector-on-cpu"),
        (FindingCode::ProjectorHeadroom, "projector-headroom"),
        (FindingCode::GraphChargedPerGpu, "graph-charged-per-gpu"),
        (
            FindingCode::ProjectorDoubleCounted,
            "projector-double-counted",
        ),
        (FindingCode::KvMismatch, "kv-mismatch"),
        (FindingCode::Overestimate, "overestimate"),
        (FindingCode::EvictionOverestimate, "eviction-overestimate"),
        (FindingCode::UnattributedMemory, "unattributed-memory"),
        (FindingCode::PsMismatch, "ps-mismatch"),
        (FindingCode::KnobIgnored, "knob-ignored"),
        (FindingCode::ContextReduced, "context-reduced"),
        (FindingCode::HostNotVram, "host-not-vram"),
        (FindingCode::RoundingLimited, "rounding-limited"),
        (FindingCode::FitAborted, "fit-aborted"),
        (FindingCode::PartialOffload, "partial-offload"),
        (FindingCode::GraphEstimateOff, "graph-estimate-off"),
        (FindingCode::KvTooSmall, "kv-too-small"),
        (FindingCode::BudgetExceeded, "budget-exceeded"),
        (FindingCode::ForeignMemory, "foreign-memory"),
        (FindingCode::RankImbalance, "rank-imbalance"),
        (FindingCode::WorkingSetExceeded, "working-set-exceeded"),
        (FindingCode::RuntimeGrowth, "runtime-growth"),
        (FindingCode::ComputeImbalance, "compute-imbalance"),
        (FindingCode::LoadRecovered, "load-recovered"),
        (FindingCode::PromptCacheOverLimit, "prompt-cache-over-limit"),
        (FindingCode::ServingHostMemory, "serving-host-memory"),
        (FindingCode::ClientTimeout, "client-timeout"),
        (FindingCode::KvCacheFull, "kv-cache-full"),
    ];

    /// The contract's word.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(c, _)| *c == self)
            .map(|(_, w)| *w)
            .expect("every code has a word")
    }

    /// Information whatever its context: its appearance is never a regression (`diff`, `batch --baseline`).
    /// Every code decides here, so a new one cannot be forgotten.
    pub fn is_information(self) -> bool {
        match self {
            FindingCode::HostNotVram
            | FindingCode::RoundingLimited
            | FindingCode::IncompleteLoad
            | FindingCode::LoadRecovered => true,
            FindingCode::GraphEstimateOff
            | FindingCode::KvTooSmall
            | FindingCode::BudgetExceeded
            | FindingCode::ForeignMemory
            | FindingCode::RankImbalance
            | FindingCode::WorkingSetExceeded
            | FindingCode::RuntimeGrowth
            | FindingCode::ComputeImbalance
            | FindingCode::PromptCacheOverLimit
            | FindingCode::ServingHostMemory
            | FindingCode::ClientTimeout
            | FindingCode::KvCacheFull => false,
            FindingCode::LoadFailed
            | FindingCode::GpuUnused
            | FindingCode::Underestimate
            | FindingCode::NeedlessSplit
            | FindingCode::CpuOffloadWithFreeVram
            | FindingCode::ProjectorOnCpu
            | FindingCode::ProjectorHeadroom
            | FindingCode::GraphChargedPerGpu
            | FindingCode::ProjectorDoubleCounted
            | FindingCode::KvMismatch
            | FindingCode::Overestimate
            | FindingCode::EvictionOverestimate
            | FindingCode::UnattributedMemory
            | FindingCode::PsMismatch
            | FindingCode::FitAborted
            | FindingCode::PartialOffload => false,
            FindingCode::KnobIgnored | FindingCode::ContextReduced => false,
        }
    }

    /// The code a word names (a baseline table, the command line).
    pub fn parse(word: &str) -> Option<FindingCode> {
        Self::ALL.iter().find(|(_, w)| *w == word).map(|(c, _)| *c)
    }
}

impl std::fmt::Display for FindingCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FindingCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

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
    /// Stable code (`needless-split`).
    pub code: FindingCode,
    pub severity: Severity,
    /// One line with the figures.
    pub message: String,
    /// The knob to turn.
    pub hint: String,
    /// Log lines the finding rests on.
    pub lines: Vec<u64>,
    pub device: Option<Device>,
    pub component: Option<Component>,
}

/// A concrete setting to try, with its expected effect in figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The setting as a user would type it (`CUDA_VISIBLE_DEVICES=GPU-1e96…`, `num_ctx=2048`).
    pub setting: String,
    /// What it should change, in figures.
    pub effect: String,
    /// The finding codes it answers.
    pub because: Vec<FindingCode>,
}
