//! Suggestions for loads whose layers llama.cpp's `--fit` placed, under Ollama ≥ 0.30 or on its own: the knobs
//! that reach llama-server and its `--fit` (the GPUs it sees, one GPU without a split, the context, the KV
//! cache type, the `--fit` margin, the layers on the GPUs), in the runtime's own spelling from
//! [`crate::model::knobs`], each with the figures the `--fit` replay gives for it.

use super::{has, knob, round_up, visible_devices, Evidence};
use crate::model::kv_geometry::kv_type;
use crate::model::{
    human, Device, FindingCode, Knob, KvType, Launcher, Placer, Reconciled, Runtime, Spelling,
    Suggestion, Verdict, MIB,
};
use crate::replay::llama_server;

fn launcher(runtime: Runtime) -> Option<Launcher> {
    match runtime.placer() {
        Placer::LlamaFit(launcher) => Some(launcher),
        Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => None,
    }
}

fn needless_split(ev: &Evidence, launcher: Launcher, out: &mut Vec<Suggestion>) {
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
                .and_then(|i| load.load.gpus.get(i))
                .and_then(|g| g.name.clone());
            match name {
                Some(n) => format!("{d} ({n})"),
                None => d.to_string(),
            }
        })
        .collect();
    // Without a knob for the GPUs seen (llama-server whose launcher is unknown), the one-GPU setting below
    // still pins the model.
    if let Some(visible) = knob(ev, Knob::VisibleGpus) {
        visible_gpus(load, launcher, visible, &used, &names, m, out);
    }
    one_gpu(ev, launcher, &used, &names, out);
}

/// The GPUs llama-server sees, only those the measured sizes need.
fn visible_gpus(
    load: &Reconciled,
    launcher: Launcher,
    visible: &crate::model::KnobEntry,
    used: &[&Device],
    names: &[String],
    m: &crate::model::MeasuredReplay,
    out: &mut Vec<Suggestion>,
) {
    let value = match visible.spelling {
        Spelling::Env(_) | Spelling::ModelOption(_) => visible_devices(load, used),
        // llama.cpp's `--device` takes its own device names.
        Spelling::Flag(_) | Spelling::EitherLauncher { .. } => used
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    out.push(Suggestion {
        setting: visible.setting(value),
        effect: format!(
            "{} {} only: by the measured sizes the model fits there ({}), {} to spare above the --fit margin, with no transfer between GPUs per token",
            match launcher {
                Launcher::Ollama => "Ollama and llama-server see",
                Launcher::User | Launcher::Unknown => "llama-server uses",
            },
            names.join(", "),
            m.placement.gpus_with_layers()
                .map(|g| format!("{} of {} free", human(g.allocation), human(g.free)))
                .collect::<Vec<_>>()
                .join("; "),
            human(m.margin)
        ),
        because: vec![FindingCode::NeedlessSplit],
    });
}

/// Every layer on the one GPU that holds it.
fn one_gpu(
    ev: &Evidence,
    launcher: Launcher,
    used: &[&Device],
    names: &[String],
    out: &mut Vec<Suggestion>,
) {
    let load = ev.load;
    let one_gpu = knob(ev, Knob::OneGpu);
    if let ([device], Some(one_gpu)) = (used, one_gpu) {
        if let Some(index) = device.position() {
            out.push(Suggestion {
                setting: one_gpu.setting(index),
                effect: format!(
                    "{}every layer on {}, the other GPU{} left free for another model",
                    match (launcher, one_gpu.passed_as(index)) {
                        (Launcher::Ollama, Some(flags)) =>
                            format!("Ollama passes {flags} to llama-server: "),
                        (Launcher::Ollama, None) | (Launcher::User | Launcher::Unknown, _) => {
                            String::new()
                        }
                    },
                    names.join(", "),
                    if load.load.gpus.len() > 2 { "s" } else { "" }
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

fn cpu_offload(ev: &Evidence, launcher: Launcher, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let (Some(offloaded), Some(total)) = (
        load.load.actual.offloaded_layers,
        load.load.actual.total_layers,
    ) else {
        return;
    };
    let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    // The KV cache without the recurrent state, which stays f32 and does not grow with the context.
    let state = on_gpus(load, crate::model::Part::State)
        + load
            .grid
            .cell(&Device::Host, crate::model::Part::State)
            .map_or(0, |c| c.size.bytes);
    let kv_now = load
        .components
        .iter()
        .find(|c| c.component == crate::model::Component::Kv)
        .and_then(|c| c.actual)
        .map(|k| crate::model::Quantity {
            bytes: k.bytes - state,
            low: k.low - state,
            high: k.high - state,
        });
    if let (Some(ctx), Some(fits), Some(context)) = (
        load.load.settings.ctx_size,
        llama_server::largest_context_that_fits(load),
        knob(ev, Knob::Context),
    ) {
        if fits < ctx {
            let per_slot = fits / parallel / 256 * 256;
            if per_slot >= 256 {
                // Ollama's num_ctx is one slot's; llama.cpp's --ctx-size is all slots' (an unknown launcher's
                // knob is written as llama-server's, Ollama's beside it over the slots: `model::knobs`).
                let value = match launcher {
                    Launcher::Ollama => per_slot,
                    Launcher::User | Launcher::Unknown => per_slot * parallel,
                };
                out.push(Suggestion {
                    setting: context.setting(value),
                    effect: format!(
                        "all {total} layers on the GPUs by the measured sizes (now {offloaded}); the KV cache shrinks to {} of {}{}{}",
                        per_slot * parallel,
                        ctx,
                        kv_now
                            .map(|k| format!(", {} → about {}", human(k.bytes), human(k.bytes / ctx.max(1) * per_slot * parallel)))
                            .unwrap_or_default(),
                        knob(ev, Knob::ContextForEveryModel)
                            .map(|every| format!("; {} does the same for every model", every.setting(per_slot)))
                            .unwrap_or_default()
                    ),
                    because: vec![FindingCode::CpuOffloadWithFreeVram],
                });
            }
        }
    }
    let f16 = kv_cache_is_f16(load);
    let kv_type = knob(ev, Knob::KvCacheType).filter(|_| f16);
    if let (Some(kv_type), true) = (kv_type, load.load.settings.flash_attention != Some(false)) {
        if let Some(n) = offloaded_with(load, 53, None, None).filter(|&n| n > offloaded) {
            out.push(Suggestion {
                setting: kv_type.setting("q8_0"),
                effect: format!(
                    "the KV cache in 8 bits (about 53 % of f16{}): {n} of {total} layers on the GPUs by the measured sizes (now {offloaded}); needs flash attention",
                    kv_now.map(|k| format!(", {} → about {}", human(k.bytes), human(k.bytes * 53 / 100))).unwrap_or_default()
                ),
                because: vec![FindingCode::CpuOffloadWithFreeVram],
            });
        }
    }
    let target = llama_server::target(load);
    if let (true, Some(margin)) = (target > 512 * MIB, knob(ev, Knob::FitMargin)) {
        if let Some(n) = offloaded_with(load, 100, None, Some(512 * MIB)).filter(|&n| n > offloaded)
        {
            out.push(Suggestion {
                setting: margin.setting(512),
                effect: format!(
                    "--fit keeps 512 MiB free per GPU instead of {}: {n} of {total} layers on the GPUs by the measured sizes (now {offloaded}); less headroom for the desktop and other processes",
                    human(target)
                ),
                because: vec![FindingCode::CpuOffloadWithFreeVram],
            });
        }
    }
    let measured = ev.whatif.and_then(|w| w.measured.as_ref());
    if let (Some(m), Some(layers)) = (measured, knob(ev, Knob::GpuLayers)) {
        if m.placement.offloaded > offloaded {
            let n = m.placement.offloaded;
            let flags = layers.passed_as(n).unwrap_or_else(|| layers.setting(n));
            out.push(Suggestion {
                setting: layers.setting(n),
                effect: format!(
                    "{}{n} of {total} layers on the GPUs by the measured sizes ({} to spare on the tightest); with {}, --fit no longer moves layers, so recheck after a model or driver change",
                    match launcher {
                        Launcher::Ollama => format!("Ollama passes {flags}: "),
                        Launcher::User | Launcher::Unknown => String::new(),
                    },
                    human(m.margin.max(0)),
                    flags.split(' ').next().unwrap_or_default(),
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
    let Some(margin) = knob(ev, Knob::FitMargin) else {
        return;
    };
    let target = llama_server::target(load);
    let raised = round_up(target + gap);
    out.push(Suggestion {
        setting: margin.setting(raised / MIB),
        effect: format!(
            "--fit keeps {} free per GPU instead of {}, covering the {} the plan missed",
            human(raised),
            human(target),
            human(gap)
        ),
        because: vec![FindingCode::Underestimate],
    });
}

/// The parts of one kind on the GPUs (the reconcile stage's grid).
fn on_gpus(load: &Reconciled, part: crate::model::Part) -> i64 {
    load.grid.gpus_total(&[part]).map_or(0, |c| c.size.bytes)
}

/// Layers left on the host because the fit's dry run missed its target: the smallest changes that cover the
/// shortfall, each with the figures it rests on.
fn partial_offload(ev: &Evidence, out: &mut Vec<Suggestion>) {
    use crate::model::Part;
    let load = ev.load;
    let Some(fit) = load.load.estimate.as_ref().and_then(|e| e.fit.as_ref()) else {
        return;
    };
    // Compared at its upper bound (whole MiB, truncated), printed as the log printed it.
    let Some((short, printed_short)) = fit.reduce_by.map(|q| (q.high, q.low)) else {
        return;
    };
    let total = load.load.actual.total_layers.unwrap_or_default();
    let because = vec![FindingCode::PartialOffload];
    // One slot: the recurrent state is one per sequence, so -np 1 keeps 1/N of it.
    let parallel = load.load.settings.parallel.unwrap_or(1);
    let state = on_gpus(load, Part::State);
    if let (true, Some(np)) = (parallel > 1 && state > 0, knob(ev, Knob::Parallel)) {
        let saved = state / parallel * (parallel - 1);
        if saved > short {
            out.push(Suggestion {
                setting: np.setting(1),
                effect: format!(
                    "the recurrent state is one per slot ({} for {parallel} slots{}): one slot frees about {} on the GPU, more than the {} the fit was short, so all {total} layers fit with about {} to spare",
                    human(state),
                    if load.load.settings.parallel_auto == Some(true) {
                        ", n_parallel went to auto"
                    } else {
                        ""
                    },
                    human(saved),
                    human(printed_short),
                    human(saved - short)
                ),
                because: because.clone(),
            });
        }
    }
    // A smaller fit target: the user's --fit-target, without what llama-server adds on top (the draft's estimate).
    let target = fit.target.map(|t| t.low);
    let draft = load
        .load
        .estimate
        .as_ref()
        .and_then(|e| e.draft_total)
        .map_or(0, |d| d.low);
    if let (Some(target), Some(margin)) = (target, knob(ev, Knob::FitMargin)) {
        let users = target - draft;
        let lowered = (users - short) / (100 * MIB) * (100 * MIB);
        if lowered >= 256 * MIB && lowered < users {
            out.push(Suggestion {
                setting: margin.setting(lowered / MIB),
                effect: format!(
                    "--fit keeps {} free instead of {}{}: that covers the {} the fit was short, so all {total} layers fit; less headroom for other programs",
                    human(lowered),
                    human(users),
                    if draft > 0 {
                        format!(" (plus the {} draft estimate it adds on top)", human(draft))
                    } else {
                        String::new()
                    },
                    human(printed_short)
                ),
                because: because.clone(),
            });
        }
    }
    // A MoE model: its experts of the first layers in host memory, every layer's dense part on the GPU.
    if let (Some((n, freed)), Some(moe)) = (
        load.load
            .model
            .layout
            .as_ref()
            .and_then(|l| experts_to_host(l, short)),
        knob(ev, Knob::ExpertsOnHost),
    ) {
        out.push(Suggestion {
            setting: moe.setting(n),
            effect: format!(
                "the expert tensors of the first {n} layers ({}, from the model file) stay in host memory and every layer's attention and dense weights go to the GPU: that covers the {} the fit was short (`-ot \"blk\\.(0|…|{})\\.ffn_.*_exps=CPU\"` does the same); only the experts a token picks run on the CPU",
                human(freed),
                human(printed_short),
                n - 1
            ),
            because: because.clone(),
        });
    }
    // A quantised KV cache: the KV buffers shrink, the recurrent state (f32) does not.
    let kv = on_gpus(load, Part::Kv);
    let f16 = kv_cache_is_f16(load);
    if let (true, Some(kv_type)) = (f16 && kv > 0, knob(ev, Knob::KvCacheType)) {
        let saved = kv * 47 / 100;
        if saved > short {
            out.push(Suggestion {
                setting: kv_type.setting("q8_0"),
                effect: format!(
                    "the KV cache in 8 bits ({} → about {} on the GPU{}): more than the {} the fit was short, so all {total} layers fit; needs flash attention",
                    human(kv),
                    human(kv - saved),
                    if state > 0 {
                        format!("; the {} recurrent state stays f32", human(state))
                    } else {
                        String::new()
                    },
                    human(printed_short)
                ),
                because,
            });
        }
    }
}

/// Settings to try for a load placed by llama.cpp's `--fit`.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let Some(launcher) = launcher(ev.load.load.runtime) else {
        return;
    };
    let findings = ev.findings;
    if has(findings, FindingCode::NeedlessSplit) {
        needless_split(ev, launcher, out);
    }
    if has(findings, FindingCode::CpuOffloadWithFreeVram) {
        cpu_offload(ev, launcher, out);
    }
    if has(findings, FindingCode::Underestimate) {
        underestimate(ev, out);
    }
    if has(findings, FindingCode::PartialOffload) {
        partial_offload(ev, out);
    }
    if has(findings, FindingCode::ComputeImbalance) {
        compute_imbalance(ev, launcher, out);
    }
    if has(findings, FindingCode::ProjectorHeadroom) {
        projector_headroom(ev, out);
    }
}

/// One GPU's compute buffer is several times the others': a smaller micro-batch shrinks it, and when one GPU
/// holds the whole model (the replay against the free memory the fit saw), no split at all.
fn compute_imbalance(ev: &Evidence, launcher: Launcher, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let because = vec![FindingCode::ComputeImbalance];
    let largest = crate::checks::compute_imbalance::compute_per_gpu(load)
        .and_then(|(per_gpu, _)| per_gpu.into_iter().max_by_key(|(_, b, _)| *b));
    let ubatch = load.load.settings.ubatch_size.unwrap_or(512);
    if let (Some((device, bytes, _)), Some(ub), true) =
        (largest, knob(ev, Knob::Ubatch), ubatch >= 128)
    {
        out.push(Suggestion {
            setting: ub.setting(ubatch / 2),
            effect: format!(
                "the compute buffers scale with the micro-batch ({ubatch} now): {device}'s {} → about {}, freeing about {} there; prompts are processed in smaller steps",
                human(bytes),
                human(bytes / 2),
                human(bytes - bytes / 2)
            ),
            because: because.clone(),
        });
    }
    if let (Some((gpu, need, free)), Some(one)) = (
        crate::checks::suggest::one_gpu_holds_it(load),
        knob(ev, Knob::OneGpu),
    ) {
        let index = gpu.position().unwrap_or(0);
        // needless-split may have named the same setting already.
        if out.iter().any(|s| s.setting == one.setting(index)) {
            return;
        }
        out.push(Suggestion {
            setting: one.setting(index),
            effect: format!(
                "{}every layer and a single compute buffer on {gpu}: {} of the {} free the fit saw, {} to spare above the {} --fit margin; no second copy of the graph and no transfer between GPUs",
                match (launcher, one.passed_as(index)) {
                    (Launcher::Ollama, Some(flags)) => format!("Ollama passes {flags} to llama-server: "),
                    (Launcher::Ollama, None) | (Launcher::User | Launcher::Unknown, _) => String::new(),
                },
                human(need),
                human(free),
                human(free - need - llama_server::target(load)),
                human(llama_server::target(load))
            ),
            because,
        });
    }
}

/// The fewest layers whose expert tensors (`*_exps`, from the GGUF's layout), moved to host memory from the
/// first layer on as `--n-cpu-moe N` does, free at least `short`: the count and what they free.
pub(crate) fn experts_to_host(
    layout: &crate::model::ModelLayout,
    short: i64,
) -> Option<(i64, i64)> {
    let mut freed: i64 = 0;
    for (i, layer) in layout.layers.iter().enumerate() {
        freed += layer.expert_bytes? as i64;
        if freed >= short && freed > 0 {
            return Some((i as i64 + 1, freed));
        }
    }
    None
}

/// Ollama padded the margin for the offloaded projector: a target the user sets is not padded.
fn projector_headroom(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let Some(p) = ev.whatif.and_then(|w| w.projector_padding.as_ref()) else {
        return;
    };
    let Some(margin) = knob(ev, Knob::FitMargin) else {
        return;
    };
    let gained = match (p.layers_lost(), p.gpus_added()) {
        (0, _) => format!(
            "the model on {} GPU{} instead of {}",
            p.gpus_plain,
            if p.gpus_plain == 1 { "" } else { "s" },
            p.gpus_padded
        ),
        (_, _) => format!(
            "{} of {} layers on the GPUs by the measured sizes (now {})",
            p.layers_plain, p.total_layers, p.layers_padded
        ),
    };
    out.push(Suggestion {
        setting: margin.setting(crate::replay::fit::DEFAULT_FIT_TARGET / MIB),
        effect: format!(
            "Ollama no longer pads --fit's margin for the projector ({} free per GPU instead of {}, llama-server's own reserve for the projector kept): {gained}",
            human(p.plain_target.bytes),
            human(p.padded_target.bytes)
        ),
        because: vec![FindingCode::ProjectorHeadroom],
    });
}

/// True when the KV cache is f16 (the default, or set so): a quantised type would shrink it.
fn kv_cache_is_f16(load: &Reconciled) -> bool {
    load.load
        .settings
        .kv_cache_type
        .as_deref()
        .is_none_or(|t| kv_type(t) == Some(KvType::F16))
}

#[cfg(test)]
mod tests {
    use super::experts_to_host;
    use crate::model::{LayerAttention, LayerLayout, LayoutSource, ModelLayout, MIB};

    fn moe(experts: &[u64]) -> ModelLayout {
        ModelLayout {
            source: LayoutSource::Gguf {
                path: "model.gguf".to_string(),
            },
            architecture: "qwen3moe".to_string(),
            trained_context: None,
            layers: experts
                .iter()
                .enumerate()
                .map(|(i, &e)| LayerLayout {
                    index: i as u32,
                    dense_bytes: Some(40 * MIB as u64),
                    expert_bytes: Some(e),
                    attention: LayerAttention::Full {
                        k_elements: 1024,
                        v_elements: 1024,
                    },
                })
                .collect(),
            nonrepeating_bytes: None,
            output_bytes: None,
            projector_bytes: None,
        }
    }

    #[test]
    fn the_fewest_expert_layers_that_cover_the_shortfall() {
        let m = MIB as u64;
        let layout = moe(&[300 * m, 300 * m, 300 * m, 300 * m]);
        // 700 MiB short: three layers' experts (900 MiB) cover it, two (600 MiB) do not.
        assert_eq!(experts_to_host(&layout, 700 * MIB), Some((3, 900 * MIB)));
        assert_eq!(experts_to_host(&layout, 300 * MIB), Some((1, 300 * MIB)));
        // More than every expert: no N covers it.
        assert_eq!(experts_to_host(&layout, 2000 * MIB), None);
        // A dense model (no experts) or unknown sizes: nothing to move.
        assert_eq!(experts_to_host(&moe(&[0, 0]), 100 * MIB), None);
        let mut unknown = moe(&[300 * m]);
        unknown.layers[0].expert_bytes = None;
        assert_eq!(experts_to_host(&unknown, 100 * MIB), None);
    }
}
