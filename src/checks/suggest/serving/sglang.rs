//! SGLang's own suggestions: a larger static pool (`--mem-fraction-static`) when the graphs left room, smaller
//! buffers beside a pool that came out empty (`--cuda-graph-max-bs`, `--chunked-prefill-size`), and the capture
//! a log cut before it may run out in. Each effect is computed from the rank's figures
//! (`model::ServingFigures`); the shared helpers and the suggestions both engines get are in `mod.rs`.

use super::{floor2, Out};
use crate::model::{human, FindingCode, Knob, ServingFigures};

/// SGLang: raise `--mem-fraction-static` by half of what the graphs left, the pool's gain in tokens.
pub(super) fn larger_pool(out: &mut Out, s: &ServingFigures, because: &[FindingCode]) {
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

/// SGLang: a profiled pool at or below zero; the fraction that gives a pool, or smaller buffers beside it.
pub(super) fn no_kv(out: &mut Out, s: &ServingFigures) {
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

/// A setting halved, and where the figure comes from: `N` with what it must do when the log does not print
/// the setting (SGLang's `--cuda-graph-max-bs`, `--chunked-prefill-size`).
pub(super) fn halved_or_n(setting: Option<crate::model::Count>) -> (String, String) {
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

/// SGLang: the rank with the least left for its graphs after the pool, when the log ends before the capture.
pub(super) fn cut_before_graphs(out: &mut Out, s: &ServingFigures) {
    let because = &[FindingCode::IncompleteLoad];
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
