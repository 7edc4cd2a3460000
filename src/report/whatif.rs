//! The placement replay in words: per load the replayed placement with the estimate's figures (and whether it
//! reproduces the log), and the verdict with the measured figures. The main report's summary is built in
//! `outline.rs` (with `agreements`); `vramdiff whatif`'s document, JSON and JUnit are here.

use super::document::{self, Block, Document, Limits, Subject};
use super::json;
use super::table::{Align, Table};
use crate::model::{
    human, Analysis, EstimateReplay, MaxContext, Placement, PlacementTrace, ReplayFigures,
    TraceStage, WhatIf,
};

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

fn figures(f: &ReplayFigures) -> Block {
    let mut lines = vec![format!(
        "      per layer {} weights + {} KV × {} blocks, output {}, graph {} per GPU, floor {} per GPU{}",
        human(f.layer_weights),
        human(f.layer_kv),
        f.blocks,
        human(f.output),
        human(f.graph),
        human(f.per_gpu_floor),
        if f.layer_buffer { ", one layer held back per GPU" } else { "" }
    )];
    lines.extend(f.from.iter().map(|from| format!("      {from}")));
    Block::Lines(lines)
}

/// How the replay compares with the log, in words: layer count, split, allocations (each only when the log
/// states it; a split or allocation list is never "reproduced" with a different layer count).
pub(super) fn agreements(e: &EstimateReplay, changed: bool) -> String {
    let mut parts = Vec::new();
    if e.layers_agree.is_some() {
        parts.push(format!("layers {}", agreement(e.layers_agree, changed)));
    }
    parts.push(format!(
        "logged split {}",
        agreement(e.split_agrees, changed)
    ));
    if e.allocations_agree.is_some() || e.logs_allocations {
        parts.push(format!(
            "allocations {}",
            agreement(e.allocations_agree, changed)
        ));
    }
    parts.join(", ")
}

/// When the logged split is reproduced by Ollama's estimator rules: the family and the decision it hung on.
pub(super) fn explained(w: &WhatIf) -> Option<String> {
    let family = w.family.as_ref()?;
    let hinge = w.hinge.as_ref()?;
    Some(format!("by the rules of {family}: {hinge}"))
}

fn split_words(split: &[i64]) -> String {
    split
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `whatif --explain`: the placement decision by decision, grouped by stage.
fn trace(t: &PlacementTrace) -> Vec<Block> {
    let mut blocks = vec![Block::Lines(vec![
        format!("  placement trace: {} ({})", t.family, t.builds),
        format!("    chosen: {}", t.chosen),
        "    families tried (most likely first):".to_string(),
    ])];
    let mut tried = Table::new(&[
        ("family", Align::Left),
        ("split", Align::Left),
        ("layers", Align::Right),
        ("allocations", Align::Left),
        ("split", Align::Left),
        ("allocations", Align::Left),
        ("decided at", Align::Left),
    ]);
    let yes = |b: bool| if b { "reproduced" } else { "no" };
    for f in &t.tried {
        tried.push(vec![
            f.family.clone(),
            split_words(&f.split),
            f.offloaded.to_string(),
            f.allocations
                .iter()
                .map(|a| human(*a))
                .collect::<Vec<_>>()
                .join(" "),
            yes(f.split_reproduced).to_string(),
            yes(f.allocations_reproduced).to_string(),
            f.at.clone(),
        ]);
    }
    blocks.push(Block::Table {
        table: tried,
        indent: 6,
    });
    let mut lines = vec!["    rules:".to_string()];
    lines.extend(t.rules.iter().map(|r| format!("      {r}")));
    let heading = |stage: TraceStage| match stage {
        TraceStage::Scheduler => "scheduler (GPU sets tried before the one the log shows)",
        TraceStage::Entry | TraceStage::PreCharge => "entry filter and pre-charges",
        TraceStage::Blocks | TraceStage::Refused | TraceStage::Unplaced => "blocks",
        TraceStage::LastLayer => "last layer",
        TraceStage::Graph => "final graph charges",
        TraceStage::Total => "result",
    };
    let mut current = "";
    for step in &t.steps {
        let h = heading(step.stage);
        if h != current {
            lines.push(format!("    {h}:"));
            current = h;
        }
        lines.push(format!("      {}", step.text));
        if let Some(m) = step.margin {
            let word = match step.stage {
                TraceStage::Blocks => "tightest block",
                TraceStage::Scheduler => "closest decision",
                _ => "margin",
            };
            lines.push(format!("        {word}: {}", m.describe()));
        }
    }
    if !t.runner.is_empty() {
        lines
            .push("    how the runner reads the split (cumulative shares from blk.0):".to_string());
        lines.extend(t.runner.iter().map(|r| format!("      {r}")));
    }
    blocks.push(Block::Lines(lines));
    blocks
}

/// The replay in full: the changes, then each replay with its placement table and the figures it used.
fn detail(w: &WhatIf) -> Vec<Block> {
    let mut blocks = Vec::new();
    let line = |text: String| Block::Lines(vec![text]);
    if !w.changes.is_empty() {
        blocks.push(line(format!("  changes: {}", w.changes.join(", "))));
    }
    if !w.effects.is_empty() {
        let mut lines = vec!["  effect:".to_string()];
        lines.extend(w.effects.iter().map(|e| format!("    {}", e.text)));
        blocks.push(Block::Lines(lines));
    }
    match &w.estimate {
        Some(e) => {
            blocks.push(line(format!(
                "  with the estimate's figures ({}): {}/{} layers on GPUs, {} left to the CPU; {}",
                e.strategy,
                e.placement.offloaded,
                e.placement.total,
                human(e.placement.overflow),
                agreements(e, !w.changes.is_empty())
            )));
            if let Some(x) = explained(w) {
                blocks.push(line(format!("    {x}")));
            }
            blocks.push(Block::Table {
                table: placement_table(&e.placement),
                indent: 4,
            });
            blocks.push(figures(&e.figures));
            if let Some(t) = &w.trace {
                blocks.extend(trace(t));
            }
        }
        None => blocks.push(line(
            "  with the estimate's figures: the log has no single-line estimate to replay"
                .to_string(),
        )),
    }
    match &w.measured {
        Some(m) => {
            blocks.push(line(format!(
                "  with the measured figures: {}",
                m.verdict.text
            )));
            blocks.push(Block::Table {
                table: placement_table(&m.placement),
                indent: 4,
            });
            blocks.push(figures(&m.figures));
        }
        None => blocks.push(line(
            "  with the measured figures: not enough measured figures to replay".to_string(),
        )),
    }
    blocks
}

/// `whatif --max-ctx`: the largest context per KV type, and what it assumes.
fn limits(m: &MaxContext) -> Limits {
    let headline = format!(
        "  largest num_ctx that {} ({}; {} slot{}; steps of {}, up to {}):",
        if m.on_host {
            "llama.cpp's --fit accepts in host memory".to_string()
        } else if m.gpus.is_empty() {
            "keeps every layer on the GPUs".to_string()
        } else {
            format!("keeps every layer on {}", m.gpus.join(", "))
        },
        m.replay,
        m.parallel,
        if m.parallel == 1 { "" } else { "s" },
        m.step,
        m.cap_from
    );
    let mut table = Table::new(&[
        ("KV type", Align::Left),
        ("num_ctx", Align::Right),
        ("context (all slots)", Align::Right),
        ("margin left", Align::Right),
    ]);
    for r in &m.rows {
        let mut ctx = match (r.num_ctx, r.at_cap) {
            (Some(n), true) => format!("{n} (the cap)"),
            (Some(n), false) => n.to_string(),
            (None, _) => format!("none (not even {})", m.step),
        };
        if let Some([low, high]) = r.range {
            ctx.push_str(&format!(" ({low}–{high} within the rounding)"));
        }
        table.push(vec![
            r.kv_type.name().to_string(),
            ctx,
            r.context.map_or("-".to_string(), |c| c.to_string()),
            r.margin.map_or("-".to_string(), human),
        ]);
    }
    Limits {
        headline,
        table,
        assumptions: m.assumptions.clone(),
    }
}

/// `vramdiff whatif` as a document: per load its replays in the terminal's layout (in every format), and
/// `--max-ctx`'s table.
pub fn document(analysis: &Analysis) -> Document {
    let mut doc = Document::new();
    for (i, load) in analysis.loads.iter().enumerate() {
        let s = &load.reconciled.load.source;
        let mut part = vec![Block::Subject(Subject {
            label: format!("Load {}", i + 1),
            name: None,
            source: (s.path.clone(), s.first_line, s.last_line),
            tags: Vec::new(),
        })];
        match &load.whatif {
            Some(w) => {
                part.extend(detail(w));
                doc.push(Block::Preformatted(part));
                if let Some(m) = &w.max_ctx {
                    doc.push(Block::Limits(limits(m)));
                }
            }
            None => {
                part.push(Block::Lines(vec![
                    "  no replay: the log has no estimate with per-layer figures for this load"
                        .to_string(),
                ]));
                doc.push(Block::Preformatted(part));
            }
        }
        doc.push(Block::Preformatted(vec![Block::End]));
    }
    if analysis.loads.is_empty() {
        doc.push(Block::Preformatted(vec![Block::Lines(vec![
            "No model load found.".to_string(),
        ])]));
    }
    doc
}

/// `vramdiff whatif --format json`: per load its source and its replay.
pub fn json(analysis: &Analysis) -> Vec<u8> {
    let loads: Vec<serde_json::Value> = analysis
        .loads
        .iter()
        .map(|l| {
            serde_json::json!({
                "source": l.reconciled.load.source,
                "whatif": l.whatif,
            })
        })
        .collect();
    json::document(serde_json::json!({ "loads": loads }))
}

/// `vramdiff whatif --format junit`: the report's suites and cases (a failure per finding at or above
/// `threshold`), each load's replay as the case's output.
pub fn junit(analysis: &Analysis, threshold: Option<crate::model::Severity>) -> Vec<u8> {
    let replay =
        |load: &crate::model::Concluded| load.whatif.as_ref().map(|w| document::plain(&detail(w)));
    super::junit::write(&super::junit::analysis_suites(analysis, threshold, &replay))
}

/// `whatif` for `$GITHUB_STEP_SUMMARY`: the terminal's report in a fenced block under a heading.
pub fn markdown(analysis: &Analysis) -> Vec<u8> {
    let doc = Document {
        blocks: vec![
            Block::Heading {
                level: 2,
                text: "vramdiff whatif".to_string(),
            },
            Block::Fenced(document(analysis).blocks),
        ],
    };
    doc.render(&mut super::markdown::Markdown).into_bytes()
}
