//! The four views of each GPU of an Ollama ≥ 0.30 load ([`GpuView`]): Ollama's prediction (the scheduler's, see
//! `load::prediction`), llama.cpp's plan (the device rows' estimate), the buffers (their actual), the driver's
//! capture (the observed rows, joined by UUID, PCI bus id or position), and `ollama ps` (a pasted table's SIZE ×
//! its PROCESSOR's GPU share, `48%/52% CPU/GPU`, or `/api/ps`'s `size_vram`) for all GPUs together, and on the
//! row of the one GPU that holds the load's GPU buffers when only one does: `ollama ps` splits CPU from GPU,
//! never one GPU from another.

use crate::model::scheduler::GpuChoice;
use crate::model::views::GpuView;
use crate::model::{DeviceRow, Load, ObservedRow, OllamaPs, Quantity};

/// The views, one row per GPU and one for all GPUs; none for a load Ollama's scheduler did not place.
pub fn views(
    load: &Load,
    devices: &[DeviceRow],
    observed: &[ObservedRow],
    ps: Option<&OllamaPs>,
) -> Vec<GpuView> {
    let Some(s) = load.scheduler.as_ref() else {
        return Vec::new();
    };
    let gpus: Vec<&DeviceRow> = devices.iter().filter(|d| !d.host).collect();
    if gpus.is_empty() {
        return Vec::new();
    }
    let prediction = s.prediction.as_ref().map(|p| p.total);
    let chosen = match &s.gpu_choice {
        GpuChoice::SingleGpu { .. } | GpuChoice::MainGpu { .. } if gpus.len() == 1 => {
            Some(&gpus[0].device)
        }
        GpuChoice::SingleGpu { .. }
        | GpuChoice::MainGpu { .. }
        | GpuChoice::Backend { .. }
        | GpuChoice::AllGpus { .. }
        | GpuChoice::NotShown => None,
    };
    let ps_on_gpus = ps.map(|p| p.size_vram).or_else(|| {
        let row = s.ps_table.last()?;
        let percent = row.gpu_percent?;
        Some(row.size.scale(percent, 100))
    });
    // `ollama ps` gives the load's share on GPUs, not a split between them: it is a GPU's own figure when that
    // GPU holds every GPU buffer of the load (one GPU used, whatever the others).
    let holding: Vec<&DeviceRow> = gpus
        .iter()
        .copied()
        .filter(|d| d.actual.is_some_and(|a| a.bytes > 0))
        .collect();
    let ps_gpu = match holding.as_slice() {
        [only] => Some(&only.device),
        _ => None,
    };
    let mut rows: Vec<GpuView> = gpus
        .iter()
        .map(|d| {
            let seen = observed.iter().find(|o| o.device == d.device);
            let integrated = d
                .device
                .position()
                .and_then(|i| load.gpus.get(i))
                .is_some_and(|g| g.integrated);
            GpuView {
                device: Some(d.device.clone()),
                name: seen.and_then(|o| o.name.clone()),
                ollama_prediction: prediction.filter(|_| chosen == Some(&d.device)),
                llama_cpp_plan: d.estimated,
                buffers: d.actual,
                driver: seen.and_then(|o| o.used),
                driver_join: seen.map(|o| o.join.as_str()),
                ollama_ps: ps_on_gpus.filter(|_| ps_gpu == Some(&d.device)),
                unattributed: seen.and_then(|o| o.unattributed),
                integrated,
            }
        })
        .collect();
    // An integrated GPU's memory is the system's: never VRAM in the row of all GPUs.
    let sum = |f: fn(&GpuView) -> Option<Quantity>| -> Option<Quantity> {
        let all: Option<Vec<Quantity>> = rows.iter().filter(|r| !r.integrated).map(f).collect();
        all.and_then(Quantity::sum)
    };
    let total = GpuView {
        device: None,
        name: None,
        ollama_prediction: prediction,
        llama_cpp_plan: sum(|r| r.llama_cpp_plan),
        buffers: sum(|r| r.buffers),
        driver: sum(|r| r.driver),
        driver_join: None,
        ollama_ps: ps_on_gpus,
        unattributed: sum(|r| r.unattributed),
        integrated: false,
    };
    rows.push(total);
    rows
}
