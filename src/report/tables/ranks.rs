//! The ranks of a vLLM or SGLang load, one row each, with every memory figure the engine printed for it as
//! it printed it (GiB with two decimals; SGLang's `GB` is GiB, `docs/log-formats.md` §8), and under the table
//! the engine-level figures (KV tokens, concurrency, max length, the utilization or static fraction).
//! Why a section of its own: a serving engine's plan is per rank and its figures are not buffers, so the
//! component and device tables cannot show them all, and a pasted fragment is often nothing but these.

use super::{Explanation, Section};
use crate::model::{Concluded, Count, Figure, RankFigures, Ratio, Runtime, GIB};
use crate::report::table::{Align, Table};

/// One column: its title and what it reads of a rank.
type Column = (&'static str, fn(&RankFigures) -> Option<String>);

/// A figure as the engines print it: GiB with two decimals (negative figures too).
fn gib(f: Option<Figure>) -> Option<String> {
    f.map(|f| format!("{:.2} GiB", f.size.bytes as f64 / GIB as f64))
}

const COLUMNS: [Column; 15] = [
    ("total", |r| gib(r.total)),
    ("free at start", |r| gib(r.free_at_start)),
    ("budget", |r| gib(r.budget)),
    ("weights", |r| gib(r.weights_loaded.or(r.weights))),
    ("non-torch", |r| gib(r.non_torch)),
    ("activation", |r| gib(r.activation)),
    ("KV cache", |r| gib(r.kv)),
    ("KV tokens", |r| r.kv_tokens.map(|c| c.value.to_string())),
    ("graphs (estimate)", |r| gib(r.graph_estimate)),
    ("graphs", |r| gib(r.graph_actual)),
    ("free after weights", |r| gib(r.avail_after_weights)),
    ("free after pool", |r| gib(r.avail_after_pool)),
    ("free after graphs", |r| gib(r.avail_after_graphs)),
    ("utilization without graphs", |r| {
        r.utilization_without_graphs.map(|u| u.value.to_string())
    }),
    ("utilization keeping KV", |r| {
        r.utilization_keeping_kv.map(|u| u.value.to_string())
    }),
];

/// The section, or nothing for a load that is not a serving engine's (or names no rank figure).
pub fn section(load: &Concluded) -> Option<Section> {
    let s = load.reconciled.load.serving.as_ref()?;
    if s.ranks.is_empty() {
        return None;
    }
    let shown: Vec<&Column> = COLUMNS
        .iter()
        .filter(|(_, read)| s.ranks.iter().any(|r| read(r).is_some()))
        .collect();
    let mut headers: Vec<(&str, Align)> = vec![("rank", Align::Left), ("device", Align::Left)];
    headers.extend(shown.iter().map(|(title, _)| (*title, Align::Right)));
    headers.push(("lines", Align::Left));
    let mut table = Table::new(&headers);
    for r in &s.ranks {
        let mut row = vec![r.rank.clone(), r.device.to_string()];
        row.extend(
            shown
                .iter()
                .map(|(_, read)| read(r).unwrap_or_else(|| "–".to_string())),
        );
        row.push(super::lines(&r.lines));
        table.push(row);
    }
    let count = |c: Count| format!("{} (line {})", c.value, c.line);
    let ratio = |r: Ratio| format!("{} (line {})", r.value, r.line);
    let mut parts: Vec<(&'static str, String)> = Vec::new();
    if let Some(v) = &s.version {
        parts.push(("version", v.clone()));
    }
    if let Some(u) = s.utilization {
        let name = match load.reconciled.load.runtime {
            Runtime::Sglang => "mem-fraction-static",
            Runtime::Vllm
            | Runtime::OllamaEstimator
            | Runtime::OllamaEngine
            | Runtime::OllamaPlacerUnknown
            | Runtime::OllamaFit
            | Runtime::LlamaCpp
            | Runtime::LlamaCppLauncherUnknown
            | Runtime::Unknown => "gpu-memory-utilization",
        };
        parts.push((name, ratio(u)));
    }
    if let Some(n) = s.tensor_parallel {
        parts.push(("tensor-parallel", count(n)));
    }
    if let Some(n) = s.max_len {
        parts.push(("max length", count(n)));
    }
    if let Some(n) = s.kv_tokens {
        parts.push(("KV tokens", count(n)));
    }
    if let Some(n) = s.gpu_blocks {
        parts.push(("GPU blocks", count(n)));
    }
    if let Some(c) = s.concurrency {
        parts.push(("max concurrency", format!("{}x (line {})", c.value, c.line)));
    }
    let explanations = if parts.is_empty() {
        Vec::new()
    } else {
        vec![Explanation {
            subject: "engine".to_string(),
            parts,
        }]
    };
    Some(Section {
        title: "Ranks",
        table,
        explanations,
    })
}
