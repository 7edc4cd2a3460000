//! `vramdiff diff` as a document (written as text for a terminal, Markdown for a pull request or
//! `$GITHUB_STEP_SUMMARY`), and as JSON (a versioned document of its own, pinned by `tests/diff.rs`). Only
//! what changed beyond rounding is in the document; the JSON carries every figure of both runs.
//!
//! # JSON wire format
//! ```text
//! { "schema_version": 1, "tool": {…}, "old": "PATH", "new": "PATH",
//!   "matched", "only_old", "only_new", "changed", "regressed": counts,
//!   "loads": [ { "key": {"model", "ctx", "parallel", "gpus"}, "label", "old"/"new": {"path", "first_line"}|null,
//!                "settings_changes": [text] (paired on model and GPUs, context or parallel changed),
//!                "components"/"devices": [ {"name", "host", "estimated"/"actual": {"old", "new", "change",
//!                                           "movement"}} ],
//!                "serving": [ rows as above, host RAM peaks while serving: `prompt_cache_peak`,
//!                             `checkpoints_peak` ] (omitted when neither run has a timeline),
//!                "kv_fill": {"old"/"new": {"percent", "plus_minus"}|null, "movement"} (the KV cache's fill
//!                           peak while serving, vLLM ±0.05 %, SGLang ±0.5 %; omitted when neither run has one),
//!                "placement": {"old"/"new": {"split", "layers_on_gpu", "layers_total", "gpus_used"},
//!                              "changes"}|null,
//!                "findings_appeared"/"findings_cleared": [ {"code", "severity", "message", "device",
//!                                                           "component", "lines"} ],
//!                "changed", "regressions": [text] } ] }
//! ```
//! Figures are quantities `{bytes, low, high}`; `movement` is `same` (inside rounding), `up`, `down`,
//! `appeared`, `gone` or `absent`.

use super::document::{Block, Compared, Comparison, Document};
use super::table::{Align, Table};
use super::tables::{delta, q};
use crate::diff::{Diff, LoadDiff, RowDiff};

fn heading(diff: &Diff) -> String {
    format!(
        "{} matched, {} only in the old run, {} only in the new run: {} changed, {} with a regression",
        plural(diff.matched, "load"),
        diff.only_old,
        diff.only_new,
        diff.changed,
        diff.regressed
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The rows that changed, as a table: one line per changed figure (estimate, actual) of a component or device.
fn table(first: &str, rows: &[RowDiff]) -> Option<Table> {
    let mut t = Table::new(&[
        (first, Align::Left),
        ("figure", Align::Left),
        ("old", Align::Right),
        ("new", Align::Right),
        ("change (range)", Align::Right),
        ("", Align::Left),
    ]);
    for r in rows {
        for (figure, c) in [("estimated", &r.estimated), ("actual", &r.actual)] {
            if c.movement.is_change() {
                t.push(vec![
                    r.name.clone(),
                    figure.to_string(),
                    q(c.old),
                    q(c.new),
                    delta(c.change),
                    c.movement.as_str().to_string(),
                ]);
            }
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

fn side(s: &Option<crate::diff::Side>) -> String {
    s.as_ref()
        .map(|s| format!("{}:{}", s.path, s.first_line))
        .unwrap_or_else(|| "–".to_string())
}

fn finding_line(f: &crate::diff::FindingFact) -> String {
    // A `batch` table keeps the code only.
    match f.severity {
        Some(severity) if !f.message.is_empty() => {
            format!("{} {}: {}", severity.as_str(), f.code, f.message)
        }
        Some(severity) => format!("{} {}", severity.as_str(), f.code),
        None => f.code.clone(),
    }
}

fn load_blocks(doc: &mut Document, index: usize, l: &LoadDiff) {
    doc.push(Block::Compared(Compared {
        index: index + 1,
        label: l.label.clone(),
        old: side(&l.old),
        new: side(&l.new),
    }));
    match (&l.old, &l.new) {
        (Some(_), None) => doc.push(Block::Remark("only in the old run".to_string())),
        (None, Some(_)) => doc.push(Block::Remark("only in the new run".to_string())),
        _ if !l.changed => doc.push(Block::Remark(
            "no change: every figure the same within rounding, same placement, same findings"
                .to_string(),
        )),
        _ => {
            if !l.settings_changes.is_empty() {
                doc.push(Block::Field {
                    key: "settings changed".to_string(),
                    value: l.settings_changes.join(", "),
                });
            }
            if !l.regressions.is_empty() {
                doc.push(Block::Regressions(l.regressions.clone()));
            }
            for table in [
                table("component", &l.components),
                table("device", &l.devices),
                table("while serving", &l.serving),
            ]
            .into_iter()
            .flatten()
            {
                doc.push(Block::Gap);
                doc.push(Block::Table { table, indent: 2 });
            }
            if let Some(k) = l.kv_fill.filter(|k| k.movement.is_change()) {
                doc.push(Block::Gap);
                doc.push(Block::Field {
                    key: "KV cache fill peak".to_string(),
                    value: k.words(),
                });
            }
            if let Some(p) = l.placement.as_ref().filter(|p| !p.changes.is_empty()) {
                doc.push(Block::Gap);
                doc.push(Block::Field {
                    key: "placement".to_string(),
                    value: p.changes.join("; "),
                });
            }
            for (title, list) in [
                ("findings appeared", &l.findings_appeared),
                ("findings cleared", &l.findings_cleared),
            ] {
                if !list.is_empty() {
                    doc.push(Block::Gap);
                    doc.push(Block::List {
                        title: title.to_string(),
                        items: list.iter().map(finding_line).collect(),
                    });
                }
            }
        }
    }
    doc.push(Block::End);
}

/// The comparison as a document: the runs and counts, each compared pair with what changed, the verdict.
pub fn document(diff: &Diff) -> Document {
    let mut doc = Document::new();
    doc.push(Block::Comparison(Comparison {
        title: "vramdiff diff".to_string(),
        old: diff.old.clone(),
        new: diff.new.clone(),
        summary: heading(diff),
    }));
    for (i, l) in diff.loads.iter().enumerate() {
        load_blocks(&mut doc, i, l);
    }
    // Loads numbered in their own run: the old run's first, the new run's second.
    for block in super::pairs::blocks(
        &diff.pairs,
        super::Charts::Linked,
        super::pairs::Numbering::TwoRuns,
    ) {
        doc.push(block);
    }
    doc.push(Block::Verdict(verdict(diff)));
    doc
}

fn verdict(diff: &Diff) -> String {
    if diff.has_regression() {
        format!("result: REGRESSION in {}", plural(diff.regressed, "load"))
    } else if diff.changed > 0 {
        "result: changed, no regression".to_string()
    } else {
        "result: no change".to_string()
    }
}

/// The comparison for a terminal (a thin wrapper over [`super::render`]).
pub fn text(diff: &Diff) -> Vec<u8> {
    document(diff)
        .render(&mut super::text::Text::default())
        .into_bytes()
}

/// The comparison as GitHub-flavoured Markdown (a thin wrapper over [`super::render`]).
pub fn markdown(diff: &Diff) -> Vec<u8> {
    document(diff)
        .render(&mut super::markdown::Markdown)
        .into_bytes()
}

/// The comparison as a JSON document (schema_version 1, keys sorted).
pub fn json(diff: &Diff) -> Vec<u8> {
    match serde_json::to_value(diff) {
        Ok(body) => super::json::document(body),
        Err(e) => format!("{{\"error\": \"{e}\"}}\n").into_bytes(),
    }
}
