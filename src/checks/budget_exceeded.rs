//! `budget-exceeded` (vLLM, SGLang): a rank holds more than its budget (vLLM: total ×
//! `--gpu-memory-utilization`; SGLang: its static pool), beyond rounding: as the driver saw it (a capture's
//! memory in use on the rank's GPU), else by the engine's own figures (weights, KV, graphs, activation peak,
//! non-torch memory: V0 and vLLM before 0.21 capture the graphs outside the budget). Information while the
//! GPU keeps room past the budget; a warning when the figures pass the GPU's total.

use super::serving_figures::{budget_of_whole_gpu, rank_name, setting, size};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Ordering3, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::BudgetExceeded,
    summary: "a rank holds more than its budget (total × utilization), by the driver's capture or the engine's own figures",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = budget_of_whole_gpu(cx) else {
        return;
    };
    for r in &s.ranks {
        let Some(budget) = r.budget else { continue };
        let observed = cx
            .load
            .observed
            .iter()
            .find(|o| o.device == r.device)
            .and_then(|o| o.used);
        let row = cx.load.devices.iter().find(|d| d.device == r.device);
        let (used, how, mut lines) = match (observed, row.and_then(|d| d.comparison.actual)) {
            (Some(used), _) => (used, "the driver's capture shows", vec![budget.line]),
            (None, Some(actual)) => (
                actual,
                "its own figures add up to",
                row.map(|d| d.comparison.lines.clone()).unwrap_or_default(),
            ),
            (None, None) => continue,
        };
        lines.push(budget.line);
        if used.compare(&budget.size) != Ordering3::Above {
            continue;
        }
        let over = used.minus(budget.size);
        let past_total = r
            .total
            .is_some_and(|t| used.compare(&t.size) == Ordering3::Above);
        let pin = r
            .kv_to_fit_budget
            .and_then(|k| setting(cx, Knob::KvCacheMemory, k.size.bytes));
        let eager = setting(cx, Knob::Eager, "").unwrap_or_default();
        let hint = match (pin, r.kv_to_fill_gpu.and_then(|k| setting(cx, Knob::KvCacheMemory, k.size.bytes))) {
            (Some(pin), Some(fill)) => format!("if the GPU is shared, {pin} keeps the rank inside its budget; if it is dedicated, {fill} fills it (vLLM's own figures)"),
            (Some(pin), None) => format!("{pin} keeps the rank inside its budget (vLLM's own figure)"),
            (None, _) if s.v0 => format!("V0 captures the CUDA graphs outside the budget: lower --gpu-memory-utilization by their size, or {}", eager.trim()),
            (None, _) => "lower --gpu-memory-utilization by the overshoot, or pin --kv-cache-memory".to_string(),
        };
        out.push(finding(
            DEF.code,
            if past_total {
                Severity::Warning
            } else {
                Severity::Info
            },
            format!(
                "{}: {how} {}, {} over its budget {}{}",
                rank_name(r),
                size(used),
                size(over),
                size(budget.size),
                r.graph_actual
                    .filter(|_| r.graph_estimate.is_none())
                    .map(|g| format!(
                        " (the CUDA graphs, {}, were captured outside it)",
                        size(g.size)
                    ))
                    .unwrap_or_default()
            ),
            &hint,
            lines,
            Some(&r.device),
            None,
        ));
    }
}
