//! `cpu-offload-with-free-vram`: layers were left on the CPU although, by the measured sizes, the GPUs had
//! room for them. Decided by the placement replay.

use super::{finding, CheckDef, Context};
use crate::model::{human, Component, Finding, Severity};

pub const DEF: CheckDef = CheckDef {
    code: "cpu-offload-with-free-vram",
    summary: "layers left on the CPU while the GPUs had room for them by the measured sizes",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = &load.estimate else { return };
    let (Some(offloaded), Some(total)) = (
        load.actual.offloaded_layers.or(e.layers.offload),
        load.actual.total_layers.or(e.layers.model),
    ) else {
        return;
    };
    if offloaded >= total || e.layers.requested.is_some_and(|n| n >= 0 && n <= offloaded) {
        // Everything on GPU, or the user asked for exactly this many layers.
        return;
    }
    // Premise: the runner's weight buffers were measured, otherwise the replay only repeats the estimate.
    let measured_weights = cx
        .component(Component::WeightsGpu)
        .and_then(|r| r.actual)
        .is_some_and(|a| a.bytes > 0);
    if !measured_weights {
        return;
    }
    let Some(m) = load.whatif.as_ref().and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let could = m.placement.offloaded;
    if could <= offloaded {
        return;
    }
    let mut lines = cx.estimate_lines();
    if let Some(r) = cx.component(Component::WeightsGpu) {
        lines.extend(&r.lines);
    }
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{} of {total} layers were left on the CPU, but by the measured sizes {could} of {total} fit on the GPUs ({} to spare on the tightest)",
            total - offloaded,
            human(m.margin.max(0))
        ),
        "set num_gpu to the number of layers that fit (see suggestions); the estimate reserved more than the runner uses",
        lines,
        None,
        None,
    ));
}
