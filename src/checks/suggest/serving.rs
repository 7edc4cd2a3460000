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

use super::{has, knob, Evidence};
use crate::model::{
    human, FindingCode, Knob, Ordering3, Quantity, RankFigures, ServingEngine, ServingFigures,
    StartFailure, Suggestion,
};

/// vLLM's default `--gpu-memory-utilization` (every version).
const VLLM_DEFAULT_UTILIZATION: f64 = 0.9;

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
        foreign_memory(&mut out, s, failed);
    }
    if has(ev.findings, FindingCode::GraphEstimateOff) {
        graph_estimate_off(&mut out, s, failed);
    }
    if has(ev.findings, FindingCode::BudgetExceeded) {
        budget_exceeded(&mut out, s);
    }
    if failed {
        start_failed(&mut out, s, engine);
    }
    if has(ev.findings, FindingCode::IncompleteLoad) {
        cut_before_graphs(&mut out, s, engine);
    }
    util_advisory(&mut out, s);
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
    let (len, tokens, refused) = match (s.failure, s.max_len, s.kv_tokens) {
        (Some(StartFailure::MaxLenOverKv { len, tokens }), _, _) => (len, tokens, true),
        (_, Some(len), Some(tokens)) if len.value > tokens.value && tokens.value > 0 => {
            (len.value, tokens.value, false)
        }
        _ => return,
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
        sglang_larger_pool(out, s, because);
    }
}

/// SGLang: raise `--mem-fraction-static` by half of what the graphs left, the pool's gain in tokens.
fn sglang_larger_pool(out: &mut Out, s: &ServingFigures, because: &[FindingCode]) {
    let Some(fraction) = s.utilization.map(|u| u.value) else {
        return;
    };
    // The tightest rank decides: what is left after its graphs, against what it had before the weights.
    let Some((left, start, pool, pool_tokens)) = s
        .ranks
        .iter()
        .filter_map(|r| {
            Some((
                r.avail_after_graphs?.size,
                r.free_at_start?.size,
                r.kv?.size,
                r.kv_tokens?.value,
            ))
        })
        .min_by_key(|(left, ..)| left.bytes)
    else {
        return;
    };
    if left.low <= 0 || start.bytes <= 0 || pool.bytes <= 0 {
        return;
    }
    let raised = floor2(fraction + left.low as f64 / 2.0 / start.high as f64);
    if raised <= fraction {
        return;
    }
    let gain = ((raised - fraction) * start.bytes as f64) as i64;
    let gain_tokens = (gain as f64 / pool.bytes as f64 * pool_tokens as f64) as i64;
    out.push(
        Knob::MemoryFraction,
        format!("{raised:.2}"),
        format!(
            "the pool grows by about {} per rank ({gain_tokens} tokens more than {pool_tokens}), leaving about {} after the graphs (now {}): a small gain, the GPU has little room left",
            human(gain),
            human(left.bytes - gain),
            human(left.bytes)
        ),
        because,
    );
}

/// vLLM: the utilization that fits beside the other process.
fn foreign_memory(out: &mut Out, s: &ServingFigures, failed: bool) {
    let mut tightest: Option<(f64, Quantity, Quantity)> = None;
    for r in ranks_of(out.ev, s, FindingCode::ForeignMemory) {
        let (Some(free), Some(total)) = (r.free_at_start, r.total) else {
            continue;
        };
        let fits = floor2(free.size.low as f64 / total.size.high.max(1) as f64);
        if tightest.is_none_or(|(f, _, _)| fits < f) {
            tightest = Some((fits, free.size, total.size));
        }
    }
    let Some((fits, free, total)) = tightest else {
        return;
    };
    let because: &[FindingCode] = if failed {
        &[FindingCode::ForeignMemory, FindingCode::LoadFailed]
    } else {
        &[FindingCode::ForeignMemory]
    };
    out.push(
        Knob::MemoryFraction,
        format!("{fits:.2}"),
        format!(
            "a budget of {} per GPU ({fits:.2} × {}), within the {} free at startup beside the other process's {}",
            human((fits * total.bytes as f64) as i64),
            human(total.bytes),
            human(free.bytes),
            human(total.minus(free).bytes)
        ),
        because,
    );
}

/// vLLM ≥ 0.21: leave the estimate out, or pin the KV at vLLM's own figure.
fn graph_estimate_off(out: &mut Out, s: &ServingFigures, failed: bool) {
    let no_kv = s.failure == Some(StartFailure::NoKvMemory);
    let because: &[FindingCode] = if failed && no_kv {
        &[FindingCode::GraphEstimateOff, FindingCode::LoadFailed]
    } else {
        &[FindingCode::GraphEstimateOff]
    };
    for r in ranks_of(out.ev, s, FindingCode::GraphEstimateOff) {
        let Some(est) = r.graph_estimate else {
            continue;
        };
        match r.graph_actual {
            Some(act) => {
                let above = est.size.compare(&act.size) == Ordering3::Above;
                if above {
                    out.push(
                        Knob::GraphEstimate,
                        0,
                        format!(
                            "the {} estimate leaves the budget: the KV cache grows by about {}, and the graphs take their {} outside it (as before 0.21)",
                            human(est.size.bytes),
                            human(est.size.bytes),
                            human(act.size.bytes)
                        ),
                        because,
                    );
                }
                if let Some(fit) = r.kv_to_fit_budget {
                    out.push(
                        Knob::KvCacheMemory,
                        fit.size.bytes,
                        format!(
                            "vLLM's own figure: a KV cache of {} with the graphs measured ({}), the rank inside its budget; no memory profile",
                            human(fit.size.bytes),
                            human(act.size.bytes)
                        ),
                        because,
                    );
                } else if !above {
                    lower_budget(
                        out,
                        r,
                        act.size.minus(est.size),
                        because,
                        "the graphs took more than the estimate reserved",
                    );
                }
            }
            None if no_kv => {
                let share = r
                    .total
                    .map(|t| {
                        format!(
                            ", {:.0}% of the GPU",
                            est.size.bytes as f64 * 100.0 / t.size.bytes.max(1) as f64
                        )
                    })
                    .unwrap_or_default();
                out.push(
                    Knob::GraphEstimate,
                    0,
                    format!(
                        "the {} estimate{share} leaves the budget: the KV cache gets what the weights, the activation peak and non-torch memory leave of it, and the graphs are captured (and measured) outside it",
                        human(est.size.bytes)
                    ),
                    because,
                );
            }
            None => {}
        }
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

/// vLLM: pin the KV at its own figures, or (V0) lower the utilization by the graphs or run eager.
fn budget_exceeded(out: &mut Out, s: &ServingFigures) {
    let because = &[FindingCode::BudgetExceeded];
    for r in ranks_of(out.ev, s, FindingCode::BudgetExceeded) {
        let in_use = r.kv_in_use.or(r.kv);
        if let Some(fit) = r.kv_to_fit_budget {
            let budget = r.budget.map(|b| human(b.size.bytes)).unwrap_or_default();
            let less = in_use
                .map(|k| {
                    format!(
                        ", {} less than the {} in use",
                        human(k.size.bytes - fit.size.bytes),
                        human(k.size.bytes)
                    )
                })
                .unwrap_or_default();
            out.push(
                Knob::KvCacheMemory,
                fit.size.bytes,
                format!(
                    "vLLM's own figure for a shared GPU: a KV cache of {}{less}, and the rank stays inside its budget {budget}",
                    human(fit.size.bytes)
                ),
                because,
            );
        }
        if let Some(fill) = r.kv_to_fill_gpu {
            let more = in_use
                .filter(|k| k.size.bytes > 0)
                .map(|k| {
                    format!(
                        ", {:+.0}% over the {} in use",
                        (fill.size.bytes as f64 / k.size.bytes as f64 - 1.0) * 100.0,
                        human(k.size.bytes)
                    )
                })
                .unwrap_or_default();
            out.push(
                Knob::KvCacheMemory,
                fill.size.bytes,
                format!(
                    "vLLM's own figure for a dedicated GPU: a KV cache of {}{more}, filling the GPU",
                    human(fill.size.bytes)
                ),
                because,
            );
        }
        if r.kv_to_fit_budget.is_some() {
            continue;
        }
        // Before 0.21 (and in V0) the graphs are captured outside the budget: make room for them in it.
        if let Some(graphs) = r.graph_actual.filter(|_| r.graph_estimate.is_none()) {
            lower_budget(
                out,
                r,
                graphs.size,
                because,
                "the CUDA graphs are captured outside the budget",
            );
            out.push(
                Knob::Eager,
                "",
                format!(
                    "no CUDA graphs: the {} they take outside the budget stay free (decoding runs without graphs, slower)",
                    human(graphs.size.bytes)
                ),
                because,
            );
        }
    }
}

/// What a failed start's cause asks for (the causes other findings answer are left to them).
fn start_failed(out: &mut Out, s: &ServingFigures, engine: ServingEngine) {
    let because = &[FindingCode::LoadFailed];
    let Some(cause) = s.failure else { return };
    match cause {
        StartFailure::NoKvMemory if s.ranks.iter().any(|r| r.graph_estimate.is_some()) => {}
        StartFailure::NoKvMemory => match engine {
            ServingEngine::Vllm => vllm_no_kv(out, s),
            ServingEngine::Sglang => sglang_no_kv(out, s),
        },
        StartFailure::Crashed => {
            let Some(r) = s
                .ranks
                .iter()
                .find(|r| r.capture_began.is_some() && r.graph_actual.is_none())
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

/// vLLM: the profile left no KV memory (no graph estimate to blame): more of the GPU, or a smaller peak.
fn vllm_no_kv(out: &mut Out, s: &ServingFigures) {
    let because = &[FindingCode::LoadFailed];
    let kv = s
        .ranks
        .iter()
        .filter_map(|r| r.kv)
        .min_by_key(|k| k.size.bytes);
    let short = kv
        .filter(|k| k.size.bytes < 0)
        .map(|k| format!(" (the profile left {})", human(k.size.bytes)))
        .unwrap_or_default();
    let util = s
        .utilization
        .map(|u| u.value)
        .unwrap_or(VLLM_DEFAULT_UTILIZATION);
    if util < 0.95 {
        let total = s
            .ranks
            .iter()
            .filter_map(|r| r.total)
            .map(|t| t.size)
            .next();
        let gain = match total {
            Some(t) => human(((0.95 - util) * t.bytes as f64) as i64),
            None => format!("{:.0} points of the GPU's total", (0.95 - util) * 100.0),
        };
        let set = if s.utilization.is_some() {
            ""
        } else {
            ", the default"
        };
        out.push(
            Knob::MemoryFraction,
            "0.95",
            format!("{gain} more per GPU for the KV cache than at {util:.2}{set}{short}; only if nothing else runs on the GPU"),
            because,
        );
    }
    let halve = |c: Option<crate::model::Count>, fallback: i64| {
        c.map(|c| (c.value / 2).max(1)).unwrap_or(fallback)
    };
    let activation = s
        .ranks
        .iter()
        .filter_map(|r| r.activation)
        .map(|a| format!(" ({} profiled)", human(a.size.bytes)))
        .next()
        .unwrap_or_default();
    let batched = halve(s.batched_tokens, 2048);
    let from = s
        .batched_tokens
        .map(|c| format!("half of the {} set", c.value))
        .unwrap_or_else(|| {
            "below the default (8192 on GPUs of 70 GiB and more, 2048 on smaller ones)".to_string()
        });
    out.push(
        Knob::Batch,
        batched,
        format!("{from}: the activation peak{activation} the profile keeps out of the KV cache scales with the tokens of one step"),
        because,
    );
    let seqs = halve(s.max_num_seqs, 256);
    let from = s
        .max_num_seqs
        .map(|c| format!("half of the {} set", c.value))
        .unwrap_or_else(|| {
            "below the default (1024 on GPUs of 70 GiB and more, 256 on smaller ones)".to_string()
        });
    out.push(
        Knob::Sequences,
        seqs,
        format!(
            "{from}: fewer sequences at once, a smaller sampling peak and fewer CUDA-graph sizes"
        ),
        because,
    );
    if let Some(len) = s.max_len {
        out.push(
            Knob::Context,
            (len.value / 2).max(1),
            format!(
                "half of the {} max model length: the profile's longest request shrinks with it",
                len.value
            ),
            because,
        );
    }
}

/// SGLang: a profiled pool at or below zero; the fraction that gives a pool, or smaller buffers beside it.
fn sglang_no_kv(out: &mut Out, s: &ServingFigures) {
    let because = &[FindingCode::LoadFailed];
    let short = s
        .ranks
        .iter()
        .filter_map(|r| r.kv_tokens)
        .map(|t| t.value)
        .min()
        .filter(|t| *t < 0)
        .map(|t| format!(" (the profiled pool is {t} tokens)"))
        .unwrap_or_default();
    let (graph_bs, from) = halved_or_n(s.graph_max_bs);
    out.push(
        Knob::GraphBatch,
        graph_bs,
        format!("{from}: the CUDA graphs' reserve beside the pool shrinks, and with it the share the pool cannot have{short}"),
        because,
    );
    let (chunk, from) = halved_or_n(s.batched_tokens);
    out.push(
        Knob::Batch,
        chunk,
        format!("{from}: a smaller prefill activation beside the pool; with both, raise --mem-fraction-static so the pool gets what they free, or add GPUs"),
        because,
    );
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
                let (bs, from) = halved_or_n(s.graph_max_bs);
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
    let because = &[FindingCode::IncompleteLoad];
    match engine {
        ServingEngine::Vllm => {
            // V0 captures its graphs outside the budget, after the blocks are sized: the log ends in it.
            if !s.v0 || !s.ranks.iter().any(|r| r.capture_began.is_some()) {
                return;
            }
            out.push(
                Knob::Eager,
                "",
                "if the capture ran out of memory (the log ends during it): no CUDA graphs, which V0 captures outside the budget (decoding runs without graphs, slower)".to_string(),
                because,
            );
            let util = s
                .utilization
                .map(|u| u.value)
                .unwrap_or(VLLM_DEFAULT_UTILIZATION);
            let total = s
                .ranks
                .iter()
                .filter_map(|r| r.total)
                .map(|t| t.size)
                .next();
            let room = match total {
                Some(t) => human((0.05 * t.bytes as f64) as i64),
                None => "5 points of each GPU".to_string(),
            };
            let set = if s.utilization.is_some() {
                ""
            } else {
                " (the default)"
            };
            out.push(
                Knob::MemoryFraction,
                format!("{:.2}", util - 0.05),
                format!("{room} more outside the budget for the graphs than at {util:.2}{set}; the KV cache shrinks as much"),
                because,
            );
            let seqs = s.max_num_seqs.map(|c| c.value).unwrap_or(256);
            out.push(
                Knob::Sequences,
                (seqs / 2).max(1),
                format!(
                    "V0 captures a graph for each batch size up to the {seqs} sequences{}: up to {} only, the largest graphs are not captured",
                    if s.max_num_seqs.is_some() { " set" } else { " of its default" },
                    (seqs / 2).max(1)
                ),
                because,
            );
        }
        ServingEngine::Sglang => {
            let Some((r, left)) = s
                .ranks
                .iter()
                .filter_map(|r| Some((r, r.left_for_graphs()?)))
                .min_by_key(|(_, left)| left.bytes)
            else {
                return;
            };
            if r.capture_began.is_some() && s.ranks.len() > 1 {
                return;
            }
            let workspace = r
                .workspace
                .map(|w| format!(" and the {} attention workspace", human(w.size.bytes)))
                .unwrap_or_default();
            let (bs, from) = halved_or_n(s.graph_max_bs);
            out.push(
                Knob::GraphBatch,
                bs,
                format!(
                    "if the capture runs out (the log ends before it): {from}; rank {} has {} left for it after the pool{workspace}",
                    r.rank,
                    human(left.bytes)
                ),
                because,
            );
        }
    }
}

/// vLLM ≥ 0.21's own advisory: the utilization that keeps the KV cache it had before graph profiling, when
/// the estimate costs at least one point of it (the engines take two decimals) and no finding asked for
/// another utilization.
fn util_advisory(out: &mut Out, s: &ServingFigures) {
    if out.offers(Knob::MemoryFraction) {
        return;
    }
    let Some(current) = s.utilization.map(|u| u.value) else {
        return;
    };
    let Some(r) = s
        .ranks
        .iter()
        .find(|r| r.utilization_keeping_kv.is_some() && r.utilization_without_graphs.is_some())
    else {
        return;
    };
    let (Some(keep), Some(without)) = (r.utilization_keeping_kv, r.utilization_without_graphs)
    else {
        return;
    };
    let cost = current - without.value;
    if cost < 0.01 || keep.value <= current {
        return;
    }
    let estimate = r
        .graph_estimate
        .map(|e| format!(" ({} per rank)", human(e.size.bytes)))
        .unwrap_or_default();
    out.push(
        Knob::MemoryFraction,
        keep.value,
        format!(
            "vLLM's own figure: the KV cache it sized before CUDA-graph profiling, which reserves the graph estimate{estimate} inside the budget at a cost of {:.1} points of {current}",
            cost * 100.0
        ),
        &[],
    );
}

/// A setting halved, and where the figure comes from: `N` with what it must do when the log does not print
/// the setting (SGLang's `--cuda-graph-max-bs`, `--chunked-prefill-size`).
fn halved_or_n(setting: Option<crate::model::Count>) -> (String, String) {
    match setting {
        Some(c) => (
            (c.value / 2).max(1).to_string(),
            format!("half of the {} set", c.value),
        ),
        None => (
            "N".to_string(),
            "N below the build's default (the log does not print it)".to_string(),
        ),
    }
}
