//! The terminal's layout of a [`Document`](super::document::Document): aligned tables indented under each
//! subject, each gap with its bounds and the log lines it rests on, every value from a log made safe to print
//! (`sanitize`). Also the plain form other formats embed (`Block::Preformatted`, `Block::Fenced`).

use std::fmt::Write;

use super::document::{
    Compared, Comparison, FindingItem, InputItem, Limits, Markup, ReplaySummary, Steps, Subject,
};
use super::table::Table;
use super::tables::Section;
use super::{sanitize, ChartLink};

/// The terminal's layout. Holds a subject's regressions until its end, where a terminal lists them.
#[derive(Debug, Default)]
pub struct Text {
    regressions: Vec<String>,
}

impl Markup for Text {
    fn title(&mut self, _out: &mut String, _text: &str) {}

    fn heading(&mut self, out: &mut String, _level: u8, text: &str) {
        let _ = writeln!(out, "{}", sanitize(text));
    }

    fn subject(&mut self, out: &mut String, s: &Subject) {
        let (path, first, last) = &s.source;
        let _ = write!(out, "{}: {} lines {first}–{last}", s.label, sanitize(path));
        for part in s.name.iter().chain(&s.tags) {
            let _ = write!(out, "  {}", sanitize(part));
        }
        out.push('\n');
    }

    fn facts(&mut self, out: &mut String, facts: &[(String, String)]) {
        for (key, value) in facts {
            let _ = writeln!(out, "  {key}: {}", sanitize(value));
        }
    }

    fn section(&mut self, out: &mut String, section: &Section) {
        out.push_str(&section.table.to_text(2));
        for e in &section.explanations {
            let subject = sanitize(&e.subject);
            for (i, (key, text)) in e.parts.iter().enumerate() {
                if i == 0 {
                    let _ = writeln!(out, "    {subject}: {key} = {}", sanitize(text));
                } else {
                    let pad = subject.chars().count();
                    let _ = writeln!(out, "    {:pad$}  {key} = {}", "", sanitize(text));
                }
            }
        }
    }

    fn table(&mut self, out: &mut String, table: &Table, indent: usize) {
        out.push_str(&table.to_text(indent));
    }

    fn replay(&mut self, out: &mut String, r: &ReplaySummary) {
        if let Some(e) = &r.estimate {
            let _ = writeln!(
                out,
                "  replay with the estimate's figures: split {}, {}/{} layers; {}",
                e.split, e.offloaded, e.total, e.agreements
            );
            if let Some(x) = &e.explained {
                let _ = writeln!(out, "    {}", sanitize(x));
            }
        }
        if let Some(m) = &r.measured {
            let _ = writeln!(out, "  replay with the measured figures: {}", sanitize(m));
        }
    }

    fn findings(&mut self, out: &mut String, findings: &[FindingItem]) {
        let _ = writeln!(out, "  findings:");
        for f in findings {
            let _ = writeln!(
                out,
                "  {:7} {}: {}{}",
                f.severity,
                f.code,
                sanitize(&f.message),
                if f.refs.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", sanitize(&f.refs))
                }
            );
            let _ = writeln!(out, "          hint: {}", sanitize(&f.hint));
        }
    }

    fn suggestions(&mut self, out: &mut String, suggestions: &[(String, String)]) {
        let _ = writeln!(out, "  try:");
        for (setting, effect) in suggestions {
            let _ = writeln!(out, "    {}", sanitize(setting));
            let _ = writeln!(out, "      {}", sanitize(effect));
        }
    }

    /// Charts drawn in memory are for formats that carry pictures; `--chart` writes them as files.
    fn figures(&mut self, _out: &mut String, _charts: &[super::chart::Chart]) {}

    /// A terminal shows no pictures; `--chart` names the files it wrote on stderr.
    fn chart_ref(&mut self, _out: &mut String, _charts: &[ChartLink]) {}

    fn notes(&mut self, out: &mut String, notes: &[String]) {
        for note in notes {
            let _ = writeln!(out, "  note: {}", sanitize(note));
        }
    }

    fn paragraph(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "{}\n", sanitize(text));
    }

    fn lines(&mut self, out: &mut String, lines: &[String]) {
        for line in lines {
            let _ = writeln!(out, "{}", sanitize(line));
        }
    }

    fn field(&mut self, out: &mut String, key: &str, value: &str) {
        let _ = writeln!(out, "  {key}: {}", sanitize(value));
    }

    fn remark(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "  {}", sanitize(text));
    }

    fn list(&mut self, out: &mut String, title: &str, items: &[String]) {
        let _ = writeln!(out, "  {title}:");
        for item in items {
            let _ = writeln!(out, "    {}", sanitize(item));
        }
    }

    fn steps(&mut self, out: &mut String, steps: &Steps) {
        let _ = writeln!(out, "  {}:", sanitize(&steps.title));
        for (i, step) in steps.items.iter().enumerate() {
            let lines = super::document::step_lines(&step.lines);
            let _ = write!(
                out,
                "    {}. {}: {}",
                i + 1,
                sanitize(&step.label),
                sanitize(&step.text)
            );
            if !lines.is_empty() {
                let _ = write!(out, " [{lines}]");
            }
            out.push('\n');
        }
    }

    fn limits(&mut self, out: &mut String, l: &Limits) {
        let _ = writeln!(out, "{}", sanitize(&l.headline));
        out.push_str(&l.table.to_text(4));
        for a in &l.assumptions {
            let _ = writeln!(out, "      {}", sanitize(a));
        }
    }

    fn comparison(&mut self, out: &mut String, c: &Comparison) {
        let _ = write!(
            out,
            "{}\n  old: {}\n  new: {}\n{}\n\n",
            c.title,
            sanitize(&c.old),
            sanitize(&c.new),
            c.summary
        );
    }

    fn compared(&mut self, out: &mut String, c: &Compared) {
        let _ = writeln!(out, "load {}: {}", c.index, sanitize(&c.label));
        let _ = writeln!(
            out,
            "  old: {}  new: {}",
            sanitize(&c.old),
            sanitize(&c.new)
        );
    }

    /// Kept for the subject's end: a terminal's last lines are the ones read.
    fn regressions(&mut self, _out: &mut String, regressions: &[String]) {
        self.regressions.extend_from_slice(regressions);
    }

    fn verdict(&mut self, out: &mut String, text: &str) {
        let _ = writeln!(out, "{}", sanitize(text));
    }

    fn inputs(&mut self, out: &mut String, inputs: &[InputItem]) {
        for input in inputs {
            input_lines(out, input);
        }
    }

    fn gap(&mut self, out: &mut String) {
        out.push('\n');
    }

    fn end(&mut self, out: &mut String) {
        if !self.regressions.is_empty() {
            out.push('\n');
            for r in std::mem::take(&mut self.regressions) {
                let _ = writeln!(out, "  REGRESSION {}", sanitize(&r));
            }
        }
        out.push('\n');
    }

    fn preformatted(&mut self, out: &mut String, body: &str) {
        out.push_str(body);
    }

    fn fenced(&mut self, out: &mut String, body: &str) {
        out.push_str(body);
    }
}

fn input_lines(out: &mut String, input: &InputItem) {
    let path = sanitize(&input.path);
    let _ = writeln!(
        out,
        "{path}: {} lines read, {} recognised, {} memory-like lines not understood{}; {} load{}",
        input.lines,
        input.recognized,
        input.unrecognized_memory,
        if input.unrecognized_memory > 0 && input.unrecognized.is_none() {
            " (--show-unrecognized lists them)"
        } else {
            ""
        },
        input.loads,
        if input.loads == 1 { "" } else { "s" }
    );
    for c in &input.captures {
        let _ = writeln!(
            out,
            "  capture at line {} ({}{}{}):",
            c.line,
            c.format,
            c.timestamp
                .as_deref()
                .map(|t| format!(", {}", sanitize(t)))
                .unwrap_or_default(),
            c.driver
                .as_deref()
                .map(|d| format!(", driver {}", sanitize(d)))
                .unwrap_or_default()
        );
        out.push_str(&c.table.to_text(4));
    }
    if input.all_captures > input.captures.len() {
        let _ = writeln!(
            out,
            "  … {} more captures (--format json lists them all)",
            input.all_captures - input.captures.len()
        );
    }
    if let Some(e) = &input.error {
        let _ = writeln!(out, "  error: {}", sanitize(e));
    }
    for (line, message) in &input.warnings {
        match line {
            Some(l) => {
                let _ = writeln!(out, "  warning: {path}:{l}: {}", sanitize(message));
            }
            None => {
                let _ = writeln!(out, "  warning: {path}: {}", sanitize(message));
            }
        }
    }
    for (line, text) in input.unrecognized.iter().flatten() {
        let _ = writeln!(out, "  unrecognized {path}:{line}: {}", sanitize(text));
    }
    if !input.cut_by_wrap.is_empty() {
        let n = input.cut_by_wrap.len();
        let _ = writeln!(
            out,
            "  {n} line{} cut inside a figure by a terminal's wrap, not read:",
            if n == 1 { "" } else { "s" }
        );
    }
    for (line, text, notice) in &input.cut_by_wrap {
        let _ = writeln!(
            out,
            "  cut {path}:{line}: {}: {}",
            sanitize(notice),
            sanitize(text)
        );
    }
}
