//! `kv-mismatch`: the KV-cache estimate and the KV buffers disagree beyond rounding; names the usual causes
//! that apply to this load (sliding-window layers, quantised KV, parallel × context).

use super::{finding, size, CheckDef, Context};
use crate::model::{human, Component, Finding, Severity, Verdict};

pub const DEF: CheckDef = CheckDef {
    code: "kv-mismatch",
    summary: "KV estimate and KV buffers disagree beyond rounding (sliding window, quantised KV, parallel × ctx)",
    run: check,
};

/// Architectures whose KV cache has sliding-window layers sized for the window, not the context.
const SLIDING_WINDOW: &[&str] = &[
    "gemma2", "gemma3", "gemma3n", "gpt-oss", "gptoss", "cohere2", "mistral3",
];

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(kv) = cx.component(Component::Kv) else {
        return;
    };
    let (Some(e), Some(a)) = (kv.estimated, kv.actual) else {
        return;
    };
    if kv.verdict == Verdict::Match || kv.verdict == Verdict::Unknown {
        return;
    }
    let load = cx.load;
    let mut causes = Vec::new();
    if let Some(arch) = load.model.architecture.as_deref() {
        if SLIDING_WINDOW.contains(&arch) {
            causes.push(format!(
                "{arch} has sliding-window layers whose cache is sized for the window"
            ));
        }
    }
    if let Some(t) = load.settings.kv_cache_type.as_deref() {
        if t != "f16" && !t.is_empty() {
            causes.push(format!("the KV cache is quantised ({t})"));
        }
    }
    if let (Some(ctx), Some(p)) = (load.settings.ctx_size, load.settings.parallel) {
        if p > 1 {
            causes.push(format!("the context {ctx} is shared by {p} parallel slots"));
        }
    }
    let direction = if kv.verdict == Verdict::Under {
        "smaller"
    } else {
        "larger"
    };
    out.push(finding(
        DEF.code,
        if kv.verdict == Verdict::Under {
            Severity::Warning
        } else {
            Severity::Info
        },
        format!(
            "KV cache estimated {} but the KV buffers total {} (estimate {direction} by {}){}",
            size(e),
            size(a),
            human((a.bytes - e.bytes).abs()),
            if causes.is_empty() {
                String::new()
            } else {
                format!("; likely: {}", causes.join("; "))
            }
        ),
        "check num_ctx × parallel and OLLAMA_KV_CACHE_TYPE against what the runner printed",
        kv.lines.clone(),
        None,
        Some("kv"),
    ));
}
