//! `rank-imbalance` (vLLM, SGLang): ranks of one engine report different figures for the same part (weights,
//! KV cache, CUDA graphs captured or estimated, free memory at startup) beyond the printed rounding. The
//! engine sizes the KV cache by its smallest rank, so the largest ranks waste the difference.

use super::serving_figures::{serving, size};
use super::{finding, CheckDef, Context};
use crate::model::{Figure, Finding, FindingCode, Ordering3, RankFigures, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::RankImbalance,
    summary: "ranks of one engine differ beyond rounding (weights, KV, graphs, free memory)",
    run: check,
};

/// Reads one part's figure of a rank.
type PartOf = fn(&RankFigures) -> Option<Figure>;

/// The hint for ranks that differ in memory they were given or left (another process, an uneven split).
const UNEVEN: &str = "ranks of one engine should match: look for another process on the GPU with less free memory, or an uneven split (pipeline stages, experts)";

const PARTS: [(&str, PartOf, &str); 5] = [
    ("weights", |r| r.weights_figure(), UNEVEN),
    ("KV cache", |r| r.kv, UNEVEN),
    ("CUDA graphs", |r| r.graph_actual, UNEVEN),
    (
        "CUDA-graph estimate",
        |r| r.graph_estimate,
        "each rank estimates its graph pool from its own profile and reserves it inside its budget, and the engine sizes the KV cache by the rank with the least left: the largest estimate decides for every rank (vLLM ≥ 0.21; the estimate over-counts, see the suggestions)",
    ),
    ("free memory at startup", |r| r.free_at_start, UNEVEN),
];

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(s) = serving(cx) else { return };
    for (name, of, hint) in PARTS {
        let figures: Vec<(&RankFigures, Figure)> =
            s.ranks.iter().filter_map(|r| Some((r, of(r)?))).collect();
        let (Some(low), Some(high)) = (
            figures.iter().min_by_key(|(_, f)| f.size.bytes),
            figures.iter().max_by_key(|(_, f)| f.size.bytes),
        ) else {
            continue;
        };
        if high.1.size.compare(&low.1.size) != Ordering3::Above {
            continue;
        }
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{name}: rank {} has {}, rank {} has {} ({} apart, beyond rounding)",
                high.0.rank,
                size(high.1.size),
                low.0.rank,
                size(low.1.size),
                size(high.1.size.minus(low.1.size))
            ),
            hint,
            vec![high.1.line, low.1.line],
            Some(&low.0.device),
            None,
        ));
    }
}
