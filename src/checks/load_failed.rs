//! `load-failed`: the runner crashed or reported an allocation failure; what was read before is still shown.
//! The finding names the failure's cause as every failure line of the load read together gives it
//! ([`FailureCause`]): the hint for one allocation over the driver's limit is a smaller buffer, for a crash that
//! is not memory no memory setting at all. The settings with their computed effect are `suggest::failure`'s.

use super::{finding, CheckDef, Context};
use crate::model::{
    human, FailedPart, FailureCause, Finding, FindingCode, Launcher, Placer, RetryKind, Runtime,
    ServingEngine, Severity,
};

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
    let cause = cause_of(cx.load);
    // Ollama ≥ 0.30 may retry once after this failure (`… retrying once`): say what it tried.
    let retry = cx.load.load.scheduler.as_ref().and_then(|s| {
        s.retries
            .iter()
            .find(|r| line.is_none_or(|l: u64| r.line >= l))
    });
    let retried = retry.map(retry_words).unwrap_or_default();
    let part = a.failed_part;
    let allocation = a
        .failed_allocation
        .as_ref()
        .map(|al| {
            format!(
                " of {}{}",
                human(al.size.bytes),
                al.device
                    .as_ref()
                    .map(|d| format!(" on {d}"))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let named = part
        .map(|(p, l)| format!("; what failed: {}{allocation} (line {l})", p.words()))
        .unwrap_or_default();
    let why = match cause {
        FailureCause::Unstated | FailureCause::OutOfMemory => String::new(),
        FailureCause::NotMemory | FailureCause::HostMemory | FailureCause::AllocationLimit => {
            format!("; cause: {}", cause.words())
        }
    };
    let mut lines: Vec<u64> = line.into_iter().collect();
    lines.extend(part.map(|(_, l)| l));
    lines.extend(a.failed_allocation.as_ref().map(|al| al.line));
    lines.extend(retry.map(|r| r.line));
    lines.sort_unstable();
    lines.dedup();
    let serving_hint = super::serving_figures::failure_hint(cx);
    let host_killed = part.is_some_and(|(p, _)| p == FailedPart::HostKilled);
    out.push(finding(
        DEF.code,
        Severity::Error,
        format!("the load failed: {failure}{named}{why}{retried}"),
        if host_killed || cause == FailureCause::HostMemory {
            "host memory, not VRAM: the kernel's OOM killer or a cgroup limit ended the process; raise the service's or container's memory limit (MemoryMax=, --memory), keep the weights memory-mapped, or load less at once"
        } else if let Some(hint) = serving_hint.as_deref() {
            hint
        } else if part.is_some_and(|(p, _)| p == FailedPart::DraftContext)
            && cause == FailureCause::OutOfMemory
        {
            "the speculative draft's own context failed after the main one was made: without the draft the load needs only what it had allocated (see the suggestions), or free what the draft needs with a smaller context or fewer slots"
        } else {
            match cause {
                FailureCause::OutOfMemory => oom_hint(
                    cx.load.load.runtime,
                    a.failed_allocation
                        .as_ref()
                        .and_then(|al| al.device.as_ref())
                        .is_some_and(|d| d.is_host()),
                ),
                FailureCause::AllocationLimit => limit_hint(cx.load.load.runtime),
                FailureCause::NotMemory => not_memory_hint(cx.load.load.runtime),
                FailureCause::Unstated | FailureCause::HostMemory => {
                    "read the runner's last lines before the failure; the figures above are what it allocated"
                }
            }
        },
        lines,
        None,
        None,
    ));
}

/// What to say of a failure that is not memory, in the runtime's terms.
fn not_memory_hint(runtime: Runtime) -> &'static str {
    match runtime.placer() {
        Placer::ServingEngine(_) => "not memory: the start stopped on an error that is no allocation (a GPU page fault, a missing compiler or library); no memory setting helps: read the lines before it, fix the environment or update the engine",
        Placer::OllamaScheduler | Placer::LlamaFit(_) | Placer::Unknown => "not memory: the runtime crashed with every allocation before it done (a signal, an exception, an assertion); no memory setting helps: read the lines before the crash, update the runtime, or report it with them",
    }
}

/// The load's failure cause: what its failure lines said together, else what its message says. A crash of
/// llama.cpp or Ollama is called not memory only after the compute buffers were allocated (the last
/// allocation of a load): a crash before them may be an allocation that failed without saying so. A serving
/// engine allocates through torch, whose failures say so (`grammars/37-torch.toml`): its other errors stand.
pub fn cause_of(load: &crate::model::Reconciled) -> FailureCause {
    let a = &load.load.actual;
    let cause = a.failure_cause.unwrap_or_else(|| {
        if a.failure.as_deref().is_some_and(is_out_of_memory) {
            FailureCause::OutOfMemory
        } else {
            FailureCause::Unstated
        }
    });
    let allocated = a
        .buffers
        .iter()
        .any(|b| b.kind == crate::model::BufferKind::Compute && !b.host);
    match cause {
        FailureCause::NotMemory if !allocated && !load.load.runtime.is_serving_engine() => {
            FailureCause::Unstated
        }
        other => other,
    }
}

/// What to change when one allocation passed the driver's single-allocation limit, in the runtime's knobs.
fn limit_hint(runtime: Runtime) -> &'static str {
    match runtime.placer() {
        Placer::LlamaFit(Launcher::Ollama) | Placer::OllamaScheduler => "one buffer over the driver's single-allocation limit (about 4 GiB on many Vulkan drivers), with memory still free: a smaller num_batch or num_ctx makes the compute buffer smaller; more memory does not help",
        Placer::LlamaFit(Launcher::User) => "one buffer over the driver's single-allocation limit (about 4 GiB on many Vulkan drivers), with memory still free: a smaller micro-batch (-ub) or context (-c) makes the compute buffer smaller, or a backend without the cap (ROCm/HIP, CUDA); more memory does not help",
        Placer::LlamaFit(Launcher::Unknown) => "one buffer over the driver's single-allocation limit (about 4 GiB on many Vulkan drivers), with memory still free: a smaller micro-batch (-ub, or num_batch if Ollama ≥ 0.30 started llama-server) or context (-c, or num_ctx) makes the compute buffer smaller; more memory does not help",
        Placer::ServingEngine(_) | Placer::Unknown => "one buffer over the driver's single-allocation limit, with memory still free: a smaller batch or context makes the buffer smaller; more memory does not help",
    }
}

/// What Ollama tried after the failure, in words: each kind says its own retry, with the context figures when
/// the log gave them (a context retry without them is still a context retry, never the projector's).
fn retry_words(r: &crate::model::scheduler::Retry) -> String {
    match (r.kind, r.old_num_ctx, r.new_num_ctx) {
        (RetryKind::ReduceContext, Some(a), Some(b)) => format!(
            "; Ollama then retried once with the context cut from {a} to {b} (line {})",
            r.line
        ),
        (RetryKind::ReduceContext, _, _) => format!(
            "; Ollama then retried once with a smaller context (line {})",
            r.line
        ),
        (RetryKind::EvictOthers, _, _) => format!(
            "; Ollama then unloaded every other model and retried once (line {})",
            r.line
        ),
        (RetryKind::ProjectorOnCpu, _, _) => format!(
            "; Ollama then retried once with the projector on the CPU (line {})",
            r.line
        ),
    }
}

/// What to change after an out-of-memory failure, in the runtime's knobs.
fn oom_hint(runtime: Runtime, in_host_memory: bool) -> &'static str {
    // A buffer llama.cpp keeps in RAM failed: a larger --fit margin would send more to RAM, not less.
    if in_host_memory {
        match runtime.placer() {
            Placer::LlamaFit(Launcher::Ollama) => return "host memory ran out for a buffer kept in RAM: lower num_ctx or quantise the KV cache (OLLAMA_KV_CACHE_TYPE=q8_0), or free system memory; a larger --fit margin would put more in RAM, not less",
            Placer::LlamaFit(Launcher::User) => return "host memory ran out for a buffer kept in RAM: lower --ctx-size or quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), or free system memory; a larger --fit-target would put more in RAM, not less",
            Placer::LlamaFit(Launcher::Unknown) => return "host memory ran out for a buffer kept in RAM: lower the context (-c, or num_ctx if Ollama ≥ 0.30 started llama-server) or quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0, or OLLAMA_KV_CACHE_TYPE=q8_0), or free system memory; a larger --fit margin would put more in RAM, not less",
            Placer::OllamaScheduler
            | Placer::ServingEngine(_)
            | Placer::Unknown => {}
        }
    }
    match runtime.placer() {
        Placer::LlamaFit(Launcher::Ollama) => "out of memory: lower num_ctx, quantise the KV cache (OLLAMA_KV_CACHE_TYPE=q8_0), or raise LLAMA_ARG_FIT_TARGET so --fit leaves more room",
        Placer::LlamaFit(Launcher::User) => "out of memory: lower --ctx-size, quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), or raise --fit-target so --fit leaves more room",
        Placer::LlamaFit(Launcher::Unknown) => "out of memory: lower the context (-c, or num_ctx if Ollama ≥ 0.30 started llama-server), quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0, or OLLAMA_KV_CACHE_TYPE=q8_0), or raise --fit-target (LLAMA_ARG_FIT_TARGET) so --fit leaves more room",
        Placer::OllamaScheduler => "out of memory: lower num_ctx or num_gpu, or reserve room with OLLAMA_GPU_OVERHEAD",
        Placer::ServingEngine(ServingEngine::Vllm) => "out of memory: lower --gpu-memory-utilization if another process shares the GPU, else --max-model-len, --max-num-seqs or --enforce-eager (see the findings for the figures)",
        Placer::ServingEngine(ServingEngine::Sglang) => "out of memory: lower --mem-fraction-static, --cuda-graph-max-bs or --context-length (see the findings for the figures)",
        Placer::Unknown => "out of memory: lower the context or the layers on the GPU, or leave more memory free",
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

#[cfg(test)]
mod tests {
    use super::retry_words;
    use crate::model::scheduler::Retry;
    use crate::model::RetryKind;

    fn retry(kind: RetryKind, old: Option<i64>, new: Option<i64>) -> Retry {
        Retry {
            kind,
            old_num_ctx: old,
            new_num_ctx: new,
            error: None,
            line: 7,
        }
    }

    #[test]
    fn each_retry_kind_says_its_own_retry_with_or_without_figures() {
        assert_eq!(
            retry_words(&retry(RetryKind::ReduceContext, Some(8192), Some(4096))),
            "; Ollama then retried once with the context cut from 8192 to 4096 (line 7)"
        );
        // A context retry whose figures the log did not give is still a context retry.
        for (old, new) in [(None, None), (Some(8192), None), (None, Some(4096))] {
            let words = retry_words(&retry(RetryKind::ReduceContext, old, new));
            assert_eq!(
                words,
                "; Ollama then retried once with a smaller context (line 7)"
            );
            assert!(!words.contains("projector"));
        }
        assert!(retry_words(&retry(RetryKind::EvictOthers, None, None))
            .contains("unloaded every other model"));
        assert!(retry_words(&retry(RetryKind::ProjectorOnCpu, None, None))
            .contains("projector on the CPU"));
    }
}
