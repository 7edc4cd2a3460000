//! The terminal report: per load a header, the component table and the device table, each gap with its
//! bounds and the log lines it rests on; then a summary line per input.

use std::fmt::Write;

use super::table::{Align, Table};
use super::{sanitize, ReportOptions, Reporter};
use crate::model::{human, Analysis, Load, Quantity, Verdict};

pub struct TextReporter {
    pub options: ReportOptions,
}

fn q(q: Option<Quantity>) -> String {
    q.map(|q| human(q.bytes)).unwrap_or_else(|| "–".to_string())
}

/// A delta with its range: `-10.5 MiB (-61.2 MiB … +40.1 MiB)`.
pub fn delta(d: Option<Quantity>) -> String {
    match d {
        None => "–".to_string(),
        Some(d) => {
            let signed = |v: i64| {
                if v > 0 {
                    format!("+{}", human(v))
                } else {
                    human(v)
                }
            };
            format!(
                "{} ({} … {})",
                signed(d.bytes),
                signed(d.low),
                signed(d.high)
            )
        }
    }
}

pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Match => "match (within rounding)",
        Verdict::Over => "over (estimate larger)",
        Verdict::Under => "UNDER (estimate smaller)",
        Verdict::Unknown => "unknown",
    }
}

fn lines(lines: &[u64]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = lines.iter().take(8).map(|l| l.to_string()).collect();
    let more = if lines.len() > 8 {
        format!(" +{}", lines.len() - 8)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(","))
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
        let _ = writeln!(out, "  partial: {reason}");
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
            "  actual: {done}/{total} layers on GPU, from {}",
            a.sources.join(", ")
        );
    } else if !a.sources.is_empty() {
        let _ = writeln!(out, "  actual: from {}", a.sources.join(", "));
    }
    if let Some(f) = &a.failure {
        let _ = writeln!(out, "  FAILED: {}", sanitize(f));
    }
}

fn load_section(out: &mut String, index: usize, load: &Load) {
    header(out, index, load);
    if !load.components.is_empty() {
        let mut t = Table::new(&[
            ("component", Align::Left),
            ("estimated", Align::Right),
            ("actual", Align::Right),
            ("delta (range)", Align::Right),
            ("verdict", Align::Left),
        ]);
        for c in &load.components {
            t.push(vec![
                c.component.as_str().to_string(),
                q(c.estimated),
                q(c.actual),
                delta(c.delta),
                verdict_word(c.verdict).to_string(),
            ]);
        }
        out.push('\n');
        out.push_str(&t.to_text(2));
        for c in &load.components {
            let _ = writeln!(
                out,
                "    {}: estimated = {}",
                c.component.as_str(),
                sanitize(&c.estimated_from)
            );
            let _ = writeln!(
                out,
                "    {:width$}  actual = {}",
                "",
                sanitize(&c.actual_from),
                width = c.component.as_str().len()
            );
        }
    }
    if !load.devices.is_empty() {
        let mut t = Table::new(&[
            ("device", Align::Left),
            ("estimated", Align::Right),
            ("actual", Align::Right),
            ("delta (range)", Align::Right),
            ("verdict", Align::Left),
            ("lines", Align::Left),
        ]);
        for d in &load.devices {
            let name = if d.host {
                format!("{} (host)", d.device)
            } else {
                d.device.clone()
            };
            t.push(vec![
                sanitize(&name).into_owned(),
                q(d.estimated),
                q(d.actual),
                delta(d.delta),
                verdict_word(d.verdict).to_string(),
                lines(&d.lines),
            ]);
        }
        out.push('\n');
        out.push_str(&t.to_text(2));
        for d in &load.devices {
            let _ = writeln!(
                out,
                "    {}: estimated = {}",
                sanitize(&d.device),
                sanitize(&d.estimated_from)
            );
            let _ = writeln!(
                out,
                "    {:width$}  actual = {}",
                "",
                sanitize(&d.actual_from),
                width = d.device.chars().count()
            );
        }
    }
    for note in &load.notes {
        let _ = writeln!(out, "  note: {}", sanitize(note));
    }
    out.push('\n');
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
