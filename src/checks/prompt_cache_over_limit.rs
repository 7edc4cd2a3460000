//! `prompt-cache-over-limit`: llama-server's prompt cache holds more host RAM than its limit (`--cache-ram`),
//! because one entry is larger than the limit and the cache always keeps one (`cache state: 1 prompts, X MiB
//! (limits: Y MiB …)`, some builds add `⚠ exceeds limit`; `src/load/serving_memory.rs`). The limit is checked
//! after the entry is saved, so a single long prompt overshoots it by its whole size; builds with the strict limit
//! (`exceeds cache size limit …, skipping`, xllamacpp 2026.10.11549's `tools/server/server-task.cpp`) skip such
//! an entry instead. An entry carries the slot's context checkpoints: fewer checkpoints make it smaller. Only a
//! state above the limit by more than the figures' rounding fires; within 5 % of the limit it is information.

use super::suggest::host_ram::host_ram_knob;
use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::PromptCacheOverLimit,
    summary:
        "llama-server's prompt cache keeps an entry larger than its --cache-ram limit (host RAM)",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(t) = cx.load.load.timeline.as_ref() else {
        return;
    };
    let (Some(over), Some(limit)) = (t.over_limit, t.limits.prompt_cache) else {
        return;
    };
    let excess = over.size.low - limit.size.high;
    if excess <= 0 {
        return;
    }
    let severity = if excess * 20 < limit.size.bytes {
        Severity::Info
    } else {
        Severity::Warning
    };
    let mut lines = vec![over.line, limit.line];
    let entry = t.peaks.entry.map(|e| {
        lines.push(e.line);
        format!(
            ": one entry of {} ({} tokens, {} checkpoints, line {})",
            size(e.size),
            e.tokens,
            e.checkpoints,
            e.line
        )
    });
    out.push(finding(
        DEF.code,
        severity,
        format!(
            "the prompt cache holds {} of host RAM (line {}), {} over its limit of {} (line {}){}: llama-server checks the limit after saving an entry and always keeps one",
            size(over.size),
            over.line,
            size(over.size.minus(limit.size)),
            size(limit.size),
            limit.line,
            entry.unwrap_or_default()
        ),
        &hint(cx, &over, &limit),
        lines,
        None,
        None,
    ));
}

/// The lever for this entry: fewer checkpoints when the prompt's state alone fits the limit, else no prompt cache
/// (or a build with the strict limit); never another `--cache-ram`, which this build checks too late.
fn hint(cx: &Context, over: &crate::model::Figure, limit: &crate::model::Figure) -> String {
    let t = cx.load.load.timeline.as_ref();
    let runtime = cx.load.load.runtime;
    let spelled = |k: Knob, default: &str| {
        host_ram_knob(runtime, k).map_or(default.to_string(), |e| e.spelled())
    };
    let entry = t.and_then(|t| t.peaks.entry);
    let one = t.and_then(|t| t.peaks.checkpoint_size);
    let state = match (entry, one) {
        (Some(e), Some(c)) if e.checkpoints > 0 => e.size.minus(c.size.times(e.checkpoints)),
        (Some(e), _) => e.size,
        (None, _) => over.size,
    };
    if entry.is_some_and(|e| e.checkpoints > 0) && state.high < limit.size.low {
        format!(
            "the entry carries its context checkpoints: fewer per slot (`{}`) make it smaller; the cache's limit itself is not the lever (this build checks it after saving)",
            spelled(Knob::CtxCheckpoints, "--ctx-checkpoints N")
        )
    } else {
        format!(
            "one prompt's state is larger than the limit by itself: `{}` (no prompt cache), or a build that skips entries over the limit (`exceeds cache size limit … skipping`); a larger or smaller limit does not help on this build",
            host_ram_knob(runtime, Knob::CacheRam).map_or("--cache-ram 0".to_string(), |e| e.setting(0))
        )
    }
}
