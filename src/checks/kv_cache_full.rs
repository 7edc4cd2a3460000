//! `kv-cache-full`: while it served, a serving engine's KV cache ran full and requests waited or were pushed back
//! — vLLM's stats (`… Waiting: W reqs, … KV cache usage: X%`, `Preemptions: N`; V0's `is preempted by … not
//! enough KV cache space`) or SGLang's (`token usage: F, … #queue-req: W`; `KV cache pool is full. Retract
//! requests.`), read into the load's timeline (`src/load/serving_memory.rs`). Separate from `kv-too-small`, which
//! is the start-up's KV cache against one request of the max length: here the start was fine and the load of
//! requests outgrew it. Fires on a preemption or retraction, or on requests waiting at a sample whose fill is at
//! least [`FULL_PERCENT`] (vLLM prints one decimal, SGLang two of a fraction).

use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, Placer, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::KvCacheFull,
    summary:
        "a serving engine's KV cache ran full while it served: requests waited or were preempted",
    run: check,
};

/// A KV cache this full has no room for the waiting requests' prompts.
pub const FULL_PERCENT: f64 = 95.0;

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    match load.runtime.placer() {
        Placer::ServingEngine(_) => {}
        Placer::OllamaScheduler | Placer::LlamaFit(_) | Placer::Unknown => return,
    }
    let Some(t) = load.timeline.as_ref() else {
        return;
    };
    let queued = t.samples.iter().find(|s| {
        s.kv_percent.is_some_and(|p| p >= FULL_PERCENT) && s.waiting.is_some_and(|w| w > 0)
    });
    if t.preemptions.is_none() && queued.is_none() {
        return;
    }
    let mut parts = Vec::new();
    let mut lines = Vec::new();
    if let Some(p) = t.preemptions {
        parts.push(format!(
            "{} request(s) preempted or retracted for lack of KV cache (by line {})",
            p.value, p.line
        ));
        lines.push(p.line);
    }
    if let Some(s) = queued {
        parts.push(format!(
            "{} request(s) waiting while the KV cache was {:.1}% full and {} ran (line {})",
            s.waiting.unwrap_or(0),
            s.kv_percent.unwrap_or(0.0),
            s.running.unwrap_or(0),
            s.line
        ));
        lines.push(s.line);
    }
    if let Some(kv) = t.peaks.kv_percent {
        lines.push(kv.line);
    }
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "the KV cache ran full while serving: {}; the start sized it for fewer tokens than the requests at once need",
            parts.join("; ")
        ),
        "fewer requests at once (vLLM `--max-num-seqs`, SGLang `--max-running-requests`), a larger share of the GPU for the engine (vLLM `--gpu-memory-utilization`, SGLang `--mem-fraction-static`) or a shorter context; not a KV cache too small at start-up (`kv-too-small`)",
        lines,
        None,
        None,
    ));
}
