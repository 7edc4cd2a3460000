//! Suggestions: concrete settings to try, derived from a load's findings and its placement replay, each with
//! the effect the replay or the measured figures predict — in the knobs that reach the placer of the load's
//! runtime, never one it ignores (`OLLAMA_GPU_OVERHEAD` does not reach llama.cpp's `--fit`). A setting is
//! named only through the runtime's knob table ([`crate::model::knobs`]). One module per family of placers:
//! `ollama` (Ollama's scheduler), `fit` (llama.cpp's `--fit`), `serving` (vLLM's and SGLang's budgets).

mod fit;
mod ollama;
mod serving;

use crate::model::knobs::{self, Knob, KnobEntry};
use crate::model::{Device, Finding, FindingCode, Reconciled, Runtime, Suggestion, WhatIf, MIB};

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
    match evidence.load.load.runtime {
        Runtime::OllamaEstimator | Runtime::OllamaEngine => ollama::suggest(evidence, &mut out),
        Runtime::OllamaFit | Runtime::LlamaCpp => fit::suggest(evidence, &mut out),
        Runtime::Vllm => serving::suggest(evidence, serving::Engine::Vllm, &mut out),
        Runtime::Sglang => serving::suggest(evidence, serving::Engine::Sglang, &mut out),
        // No knob is known to reach a placer the log does not name.
        Runtime::Unknown => {}
    }
    out
}
