//! `kv-too-small` (vLLM, SGLang): the longest request the engine accepts (vLLM's max model length, SGLang's
//! context length) needs more tokens than the KV cache holds: vLLM refuses to start, SGLang starts but cannot
//! serve such a request. Names the largest length that fits.

use super::serving_figures::{serving, setting};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, Severity, StartFailure};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::KvTooSmall,
    summary: "the max model length (context length) needs more tokens than the KV cache holds; the largest length that fits",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = serving(cx) else { return };
    let (len, tokens, lines, severity) = match (s.failure, s.max_len, s.kv_tokens) {
        (Some(StartFailure::MaxLenOverKv { len, tokens, .. }), _, _) => (
            len,
            tokens,
            s.failure_line.into_iter().collect::<Vec<_>>(),
            Severity::Error,
        ),
        // Hybrid and linear-attention models (Qwen3-Next, Kimi Linear) count `GPU KV cache size` in tokens of
        // their attention layers only: the engine's `Maximum concurrency` for the max length is what it
        // serves, so when it printed one, below 1× is the alarm and the length × it is what fits.
        (_, Some(len), _) if s.concurrency.is_some() => match longest_served(s) {
            Some(tokens) => (
                len.value,
                tokens,
                s.concurrency.iter().map(|c| c.line).collect(),
                Severity::Warning,
            ),
            None => return,
        },
        (_, Some(len), Some(tokens)) if len.value > tokens.value && tokens.value > 0 => (
            len.value,
            tokens.value,
            vec![len.line, tokens.line],
            Severity::Warning,
        ),
        _ => return,
    };
    let shorter = setting(cx, Knob::Context, tokens).unwrap_or_default();
    let dtype = setting(cx, Knob::KvCacheType, "fp8").unwrap_or_default();
    out.push(finding(
        DEF.code,
        severity,
        format!(
            "a request of the max length ({len} tokens) needs more KV cache than the engine holds ({tokens} tokens over all ranks); the largest length that fits is {tokens}"
        ),
        &format!("set {shorter} (or lower), or hold more tokens per byte with {dtype}; tensor-parallel ranks share one KV cache, they do not add tokens"),
        lines,
        None,
        None,
    ));
}

/// The longest request the engine serves by its own `Maximum concurrency` for the max length, when that is
/// below 1× (none when it serves at least one such request, or printed no concurrency).
pub(super) fn longest_served(s: &crate::model::ServingFigures) -> Option<i64> {
    let (len, c) = (s.max_len?, s.concurrency?);
    (c.value < 1.0).then(|| (len.value as f64 * c.value).floor() as i64)
}
