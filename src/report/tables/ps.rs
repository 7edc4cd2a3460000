//! The three figures of a load's VRAM side by side, when `--ollama` read `/api/ps` at the load's completion:
//! the runner's GPU buffers (the log), the runner process as nvidia-smi saw it (`--capture`, `--smi`), and
//! Ollama's own `size_vram`.

use super::{q, smi, Explanation, Section};
use crate::model::Concluded;
use crate::report::table::{Align, Table};

/// The section, or nothing without an `/api/ps` figure.
pub fn section(load: &Concluded) -> Option<Section> {
    let ps = load.reconciled.ollama_ps.as_ref()?;
    let mut table = Table::new(&[
        ("figure", Align::Left),
        ("VRAM", Align::Right),
        ("from", Align::Left),
    ]);
    let buffers = load.reconciled.gpu_buffers();
    table.push(vec![
        "buffers".to_string(),
        q(buffers.as_ref().map(|b| b.value)),
        "the runner's GPU buffers in the log".to_string(),
    ]);
    let runner = load.reconciled.observed_runner();
    table.push(vec![
        "nvidia-smi".to_string(),
        smi(runner.as_ref().map(|r| r.value)),
        if runner.is_some() {
            "the runner process on the load's GPUs".to_string()
        } else {
            "no capture with a process table".to_string()
        },
    ]);
    table.push(vec![
        "ollama ps".to_string(),
        q(Some(ps.size_vram)),
        format!(
            "size_vram of {} (size {})",
            ps.name,
            crate::model::human(ps.size.bytes)
        ),
    ]);
    let mut parts = vec![("server", format!("{}/api/ps", ps.url))];
    parts.push(("matched", ps.matched_by.clone()));
    if let Some(ctx) = ps.context_length {
        parts.push(("context_length", ctx.to_string()));
    }
    Some(Section {
        title: "Ollama /api/ps",
        table,
        explanations: vec![Explanation {
            subject: "ollama ps".to_string(),
            parts,
        }],
    })
}
