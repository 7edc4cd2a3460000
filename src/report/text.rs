//! The terminal report: per load a header, the component table and the device table, each gap with its
//! bounds and the log lines it rests on; then a summary line per input.

use std::fmt::Write;

use super::tables;
use super::{sanitize, ReportOptions, Reporter};
use crate::model::{Analysis, Concluded};

pub struct TextReporter {
    pub options: ReportOptions,
}

fn header(out: &mut String, index: usize, load: &Concluded) {
    let s = &load.source;
    let _ = writeln!(
        out,
        "Load {index}: {} lines {}–{}  {}  engine {}{}",
        sanitize(&s.path),
        s.first_line,
        s.last_line,
        sanitize(&tables::model_name(load)),
        load.engine.as_str(),
        load.ollama_version
            .as_ref()
            .map(|v| format!("  Ollama {}", sanitize(v)))
            .unwrap_or_default()
    );
    for (key, value) in tables::facts(load) {
        let _ = writeln!(out, "  {key}: {}", sanitize(&value));
    }
}

pub(super) fn load_section(out: &mut String, index: usize, load: &Concluded) {
    header(out, index, load);
    for section in tables::sections(load) {
        out.push('\n');
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
    if let Some(w) = &load.whatif {
        out.push('\n');
        super::whatif::summary(out, w);
    }
    if !load.findings.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "  findings:");
        for f in &load.findings {
            let refs = tables::finding_refs(f);
            let _ = writeln!(
                out,
                "  {:7} {}: {}{}",
                f.severity.as_str(),
                f.code,
                sanitize(&f.message),
                if refs.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", sanitize(&refs))
                }
            );
            let _ = writeln!(out, "          hint: {}", sanitize(&f.hint));
        }
    }
    if !load.suggestions.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "  try:");
        for s in &load.suggestions {
            let _ = writeln!(out, "    {}", sanitize(&s.setting));
            let _ = writeln!(out, "      {}", sanitize(&s.effect));
        }
    }
    for note in &load.notes {
        let _ = writeln!(out, "  note: {}", sanitize(note));
    }
    out.push('\n');
}

/// At most this many captures of one input are listed in full; a long `nvidia-smi -l` series is summarised.
const LISTED_CAPTURES: usize = 12;

fn captures(out: &mut String, input: &crate::model::InputSummary) {
    for snapshot in input.captures.iter().take(LISTED_CAPTURES) {
        let _ = writeln!(
            out,
            "  capture at line {} ({}{}{}):",
            snapshot.line,
            snapshot.format.as_str(),
            snapshot
                .timestamp
                .as_deref()
                .map(|t| format!(", {}", sanitize(t)))
                .unwrap_or_default(),
            snapshot
                .driver_version
                .as_deref()
                .map(|d| format!(", driver {}", sanitize(d)))
                .unwrap_or_default()
        );
        out.push_str(&tables::capture(snapshot).to_text(4));
    }
    if input.captures.len() > LISTED_CAPTURES {
        let _ = writeln!(
            out,
            "  … {} more captures (--format json lists them all)",
            input.captures.len() - LISTED_CAPTURES
        );
    }
}

impl Reporter for TextReporter {
    fn render(&self, analysis: &Analysis) -> Vec<u8> {
        let mut out = String::new();
        for (i, load) in analysis.loads.iter().enumerate() {
            load_section(&mut out, i + 1, load);
        }
        if analysis.loads.is_empty() {
            out.push_str("No model load found.\n\n");
        }
        for input in &analysis.inputs {
            let loads = analysis
                .loads
                .iter()
                .filter(|l| l.source.path == input.path)
                .count();
            let _ = writeln!(
                out,
                "{}: {} lines read, {} recognised, {} memory-like lines not understood{}; {} load{}",
                sanitize(&input.path),
                input.lines,
                input.recognized_lines,
                input.unrecognized_memory_lines,
                if input.unrecognized_memory_lines > 0 && !self.options.show_unrecognized {
                    " (--show-unrecognized lists them)"
                } else {
                    ""
                },
                loads,
                if loads == 1 { "" } else { "s" }
            );
            captures(&mut out, input);
            if let Some(e) = &input.error {
                let _ = writeln!(out, "  error: {}", sanitize(e));
            }
            for w in &input.warnings {
                match w.line {
                    Some(l) => {
                        let _ = writeln!(
                            out,
                            "  warning: {}:{l}: {}",
                            sanitize(&input.path),
                            sanitize(&w.message)
                        );
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "  warning: {}: {}",
                            sanitize(&input.path),
                            sanitize(&w.message)
                        );
                    }
                }
            }
            if self.options.show_unrecognized {
                for u in &input.unrecognized {
                    let _ = writeln!(
                        out,
                        "  unrecognized {}:{}: {}",
                        sanitize(&input.path),
                        u.line,
                        sanitize(&u.text)
                    );
                }
            }
        }
        out.into_bytes()
    }
}
