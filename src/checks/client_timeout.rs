//! `client-timeout`: a request failed while the server served, and not for memory — the server answered it
//! with an error after the client's wait (`[GIN] … | 500 | 1m0s | …`) and llama-server cancelled the task its
//! client had left (`srv stop: cancel task`), with no kill, no refused allocation and no failed load around it.
//! With the prompt processing's rate the log printed (`prompt processing, … / R tokens per second`), the slow
//! prefill is named as what took the time (`sample-logs/1203`: 26.43 tokens/s, a 500 after `1m0s`). Read from the
//! load's timeline (`src/load/serving_memory.rs`).

use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ClientTimeout,
    summary: "a request failed because its client stopped waiting (a slow prefill), not for lack of memory",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let Some(t) = load.timeline.as_ref() else {
        return;
    };
    let (Some(failed), Some(cancelled)) = (&t.request_failed, t.cancelled_line) else {
        return;
    };
    if load.actual.failed || t.killed.is_some() || t.alloc_failed_line.is_some() {
        return;
    }
    let mut lines = vec![failed.line, cancelled];
    let prefill = t.slowest_prefill.map(|r| {
        lines.push(r.line);
        format!(
            ", while the prompt was processed at {:.2} tokens per second (line {})",
            r.value, r.line
        )
    });
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "a request was answered {} after {} (line {}) and llama-server cancelled the task its client had left (line {}){}: the client stopped waiting, not a failure of memory",
            failed.status,
            failed.elapsed,
            failed.line,
            cancelled,
            prefill.unwrap_or_default()
        ),
        "not memory: give the client a longer timeout than the prompt's processing takes, or make the prefill faster (shorter prompts, more layers on the GPU); the prompt cache, the context and the parallel slots do not change it",
        lines,
        None,
        None,
    ));
}
