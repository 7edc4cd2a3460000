//! `foreign-memory` (vLLM): the free memory at startup is below the budget the utilization asks for
//! (total × `--gpu-memory-utilization`): another process held the difference. vLLM's utilization is a share
//! of the whole GPU, not of the free memory, so the engine refuses to start (or, in the advisory, ran beside
//! it). Names what the other process held and the utilization that fits beside it.

use super::serving_figures::{budget_of_whole_gpu, floor2, rank_name, setting, size};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Ordering3, Severity, StartFailure};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ForeignMemory,
    summary: "free memory at startup below total × utilization: another process held memory",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
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
