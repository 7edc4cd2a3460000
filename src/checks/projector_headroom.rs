//! `projector-headroom`: Ollama 0.31.2 and later raise llama.cpp's `--fit` margin to ⌈projector + 1 GiB⌉ per GPU
//! while the vision projector is offloaded (`docs/log-formats.md` §5.6 item 4; ollama#17099, 33.8 → 4.7 tok/s
//! after an update), and that cost layers (sent to the CPU) or a GPU (the model spread over one more). The cost
//! is the fit replayed with the measured figures at the padded margin and at llama.cpp's default
//! (`replay::llama_server::projector_padding`). Silent when the padding cost nothing (the chain says so), when
//! the padding is only assumed (no version, no target printed), and when the user set the target.

use super::{finding, CheckDef, Context};
use crate::model::scheduler::PaddingEvidence;
use crate::model::{human, knobs, Component, Finding, FindingCode, Knob, Severity, MIB};
use crate::replay::fit::DEFAULT_FIT_TARGET;

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ProjectorHeadroom,
    summary: "Ollama padded --fit's margin by the offloaded projector (⌈projector + 1 GiB⌉) and that cost layers or a GPU",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let Some(p) = cx.whatif.and_then(|w| w.projector_padding.as_ref()) else {
        return;
    };
    let Some(gate) = load.scheduler.as_ref().and_then(|s| s.projector.as_ref()) else {
        return;
    };
    if p.cost_nothing() || p.evidence == PaddingEvidence::Assumed {
        return;
    }
    let projector = gate
        .size
        .map(|q| format!("the projector's {} + 1 GiB", human(q.bytes)))
        .unwrap_or_else(|| "the projector + 1 GiB".to_string());
    let known = match p.evidence {
        PaddingEvidence::Version => format!(
            "Ollama {} pads it",
            load.ollama_version.as_deref().unwrap_or("≥ 0.31.2")
        ),
        PaddingEvidence::LoggedTarget | PaddingEvidence::Assumed => {
            "the fit printed that target".to_string()
        }
    };
    let cost = match (p.layers_lost(), p.gpus_added()) {
        (0, _) => format!(
            "the model is spread over {} GPUs where {} would hold it at the default margin",
            p.gpus_padded, p.gpus_plain
        ),
        (n, _) => format!(
            "{n} of {} layers stay on the CPU ({} on the GPUs, {} at the default margin; about {} that the GPUs would hold)",
            p.total_layers,
            p.layers_padded,
            p.layers_plain,
            human(p.moved.bytes)
        ),
    };
    let agreement = match p.agrees_with_log {
        Some(true) => "; the replay at the padded margin reproduces the log's offloaded layers",
        Some(false) => "; the replay at the padded margin does not give the log's offloaded layers, so the figure is approximate",
        None => "",
    };
    let padding = p.padded_target.bytes - p.plain_target.bytes;
    let message = format!(
        "Ollama set --fit's margin to ⌈{projector}⌉ for the offloaded projector ({known}), on top of the room llama-server keeps for the projector itself: --fit kept {} free per GPU where it would keep {} without the padding, {} more, and by the fit replayed with the measured sizes {cost}{agreement}",
        human(p.padded_target.bytes),
        human(p.plain_target.bytes),
        human(padding),
    );
    let severity = if p.layers_lost() > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    let hint = match knobs::reaching(load.runtime, Knob::FitMargin) {
        Some(margin) => format!(
            "set {} in the server's environment: Ollama pads only a target the user did not set, and llama-server still keeps room for the projector on top of it ({} free per GPU then, not {}); Ollama ≥ 0.31 has no setting that keeps the projector on the CPU instead: it decides that from free memory",
            margin.setting(DEFAULT_FIT_TARGET / MIB),
            human(p.plain_target.bytes),
            human(p.padded_target.bytes)
        ),
        None => String::new(),
    };
    let mut lines = gate.lines.clone();
    if let Some(f) = load.estimate.as_ref().and_then(|e| e.fit.as_ref()) {
        lines.extend(f.lines.iter().copied());
    }
    out.push(finding(
        DEF.code,
        severity,
        message,
        &hint,
        lines,
        None,
        Some(Component::Projector),
    ));
}
