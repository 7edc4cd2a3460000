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
        (Some(StartFailure::MaxLenOverKv { len, tokens }), _, _) => (
            len,
            tokens,
            s.failure_line.into_iter().collect::<Vec<_>>(),
            Severity::Error,
        ),
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
