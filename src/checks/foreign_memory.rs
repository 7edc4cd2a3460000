//! `foreign-memory` (vLLM): the free memory at startup is below the budget the utilization asks for
//! (total × `--gpu-memory-utilization`): another process held the difference. vLLM's utilization is a share
//! of the whole GPU, not of the free memory, so the engine refuses to start (or, in the advisory, ran beside
//! it). Names what the other process held and the utilization that fits beside it. For both engines, torch's
//! out-of-memory message that lists other processes on the GPU is the same finding.

use super::serving_figures::{budget_of_whole_gpu, floor2, rank_name, serving, setting, size};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Ordering3, Severity, StartFailure};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ForeignMemory,
    summary: "free memory at startup below total × utilization: another process held memory",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    torch_named_other_processes(cx, out);
    let Some(s) = budget_of_whole_gpu(cx) else {
        return;
    };
    let refused = s.failure == Some(StartFailure::FreeBelowBudget);
    for r in &s.ranks {
        let (Some(free), Some(total), Some(budget)) = (r.free_at_start, r.total, r.budget) else {
            continue;
        };
        if free.size.compare(&budget.size) != Ordering3::Below {
            continue;
        }
        let held = total.size.minus(free.size);
        let fits = floor2(free.size.low as f64 / total.size.high.max(1) as f64);
        let util = setting(cx, Knob::MemoryFraction, fits).unwrap_or_default();
        out.push(finding(
            DEF.code,
            if refused { Severity::Error } else { Severity::Warning },
            format!(
                "{}: {} free of {} at startup, below the budget {} (total × utilization): another process held {}",
                rank_name(r),
                size(free.size),
                size(total.size),
                size(budget.size),
                size(held)
            ),
            &format!("stop the other process (often a previous container) or use {util}: the utilization is a share of the whole GPU, not of its free memory"),
            vec![free.line, budget.line],
            Some(&r.device),
            None,
        ));
    }
}

/// vLLM or SGLang: torch's out-of-memory message listed other processes on the GPU (`Process P has X memory
/// in use`, less the entry that is this process: `src/load/serving/failure.rs`).
fn torch_named_other_processes(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = serving(cx) else { return };
    let Some(StartFailure::OutOfMemory {
        others: Some(others),
        tried,
        free,
        total,
        ..
    }) = s.failure
    else {
        return;
    };
    // vLLM's utilization is a share of the whole GPU: the others' memory is the cause only when it left less
    // than the budget, and the utilization that leaves it alone is the advice. SGLang's fraction is of what
    // was free before its weights, so memory another process held then is already left out: said as a
    // warning, the process may have grown since.
    let (severity, fraction) = match (budget_of_whole_gpu(cx), total) {
        (Some(s), Some(t)) => {
            let util = s.utilization.map(|u| u.value).unwrap_or(0.9);
            let fits = floor2((t.low - others.high) as f64 / t.high.max(1) as f64);
            if fits >= util {
                return;
            }
            (
                Severity::Error,
                setting(cx, Knob::MemoryFraction, format!("{fits:.2}")),
            )
        }
        (Some(_), None) => return,
        (None, _) => (
            Severity::Warning,
            setting(cx, Knob::MemoryFraction, "").map(|s| format!("a lower {}", s.trim_end())),
        ),
    };
    let fraction = fraction.unwrap_or_default();
    let rank = s.failed_rank().or(s.ranks.first());
    let tried = tried
        .map(|t| format!(" of {}", size(t)))
        .unwrap_or_default();
    let room = match (free, total) {
        (Some(f), Some(t)) => format!(" ({} free of {})", size(f), size(t)),
        _ => String::new(),
    };
    out.push(finding(
        DEF.code,
        severity,
        format!(
            "{}: the allocation{tried} failed{room} while other processes held {} of the GPU (torch's message lists them)",
            rank.map(rank_name).unwrap_or_else(|| "the engine".to_string()),
            size(others)
        ),
        &format!("stop the other process (often a previous server or container on the same GPU), or give the engine less with {fraction} so it fits beside it"),
        s.failure_line.into_iter().collect(),
        rank.map(|r| &r.device),
        None,
    ));
}
