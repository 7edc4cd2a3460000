//! llama.cpp's lifecycle of one load, as the log shows it: which phase each breakdown table and each run of
//! buffer lines belongs to (`docs/log-formats.md` §5.7).
//!
//! llama.cpp prints the same shapes of lines for a test allocation (the `--fit` dry run) and for memory in
//! use (the real load, the table at exit). A reader who takes one for the other gets every verdict wrong, so
//! the phase of each is decided once, from its position and its own signature, and kept here with the
//! evidence; every later stage reads this instead of looking at the lines again.

use serde::Serialize;

/// The phases of one llama.cpp load, in the order llama.cpp goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LifecyclePhase {
    /// `ggml_cuda_init`, `ggml_vulkan:`, `ggml_metal_init`, `device_info`, `using device`.
    DeviceDiscovery,
    /// `fitting params to device memory ...`.
    FitStart,
    /// A test allocation: a table or buffer lines with no memory behind them.
    DryRun,
    /// The fit's result (no change, reduced, moved, aborted, failed).
    FitResult,
    /// The real load: `offloaded L/M layers`, buffers after the fit.
    RealLoad,
    /// `model loaded`, slots, requests.
    Serving,
    /// The table printed at exit.
    Exit,
}

/// What a breakdown table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TablePhase {
    /// A test allocation of the fit (never memory in use).
    DryRun,
    /// The dry run the fit chose: the per-device estimate.
    Plan,
    /// Memory in use, printed at exit: an actual.
    Exit,
}

/// Why a table was given its phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableEvidence {
    /// Printed between the fit's start and its result.
    InsideFit,
    /// `unaccounted` is negative (free + self exceeds the total): a no-alloc dry run.
    NegativeUnaccounted,
    /// `unaccounted` is zero or more (free + self + unaccounted = total) after the load allocated.
    AddsUpAfterLoad,
    /// `unaccounted` is zero or more with no fit and no load around it: a table pasted alone, judged by its
    /// signature as the exit table.
    AddsUpAlone,
}

/// One breakdown table and its phase.
#[derive(Debug, Clone, Serialize)]
pub struct TableRecord {
    /// The line of its first row.
    pub line: u64,
    pub phase: TablePhase,
    pub evidence: TableEvidence,
}

/// Why buffer lines were taken as a test allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DryRunEvidence {
    /// A GPU buffer of 0.00 MiB while the same component is sized elsewhere (`KV buffer size = 0.00 MiB`).
    ZeroSizeBuffer,
    /// The fit's lines (or a dry-run table) follow them before any real load.
    FitFollows,
}

/// Buffer lines that were a test allocation, not memory in use.
#[derive(Debug, Clone, Serialize)]
pub struct DryRunBuffers {
    pub lines: Vec<u64>,
    pub evidence: Vec<DryRunEvidence>,
}

/// The lifecycle of one load (empty for runtimes that print none of it).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Lifecycle {
    /// The first line of each phase the log shows, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<(LifecyclePhase, u64)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<TableRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run_buffers: Option<DryRunBuffers>,
}

impl Lifecycle {
    pub fn is_empty(&self) -> bool {
        self.phases.is_empty() && self.tables.is_empty() && self.dry_run_buffers.is_none()
    }

    /// Record that `phase` is reached at `line` (only its first line is kept).
    pub fn reach(&mut self, phase: LifecyclePhase, line: u64) {
        if !self.phases.iter().any(|(p, _)| *p == phase) {
            self.phases.push((phase, line));
        }
    }

    /// The phase of the table whose first row is at `line`.
    pub fn table_at(&self, line: u64) -> Option<TablePhase> {
        self.tables.iter().find(|t| t.line == line).map(|t| t.phase)
    }
}
