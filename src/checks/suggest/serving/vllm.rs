//! vLLM's own suggestions: the utilization beside another process, the CUDA-graph estimate left out or the
//! KV cache pinned at vLLM's own `--kv-cache-memory` figures, a budget that leaves no KV cache, V0's capture
//! outside the budget, and vLLM ≥ 0.21's utilization advisory. Each effect is computed from the rank's figures
//! (`model::ServingFigures`); the shared helpers and the suggestions both engines get are in `mod.rs`.

use super::{floor2, lower_budget, ranks_of, Out};
use crate::model::{human, FindingCode, Knob, Ordering3, Quantity, ServingFigures, StartFailure};

/// vLLM's default `--gpu-memory-utilization` (every version).
const VLLM_DEFAULT_UTILIZATION: f64 = 0.9;

/// vLLM: the utilization that fits beside the other process.
pub(super) fn foreign_memory(out: &mut Out, s: &ServingFigures, failed: bool) {
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
pub(super) fn graph_estimate_off(out: &mut Out, s: &ServingFigures, failed: bool) {
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

/// vLLM: pin the KV at its own figures, or (V0) lower the utilization by the graphs or run eager.
pub(super) fn budget_exceeded(out: &mut Out, s: &ServingFigures) {
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

/// vLLM: the profile left no KV memory (no graph estimate to blame): more of the GPU, or a smaller peak.
pub(super) fn no_kv(out: &mut Out, s: &ServingFigures) {
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

/// vLLM ≥ 0.21's own advisory: the utilization that keeps the KV cache it had before graph profiling, when
/// the estimate costs at least one point of it (the engines take two decimals) and no finding asked for
/// another utilization.
pub(super) fn util_advisory(out: &mut Out, s: &ServingFigures) {
    if out.offers(Knob::MemoryFraction) {
        return;
    }
    let Some(current) = s.utilization.map(|u| u.value) else {
        return;
    };
    // The rank that needs the most: its figure keeps the old KV cache on every rank.
    let Some(r) = s
        .ranks
        .iter()
        .filter(|r| r.utilization_without_graphs.is_some())
        .filter_map(|r| Some((r, r.utilization_keeping_kv?.value)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, _)| r)
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
    if let Some(e) = r.graph_estimate {
        out.push(
            Knob::GraphEstimate,
            0,
            format!(
                "vLLM sizes the KV cache as before CUDA-graph profiling: the {} estimate is no longer reserved in the budget (the KV cache gets it back), and the graphs are captured outside it, as before 0.21",
                human(e.size.bytes)
            ),
            &[],
        );
    }
}

/// vLLM V0 captures its graphs outside the budget, after the blocks are sized: a log that ends in the capture
/// may have run out there.
pub(super) fn cut_before_graphs(out: &mut Out, s: &ServingFigures) {
    let because = &[FindingCode::IncompleteLoad];
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
