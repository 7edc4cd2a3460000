//! `needless-split`: the model was split across GPUs although, by the measured sizes (weights, KV, graph and
//! the measured or typical CUDA context), it fits on fewer of them. Decided by the placement replay.

use super::{finding, CheckDef, Context};
use crate::model::{human, Component, Finding, Severity};

pub const DEF: CheckDef = CheckDef {
    code: "needless-split",
    summary:
        "split across GPUs although the measured total fits on fewer (replay with measured sizes)",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = &load.estimate else { return };
    let used = e.layers.split.iter().filter(|&&n| n > 0).count();
    if used < 2 {
        return;
    }
    // Premise: reality was measured (weight and compute buffers), otherwise the replay only repeats the estimate.
    let measured = |c| cx.component(c).is_some_and(|r| r.actual.is_some());
    if !measured(Component::WeightsGpu) || !measured(Component::Graph) {
        return;
    }
    let Some(m) = load.whatif.as_ref().and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let fits_on = m.placement.used_gpus();
    if !m.placement.fully_offloaded() || fits_on >= used || m.margin <= 0 {
        return;
    }
    let gpus: Vec<String> = m
        .placement
        .gpus
        .iter()
        .filter(|g| g.layers > 0)
        .map(|g| {
            format!(
                "{} ({} of {} free)",
                g.device,
                human(g.allocation),
                human(g.free)
            )
        })
        .collect();
    let split: Vec<String> = e.layers.split.iter().map(|n| n.to_string()).collect();
    let mut lines = cx.estimate_lines();
    for c in [Component::WeightsGpu, Component::Graph] {
        if let Some(r) = cx.component(c) {
            lines.extend(&r.lines);
        }
    }
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "split {} over {used} GPUs, but by the measured sizes the whole model fits on {}: {}, {} to spare",
            split.join(","),
            if fits_on == 1 { "one GPU".to_string() } else { format!("{fits_on} GPUs") },
            gpus.join("; "),
            human(m.margin)
        ),
        "pin the model to that GPU (CUDA_VISIBLE_DEVICES) and force the layers with num_gpu; the estimate overcharges (see the other findings)",
        lines,
        None,
        None,
    ));
}
