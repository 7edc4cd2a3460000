//! The Markdown layout (GitHub-flavoured) of a [`Document`](super::document::Document): what users paste into
//! issues and `$GITHUB_STEP_SUMMARY`. Headings per part, tables, explanations folded in `<details>`, charts
//! linked; every value taken from a log escaped (`md_escape`, `md_code`).

use std::fmt::Write;

use super::document::{
    Compared, Comparison, FindingItem, InputItem, Limits, Markup, ReplaySummary, Steps, Subject,
};
use super::table::{Align, Table};
use super::tables::Section;
use super::{md_code, md_escape, ChartLink};

/// The Markdown layout.
#[derive(Debug, Default)]
pub struct Markdown;

/// `text` with its first letter upper-case: a terminal's label as a sentence's start.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Markup for Markdown {
    fn title(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "# {}\n", md_escape(text));
    }

    fn heading(&mut self, out: &mut String, level: u8, text: &str) {
        let _ = writeln!(
            out,
            "{} {}\n",
            "#".repeat(usize::from(level.clamp(1, 6))),
            md_escape(text)
        );
    }

    fn subject(&mut self, out: &mut String, s: &Subject) {
        let _ = write!(out, "## {}", s.label);
        if let Some(name) = &s.name {
            let _ = write!(out, ": {}", md_escape(name));
        }
        let tags: Vec<String> = s.tags.iter().map(|t| md_escape(t)).collect();
        if !tags.is_empty() {
            let _ = write!(out, " — {}", tags.join(", "));
        }
        let (path, first, last) = &s.source;
        let _ = writeln!(out, "\n\n{} lines {first}–{last}\n", md_code(path));
    }

    fn facts(&mut self, out: &mut String, facts: &[(String, String)]) {
        let mut table = Table::new(&[("", Align::Left), ("", Align::Left)]);
        for (key, value) in facts {
            table.push(vec![key.clone(), value.clone()]);
        }
        out.push_str(&table.to_markdown());
        out.push('\n');
    }

    fn section(&mut self, out: &mut String, section: &Section) {
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

    fn table(&mut self, out: &mut String, table: &Table, _indent: usize) {
        out.push_str(&table.to_markdown());
        out.push('\n');
    }

    fn replay(&mut self, out: &mut String, r: &ReplaySummary) {
        let _ = writeln!(out, "#### Would it have fit?\n");
        if let Some(e) = &r.estimate {
            let agree = |v: Option<bool>| match v {
                Some(true) => "reproduced",
                Some(false) => "**not** reproduced",
                None => "not in the log",
            };
            let _ = writeln!(
                out,
                "- Replayed with the estimate's own figures: split {}, {}/{} layers on GPUs; the logged split is {}, the logged allocations are {}.",
                e.split,
                e.offloaded,
                e.total,
                agree(e.split_agrees),
                agree(e.allocations_agree)
            );
            if let Some(x) = &e.explained {
                let _ = writeln!(out, "- {}.", md_escape(x));
            }
        }
        if let Some(m) = &r.measured {
            let _ = writeln!(
                out,
                "- Replayed with the measured figures: **{}**.",
                md_escape(m)
            );
        }
        out.push('\n');
    }

    fn findings(&mut self, out: &mut String, findings: &[FindingItem]) {
        let _ = writeln!(out, "### Findings\n");
        for f in findings {
            let _ = writeln!(
                out,
                "- **{}** `{}`: {}{}  \n  *Hint:* {}",
                f.severity,
                f.code,
                md_escape(&f.message),
                if f.refs.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", md_escape(&f.refs))
                },
                md_escape(&f.hint)
            );
        }
        out.push('\n');
    }

    fn suggestions(&mut self, out: &mut String, suggestions: &[(String, String)]) {
        let _ = writeln!(out, "### Try\n");
        for (setting, effect) in suggestions {
            let _ = writeln!(out, "- {}: {}", md_code(setting), md_escape(effect));
        }
        out.push('\n');
    }

    /// Charts drawn in memory are for formats that carry pictures; `--chart` writes them as files.
    fn figures(&mut self, _out: &mut String, _charts: &[super::chart::Chart]) {}

    fn chart_ref(&mut self, out: &mut String, charts: &[ChartLink]) {
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

    fn notes(&mut self, out: &mut String, notes: &[String]) {
        for note in notes {
            let _ = writeln!(out, "> Note: {}\n", md_escape(note));
        }
    }

    fn paragraph(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "{}\n", md_escape(text));
    }

    /// Lines keep their breaks (a trailing backslash is a hard break in GitHub-flavoured Markdown).
    fn lines(&mut self, out: &mut String, lines: &[String]) {
        let escaped: Vec<String> = lines.iter().map(|l| md_escape(l.trim())).collect();
        let _ = writeln!(out, "{}\n", escaped.join("\\\n"));
    }

    fn field(&mut self, out: &mut String, key: &str, value: &str) {
        let _ = writeln!(out, "{}: {}\n", capitalised(key), md_escape(value));
    }

    fn remark(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "{}.\n", capitalised(&md_escape(text)));
    }

    fn list(&mut self, out: &mut String, title: &str, items: &[String]) {
        let _ = writeln!(out, "{}:\n", capitalised(title));
        for item in items {
            let _ = writeln!(out, "- {}", md_escape(item));
        }
        out.push('\n');
    }

    fn steps(&mut self, out: &mut String, steps: &Steps) {
        let _ = writeln!(out, "### {}\n", md_escape(&steps.title));
        for (i, step) in steps.items.iter().enumerate() {
            let lines = super::document::step_lines(&step.lines);
            let _ = write!(
                out,
                "{}. **{}**: {}",
                i + 1,
                md_escape(&step.label),
                md_escape(&step.text)
            );
            if !lines.is_empty() {
                let _ = write!(out, " ({lines})");
            }
            out.push('\n');
        }
        out.push('\n');
    }

    /// The headline as the terminal writes it, the table in Markdown, the assumptions as a list.
    fn limits(&mut self, out: &mut String, l: &Limits) {
        let _ = writeln!(out, "{}", super::sanitize(&l.headline));
        out.push('\n');
        out.push_str(&l.table.to_markdown());
        out.push('\n');
        for a in &l.assumptions {
            let _ = writeln!(out, "  - {}", super::sanitize(a));
        }
    }

    fn comparison(&mut self, out: &mut String, c: &Comparison) {
        let _ = write!(
            out,
            "## {}\n\nOld: {} · new: {}\n\n{}.\n\n",
            c.title,
            md_code(&c.old),
            md_code(&c.new),
            c.summary
        );
    }

    fn compared(&mut self, out: &mut String, c: &Compared) {
        let _ = writeln!(out, "### Load {}: {}\n", c.index, md_escape(&c.label));
        let _ = writeln!(out, "Old: {} · new: {}\n", md_code(&c.old), md_code(&c.new));
    }

    fn regressions(&mut self, out: &mut String, regressions: &[String]) {
        for r in regressions {
            let _ = writeln!(out, "- **REGRESSION** {}", md_escape(r));
        }
        if !regressions.is_empty() {
            out.push('\n');
        }
    }

    fn verdict(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "**{}**", md_escape(text));
    }

    fn inputs(&mut self, out: &mut String, inputs: &[InputItem]) {
        let _ = writeln!(out, "## Inputs\n");
        let table = super::document::inputs_table(inputs);
        out.push_str(&table.to_markdown());
        for input in inputs {
            if let Some(e) = &input.error {
                let _ = writeln!(
                    out,
                    "\n- **error** {}: {}",
                    md_code(&input.path),
                    md_escape(e)
                );
            }
            for (line, message) in &input.warnings {
                let at = line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "\n- warning {}: {}",
                    md_code(&format!("{}{at}", input.path)),
                    md_escape(message)
                );
            }
            if !input.cut_by_wrap.is_empty() {
                let n = input.cut_by_wrap.len();
                let _ = writeln!(
                    out,
                    "\n{n} line{} of {} cut inside a figure by a terminal's wrap, not read:\n",
                    if n == 1 { "" } else { "s" },
                    md_code(&input.path)
                );
                for (line, text, notice) in &input.cut_by_wrap {
                    let _ = writeln!(
                        out,
                        "- line {line}: {}: {}",
                        md_escape(notice),
                        md_code(text)
                    );
                }
            }
            for c in &input.captures {
                let _ = writeln!(
                    out,
                    "\n{} capture at line {} ({}):\n",
                    md_code(&input.path),
                    c.line,
                    c.format
                );
                out.push_str(&c.table.to_markdown());
            }
        }
    }

    /// Markdown's blocks carry their own spacing.
    fn gap(&mut self, _out: &mut String) {}

    fn end(&mut self, _out: &mut String) {}

    fn preformatted(&mut self, out: &mut String, body: &str) {
        out.push_str(body);
    }

    /// A text code block; a fence inside the body would close it, so it becomes `'''`.
    fn fenced(&mut self, out: &mut String, body: &str) {
        let _ = write!(out, "```text\n{}```\n", body.replace("```", "'''"));
    }
}
