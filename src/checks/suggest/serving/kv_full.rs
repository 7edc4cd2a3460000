//! What to change when a vLLM or SGLang KV cache ran full while it served (`kv-cache-full`), each setting with
//! the effect the log's own figures give:
//!
//! - a larger share of the GPU (`--gpu-memory-utilization`, SGLang `--mem-fraction-static`) by
//!   [`STEP`]: the pool gains STEP × the GPU's total, so `STEP × total ÷ bytes per token` tokens, the bytes per
//!   token being the rank's KV cache over the tokens it holds (both printed at start-up); offered only when the
//!   new share stays at or below 1 and, where the log printed the free memory at start, within it (the engine
//!   refuses a budget above the free memory);
//! - fewer requests at once (vLLM `--max-num-seqs`, SGLang `--max-running-requests`): at the first stats line
//!   whose cache was full with requests waiting, R requests filled P %, so `R × TARGET_PERCENT ÷ P` of that size
//!   keep it near [`TARGET_PERCENT`].
//!
//! A figure the log does not give is named: the setting is written with a letter and its effect says
//! "not computed: … missing". The knob is the load's runtime's (`src/model/knobs.rs`), so an engine that lacks
//! it is never told to set it.

use super::Out;
use crate::model::{human, FindingCode, Knob, ServingEngine, ServingFigures, ServingTimeline};

/// The step the share of the GPU is raised by.
pub const STEP: f64 = 0.05;

/// The fill the fewer requests aim at: below the full of `kv-cache-full` with room for a prompt.
pub const TARGET_PERCENT: f64 = 90.0;

const BECAUSE: &[FindingCode] = &[FindingCode::KvCacheFull];

/// The settings for a KV cache that ran full while serving.
pub(super) fn kv_cache_full(
    out: &mut Out,
    s: &ServingFigures,
    t: &ServingTimeline,
    engine: ServingEngine,
) {
    larger_share(out, s, engine);
    fewer_at_once(out, s, t);
}

/// Tokens the pool gains per [`STEP`] of the GPU, the smallest over the ranks (each rank holds its share of
/// every token), with the figures it rests on in words; or what is missing.
fn gain(s: &ServingFigures) -> Result<(i64, String), &'static str> {
    let mut best: Option<(i64, String)> = None;
    let mut missing = "the ranks' figures";
    for r in &s.ranks {
        let Some(total) = r.total else {
            missing = "the GPU's total memory";
            continue;
        };
        let Some(kv) = r.kv.filter(|k| k.size.bytes > 0) else {
            missing = "the KV cache's size";
            continue;
        };
        let Some(tokens) = r.kv_tokens.or(s.kv_tokens).filter(|c| c.value > 0) else {
            missing = "the KV cache's tokens";
            continue;
        };
        let per_token = kv.size.bytes as f64 / tokens.value as f64;
        let more = STEP * total.size.bytes as f64;
        let gained = (more / per_token).floor() as i64;
        let words = format!(
            "{STEP:.2} × the {} of {} (line {}) at {:.0} bytes per token ({} of KV cache for {} tokens, lines {} and {})",
            human(total.size.bytes),
            r.device,
            total.line,
            per_token,
            human(kv.size.bytes),
            tokens.value,
            kv.line,
            tokens.line
        );
        if best.as_ref().is_none_or(|(g, _)| gained < *g) {
            best = Some((gained, words));
        }
    }
    best.ok_or(missing)
}

/// The share of the GPU raised by [`STEP`], with the tokens it adds.
fn larger_share(out: &mut Out, s: &ServingFigures, engine: ServingEngine) {
    let what = match engine {
        ServingEngine::Vllm => "budget",
        ServingEngine::Sglang => "static pool",
    };
    let Some(current) = s.utilization else {
        out.push(
            Knob::MemoryFraction,
            "U",
            format!("U the current share plus {STEP:.2}: not computed: the current share missing"),
            BECAUSE,
        );
        return;
    };
    let raised = ((current.value + STEP) * 100.0).round() / 100.0;
    if raised > 1.0 {
        return;
    }
    // The engine refuses a budget above the free memory at start: not offered past it.
    let above_free = s.ranks.iter().any(|r| match (r.total, r.free_at_start) {
        (Some(total), Some(free)) => raised * total.size.low as f64 > free.size.high as f64,
        _ => false,
    });
    if above_free {
        return;
    }
    let effect = match gain(s) {
        Ok((tokens, words)) => {
            let held = s
                .kv_tokens
                .map(|k| format!(", from {} to {} tokens", k.value, k.value + tokens))
                .unwrap_or_default();
            format!(
                "the {what} grows from {:.2} to {raised:.2} of the GPU (line {}): the KV cache holds about {tokens} more tokens{held}, {words}",
                current.value, current.line
            )
        }
        Err(missing) => format!(
            "the {what} grows from {:.2} to {raised:.2} of the GPU (line {}); the tokens it adds not computed: {missing} missing",
            current.value, current.line
        ),
    };
    out.push(
        Knob::MemoryFraction,
        format!("{raised:.2}"),
        effect,
        BECAUSE,
    );
}

/// Fewer requests at once, sized from the first stats line whose cache was full with requests waiting.
fn fewer_at_once(out: &mut Out, s: &ServingFigures, t: &ServingTimeline) {
    let full = crate::checks::kv_cache_full::FULL_PERCENT;
    let queued = t
        .samples
        .iter()
        .find_map(|x| match (x.kv_percent, x.running, x.waiting) {
            (Some(p), Some(r), Some(w)) if p >= full && w > 0 && r > 0 => Some((x.line, p, r)),
            _ => None,
        });
    let Some((line, percent, running)) = queued else {
        out.push(
            Knob::Sequences,
            "N",
            "N below the requests that ran at once: not computed: no stats line with the requests running at a full cache".to_string(),
            BECAUSE,
        );
        return;
    };
    let fewer = (running as f64 * TARGET_PERCENT / percent).floor() as i64;
    if fewer < 1 || fewer >= running {
        return;
    }
    let each = s
        .kv_tokens
        .map(|k| {
            format!(
                " (about {} tokens each of the {})",
                (k.value as f64 * percent / 100.0 / running as f64).round() as i64,
                k.value
            )
        })
        .unwrap_or_default();
    out.push(
        Knob::Sequences,
        fewer,
        format!(
            "at line {line}, {running} requests at once filled {percent:.1}% of the KV cache{each}: {fewer} of that size fill about {TARGET_PERCENT:.0}%; the others wait in the engine's queue instead of being preempted"
        ),
        BECAUSE,
    );
}
