//! `load-recovered`: a failure the runtime recovered from by itself, so it is not the load's failure
//! (`docs/log-formats.md` §4.3): Ollama's engine (0.11.5 and later) tries a layout, and when an allocation fails
//! it prints `model layout did not fit, applying backoff` and tries a smaller one. The failure lines before the
//! backoff (`cudaMalloc failed: out of memory`, `memory layout cannot be allocated`) are what the first layout
//! cost, not an error to act on; calling them `load-failed` would be a false alarm. The finding is information:
//! what failed, how the runtime recovered, and what the load went on with.

use super::{finding, CheckDef, Context};
use crate::model::{human, Finding, FindingCode, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::LoadRecovered,
    summary: "an allocation failed and the runtime recovered by itself (Ollama's layout backoff): not a failed load",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let a = &cx.load.load.actual;
    // A load that failed after its recovery is `load-failed`'s.
    if a.failed || a.recovered.is_empty() {
        return;
    }
    let mut lines = Vec::new();
    let mut said = Vec::new();
    for r in &a.recovered {
        lines.extend([r.failure_line, r.recovery_line]);
        let what = r
            .allocation
            .as_ref()
            .map(|al| {
                format!(
                    " ({}{})",
                    human(al.size.bytes),
                    al.device
                        .as_ref()
                        .map(|d| format!(" on {d}"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        let cause = r
            .cause
            .map(|c| format!(", {}", c.words()))
            .unwrap_or_default();
        said.push(format!(
            "line {}: {}{what}{cause}; then {} (line {})",
            r.failure_line, r.failure, r.recovery, r.recovery_line
        ));
    }
    let went_on = match (a.offloaded_layers, a.total_layers) {
        (Some(o), Some(t)) => format!("; the load went on with {o} of {t} layers on the GPUs"),
        _ => "; the load went on".to_string(),
    };
    out.push(finding(
        DEF.code,
        Severity::Info,
        format!(
            "the runtime recovered from {}: {}{went_on}",
            if said.len() == 1 {
                "a failed allocation".to_string()
            } else {
                format!("{} failed allocations", said.len())
            },
            said.join("; ")
        ),
        "nothing failed in the end: the first layout did not fit in the memory free at that moment and a smaller one was tried; layers left on the CPU by it are partial-offload's",
        lines,
        None,
        None,
    ));
}
