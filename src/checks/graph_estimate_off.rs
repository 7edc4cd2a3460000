//! `graph-estimate-off` (vLLM ≥ 0.21): the CUDA-graph pool the profiler estimated and reserved inside the
//! budget differs from the pool the capture took, beyond the printed rounding; the difference is KV cache
//! the estimate cost (or gave). Also when the estimate alone left no memory for the KV cache and the engine
//! never captured: the pool was never measured.

use super::serving_figures::{rank_name, serving, setting, size};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Ordering3, Severity, StartFailure};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::GraphEstimateOff,
    summary: "vLLM's CUDA-graph estimate differs from the pool it captured beyond rounding (the KV it cost or gave), or left no KV memory",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = serving(cx) else { return };
    let no_kv = s.failure == Some(StartFailure::NoKvMemory);
    for r in &s.ranks {
        let Some(est) = r.graph_estimate else {
            continue;
        };
        let disable = setting(cx, Knob::GraphEstimate, 0).unwrap_or_default();
        match r.graph_actual {
            Some(act) => {
                let verdict = est.size.compare(&act.size);
                let gap = if verdict == Ordering3::Above {
                    est.size.minus(act.size)
                } else {
                    act.size.minus(est.size)
                };
                if verdict == Ordering3::Overlap {
                    continue;
                }
                let (what, severity) = if verdict == Ordering3::Above {
                    (
                        "reserved more than the graphs took: KV cache it cost",
                        Severity::Warning,
                    )
                } else {
                    (
                        "reserved less than the graphs took: the rank is over its budget by",
                        Severity::Warning,
                    )
                };
                let pin = r
                    .kv_to_fit_budget
                    .and_then(|k| setting(cx, Knob::KvCacheMemory, k.size.bytes));
                let hint = match pin {
                    Some(pin) => format!("pin the KV cache with {pin} (the engine's own figure), or set {disable} and size the budget with --gpu-memory-utilization"),
                    None => format!("set {disable} to leave the estimate out (vLLM then captures outside the budget), or pin the KV cache with --kv-cache-memory"),
                };
                out.push(finding(
                    DEF.code,
                    severity,
                    format!(
                        "{}: the CUDA-graph estimate {} {what} {} (the pool took {})",
                        rank_name(r),
                        size(est.size),
                        size(gap),
                        size(act.size)
                    ),
                    &hint,
                    vec![est.line, act.line],
                    Some(&r.device),
                    None,
                ));
            }
            None if no_kv => {
                let mut lines = vec![est.line];
                lines.extend(s.failure_line);
                let share = r
                    .total
                    .map(|t| {
                        format!(
                            " ({:.0}% of the GPU's {})",
                            est.size.bytes as f64 * 100.0 / t.size.bytes.max(1) as f64,
                            size(t.size)
                        )
                    })
                    .unwrap_or_default();
                out.push(finding(
                    DEF.code,
                    Severity::Warning,
                    format!(
                        "{}: the CUDA-graph estimate {}{share} was reserved inside the budget and no memory was left for the KV cache; the real pool was never captured, so the estimate was never checked",
                        rank_name(r),
                        size(est.size)
                    ),
                    &format!("set {disable} so the profile leaves the estimate out, or pin the KV cache with --kv-cache-memory"),
                    lines,
                    Some(&r.device),
                    None,
                ));
            }
            None => {}
        }
    }
}
