//! The four views of each GPU of an Ollama ≥ 0.30 load ([`GpuView`]): Ollama's prediction (the scheduler's, see
//! `load::prediction`), llama.cpp's plan (the device rows' estimate), the buffers (their actual), the driver's
//! capture (the observed rows, joined by UUID, PCI bus id or position), and `ollama ps` for all GPUs together.

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
    let mut rows: Vec<GpuView> = gpus
        .iter()
        .map(|d| {
            let seen = observed.iter().find(|o| o.device == d.device);
            GpuView {
                device: Some(d.device.clone()),
                name: seen.and_then(|o| o.name.clone()),
                ollama_prediction: prediction.filter(|_| chosen == Some(&d.device)),
                llama_cpp_plan: d.estimated,
                buffers: d.actual,
                driver: seen.and_then(|o| o.used),
                driver_join: seen.map(|o| o.join.as_str()),
                ollama_ps: None,
                unattributed: seen.and_then(|o| o.unattributed),
            }
        })
        .collect();
    let sum = |f: fn(&GpuView) -> Option<Quantity>| -> Option<Quantity> {
        let all: Option<Vec<Quantity>> = rows.iter().map(f).collect();
        all.and_then(Quantity::sum)
    };
    let ps_on_gpus = ps.map(|p| p.size_vram).or_else(|| {
        let row = s.ps_table.last()?;
        let percent = row.gpu_percent?;
        Some(row.size.scale(percent, 100))
    });
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
    };
    rows.push(total);
    rows
}
