//! `working-set-exceeded`: the process allocated more on an Apple GPU than Metal's budget for it,
//! `recommendedMaxWorkingSetSize` (`docs/log-formats.md` §5.7). That budget is not the machine's RAM: past it
//! macOS pages GPU memory in and out, and generation crawls although nothing failed. The evidence is Metal's own
//! warning (`current allocated size is greater than the recommended max working set size`), or the allocation
//! (the `( current / budget )` figures of `allocated buffer` lines, or the Metal buffers) beyond the budget by
//! more than their rounding. The levers are computed from the excess: a smaller context, a quantised KV cache,
//! fewer layers on the GPU, each in the load's runtime's own knob ([`crate::model::knobs`]); standalone
//! llama.cpp also has `--fit on`, which sizes the load against the free working set.

use super::{finding, CheckDef, Context};
use crate::model::grid::Part;
use crate::model::knobs::{self, Knob};
use crate::model::kv_geometry::kv_type;
use crate::model::{
    human, Device, Finding, FindingCode, KvType, Launcher, Placer, Quantity, Severity, MIB,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::WorkingSetExceeded,
    summary: "an Apple GPU allocated beyond Metal's recommended working set: macOS pages GPU memory and generation crawls",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(ws) = load.load.actual.working_set.as_ref() else {
        return;
    };
    let metal: Vec<&Device> = load
        .grid
        .devices()
        .into_iter()
        .filter(|d| d.is_metal())
        .collect();
    // What the process allocated on the GPU: the largest `( current / budget )` figure, or its Metal buffers.
    let buffers = metal
        .iter()
        .filter_map(|d| load.grid.on(d, &Part::ALL))
        .fold(None::<(Quantity, Vec<u64>)>, |acc, c| match acc {
            None => Some((c.size, c.lines)),
            Some((q, mut l)) => {
                l.extend(c.lines);
                Some((
                    Quantity {
                        bytes: q.bytes + c.size.bytes,
                        low: q.low + c.size.low,
                        high: q.high + c.size.high,
                    },
                    l,
                ))
            }
        });
    let allocated = match (ws.peak, buffers) {
        (Some((p, line)), Some((b, _))) if p.bytes >= b.bytes => Some((p, vec![line])),
        (Some(_), Some((b, lines))) | (None, Some((b, lines))) => Some((b, lines)),
        (Some((p, line)), None) => Some((p, vec![line])),
        (None, None) => None,
    };
    let budget = ws.budget.map(|b| (b, ws.budget_line));
    // Beyond the budget by more than the figures' rounding.
    let excess = match (allocated.as_ref(), budget) {
        (Some((a, _)), Some((b, _))) => Some(a.low - b.high).filter(|&e| e > 0),
        _ => None,
    };
    if excess.is_none() && ws.exceeded_lines.is_empty() {
        return;
    }
    let mut lines: Vec<u64> = ws.exceeded_lines.clone();
    lines.extend(budget.and_then(|(_, l)| l));
    if let Some((_, l)) = allocated.as_ref() {
        lines.extend(l.iter().copied());
    }
    let figures = match (allocated.as_ref(), budget) {
        (Some((a, _)), Some((b, _))) => format!(
            "{} allocated on the GPU against Metal's recommended working set of {}{}",
            human(a.bytes),
            human(b.bytes),
            excess
                .map(|e| format!(", {} beyond it", human(e)))
                .unwrap_or_default()
        ),
        (Some((a, _)), None) => format!(
            "{} allocated on the GPU, beyond Metal's recommended working set (Metal's warning)",
            human(a.bytes)
        ),
        (None, Some((b, _))) => format!(
            "Metal warned that the allocation passed its recommended working set of {}",
            human(b.bytes)
        ),
        (None, None) => {
            "Metal warned that the allocation passed its recommended working set".to_string()
        }
    };
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "{figures}: macOS pages GPU memory in and out, so generation crawls although the load did not fail (the budget is Metal's, not the machine's RAM)"
        ),
        &levers(cx, &metal, excess.unwrap_or(0)),
        lines,
        metal.first().copied(),
        None,
    ));
}

/// The levers that bring the allocation back under the budget, each computed from `excess`, in the knobs of
/// the load's runtime.
fn levers(cx: &Context, metal: &[&Device], excess: i64) -> String {
    let load = cx.load;
    let runtime = load.load.runtime;
    let on_metal = |part: Part| -> i64 { metal.iter().map(|d| load.grid.bytes(d, part)).sum() };
    let kv = on_metal(Part::Kv);
    let weights = on_metal(Part::Weights);
    let settings = &load.load.settings;
    let parallel = settings.parallel.unwrap_or(1).max(1);
    let mut out: Vec<String> = Vec::new();
    let short = excess.max(1);
    // A smaller context: the KV cache shrinks in proportion.
    if let (Some(ctx), Some(context), true) = (
        settings.ctx_size,
        knobs::reaching(runtime, Knob::Context),
        kv > short,
    ) {
        let fits = ((ctx as i128 * (kv - short) as i128 / kv as i128) as i64) / 256 * 256;
        // Ollama's num_ctx is one slot's; llama.cpp's --ctx-size is all slots'.
        // Ollama's num_ctx is per slot (it starts the runner with num_ctx × parallel), in steps of 256.
        let value = match runtime.placer() {
            Placer::OllamaScheduler | Placer::LlamaFit(Launcher::Ollama) => {
                fits / parallel / 256 * 256
            }
            // Unknown: the knob's spelling is llama-server's `-c` (all slots), with Ollama's per-slot `num_ctx`
            // said beside it (`model::knobs`).
            Placer::LlamaFit(Launcher::User | Launcher::Unknown)
            | Placer::ServingEngine(_)
            | Placer::Unknown => fits,
        };
        if value >= 256 && fits < ctx {
            out.push(format!(
                "{} (the KV cache {} → about {})",
                context.setting(value),
                human(kv),
                human(kv / ctx.max(1) * fits)
            ));
        }
    }
    // A quantised KV cache, when it is f16 now.
    let f16 = settings
        .kv_cache_type
        .as_deref()
        .is_none_or(|t| kv_type(t) == Some(KvType::F16));
    if let (true, Some(kv_knob)) = (
        f16 && kv * 47 / 100 > short,
        knobs::reaching(runtime, Knob::KvCacheType),
    ) {
        out.push(format!(
            "{} (the KV cache {} → about {}; needs flash attention)",
            kv_knob.setting("q8_0"),
            human(kv),
            human(kv - kv * 47 / 100)
        ));
    }
    // Fewer layers on the GPU: each takes its share of the weights.
    if let (Some(offloaded), Some(layers_knob), true) = (
        load.load.actual.offloaded_layers.filter(|&n| n > 0),
        knobs::reaching(runtime, Knob::GpuLayers),
        weights > 0,
    ) {
        let per_layer = (weights / offloaded).max(1);
        let drop = (short + per_layer - 1) / per_layer;
        if drop < offloaded {
            out.push(format!(
                "{} ({} layers of about {} each leave the GPU; those run on the CPU)",
                layers_knob.setting(offloaded - drop),
                drop,
                human(per_layer)
            ));
        }
    }
    let fit = match runtime.placer() {
        Placer::LlamaFit(Launcher::User) => {
            "; --fit on (the default in recent builds, unless -ngl is set) sizes the load against Metal's free working set"
        }
        Placer::LlamaFit(Launcher::Unknown) => {
            "; --fit (the default in recent builds and under Ollama ≥ 0.30, unless -ngl or num_gpu is set) sizes the load against Metal's free working set"
        }
        Placer::OllamaScheduler
        | Placer::LlamaFit(Launcher::Ollama)
        | Placer::ServingEngine(_)
        | Placer::Unknown => "",
    };
    let amount = if excess > 0 {
        format!("free at least {}", human(excess.max(MIB)))
    } else {
        "allocate less on the GPU".to_string()
    };
    if out.is_empty() {
        format!("{amount}: a smaller context, a quantised KV cache or fewer layers on the GPU{fit}")
    } else {
        format!("{amount}: {}{fit}", out.join(", or "))
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;

    #[test]
    fn metal_budget_lines_are_read_in_their_units() {
        // sample-logs/008-…:139 (10^6 bytes) and sample-logs/201-…:113 (MiB): the same budget, 21845.34 MiB.
        let loads = loads_of(&[
            "ggml_backend_metal_log_allocated_size: allocated buffer, size =  4376.56 MiB, ( 4376.62 / 21845.34)",
            "ggml_metal_init: recommendedMaxWorkingSetSize  = 22906.50 MB",
        ]);
        let ws = loads[0].actual.working_set.as_ref().unwrap();
        let budget = ws.budget.unwrap();
        assert_eq!(budget.bytes, 22_906_500_000);
        assert_eq!(budget.bytes / crate::model::MIB, 21845);
        assert_eq!(ws.budget_line, Some(2));
        let (peak, line) = ws.peak.unwrap();
        assert_eq!((peak.bytes / crate::model::MIB, line), (4376, 1));
        assert!(ws.exceeded_lines.is_empty());
    }
}
