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

/// The estimator's own replay with `changes`: the layers it places and the KV cache and graph it charges.
fn estimator_at(ev: &Evidence, changes: &Changes) -> Option<(i64, i64, i64, i64)> {
    let est = replay(ev.load, changes)?.estimate?;
    let f = &est.figures;
    Some((
        est.placement.offloaded,
        est.placement.total,
        f.layer_kv.saturating_mul(f.blocks),
        f.graph_partial,
    ))
}

/// The fractions of the load's context tried when the log does not print it.
const FRACTIONS: [i64; 6] = [2, 4, 8, 16, 32, 64];

/// The layers the estimator places at each of the context's [`FRACTIONS`] (for `kv_type`), and the one to
/// suggest as its denominator: the first that places every layer; else the knee, the first from which halving
/// the context again gains at most one layer in twenty; `None` when no fraction places more layers than `now`.
fn context_fraction(
    ev: &Evidence,
    kv_type: Option<crate::model::KvType>,
    now: i64,
) -> Option<(i64, Vec<(i64, i64)>)> {
    let table: Vec<(i64, i64, i64)> = FRACTIONS
        .iter()
        .filter_map(|&den| {
            let changes = Changes {
                context_scale: Some((1, den)),
                kv_type,
                ..Changes::default()
            };
            estimator_at(ev, &changes).map(|(o, t, _, _)| (den, o, t))
        })
        .collect();
    let layers: Vec<(i64, i64)> = table.iter().map(|&(d, o, _)| (d, o)).collect();
    if let Some(&(den, _, _)) = table.iter().find(|&&(_, o, t)| o >= t) {
        return Some((den, layers));
    }
    let step = table.first().map_or(1, |&(_, _, t)| (t / 20).max(1));
    let knee = table
        .windows(2)
        .find(|w| w[0].1 > now && w[1].1 - w[0].1 <= step)
        .map(|w| w[0].0)
        .or_else(|| table.last().filter(|l| l.1 > now).map(|l| l.0))?;
    Some((knee, layers))
}

/// `1/4: 6, 1/8: 10, 1/16: 12 layers`: what each fraction of the context places, for the effect.
fn fraction_table(layers: &[(i64, i64)]) -> String {
    let cells: Vec<String> = layers.iter().map(|(d, o)| format!("1/{d}: {o}")).collect();
    format!("{} layers", cells.join(", "))
}

/// `partial-offload` by Ollama's estimator: the context (and the KV cache type) with which its own figures bring
/// every layer back onto the GPUs. With a printed context, the largest `num_ctx` (`whatif --max-ctx`'s search);
/// without one, the fraction of the load's context, the KV cache and graph scaled by it as the estimator would.
fn context_for_layers(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let Some((now, total, kv, graph)) = estimator_at(ev, &Changes::default()) else {
        return;
    };
    let Some(context) = knob(ev, Knob::Context) else {
        return;
    };
    let every = knob(ev, Knob::ContextForEveryModel);
    let kv_type = crate::replay::figures::logged_kv_type(load);
    let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    let per_slot = load.load.settings.ctx_size.map(|c| c / parallel);
    let because = vec![FindingCode::PartialOffload];
    let mut table = String::new();
    let (setting, every_setting, changes) = match per_slot {
        Some(per_slot) => {
            let Some(n) = largest_num_ctx(load, &Changes::default(), kv_type, Judge::Runtime)
                .and_then(|r| r.num_ctx)
                .filter(|&n| n < per_slot)
            else {
                return;
            };
            (
                context.setting(n),
                every.map(|e| e.setting(n)),
                Changes {
                    ctx: Some(n),
                    ..Changes::default()
                },
            )
        }
        None => {
            let Some((den, layers)) = context_fraction(ev, None, now) else {
                return;
            };
            let fraction =
                format!(" at 1/{den} of this load's context (the log does not print it)");
            table = format!(
                "; by the fraction of the context: {}",
                fraction_table(&layers)
            );
            (
                format!("{}{fraction}", context.spelled()),
                every.map(|e| e.spelled()),
                Changes {
                    context_scale: Some((1, den)),
                    ..Changes::default()
                },
            )
        }
    };
    let Some((then, _, kv_then, graph_then)) = estimator_at(ev, &changes) else {
        return;
    };
    if then <= now {
        return;
    }
    out.push(Suggestion {
        setting,
        effect: format!(
            "Ollama's estimate places {then} of {total} layers on the GPUs (now {now}): the KV cache {} → about {}, the graph {} → about {} (scaled with the context, an upper bound on the shrink){table}{}",
            human(kv),
            human(kv_then),
            human(graph),
            human(graph_then),
            every_setting
                .map(|e| format!("; {e} does the same for every model"))
                .unwrap_or_default()
        ),
        because: because.clone(),
    });
    // A q8_0 cache halves the estimator's KV: the context that then keeps every layer on the GPUs.
    let Some(kv_knob) =
        knob(ev, Knob::KvCacheType).filter(|_| kv_type == crate::model::KvType::F16)
    else {
        return;
    };
    let q8 = Some(crate::model::KvType::Q8_0);
    // With a printed context, the largest num_ctx that then keeps every layer on the GPUs; without one, the
    // same fraction of the context as above, the KV halved again.
    let (with, words) = match per_slot {
        Some(_) => {
            let Some(n) = largest_num_ctx(
                load,
                &Changes::default(),
                crate::model::KvType::Q8_0,
                Judge::Runtime,
            )
            .and_then(|r| r.num_ctx)
            .filter(|&n| changes.ctx.is_some_and(|f16| n > f16)) else {
                return;
            };
            (
                Changes {
                    ctx: Some(n),
                    kv_type: q8,
                    ..Changes::default()
                },
                format!("with num_ctx {n}"),
            )
        }
        None => (
            Changes {
                kv_type: q8,
                ..changes
            },
            "at the same context".to_string(),
        ),
    };
    let Some((layers, _, kv_q8, _)) = estimator_at(ev, &with) else {
        return;
    };
    // Without a printed context, only worth it when the same fraction then places more layers.
    if per_slot.is_none() && layers <= then {
        return;
    }
    out.push(Suggestion {
        setting: kv_knob.setting("q8_0"),
        effect: format!(
            "the KV cache at half the estimator's bytes (needs flash attention, OLLAMA_FLASH_ATTENTION=1): {words}, {layers} of {total} layers on the GPUs by Ollama's estimate, the KV cache about {}",
            human(kv_q8)
        ),
        because,
    });
}

/// Settings to try for a load placed by Ollama's estimator.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let findings = ev.findings;
    if has(findings, FindingCode::PartialOffload) {
        context_for_layers(ev, out);
    }
    if has(findings, FindingCode::NeedlessSplit) {
        needless_split(ev, out);
    }
    if has(findings, FindingCode::CpuOffloadWithFreeVram) {
        cpu_offload(ev, out);
    }
    overhead(ev, findings, out);
    context_and_batch(ev, findings, out);
}
