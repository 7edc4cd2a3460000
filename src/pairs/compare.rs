//! The second load's settings replayed on the first, and the prediction set beside what the second load
//! measured: the weights, the KV cache (and a recurrent state, which `whatif` counts with it) and the layers
//! in all, the compute buffers per device. A figure no changed setting moves is predicted unchanged, and is
//! checked too; a figure a setting the replay cannot model moves has no prediction and names that setting.
//!
//! The prediction's range is the first load's rounding carried through the lever's ratio (exact for the
//! linear levers: the context and type on the KV cache, the micro-batch on the compute buffers; for the
//! compute law's context term, `src/replay/levers/compute.rs`, the ratio of the whole buffer stands in for
//! the ratio of its parts, which the half-hundredth of a MiB of llama.cpp's buffer lines keeps far below
//! any error worth naming). Verdicts compare the two ranges: an error inside the rounding of both is never
//! called one.

use crate::model::{
    Concluded, Device, EffectFigure, LeverEffect, PairFigure, PairVerdict, Part, Quantity,
};
use crate::replay::{self, Changes};

use super::settings::{verified, Moves, PoolShift, SettingsDiff};

/// The figures of the pair `from` → `to`, by the replay of `from` with `diff.changes`.
pub fn figures(from: &Concluded, to: &Concluded, diff: &SettingsDiff) -> Vec<PairFigure> {
    let effects: Vec<LeverEffect> = if diff.changes == Changes::default() {
        Vec::new()
    } else {
        replay::replay(&from.reconciled, &diff.changes)
            .map(|w| w.effects)
            .unwrap_or_default()
    };
    let unmodelled = |m: Moves| -> Vec<String> {
        diff.unmodelled
            .iter()
            .filter(|u| u.moves.contains(&m))
            .map(|u| u.words.clone())
            .collect()
    };
    let mut out = Vec::new();
    // Weights: no lever but -ngl moves them, and -ngl moves them between devices; their sum stays.
    let weights_levers: Vec<String> = if diff.changes.gpu_layers.is_some() {
        vec!["ngl".to_string()]
    } else {
        Vec::new()
    };
    let (weights_before, weights_after) = common_sums(from, to, &[Part::Weights]);
    out.push(figure(
        "weights",
        None,
        weights_before,
        weights_before,
        weights_after,
        Vec::new(),
        unmodelled(Moves::Weights),
    ));
    if weights_levers.is_empty() {
        for d in devices(from, to, Part::Weights) {
            let before = cell(from, &d, Part::Weights);
            out.push(figure(
                "weights",
                Some(d.clone()),
                before,
                before,
                cell(to, &d, Part::Weights),
                Vec::new(),
                unmodelled(Moves::Weights),
            ));
        }
    }
    // The KV cache (with a recurrent state), in all.
    let (kv_before, kv_after) = common_sums(from, to, &[Part::Kv, Part::State]);
    let kv_effect = effects.iter().find(|e| e.figure == EffectFigure::KvCache);
    // The replay scales the measured KV (llama.cpp) or the estimate's (Ollama's estimator): the range is that
    // of the figure it started from.
    let kv_estimate = from.reconciled.load.estimate.as_ref().and_then(|x| x.kv);
    let kv_predicted = match (kv_effect, diff.pool) {
        (Some(e), _) => predicted(e, kv_before)
            .filter(|q| q.spread() > 0)
            .or_else(|| predicted(e, kv_estimate)),
        (None, Some(pool)) => kv_before.and_then(|kv| pool_shifted(from, kv, pool)),
        (None, None) => kv_before,
    };
    let mut kv_levers = kv_effect.map(|e| e.levers.clone()).unwrap_or_default();
    kv_levers.extend(diff.pool_levers.iter().cloned());
    out.push(figure(
        "kv",
        None,
        kv_before,
        kv_predicted,
        kv_after,
        kv_levers,
        unmodelled(Moves::Kv),
    ));
    // The compute buffers, per device, and their sum.
    let compute: Vec<&LeverEffect> = effects
        .iter()
        .filter(|e| e.figure == EffectFigure::ComputeBuffer)
        .collect();
    let mut per_device = Vec::new();
    for d in devices(from, to, Part::Graph) {
        let before = cell(from, &d, Part::Graph);
        let effect = compute.iter().find(|e| e.device.as_ref() == Some(&d));
        let mut not_modelled = unmodelled(Moves::Compute);
        let predicted_here = match effect {
            Some(e) => predicted(e, before),
            // A device the replay scaled none of keeps its buffer only when no compute lever was asked.
            None if compute.is_empty() => before,
            None => {
                not_modelled.push(format!(
                    "{d}'s compute buffer: the replay scales the buffers of the devices holding the attention"
                ));
                None
            }
        };
        per_device.push(figure(
            "compute",
            Some(d.clone()),
            before,
            predicted_here,
            cell(to, &d, Part::Graph),
            effect.map(|e| e.levers.clone()).unwrap_or_default(),
            not_modelled,
        ));
    }
    let both: Vec<&PairFigure> = per_device
        .iter()
        .filter(|f| f.before.is_some() && f.measured.is_some())
        .collect();
    if both.len() > 1 {
        let total = |f: fn(&PairFigure) -> Option<Quantity>| {
            both.iter()
                .map(|x| f(x))
                .collect::<Option<Vec<Quantity>>>()
                .and_then(Quantity::sum)
        };
        let levers = per_device
            .iter()
            .find(|f| !f.levers.is_empty())
            .map(|f| f.levers.clone())
            .unwrap_or_default();
        out.push(figure(
            "compute",
            None,
            total(|f| f.before),
            total(|f| f.predicted),
            total(|f| f.measured),
            levers,
            unmodelled(Moves::Compute),
        ));
    }
    out.extend(per_device);
    if let Some(e) = effects.iter().find(|e| e.figure == EffectFigure::Layers) {
        let measured = to.reconciled.load.actual.offloaded_layers;
        out.push(figure(
            "layers",
            None,
            e.before.map(Quantity::exact),
            Some(Quantity::exact(e.after)),
            measured.map(Quantity::exact),
            e.levers.clone(),
            unmodelled(Moves::Layers),
        ));
    }
    let runtime = to.reconciled.load.runtime;
    // A prediction that rests on a lever no real pair has checked on this runtime is said to be unverified.
    for f in &mut out {
        f.unverified = f.predicted.is_some() && f.levers.iter().any(|l| !verified(runtime, l));
    }
    out
}

/// A serving engine's KV pool at another share of each GPU: `kv` plus each rank's total × the change, the
/// totals' rounding carried (vLLM: the budget is total × `--gpu-memory-utilization` and the pool what it
/// leaves; SGLang: the pool is what `--mem-fraction-static` of the total leaves). `None` when a rank's total
/// is not in the log.
fn pool_shifted(from: &Concluded, kv: Quantity, pool: PoolShift) -> Option<Quantity> {
    let serving = from.reconciled.load.serving.as_ref()?;
    if serving.ranks.is_empty() {
        return None;
    }
    let change = pool.after - pool.before;
    let mut out = kv;
    for rank in &serving.ranks {
        let total = rank.total?.size;
        let at = |bytes: i64| (bytes as f64 * change).round() as i64;
        let (a, b) = (at(total.low), at(total.high));
        out = Quantity::with_bounds(
            out.bytes + at(total.bytes),
            out.low + a.min(b),
            out.high + a.max(b),
        );
    }
    Some(out)
}

/// An effect's figure with the range of `base` (the figure it started from) carried by its ratio.
fn predicted(e: &LeverEffect, base: Option<Quantity>) -> Option<Quantity> {
    let from = e.before.filter(|&b| b > 0);
    match (base, from) {
        (Some(q), Some(b)) if (q.bytes - b).abs() <= q.spread().max(1) => {
            let s = q.scale(e.after, b);
            Some(Quantity::with_bounds(e.after, s.low, s.high))
        }
        (Some(_) | None, Some(_) | None) => Some(Quantity::exact(e.after)),
    }
}

fn figure(
    component: &str,
    device: Option<Device>,
    before: Option<Quantity>,
    predicted: Option<Quantity>,
    measured: Option<Quantity>,
    levers: Vec<String>,
    not_modelled: Vec<String>,
) -> PairFigure {
    let predicted = if not_modelled.is_empty() {
        predicted
    } else {
        None
    };
    let verdict = match (predicted, measured) {
        _ if !not_modelled.is_empty() => PairVerdict::NotModelled,
        (Some(p), Some(m)) => match p.compare(&m) {
            crate::model::Ordering3::Overlap => PairVerdict::WithinRounding,
            crate::model::Ordering3::Above => PairVerdict::Over,
            crate::model::Ordering3::Below => PairVerdict::Under,
        },
        (Some(_) | None, Some(_) | None) => PairVerdict::NotMeasured,
    };
    PairFigure {
        // Set by `figures`, which knows the runtime.
        unverified: false,
        component: component.to_string(),
        device,
        before,
        predicted,
        measured,
        error: predicted
            .zip(measured)
            .map(|(p, m)| p.bytes.saturating_sub(m.bytes)),
        verdict,
        levers,
        not_modelled,
    }
}

/// A load's buffers by device and part: the buffer lines' grid, else llama.cpp's memory breakdown table
/// (model, context and compute columns, whole MiB truncated), which is all a `llama_memory_breakdown_print`
/// paste holds (`sample-logs/1256-…`).
fn parts(load: &Concluded) -> Vec<(Device, Part, Quantity)> {
    let grid = &load.reconciled.grid;
    let cells: Vec<(Device, Part, Quantity)> = grid
        .devices()
        .into_iter()
        .flat_map(|d| {
            Part::ALL
                .into_iter()
                .filter_map(move |p| grid.cell(d, p).map(|c| (d.clone(), p, c.size)))
        })
        .collect();
    if !cells.is_empty() {
        return cells;
    }
    load.reconciled
        .load
        .actual
        .breakdown
        .iter()
        .flat_map(|r| {
            [
                (Part::Weights, r.model),
                (Part::Kv, r.context),
                (Part::Graph, r.compute),
            ]
            .into_iter()
            .filter(|(_, q)| q.high > 0)
            .map(|(p, q)| (r.device.clone(), p, q))
        })
        .collect()
}

fn cell(load: &Concluded, device: &Device, part: Part) -> Option<Quantity> {
    Quantity::sum(
        parts(load)
            .into_iter()
            .filter(|(d, p, _)| d == device && *p == part)
            .map(|(_, _, q)| q),
    )
}

/// The sums of `wanted` over the devices both loads logged them on (a device one load's excerpt lost is left
/// out of both: `sample-logs/1256-…`'s second table lost its host row); `None` without such a device.
fn common_sums(
    from: &Concluded,
    to: &Concluded,
    wanted: &[Part],
) -> (Option<Quantity>, Option<Quantity>) {
    let (a, b) = (parts(from), parts(to));
    let on = |list: &[(Device, Part, Quantity)], d: &Device| {
        Quantity::sum(
            list.iter()
                .filter(|(x, p, _)| x == d && wanted.contains(p))
                .map(|(_, _, q)| *q),
        )
    };
    let mut devices: Vec<&Device> = a.iter().map(|(d, _, _)| d).collect();
    devices.dedup();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut seen: Vec<&Device> = Vec::new();
    for d in devices {
        if seen.contains(&d) {
            continue;
        }
        seen.push(d);
        if let (Some(x), Some(y)) = (on(&a, d), on(&b, d)) {
            before.push(x);
            after.push(y);
        }
    }
    (Quantity::sum(before), Quantity::sum(after))
}

/// The devices either load holds `part` on, in the order they come.
fn devices(from: &Concluded, to: &Concluded, part: Part) -> Vec<Device> {
    let mut out: Vec<Device> = Vec::new();
    for load in [from, to] {
        for (d, p, _) in parts(load) {
            if p == part && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}
