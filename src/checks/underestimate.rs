//! `underestimate`: reality exceeds the estimate beyond rounding, on a component or a GPU: the placement
//! trusted too small a figure and the load risks running out of memory.

use super::load_failed::is_out_of_memory;
use super::{finding, size, CheckDef, Context};
use crate::model::{
    Finding, FindingCode, Launcher, Placer, Runtime, ServingEngine, Severity, Verdict,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::Underestimate,
    summary: "actual exceeds estimated beyond rounding (risk of out-of-memory); error past the GPU's capacity or after an OOM",
    run: check,
};

/// The hint in the runtime's knobs: `OLLAMA_GPU_OVERHEAD` does not reach `--fit`; its margin does.
fn hint(runtime: Runtime) -> &'static str {
    match runtime.placer() {
        Placer::OllamaScheduler => "reserve the gap with OLLAMA_GPU_OVERHEAD, or lower num_ctx / num_batch so the estimate keeps a margin",
        Placer::LlamaFit(Launcher::Ollama) => "the --fit plan missed memory the runner allocated: raise the margin with LLAMA_ARG_FIT_TARGET (MiB per GPU) or lower num_ctx so --fit keeps room",
        Placer::LlamaFit(Launcher::User) => "the --fit plan missed memory the runner allocated: raise the margin with --fit-target (MiB per GPU) or lower --ctx-size so --fit keeps room",
        Placer::LlamaFit(Launcher::Unknown) => "the --fit plan missed memory the runner allocated: raise the margin with --fit-target (MiB per GPU; LLAMA_ARG_FIT_TARGET if Ollama ≥ 0.30 started llama-server) or lower the context (-c, or num_ctx) so --fit keeps room",
        Placer::ServingEngine(ServingEngine::Vllm) => "the engine used more than its profile planned: lower --gpu-memory-utilization or pin --kv-cache-memory so the plan keeps room",
        Placer::ServingEngine(ServingEngine::Sglang) => "the engine used more than its pool planned: lower --mem-fraction-static or --cuda-graph-max-bs",
        Placer::Unknown => "the log does not say which runtime placed the layers: leave more free memory than the estimate, or lower the context",
    }
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    if load.load.runtime.is_serving_engine() {
        // vLLM's and SGLang's plan against what a rank holds is judged in their terms: `budget-exceeded`,
        // `graph-estimate-off`.
        return;
    }
    let hint = hint(load.load.runtime);
    let oom = load.load.actual.failed
        && load
            .load
            .actual
            .failure
            .as_deref()
            .is_some_and(is_out_of_memory);
    for c in load
        .components
        .iter()
        .filter(|c| c.verdict == Verdict::Under)
    {
        let (Some(e), Some(a)) = (c.estimated, c.actual) else {
            continue;
        };
        out.push(finding(
            DEF.code,
            if oom {
                Severity::Error
            } else {
                Severity::Warning
            },
            format!(
                "{}: actual {} exceeds the estimate {} by {} (beyond rounding)",
                c.component.as_str(),
                size(a),
                size(e),
                size(a.minus(e))
            ),
            hint,
            c.lines.clone(),
            None,
            Some(c.component),
        ));
    }
    for d in load
        .devices
        .iter()
        .filter(|d| d.verdict == Verdict::Under && !d.host)
    {
        let (Some(e), Some(a)) = (d.estimated, d.actual) else {
            continue;
        };
        let capacity = d
            .device
            .position()
            .and_then(|i| load.load.gpus.get(i))
            .and_then(|g| g.total);
        let over_capacity = capacity.is_some_and(|t| a.low > t.high);
        let mut message = format!(
            "{}: actual {} exceeds the estimate {} by {} (beyond rounding)",
            d.device,
            size(a),
            size(e),
            size(a.minus(e))
        );
        if let (true, Some(t)) = (over_capacity, capacity) {
            message.push_str(&format!(", more than the GPU's {}", size(t)));
        }
        out.push(finding(
            DEF.code,
            if over_capacity || oom {
                Severity::Error
            } else {
                Severity::Warning
            },
            message,
            hint,
            d.lines.clone(),
            Some(&d.device),
            None,
        ));
    }
}
