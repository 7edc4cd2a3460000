//! Suggestions for loads Ollama's scheduler placed (its estimator, or its engine's measured layouts, ≤ 0.2x):
//! the knobs that reach it (the GPUs it sees, the layers on the GPUs, the overhead it reserves, the spread,
//! the context, the batch, and ollama37's graph multiplier), spelt as [`crate::model::knobs`] has them, each
//! with the effect the replay predicts.

use super::{has, knob, round_up, visible_devices, Evidence};
use crate::model::{human, Component, Device, Finding, FindingCode, Knob, Suggestion};
use crate::replay::max_ctx::{largest_num_ctx, Judge};
use crate::replay::{replay, Changes};

fn needless_split(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some(m) = ev.whatif.and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let used: Vec<&Device> = m.placement.gpus_with_layers().map(|g| &g.device).collect();
    let Some(visible) = knob(ev, Knob::VisibleGpus) else {
        return;
    };
    out.push(Suggestion {
        setting: visible.setting(visible_devices(load, &used)),
        effect: format!(
            "the model on {} only: by the measured sizes {}",
            used.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            m.verdict
        ),
        because: vec![FindingCode::NeedlessSplit],
    });
    // With the GPUs pinned, would the estimate itself still offload layers?
    let positions: Vec<usize> = used.iter().filter_map(|d| d.position()).collect();
    let pinned = Changes {
        gpus: Some(positions.clone()),
        ..Changes::default()
    };
    let Some(est) = replay(load, &pinned).and_then(|w| w.estimate) else {
        return;
    };
    let p = &est.placement;
    let layers = knob(ev, Knob::GpuLayers);
    if let (false, Some(layers)) = (p.fully_offloaded(), layers) {
        out.push(Suggestion {
            setting: layers.setting(p.total),
            effect: format!(
                "forces all {} layers onto the pinned GPU{}: the estimate alone would place only {} of them there",
                p.total,
                if used.len() == 1 { "" } else { "s" },
                p.offloaded
            ),
            because: vec![FindingCode::NeedlessSplit],
        });
        graph_multiplier(ev, &pinned, out);
    }
}

/// For ollama37 logs (Kepler GPUs only run on that fork): the graph multiplier that lets the estimate place the
/// whole model on the pinned GPUs, if the measured compute buffers stay under it.
fn graph_multiplier(ev: &Evidence, pinned: &Changes, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some(multiplier) = knob(ev, Knob::GraphMultiplier) else {
        return;
    };
    let kepler = load
        .load
        .gpus
        .iter()
        .any(|g| g.compute.as_deref().is_some_and(|c| c.starts_with("3.")));
    if !kepler {
        return;
    }
    // The multiplier exists from the fork's 2025-11-06 builds; an earlier build the replay named has none.
    if ev
        .whatif
        .and_then(|w| w.charges.as_ref())
        .is_some_and(|c| c.family != crate::replay::Family::Ollama37Safety.name())
    {
        return;
    }
    let (Some(e), Some(graph)) = (
        load.load.estimate.as_ref(),
        load.components
            .iter()
            .find(|c| c.component == Component::Graph),
    ) else {
        return;
    };
    let (Some(logged), Some(measured)) = (e.graph_full, graph.actual) else {
        return;
    };
    // The largest fraction of the logged graph (in 5 % steps) with which the estimate fits.
    let fits = |percent: i64| {
        let changes = Changes {
            graph_multiplier: Some(percent as f64 / 100.0),
            ..pinned.clone()
        };
        replay(load, &changes)
            .and_then(|w| w.estimate)
            .is_some_and(|r| r.placement.fully_offloaded())
    };
    let Some(percent) = (1..=19).rev().map(|k| k * 5).find(|&p| fits(p)) else {
        return;
    };
    let graph_then = logged.bytes * percent / 100;
    if graph_then < measured.high {
        return;
    }
    out.push(Suggestion {
        setting: multiplier.setting(format!("{:.2}", 2.5 * percent as f64 / 100.0)),
        effect: format!(
            "ollama37 only, {percent} % of the multiplier in effect (default 2.5; scale yours by {:.2} if you set one): the graph estimate becomes {} per GPU (measured compute buffers: {} in all) and the estimate places every layer on the pinned GPU",
            percent as f64 / 100.0,
            human(graph_then),
            human(measured.bytes)
        ),
        because: vec![FindingCode::NeedlessSplit, FindingCode::GraphChargedPerGpu],
    });
}

fn cpu_offload(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some(m) = ev.whatif.and_then(|w| w.measured.as_ref()) else {
        return;
    };
    let Some(layers) = knob(ev, Knob::GpuLayers) else {
        return;
    };
    out.push(Suggestion {
        setting: layers.setting(m.placement.offloaded),
        effect: format!(
            "{} of {} layers on the GPUs by the measured sizes, {} to spare on the tightest",
            m.placement.offloaded,
            m.placement.total,
            human(m.margin.max(0))
        ),
        because: vec![FindingCode::CpuOffloadWithFreeVram],
    });
    let used = load
        .load
        .estimate
        .as_ref()
        .map(|e| e.layers.split.iter().filter(|&&n| n > 0).count().max(1))
        .unwrap_or(1);
    if let (true, Some(spread)) = (load.load.gpus.len() > used, knob(ev, Knob::Spread)) {
        out.push(Suggestion {
            setting: spread.setting(1),
            effect: format!(
                "spreads the model over all {} GPUs instead of {used}",
                load.load.gpus.len()
            ),
            because: vec![FindingCode::CpuOffloadWithFreeVram],
        });
    }
}

fn overhead(ev: &Evidence, findings: &[Finding], out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let mut need = 0i64;
    let mut reasons = Vec::new();
    let mut because = Vec::new();
    for d in &load.devices {
        if let (Some(e), Some(a), false) = (d.estimated, d.actual, d.host) {
            if a.low > e.high && has(findings, FindingCode::Underestimate) {
                need = need.max(a.high - e.low);
                reasons.push(format!(
                    "{} exceeds its estimate by up to {}",
                    d.device,
                    human(a.high - e.low)
                ));
                because.push(FindingCode::Underestimate);
            }
        }
    }
    let floor = crate::reconcile::terms::minimum_memory(
        load.load
            .estimate
            .as_ref()
            .and_then(|e| e.library.as_deref()),
    );
    if has(findings, FindingCode::UnattributedMemory) {
        for o in &load.observed {
            if let Some(u) = o.unattributed {
                if u.high > floor {
                    need = need.max(u.high - floor);
                    reasons.push(format!(
                        "{} holds {} beyond its buffers, {} more than Ollama's per-GPU minimum",
                        o.device,
                        human(u.bytes),
                        human(u.high - floor)
                    ));
                    because.push(FindingCode::UnattributedMemory);
                }
            }
        }
    }
    let Some(overhead) = knob(ev, Knob::GpuOverhead).filter(|_| need > 0) else {
        return;
    };
    because.dedup();
    let reserve = round_up(need);
    out.push(Suggestion {
        setting: overhead.setting(reserve),
        effect: format!(
            "reserves {} on every GPU, covering what the estimate misses: {}",
            human(reserve),
            reasons.join("; ")
        ),
        because,
    });
}

fn context_and_batch(ev: &Evidence, findings: &[Finding], out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let kv = load
        .components
        .iter()
        .find(|c| c.component == Component::Kv);
    let oom = has(findings, FindingCode::LoadFailed)
        && load
            .load
            .actual
            .failure
            .as_deref()
            .is_some_and(super::super::load_failed::is_out_of_memory);
    let kv_under = findings.iter().any(|f| {
        f.code == FindingCode::KvMismatch && f.severity >= crate::model::Severity::Warning
    });
    if oom || kv_under {
        if let (Some(ctx), Some(kv)) = (
            load.load.settings.ctx_size,
            kv.and_then(|k| k.actual.or(k.estimated)),
        ) {
            let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
            let per_slot = ctx / parallel;
            let because = if oom {
                vec![FindingCode::LoadFailed]
            } else {
                vec![FindingCode::KvMismatch]
            };
            // `whatif --max-ctx`'s figure by the measured sizes, when the replay can tell.
            let kv_type = crate::replay::figures::logged_kv_type(load);
            let largest = largest_num_ctx(load, &Changes::default(), kv_type, Judge::Measured)
                .and_then(|r| r.num_ctx)
                .filter(|&n| n < per_slot);
            let context = knob(ev, Knob::Context);
            if let (Some(n), Some(context)) = (largest, context) {
                out.push(Suggestion {
                    setting: context.setting(n),
                    effect: format!(
                        "the largest num_ctx that keeps every layer on the GPUs by the measured sizes (whatif --max-ctx): the KV cache {} → about {}",
                        human(kv.bytes),
                        human(kv.bytes / per_slot.max(1) * n)
                    ),
                    because,
                });
            } else if let (true, Some(context)) = (per_slot >= 2048, context) {
                out.push(Suggestion {
                    setting: context.setting(per_slot / 2),
                    effect: format!(
                        "halves the KV cache, {} → about {}",
                        human(kv.bytes),
                        human(kv.bytes / 2)
                    ),
                    because,
                });
            }
        }
    }
    let graph_under = findings
        .iter()
        .any(|f| f.code == FindingCode::Underestimate && f.component == Some(Component::Graph));
    if oom || graph_under {
        if let (Some(batch), Some(graph)) = (
            load.load.settings.batch_size,
            load.components
                .iter()
                .find(|c| c.component == Component::Graph)
                .and_then(|g| g.actual),
        ) {
            if let (true, Some(batch_knob)) = (batch >= 128, knob(ev, Knob::Batch)) {
                out.push(Suggestion {
                    setting: batch_knob.setting(batch / 2),
                    effect: format!(
                        "the compute buffers grow with the batch: about {} → {}",
                        human(graph.bytes),
                        human(graph.bytes / 2)
                    ),
                    because: if oom {
                        vec![FindingCode::LoadFailed]
                    } else {
                        vec![FindingCode::Underestimate]
                    },
                });
            }
        }
    }
}

/// Settings to try for a load placed by Ollama's estimator.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let findings = ev.findings;
    if has(findings, FindingCode::NeedlessSplit) {
        needless_split(ev, out);
    }
    if has(findings, FindingCode::CpuOffloadWithFreeVram) {
        cpu_offload(ev, out);
    }
    overhead(ev, findings, out);
    context_and_batch(ev, findings, out);
}
