//! Suggestions after a failed load whose layers llama.cpp placed (on its own or under Ollama ≥ 0.30) or
//! Ollama's scheduler placed: what to change, by what failed and why (`load-failed`'s [`FailureCause`] and
//! [`FailedPart`]), each with the effect computed from the log's own figures. Ranked by what it costs the
//! user: a smaller micro-batch (a little prompt speed) before a quantised KV cache (a little precision) before a
//! shorter context (capability). A crash that is not memory, or a failure the log does not explain, gets no
//! memory setting: a knob that does nothing is a wrong answer (`docs/findings.md`, "load-failed").

use super::{has, knob, Evidence};
use crate::checks::load_failed::cause_of;
use crate::model::{
    human, Backend, Device, FailedPart, FailureCause, FindingCode, Knob, KvType, Part, Placer,
    Reconciled, Suggestion, GIB,
};
use crate::replay::levers::MicroBatch;

/// The largest single allocation many Vulkan drivers allow (`maxMemoryAllocationSize`): llama.cpp does not
/// print it, so a suggestion says it is assumed.
const VULKAN_ALLOCATION_LIMIT: i64 = 4 * GIB;

/// Settings to try after a failed load, by its cause. Ollama's scheduler sizes an out-of-memory retry from its
/// own estimate (`suggest::ollama`), so only the allocation limit is answered here for it.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    if !has(ev.findings, FindingCode::LoadFailed) {
        return;
    }
    let llama_placed = match ev.load.load.runtime.placer() {
        Placer::LlamaFit(_) => true,
        Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => false,
    };
    match cause_of(ev.load) {
        FailureCause::AllocationLimit => allocation_limit(ev, out),
        FailureCause::OutOfMemory if llama_placed => out_of_memory(ev, out),
        FailureCause::OutOfMemory => {}
        // Not memory, host memory (the hint names the service's limit) or unexplained: no memory knob.
        FailureCause::NotMemory | FailureCause::HostMemory | FailureCause::Unstated => {}
    }
}

/// The failed allocation's size and device, when a failure line printed them.
fn failed_size(load: &Reconciled) -> Option<(i64, Option<Device>)> {
    let a = &load.load.actual;
    a.failed_allocation
        .as_ref()
        .map(|al| (al.size.bytes, al.device.clone()))
}

/// One buffer over the driver's single-allocation limit: the micro-batch that brings it under, then a shorter
/// context. More memory does not help, so nothing else is suggested.
fn allocation_limit(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some((size, device)) = failed_size(load) else {
        return;
    };
    let vulkan =
        device.as_ref().is_some_and(is_vulkan) || load.grid.gpus().iter().any(|d| is_vulkan(d));
    // Without the driver's figure, aim under Vulkan's common 4 GiB; elsewhere at half the buffer.
    let limit = if vulkan {
        VULKAN_ALLOCATION_LIMIT
    } else {
        size / 2 + 1
    };
    let on = device.map(|d| format!(" on {d}")).unwrap_or_default();
    let limit_words = if vulkan {
        "the single-allocation limit (about 4 GiB on many Vulkan drivers; the log does not print it)".to_string()
    } else {
        "the driver's single-allocation limit (the log does not print it)".to_string()
    };
    let because = vec![FindingCode::LoadFailed];
    micro_batch(ev, size, limit, &on, &limit_words, &because, out);
    // A shorter context: the KV cache shrinks in proportion, the compute buffer's attention scores with it.
    if let (Some((per_slot, new)), Some(context)) = (halved_context(load), knob(ev, Knob::Context))
    {
        let kv = kv_bytes(load);
        out.push(Suggestion {
            setting: context.setting(new),
            effect: format!(
                "at {new} tokens instead of {per_slot}, the {} buffer{on} shrinks by its attention scores, which grow with the context (at most in proportion, to {}; the rest does not shrink){}; the context is shorter",
                human(size),
                human(size / 2),
                kv.map(|k| format!(", and the KV cache {} → about {}", human(k), human(k / 2)))
                    .unwrap_or_default()
            ),
            because,
        });
    }
}

/// A smaller micro-batch (`-ub`, Ollama's `num_batch`): the compute buffer scales with it. The largest power of
/// two that brings `size` under `limit`.
fn micro_batch(
    ev: &Evidence,
    size: i64,
    limit: i64,
    on: &str,
    limit_words: &str,
    because: &[FindingCode],
    out: &mut Vec<Suggestion>,
) {
    let load = ev.load;
    let (ub, printed) = MicroBatch::logged(load);
    let (entry, current) = match (knob(ev, Knob::Ubatch), knob(ev, Knob::Batch)) {
        (Some(u), _) => (u, ub),
        (None, Some(b)) => (
            b,
            load.load
                .settings
                .batch_size
                .filter(|&b| b > 0)
                .unwrap_or(ub),
        ),
        (None, None) => return,
    };
    let Some(new) = smaller_power_of_two(current, |n| scaled(size, n, current) < limit) else {
        return;
    };
    let shrunk = scaled(size, new, current);
    out.push(Suggestion {
        setting: entry.setting(new),
        effect: format!(
            "the compute buffer scales with the micro-batch ({current}{} → {new}): the {} buffer{on} becomes about {}, under {limit_words}; prompts are read in smaller steps",
            if printed { "" } else { ", llama.cpp's default" },
            human(size),
            human(shrunk)
        ),
        because: because.to_vec(),
    });
}

/// `size × new / current` without overflow (`current` > 0).
fn scaled(size: i64, new: i64, current: i64) -> i64 {
    i64::try_from(i128::from(size) * i128::from(new) / i128::from(current.max(1)))
        .unwrap_or(i64::MAX)
}

/// The largest power of two below `current` (at least 32) for which `fits` holds.
fn smaller_power_of_two(current: i64, fits: impl Fn(i64) -> bool) -> Option<i64> {
    let mut n = 1i64 << (63 - (current.max(2) - 1).leading_zeros());
    while n >= 32 {
        if n < current && fits(n) {
            return Some(n);
        }
        n /= 2;
    }
    None
}

/// The load's context per slot and half of it as one would type it (a multiple of 1,024 tokens, at least
/// 1,024), when the log printed the context.
fn halved_context(load: &Reconciled) -> Option<(i64, i64)> {
    let per_slot = load.load.settings.ctx_size? / load.load.settings.parallel.unwrap_or(1).max(1);
    let new = per_slot / 2 / 1024 * 1024;
    (new >= 1024 && new < per_slot).then_some((per_slot, new))
}

fn is_vulkan(d: &Device) -> bool {
    matches!(
        d,
        Device::Gpu {
            backend: Backend::Vulkan,
            ..
        }
    )
}

/// The KV cache's bytes on the GPUs (its buffers), else the caches' summary lines, else none.
fn kv_bytes(load: &Reconciled) -> Option<i64> {
    let on_gpus = load
        .grid
        .gpus_total(&[Part::Kv])
        .map_or(0, |c| c.size.bytes);
    if on_gpus > 0 {
        return Some(on_gpus);
    }
    let caches: i64 = load
        .load
        .actual
        .kv_caches
        .iter()
        .filter(|k| !k.recurrent)
        .map(|k| k.size.bytes)
        .sum();
    (caches > 0).then_some(caches)
}

/// Device memory exhausted: by what failed, the setting that shrinks that allocation.
fn out_of_memory(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let part = load.load.actual.failed_part.map(|(p, _)| p);
    let because = vec![FindingCode::LoadFailed];
    match part {
        Some(FailedPart::Compute) => {
            if let Some((size, device)) = failed_size(load) {
                let mut on = device.map(|d| format!(" on {d}")).unwrap_or_default();
                // Pipeline parallelism keeps that many copies of the graph's buffers: each scales with -ub.
                if let Some(copies) = load.load.settings.pipeline_copies.filter(|&c| c > 1) {
                    on.push_str(&format!(
                        " ({copies} pipeline copies of the graph, n_copies={copies}, each scaling with it)"
                    ));
                }
                micro_batch(
                    ev,
                    size,
                    size / 2 + 1,
                    &on,
                    "half of what failed",
                    &because,
                    out,
                );
            }
        }
        Some(FailedPart::KvCache) | None => kv_settings(ev, &because, out),
        Some(FailedPart::DraftContext) => draft(ev, &because, out),
        Some(
            FailedPart::Weights
            | FailedPart::Projector
            | FailedPart::HostBuffer
            | FailedPart::HostKilled,
        ) => {}
    }
}

/// The speculative draft's own context failed after the main one was made: without the draft the model loads
/// (its context is what failed), at the cost of speculative decoding's speed-up. The figure is the draft's own
/// estimate (`[spec] estimated memory usage of … context`), else the allocation that failed.
fn draft(ev: &Evidence, because: &[FindingCode], out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some(drop_draft) = knob(ev, Knob::SpeculativeDraft) else {
        return;
    };
    let flags = match load.load.settings.speculative.as_deref() {
        Some("draft model") => "--model-draft".to_string(),
        Some(kind) => format!("--spec-type {kind}"),
        None => "--spec-type / --model-draft".to_string(),
    };
    let estimate = load
        .load
        .estimate
        .as_ref()
        .and_then(|e| e.draft_total.map(|q| (q, e.draft_line)));
    let figure = match (estimate, failed_size(load)) {
        (Some((q, line)), _) => format!(
            "the draft's context, estimated at {}{}, is not allocated",
            human(q.bytes),
            line.map(|l| format!(" (line {l})")).unwrap_or_default()
        ),
        (None, Some((size, device))) => format!(
            "the draft's allocation that failed ({}{}) is not made",
            human(size),
            device.map(|d| format!(" on {d}")).unwrap_or_default()
        ),
        (None, None) => "the draft's context is not made".to_string(),
    };
    out.push(Suggestion {
        setting: drop_draft.setting(flags),
        effect: format!(
            "no speculative decoding: the main model's context was allocated before the draft's failed, so without the draft the load needs only what it had; {figure}; generation loses the draft's speed-up"
        ),
        because: because.to_vec(),
    });
}

/// The KV cache failed (or the failure did not say what): a quantised cache, then a shorter context, each with
/// the KV cache's size before and after.
fn kv_settings(ev: &Evidence, because: &[FindingCode], out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let kv = kv_bytes(load).or_else(|| {
        let a = &load.load.actual;
        a.failed_part
            .filter(|(p, _)| *p == FailedPart::KvCache)
            .and(a.failed_allocation.as_ref().map(|al| al.size.bytes))
    });
    let Some(kv) = kv else {
        return;
    };
    let logged = crate::replay::figures::logged_kv_type(load);
    if let (KvType::F16, Some(kv_type)) = (logged, knob(ev, Knob::KvCacheType)) {
        let q8 = scaled(
            kv,
            KvType::Q8_0.bytes(32) as i64,
            KvType::F16.bytes(32) as i64,
        );
        out.push(Suggestion {
            setting: kv_type.setting("q8_0"),
            effect: format!(
                "the KV cache in 8 bits: {} → about {} ({} less); needs flash attention",
                human(kv),
                human(q8),
                human(kv - q8)
            ),
            because: because.to_vec(),
        });
    }
    if let (Some((per_slot, new)), Some(context)) = (halved_context(load), knob(ev, Knob::Context))
    {
        out.push(Suggestion {
            setting: context.setting(new),
            effect: format!(
                "the KV cache grows with the context: {} → about {} at {new} tokens instead of {per_slot} ({} less)",
                human(kv),
                human(scaled(kv, new, per_slot)),
                human(kv - scaled(kv, new, per_slot))
            ),
            because: because.to_vec(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{scaled, smaller_power_of_two};

    #[test]
    fn scaling_a_figure_never_overflows() {
        assert_eq!(scaled(4_757_131_264, 256, 512), 2_378_565_632);
        // A hostile batch of 2^40 tokens and a buffer near i64::MAX: no overflow, no panic.
        assert_eq!(scaled(i64::MAX, 1 << 39, 1 << 40), i64::MAX / 2);
        assert_eq!(scaled(10, 1, 0), 10);
    }

    #[test]
    fn the_largest_power_of_two_under_the_limit() {
        // raw/1003: 4,757,131,264 bytes at -ub 512 must come under 4 GiB: 256 gives 2.2 GiB.
        let size = 4_757_131_264i64;
        let limit = 4i64 << 30;
        assert_eq!(
            smaller_power_of_two(512, |n| size * n / 512 < limit),
            Some(256)
        );
        // Already at the floor: nothing smaller to offer.
        assert_eq!(smaller_power_of_two(32, |_| true), None);
        // Not a power of two: the next power below it.
        assert_eq!(smaller_power_of_two(384, |_| true), Some(256));
    }
}
