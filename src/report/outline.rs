//! The outline of the main report, built once for every human-readable format: per load its heading, facts,
//! tables, replay, findings, suggestions, charts and notes; then the inputs. `--follow` prints one load's part
//! on its own.

use super::document::{
    Block, CaptureItem, Document, EstimateSummary, FindingItem, InputItem, ReplaySummary, Subject,
};
use super::{chart, tables, ChartLink, Charts, ReportOptions};
use crate::model::{Analysis, Concluded, InputSummary, WhatIf};

/// At most this many captures of one input are listed in full; a long `nvidia-smi -l` series is summarised.
const LISTED_CAPTURES: usize = 12;

/// The whole report of an analysis; with [`Charts::Embedded`] each load's charts are drawn into it.
pub fn report(analysis: &Analysis, options: &ReportOptions, charts: Charts) -> Document {
    let mut doc = head();
    for (i, load) in analysis.loads.iter().enumerate() {
        let links = options.charts.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let drawn = match charts {
            Charts::Linked => Vec::new(),
            Charts::Embedded => match chart::load_charts(load, i + 1) {
                Ok(drawn) => vec![Block::Figures(drawn)],
                Err(e) => vec![Block::Notes(vec![format!(
                    "the charts could not be drawn: {e}"
                )])],
            },
        };
        let evidence = options.evidence.get(&load.reconciled.load.source.path);
        load_blocks(&mut doc, i + 1, load, links, drawn, evidence);
    }
    let loads_of = |path: &str| {
        analysis
            .loads
            .iter()
            .filter(|l| l.reconciled.load.source.path == path)
            .count()
    };
    tail(
        &mut doc,
        analysis.loads.len(),
        &analysis.inputs,
        loads_of,
        &crate::pairs::find(&analysis.loads),
        charts,
        options.show_unrecognized,
    );
    doc
}

/// The report's first blocks, before any load.
pub fn head() -> Document {
    let mut doc = Document::new();
    doc.push(Block::Title("vramdiff report".to_string()));
    doc
}

/// The report's last blocks, after its `loads` loads: the pairs of loads (`crate::pairs`), the inputs, each with the number of loads read from it
/// (`loads_of`, by path), so a report written load by load (`report::streamed`) keeps only those counts.
pub fn tail(
    doc: &mut Document,
    loads: usize,
    inputs: &[InputSummary],
    loads_of: impl Fn(&str) -> usize,
    pairs: &[crate::model::LoadPair],
    charts: Charts,
    show_unrecognized: bool,
) {
    if loads == 0 {
        doc.push(Block::Paragraph("No model load found.".to_string()));
    }
    for block in super::pairs::blocks(pairs, charts, super::pairs::Numbering::OneReport) {
        doc.push(block);
    }
    doc.push(Block::Inputs(input_items(
        inputs,
        loads_of,
        show_unrecognized,
    )));
}

/// One load's part on its own, numbered `index` (`--follow`).
pub fn load(index: usize, load: &Concluded) -> Document {
    let mut doc = Document::new();
    load_blocks(&mut doc, index, load, &[], Vec::new(), None);
    doc
}

fn load_blocks(
    doc: &mut Document,
    index: usize,
    load: &Concluded,
    charts: &[ChartLink],
    drawn: Vec<Block>,
    evidence: Option<&std::collections::BTreeMap<u64, String>>,
) {
    let s = &load.reconciled.load.source;
    // A serving engine's load names its runtime; Ollama's and llama.cpp's name the engine that ran it.
    let runtime = load.reconciled.load.runtime;
    let mut tags = vec![if runtime.is_serving_engine() {
        runtime.name().to_string()
    } else {
        format!("engine {}", load.reconciled.load.engine.as_str())
    }];
    tags.extend(
        load.reconciled
            .load
            .ollama_version
            .as_ref()
            .map(|v| format!("Ollama {v}")),
    );
    tags.extend(
        load.reconciled
            .load
            .llama_cpp_build
            .as_ref()
            .map(|b| format!("llama.cpp {b}")),
    );
    doc.push(Block::Subject(Subject {
        label: format!("Load {index}"),
        name: Some(tables::model_name(load)),
        source: (s.path.clone(), s.first_line, s.last_line),
        tags,
    }));
    doc.push(Block::Facts(tables::facts(load)));
    if let Some(steps) = super::chain::chain(load) {
        doc.push(Block::Gap);
        doc.push(Block::Steps(steps));
    }
    for section in tables::sections(load) {
        doc.push(Block::Gap);
        doc.push(Block::Section(section));
    }
    if let Some(w) = &load.whatif {
        doc.push(Block::Gap);
        doc.push(Block::Replay(replay(w)));
    }
    if !load.findings.is_empty() {
        doc.push(Block::Gap);
        doc.push(Block::Findings(
            load.findings
                .iter()
                .map(|f| FindingItem {
                    severity: f.severity.as_str(),
                    code: f.code.to_string(),
                    message: f.message.clone(),
                    refs: tables::finding_refs(f),
                    hint: f.hint.clone(),
                    evidence: f
                        .lines
                        .iter()
                        .filter_map(|n| Some((*n, evidence?.get(n)?.clone())))
                        .collect(),
                })
                .collect(),
        ));
    }
    if !load.suggestions.is_empty() {
        doc.push(Block::Gap);
        doc.push(Block::Suggestions(
            load.suggestions
                .iter()
                .map(|s| (s.setting.clone(), s.effect.clone()))
                .collect(),
        ));
    }
    doc.blocks.extend(
        drawn
            .into_iter()
            .filter(|b| !matches!(b, Block::Figures(f) if f.is_empty())),
    );
    if !charts.is_empty() {
        doc.push(Block::ChartRef(charts.to_vec()));
    }
    if !load.reconciled.load.notes.is_empty() {
        doc.push(Block::Notes(load.reconciled.load.notes.clone()));
    }
    doc.push(Block::End);
}

fn replay(w: &WhatIf) -> ReplaySummary {
    ReplaySummary {
        estimate: w.estimate.as_ref().map(|e| EstimateSummary {
            split: e
                .placement
                .split()
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(","),
            offloaded: e.placement.offloaded,
            total: e.placement.total,
            agreements: super::whatif::agreements(e, !w.changes.is_empty()),
            split_agrees: e.split_agrees,
            allocations_agree: e.allocations_agree,
            explained: super::whatif::explained(w),
        }),
        measured: w.measured.as_ref().map(|m| m.verdict.text.clone()),
    }
}

fn input_items(
    inputs: &[InputSummary],
    loads_of: impl Fn(&str) -> usize,
    show_unrecognized: bool,
) -> Vec<InputItem> {
    inputs
        .iter()
        .map(|input| InputItem {
            path: input.path.clone(),
            lines: input.lines,
            recognized: input.recognized_lines,
            unrecognized_memory: input.unrecognized_memory_lines,
            loads: loads_of(&input.path),
            captures: input
                .captures
                .iter()
                .take(LISTED_CAPTURES)
                .map(|snapshot| CaptureItem {
                    line: snapshot.line,
                    format: snapshot.format.as_str(),
                    timestamp: snapshot.timestamp.clone(),
                    driver: snapshot.driver_version.clone(),
                    table: tables::capture(snapshot),
                })
                .collect(),
            all_captures: input.captures.len(),
            error: input.error.clone(),
            warnings: input
                .warnings
                .iter()
                .map(|w| (w.line, w.message.clone()))
                .collect(),
            unrecognized: show_unrecognized.then(|| {
                input
                    .unrecognized
                    .iter()
                    .map(|u| (u.line, u.text.clone()))
                    .collect()
            }),
            cut_by_wrap: input
                .cut_by_wrap
                .iter()
                .map(|c| (c.line, c.text.clone(), c.notice.clone()))
                .collect(),
        })
        .collect()
}
