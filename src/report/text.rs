//! The terminal report: per load a header, the component table and the device table, each gap with its
//! bounds and the log lines it rests on; then a summary line per input.

use std::fmt::Write;

use super::tables::{self, lines, q};
use super::{sanitize, ReportOptions, Reporter};
use crate::model::{human, Analysis, Load};

pub struct TextReporter {
    pub options: ReportOptions,
}

fn header(out: &mut String, index: usize, load: &Load) {
    let s = &load.source;
    let model = load
        .model
        .architecture
        .clone()
        .or_else(|| {
            load.model
                .blob
                .as_ref()
                .map(|b| b.chars().take(19).collect())
        })
        .unwrap_or_else(|| "model unknown".to_string());
    let _ = writeln!(
        out,
        "Load {index}: {} lines {}–{}  {}  engine {}{}",
        sanitize(&s.path),
        s.first_line,
        s.last_line,
        sanitize(&model),
        load.engine.as_str(),
        load.ollama_version
            .as_ref()
            .map(|v| format!("  Ollama {}", sanitize(v)))
            .unwrap_or_default()
    );
    for reason in &s.partial_reasons {
        let _ = writeln!(out, "  partial: {}", sanitize(reason));
    }
    if !load.gpus.is_empty() {
        let gpus: Vec<String> = load
            .gpus
            .iter()
            .map(|g| {
                let mut parts = vec![g.name.clone().unwrap_or_else(|| g.id.clone())];
                if let Some(c) = &g.compute {
                    parts.push(format!("compute {c}"));
                }
                if let Some(t) = g.total {
                    parts.push(format!("{} total", human(t.bytes)));
                }
                if let Some(a) = g.available {
                    parts.push(format!("{} free", human(a.bytes)));
                }
                sanitize(&parts.join(", ")).into_owned()
            })
            .collect();
        let _ = writeln!(out, "  GPUs: {}", gpus.join("; "));
    }
    let st = &load.settings;
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "–".to_string());
    let _ =
        writeln!(
        out,
        "  settings: ctx {}, batch {}, parallel {}, gpu layers {}, kv cache {}, flash attention {}",
        opt(st.ctx_size),
        opt(st.batch_size),
        opt(st.parallel),
        opt(st.gpu_layers),
        st.kv_cache_type.as_deref().map(sanitize).unwrap_or("–".into()),
        st.flash_attention.map(|f| if f { "on" } else { "off" }).unwrap_or("–")
    );
    match &load.estimate {
        Some(e) => {
            let layers = match (e.layers.offload, e.layers.model) {
                (Some(o), Some(m)) => format!("{o}/{m} layers on GPU"),
                _ => "layers not stated".to_string(),
            };
            let split = if e.layers.split.is_empty() {
                String::new()
            } else {
                format!(
                    ", split {}",
                    e.layers
                        .split
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            let _ = writeln!(
                out,
                "  estimate ({}, line {}): {layers}{split}, required {} (VRAM {})",
                e.form,
                lines(&e.lines),
                q(e.required_full),
                q(e.required_partial)
            );
        }
        None => {
            let _ = writeln!(out, "  estimate: none in the log for this load");
        }
    }
    let a = &load.actual;
    if let (Some(done), Some(total)) = (a.offloaded_layers, a.total_layers) {
        let _ = writeln!(
            out,
            "  actual: {done}/{total} layers on GPU{}",
            if a.sources.is_empty() {
                String::new()
            } else {
                format!(", from {}", sanitize(&a.sources.join(", ")))
            }
        );
    } else if !a.sources.is_empty() {
        let _ = writeln!(out, "  actual: from {}", sanitize(&a.sources.join(", ")));
    }
    if let Some(f) = &a.failure {
        let _ = writeln!(out, "  FAILED: {}", sanitize(f));
    }
}

fn load_section(out: &mut String, index: usize, load: &Load) {
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
            let mut refs = Vec::new();
            if let Some(d) = &f.device {
                refs.push(d.clone());
            }
            if let Some(c) = &f.component {
                refs.push(c.clone());
            }
            if !f.lines.is_empty() {
                refs.push(format!("lines {}", lines(&f.lines)));
            }
            let _ = writeln!(
                out,
                "  {:7} {}: {}{}",
                f.severity.as_str(),
                f.code,
                sanitize(&f.message),
                if refs.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", sanitize(&refs.join(", ")))
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
