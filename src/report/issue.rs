//! `vramdiff doctor --issue`: one load as a Markdown block to paste into a bug report — versions, GPUs, the
//! findings, the per-GPU table, the first ten log lines the findings rest on, and the rest (the whole report,
//! the other lines) folded in `<details>` — then redacted (`redact.rs`), with what was removed said at the end.

use std::fmt::Write;

use super::document::Document;
use super::markdown::Markdown;
use super::redact::{redact, Known};
use super::{md_escape, outline, tables};
use crate::model::Concluded;

/// How many evidence lines are shown before the fold.
pub const SHOWN_EVIDENCE: usize = 10;

/// What the issue block says besides the load.
#[derive(Debug, Clone, Default)]
pub struct IssueContext {
    /// Where the log was found (`journalctl -u ollama`, a path).
    pub origin: String,
    /// What was observed now (`nvidia-smi: 2 GPUs`, `/api/ps: 1 model`), in words.
    pub observed: Vec<String>,
    /// The lines the findings name, as the log wrote them: `(line, text)`.
    pub evidence: Vec<(u64, String)>,
    /// The memory-like lines of the load no rule understood: `(line, text)` (issue 52: a report says what
    /// it did not read).
    pub unread: Vec<(u64, String)>,
    /// The lines of the load a terminal's wrap cut inside a figure, not read: `(line, text up to the cut,
    /// the terminal's width)` (issue 52: a paste that destroyed a number says so).
    pub cut_by_wrap: Vec<(u64, String, u64)>,
}

/// The issue block of `load` (number `index`), redacted.
pub fn issue(index: usize, load: &Concluded, context: &IssueContext, known: &Known) -> String {
    let mut out = String::new();
    let l = &load.reconciled.load;
    let _ = writeln!(
        out,
        "### vramdiff doctor: {}\n",
        md_escape(&tables::model_name(load))
    );
    let _ = writeln!(
        out,
        "- **Versions:** vramdiff {}, Ollama {}, runtime {}",
        env!("CARGO_PKG_VERSION"),
        md_escape(l.ollama_version.as_deref().unwrap_or("not in the log")),
        md_escape(load.reconciled.load.runtime.name())
    );
    for (key, value) in tables::facts(load) {
        if key == "GPUs" || key == "settings" {
            let _ = writeln!(out, "- **{}:** {}", md_escape(&key), md_escape(&value));
        }
    }
    let _ = writeln!(
        out,
        "- **Log:** {} (load {index}, lines {}–{})",
        md_escape(&context.origin),
        l.source.first_line,
        l.source.last_line
    );
    for o in &context.observed {
        let _ = writeln!(out, "- **Observed now:** {}", md_escape(o));
    }
    if !context.unread.is_empty() {
        let _ = writeln!(
            out,
            "- **Not read:** {} memory-like line{} no rule understood (listed below)",
            context.unread.len(),
            if context.unread.len() == 1 { "" } else { "s" }
        );
    }
    if !context.cut_by_wrap.is_empty() {
        let _ = writeln!(
            out,
            "- **Cut by a wrap:** {} line{} whose figure a terminal's wrap cut, not read (listed below)",
            context.cut_by_wrap.len(),
            if context.cut_by_wrap.len() == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
    if load.findings.is_empty() {
        out.push_str("No finding.\n\n");
    } else {
        out.push_str("#### Findings\n\n");
        for f in &load.findings {
            let _ = writeln!(
                out,
                "- **{}** `{}`: {}",
                f.severity.as_str(),
                f.code,
                md_escape(&f.message)
            );
        }
        out.push('\n');
    }
    for section in tables::sections(load) {
        if matches!(section.title, "Devices" | "Observed (nvidia-smi)") {
            let _ = writeln!(out, "#### {}\n", section.title);
            out.push_str(&section.table.to_markdown());
            out.push('\n');
        }
    }
    let (shown, rest) = context
        .evidence
        .split_at(context.evidence.len().min(SHOWN_EVIDENCE));
    if !shown.is_empty() {
        out.push_str("#### Evidence\n\n```text\n");
        for (line, text) in shown {
            let _ = writeln!(out, "{line}: {}", text.replace("```", "'''"));
        }
        out.push_str("```\n\n");
    }
    if !context.unread.is_empty() {
        out.push_str("<details><summary>Memory-like lines not understood</summary>\n\n```text\n");
        for (line, text) in &context.unread {
            let _ = writeln!(out, "{line}: {}", text.replace("```", "'''"));
        }
        out.push_str("```\n\n</details>\n\n");
    }
    if !context.cut_by_wrap.is_empty() {
        out.push_str("<details><summary>Lines cut inside a figure by a terminal's wrap</summary>\n\n```text\n");
        for (line, text, width) in &context.cut_by_wrap {
            let _ = writeln!(
                out,
                "{line}: {} (cut at column {width})",
                text.replace("```", "'''")
            );
        }
        out.push_str("```\n\n</details>\n\n");
    }
    out.push_str("<details><summary>The whole report");
    if !rest.is_empty() {
        let _ = write!(out, " and {} more evidence lines", rest.len());
    }
    out.push_str("</summary>\n\n");
    let document: Document = outline::load(index, load);
    out.push_str(&document.render(&mut Markdown));
    if !rest.is_empty() {
        out.push_str("\n```text\n");
        for (line, text) in rest {
            let _ = writeln!(out, "{line}: {}", text.replace("```", "'''"));
        }
        out.push_str("```\n");
    }
    out.push_str("\n</details>\n");
    let (mut redacted, counts) = redact(&out, known);
    let _ = writeln!(
        redacted,
        "\n<sub>{} (by `vramdiff doctor --issue`; check before posting).</sub>",
        capitalised(&counts.summary())
    );
    redacted
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
