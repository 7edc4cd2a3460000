//! `vramdiff diff` rendered: text for a terminal, Markdown for a pull request or `$GITHUB_STEP_SUMMARY`, and
//! JSON (a versioned document of its own, pinned by `tests/diff.rs`). Only what changed beyond rounding is
//! listed in text and Markdown; the JSON carries every figure of both runs.
//!
//! # JSON wire format
//! ```text
//! { "schema_version": 1, "tool": {…}, "old": "PATH", "new": "PATH",
//!   "matched", "only_old", "only_new", "changed", "regressed": counts,
//!   "loads": [ { "key": {"model", "ctx", "parallel", "gpus"}, "label", "old"/"new": {"path", "first_line"}|null,
//!                "settings_changes": [text] (paired on model and GPUs, context or parallel changed),
//!                "components"/"devices": [ {"name", "host", "estimated"/"actual": {"old", "new", "change",
//!                                           "movement"}} ],
//!                "placement": {"old"/"new": {"split", "layers_on_gpu", "layers_total", "gpus_used"},
//!                              "changes"}|null,
//!                "findings_appeared"/"findings_cleared": [ {"code", "severity", "message", "device",
//!                                                           "component", "lines"} ],
//!                "changed", "regressions": [text] } ] }
//! ```
//! Figures are quantities `{bytes, low, high}`; `movement` is `same` (inside rounding), `up`, `down`,
//! `appeared`, `gone` or `absent`.

use std::fmt::Write;

use super::table::{Align, Table};
use super::tables::{delta, q};
use super::{md_escape, sanitize};
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

fn load_text(out: &mut String, index: usize, l: &LoadDiff) {
    let _ = writeln!(out, "load {}: {}", index + 1, sanitize(&l.label));
    let _ = writeln!(
        out,
        "  old: {}  new: {}",
        sanitize(&side(&l.old)),
        sanitize(&side(&l.new))
    );
    match (&l.old, &l.new) {
        (Some(_), None) => {
            let _ = writeln!(out, "  only in the old run");
        }
        (None, Some(_)) => {
            let _ = writeln!(out, "  only in the new run");
        }
        _ if !l.changed => {
            let _ = writeln!(
                out,
                "  no change: every figure the same within rounding, same placement, same findings"
            );
        }
        _ => {
            if !l.settings_changes.is_empty() {
                let _ = writeln!(
                    out,
                    "  settings changed: {}",
                    sanitize(&l.settings_changes.join(", "))
                );
            }
            for t in [
                table("component", &l.components),
                table("device", &l.devices),
            ]
            .into_iter()
            .flatten()
            {
                out.push('\n');
                out.push_str(&t.to_text(2));
            }
            if let Some(p) = l.placement.as_ref().filter(|p| !p.changes.is_empty()) {
                out.push('\n');
                let _ = writeln!(out, "  placement: {}", sanitize(&p.changes.join("; ")));
            }
            for (title, list) in [
                ("findings appeared", &l.findings_appeared),
                ("findings cleared", &l.findings_cleared),
            ] {
                if !list.is_empty() {
                    out.push('\n');
                    let _ = writeln!(out, "  {title}:");
                    for f in list {
                        let _ = writeln!(out, "    {}", sanitize(&finding_line(f)));
                    }
                }
            }
            if !l.regressions.is_empty() {
                out.push('\n');
                for r in &l.regressions {
                    let _ = writeln!(out, "  REGRESSION {}", sanitize(r));
                }
            }
        }
    }
    out.push('\n');
}

/// The comparison for a terminal.
pub fn text(diff: &Diff) -> Vec<u8> {
    let mut out = format!(
        "vramdiff diff\n  old: {}\n  new: {}\n{}\n\n",
        sanitize(&diff.old),
        sanitize(&diff.new),
        heading(diff)
    );
    for (i, l) in diff.loads.iter().enumerate() {
        load_text(&mut out, i, l);
    }
    let _ = writeln!(out, "{}", verdict(diff));
    out.into_bytes()
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

fn load_markdown(out: &mut String, index: usize, l: &LoadDiff) {
    let _ = writeln!(out, "### Load {}: {}\n", index + 1, md_escape(&l.label));
    let _ = writeln!(
        out,
        "Old: {} · new: {}\n",
        super::md_code(&side(&l.old)),
        super::md_code(&side(&l.new))
    );
    match (&l.old, &l.new) {
        (Some(_), None) => out.push_str("Only in the old run.\n\n"),
        (None, Some(_)) => out.push_str("Only in the new run.\n\n"),
        _ if !l.changed => out.push_str(
            "No change: every figure the same within rounding, same placement, same findings.\n\n",
        ),
        _ => {
            if !l.settings_changes.is_empty() {
                let _ = writeln!(
                    out,
                    "Settings changed: {}\n",
                    md_escape(&l.settings_changes.join(", "))
                );
            }
            for r in &l.regressions {
                let _ = writeln!(out, "- **REGRESSION** {}", md_escape(r));
            }
            if !l.regressions.is_empty() {
                out.push('\n');
            }
            for t in [
                table("component", &l.components),
                table("device", &l.devices),
            ]
            .into_iter()
            .flatten()
            {
                out.push_str(&t.to_markdown());
                out.push('\n');
            }
            if let Some(p) = l.placement.as_ref().filter(|p| !p.changes.is_empty()) {
                let _ = writeln!(out, "Placement: {}\n", md_escape(&p.changes.join("; ")));
            }
            for (title, list) in [
                ("Findings appeared", &l.findings_appeared),
                ("Findings cleared", &l.findings_cleared),
            ] {
                if !list.is_empty() {
                    let _ = writeln!(out, "{title}:\n");
                    for f in list {
                        let _ = writeln!(out, "- {}", md_escape(&finding_line(f)));
                    }
                    out.push('\n');
                }
            }
        }
    }
}

/// The comparison as GitHub-flavoured Markdown.
pub fn markdown(diff: &Diff) -> Vec<u8> {
    let mut out = format!(
        "## vramdiff diff\n\nOld: {} · new: {}\n\n{}.\n\n",
        super::md_code(&diff.old),
        super::md_code(&diff.new),
        heading(diff)
    );
    for (i, l) in diff.loads.iter().enumerate() {
        load_markdown(&mut out, i, l);
    }
    let _ = writeln!(out, "**{}**", md_escape(&verdict(diff)));
    out.into_bytes()
}

/// The comparison as a JSON document (schema_version 1, keys sorted).
pub fn json(diff: &Diff) -> Vec<u8> {
    match serde_json::to_value(diff) {
        Ok(body) => super::json::document(body),
        Err(e) => format!("{{\"error\": \"{e}\"}}\n").into_bytes(),
    }
}
