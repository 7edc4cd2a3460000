//! `incomplete-load`: the log starts or ends in the middle of the load, so some figures are missing.

use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, PartialReason, Placer, ServingEngine, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::IncompleteLoad,
    summary: "the log starts or ends mid-load; what is known is reported",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let s = &cx.load.load.source;
    if !s.partial || cx.load.load.actual.failed {
        return;
    }
    // A log that only starts mid-load (an excerpt) still shows the outcome; one that ends mid-load does not.
    let unfinished = s
        .partial_reasons
        .iter()
        .any(|r| matches!(r, PartialReason::Unfinished(_)));
    out.push(finding(
        DEF.code,
        if unfinished {
            Severity::Warning
        } else {
            Severity::Info
        },
        format!(
            "incomplete load: {}",
            s.partial_reasons
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        match cx.load.load.runtime.placer() {
            Placer::ServingEngine(ServingEngine::Vllm) => "capture the whole log from the engine's start (`vllm serve`, `non-default args`) to `init engine … took`, every rank's lines, to reconcile every component",
            Placer::ServingEngine(ServingEngine::Sglang) => "capture the whole log from `server_args=ServerArgs(` to `The server is fired up and ready to roll!`, every rank's lines, to reconcile every component",
            Placer::OllamaScheduler | Placer::LlamaFit(_) | Placer::Unknown => "capture the whole log from the load request to \"llama runner started\" to reconcile every component",
        },
        vec![s.first_line, s.last_line],
        None,
        None,
    ));
}
