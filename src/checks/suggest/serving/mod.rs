//! Suggestions for vLLM and SGLang starts: the engine's own flags (`--gpu-memory-utilization`,
//! `--kv-cache-memory`, `--max-model-len`, `--max-num-seqs`, `--enforce-eager`,
//! `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0`; SGLang's `--mem-fraction-static`, `--cuda-graph-max-bs`,
//! `--context-length`), each with the effect the rank's own figures give (`model::ServingFigures`), spelt as
//! [`crate::model::knobs`] has them for the load's runtime.
//!
//! Values come from the log: vLLM's own `--kv-cache-memory` and utilization figures when it printed them, else
//! a utilization computed from the rank's total, free memory and budget, rounded down to the two decimals the
//! engines take. Where the log does not give the current value of a setting (`--cuda-graph-max-bs`), the
//! setting is written with `N` and the effect says what N must do.
//!
//! A KV cache that ran full while serving (`kv-cache-full`) is answered in `kv_full.rs`, from the start's figures
//! and the timeline's stats lines.
//!
//! One engine's knobs per file: `vllm.rs` and `sglang.rs` hold what only that engine is told; this file holds
//! the order the findings are answered in and what both engines are told (the longest request, 8-bit KV, a
//! smaller budget, a failed start, torch's out of memory).

mod kv_full;
mod sglang;
mod vllm;

use super::{has, knob, Evidence};
use crate::model::{
    human, FindingCode, Knob, Quantity, RankFigures, ServingEngine, ServingFigures, StartFailure,
    Suggestion,
};

/// `ratio` rounded down to two decimals, as the engines take a utilization.
fn floor2(ratio: f64) -> f64 {
    (ratio * 100.0).floor() / 100.0
}

/// The suggestions so far: one per setting, the codes of every finding it answers.
struct Out<'a> {
    ev: &'a Evidence<'a>,
    list: &'a mut Vec<Suggestion>,
    /// The knobs offered so far.
    offered: Vec<Knob>,
}

impl Out<'_> {
    /// Add `knob` set to `value` with its effect, when the runtime has that knob; a setting already offered
    /// only gains the codes.
    fn push(
        &mut self,
        knob_of: Knob,
        value: impl std::fmt::Display,
        effect: String,
        because: &[FindingCode],
    ) {
        let Some(entry) = knob(self.ev, knob_of) else {
            return;
        };
        let setting = entry.setting(value).trim().to_string();
        self.offered.push(knob_of);
        match self.list.iter_mut().find(|s| s.setting == setting) {
            Some(s) => {
                for c in because {
                    if !s.because.contains(c) {
                        s.because.push(*c);
                    }
                }
            }
            None => self.list.push(Suggestion {
                setting,
                effect,
                because: because.to_vec(),
            }),
        }
    }

    /// True when a setting of `knob_of` was already offered.
    fn offers(&self, knob_of: Knob) -> bool {
        self.offered.contains(&knob_of)
    }
}

/// Settings to try for a vLLM or SGLang start, from its findings and figures.
pub fn suggest(ev: &Evidence, engine: ServingEngine, list: &mut Vec<Suggestion>) {
    let Some(s) = ev.load.load.serving.as_ref() else {
        return;
    };
    let mut out = Out {
        ev,
        list,
        offered: Vec::new(),
    };
    let failed = has(ev.findings, FindingCode::LoadFailed);
    if has(ev.findings, FindingCode::KvTooSmall) {
        kv_too_small(&mut out, s, engine);
    }
    if has(ev.findings, FindingCode::ForeignMemory) {
        vllm::foreign_memory(&mut out, s, failed);
    }
    if has(ev.findings, FindingCode::GraphEstimateOff) {
        vllm::graph_estimate_off(&mut out, s, failed);
    }
    if has(ev.findings, FindingCode::BudgetExceeded) {
        vllm::budget_exceeded(&mut out, s);
    }
    if failed {
        start_failed(&mut out, s, engine);
    }
    if has(ev.findings, FindingCode::IncompleteLoad) {
        cut_before_graphs(&mut out, s, engine);
    }
    vllm::util_advisory(&mut out, s);
    if let Some(t) = ev
        .load
        .load
        .timeline
        .as_ref()
        .filter(|_| has(ev.findings, FindingCode::KvCacheFull))
    {
        kv_full::kv_cache_full(&mut out, s, t, engine);
    }
}

/// The ranks a finding of `code` names (every rank when a finding names none).
fn ranks_of<'a>(ev: &Evidence, s: &'a ServingFigures, code: FindingCode) -> Vec<&'a RankFigures> {
    let mut out: Vec<&RankFigures> = Vec::new();
    for f in ev.findings.iter().filter(|f| f.code == code) {
        match &f.device {
            Some(d) => out.extend(s.rank_on(d)),
            None => out.extend(s.ranks.iter()),
        }
    }
    out.dedup_by(|a, b| a.device == b.device);
    out
}

/// The longest request that fits, and 8-bit KV (and SGLang: a slightly larger pool).
fn kv_too_small(out: &mut Out, s: &ServingFigures, engine: ServingEngine) {
    let Some(crate::checks::kv_too_small::KvShortfall {
        len,
        tokens,
        refused,
        ..
    }) = crate::checks::kv_too_small::shortfall(s)
    else {
        return;
    };
    let because: &[FindingCode] = if refused {
        &[FindingCode::KvTooSmall, FindingCode::LoadFailed]
    } else {
        &[FindingCode::KvTooSmall]
    };
    out.push(
        Knob::Context,
        tokens,
        format!(
            "the longest request becomes {tokens} tokens, the most the KV cache holds ({len} asked); one such request at a time, shorter ones share the cache"
        ),
        because,
    );
    if s.kv_cache_fp8 != Some(true) {
        let dtype = match engine {
            ServingEngine::Vllm => "fp8",
            ServingEngine::Sglang => "fp8_e5m2",
        };
        let doubled = tokens.saturating_mul(2);
        let verdict = if doubled >= len {
            format!("enough for the {len} asked")
        } else {
            format!("still short of the {len} asked")
        };
        let premise = if s.kv_cache_fp8.is_some() {
            "the cache is 16-bit"
        } else {
            "if the cache is 16-bit (the default)"
        };
        out.push(
            Knob::KvCacheType,
            dtype,
            format!(
                "{premise}: 8-bit values hold twice the tokens in the same memory, about {doubled} tokens, {verdict}"
            ),
            because,
        );
    }
    if engine == ServingEngine::Sglang {
        sglang::larger_pool(out, s, because);
    }
}

/// The utilization lowered by `over` on this rank (the rank's total known), with the cause in words.
fn lower_budget(
    out: &mut Out,
    r: &RankFigures,
    over: Quantity,
    because: &[FindingCode],
    why: &str,
) {
    let (Some(total), Some(budget)) = (r.total, r.budget) else {
        return;
    };
    let util = budget.size.bytes as f64 / total.size.bytes.max(1) as f64;
    let lowered = floor2(util - over.high as f64 / total.size.low.max(1) as f64);
    if lowered <= 0.0 || lowered >= util {
        return;
    }
    out.push(
        Knob::MemoryFraction,
        format!("{lowered:.2}"),
        format!(
            "{why}: a budget of {} instead of {}, so it and the {} over it stay within the old one; the KV cache shrinks by about {}",
            human((lowered * total.size.bytes as f64) as i64),
            human(budget.size.bytes),
            human(over.bytes),
            human(budget.size.bytes - (lowered * total.size.bytes as f64) as i64)
        ),
        because,
    );
}

/// What a failed start's cause asks for (the causes other findings answer are left to them).
fn start_failed(out: &mut Out, s: &ServingFigures, engine: ServingEngine) {
    let because = &[FindingCode::LoadFailed];
    let Some(cause) = s.failure else { return };
    match cause {
        StartFailure::NoKvMemory if s.ranks.iter().any(|r| r.graph_estimate.is_some()) => {}
        StartFailure::NoKvMemory => match engine {
            ServingEngine::Vllm => vllm::no_kv(out, s),
            ServingEngine::Sglang => sglang::no_kv(out, s),
        },
        StartFailure::Crashed => {
            // The rank whose line gave the failure, else the first that began a capture it did not end.
            let capturing =
                |r: &&RankFigures| r.capture_began.is_some() && r.graph_actual.is_none();
            let Some(r) = s
                .failed_rank()
                .filter(capturing)
                .or_else(|| s.ranks.iter().find(capturing))
            else {
                return;
            };
            let avail = r
                .avail_after_pool
                .or(r.avail_after_weights)
                .map(|a| format!(" with {} still available", human(a.size.bytes)))
                .unwrap_or_default();
            out.push(
                Knob::Eager,
                "",
                format!(
                    "skips the CUDA-graph capture where rank {} crashed{avail}: not a memory failure, the memory settings stay as they are (decoding runs without graphs, slower)",
                    r.rank
                ),
                because,
            );
        }
        StartFailure::OutOfMemory {
            tried,
            total,
            free,
            during_capture,
            ..
        } => out_of_memory(out, s, engine, tried, total, free, during_capture),
        StartFailure::MaxLenOverKv { .. }
        | StartFailure::FreeBelowBudget
        | StartFailure::EngineFailed => {}
    }
}

/// PyTorch's out of memory: room for the failed allocation, or no graphs when it failed during capture.
fn out_of_memory(
    out: &mut Out,
    s: &ServingFigures,
    engine: ServingEngine,
    tried: Option<Quantity>,
    total: Option<Quantity>,
    free: Option<Quantity>,
    during_capture: bool,
) {
    let because = &[FindingCode::LoadFailed];
    let shortfall = match (tried, free) {
        (Some(t), Some(f)) => Some(t.minus(f)),
        (Some(t), None) => Some(t),
        _ => None,
    };
    if during_capture {
        match engine {
            ServingEngine::Vllm => out.push(
                Knob::Eager,
                "",
                format!(
                    "no CUDA graphs to capture: the allocation that failed during the capture{} is not made (decoding runs without graphs, slower)",
                    tried.map(|t| format!(" ({})", human(t.bytes))).unwrap_or_default()
                ),
                because,
            ),
            ServingEngine::Sglang => {
                let (bs, from) = sglang::halved_or_n(s.graph_max_bs);
                out.push(
                    Knob::GraphBatch,
                    bs,
                    format!("{from}: fewer and smaller batches captured, so the capture needs less than the memory the pool left"),
                    because,
                );
            }
        }
    }
    // The fraction lowered by what the allocation lacked, of the GPU's total.
    let (Some(short), Some(total), Some(util)) = (shortfall, total, s.utilization.map(|u| u.value))
    else {
        return;
    };
    if short.bytes <= 0 {
        return;
    }
    let lowered = floor2(util - short.high as f64 / total.low.max(1) as f64);
    if lowered <= 0.0 || lowered >= util {
        return;
    }
    let what = match engine {
        ServingEngine::Vllm => "the budget",
        ServingEngine::Sglang => "the static pool",
    };
    out.push(
        Knob::MemoryFraction,
        format!("{lowered:.2}"),
        format!(
            "{what} shrinks by {} of the {} GPU, room for the {} the allocation lacked; the KV cache shrinks as much",
            human(((util - lowered) * total.bytes as f64) as i64),
            human(total.bytes),
            human(short.bytes)
        ),
        because,
    );
}

/// A start whose log ends before the CUDA graphs were captured: what to change if the capture runs out.
fn cut_before_graphs(out: &mut Out, s: &ServingFigures, engine: ServingEngine) {
    if s.failure.is_some() || s.ranks.iter().any(|r| r.graph_actual.is_some()) {
        return;
    }
    match engine {
        ServingEngine::Vllm => vllm::cut_before_graphs(out, s),
        ServingEngine::Sglang => sglang::cut_before_graphs(out, s),
    }
}
