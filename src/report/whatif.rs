//! The placement replay in words: per load the replayed placement with the estimate's figures (and whether it
//! reproduces the log), and the verdict with the measured figures. Used by the main report (a summary) and by
//! `vramdiff whatif` (everything, or JSON).

use std::fmt::Write;

use super::table::{Align, Table};
use super::{json, sanitize, Format};
use crate::model::{human, Analysis, EstimateReplay, MaxContext, Placement, ReplayFigures, WhatIf};

fn agreement(v: Option<bool>, changed: bool) -> &'static str {
    match v {
        Some(true) => "reproduced",
        Some(false) => "NOT reproduced",
        None if changed => "not compared (what-if changes)",
        None => "not in the log",
    }
}

fn placement_table(p: &Placement) -> Table {
    let mut t = Table::new(&[
        ("device", Align::Left),
        ("layers", Align::Right),
        ("allocation", Align::Right),
        ("free", Align::Right),
    ]);
    for g in &p.gpus {
        t.push(vec![
            g.device.to_string(),
            g.layers.to_string(),
            human(g.allocation),
            human(g.free),
        ]);
    }
    t
}

fn figures(out: &mut String, f: &ReplayFigures) {
    let _ = writeln!(
        out,
        "      per layer {} weights + {} KV × {} blocks, output {}, graph {} per GPU, floor {} per GPU{}",
        human(f.layer_weights),
        human(f.layer_kv),
        f.blocks,
        human(f.output),
        human(f.graph),
        human(f.per_gpu_floor),
        if f.layer_buffer { ", one layer held back per GPU" } else { "" }
    );
    for from in &f.from {
        let _ = writeln!(out, "      {}", sanitize(from));
    }
}

/// How the replay compares with the log, in words: layer count, split, allocations (each only when the log
/// states it; a split or allocation list is never "reproduced" with a different layer count).
fn agreements(e: &EstimateReplay, changed: bool) -> String {
    let mut parts = Vec::new();
    if e.layers_agree.is_some() {
        parts.push(format!("layers {}", agreement(e.layers_agree, changed)));
    }
    parts.push(format!(
        "logged split {}",
        agreement(e.split_agrees, changed)
    ));
    if e.allocations_agree.is_some() || !e.strategy.starts_with("llama.cpp --fit") {
        parts.push(format!(
            "allocations {}",
            agreement(e.allocations_agree, changed)
        ));
    }
    parts.join(", ")
}

/// The short form inside the main text report.
pub fn summary(out: &mut String, w: &WhatIf) {
    if let Some(e) = &w.estimate {
        let split: Vec<String> = e.placement.split().iter().map(|n| n.to_string()).collect();
        let _ = writeln!(
            out,
            "  replay with the estimate's figures: split {}, {}/{} layers; {}",
            split.join(","),
            e.placement.offloaded,
            e.placement.total,
            agreements(e, !w.changes.is_empty())
        );
    }
    if let Some(m) = &w.measured {
        let _ = writeln!(
            out,
            "  replay with the measured figures: {}",
            sanitize(&m.verdict.text)
        );
    }
}

fn detailed(out: &mut String, w: &WhatIf) {
    if !w.changes.is_empty() {
        let _ = writeln!(out, "  changes: {}", w.changes.join(", "));
    }
    match &w.estimate {
        Some(e) => {
            let _ = writeln!(
                out,
                "  with the estimate's figures ({}): {}/{} layers on GPUs, {} left to the CPU; {}",
                e.strategy,
                e.placement.offloaded,
                e.placement.total,
                human(e.placement.overflow),
                agreements(e, !w.changes.is_empty())
            );
            out.push_str(&placement_table(&e.placement).to_text(4));
            figures(out, &e.figures);
        }
        None => {
            let _ = writeln!(
                out,
                "  with the estimate's figures: the log has no single-line estimate to replay"
            );
        }
    }
    match &w.measured {
        Some(m) => {
            let _ = writeln!(
                out,
                "  with the measured figures: {}",
                sanitize(&m.verdict.text)
            );
            out.push_str(&placement_table(&m.placement).to_text(4));
            figures(out, &m.figures);
        }
        None => {
            let _ = writeln!(
                out,
                "  with the measured figures: not enough measured figures to replay"
            );
        }
    }
}

/// `whatif --max-ctx`: the largest context per KV type, and what it assumes.
fn max_context(out: &mut String, m: &MaxContext, markdown: bool) {
    let _ =
        writeln!(
        out,
        "  largest num_ctx that keeps every layer on {} ({}; {} slot{}; steps of {}, up to {}):",
        if m.gpus.is_empty() { "the GPUs".to_string() } else { m.gpus.join(", ") },
        m.replay,
        m.parallel,
        if m.parallel == 1 { "" } else { "s" },
        m.step,
        sanitize(&m.cap_from)
    );
    let mut t = Table::new(&[
        ("KV type", Align::Left),
        ("num_ctx", Align::Right),
        ("context (all slots)", Align::Right),
        ("margin left", Align::Right),
    ]);
    for r in &m.rows {
        let ctx = match (r.num_ctx, r.at_cap) {
            (Some(n), true) => format!("{n} (the cap)"),
            (Some(n), false) => n.to_string(),
            (None, _) => format!("none (not even {})", m.step),
        };
        t.push(vec![
            r.kv_type.name().to_string(),
            ctx,
            r.context.map_or("-".to_string(), |c| c.to_string()),
            r.margin.map_or("-".to_string(), human),
        ]);
    }
    if markdown {
        out.push('\n');
        out.push_str(&t.to_markdown());
        out.push('\n');
    } else {
        out.push_str(&t.to_text(4));
    }
    for a in &m.assumptions {
        let _ = writeln!(
            out,
            "{}{}",
            if markdown { "  - " } else { "      " },
            sanitize(a)
        );
    }
}

/// `vramdiff whatif` output.
pub fn render(analysis: &Analysis, format: Format) -> Vec<u8> {
    if matches!(format, Format::Json | Format::JsonLines) {
        let loads: Vec<serde_json::Value> = analysis
            .loads
            .iter()
            .map(|l| {
                serde_json::json!({
                    "source": l.source,
                    "whatif": l.whatif,
                })
            })
            .collect();
        return json::document(serde_json::json!({ "loads": loads }));
    }
    let mut out = String::new();
    for (i, load) in analysis.loads.iter().enumerate() {
        let s = &load.source;
        let _ = writeln!(
            out,
            "Load {}: {} lines {}–{}",
            i + 1,
            sanitize(&s.path),
            s.first_line,
            s.last_line
        );
        match &load.whatif {
            Some(w) => {
                detailed(&mut out, w);
                if let Some(m) = &w.max_ctx {
                    max_context(&mut out, m, format == Format::Markdown);
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "  no replay: the log has no estimate with per-layer figures for this load"
                );
            }
        }
        out.push('\n');
    }
    if analysis.loads.is_empty() {
        out.push_str("No model load found.\n");
    }
    out.into_bytes()
}

/// `vramdiff whatif --format junit`: the report's suites and cases (a failure per finding at or above
/// `threshold`), each load's replay as the case's output.
pub fn junit(analysis: &Analysis, threshold: Option<crate::model::Severity>) -> Vec<u8> {
    let replay = |load: &crate::model::Concluded| {
        load.whatif.as_ref().map(|w| {
            let mut out = String::new();
            detailed(&mut out, w);
            out
        })
    };
    super::junit::write(&super::junit::analysis_suites(analysis, threshold, &replay))
}

/// `whatif` for `$GITHUB_STEP_SUMMARY`: the text report in a fenced block under a heading.
pub fn markdown(analysis: &Analysis) -> Vec<u8> {
    let text = String::from_utf8_lossy(&render(analysis, Format::Text)).replace("```", "'''");
    format!("## vramdiff whatif\n\n```text\n{text}```\n").into_bytes()
}
