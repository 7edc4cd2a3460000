//! What the levers asked for do to the load's figures, one [`LeverEffect`] per figure: the compute buffers and
//! a failed compute allocation by the micro-batch (as `src/checks/suggest/failure.rs` and `fit.rs` scale them),
//! the KV cache by the context and its type, the layers on the GPUs, and with `--ngl` what each GPU needs
//! against its free memory. The replays themselves (`super::super::llama_server::changed`, `super::super::ollama`)
//! place the layers; this module puts their result beside the figure as logged.

use super::super::figures::Changes;
use super::super::llama_server;
use super::{ComputeLaw, MicroBatch};
use crate::model::{
    human, Device, EffectFigure, EstimateReplay, FailedPart, LeverEffect, MeasuredReplay, Part,
    Reconciled,
};

/// The effects of the levers in `changes` on `load`, given the replays run with them; empty without a lever.
pub fn effects(
    load: &Reconciled,
    changes: &Changes,
    estimate: Option<&EstimateReplay>,
    measured: Option<&MeasuredReplay>,
) -> Vec<LeverEffect> {
    let mut out = Vec::new();
    let llama_placed = load.load.runtime.llama_cpp_places_layers();
    // The context and the slots move the compute buffers too where llama.cpp sized them for the log's cache.
    let compute_levers = levers(&[
        ("ubatch", changes.ubatch.is_some()),
        ("ctx", changes.ctx.is_some() && llama_placed),
        ("parallel", changes.parallel.is_some() && llama_placed),
        (
            "flash-attention",
            changes.flash_attention.is_some() && llama_placed,
        ),
    ]);
    if !compute_levers.is_empty() {
        compute(load, changes, compute_levers, &mut out);
    }
    let kv_levers = levers(&[
        ("ctx", changes.ctx.is_some()),
        ("parallel", changes.parallel.is_some()),
        ("kv-type", changes.kv_type.is_some()),
    ]);
    if !kv_levers.is_empty() {
        kv_cache(load, changes, llama_placed, estimate, kv_levers, &mut out);
    } else if changes.ubatch.is_some() && llama_placed {
        // A sliding-window cache holds `window + n_ubatch` cells a sequence, so the micro-batch alone moves
        // it (tests/data/oracle/b11549: gemma3 at -ub 512 → 1024, 2.25 → 2.88 MiB); said only when it does.
        let mut window = Vec::new();
        kv_cache(
            load,
            changes,
            llama_placed,
            estimate,
            vec!["ubatch".to_string()],
            &mut window,
        );
        out.extend(window.into_iter().filter(|e| e.before != Some(e.after)));
    }
    let all = levers(&[
        ("ubatch", changes.ubatch.is_some()),
        ("ngl", changes.gpu_layers.is_some()),
        ("ctx", changes.ctx.is_some()),
        ("kv-type", changes.kv_type.is_some()),
    ]);
    if all.is_empty() {
        return out;
    }
    let placed = if llama_placed {
        measured.map(|m| (&m.placement, "by the measured figures"))
    } else {
        estimate.map(|e| (&e.placement, "by the estimator's rules"))
    };
    if let Some((p, how)) = placed {
        let before = load
            .load
            .actual
            .offloaded_layers
            .or_else(|| load.load.estimate.as_ref().and_then(|e| e.layers.offload));
        out.push(LeverEffect {
            levers: all.clone(),
            figure: EffectFigure::Layers,
            device: None,
            before,
            after: p.offloaded,
            free: None,
            text: format!(
                "layers on the GPUs: {} → {}/{} {how}",
                before.map_or("not logged".to_string(), |b| format!("{b}/{}", p.total)),
                p.offloaded,
                p.total
            ),
        });
    }
    if let (Some(n), true, Some(m)) = (changes.gpu_layers, llama_placed, measured) {
        for g in m.placement.gpus_with_layers() {
            let left = g.free.saturating_sub(g.allocation);
            out.push(LeverEffect {
                levers: vec!["ngl".to_string()],
                figure: EffectFigure::GpuMemory,
                device: Some(g.device.clone()),
                before: None,
                after: g.allocation,
                free: Some(g.free),
                text: format!(
                    "{}: {} of the -ngl {n} layers need {} of {} free: {}",
                    g.device,
                    g.layers,
                    human(g.allocation),
                    human(g.free),
                    if left >= 0 {
                        format!("fits, {} to spare", human(left))
                    } else {
                        format!("over by {}", human(left.saturating_neg()))
                    }
                ),
            });
        }
    }
    out
}

fn levers(asked: &[(&str, bool)]) -> Vec<String> {
    asked
        .iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The compute buffers on each GPU, as the compute-imbalance check reads them (`src/checks/compute_imbalance.rs`,
/// `compute_per_gpu`: the buffer lines' low end, else the exit table's compute column); on a load without a GPU
/// buffer, the host's (the CPU compute buffer of a CPU-only load).
fn compute_buffers(load: &Reconciled) -> Vec<(Device, i64)> {
    let lines: Vec<(Device, i64)> = load
        .grid
        .gpus()
        .into_iter()
        .filter_map(|d| {
            load.grid
                .cell(d, Part::Graph)
                .map(|c| (d.clone(), c.size.low))
        })
        .collect();
    if !lines.is_empty() {
        return lines;
    }
    let table: Vec<(Device, i64)> = load
        .load
        .actual
        .breakdown
        .iter()
        .filter(|r| r.device.is_gpu() && r.compute.low > 0)
        .map(|r| (r.device.clone(), r.compute.low))
        .collect();
    if !table.is_empty()
        || load
            .grid
            .gpus()
            .iter()
            .any(|d| load.grid.cell(d, Part::Weights).is_some())
    {
        return table;
    }
    load.grid
        .cell(&Device::Host, Part::Graph)
        .filter(|c| c.size.bytes > 0)
        .map(|c| vec![(Device::Host, c.size.bytes)])
        .unwrap_or_default()
}

/// A compute buffer at the changed settings: by llama.cpp's law ([`ComputeLaw`]) when the log gives its cache
/// geometry, else linear in the micro-batch.
fn compute_after(law: Option<&ComputeLaw>, micro: Option<MicroBatch>, before: i64) -> i64 {
    match (law, micro) {
        (Some(l), _) => l.scale(before),
        (None, Some(m)) => m.scale(before),
        (None, None) => before,
    }
}

fn compute(load: &Reconciled, changes: &Changes, levers: Vec<String>, out: &mut Vec<LeverEffect>) {
    let micro = changes.ubatch.map(|u| MicroBatch::of(load, u));
    let law = ComputeLaw::of(load, changes);
    let how = |m: Option<MicroBatch>| {
        let mut how = Vec::new();
        if let Some(m) = m {
            how.push(format!("the micro-batch {}", m.words()));
        }
        match &law {
            Some(l) => how.push(l.words()),
            None if m.is_some() => how.push("linear in n_ubatch".to_string()),
            None => {}
        }
        how.join("; ")
    };
    if micro.is_none() && law.is_none() {
        return;
    }
    let a = &load.load.actual;
    if let (Some(m), Some((FailedPart::Compute, _)), Some(failed)) =
        (micro, a.failed_part, &a.failed_allocation)
    {
        let before = failed.size.bytes;
        let after = compute_after(law.as_ref(), Some(m), before);
        out.push(LeverEffect {
            levers: vec!["ubatch".to_string()],
            figure: EffectFigure::FailedAllocation,
            device: failed.device.clone(),
            before: Some(before),
            after,
            free: None,
            text: format!(
                "the compute buffer the load failed to allocate{}: {} → about {} ({})",
                failed
                    .device
                    .as_ref()
                    .map(|d| format!(" on {d}"))
                    .unwrap_or_default(),
                human(before),
                human(after),
                how(Some(m))
            ),
        });
    }
    for (device, before) in compute_buffers(load) {
        let after = compute_after(law.as_ref(), micro, before);
        let change = if after == before {
            "unchanged".to_string()
        } else if after < before {
            format!("freeing about {}", human(before - after))
        } else {
            format!("about {} more", human(after.saturating_sub(before)))
        };
        let name = match &device {
            Device::Host => "the CPU".to_string(),
            d => d.to_string(),
        };
        out.push(LeverEffect {
            levers: levers.clone(),
            figure: EffectFigure::ComputeBuffer,
            device: Some(device.clone()),
            before: Some(before),
            after,
            free: None,
            text: format!(
                "{name}'s compute buffer: {} → about {}, {change} ({})",
                human(before),
                human(after),
                how(micro)
            ),
        });
    }
}

fn kv_cache(
    load: &Reconciled,
    changes: &Changes,
    llama_placed: bool,
    estimate: Option<&EstimateReplay>,
    levers: Vec<String>,
    out: &mut Vec<LeverEffect>,
) {
    let type_words = changes.kv_type.map(|t| {
        format!(
            "{} → {}",
            super::super::figures::logged_kv_type(load).name(),
            t.name()
        )
    });
    let (before, after, how) = if llama_placed {
        let Some(kv) = llama_server::kv_change(load, changes) else {
            return;
        };
        let mut how = vec![if kv.by_layout {
            "by the measured KV buffers, changed as llama.cpp sizes the model's caches".to_string()
        } else {
            "by the measured KV buffers".to_string()
        }];
        match changes.slots(load) {
            Some((logged, new)) if changes.ctx.is_some() || changes.parallel.is_some() => {
                how.push(super::super::figures::slot_words(load, logged, new));
            }
            Some(_) | None if changes.ctx.is_some() => how.push(format!(
                "context {} → {} tokens in all",
                kv.context.0, kv.context.1
            )),
            Some(_) | None => {}
        }
        how.extend(type_words);
        if changes
            .kv_type
            .is_some_and(|t| t != crate::model::KvType::F16)
            && load.load.settings.flash_attention == Some(false)
        {
            // tests/data/oracle/b11549/logs/llama-gqa--kq8_0-vq8_0-faoff.log:16.
            how.push(
                "only with flash attention, which this load ran without: llama.cpp refuses a quantized V cache \
                 without it (\"quantized V cache requires flash_attn to be enabled\"), so turn it on too (-fa on; \
                 Ollama: OLLAMA_FLASH_ATTENTION=1)"
                    .to_string(),
            );
        }
        if let Some(state) = kv.state {
            how.push(format!(
                "the recurrent state's {} included, which no context or KV type changes",
                human(state)
            ));
        }
        (kv.before, kv.after, how.join("; "))
    } else {
        let (Some(e), Some(logged)) = (estimate, load.load.estimate.as_ref().and_then(|e| e.kv))
        else {
            return;
        };
        let f = &e.figures;
        let after = if f.per_layer.is_empty() {
            f.layer_kv.saturating_mul(f.blocks)
        } else {
            f.per_layer
                .iter()
                .fold(0i64, |sum, (_, kv)| sum.saturating_add(*kv))
        };
        let mut how = vec!["by the estimate's memory.required.kv".to_string()];
        match changes.slots(load) {
            Some((logged, new)) if changes.ctx.is_some() || changes.parallel.is_some() => {
                how.push(super::super::figures::slot_words(load, logged, new));
            }
            Some(_) | None => {
                if let Some((new, logged)) = changes.context_tokens(load) {
                    how.push(format!("context {logged} → {new} tokens in all"));
                }
            }
        }
        how.extend(type_words);
        (logged.bytes, after, how.join("; "))
    };
    out.push(LeverEffect {
        levers,
        figure: EffectFigure::KvCache,
        device: None,
        before: Some(before),
        after,
        free: None,
        text: format!("the KV cache: {} → {} ({how})", human(before), human(after)),
    });
}
