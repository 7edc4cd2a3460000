//! What Ollama itself said about a loaded model (`GET /api/ps`) at the moment a load completed, and the three
//! figures of a load's VRAM that can be set side by side: the runner's buffers (the log), the runner process
//! as nvidia-smi saw it, and Ollama's own `size_vram`.

use serde::Serialize;

use super::quantity::Quantity;
use super::reconciled::{DeviceRow, Reconciled};

/// One model of `/api/ps`, the one matched to this load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OllamaPs {
    /// The server asked (`http://127.0.0.1:11434`).
    pub url: String,
    /// `models[].name` (`gemma3:12b`).
    pub name: String,
    /// `models[].size`: the whole model as Ollama accounts it, VRAM and host memory (exact bytes).
    pub size: Quantity,
    /// `models[].size_vram`: the part Ollama says is in VRAM (exact bytes).
    pub size_vram: Quantity,
    /// `models[].context_length`, when the server prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_length: Option<i64>,
    /// How many models `/api/ps` listed.
    pub models_listed: usize,
    /// How this entry was chosen for the load, in words.
    pub matched_by: String,
}

/// The card's side of the comparison with `/api/ps`: what the GPUs hold for this load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardFigure {
    pub value: Quantity,
    /// Where it comes from, in words.
    pub from: &'static str,
    /// The log lines the figure rests on.
    pub lines: Vec<u64>,
}

impl Reconciled {
    /// The runner process's memory on the load's GPUs as nvidia-smi saw it, when the capture has it for every
    /// GPU the load used.
    pub fn observed_runner(&self) -> Option<CardFigure> {
        if self.observed.is_empty() {
            return None;
        }
        let mut total = Quantity::exact(0);
        let mut lines = Vec::new();
        for row in &self.observed {
            total = total.plus(row.runner_process?);
            // The log lines of the device (the capture's own lines are not the log's).
            if let Some(device) = self.devices.iter().find(|d| d.device == row.device) {
                lines.extend(device.comparison.lines.iter().copied());
            }
        }
        Some(CardFigure {
            value: total,
            from: "nvidia-smi's memory of the runner process",
            lines,
        })
    }

    /// The sum of the runner's buffers on GPUs (from the log).
    pub fn gpu_buffers(&self) -> Option<CardFigure> {
        gpu_buffers_of(&self.devices)
    }

    /// What the card holds for this load: nvidia-smi's runner process when captured, else the buffers.
    pub fn card_figure(&self) -> Option<CardFigure> {
        self.observed_runner().or_else(|| self.gpu_buffers())
    }
}

/// The sum of the runner's buffers on the GPUs among `devices` (from the log): [`Reconciled::gpu_buffers`], and
/// what the reconcile stage matches `/api/ps` with before the `Reconciled` exists.
pub fn gpu_buffers_of(devices: &[DeviceRow]) -> Option<CardFigure> {
    let mut total: Option<Quantity> = None;
    let mut lines = Vec::new();
    for device in devices.iter().filter(|d| !d.host) {
        if let Some(actual) = device.comparison.actual {
            total = Some(total.map_or(actual, |t| t.plus(actual)));
            lines.extend(device.comparison.lines.iter().copied());
        }
    }
    total.map(|value| CardFigure {
        value,
        from: "the sum of the runner's GPU buffers",
        lines,
    })
}
