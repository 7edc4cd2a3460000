//! Suggestions for the llama-server era (Ollama ≥ 0.30): only knobs that reach llama-server and its `--fit`
//! (`CUDA_VISIBLE_DEVICES`, `main_gpu` → `--split-mode none --main-gpu`, `num_ctx` / `OLLAMA_CONTEXT_LENGTH`,
//! `OLLAMA_KV_CACHE_TYPE`, `LLAMA_ARG_FIT_TARGET`, `num_gpu` → `-ngl`), each with the figures the `--fit`
//! replay gives for it.

use super::{has, round_up, visible_devices, Evidence};
use crate::model::{human, Device, FindingCode, Reconciled, Suggestion, Verdict, MIB};
use crate::replay::llama_server;

fn needless_split(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some(m) = ev.whatif.and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let used: Vec<&Device> = m.placement.gpus_with_layers().map(|g| &g.device).collect();
    let names: Vec<String> = used
        .iter()
        .map(|d| {
            let name = d
                .position()
                .and_then(|i| load.gpus.get(i))
                .and_then(|g| g.name.clone());
            match name {
                Some(n) => format!("{d} ({n})"),
                None => d.to_string(),
            }
        })
        .collect();
    out.push(Suggestion {
        setting: format!("CUDA_VISIBLE_DEVICES={}", visible_devices(load, &used)),
        effect: format!(
            "Ollama and llama-server see {} only: by the measured sizes the model fits there ({}), {} to spare above the --fit margin, with no transfer between GPUs per token",
            names.join(", "),
            m.placement.gpus_with_layers()
                .map(|g| format!("{} of {} free", human(g.allocation), human(g.free)))
                .collect::<Vec<_>>()
                .join("; "),
            human(m.margin)
        ),
        because: vec![FindingCode::NeedlessSplit],
    });
    if let [device] = used.as_slice() {
        if let Some(index) = device.position() {
            out.push(Suggestion {
                setting: format!("main_gpu={index}"),
                effect: format!(
                    "Ollama passes --split-mode none --main-gpu {index} to llama-server: every layer on {}, the other GPU{} left free for another model",
                    names.join(", "),
                    if load.gpus.len() > 2 { "s" } else { "" }
                ),
                because: vec![FindingCode::NeedlessSplit],
            });
        }
    }
}

/// How many layers the GPUs take when the KV cache is `kv_percent` % of its size, or at `context` tokens.
fn offloaded_with(
    load: &Reconciled,
    kv_percent: i64,
    context: Option<i64>,
    target: Option<i64>,
) -> Option<i64> {
    llama_server::fit_with(load, kv_percent, context, target).map(|o| o.offloaded() as i64)
}

fn cpu_offload(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let (Some(offloaded), Some(total)) = (load.actual.offloaded_layers, load.actual.total_layers)
    else {
        return;
    };
    let parallel = load.settings.parallel.unwrap_or(1).max(1);
    let kv_now = load
        .components
        .iter()
        .find(|c| c.component == crate::model::Component::Kv)
        .and_then(|c| c.actual);
    if let (Some(ctx), Some(fits)) = (
        load.settings.ctx_size,
        llama_server::largest_context_that_fits(load),
    ) {
        if fits < ctx {
            let per_slot = fits / parallel / 256 * 256;
            if per_slot >= 256 {
                out.push(Suggestion {
                    setting: format!("num_ctx={per_slot}"),
                    effect: format!(
                        "all {total} layers on the GPUs by the measured sizes (now {offloaded}); the KV cache shrinks to {} of {}{}; OLLAMA_CONTEXT_LENGTH={per_slot} does the same for every model",
                        per_slot * parallel,
                        ctx,
                        kv_now
                            .map(|k| format!(", {} → about {}", human(k.bytes), human(k.bytes / ctx.max(1) * per_slot * parallel)))
                            .unwrap_or_default()
                    ),
                    because: vec![FindingCode::CpuOffloadWithFreeVram],
                });
            }
        }
    }
    let f16 = load
        .settings
        .kv_cache_type
        .as_deref()
        .is_none_or(|t| t == "f16");
    if f16 && load.settings.flash_attention != Some(false) {
        if let Some(n) = offloaded_with(load, 53, None, None).filter(|&n| n > offloaded) {
            out.push(Suggestion {
                setting: "OLLAMA_KV_CACHE_TYPE=q8_0".to_string(),
                effect: format!(
                    "the KV cache in 8 bits (about 53 % of f16{}): {n} of {total} layers on the GPUs by the measured sizes (now {offloaded}); needs flash attention",
                    kv_now.map(|k| format!(", {} → about {}", human(k.bytes), human(k.bytes * 53 / 100))).unwrap_or_default()
                ),
                because: vec![FindingCode::CpuOffloadWithFreeVram],
            });
        }
    }
    let target = llama_server::target(load);
    if target > 512 * MIB {
        if let Some(n) = offloaded_with(load, 100, None, Some(512 * MIB)).filter(|&n| n > offloaded)
        {
            out.push(Suggestion {
                setting: format!("LLAMA_ARG_FIT_TARGET={}", 512),
                effect: format!(
                    "--fit keeps 512 MiB free per GPU instead of {}: {n} of {total} layers on the GPUs by the measured sizes (now {offloaded}); less headroom for the desktop and other processes",
                    human(target)
                ),
                because: vec![FindingCode::CpuOffloadWithFreeVram],
            });
        }
    }
    if let Some(m) = ev.whatif.and_then(|w| w.measured.as_ref()) {
        if m.placement.offloaded > offloaded {
            out.push(Suggestion {
                setting: format!("num_gpu={}", m.placement.offloaded),
                effect: format!(
                    "Ollama passes -ngl {}: {} of {total} layers on the GPUs by the measured sizes ({} to spare on the tightest); with -ngl, --fit no longer moves layers, so recheck after a model or driver change",
                    m.placement.offloaded,
                    m.placement.offloaded,
                    human(m.margin.max(0))
                ),
                because: vec![FindingCode::CpuOffloadWithFreeVram],
            });
        }
    }
}

/// The plan was smaller than what was allocated: more margin keeps `--fit` from filling the GPU to the brim.
fn underestimate(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let gap = load
        .devices
        .iter()
        .filter(|d| !d.host && d.verdict == Verdict::Under)
        .filter_map(|d| Some(d.actual?.high - d.estimated?.low))
        .max();
    let Some(gap) = gap.filter(|&g| g > 0) else {
        return;
    };
    let target = llama_server::target(load);
    let raised = round_up(target + gap);
    out.push(Suggestion {
        setting: format!("LLAMA_ARG_FIT_TARGET={}", raised / MIB),
        effect: format!(
            "--fit keeps {} free per GPU instead of {}, covering the {} the plan missed",
            human(raised),
            human(target),
            human(gap)
        ),
        because: vec![FindingCode::Underestimate],
    });
}

/// Settings to try for a load placed by llama.cpp's `--fit`.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let findings = ev.findings;
    if has(findings, FindingCode::NeedlessSplit) {
        needless_split(ev, out);
    }
    if has(findings, FindingCode::CpuOffloadWithFreeVram) {
        cpu_offload(ev, out);
    }
    if has(findings, FindingCode::Underestimate) {
        underestimate(ev, out);
    }
}
