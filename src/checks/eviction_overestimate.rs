//! `eviction-overestimate`: the scheduler evicted another model to make space for this one (an attempt of the
//! load, `load::attempts`), yet what the load then allocated on its GPUs fits in the memory the attempt had
//! available, beyond rounding, and the estimate was larger than that allocation beyond rounding: the eviction
//! was caused by the overestimate, not by a lack of memory. Rests on the attempt's `gpu memory` lines, the
//! eviction line, the estimate and the load's buffers. The knob is the context, the one setting that shrinks
//! the estimate's KV term in proportion in every Ollama version whose scheduler evicts this way; its effect is
//! computed from the KV estimate.

use super::{finding, size, CheckDef, Context};
use crate::model::{knobs, Attempt, Component, Finding, FindingCode, Knob, Quantity, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::EvictionOverestimate,
    summary: "the scheduler evicted a model although the load fit in the memory it had: the estimate caused it",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    // The last eviction before the load; `--fit` rounds say nothing of a scheduler's eviction.
    let Some(attempt) = load.attempts.iter().rev().find_map(|a| match a {
        Attempt::Eviction(e) => Some(e),
        Attempt::FitProbe(_) => None,
    }) else {
        return;
    };
    let Some(available) = attempt.available() else {
        return;
    };
    let gpu_rows: Vec<_> = cx
        .load
        .devices
        .iter()
        .filter(|r| !r.host && r.device.is_gpu())
        .collect();
    let actual = Quantity::sum(gpu_rows.iter().filter_map(|r| r.comparison.actual));
    let estimated = Quantity::sum(gpu_rows.iter().filter_map(|r| r.comparison.estimated));
    let (Some(actual), Some(estimated)) = (actual, estimated) else {
        return;
    };
    // It would have fit: the whole allocation's upper bound under the lower bound of what was available.
    if actual.high >= available.low || !cx.clearly_over(estimated, actual) {
        return;
    }
    let mut over: Vec<(&str, Quantity, Quantity, Vec<u64>)> = cx
        .load
        .components
        .iter()
        .filter_map(|r| {
            let (e, a) = (r.comparison.estimated?, r.comparison.actual?);
            cx.clearly_over(e, a)
                .then(|| (r.component.as_str(), e, a, r.comparison.lines.clone()))
        })
        .collect();
    over.sort_by_key(|(_, e, a, _)| std::cmp::Reverse(e.bytes - a.bytes));
    let devices: Vec<String> = gpu_rows.iter().map(|r| r.device.to_string()).collect();
    let layers = match (attempt.layers_fit, attempt.layers) {
        (Some(fit), Some(all)) => format!("its layout placed {fit} of {all} layers"),
        (Some(fit), None) => format!("its layout placed {fit} layers"),
        (None, _) => "its layout could not place every layer".to_string(),
    };
    let parts: Vec<String> = over
        .iter()
        .map(|(c, e, a, _)| format!("{c} estimated {}, {} allocated", size(*e), size(*a)))
        .collect();
    let mut lines = attempt.lines.clone();
    lines.extend(cx.estimate_lines());
    lines.extend(over.iter().flat_map(|(_, _, _, l)| l.iter().copied()));
    let message = format!(
        "the scheduler evicted {} to make space (line {}): {layers} in the {} available (line {}); the load then \
         allocated {} on {}, {} less: it would have fit without the eviction. The estimate, {}, was {} over the \
         allocation{}",
        attempt.evicted,
        attempt.line,
        size(available),
        attempt
            .gpus
            .iter()
            .map(|g| g.line.to_string())
            .collect::<Vec<_>>()
            .join(","),
        size(actual),
        devices.join(" + "),
        size(available.minus(actual)),
        size(estimated),
        size(estimated.minus(actual)),
        if parts.is_empty() {
            String::new()
        } else {
            format!(": {}", parts.join("; "))
        }
    );
    out.push(finding(
        DEF.code,
        Severity::Warning,
        message,
        &hint(cx, estimated.minus(actual)),
        lines,
        None,
        over.first().and_then(|(c, _, _, _)| component(c)),
    ));
}

fn component(word: &str) -> Option<Component> {
    [
        Component::WeightsGpu,
        Component::WeightsHost,
        Component::Kv,
        Component::Graph,
        Component::Projector,
        Component::Draft,
    ]
    .into_iter()
    .find(|c| c.as_str() == word)
}

/// The context that takes the excess off the estimate: halved until the KV estimate's saving covers it (the
/// estimate's KV term is proportional to the context), with the effect in figures; without a context knob
/// for the runtime or the figures, what to change in words.
fn hint(cx: &Context, excess: Quantity) -> String {
    let load = &cx.load.load;
    let kv = cx
        .component(Component::Kv)
        .and_then(|r| r.comparison.estimated);
    let entry = knobs::reaching(load.runtime, Knob::Context);
    let (Some(entry), Some(ctx), Some(kv)) = (entry, load.settings.ctx_size, kv) else {
        return "the estimator's excess, not the memory, made room for this model: keep both loaded by lowering \
                the context or the KV cache type"
            .to_string();
    };
    let mut new = ctx;
    while new > 2048 && kv.bytes as i128 * (ctx - new) as i128 / ctx as i128 <= excess.high as i128
    {
        new /= 2;
    }
    let saving = kv.scale(ctx - new, ctx);
    if saving.bytes <= excess.high {
        return format!(
            "the estimator's excess, not the memory, made room for this model; {} at its smallest still leaves \
             the excess: lower the KV cache type or keep one model loaded",
            entry.spelled()
        );
    }
    format!(
        "{}: the KV estimate falls from {} to {}, {} off the estimate, more than its {} excess, so the layout \
         fits where the attempt did not and the other model stays loaded",
        entry.setting(new),
        size(kv),
        size(kv.minus(saving)),
        size(saving),
        size(excess)
    )
}
