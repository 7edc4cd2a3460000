//! The tables of a load's report, built once and rendered by every human-readable reporter (text, Markdown):
//! components, devices, and what nvidia-smi observed. Cells hold the raw text (log text included); each
//! renderer makes it safe for its medium.

mod capture;
mod cells;
mod facts;
mod ps;
mod ranks;
mod timeline;

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

/// Four views of each GPU of an Ollama ≥ 0.30 load, and of all GPUs together.
fn gpu_views(load: &Concluded) -> Option<Section> {
    let views = &load.reconciled.gpu_views;
    if views.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        ("GPU", Align::Left),
        ("Ollama's prediction", Align::Right),
        ("llama.cpp's plan", Align::Right),
        ("buffers", Align::Right),
        ("driver", Align::Right),
        ("ollama ps", Align::Right),
        ("unattributed", Align::Right),
    ]);
    for v in views {
        let mut gpu = match (&v.device, &v.name, v.driver_join) {
            (None, _, _) => "all GPUs".to_string(),
            (Some(d), Some(n), Some(join)) => format!("{d} ({n}, by {join})"),
            (Some(d), _, _) => d.to_string(),
        };
        if v.integrated {
            gpu.push_str(" (iGPU: system memory, not in all GPUs)");
        }
        table.push(vec![
            gpu,
            q(v.ollama_prediction),
            q(v.llama_cpp_plan),
            q(v.buffers),
            smi(v.driver),
            q(v.ollama_ps),
            delta(v.unattributed),
        ]);
    }
    let explanations = vec![Explanation {
        subject: "views".to_string(),
        parts: vec![
            (
                "Ollama's prediction",
                "file size + KV at f16, the figure of its single-GPU rule: on the GPU it chose alone, else for all GPUs together".to_string(),
            ),
            ("llama.cpp's plan", "the --fit plan's table".to_string()),
            ("buffers", "the buffers allocated".to_string()),
            ("driver", "memory in use in the driver's capture".to_string()),
            (
                "ollama ps",
                "its size on GPUs (SIZE × the PROCESSOR's GPU share, or /api/ps size_vram): for all GPUs, and on the GPU row when one GPU holds the load (it never splits GPUs)".to_string(),
            ),
        ],
    }];
    Some(Section {
        title: "Per GPU: four views",
        table,
        explanations,
    })
}

/// Every table of a load, in report order.
pub fn sections(load: &Concluded) -> Vec<Section> {
    [
        components(load),
        devices(load),
        ranks::section(load),
        gpu_views(load),
        observed(load),
        ps::section(load),
        timeline::section(load),
    ]
    .into_iter()
    .flatten()
    .collect()
}
