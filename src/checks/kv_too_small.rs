//! `kv-too-small` (vLLM, SGLang): the longest request the engine accepts (vLLM's max model length, SGLang's
//! context length) needs more tokens than the KV cache holds: vLLM refuses to start, SGLang starts but cannot
//! serve such a request. Names the largest length that fits.

use super::serving_figures::{serving, setting};
use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Knob, ServingFigures, Severity, StartFailure};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::KvTooSmall,
    summary: "the max model length (context length) needs more tokens than the KV cache holds; the largest length that fits",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = serving(cx) else { return };
    let Some(KvShortfall {
        len,
        tokens,
        refused,
        lines,
    }) = shortfall(s)
    else {
        return;
    };
    let severity = if refused {
        Severity::Error
    } else {
        Severity::Warning
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

/// One request of the max length against what the KV cache holds, as the finding and its suggestions read it.
pub(super) struct KvShortfall {
    /// The max length asked, and the longest request that fits.
    pub len: i64,
    pub tokens: i64,
    /// The engine refused to start for it.
    pub refused: bool,
    /// The lines the figures come from.
    pub lines: Vec<u64>,
}

/// The shortfall, when one request of the max length does not fit: the engine's refusal, else its
/// `Maximum concurrency` below 1× when printed, else the max length against the KV size in tokens.
pub(super) fn shortfall(s: &ServingFigures) -> Option<KvShortfall> {
    Some(match (s.failure, s.max_len, s.kv_tokens) {
        (Some(StartFailure::MaxLenOverKv { len, tokens, .. }), _, _) => KvShortfall {
            len,
            tokens,
            refused: true,
            lines: s.failure_line.into_iter().collect(),
        },
        // Hybrid and linear-attention models (Qwen3-Next, Kimi Linear) count `GPU KV cache size` in tokens of
        // their attention layers only: the engine's `Maximum concurrency` for the max length is what it
        // serves, so when it printed one, below 1× is the shortfall and the length × it is what fits.
        (_, Some(len), _) if s.concurrency.is_some() => {
            let c = s.concurrency?;
            if c.value >= 1.0 {
                return None;
            }
            KvShortfall {
                len: len.value,
                tokens: (len.value as f64 * c.value).floor() as i64,
                refused: false,
                lines: vec![c.line],
            }
        }
        (_, Some(len), Some(tokens)) if len.value > tokens.value && tokens.value > 0 => {
            KvShortfall {
                len: len.value,
                tokens: tokens.value,
                refused: false,
                lines: vec![len.line, tokens.line],
            }
        }
        _ => return None,
    })
}
