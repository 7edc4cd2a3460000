//! Suggestions: concrete settings to try, derived from a load's findings and its placement replay, each with
//! the effect the replay or the measured figures predict — in the knobs that reach the placer of the load's
//! runtime, never one it ignores (`OLLAMA_GPU_OVERHEAD` does not reach llama.cpp's `--fit`). A setting is
//! named only through the runtime's knob table ([`crate::model::knobs`]). One module per family of placers:
//! `ollama` (Ollama's scheduler), `fit` (llama.cpp's `--fit`), `fit_aborted` (a `--fit` stopped by the user's
//! `-ngl`), `serving` (vLLM's and SGLang's budgets), `host_ram` (the prompt cache and checkpoints while serving), and
//! `failure` (a failed load of Ollama or llama.cpp, by what failed and why).

mod failure;
mod fit;
mod fit_aborted;
pub mod host_ram;
mod ollama;
mod serving;

use crate::model::knobs::{self, Knob, KnobEntry};
use crate::model::{Device, Finding, FindingCode, Placer, Reconciled, Suggestion, WhatIf, MIB};

fn has(findings: &[Finding], code: FindingCode) -> bool {
    findings.iter().any(|f| f.code == code)
}

/// Round up to a multiple of 64 MiB, the way one would type the setting.
fn round_up(bytes: i64) -> i64 {
    let step = 64 * MIB;
    (bytes.max(0) + step - 1) / step * step
}

/// The GPU ids (UUID where the log printed one) of a set of devices, for CUDA_VISIBLE_DEVICES.
fn visible_devices(load: &Reconciled, devices: &[&Device]) -> String {
    devices
        .iter()
        .map(|d| {
            d.position()
                .and_then(|i| load.load.gpus.get(i).map(|g| (i, g)))
                .map(|(i, g)| {
                    if g.id.starts_with("GPU-") {
                        g.id.clone()
                    } else {
                        i.to_string()
                    }
                })
                .unwrap_or_else(|| d.to_string())
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One GPU that holds the whole load with a single compute buffer (`-sm none -mg N`), by the measured sizes
/// (the GPUs' buffers, else the `--fit` plan) against the free memory the fit saw (else the load's reading), with
/// the `--fit` margin kept: the GPU with the most room, what it would hold, and its free memory. Only when
/// every layer is on the GPUs (layers on the host would have to come back too) and more than one GPU is used.
pub fn one_gpu_holds_it(load: &Reconciled) -> Option<(Device, i64, i64)> {
    use crate::model::Part;
    let a = &load.load.actual;
    if matches!((a.offloaded_layers, a.total_layers), (Some(o), Some(t)) if o < t) {
        return None;
    }
    let gpus: Vec<&Device> = load.grid.gpus();
    let with_weights = load.grid.gpus_with_weights().len();
    let need = if with_weights >= 2 {
        let held = load
            .grid
            .gpus_total(&[Part::Weights, Part::Kv, Part::State, Part::Output])
            .map_or(0, |c| c.size.bytes);
        let compute = gpus
            .iter()
            .map(|d| load.grid.bytes(d, Part::Graph))
            .max()
            .unwrap_or(0);
        held + compute
    } else {
        let e = load.load.estimate.as_ref()?;
        let plan: Vec<_> = e.per_device.iter().filter(|d| d.device.is_gpu()).collect();
        let used = plan
            .iter()
            .filter(|d| d.weights.is_some_and(|w| w.bytes > 0))
            .count();
        if used < 2 {
            return None;
        }
        let held: i64 = plan
            .iter()
            .map(|d| d.weights.map_or(0, |q| q.bytes) + d.kv.map_or(0, |q| q.bytes))
            .sum();
        held + plan
            .iter()
            .filter_map(|d| d.graph.map(|g| g.bytes))
            .max()
            .unwrap_or(0)
    };
    let free: Vec<(Device, i64)> = match load.load.estimate.as_ref().and_then(|e| e.fit.as_ref()) {
        Some(f) if !f.free.is_empty() => f
            .free
            .iter()
            .filter(|d| d.device.is_gpu())
            .map(|d| (d.device.clone(), d.free.low))
            .collect(),
        Some(_) | None => load
            .load
            .gpus
            .iter()
            .zip(gpus.iter())
            .filter_map(|(g, d)| Some(((*d).clone(), g.free?.low)))
            .collect(),
    };
    let margin = crate::replay::llama_server::target(load);
    free.into_iter()
        .filter(|(_, f)| need + margin <= *f)
        .max_by_key(|(_, f)| *f)
        .map(|(d, f)| (d, need, f))
}

/// What a suggestion rests on: the reconciled load, its placement replay and what the checks concluded.
pub struct Evidence<'a> {
    pub load: &'a Reconciled,
    pub whatif: Option<&'a WhatIf>,
    pub findings: &'a [Finding],
}

/// The load's runtime's setting for `knob`, when it has one that reaches the placement.
fn knob(evidence: &Evidence, knob: Knob) -> Option<&'static KnobEntry> {
    knobs::reaching(evidence.load.load.runtime, knob)
}

/// Settings to try for a load, from its findings and replay, in its runtime's knobs.
pub fn suggest(evidence: &Evidence) -> Vec<Suggestion> {
    let mut out = Vec::new();
    match evidence.load.load.runtime.placer() {
        Placer::OllamaScheduler => {
            ollama::suggest(evidence, &mut out);
            failure::suggest(evidence, &mut out);
        }
        Placer::LlamaFit(_) => {
            failure::suggest(evidence, &mut out);
            fit_aborted::suggest(evidence, &mut out);
            fit::suggest(evidence, &mut out);
        }
        Placer::ServingEngine(engine) => serving::suggest(evidence, engine, &mut out),
        // No knob is known to reach a placer the log does not name.
        Placer::Unknown => {}
    }
    // The host RAM of serving: llama-server's own knobs, whoever launched it (`host_ram.rs`).
    host_ram::suggest(evidence, &mut out);
    out
}
