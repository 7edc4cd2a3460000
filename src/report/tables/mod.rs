//! The tables of a load's report, built once and rendered by every human-readable reporter (text, Markdown):
//! components, devices, and what nvidia-smi observed. Cells hold the raw text (log text included); each
//! renderer makes it safe for its medium.

mod capture;
mod cells;
mod facts;
mod ps;

pub use capture::capture;
pub use cells::*;
pub use facts::facts;

use super::table::{Align, Table};
use crate::model::{human, Concluded};

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

fn components(load: &Concluded) -> Option<Section> {
    if load.reconciled.components.is_empty() {
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
    for c in &load.reconciled.components {
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
    if load.reconciled.devices.is_empty() {
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
    for d in &load.reconciled.devices {
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
    if load.reconciled.observed.is_empty() {
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
    for o in &load.reconciled.observed {
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

/// Every table of a load, in report order.
pub fn sections(load: &Concluded) -> Vec<Section> {
    [
        components(load),
        devices(load),
        observed(load),
        ps::section(load),
    ]
    .into_iter()
    .flatten()
    .collect()
}
