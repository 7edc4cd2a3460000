//! `load-failed`: the runner crashed or reported an allocation failure; what was read before is still shown.

use super::{finding, CheckDef, Context};
use crate::model::{FailedPart, Finding, FindingCode, RetryKind, Runtime, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::LoadFailed,
    summary:
        "the load failed (crash, out of memory); the figures read before the failure are reported",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let a = &cx.load.load.actual;
    let Some(failure) = a.failure.as_ref().filter(|_| a.failed) else {
        return;
    };
    let line = failure
        .strip_prefix("line ")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok());
    let oom = is_out_of_memory(failure);
    // Ollama ≥ 0.30 may retry once after this failure (`… retrying once`): say what it tried.
    let retry = cx.load.load.scheduler.as_ref().and_then(|s| {
        s.retries
            .iter()
            .find(|r| line.is_none_or(|l: u64| r.line >= l))
    });
    let retried = retry
        .map(|r| match (r.kind, r.old_num_ctx, r.new_num_ctx) {
            (RetryKind::ReduceContext, Some(a), Some(b)) => format!(
                "; Ollama then retried once with the context cut from {a} to {b} (line {})",
                r.line
            ),
            (RetryKind::EvictOthers, _, _) => format!(
                "; Ollama then unloaded every other model and retried once (line {})",
                r.line
            ),
            (_, _, _) => format!(
                "; Ollama then retried once with the projector on the CPU (line {})",
                r.line
            ),
        })
        .unwrap_or_default();
    let part = a.failed_part;
    let named = part
        .map(|(p, l)| format!("; what failed: {} (line {l})", p.words()))
        .unwrap_or_default();
    let mut lines: Vec<u64> = line.into_iter().collect();
    lines.extend(part.map(|(_, l)| l));
    lines.extend(retry.map(|r| r.line));
    let serving_hint = super::serving_figures::failure_hint(cx);
    out.push(finding(
        DEF.code,
        Severity::Error,
        format!("the load failed: {failure}{named}{retried}"),
        if part.is_some_and(|(p, _)| p == FailedPart::HostKilled) {
            "host memory, not VRAM: the kernel's OOM killer or a cgroup limit ended the process; raise the service's or container's memory limit (MemoryMax=, --memory), keep the weights memory-mapped, or load less at once"
        } else if let Some(hint) = serving_hint.as_deref() {
            hint
        } else if oom {
            oom_hint(cx.load.load.runtime)
        } else {
            "read the runner's last lines before the failure; the figures above are what it allocated"
        },
        lines,
        None,
        None,
    ));
}

/// What to change after an out-of-memory failure, in the runtime's knobs.
fn oom_hint(runtime: Runtime) -> &'static str {
    match runtime {
        Runtime::OllamaFit => "out of memory: lower num_ctx, quantise the KV cache (OLLAMA_KV_CACHE_TYPE=q8_0), or raise LLAMA_ARG_FIT_TARGET so --fit leaves more room",
        Runtime::LlamaCpp => "out of memory: lower --ctx-size, quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), or raise --fit-target so --fit leaves more room",
        Runtime::OllamaEstimator | Runtime::OllamaEngine => "out of memory: lower num_ctx or num_gpu, or reserve room with OLLAMA_GPU_OVERHEAD",
        Runtime::Vllm => "out of memory: lower --gpu-memory-utilization if another process shares the GPU, else --max-model-len, --max-num-seqs or --enforce-eager (see the findings for the figures)",
        Runtime::Sglang => "out of memory: lower --mem-fraction-static, --cuda-graph-max-bs or --context-length (see the findings for the figures)",
        Runtime::Unknown => "out of memory: lower the context or the layers on the GPU, or leave more memory free",
    }
}

/// True when a failure message is an allocation failure.
pub fn is_out_of_memory(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "out of memory",
        "cudamalloc failed",
        "failed to allocate",
        "oom",
        "insufficient memory",
    ]
    .iter()
    .any(|k| m.contains(k))
}
