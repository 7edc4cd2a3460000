//! The Markdown report (GitHub-flavoured): what users paste into issues and `$GITHUB_STEP_SUMMARY`. Same
//! tables as the text report (`tables.rs`), every value taken from a log escaped (`md_escape`, `md_code`),
//! charts linked when `--chart` wrote them.

use std::fmt::Write;

use super::tables;
use super::{md_code, md_escape, ReportOptions, Reporter};
use crate::model::{Analysis, Concluded, WhatIf};

pub struct MarkdownReporter {
    pub options: ReportOptions,
}

fn replay(out: &mut String, w: &WhatIf) {
    let _ = writeln!(out, "#### Would it have fit?\n");
    if let Some(e) = &w.estimate {
        let split: Vec<String> = e.placement.split().iter().map(|n| n.to_string()).collect();
        let agree = |v: Option<bool>| match v {
            Some(true) => "reproduced",
            Some(false) => "**not** reproduced",
            None => "not in the log",
        };
        let _ = writeln!(
            out,
            "- Replayed with the estimate's own figures: split {}, {}/{} layers on GPUs; the logged split is {}, the logged allocations are {}.",
            split.join(","),
            e.placement.offloaded,
            e.placement.total,
            agree(e.split_agrees),
            agree(e.allocations_agree)
        );
    }
    if let Some(m) = &w.measured {
        let _ = writeln!(
            out,
            "- Replayed with the measured figures: **{}**.",
            md_escape(&m.verdict.text)
        );
    }
    out.push('\n');
}

pub(super) fn load_section(
    out: &mut String,
    index: usize,
    load: &Concluded,
    charts: &[super::ChartLink],
) {
    let s = &load.source;
    let _ = writeln!(
        out,
        "## Load {index}: {} — engine {}{}\n",
        md_escape(&tables::model_name(load)),
        load.engine.as_str(),
        load.ollama_version
            .as_ref()
            .map(|v| format!(", Ollama {}", md_escape(v)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "{} lines {}–{}\n",
        md_code(&s.path),
        s.first_line,
        s.last_line
    );
    let mut facts = super::table::Table::new(&[
        ("", super::table::Align::Left),
        ("", super::table::Align::Left),
    ]);
    for (key, value) in tables::facts(load) {
        facts.push(vec![key, value]);
    }
    out.push_str(&facts.to_markdown());
    out.push('\n');
    for section in tables::sections(load) {
        let _ = writeln!(out, "### {}\n", section.title);
        out.push_str(&section.table.to_markdown());
        out.push('\n');
        if !section.explanations.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>How each figure was obtained</summary>\n"
            );
            for e in &section.explanations {
                let parts: Vec<String> = e
                    .parts
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", md_escape(v)))
                    .collect();
                let _ = writeln!(out, "- **{}**: {}", md_escape(&e.subject), parts.join("; "));
            }
            let _ = writeln!(out, "\n</details>\n");
        }
    }
    if let Some(w) = &load.whatif {
        replay(out, w);
    }
    if !load.findings.is_empty() {
        let _ = writeln!(out, "### Findings\n");
        for f in &load.findings {
            let refs = tables::finding_refs(f);
            let _ = writeln!(
                out,
                "- **{}** `{}`: {}{}  \n  *Hint:* {}",
                f.severity.as_str(),
                f.code,
                md_escape(&f.message),
                if refs.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", md_escape(&refs))
                },
                md_escape(&f.hint)
            );
        }
        out.push('\n');
    }
    if !load.suggestions.is_empty() {
        let _ = writeln!(out, "### Try\n");
        for s in &load.suggestions {
            let _ = writeln!(out, "- {}: {}", md_code(&s.setting), md_escape(&s.effect));
        }
        out.push('\n');
    }
    if !charts.is_empty() {
        let _ = writeln!(out, "### Charts\n");
        for c in charts {
            // The path is built by vramdiff from [A-Za-z0-9._-] and the --chart folder; no log text.
            let _ = writeln!(
                out,
                "![{}]({})\n",
                md_escape(&c.title),
                c.path.replace(' ', "%20")
            );
        }
    }
    for note in &load.notes {
        let _ = writeln!(out, "> Note: {}\n", md_escape(note));
    }
}

impl Reporter for MarkdownReporter {
    fn render(&self, analysis: &Analysis) -> Vec<u8> {
        let mut out = String::from("# vramdiff report\n\n");
        for (i, load) in analysis.loads.iter().enumerate() {
            let charts = self.options.charts.get(i).map(Vec::as_slice).unwrap_or(&[]);
            load_section(&mut out, i + 1, load, charts);
        }
        if analysis.loads.is_empty() {
            out.push_str("No model load found.\n\n");
        }
        let _ = writeln!(out, "## Inputs\n");
        let mut inputs = super::table::Table::new(&[
            ("input", super::table::Align::Left),
            ("lines", super::table::Align::Right),
            ("recognised", super::table::Align::Right),
            ("memory-like, not understood", super::table::Align::Right),
            ("loads", super::table::Align::Right),
            ("captures", super::table::Align::Right),
        ]);
        for input in &analysis.inputs {
            let loads = analysis
                .loads
                .iter()
                .filter(|l| l.source.path == input.path)
                .count();
            inputs.push(vec![
                input.path.clone(),
                input.lines.to_string(),
                input.recognized_lines.to_string(),
                input.unrecognized_memory_lines.to_string(),
                loads.to_string(),
                input.captures.len().to_string(),
            ]);
        }
        out.push_str(&inputs.to_markdown());
        for input in &analysis.inputs {
            if let Some(e) = &input.error {
                let _ = writeln!(
                    out,
                    "\n- **error** {}: {}",
                    md_code(&input.path),
                    md_escape(e)
                );
            }
            for w in &input.warnings {
                let at = w.line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "\n- warning {}: {}",
                    md_code(&format!("{}{at}", input.path)),
                    md_escape(&w.message)
                );
            }
            for snapshot in input.captures.iter().take(12) {
                let _ = writeln!(
                    out,
                    "\n{} capture at line {} ({}):\n",
                    md_code(&input.path),
                    snapshot.line,
                    snapshot.format.as_str()
                );
                out.push_str(&tables::capture(snapshot).to_markdown());
            }
        }
        out.into_bytes()
    }
}
