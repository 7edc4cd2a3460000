//! `serving-host-memory`: the host's memory does not hold what llama-server keeps in it while it serves — its
//! prompt cache (`--cache-ram`, 8192 MiB by default) and each slot's context checkpoints (`--ctx-checkpoints`,
//! 32 by default, each the size the log printed). Two premises, each read from the load's timeline
//! (`src/load/serving_memory.rs`): the host killed the server while it served after the cache or the checkpoints
//! grew (an error), or the worst case the limits printed allow — the cache limit plus slots × checkpoints per
//! slot × one checkpoint — is above the host's free memory at load (Ollama's `system memory`; a warning). None of
//! it is VRAM, and `ollama ps` never shows it.

use super::suggest::host_ram::host_ram_knob;
use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Quantity, ServingTimeline, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ServingHostMemory,
    summary: "the prompt cache and context checkpoints llama-server keeps in host RAM while it serves do not fit the host",
    run: check,
};

/// The worst case the printed limits allow: the cache limit plus slots × checkpoints per slot × one checkpoint,
/// with the lines it rests on; only when the log printed every figure.
pub fn worst_case(t: &ServingTimeline, slots: i64) -> Option<(Quantity, Vec<u64>)> {
    let limit = t.limits.prompt_cache.filter(|l| l.size.bytes > 0)?;
    let per_slot = t.limits.checkpoints_per_slot?;
    let one = t.peaks.checkpoint_size?;
    Some((
        limit
            .size
            .plus(one.size.times(per_slot.value * slots.max(1))),
        vec![limit.line, per_slot.line, one.line],
    ))
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let Some(t) = load.timeline.as_ref() else {
        return;
    };
    if !t.holds_host_ram() {
        return;
    }
    let held = |t: &ServingTimeline| {
        let mut parts = Vec::new();
        if let Some(c) = t.peaks.prompt_cache {
            parts.push(format!(
                "the prompt cache reached {} (line {})",
                size(c.size),
                c.line
            ));
        }
        if let Some(c) = t.peaks.checkpoints {
            parts.push(format!(
                "the slots' context checkpoints reached {} (line {})",
                size(c.size),
                c.line
            ));
        }
        parts.join(" and ")
    };
    let mut lines: Vec<u64> = [t.peaks.prompt_cache, t.peaks.checkpoints]
        .into_iter()
        .flatten()
        .map(|f| f.line)
        .collect();
    if let Some(killed) = &t.killed {
        lines.push(killed.line);
        let limit = match t.limits.prompt_cache {
            Some(l) if l.size.bytes > 0 => {
                format!("its limit printed: {} (line {})", size(l.size), l.line)
            }
            Some(_) | None => "no cache limit printed in the log".to_string(),
        };
        out.push(finding(
            DEF.code,
            Severity::Error,
            format!(
                "the host killed the server while it served (line {}: {}) after its host RAM grew: {}; {limit}",
                killed.line, killed.message, held(t)
            ),
            &killed_hint(cx, t),
            lines,
            None,
            None,
        ));
        return;
    }
    let Some(free) = t.limits.host_free else {
        return;
    };
    let slots = load.settings.parallel.unwrap_or(1);
    let Some((worst, mut rests)) = worst_case(t, slots) else {
        return;
    };
    if worst.low <= free.size.high {
        return;
    }
    rests.push(free.line);
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "while it serves, llama-server may keep {} in host RAM (the prompt cache's limit plus {slots} slot(s) × the checkpoints per slot × one checkpoint), above the {} free at load (line {}); so far {}",
            size(worst),
            size(free.size),
            free.line,
            held(t)
        ),
        &format!(
            "host RAM, not VRAM: lower the prompt cache's limit (`{}`, 0 disables it), the checkpoints per slot (`{}`) or the slots so the worst case fits the host's free memory",
            spelled(cx, Knob::CacheRam),
            spelled(cx, Knob::CtxCheckpoints)
        ),
        rests,
        None,
        None,
    ));
}

fn spelled(cx: &Context, knob: Knob) -> String {
    host_ram_knob(cx.load.load.runtime, knob).map_or_else(
        || match knob {
            Knob::CtxCheckpoints => "--ctx-checkpoints N".to_string(),
            _ => "--cache-ram N".to_string(),
        },
        |e| e.spelled(),
    )
}

/// After a kill: no prompt cache (it allocates an entry before it checks its limit), and the checkpoints' knob
/// only when the log shows checkpoints.
fn killed_hint(cx: &Context, t: &ServingTimeline) -> String {
    let mut hint = format!(
        "host RAM, not VRAM: the prompt cache allocates an entry before it checks its limit, so `{}` (no prompt cache), or a build that skips entries over the limit",
        host_ram_knob(cx.load.load.runtime, Knob::CacheRam)
            .map_or("--cache-ram 0".to_string(), |e| e.setting(0))
    );
    if t.peaks.checkpoints.is_some() {
        hint.push_str(&format!(
            "; fewer checkpoints per slot (`{}`) bound the checkpoints",
            spelled(cx, Knob::CtxCheckpoints)
        ));
    }
    hint
}
