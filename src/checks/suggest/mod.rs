//! Suggestions: concrete settings to try, derived from a load's findings and its placement replay, each with
//! the effect the replay or the measured figures predict — in the knobs that reach the runner of the load's
//! era, never one the era ignores (`OLLAMA_GPU_OVERHEAD` does not reach llama.cpp's `--fit`).

mod llama_server;
mod ollama;

use crate::model::{Device, Era, Finding, FindingCode, Reconciled, Suggestion, WhatIf, MIB};

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
                .and_then(|i| load.gpus.get(i).map(|g| (i, g)))
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

/// Settings to try for a load, from its findings and replay, in its era's knobs.
pub fn suggest(evidence: &Evidence) -> Vec<Suggestion> {
    let mut out = Vec::new();
    if evidence.load.era == Era::LlamaServer {
        llama_server::suggest(evidence, &mut out);
    } else {
        ollama::suggest(evidence, &mut out);
    }
    out
}
