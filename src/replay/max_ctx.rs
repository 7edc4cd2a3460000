//! `vramdiff whatif --max-ctx`: the largest `num_ctx` that keeps every layer on the chosen GPUs, for each KV
//! cache type. It runs the same replay as `whatif --ctx N --kv-type T` (so the answer, replayed, fits and the
//! next step does not) in a binary search:
//!
//! - **Step.** `num_ctx` (per slot) goes in steps of 256: llama.cpp pads every KV stream to 256 cells, so a
//!   context between two steps costs what the next step costs.
//! - **Ollama's estimator** (≤ v0.24): "fits" is the estimator placing every layer (and the output) on the
//!   GPUs the log used (or `--gpus`/`--gpu-count`), with its own figures scaled to the context: KV linear in the
//!   context, and the graph too (the estimator's graph grows with the context; linear is an upper bound with
//!   flash attention). That is what the estimator would accept, not what the memory would hold.
//! - **llama.cpp's `--fit`** (llama-server era): "fits" is the fit with the measured figures keeping every
//!   layer on the GPUs with each GPU's margin (`--fit-target`). KV per layer from the model's layout when the
//!   load has one (sliding-window layers stop growing at pad256(window + n_ubatch) cells per sequence), else the measured KV scaled; the
//!   compute buffers grow with the context by llama.cpp's law (`levers::ComputeLaw`).
//! - **Cap.** The trained context (`n_ctx_train`), else 1,048,576 tokens per slot.
//!
//! "Fits" is taken to be monotone in the context (more KV never frees memory), which is what a binary search
//! needs.

use super::figures::Changes;
use super::{replay, Verdicts};
use crate::model::{KvType, MaxContext, MaxContextRow, Reconciled, WhatIf};

/// llama.cpp's KV padding, and the search step per slot.
pub const STEP: i64 = 256;

/// Per-slot cap when the log gives no trained context.
const DEFAULT_CAP: i64 = 1 << 20;

/// Which replay decides "fits".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// What `--max-ctx` reports: the runtime's own placer (Ollama's estimator with the estimate's figures,
    /// llama.cpp's `--fit` with the measured ones).
    Runtime,
    /// The measured figures whoever placed the layers (what memory would hold; the suggestions' figure).
    Measured,
}

/// The trained context per slot, and where it came from.
pub(super) fn cap(load: &Reconciled) -> (i64, String) {
    let trained = load
        .load
        .model
        .layout
        .as_ref()
        .and_then(|l| l.trained_context)
        .or_else(|| load.load.model.hyperparameters.as_ref()?.n_ctx_train)
        .and_then(|t| i64::try_from(t).ok())
        .filter(|&t| t >= STEP);
    match trained {
        Some(t) => (
            t / STEP * STEP,
            format!("the trained context (n_ctx_train = {t})"),
        ),
        None => (
            DEFAULT_CAP,
            "1,048,576 tokens (the log prints no trained context)".to_string(),
        ),
    }
}

/// The replay `whatif --ctx num_ctx --kv-type kv_type` runs, with the other changes asked for.
pub fn replay_at(
    load: &Reconciled,
    changes: &Changes,
    num_ctx: i64,
    kv_type: KvType,
) -> Option<WhatIf> {
    replay(load, &at(changes, num_ctx, kv_type))
}

/// Whether `num_ctx` fits for `kv_type` (and the margin it leaves); `None` when the replay cannot run.
pub fn fits_at(
    load: &Reconciled,
    changes: &Changes,
    num_ctx: i64,
    kv_type: KvType,
    judge: Judge,
) -> Option<(bool, i64)> {
    verdicts(load, judge).at(&at(changes, num_ctx, kv_type))
}

/// The verdicts `judge` reads of the replays of `load`.
fn verdicts(load: &Reconciled, judge: Judge) -> Verdicts<'_> {
    Verdicts::new(
        load,
        judge == Judge::Measured || load.load.runtime.llama_cpp_places_layers(),
    )
}

/// `changes` with the context and the KV cache type of one step of the search.
fn at(changes: &Changes, num_ctx: i64, kv_type: KvType) -> Changes {
    Changes {
        ctx: Some(num_ctx),
        kv_type: Some(kv_type),
        ..changes.clone()
    }
}

/// The largest `num_ctx` for `kv_type` judged by `judge`, on the GPUs `changes` keeps, up to the trained
/// context; `None` when the replay cannot run.
pub fn largest_num_ctx(
    load: &Reconciled,
    changes: &Changes,
    kv_type: KvType,
    judge: Judge,
) -> Option<MaxContextRow> {
    row(load, changes, kv_type, cap(load).0, judge)
}

fn row(
    load: &Reconciled,
    changes: &Changes,
    kv_type: KvType,
    cap: i64,
    judge: Judge,
) -> Option<MaxContextRow> {
    let parallel = changes
        .parallel
        .or(load.load.settings.parallel)
        .unwrap_or(1)
        .max(1);
    // Every slot sees the whole cache with `kv_unified = true` (llama-server's `-np auto`): -c is num_ctx.
    let shared =
        crate::model::kv_geometry::SlotContext::of(&load.load.settings).is_some_and(|s| s.shared);
    let slots_in_c = if shared { 1 } else { parallel };
    let verdicts = verdicts(load, judge);
    let fits = |k: i64| verdicts.at(&at(changes, k * STEP, kv_type));
    // The answer with the margin its replay left (each context is replayed once).
    let answer = |k: Option<i64>, margin: Option<i64>, at_cap: bool| MaxContextRow {
        kv_type,
        num_ctx: k.map(|k| k * STEP),
        context: k.map(|k| k * STEP * slots_in_c),
        at_cap,
        margin,
        range: None,
    };
    let top = (cap / STEP).max(1);
    let (fits_one, mut lo_margin) = fits(1)?;
    if !fits_one {
        return Some(answer(None, None, false));
    }
    let (fits_top, top_margin) = fits(top)?;
    if fits_top {
        return Some(answer(Some(top), Some(top_margin), true));
    }
    // fits(lo) and not fits(hi).
    let (mut lo, mut hi) = (1i64, top);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let (fits_mid, margin) = fits(mid)?;
        if fits_mid {
            (lo, lo_margin) = (mid, margin);
        } else {
            hi = mid;
        }
    }
    Some(answer(Some(lo), Some(lo_margin), false))
}

/// The largest `num_ctx` per KV type (`only`: just that one), with the assumptions; `None` when the load
/// cannot be replayed.
pub fn max_ctx(load: &Reconciled, changes: &Changes, only: Option<KvType>) -> Option<MaxContext> {
    let base = Changes {
        ctx: None,
        kv_type: None,
        ..changes.clone()
    };
    if let Some(host) = super::host_fit::HostFit::of(load) {
        return host.max_ctx(changes, only);
    }
    let fit_era = load.load.runtime.llama_cpp_places_layers();
    let types: Vec<KvType> = only.map_or_else(|| KvType::ALL.to_vec(), |t| vec![t]);
    let (cap, cap_from) = cap(load);
    let rows: Vec<MaxContextRow> = types
        .iter()
        .filter_map(|&t| row(load, &base, t, cap, Judge::Runtime))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let probe = replay_at(load, &base, STEP, types[0])?;
    let gpus: Vec<String> = if fit_era {
        probe.measured.as_ref()?.placement.gpus.iter()
    } else {
        probe.estimate.as_ref()?.placement.gpus.iter()
    }
    .map(|g| g.device.to_string())
    .collect();
    let per_layer = load.load.model.layout.is_some();
    let assumptions = if fit_era {
        let compute = match changes.ubatch {
            Some(u) => {
                let m = super::levers::MicroBatch::of(load, u);
                format!(
                    "compute buffers for the micro-batch ({}) and each context by llama.cpp's law (src/replay/levers/compute.rs: n_ubatch × (a + 2 bytes a cell) with flash attention; without it n_ubatch × (a + 4 × (n_head + 1) bytes a cell), or proportional to n_ubatch × cells, an upper bound, when the log prints no n_head)",
                    m.words()
                )
            }
            None => "compute buffers grown with each context by llama.cpp's law (src/replay/levers/compute.rs: n_ubatch × (a + 2 bytes a cell) with flash attention; without it n_ubatch × (a + 4 × (n_head + 1) bytes a cell), or proportional to n_ubatch × cells, an upper bound, when the log prints no n_head)".to_string(),
        };
        let mut lines = vec![
            compute,
            if per_layer {
                format!(
                    "KV layer by layer from the model's layout{}",
                    super::figures::window_words(load)
                )
            } else {
                "KV: the measured KV scaled with the context (caches sized below the context held fixed)".to_string()
            },
            "fits: llama.cpp --fit keeps every layer on these GPUs, each with its --fit margin"
                .to_string(),
        ];
        let state = load
            .grid
            .total(&[crate::model::Part::State])
            .map_or(0, |c| c.size.bytes);
        if state > 0 {
            let slots = load.load.settings.parallel.unwrap_or(1).max(1);
            let replayed = changes.parallel.unwrap_or(slots).max(1);
            lines.push(format!(
                "recurrent state ({} measured for {slots} slot(s), replayed for {replayed}) held apart from the KV: one per sequence, f32, it grows with the slots (-np), not with the context, and no KV type shrinks it",
                crate::model::human(state)
            ));
        }
        lines
    } else {
        vec![
            "the estimator's graph grows linearly with the context (an upper bound with flash attention)".to_string(),
            if per_layer {
                format!("KV: the estimate's KV grown as the model's layout's cache grows{}, and by the estimator's bytes per element (f16 2, q8_0 1, q4_0 0.5)", super::figures::window_words(load))
            } else {
                "KV: the estimate's KV scaled with the context and by the estimator's bytes per element (f16 2, q8_0 1, q4_0 0.5)".to_string()
            },
            "fits: Ollama's estimator places every layer and the output on these GPUs".to_string(),
        ]
    };
    Some(MaxContext {
        replay: if fit_era {
            "llama.cpp --fit with the measured figures".to_string()
        } else {
            "Ollama's estimator with the estimate's figures".to_string()
        },
        gpus,
        on_host: false,
        parallel: changes
            .parallel
            .or(load.load.settings.parallel)
            .unwrap_or(1)
            .max(1),
        step: STEP,
        cap,
        cap_from,
        assumptions,
        rows,
    })
}
