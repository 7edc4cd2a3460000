//! `context-reduced`: this load is Ollama's own retry with a smaller context. llama-server failed to start, and
//! Ollama ≥ 0.30 cut the automatic num_ctx from A to B and tried once more (`llama-server load failed; reducing
//! automatic context and retrying once`, `docs/log-formats.md` §5.6 item 7): the model runs with less context
//! than the user got before, without being told.

use super::{finding, CheckDef, Context};
use crate::model::{knobs, Finding, FindingCode, Knob, RetryKind, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ContextReduced,
    summary: "Ollama's retry cut the context after llama-server failed: from A to B, and why",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let Some(s) = load.scheduler.as_ref() else {
        return;
    };
    // The retry printed before this load started: this load is the retry.
    let Some(retry) = s
        .retries
        .iter()
        .rev()
        .find(|r| r.kind == RetryKind::ReduceContext && r.line < load.source.first_line)
    else {
        return;
    };
    let (Some(from), Some(to)) = (retry.old_num_ctx, retry.new_num_ctx) else {
        return;
    };
    let cause = retry
        .error
        .as_deref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    let set = knobs::reaching(load.runtime, Knob::Context)
        .map(|e| e.spelled())
        .unwrap_or_else(|| "the context".to_string());
    let max_ctx = cx
        .whatif
        .and_then(|w| w.max_ctx.as_ref())
        .and_then(|m| m.rows.first())
        .and_then(|r| r.num_ctx)
        .map(|n| format!("the largest that keeps every layer on the GPUs is {n}"))
        .unwrap_or_else(|| {
            "`vramdiff whatif --max-ctx` gives the largest that keeps every layer on the GPUs"
                .to_string()
        });
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "Ollama's retry cut the context from {from} to {to} (line {}): llama-server failed to start at {from}{cause}, and this load runs with {to}",
            retry.line
        ),
        &format!("choose the context yourself with {set} so Ollama does not pick one that fails; {max_ctx}"),
        vec![retry.line],
        None,
        None,
    ));
}
