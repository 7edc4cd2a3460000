//! Findings: the checks that turn a reconciled load (and its replay) into conclusions a user can act on.
//!
//! One check per file, each a `pub const DEF: CheckDef`: its [`FindingCode`] (stable, part of the JSON
//! contract), a one-line summary, and `fn check(cx: &Context, out: &mut Vec<Finding>)`; all are listed in
//! [`REGISTRY`]. A check sees the [`Reconciled`] load and its replay (so the compiler keeps checks after the
//! reconcile stage) and never another check's findings. It fires only when its premise is in the log (the
//! figures it needs are there); it says nothing otherwise. [`suggest`] turns findings and the replay into
//! settings to try, in the knobs of the load's era; `pipeline::conclude` runs both and makes the `Concluded` load.

mod budget_exceeded;
mod client_timeout;
pub mod compute_imbalance;
mod context_reduced;
mod cpu_offload_with_free_vram;
mod eviction_overestimate;
mod fit_aborted;
mod foreign_memory;
mod gpu_unused;
mod graph_charged_per_gpu;
mod graph_estimate_off;
mod host_not_vram;
mod incomplete_load;
mod knob_ignored;
mod kv_cache_full;
mod kv_mismatch;
mod kv_too_small;
mod load_failed;
mod load_recovered;
mod needless_split;
mod overestimate;
mod partial_offload;
mod projector_double_counted;
mod projector_headroom;
mod projector_on_cpu;
mod prompt_cache_over_limit;
mod ps_mismatch;
mod rank_imbalance;
mod rounding_limited;
mod runtime_growth;
mod serving_figures;
pub mod serving_host_memory;
pub mod suggest;
mod unattributed_memory;
mod underestimate;
mod working_set_exceeded;

use crate::model::{
    human, Cell, Component, ComponentRow, Device, Finding, FindingCode, Part, Quantity, Reconciled,
    Severity, WhatIf, GIB, MIB,
};

/// Thresholds the user can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckConfig {
    /// `overestimate` fires when the estimate exceeds reality by more than this percentage …
    pub over_percent: i64,
    /// … and by more than this many bytes.
    pub over_bytes: i64,
    /// `unattributed-memory` fires when nvidia-smi shows at least this much beyond the buffers on a GPU.
    pub unattributed_bytes: i64,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            over_percent: 10,
            over_bytes: 256 * MIB,
            unattributed_bytes: GIB,
        }
    }
}

/// What a check sees: the reconciled load and its placement replay (never other findings: a check stands on
/// the evidence, so the order of the registry cannot change what it says).
pub struct Context<'a> {
    pub load: &'a Reconciled,
    pub whatif: Option<&'a WhatIf>,
    pub config: &'a CheckConfig,
}

impl Context<'_> {
    pub fn component(&self, c: Component) -> Option<&ComponentRow> {
        self.load.components.iter().find(|r| r.component == c)
    }

    /// Line numbers of the estimate.
    pub fn estimate_lines(&self) -> Vec<u64> {
        self.load
            .load
            .estimate
            .as_ref()
            .map(|e| e.lines.clone())
            .unwrap_or_default()
    }

    /// The sum of a GPU's buffers of one part, with the lines they came from (the reconcile stage's grid).
    pub fn gpu_buffers(&self, device: &Device, part: Part) -> Option<&Cell> {
        device
            .is_gpu()
            .then(|| self.load.grid.cell(device, part))
            .flatten()
    }

    /// ` (NVIDIA GeForce RTX 3090)` for a device whose GPU the log names, else nothing.
    pub fn gpu_label(&self, device: &Device) -> String {
        device
            .position()
            .and_then(|i| self.load.load.gpus.get(i))
            .and_then(|g| g.name.as_deref())
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    }

    /// The log ends before the load finished: allocations still to come (a sliding-window model's second
    /// cache, the other ranks') are not in it, so less allocated than estimated is no evidence of anything.
    pub fn unfinished(&self) -> bool {
        self.load
            .load
            .source
            .partial_reasons
            .iter()
            .any(|r| matches!(r, crate::model::PartialReason::Unfinished(_)))
    }

    /// The estimate is larger than reality by more than the configured margin (beyond rounding).
    pub fn clearly_over(&self, estimated: Quantity, actual: Quantity) -> bool {
        self.beyond_margin(estimated.low - actual.high, estimated.bytes)
    }

    /// A gap between two figures' bounds passes the configured margin (`--over-min`, and `--over-percent` of
    /// `base`).
    pub fn beyond_margin(&self, gap: i64, base: i64) -> bool {
        // In i128: a gap near the i64 limit (an /api/ps figure, the ps fuzz target found it) times 100.
        gap > self.config.over_bytes
            && gap as i128 * 100 > base as i128 * self.config.over_percent as i128
    }
}

/// Build a finding.
#[allow(clippy::too_many_arguments)]
pub fn finding(
    code: FindingCode,
    severity: Severity,
    message: String,
    hint: &str,
    mut lines: Vec<u64>,
    device: Option<&Device>,
    component: Option<Component>,
) -> Finding {
    lines.sort_unstable();
    lines.dedup();
    Finding {
        code,
        severity,
        message,
        hint: hint.to_string(),
        lines,
        device: device.cloned(),
        component,
    }
}

/// A check: its stable code, what it looks for, and the function.
pub struct CheckDef {
    pub code: FindingCode,
    pub summary: &'static str,
    pub run: fn(&Context, &mut Vec<Finding>),
}

/// Every check, in the order their findings are listed for equal severity.
pub const REGISTRY: &[CheckDef] = &[
    load_failed::DEF,
    gpu_unused::DEF,
    incomplete_load::DEF,
    underestimate::DEF,
    needless_split::DEF,
    cpu_offload_with_free_vram::DEF,
    projector_on_cpu::DEF,
    projector_headroom::DEF,
    graph_charged_per_gpu::DEF,
    projector_double_counted::DEF,
    kv_mismatch::DEF,
    overestimate::DEF,
    eviction_overestimate::DEF,
    unattributed_memory::DEF,
    ps_mismatch::DEF,
    knob_ignored::DEF,
    context_reduced::DEF,
    host_not_vram::DEF,
    rounding_limited::DEF,
    fit_aborted::DEF,
    partial_offload::DEF,
    graph_estimate_off::DEF,
    kv_too_small::DEF,
    budget_exceeded::DEF,
    foreign_memory::DEF,
    rank_imbalance::DEF,
    working_set_exceeded::DEF,
    runtime_growth::DEF,
    compute_imbalance::DEF,
    load_recovered::DEF,
    prompt_cache_over_limit::DEF,
    serving_host_memory::DEF,
    client_timeout::DEF,
    kv_cache_full::DEF,
];

/// Run every check on a load: findings sorted most severe first (registry order within a severity).
pub fn run(load: &Reconciled, whatif: Option<&WhatIf>, config: &CheckConfig) -> Vec<Finding> {
    let cx = Context {
        load,
        whatif,
        config,
    };
    let mut findings = Vec::new();
    for def in REGISTRY {
        (def.run)(&cx, &mut findings);
    }
    // Stable sort keeps registry order inside a severity.
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// `1.30 GiB`.
pub fn size(q: Quantity) -> String {
    human(q.bytes)
}
