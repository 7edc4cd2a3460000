//! Reconciliation: a load's estimate against its actual allocations, per component and per device, with a
//! verdict that respects the rounding of both sides; and the device × part grid of its buffers, the one sum
//! the later stages read; and what was observed beside the log (GPU captures, Ollama's `/api/ps`), joined to
//! the load's devices. Pure functions of a [`Load`] and its [`Observations`].

mod actuals;
mod charges;
mod host_weights;
pub mod kv_check;
pub mod observations;
pub mod observed;
mod ps;
pub(crate) mod terms;
mod views;

use crate::model::{
    BufferKind, Comparison, Component, ComponentRow, Device, DeviceRow, Estimate, Grid, Load,
    Quantity, Reconciled,
};

use actuals::{has_buffers, is_draft, is_kv, sum_breakdown, sum_buffers, Sum};
pub use charges::apply_estimator_charges;
pub use observations::Observations;
use terms::Term;

fn row(component: Component, est: Term, act: Sum, mut lines: Vec<u64>) -> ComponentRow {
    lines.extend(act.lines);
    ComponentRow {
        component,
        comparison: Comparison::new((est.value, est.from), (act.value, act.from), lines),
    }
}

/// Buffer lines when the load has them, else the breakdown table, else nothing (said in words).
fn pick_source(actual: &crate::model::Actual, from_buffers: Sum, from_breakdown: Sum) -> Sum {
    if has_buffers(actual) {
        from_buffers
    } else if !actual.breakdown.is_empty() {
        from_breakdown
    } else {
        Sum {
            value: None,
            from: "no allocation lines in the log for this load".to_string(),
            lines: Vec::new(),
        }
    }
}

fn components(load: &Load) -> Vec<ComponentRow> {
    let a = &load.actual;
    let e = load.estimate.as_ref();
    if e.is_none() && a.buffers.is_empty() && a.breakdown.is_empty() {
        return Vec::new();
    }
    // Without an estimate there is nothing to compare, but the actual side is still worth a row each.
    let estimated = |term: &dyn Fn(&crate::model::Estimate) -> Term| {
        e.map(term).unwrap_or_else(|| Term {
            value: None,
            from: "no estimate in the log for this load".to_string(),
        })
    };
    let est_lines = e.map(|e| e.lines.clone()).unwrap_or_default();
    let pick =
        |from_buffers: Sum, from_breakdown: Sum| pick_source(a, from_buffers, from_breakdown);

    let weights_gpu = pick(
        sum_buffers(a, "GPU weight buffers", |b| {
            b.kind == BufferKind::Model && !b.host && !b.projector && !is_draft(b)
        }),
        sum_breakdown(a, "model on GPUs", |r| r.model, |r| r.device.is_gpu()),
    );
    let mut weights_host = pick(
        actuals::without_repacked_view(
            sum_buffers(a, "host weight buffers", |b| {
                b.kind == BufferKind::Model && b.host && !b.projector && !is_draft(b)
            }),
            a,
        ),
        sum_breakdown(a, "model on the host", |r| r.model, |r| r.device.is_host()),
    );
    if weights_host.value.is_some() {
        weights_host.from.push_str(" (host memory, not VRAM)");
        if let Some(words) = host_weights::by_design(load) {
            weights_host.from.push_str(&words);
        }
    }
    let kv = pick(
        sum_buffers(a, "KV/RS buffers on all devices", |b| {
            is_kv(b) && !is_draft(b)
        }),
        sum_breakdown(a, "context on all devices", |r| r.context, |_| true),
    );
    let mut graph = pick(
        sum_buffers(a, "GPU compute buffers", |b| {
            b.kind == BufferKind::Compute && !b.host && !b.projector && !is_draft(b)
        }),
        sum_breakdown(a, "compute on GPUs", |r| r.compute, |r| r.device.is_gpu()),
    );
    let host_compute = sum_buffers(a, "host compute buffers", |b| {
        b.kind == BufferKind::Compute && b.host && !b.projector && !is_draft(b)
    });
    if let (Some(_), Some(h)) = (graph.value, host_compute.value) {
        graph.from.push_str(&format!(
            "; host compute buffers ({}) not counted: host memory",
            crate::model::human(h.bytes)
        ));
    }
    let engine = load.engine;
    let mut rows = vec![
        row(
            Component::WeightsGpu,
            estimated(&|e| terms::weights_gpu(e, engine)),
            weights_gpu,
            est_lines.clone(),
        ),
        row(
            Component::WeightsHost,
            estimated(&terms::weights_host),
            weights_host,
            est_lines.clone(),
        ),
        row(Component::Kv, estimated(&terms::kv), kv, est_lines.clone()),
        row(
            Component::Graph,
            estimated(&|e| terms::graph(e, engine)),
            graph,
            est_lines.clone(),
        ),
    ];
    let projector_actual = sum_buffers(a, "projector (clip) buffers", |b| b.projector);
    match e.and_then(terms::projector) {
        Some(est) => {
            let act = if projector_actual.value.is_none() && engine == crate::model::Engine::Ollama
            {
                Sum {
                    value: None,
                    from: "no separate lines: the Ollama engine loads the projector with the model, inside weights_gpu and graph".to_string(),
                    lines: Vec::new(),
                }
            } else {
                projector_actual
            };
            rows.push(row(Component::Projector, est, act, est_lines));
        }
        None if projector_actual.value.is_some() => rows.push(row(
            Component::Projector,
            estimated(&|_| Term {
                value: None,
                from: "the estimate has no projector terms".to_string(),
            }),
            projector_actual,
            Vec::new(),
        )),
        None => {}
    }
    // The speculative draft's own context: its GPU buffers against llama-server's `[spec]` estimate, which
    // covers the draft's KV and compute on the GPU (corpus 706: 32 + 130.02 = 162.02 MiB, its estimate).
    let draft_actual = sum_buffers(a, "draft GPU buffers", |b| is_draft(b) && !b.host);
    let draft_estimate = e.and_then(terms::draft);
    if draft_actual.value.is_some() || draft_estimate.is_some() {
        let est = draft_estimate.unwrap_or_else(|| Term {
            value: None,
            from: "no [spec] estimate of the draft in the log".to_string(),
        });
        let lines = e
            .and_then(|e| e.draft_line)
            .into_iter()
            .collect::<Vec<u64>>();
        rows.push(row(Component::Draft, est, draft_actual, lines));
    }
    rows
}

fn devices(load: &Load) -> Vec<DeviceRow> {
    let a = &load.actual;
    let mut names = actuals::devices(a);
    if let Some(e) = &load.estimate {
        names.extend(e.per_device.iter().map(|d| d.device.clone()));
    }
    if load
        .estimate
        .as_ref()
        .is_some_and(|e| terms::host(e).value.is_some())
    {
        names.push(Device::Host);
    }
    names.sort();
    names.dedup();
    let kv_missing = load
        .estimate
        .as_ref()
        .and_then(|e| e.kv)
        .filter(|kv| kv.high > 0)
        .filter(|_| has_buffers(a) && !a.buffers.iter().any(is_kv) && a.breakdown.is_empty());
    names
        .into_iter()
        .map(|device| {
            let host = device.is_host();
            let est = match &load.estimate {
                Some(e) if host => {
                    let t = terms::host(e);
                    match e
                        .per_device
                        .iter()
                        .find(|d| d.device == device && d.total.is_some())
                    {
                        Some(d) => Term {
                            value: d.total,
                            from: if e.from_llama_cpp() {
                                terms::device_estimate_from(e, d)
                            } else {
                                t.from
                            },
                        },
                        None => t,
                    }
                }
                Some(e) => match e.per_device.iter().find(|d| d.device == device) {
                    Some(d) => Term {
                        value: d.total,
                        from: terms::device_estimate_from(e, d),
                    },
                    None => Term {
                        value: None,
                        from: format!("the estimate charges nothing to {device}"),
                    },
                },
                None => Term {
                    value: None,
                    from: "no estimate in the log for this load".to_string(),
                },
            };
            let fit_table = load.estimate.as_ref().is_some_and(Estimate::from_llama_cpp);
            let draft_unestimated = load
                .estimate
                .as_ref()
                .is_some_and(|e| e.fit.is_some() && e.draft_total.is_none());
            let mut act = actuals::device_total(a, &device, fit_table, draft_unestimated);
            if let (Some(kv), Some(value), false) = (kv_missing, act.value, host) {
                // The log has no KV lines at all (the Ollama engine before v0.11.5 printed none): the device's
                // share of the KV cache is unknown, between nothing and the whole estimate.
                act.value = Some(Quantity::with_bounds(
                    value.bytes,
                    value.low,
                    value.high.saturating_add(kv.high),
                ));
                act.from
                    .push_str("; KV cache not logged: bounded by [0, memory.required.kv]");
            }
            let mut lines: Vec<u64> = load
                .estimate
                .as_ref()
                .map(|e| e.lines.clone())
                .unwrap_or_default();
            lines.extend(act.lines.iter().copied());
            let estimated_parts = match (&load.estimate, est.value) {
                (Some(e), Some(total)) => terms::device_estimate_parts(e, &device, total.bytes),
                _ => Vec::new(),
            };
            DeviceRow {
                device,
                host,
                comparison: Comparison::new((est.value, est.from), (act.value, act.from), lines),
                estimated_parts,
            }
        })
        .collect()
}

/// Reconcile a load: its component and device rows, and its devices joined with what was observed of it
/// (captures, see [`observed`]; `/api/ps`), the notes of the joins added to the load's.
pub fn reconcile(mut load: Load, observations: &Observations<'_>) -> Reconciled {
    load.notes.extend(kv_check::disagreements(&load));
    let components = components(&load);
    let devices = devices(&load);
    let seen = observed::seen(&load, &devices, observations);
    load.notes.extend(seen.notes);
    let ollama_ps = observations
        .moment
        .ps
        .as_ref()
        .and_then(|listing| ps::matched(listing, &devices));
    let gpu_views = views::views(&load, &devices, &seen.rows, ollama_ps.as_ref());
    Reconciled {
        components,
        gpu_views,
        devices,
        observed: seen.rows,
        ollama_ps,
        grid: Grid::of(&load.actual.buffers),
        load,
    }
}
