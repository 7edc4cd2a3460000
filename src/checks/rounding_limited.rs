//! `rounding-limited` (info): a gap exists in the printed figures but is inside their rounding (Ollama prints
//! one decimal: `6.8 GiB` is ±51 MiB), so no conclusion is possible.

use super::{finding, CheckDef, Context};
use crate::model::{human, Finding, FindingCode, Placer, ServingEngine, Severity, Verdict};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::RoundingLimited,
    summary: "a gap that is inside the printed precision; no conclusion possible",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let mut gaps = Vec::new();
    let mut lines = Vec::new();
    let rows = cx
        .load
        .components
        .iter()
        .map(|c| {
            (
                c.component.as_str().to_string(),
                c.verdict,
                c.delta,
                &c.lines,
            )
        })
        .chain(
            cx.load
                .devices
                .iter()
                .map(|d| (d.device.to_string(), d.verdict, d.delta, &d.lines)),
        );
    for (name, verdict, delta, row_lines) in rows {
        let Some(d) = delta else { continue };
        // Only gaps worth mentioning: a non-zero nominal gap of at least 1 MiB.
        if verdict != Verdict::Match || d.bytes.abs() < 1 << 20 {
            continue;
        }
        gaps.push(format!(
            "{name} {}{} (could be {} … {})",
            if d.bytes > 0 { "+" } else { "" },
            human(d.bytes),
            human(d.low),
            human(d.high)
        ));
        lines.extend(row_lines);
    }
    if gaps.is_empty() {
        return;
    }
    out.push(finding(
        DEF.code,
        Severity::Info,
        format!("inside the printed rounding, no conclusion: {}", gaps.join("; ")),
        match cx.load.load.runtime.placer() {
            Placer::LlamaFit(_) => {
                "llama-server prints its tables and fit lines in whole MiB, truncated (1530 is [1530, 1531) MiB): a gap that small is no gap"
            }
            Placer::ServingEngine(ServingEngine::Vllm) => {
                "vLLM prints GiB with two decimals (±0.005 GiB): a gap that small is no gap"
            }
            Placer::ServingEngine(ServingEngine::Sglang) => {
                "SGLang prints GB (GiB) with two decimals (±0.005 GiB): a gap that small is no gap"
            }
            Placer::OllamaScheduler | Placer::Unknown => {
                "Ollama prints one decimal (±51 MiB on GiB figures); run the server with OLLAMA_DEBUG=1 or read the runner's MiB lines for finer figures"
            }
        },
        lines,
        None,
        None,
    ));
}
