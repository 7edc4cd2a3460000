//! `kv-mismatch`: the KV-cache estimate and the KV buffers disagree beyond rounding; names the usual causes
//! that apply to this load (sliding-window layers, quantised KV, parallel × context).

use super::{finding, size, CheckDef, Context};
use crate::model::kv_geometry::kv_type;
use crate::model::{
    architecture_swa_pattern, human, Component, Finding, FindingCode, KvType, Severity, Verdict,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::KvMismatch,
    summary: "KV estimate and KV buffers disagree beyond rounding (sliding window, quantised KV, parallel × ctx)",
    run: check,
};

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
    // A log that ends before the load finished may not hold every KV cache yet: fewer KV bytes than
    // estimated is then no disagreement.
    if cx.unfinished() && a.high < e.low {
        return;
    }
    let mut causes = Vec::new();
    if let Some(arch) = load.load.model.architecture.as_deref() {
        // Sliding-window layers' cache is sized for the window, not the context.
        if architecture_swa_pattern(arch).is_some() {
            causes.push(format!(
                "{arch} has sliding-window layers whose cache is sized for the window"
            ));
        }
    }
    if let Some(t) = load.load.settings.kv_cache_type.as_deref() {
        if kv_type(t) != Some(KvType::F16) && !t.is_empty() {
            causes.push(format!("the KV cache is quantised ({t})"));
        }
    }
    // Bits per element against an f16 estimate: q8_0 is 8.5, q4_0 4.5, f32 32.
    let ratio = a.bytes as f64 / e.bytes.max(1) as f64;
    for (cache, bits) in [("q8_0", 8.5), ("q4_0", 4.5), ("f32", 32.0)] {
        let expected = bits / 16.0;
        if (ratio / expected - 1.0).abs() < 0.03 {
            causes.push(format!(
                "actual/estimate = {ratio:.3}, what a {cache} KV cache gives against an f16 estimate"
            ));
        }
    }
    if let (Some(p), Some(ctx)) = (
        load.load.settings.parallel.filter(|&p| p > 1),
        load.load.settings.ctx_size,
    ) {
        let p = p as f64;
        if (ratio / p - 1.0).abs() < 0.03 || (ratio * p - 1.0).abs() < 0.03 {
            causes.push(format!(
                "actual/estimate = {ratio:.3} ≈ the {p} parallel slots: one side counts context {ctx} per slot, the other in total"
            ));
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
        Some(Component::Kv),
    ));
}
