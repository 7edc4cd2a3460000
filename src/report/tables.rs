//! The tables of a load's report, built once and rendered by every human-readable reporter (text, Markdown):
//! components, devices, and what nvidia-smi observed. Cells hold the raw text (log text included); each
//! renderer makes it safe for its medium.

use super::table::{Align, Table};
use crate::model::{human, Concluded, Quantity, Verdict};

/// How a row's figures were obtained, in words: `subject: key = text` for each part.
#[derive(Debug, Clone)]
pub struct Explanation {
    pub subject: String,
    pub parts: Vec<(&'static str, String)>,
}

/// A table with the explanations printed under it.
#[derive(Debug, Clone)]
pub struct Section {
    /// Short title (Markdown headings use it; the text report does not).
    pub title: &'static str,
    pub table: Table,
    pub explanations: Vec<Explanation>,
}

/// A quantity as a human size, `–` when absent.
pub fn q(q: Option<Quantity>) -> String {
    q.map(|q| human(q.bytes)).unwrap_or_else(|| "–".to_string())
}

/// A monitor's figure as the monitor prints it (`617 MiB`) when it is whole MiB, else a human size.
pub fn smi(q: Option<Quantity>) -> String {
    match q {
        Some(q) if q.bytes % crate::model::MIB == 0 => {
            format!("{} MiB", q.bytes / crate::model::MIB)
        }
        other => self::q(other),
    }
}

/// A delta with its range: `-10.5 MiB (-61.2 MiB … +40.1 MiB)`.
pub fn delta(d: Option<Quantity>) -> String {
    match d {
        None => "–".to_string(),
        Some(d) => format!(
            "{} ({} … {})",
            signed(d.bytes),
            signed(d.low),
            signed(d.high)
        ),
    }
}

/// A size with an explicit sign for positive values.
pub fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{}", human(v))
    } else {
        human(v)
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

/// Line numbers, at most eight of them.
pub fn lines(lines: &[u64]) -> String {
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

/// What a finding points at, as one text: `CUDA0, graph, lines 9,32` (empty when it points at nothing).
pub fn finding_refs(f: &crate::model::Finding) -> String {
    let mut refs: Vec<String> = f
        .device
        .iter()
        .map(|d| d.to_string())
        .chain(f.component.iter().map(|c| c.as_str().to_string()))
        .collect();
    if !f.lines.is_empty() {
        refs.push(format!("lines {}", lines(&f.lines)));
    }
    refs.join(", ")
}

/// The model's name for a title: its architecture, else the start of its blob hash.
pub fn model_name(load: &Concluded) -> String {
    load.model
        .architecture
        .clone()
        .or_else(|| {
            load.model
                .blob
                .as_ref()
                .map(|b| b.chars().take(19).collect())
        })
        .unwrap_or_else(|| "model unknown".to_string())
}

/// The facts under a load's title, as (label, text) pairs: GPUs, settings, estimate, actual, failure.
pub fn facts(load: &Concluded) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = load
        .source
        .partial_reasons
        .iter()
        .map(|r| ("partial".to_string(), r.clone()))
        .collect();
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
                // Ollama's `available` (free − minimum − overhead) and the measured free memory are two
                // figures; never show one as the other.
                if let Some(a) = g.available {
                    parts.push(format!("{} available", human(a.bytes)));
                }
                if let Some(f) = g.free {
                    parts.push(format!("{} free", human(f.bytes)));
                }
                parts.join(", ")
            })
            .collect();
        out.push(("GPUs".to_string(), gpus.join("; ")));
    }
    let st = &load.settings;
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "–".to_string());
    out.push((
        "settings".to_string(),
        format!(
            "ctx {}, batch {}, parallel {}, gpu layers {}, kv cache {}, flash attention {}",
            opt(st.ctx_size),
            opt(st.batch_size),
            opt(st.parallel),
            opt(st.gpu_layers),
            st.kv_cache_type.as_deref().unwrap_or("–"),
            st.flash_attention
                .map(|f| if f { "on" } else { "off" })
                .unwrap_or("–")
        ) + &match (st.projector_offload, &st.projector_offload_reason) {
            (Some(false), Some(reason)) => format!(", projector on the CPU ({reason})"),
            (Some(false), None) => ", projector on the CPU".to_string(),
            _ => String::new(),
        },
    ));
    for r in &load.rejected_gpus {
        out.push((
            "rejected GPU".to_string(),
            format!("{}: {} (line {})", r.name, r.reason, r.line),
        ));
    }
    if let Some(f) = load.estimate.as_ref().and_then(|e| e.fit.as_ref()) {
        out.push(("--fit".to_string(), fit_words(f)));
    }
    match &load.estimate {
        Some(e) => {
            let layers = match (e.layers.offload, e.layers.model) {
                (Some(o), Some(m)) => format!("{o}/{m} layers on GPU"),
                _ => "layers not stated".to_string(),
            };
            let split = if e.layers.split.is_empty() {
                String::new()
            } else {
                let split: Vec<String> = e.layers.split.iter().map(|n| n.to_string()).collect();
                format!(", split {}", split.join(","))
            };
            out.push((
                format!("estimate ({}, line {})", e.form, lines(&e.lines)),
                format!(
                    "{layers}{split}, required {} (VRAM {})",
                    q(e.required_full),
                    q(e.required_partial)
                ),
            ));
        }
        None => out.push((
            "estimate".to_string(),
            "none in the log for this load".to_string(),
        )),
    }
    let a = &load.actual;
    if let (Some(done), Some(total)) = (a.offloaded_layers, a.total_layers) {
        let from = if a.sources.is_empty() {
            String::new()
        } else {
            format!(", from {}", a.sources.join(", "))
        };
        out.push((
            "actual".to_string(),
            format!("{done}/{total} layers on GPU{from}"),
        ));
    } else if !a.sources.is_empty() {
        out.push((
            "actual".to_string(),
            format!("from {}", a.sources.join(", ")),
        ));
    }
    if let Some(f) = &a.failure {
        out.push(("FAILED".to_string(), f.clone()));
    }
    out
}

/// What llama.cpp's `--fit` did, in words.
fn fit_words(f: &crate::model::FitSummary) -> String {
    let mut parts = vec![match f.outcome.as_str() {
        "no-change" => {
            "no changes needed: every device kept its margin with the user's settings".to_string()
        }
        "changed" => "moved layers or the context to keep every device's margin".to_string(),
        _ => "the log stops before the fit's result".to_string(),
    }];
    if let Some(t) = f.target {
        parts.push(format!("margin {} per device", human(t.bytes)));
    }
    if let Some(r) = f.reduce_by {
        parts.push(format!("had to shed {}", human(r.bytes)));
    }
    if let (Some(c), Some(by_user)) = (f.context, f.context_by_user) {
        parts.push(if by_user {
            format!("context {c} kept (set by the user)")
        } else {
            format!("context reduced to {c}")
        });
    }
    parts.push(format!(
        "{} probe table{}",
        f.probes,
        if f.probes == 1 { "" } else { "s" }
    ));
    if let Some(s) = f.seconds {
        parts.push(format!("took {s:.2} s"));
    }
    parts.join(", ")
}

fn components(load: &Concluded) -> Option<Section> {
    if load.components.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("component", Align::Left),
        ("estimated", Align::Right),
        ("actual", Align::Right),
        ("delta (range)", Align::Right),
        ("verdict", Align::Left),
    ]);
    let mut explanations = Vec::new();
    for c in &load.components {
        table.push(vec![
            c.component.as_str().to_string(),
            q(c.estimated),
            q(c.actual),
            delta(c.delta),
            verdict_word(c.verdict).to_string(),
        ]);
        explanations.push(Explanation {
            subject: c.component.as_str().to_string(),
            parts: vec![
                ("estimated", c.estimated_from.clone()),
                ("actual", c.actual_from.clone()),
            ],
        });
    }
    Some(Section {
        title: "Components",
        table,
        explanations,
    })
}

fn devices(load: &Concluded) -> Option<Section> {
    if load.devices.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("device", Align::Left),
        ("estimated", Align::Right),
        ("actual", Align::Right),
        ("delta (range)", Align::Right),
        ("verdict", Align::Left),
        ("lines", Align::Left),
    ]);
    let mut explanations = Vec::new();
    for d in &load.devices {
        let name = if d.host {
            format!("{} (host)", d.device)
        } else {
            d.device.to_string()
        };
        table.push(vec![
            name,
            q(d.estimated),
            q(d.actual),
            delta(d.delta),
            verdict_word(d.verdict).to_string(),
            lines(&d.lines),
        ]);
        explanations.push(Explanation {
            subject: d.device.to_string(),
            parts: vec![
                ("estimated", d.estimated_from.clone()),
                ("actual", d.actual_from.clone()),
            ],
        });
    }
    Some(Section {
        title: "Devices",
        table,
        explanations,
    })
}

fn observed(load: &Concluded) -> Option<Section> {
    if load.observed.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("device", Align::Left),
        ("GPU (join)", Align::Left),
        ("estimated", Align::Right),
        ("buffers", Align::Right),
        ("observed used / total", Align::Right),
        ("runner proc", Align::Right),
        ("other procs", Align::Right),
        ("unattributed (range)", Align::Right),
        ("lines", Align::Left),
    ]);
    let mut explanations = Vec::new();
    for o in &load.observed {
        let gpu = o
            .name
            .clone()
            .or_else(|| o.gpu_id.clone())
            .unwrap_or_else(|| "GPU".to_string());
        table.push(vec![
            o.device.to_string(),
            format!("{gpu} ({})", o.join.as_str()),
            q(o.estimated),
            q(o.buffers),
            format!("{} / {}", smi(o.used), smi(o.total)),
            smi(o.runner_process),
            smi(o.other_processes),
            delta(o.unattributed),
            lines(&o.lines),
        ]);
        let mut parts = vec![("unattributed", o.unattributed_from.clone())];
        if let Some(b) = o.baseline {
            parts.push(("idle baseline", human(b.bytes)));
        }
        let capture = &o.capture;
        parts.push((
            "capture",
            format!(
                "{}:{} ({}{})",
                capture.path,
                capture.line,
                capture.format.as_str(),
                capture
                    .timestamp
                    .as_ref()
                    .map(|t| format!(", {t}"))
                    .unwrap_or_default()
            ),
        ));
        explanations.push(Explanation {
            subject: o.device.to_string(),
            parts,
        });
    }
    Some(Section {
        title: "Observed (nvidia-smi)",
        table,
        explanations,
    })
}

/// One capture's GPUs and, when it has a process table, their processes.
pub fn capture(s: &crate::model::Snapshot) -> Table {
    let mut table = Table::new(&[
        ("GPU", Align::Left),
        ("name", Align::Left),
        ("bus / uuid", Align::Left),
        ("used", Align::Right),
        ("total", Align::Right),
        ("processes", Align::Left),
    ]);
    for g in &s.gpus {
        let key = if g.mig {
            format!(
                "{} MIG {}",
                g.index.map(|i| i.to_string()).unwrap_or_default(),
                g.mig_device.map(|i| i.to_string()).unwrap_or_default()
            )
        } else {
            g.index.map(|i| i.to_string()).unwrap_or_else(|| "–".into())
        };
        let processes = match &s.processes {
            None => "no table".to_string(),
            Some(list) => {
                let on: Vec<String> = list
                    .iter()
                    .filter(|p| p.runs_on(g))
                    .map(|p| format!("{} {}", p.name, smi(p.used)))
                    .collect();
                if on.is_empty() {
                    "none".to_string()
                } else {
                    on.join(", ")
                }
            }
        };
        table.push(vec![
            key,
            g.name.clone().unwrap_or_else(|| "–".into()),
            g.bus_id
                .clone()
                .or_else(|| g.uuid.clone())
                .unwrap_or_else(|| "–".into()),
            smi(g.used),
            smi(g.total),
            processes,
        ]);
    }
    if s.gpus.is_empty() {
        for p in s.processes.iter().flatten() {
            table.push(vec![
                p.gpu_index
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "–".into()),
                String::new(),
                p.gpu_bus_id
                    .clone()
                    .or_else(|| p.gpu_uuid.clone())
                    .unwrap_or_else(|| "–".into()),
                String::new(),
                String::new(),
                format!("{} {}", p.name, smi(p.used)),
            ]);
        }
    }
    table
}

/// Every table of a load, in report order.
pub fn sections(load: &Concluded) -> Vec<Section> {
    [components(load), devices(load), observed(load)]
        .into_iter()
        .flatten()
        .collect()
}
