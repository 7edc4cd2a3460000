//! `projector-on-cpu`: the vision projector runs on the CPU (`--no-mmproj-offload`, Ollama's `disabling
//! multimodal projector offload`, clip's `CLIP using CPU backend`), with its size against the room left on the
//! GPU that holds the model: images are then encoded on the CPU, many times slower. When Ollama's scheduler kept
//! it there for lack of VRAM and the log shows the GPU's room only before the load, the rule that decided
//! (0.30's flat floor, or the projector + 1 GiB of 0.31 and later) and what reaches it.

use super::{finding, CheckDef, Context};
use crate::model::scheduler::{ProjectorRule, ProjectorRuleKind, RuleEvidence, PROJECTOR_FLOOR};
use crate::model::{human, Component, Finding, FindingCode, Launcher, Part, Placer, Severity};
use crate::replay::llama_server;

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ProjectorOnCpu,
    summary: "the vision projector runs on the CPU; its size against the room left on the GPU holding the model",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let s = &load.load.settings;
    let mut signs = Vec::new();
    let mut lines = Vec::new();
    if s.projector_offload == Some(false) {
        signs.push(match &s.projector_offload_reason {
            Some(reason) => format!("Ollama disabled its offload, reason={reason}"),
            None => "--no-mmproj-offload".to_string(),
        });
        lines.extend(s.projector_offload_line);
    }
    if load
        .load
        .actual
        .projector_device
        .as_ref()
        .is_some_and(|d| d.is_host())
    {
        signs.push("CLIP using CPU backend".to_string());
        lines.extend(load.load.actual.projector_device_line);
    }
    if signs.is_empty() {
        return;
    }
    let clip = load.grid.total(&[Part::Projector]);
    let estimate = load.load.estimate.as_ref().and_then(|e| e.projector_total);
    let (size, from) = match (estimate, clip.as_ref().map(|c| c.size)) {
        (Some(e), _) => (Some(e), "llama-server's [mtmd] estimate"),
        (None, Some(a)) => (Some(a), "its clip buffers"),
        (None, None) => (None, ""),
    };
    lines.extend(clip.into_iter().flat_map(|c| c.lines));
    lines.extend(
        load.load
            .estimate
            .as_ref()
            .filter(|e| e.projector_total.is_some())
            .map(|e| e.lines.clone())
            .unwrap_or_default(),
    );
    let what = match size {
        Some(q) => format!("the vision projector ({}, {from})", human(q.bytes)),
        None => "the vision projector".to_string(),
    };
    // The GPU holding the model, and what it had left after the load.
    let main = load
        .devices
        .iter()
        .filter(|d| !d.host && d.device.is_gpu())
        .filter_map(|d| Some((d.device.clone(), d.actual?)))
        .max_by_key(|(_, a)| a.bytes);
    let free = |device: &crate::model::Device| {
        load.load
            .estimate
            .as_ref()
            .and_then(|e| e.fit.as_ref())
            .and_then(|f| f.free.iter().find(|d| d.device == *device))
            .map(|d| d.free)
            .or_else(|| {
                device
                    .position()
                    .and_then(|i| load.load.gpus.get(i))
                    .and_then(|g| g.free)
            })
    };
    let room = main.as_ref().and_then(|(device, used)| {
        let left = free(device)?.minus(*used);
        Some((device.clone(), left))
    });
    let margin = llama_server::target(load);
    let rule = load
        .load
        .scheduler
        .as_ref()
        .and_then(|s| s.projector.as_ref()?.rule.as_ref());
    if let Some(r) = rule {
        lines.push(r.line);
        if room.is_none() {
            let (severity, clause, hint) = by_rule(r, size, &load.load.gpus);
            let message = format!(
                "{what} runs on the CPU ({}) although {clause}; images are encoded on the CPU, many times slower",
                signs.join("; ")
            );
            out.push(finding(
                DEF.code,
                severity,
                message,
                &hint,
                lines,
                None,
                Some(Component::Projector),
            ));
            return;
        }
    }
    let (severity, message) = match (room, size) {
        (Some((device, left)), Some(p)) => {
            let spare = left.low - margin - p.high;
            let gpu = format!("{device}{}", cx.gpu_label(&device));
            if spare >= 0 {
                (
                    Severity::Warning,
                    format!(
                        "{what} runs on the CPU ({}), while {gpu} had {} free after the load: room for it and the {} margin with {} to spare; images are encoded on the CPU, many times slower",
                        signs.join("; "),
                        human(left.bytes),
                        human(margin),
                        human(spare)
                    ),
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "{what} runs on the CPU ({}); {gpu} had {} free after the load, not enough for it and the {} margin",
                        signs.join("; "),
                        human(left.bytes),
                        human(margin)
                    ),
                )
            }
        }
        _ if main.is_none()
            && !load.load.actual.buffers.is_empty()
            && load.load.actual.buffers.iter().all(|b| b.host) =>
        {
            (
            Severity::Info,
            format!(
                "{what} runs on the CPU ({}), like the rest of the model: no GPU holds any of it",
                signs.join("; ")
            ),
            )
        }
        _ => (
            Severity::Info,
            format!(
                "{what} runs on the CPU ({}); the log does not show how much room the GPU had left after the load",
                signs.join("; ")
            ),
        ),
    };
    // The room after the load is known: the rule that decided before it still says what reaches the decision.
    let (message, ruled_hint) = match rule {
        Some(r) => {
            let (_, clause, hint) = by_rule(r, size, &load.load.gpus);
            (
                format!("{message}. Ollama kept it there because {clause}"),
                Some(hint),
            )
        }
        None => (message, None),
    };
    let generic = match cx.load.load.runtime.placer() {
            Placer::LlamaFit(Launcher::Ollama) | Placer::OllamaScheduler | Placer::Unknown => {
                "Ollama ≥ 0.30 decides before the load from free VRAM (0.30 kept the projector off GPUs under a 10 GiB floor; later builds compare with the projector's size plus headroom): freeing VRAM on the GPU (see suggestions) or a newer Ollama keeps it on the GPU"
            }
            Placer::LlamaFit(Launcher::User) => {
                "llama-server keeps the projector on the GPU unless it is started with --no-mmproj-offload: drop that flag where the GPU has room for it"
            }
            Placer::LlamaFit(Launcher::Unknown) => {
                "the log does not say who started llama-server: if the user did, it keeps the projector on the GPU unless started with --no-mmproj-offload (drop that flag where the GPU has room); if Ollama ≥ 0.30 did, it decided before the load from free VRAM, and freeing VRAM on the GPU or a newer Ollama keeps it there"
            }
            Placer::ServingEngine(_) => {
                "the serving engine loads the vision encoder with the model on its GPUs: no projector setting applies"
            }
        };
    out.push(finding(
        DEF.code,
        severity,
        message,
        ruled_hint.as_deref().unwrap_or(generic),
        lines,
        main.as_ref().map(|(d, _)| d),
        Some(Component::Projector),
    ));
}

/// Which of Ollama's rules kept the projector on the CPU for lack of VRAM, judged on the GPU's room before the
/// load (`gpu memory`), by version (`docs/log-formats.md` §5.6 item 4): the severity, the clause that says so,
/// and what reaches that rule.
fn by_rule(
    r: &ProjectorRule,
    size: Option<crate::model::Quantity>,
    gpus: &[crate::model::Gpu],
) -> (Severity, String, String) {
    let free = r
        .free
        .map(|f| format!(", {} free", human(f.bytes)))
        .unwrap_or_default();
    let room = format!(
        "{} had {} available{free} before the load (gpu memory, line {})",
        r.gpu,
        human(r.available.bytes),
        r.line
    );
    match r.kind {
        ProjectorRuleKind::Floor10Gib => {
            let why = match (r.by, r.unless_projector_over, size) {
                (RuleEvidence::Version, _, _) => String::new(),
                (RuleEvidence::Figures, Some(over), _) => format!(
                    " (the log gives no version; the rule of 0.31 and later, the projector + 1 GiB against free memory, would keep it on the CPU here only for a projector over {})",
                    human(over.bytes)
                ),
                (RuleEvidence::Figures, None, Some(p)) => format!(
                    " (the log gives no version; the rule of 0.31 and later would have offloaded this {} projector)",
                    human(p.bytes)
                ),
                (RuleEvidence::Figures, None, None) => " (the log gives no version)".to_string(),
            };
            (
                Severity::Warning,
                format!(
                    "{room}: that is under the flat 10 GiB floor Ollama 0.30 required on every GPU for projector offload, whatever the projector's size{why}"
                ),
                {
                    // The floor holds every GPU handed over: with only the GPUs above it visible, it passes.
                    let above: Vec<String> = gpus
                        .iter()
                        .enumerate()
                        .filter(|(_, g)| g.available.is_some_and(|a| a.low >= PROJECTOR_FLOOR))
                        .map(|(i, g)| g.name.clone().unwrap_or_else(|| format!("GPU {i}")))
                        .collect();
                    let hide = if above.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; or let Ollama see only {} (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES), whose available memory is above the floor",
                            above.join(", ")
                        )
                    };
                    format!("the floor is fixed, no setting of Ollama 0.30 changes it: upgrade to Ollama 0.31 or later, which offloads the projector when every GPU has the projector + 1 GiB free (PR #16866; from 0.31.2 it also raises --fit's margin by that much while the projector is offloaded, see projector-headroom){hide}")
                },
            )
        }
        ProjectorRuleKind::ProjectorPlus1Gib => {
            let bar = r
                .bar
                .map(|b| format!(" ({})", human(b.bytes)))
                .unwrap_or_default();
            (
                Severity::Info,
                format!(
                    "{room}, less than the projector + 1 GiB{bar} Ollama 0.31 and later require free on every GPU"
                ),
                "Ollama offloads the projector when every GPU has the projector + 1 GiB free: freeing VRAM on the GPUs (another model, the desktop) keeps it on the GPU".to_string(),
            )
        }
    }
}
