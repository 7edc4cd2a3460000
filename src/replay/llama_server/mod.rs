//! The replay of the llama-server era (Ollama ≥ 0.30): llama.cpp's `--fit` ([`super::fit`]) run on a load's
//! figures, once with the fit plan's (does it reproduce the log?) and once with the measured buffers (would the
//! model have fit on fewer GPUs, or kept more layers off the CPU?).
//!
//! Logs print totals, not per-layer sizes: a layer's weights are the GPU weight buffers over the layers on GPUs
//! (the output layer counted as an average layer, or its own size from a GGUF header), its KV the KV buffers over the model's layers. A
//! sliding-window cache does not grow with the context; the caches whose cells equal the context do. When the
//! load has a model layout (the log's hyperparameters, or a GGUF header) each layer's KV is computed in
//! llama.cpp's sizing instead, and a GGUF header also gives each layer's weights.

mod gpu_layers;
mod load_figures;

use load_figures::{gpus, measured_compute, projector_on_gpu};
pub use load_figures::{kv_split, measured_shape, target, Gpu, KvSplit, Shape};

use super::figures::Changes;
use super::fit::{fit, FitContext, FitDevice, FitInput, FitOutcome, FitReason, DEFAULT_FIT_TARGET};
use super::max_ctx::Judge;
use crate::model::kv_geometry::{kv_geometry_of, signed};
use crate::model::{
    human, Device, EstimateReplay, FitDecision, MeasuredReplay, PlacedGpu, Placement,
    ProjectorPadding, Quantity, Reconciled, ReplayFigures, ReplayOutcome, ReplayVerdict,
};

fn input(
    shape: &Shape,
    gpus: &[Gpu],
    target: i64,
    context: i64,
    load: &Reconciled,
    extra: Option<&(Device, i64)>,
) -> FitInput {
    FitInput {
        devices: gpus
            .iter()
            .map(|g| FitDevice {
                name: g.device.to_string(),
                free: g.free,
                target,
                compute: g.compute + extra.filter(|(d, _)| *d == g.device).map_or(0, |(_, b)| *b),
            })
            .collect(),
        layers: shape.layers(context),
        output: shape.output_weights(),
        n_gpu_layers: load
            .load
            .settings
            .gpu_layers
            .filter(|&n| n >= 0)
            .map(|n| n.min(u32::MAX as i64) as u32),
        tensor_split: None,
        context: FitContext {
            configured: context.max(1),
            // Ollama always passes `-c`.
            set_by_user: true,
            min: context.max(1),
        },
    }
}

fn placement(outcome: &FitOutcome, gpus: &[Gpu]) -> Placement {
    let total = outcome.layers.len() as i64;
    Placement {
        gpus: outcome
            .devices
            .iter()
            .zip(gpus)
            .map(|(d, g)| PlacedGpu {
                device: g.device.clone(),
                free: d.free,
                layers: d.layers as i64,
                allocation: d.used,
            })
            .collect(),
        offloaded: outcome.offloaded() as i64,
        total,
        overflow: 0,
    }
}

fn figures(shape: &Shape, gpus: &[Gpu], target: i64, mut from: Vec<String>) -> ReplayFigures {
    from.extend(shape.from.iter().cloned());
    from.push(format!(
        "margin: --fit keeps {} free on every GPU (the fit target)",
        human(target)
    ));
    ReplayFigures {
        layer_weights: shape.layer_weights,
        layer_kv: shape.layer_kv_at(shape.context),
        blocks: shape.blocks,
        output: shape.output_weights(),
        first_gpu_extra: 0,
        graph: gpus.iter().map(|g| g.compute).max().unwrap_or(0),
        graph_partial: gpus.iter().map(|g| g.compute).max().unwrap_or(0),
        per_gpu_floor: 0,
        gpu_overhead: target,
        layer_buffer: false,
        from,
        per_layer: Vec::new(),
    }
}

/// Free memory left above the margin on the tightest GPU that holds layers.
fn margin(outcome: &FitOutcome) -> i64 {
    outcome
        .devices
        .iter()
        .filter(|d| d.layers > 0)
        .map(|d| d.free_left - d.target)
        .min()
        .unwrap_or(0)
}

fn fits_entirely(outcome: &FitOutcome) -> bool {
    outcome.cpu_layers == 0 && outcome.devices.iter().all(|d| !d.over_target)
}

/// The fit on the GPUs with the measured figures, fewest GPUs first (most free first): would the model have
/// fit on fewer GPUs than it used, or kept more layers off the CPU?
pub fn measured(load: &Reconciled) -> Option<MeasuredReplay> {
    let shape = measured_shape(load)?;
    let mut from = Vec::new();
    let all_gpus = gpus(load, |d| measured_compute(load, d));
    if all_gpus.is_empty() {
        return None;
    }
    // A GPU alone needs at most the compute buffers of every GPU together (the output GPU's logits included).
    let all_compute: i64 = all_gpus.iter().map(|g| g.compute).sum();
    let target = target(load);
    let projector = projector_on_gpu(load);
    let mut by_free = all_gpus.clone();
    by_free.sort_by_key(|g| std::cmp::Reverse(g.free));
    // With every GPU and layers still on the CPU, the last fit tried is the answer.
    let mut last = None;
    for k in 1..=by_free.len() {
        let mut set: Vec<Gpu> = by_free[..k].to_vec();
        if k == 1 {
            set[0].compute = all_compute;
        } else {
            set.sort_by(|a, b| a.device.cmp(&b.device));
        }
        let outcome = fit(&input(
            &shape,
            &set,
            target,
            shape.context,
            load,
            projector.as_ref(),
        ));
        if fits_entirely(&outcome) {
            if k == 1 && all_gpus.len() > 1 {
                from.push(format!(
                    "compute on one GPU: every GPU's compute buffers together, {} (an upper bound)",
                    human(all_compute)
                ));
            }
            let m = margin(&outcome);
            let p = placement(&outcome, &set);
            let verdict = ReplayVerdict::fits(
                &p,
                k,
                format!(
                    "{} to spare above the {} --fit margin",
                    human(m),
                    human(target)
                ),
            );
            return Some(MeasuredReplay {
                figures: figures(&shape, &set, target, from),
                placement: p,
                margin: m,
                verdict,
            });
        }
        last = Some((outcome, set));
    }
    let (outcome, set) = last?;
    let p = placement(&outcome, &set);
    let verdict = ReplayVerdict {
        outcome: ReplayOutcome::CpuOffload {
            layers: outcome.cpu_layers as i64,
        },
        text: format!(
            "needs {} of {} layers on the CPU even by the measured sizes ({})",
            outcome.cpu_layers,
            p.total,
            outcome.reason.describe()
        ),
    };
    Some(MeasuredReplay {
        figures: figures(&shape, &set, target, from),
        margin: margin(&outcome),
        placement: p,
        verdict,
    })
}

/// The GPUs `changes` keeps (`--gpus` positions, or the `--gpu-count` with the most free memory), in device
/// order; the compute buffers of the GPUs left out go to the last one kept (it holds the output layer), an
/// upper bound as in the one-GPU measured replay.
fn chosen_gpus(all: &[Gpu], changes: &Changes) -> Vec<Gpu> {
    let mut keep: Vec<usize> = (0..all.len()).collect();
    if let Some(g) = &changes.gpus {
        keep.retain(|i| g.contains(i));
    }
    if let Some(n) = changes.gpu_count {
        let mut by_free = keep.clone();
        by_free.sort_by(|a, b| all[*b].free.cmp(&all[*a].free).then(a.cmp(b)));
        by_free.truncate(n);
        keep.retain(|i| by_free.contains(i));
    }
    let mut set: Vec<Gpu> = keep.iter().map(|&i| all[i].clone()).collect();
    let dropped: i64 = (0..all.len())
        .filter(|i| !keep.contains(i))
        .map(|i| all[i].compute)
        .sum();
    if let Some(last) = set.last_mut() {
        last.compute += dropped;
    }
    set
}

/// The measured shape with the slots and KV type `changes` asks for, and the context it replays at (all slots).
pub(crate) struct ChangedShape {
    pub shape: Shape,
    /// `-c`: the context over all slots.
    pub context: i64,
}

/// The measured shape as `changes` changes it (`--parallel`, `--kv-type`, `--ctx`, `--ubatch`); `None` without
/// measured figures. `--ctx` is the context a slot sees ([`crate::model::kv_geometry::SlotContext`]).
pub(crate) fn changed_shape(load: &Reconciled, changes: &Changes) -> Option<ChangedShape> {
    let logged_parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    let parallel = changes.parallel.unwrap_or(logged_parallel).max(1);
    let mut shape = measured_shape(load)?.with_parallel(parallel);
    if let Some(t) = changes.kv_type {
        shape = shape.with_kv_type(t, super::figures::logged_kv_type(load));
    }
    if let (Some(p), Some(g)) = (&mut shape.per_layer, changes.geometry(load)) {
        p.geometry = g;
    }
    let context = match changes.slots(load) {
        Some((_, new)) => signed(new.total()),
        // No context printed: the measured one (0) stands.
        None => changes
            .ctx
            .unwrap_or(shape.context / logged_parallel)
            .saturating_mul(parallel),
    };
    Some(ChangedShape { context, shape })
}

/// The KV cache (every layer's, the recurrent state included) by the measured figures: as logged, and as
/// `changes` changes it; `None` without measured figures or when the log prints no context to scale from.
/// With the model's layout the change is llama.cpp's own sizing (each cache's cells per stream, the window
/// caches at `pad256(window + n_ubatch)` per sequence), applied to the measured KV.
pub(crate) fn kv_change(load: &Reconciled, changes: &Changes) -> Option<KvChange> {
    let Some(logged) = measured_shape(load) else {
        return kv_change_by_buffers(load, changes);
    };
    if logged.context <= 0 && changes.ctx.is_some() {
        return None;
    }
    let changed = changed_shape(load, changes)?;
    let total = |shape: &Shape, context: i64| {
        shape
            .layers(context)
            .iter()
            .fold(0i64, |sum, l| sum.saturating_add(l.kv))
    };
    let state = |shape: &Shape| {
        (shape.per_layer.is_none() && shape.layer_state > 0)
            .then(|| shape.layer_state.saturating_mul(shape.blocks))
    };
    Some(KvChange {
        before: total(&logged, logged.context),
        after: total(&changed.shape, changed.context),
        state: state(&changed.shape),
        context: (logged.context, changed.context),
        by_layout: changed.shape.per_layer.is_some(),
    })
}

/// The layout's KV as logged and as `changes` changes it, in llama.cpp's sizing; `None` without a layout or
/// a geometry.
fn layout_kv_totals(load: &Reconciled, changes: &Changes) -> Option<(i64, i64)> {
    let layout = load.load.model.layout.as_ref()?;
    let logged = kv_geometry_of(&load.load.settings)?;
    let new = changes.geometry(load)?;
    let total = |g: &crate::model::kv_geometry::CacheGeometry| {
        layout
            .layers
            .iter()
            .filter(|l| !matches!(l.attention, crate::model::LayerAttention::Recurrent { .. }))
            .fold(0i64, |sum, l| sum.saturating_add(signed(g.layer_total(l))))
    };
    let (before, after) = (total(&logged), total(&new));
    (before > 0).then_some((before, after))
}

/// [`kv_change`] for a load without the layer counts a shape needs (a CPU-only load, or one that failed before
/// its layers were placed, sample-logs/1003-…): the KV and recurrent-state buffers as measured. With the
/// model's layout the measured KV changes as llama.cpp's sizing of it does; without it the caches that grow
/// with the context are scaled by it, the window caches by the slots when each slot has its own, and every
/// cache by the KV type's bytes per element.
fn kv_change_by_buffers(load: &Reconciled, changes: &Changes) -> Option<KvChange> {
    let KvSplit {
        scaling,
        fixed,
        state,
    } = kv_split(load);
    if scaling.saturating_add(fixed) <= 0 {
        return None;
    }
    let logged = load.load.settings.ctx_size.unwrap_or(0);
    if logged <= 0 && changes.ctx.is_some() {
        return None;
    }
    let by = |v: i64, num: i64, den: i64| {
        i64::try_from(i128::from(v) * i128::from(num) / i128::from(den.max(1))).unwrap_or(i64::MAX)
    };
    let logged_parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    let parallel = changes.parallel.unwrap_or(logged_parallel).max(1);
    // The state is one per sequence.
    let state_after = by(state, parallel, logged_parallel);
    let context = changes.context_tokens(load).map_or(logged, |(new, _)| new);
    let measured = scaling.saturating_add(fixed);
    if let Some((before, after)) = layout_kv_totals(load, changes) {
        return Some(KvChange {
            before: measured.saturating_add(state),
            after: by(measured, after, before).saturating_add(state_after),
            state: (state > 0).then_some(state_after),
            context: (logged, context),
            by_layout: true,
        });
    }
    let (num, den) = changes.kv_type.map_or((1, 1), |t| {
        let from = super::figures::logged_kv_type(load);
        (t.bytes(32) as i64, from.bytes(32) as i64)
    });
    let grown = if logged > 0 {
        by(scaling, context, logged)
    } else {
        scaling
    };
    // A window cache is one per stream: it grows with the slots when each slot has its own.
    let split = load.load.settings.kv_unified == Some(false);
    let fixed = if split {
        by(fixed, parallel, logged_parallel)
    } else {
        fixed
    };
    let kv = by(grown, num, den).saturating_add(by(fixed, num, den));
    Some(KvChange {
        before: measured.saturating_add(state),
        after: kv.saturating_add(state_after),
        state: (state > 0).then_some(state_after),
        context: (logged, context),
        by_layout: false,
    })
}

/// The KV cache before and after a change, by the measured figures.
pub(crate) struct KvChange {
    pub before: i64,
    pub after: i64,
    /// The recurrent state inside `after`, when the model has one (it grows with the slots only).
    pub state: Option<i64>,
    /// The context (all slots) as logged and as replayed.
    pub context: (i64, i64),
    /// Computed in llama.cpp's sizing from the model's layout (else the measured KV scaled).
    pub by_layout: bool,
}

/// The fit with the measured figures on the GPUs, context, slots, KV type and micro-batch `changes` asks for:
/// the what-if replay of this era (the estimator's knobs `OLLAMA_GPU_OVERHEAD`, the graph multiplier and the
/// scheduler do not reach llama-server and are ignored). Compute buffers keep their measured size, scaled by
/// the micro-batch when one is asked for ([`super::levers::MicroBatch`]). With `--ngl` the layers are fixed
/// (llama.cpp's `--fit` moves none when the user sets `-ngl`): the default split of that many layers, judged
/// against the free memory (`gpu_layers::verdict`).
pub fn changed(load: &Reconciled, changes: &Changes) -> Option<MeasuredReplay> {
    let ChangedShape { shape, context } = changed_shape(load, changes)?;
    let micro = changes
        .ubatch
        .map(|u| super::levers::MicroBatch::of(load, u));
    // The compute buffers by llama.cpp's law for the micro-batch, context and slots asked for.
    let law = super::levers::ComputeLaw::of(load, changes).filter(|l| l.changes());
    let all = gpus(load, |d| {
        let measured = measured_compute(load, d);
        match (&law, micro) {
            (Some(l), _) => l.scale(measured),
            (None, Some(m)) => m.scale(measured),
            (None, None) => measured,
        }
    });
    let set = chosen_gpus(&all, changes);
    if set.is_empty() {
        return None;
    }
    let target = target(load);
    let projector = projector_on_gpu(load).filter(|(d, _)| set.iter().any(|g| g.device == *d));
    let mut fit_input = input(&shape, &set, target, context, load, projector.as_ref());
    if let Some(n) = changes.gpu_layers {
        fit_input.n_gpu_layers = Some(n.clamp(0, i64::from(u32::MAX)) as u32);
    }
    let outcome = fit(&fit_input);
    let compute = match (&law, micro) {
        (Some(l), Some(m)) => format!(
            "compute buffers for the micro-batch ({}): {}",
            m.words(),
            l.words()
        ),
        (Some(l), None) => format!("compute buffers: {}", l.words()),
        (None, Some(m)) => format!(
            "compute buffers × {}/{} for the micro-batch ({}): linear in n_ubatch",
            m.to,
            m.logged,
            m.words()
        ),
        (None, None) => "compute buffers at their measured size".to_string(),
    };
    let slots = changes
        .slots(load)
        .map(|(logged, new)| super::figures::slot_words(load, logged, new))
        .unwrap_or_else(|| format!("context {context}"));
    let mut from = vec![format!("{slots}; {compute}")];
    if changes.ctx.is_some() && shape.context <= 0 {
        from.push(
            "the log prints no context (n_ctx): the KV cache is kept at its measured size".into(),
        );
    }
    if let Some(n) = changes.gpu_layers {
        from.push(format!(
            "-ngl {n}: the layers are fixed (llama.cpp's --fit moves none), split by free memory as the loader splits them"
        ));
    }
    if set.len() < all.len() {
        from.push(
            "the compute buffers of the GPUs left out go to the last GPU kept (an upper bound)"
                .into(),
        );
    }
    if changes.gpu_overhead.is_some()
        || changes.graph_multiplier.is_some()
        || changes.scheduler.is_some()
    {
        from.push(
            "gpu-overhead, graph-multiplier and scheduler are Ollama estimator knobs that do not reach llama-server: ignored"
                .into(),
        );
    }
    let p = placement(&outcome, &set);
    let (m, verdict) = if changes.gpu_layers.is_some() {
        gpu_layers::verdict(&outcome, &p)
    } else if fits_entirely(&outcome) {
        let m = margin(&outcome);
        (
            m,
            ReplayVerdict::fits(
                &p,
                set.len(),
                format!(
                    "{} to spare above the {} --fit margin",
                    human(m),
                    human(target)
                ),
            ),
        )
    } else {
        (
            margin(&outcome),
            ReplayVerdict {
                outcome: ReplayOutcome::CpuOffload {
                    layers: outcome.cpu_layers as i64,
                },
                text: format!(
                    "does not keep every layer on the GPUs with their margin: {} of {} layers on the CPU ({})",
                    outcome.cpu_layers,
                    p.total,
                    outcome.reason.describe()
                ),
            },
        )
    };
    let mut shape_at = shape.clone();
    shape_at.context = context;
    Some(MeasuredReplay {
        figures: figures(&shape_at, &set, target, from),
        placement: p,
        margin: m,
        verdict,
    })
}

/// The fit on the load's GPUs with the measured figures, the KV cache scaled to `kv_percent` % (a quantised
/// cache), at `context` tokens (all slots) instead of the load's, with `target` as the margin instead of the
/// log's: what a setting would change.
pub fn fit_with(
    load: &Reconciled,
    kv_percent: i64,
    context: Option<i64>,
    target_override: Option<i64>,
) -> Option<FitOutcome> {
    fit_counting(load, kv_percent, context, target_override, true)
}

/// [`fit_with`], the projector's buffers counted on its GPU or not (`count_projector`: not when the margin
/// already holds llama.cpp's own reserve for it, as a target the fit printed does).
fn fit_counting(
    load: &Reconciled,
    kv_percent: i64,
    context: Option<i64>,
    target_override: Option<i64>,
    count_projector: bool,
) -> Option<FitOutcome> {
    let mut shape = measured_shape(load)?;
    shape.layer_kv_scaling = shape.layer_kv_scaling * kv_percent / 100;
    shape.layer_kv_fixed = shape.layer_kv_fixed * kv_percent / 100;
    let set = gpus(load, |d| measured_compute(load, d));
    if set.is_empty() {
        return None;
    }
    let target = target_override.unwrap_or_else(|| target(load));
    let context = context.unwrap_or(shape.context);
    let projector = projector_on_gpu(load).filter(|_| count_projector);
    Some(fit(&input(
        &shape,
        &set,
        target,
        context,
        load,
        projector.as_ref(),
    )))
}

/// What Ollama's padding of the margin for an offloaded projector cost (`docs/log-formats.md` §5.6 item 4): the
/// fit with the measured figures at the padded margin and at the margin without Ollama's padding, ⌈projector +
/// 1 GiB⌉ − 1 GiB less. llama-server reserves room for the projector by itself (its `[mtmd]` estimate raises the
/// fit's target, §5.7), so Ollama's padding comes on top of that reserve: when the fit printed its target, both
/// runs take the target as printed and as it would be without the padding, the reserve inside both; otherwise
/// the projector's own buffers stand for the reserve, on its GPU in both runs, at Ollama's ⌈projector + 1 GiB⌉
/// and at llama.cpp's default 1 GiB. `None` without an offloaded projector that Ollama padded for, or without
/// the measured figures (a load cut before its buffers).
pub fn projector_padding(load: &Reconciled) -> Option<ProjectorPadding> {
    let gate = load.load.scheduler.as_ref()?.projector.as_ref()?;
    let evidence = gate.padding.filter(|_| gate.offloaded)?;
    let ollamas = gate.fit_target?.bytes;
    let added = ollamas - DEFAULT_FIT_TARGET;
    if added <= 0 {
        return None;
    }
    let logged = load
        .load
        .estimate
        .as_ref()
        .and_then(|e| e.fit.as_ref()?.target)
        .map(|q| q.bytes)
        .filter(|&t| t >= ollamas);
    let (padded, plain, count_projector) = match logged {
        Some(t) => (t, t - added, false),
        None => (ollamas, DEFAULT_FIT_TARGET, true),
    };
    let at_padded = fit_counting(load, 100, None, Some(padded), count_projector)?;
    let at_plain = fit_counting(load, 100, None, Some(plain), count_projector)?;
    let used = |o: &FitOutcome| o.devices.iter().map(|d| d.used).sum::<i64>();
    Some(ProjectorPadding {
        padded_target: Quantity::exact(padded),
        plain_target: Quantity::exact(plain),
        evidence,
        layers_padded: at_padded.offloaded() as i64,
        layers_plain: at_plain.offloaded() as i64,
        total_layers: at_padded.layers.len() as i64,
        gpus_padded: at_padded.used_devices() as i64,
        gpus_plain: at_plain.used_devices() as i64,
        moved: Quantity::exact((used(&at_plain) - used(&at_padded)).max(0)),
        agrees_with_log: load
            .load
            .actual
            .offloaded_layers
            .map(|n| n == at_padded.offloaded() as i64),
    })
}

/// The largest context (all slots) at which every layer fits on the GPUs the load had, by the measured
/// figures at the load's KV type: `whatif --max-ctx`'s figure (per slot a multiple of 256, up to the trained
/// context); `None` when even 256 tokens per slot do not fit or the figures are missing.
pub fn largest_context_that_fits(load: &Reconciled) -> Option<i64> {
    let kv_type = super::figures::logged_kv_type(load);
    super::max_ctx::largest_num_ctx(load, &Changes::default(), kv_type, Judge::Measured)?.context
}

/// The fit with the plan's own figures (the table the fit chose): the placement llama.cpp would make, and
/// whether it agrees with the per-device layers the log printed.
pub fn estimate(load: &Reconciled) -> Option<EstimateReplay> {
    let e = load.load.estimate.as_ref()?;
    e.fit.as_ref()?;
    let gpu_rows: Vec<_> = e.per_device.iter().filter(|d| d.device.is_gpu()).collect();
    let weights: i64 = gpu_rows
        .iter()
        .filter_map(|d| d.weights)
        .map(|q| q.bytes)
        .sum();
    let kv: i64 = gpu_rows.iter().filter_map(|d| d.kv).map(|q| q.bytes).sum();
    let offload = e.layers.offload?;
    let blocks = e.layers.model? - 1;
    if weights <= 0 || offload <= 0 || blocks < 1 {
        return None;
    }
    let context = load.load.settings.ctx_size.unwrap_or(0);
    let shape = Shape {
        blocks,
        layer_weights: weights / offload,
        layer_kv_scaling: kv / blocks.min(offload).max(1),
        layer_kv_fixed: 0,
        layer_state: 0,
        parallel: load.load.settings.parallel.unwrap_or(1).max(1),
        context,
        from: vec![format!(
            "layer weights and KV: the plan's GPU model and context columns over its {offload} GPU layers"
        )],
        per_layer: load_figures::layout_kv(load).filter(|p| p.layout.layers.len() as i64 == blocks),
    };
    let mut shape = shape;
    if let Some(p) = &shape.per_layer {
        shape.from.push(load_figures::per_layer_note(&p.layout));
    }
    let compute = |device: &Device| {
        e.per_device
            .iter()
            .find(|d| d.device == *device)
            .and_then(|d| d.graph)
            .map_or(0, |q| q.bytes)
    };
    let set = gpus(load, compute);
    if set.is_empty() {
        return None;
    }
    let target = target(load);
    let outcome = fit(&input(&shape, &set, target, context, load, None));
    let p = placement(&outcome, &set);
    let logged_split = &e.layers.split;
    let same_count = p.offloaded == offload;
    let split_agrees = (!logged_split.is_empty()).then(|| same_count && p.split() == *logged_split);
    let decided = e.fit.as_ref().map_or(FitDecision::Unknown, |f| f.outcome);
    let reason_agrees = match decided {
        FitDecision::NoChange => outcome.reason == FitReason::NoChangeNeeded,
        FitDecision::Changed => outcome.reason != FitReason::NoChangeNeeded,
        // The fit placed nothing (it stopped): there is no decision to hold the replay to.
        FitDecision::Aborted | FitDecision::Failed | FitDecision::Unknown => true,
    };
    Some(EstimateReplay {
        figures: figures(&shape, &set, target, Vec::new()),
        strategy: format!(
            "llama.cpp --fit on the plan's figures: {}",
            outcome.reason.describe()
        ),
        placement: p,
        split_agrees,
        allocations_agree: None,
        logs_allocations: false,
        layers_agree: Some(same_count && reason_agrees),
    })
}
