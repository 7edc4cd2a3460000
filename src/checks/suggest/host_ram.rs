//! Suggestions for the host RAM llama-server keeps while it serves (`prompt-cache-over-limit`,
//! `serving-host-memory`), computed from the load's timeline (`src/model/timeline.rs`): the checkpoints per slot
//! that bring one entry under the cache's limit (an entry is the prompt's state plus its checkpoints, each the
//! size the log printed), `--cache-ram 0` when a prompt's state alone is over the limit or the host killed the
//! server, the limit that keeps the printed worst case within the host's free memory, and the fewest slots
//! (`-np`, each slot holding its own checkpoints) that do the same. The knob is the
//! load's runtime's (`LLAMA_ARG_*` under Ollama ≥ 0.30); a serving excerpt that names no launcher gets
//! llama-server's own flags, the program whose lines these are (a wrapper such as LM Studio has its own
//! setting for the same thing).

use super::Evidence;
use crate::checks::serving_host_memory::worst_case;
use crate::model::knobs::{self, Knob, KnobEntry};
use crate::model::{human, FindingCode, Runtime, Suggestion, MIB};

/// The knob of the load's runtime, else llama-server's flag when the runtime is not known.
pub fn host_ram_knob(runtime: Runtime, knob: Knob) -> Option<&'static KnobEntry> {
    match runtime {
        Runtime::Unknown => knobs::reaching(Runtime::LlamaCpp, knob),
        Runtime::OllamaEstimator
        | Runtime::OllamaEngine
        | Runtime::OllamaPlacerUnknown
        | Runtime::OllamaFit
        | Runtime::LlamaCpp
        | Runtime::LlamaCppLauncherUnknown
        | Runtime::Vllm
        | Runtime::Sglang => knobs::reaching(runtime, knob),
    }
}

fn has(ev: &Evidence, code: FindingCode) -> bool {
    ev.findings.iter().any(|f| f.code == code)
}

/// Settings to try for the host RAM of serving.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = &ev.load.load;
    let Some(t) = load.timeline.as_ref() else {
        return;
    };
    let cache_ram = host_ram_knob(load.runtime, Knob::CacheRam);
    let checkpoints = host_ram_knob(load.runtime, Knob::CtxCheckpoints);
    if has(ev, FindingCode::PromptCacheOverLimit) {
        let because = vec![FindingCode::PromptCacheOverLimit];
        if let (Some(entry), Some(limit)) = (t.peaks.entry, t.limits.prompt_cache) {
            let one = t.peaks.checkpoint_size.filter(|_| entry.checkpoints > 0);
            let state = match one {
                Some(one) => entry.size.minus(one.size.times(entry.checkpoints)),
                None => entry.size,
            };
            match (one, checkpoints) {
                (Some(one), Some(k)) if state.high < limit.size.low && one.size.high > 0 => {
                    let fit =
                        ((limit.size.low - state.high) / one.size.high).min(entry.checkpoints - 1);
                    let smaller = state.plus(one.size.times(fit));
                    out.push(Suggestion {
                        setting: k.setting(fit),
                        effect: format!(
                            "the entry of line {} is its {} of state plus {} checkpoints of {}: with {fit} it takes {}, within the {} limit (line {})",
                            entry.line,
                            human(state.bytes),
                            entry.checkpoints,
                            human(one.size.bytes),
                            human(smaller.bytes),
                            human(limit.size.bytes),
                            limit.line
                        ),
                        because,
                    });
                }
                (Some(_), Some(_)) | (Some(_), None) | (None, Some(_)) | (None, None) => {
                    if let Some(k) = cache_ram.filter(|_| state.low > limit.size.high) {
                        out.push(Suggestion {
                            setting: k.setting(0),
                            effect: format!(
                                "no prompt cache: the {} entry of line {} ({} tokens, more than the {} limit by itself) is never kept; a prompt that differs from the slot's is processed from its start",
                                human(entry.size.bytes),
                                entry.line,
                                entry.tokens,
                                human(limit.size.bytes)
                            ),
                            because,
                        });
                    }
                }
            }
        }
    }
    if has(ev, FindingCode::ServingHostMemory) {
        let because = vec![FindingCode::ServingHostMemory];
        if t.killed.is_some() {
            if let (Some(k), Some(peak)) = (cache_ram, t.peaks.prompt_cache) {
                out.push(Suggestion {
                    setting: k.setting(0),
                    effect: format!(
                        "no prompt cache: the {} it held at line {} is never allocated",
                        human(peak.size.bytes),
                        peak.line
                    ),
                    because,
                });
            }
            return;
        }
        let Some(free) = t.limits.host_free else {
            return;
        };
        let slots = load.settings.parallel.unwrap_or(1);
        let Some((worst, _)) = worst_case(t, slots) else {
            return;
        };
        let limit = t.limits.prompt_cache.map_or(0, |l| l.size.high);
        let checkpoints_worst = worst.high - limit;
        // The largest limit, in steps of 256 MiB, that keeps the worst case within the free memory.
        let step = 256 * MIB;
        let room = (free.size.low - checkpoints_worst) / step * step;
        if let Some(k) = cache_ram.filter(|_| room > 0) {
            out.push(Suggestion {
                setting: k.setting(room / MIB),
                effect: format!(
                    "the worst case becomes {} of cache plus {} of checkpoints, within the {} free at load (line {})",
                    human(room),
                    human(checkpoints_worst),
                    human(free.size.bytes),
                    free.line
                ),
                because: because.clone(),
            });
        }
        fewer_slots(ev, t, slots, free, because, out);
    }
}

/// Fewer slots (`-np`): each slot carries its own checkpoints, so the worst case is the cache limit plus
/// slots × checkpoints per slot × one checkpoint; the most slots whose worst case fits the free memory, when
/// that is fewer than the load's and at least one. When the log printed no slot count, one slot was assumed
/// and nothing is offered: the effect is not computed.
fn fewer_slots(
    ev: &Evidence,
    t: &crate::model::ServingTimeline,
    slots: i64,
    free: crate::model::Figure,
    because: Vec<FindingCode>,
    out: &mut Vec<Suggestion>,
) {
    let load = &ev.load.load;
    let (Some(np), Some(_)) = (
        host_ram_knob(load.runtime, Knob::Parallel),
        load.settings.parallel,
    ) else {
        return;
    };
    let (Some(per_slot), Some(one)) = (t.limits.checkpoints_per_slot, t.peaks.checkpoint_size)
    else {
        return;
    };
    let slot_worst = one.size.times(per_slot.value);
    let limit = t.limits.prompt_cache.map_or(0, |l| l.size.high);
    if slots <= 1 || slot_worst.high <= 0 || free.size.low <= limit {
        return;
    }
    let fit = ((free.size.low - limit) / slot_worst.high).min(slots - 1);
    if fit < 1 {
        return;
    }
    out.push(Suggestion {
        setting: np.setting(fit),
        effect: format!(
            "each slot may hold {} checkpoints of {} (lines {} and {}), {} per slot: with {fit} slot(s) instead of {slots} the worst case becomes {} of cache plus {}, within the {} free at load (line {}); fewer requests are served at once",
            per_slot.value,
            human(one.size.bytes),
            per_slot.line,
            one.line,
            human(slot_worst.bytes),
            human(limit),
            human(slot_worst.times(fit).bytes),
            human(free.size.bytes),
            free.line
        ),
        because,
    });
}
