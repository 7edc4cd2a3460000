//! The settings two loads of one model differ in, and the `whatif` changes that replay the first with the
//! second's: the context and the slots (`--ctx`, `--parallel`), the micro-batch (`--ubatch`), the KV cache type
//! (`--kv-type`) and the layers (`--ngl`). A setting no lever models (flash attention, mmap, the split mode, a
//! K and V of different types) is named with the figures it moves, so the comparison never passes a figure it
//! moved off as predicted.

use crate::model::kv_geometry::{kv_type, SlotContext};
use crate::model::{Concluded, Runtime, SettingChange, Settings};
use crate::replay::levers::refusal;
use crate::replay::Changes;

/// A figure of the comparison a setting moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moves {
    Weights,
    Kv,
    Compute,
    Layers,
}

const COMPUTE: &[Moves] = &[Moves::Compute];
const LAYERS: &[Moves] = &[Moves::Layers, Moves::Weights];
const ALL: &[Moves] = &[Moves::Weights, Moves::Kv, Moves::Compute, Moves::Layers];

/// A changed setting the replay does not model, and what it moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmodelled {
    /// `flash attention on → off: not modelled`.
    pub words: String,
    pub moves: &'static [Moves],
}

/// A serving engine's share of each GPU (vLLM's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`)
/// changed: the KV pool is what that share leaves after the weights and the rest, so it moves by each GPU's
/// total × the change.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoolShift {
    pub before: f64,
    pub after: f64,
}

/// A lever no real pair has checked yet — no pair of loads in `sample-logs/` nor in the oracle suite
/// (`tests/data/oracle/`) changes its setting alone (`docs/findings.md`); the report calls its prediction
/// unverified.
pub const UNVERIFIED: &[&str] = &[
    "gpu-memory-utilization",
    "mem-fraction-static",
    "max-model-len",
    "context-length",
];

/// What differs between two loads' settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsDiff {
    pub changed: Vec<SettingChange>,
    /// The `whatif` changes that replay the first load with the second's settings.
    pub changes: Changes,
    /// A serving engine's KV pool share, when it changed.
    pub pool: Option<PoolShift>,
    /// The serving levers that move the KV pool figure (`gpu-memory-utilization`, `max-model-len`…).
    pub pool_levers: Vec<String>,
    pub unmodelled: Vec<Unmodelled>,
    /// Neither load printed a setting this module reads.
    pub none_logged: bool,
}

/// The settings `to` changed from `from` (`from_number`: the first load's number, for a refusal's words).
pub fn diff(from: &Concluded, to: &Concluded, from_number: usize) -> SettingsDiff {
    let (a, b) = (&from.reconciled.load.settings, &to.reconciled.load.settings);
    let mut out = SettingsDiff {
        none_logged: !logs_any(a)
            && !logs_any(b)
            && !serving_logs_any(from)
            && !serving_logs_any(to),
        ..SettingsDiff::default()
    };
    serving(from, to, &mut out);
    context(a, b, &mut out);
    micro_batch(a, b, &mut out);
    kv_types(a, b, &mut out);
    if let (Some(x), Some(y)) = (a.gpu_layers, b.gpu_layers) {
        let blocks = from.reconciled.load.model.block_count;
        // -ngl 99 and 999 both mean every layer when the model has fewer.
        let all = |n: i64| blocks.is_some_and(|bc| n > bc);
        if x != y && !(all(x) && all(y)) {
            out.changes.gpu_layers = Some(y);
            out.changed.push(modelled(
                "ngl",
                x,
                y,
                "replayed with --ngl: the layers on the GPUs",
            ));
        }
    }
    unmodelled_flags(a, b, &mut out);
    gpus(from, to, &mut out);
    refuse(from, from_number, &mut out);
    let slots_changed = out.changes.ctx.is_some() || out.changes.parallel.is_some();
    if slots_changed && !from.reconciled.load.runtime.llama_cpp_places_layers() {
        // Ollama's own placement replays its graph estimate at another context, not the runner's buffers.
        out.unmodelled.push(Unmodelled {
            words: "the compute buffers at another context or slot count: the replay scales Ollama's graph \
                    estimate, not the runner's buffers"
                .to_string(),
            moves: COMPUTE,
        });
    }
    if out.none_logged {
        out.unmodelled.push(Unmodelled {
            words: "neither load's settings are in the log".to_string(),
            moves: ALL,
        });
    } else if !replayed(to.reconciled.load.runtime) {
        out.unmodelled.push(Unmodelled {
            words: format!(
                "{}'s settings are not replayed",
                to.reconciled.load.runtime.name()
            ),
            moves: ALL,
        });
    }
    out
}

/// Whether a serving engine's start printed a setting [`serving`] reads.
fn serving_logs_any(load: &Concluded) -> bool {
    load.reconciled.load.serving.as_ref().is_some_and(|s| {
        s.utilization.is_some() || s.tensor_parallel.is_some() || s.max_len.is_some()
    })
}

/// A vLLM or SGLang start's settings (`crate::model::ServingFigures`): the pool share and the longest request
/// are replayed on the KV pool; the tensor-parallel size, the KV type and the batch limits are named, not
/// modelled. A command line without `-tp` ran one GPU (`sample-logs/801-…`: `vllm serve …` then `… -tp 2`).
fn serving(from: &Concluded, to: &Concluded, out: &mut SettingsDiff) {
    let (Some(a), Some(b)) = (
        from.reconciled.load.serving.as_ref(),
        to.reconciled.load.serving.as_ref(),
    ) else {
        return;
    };
    let sglang = matches!(to.reconciled.load.runtime, Runtime::Sglang);
    if let (Some(x), Some(y)) = (a.utilization, b.utilization) {
        if (x.value - y.value).abs() > 1e-9 {
            let name = if sglang {
                "mem-fraction-static"
            } else {
                "gpu-memory-utilization"
            };
            out.pool = Some(PoolShift {
                before: x.value,
                after: y.value,
            });
            out.pool_levers.push(name.to_string());
            out.changed.push(modelled(
                name,
                x.value,
                y.value,
                "replayed on the KV pool: each GPU's total × the change (unverified: no real pair yet)",
            ));
        }
    }
    if let (Some(x), Some(y)) = (a.max_len, b.max_len) {
        if x.value != y.value {
            let name = if sglang {
                "context-length"
            } else {
                "max-model-len"
            };
            out.pool_levers.push(name.to_string());
            out.changed.push(modelled(
                name,
                x.value,
                y.value,
                "the KV pool is what the budget leaves, not sized by the longest request: predicted unchanged \
                 (unverified: no real pair yet)",
            ));
        }
    }
    let tp = |s: &crate::model::ServingFigures| {
        s.tensor_parallel
            .map(|c| c.value)
            .or(s.model.as_ref().map(|_| 1))
    };
    if let (Some(x), Some(y)) = (tp(a), tp(b)) {
        if x != y {
            not_modelled(
                out,
                "tensor-parallel",
                x.to_string(),
                y.to_string(),
                "the weights, the KV pool and the engine's own memory split over other GPUs",
                ALL,
            );
        }
    }
    if let (Some(x), Some(y)) = (a.kv_cache_fp8, b.kv_cache_fp8) {
        if x != y {
            let words = |fp8: bool| if fp8 { "fp8" } else { "16-bit" }.to_string();
            not_modelled(
                out,
                "kv-cache-dtype",
                words(x),
                words(y),
                "the pool holds other tokens per byte",
                &[Moves::Kv],
            );
        }
    }
    for (name, x, y) in [
        ("max-num-seqs", a.max_num_seqs, b.max_num_seqs),
        ("max-num-batched-tokens", a.batched_tokens, b.batched_tokens),
    ] {
        if let (Some(x), Some(y)) = (x, y) {
            if x.value != y.value {
                not_modelled(
                    out,
                    name,
                    x.value.to_string(),
                    y.value.to_string(),
                    "the activation peak and the CUDA graphs move, and the KV pool with them",
                    &[Moves::Kv, Moves::Compute],
                );
            }
        }
    }
}

fn logs_any(s: &Settings) -> bool {
    s.ctx_size.is_some()
        || s.ubatch_size.is_some()
        || s.batch_size.is_some()
        || s.gpu_layers.is_some()
        || s.kv_cache_type.is_some()
        || s.flash_attention.is_some()
        || s.parallel.is_some()
}

fn modelled(
    setting: &str,
    before: impl ToString,
    after: impl ToString,
    why: &str,
) -> SettingChange {
    SettingChange {
        setting: setting.to_string(),
        before: before.to_string(),
        after: after.to_string(),
        modelled: true,
        why: why.to_string(),
    }
}

fn not_modelled(
    out: &mut SettingsDiff,
    setting: &str,
    before: String,
    after: String,
    why: &str,
    moves: &'static [Moves],
) {
    let words = format!("{setting} {before} → {after}: not modelled");
    out.changed.push(SettingChange {
        setting: setting.to_string(),
        before,
        after,
        modelled: false,
        why: format!("{words} ({why})"),
    });
    out.unmodelled.push(Unmodelled { words, moves });
}

/// The context per slot and the slots: `--ctx` is a slot's context, `--parallel` the slots.
fn context(a: &Settings, b: &Settings, out: &mut SettingsDiff) {
    let (Some(x), Some(y)) = (SlotContext::of(a), SlotContext::of(b)) else {
        return;
    };
    if x.shared != y.shared {
        not_modelled(
            out,
            "kv_unified",
            x.shared.to_string(),
            y.shared.to_string(),
            "one cache shared by the slots, or one each: no lever switches it",
            &[Moves::Kv, Moves::Compute],
        );
        return;
    }
    if x.total() != y.total() {
        out.changes.ctx = i64::try_from(y.per_slot).ok();
        out.changed.push(modelled(
            "ctx",
            x.total(),
            y.total(),
            "replayed with --ctx (the context a slot sees): the KV cache, and the compute buffers llama.cpp sizes for it",
        ));
    }
    if x.parallel != y.parallel {
        out.changes.parallel = i64::try_from(y.parallel).ok();
        out.changed.push(modelled(
            "parallel",
            x.parallel,
            y.parallel,
            "replayed with --parallel: the slots",
        ));
    }
}

/// The micro-batch llama.cpp runs with: `min(n_batch, n_ubatch)`; `--ubatch` when it differs.
fn micro_batch(a: &Settings, b: &Settings, out: &mut SettingsDiff) {
    if let (Some(x), Some(y)) = (a.batch_size, b.batch_size) {
        if x != y {
            out.changed.push(modelled(
                "batch",
                x,
                y,
                "the logical batch: it caps the micro-batch and moves nothing else the replay counts",
            ));
        }
    }
    let (Some(x), Some(y)) = (a.ubatch_size, b.ubatch_size) else {
        return;
    };
    let effective = |u: i64, batch: Option<i64>| batch.map_or(u, |b| u.min(b));
    let (ex, ey) = (effective(x, a.batch_size), effective(y, b.batch_size));
    if ex != ey {
        out.changes.ubatch = Some(ey);
        out.changed.push(modelled(
            "ubatch",
            ex,
            ey,
            "replayed with --ubatch: the compute buffers",
        ));
    }
}

/// The KV cache type: `--kv-type` when the second load's K and V are of one type.
fn kv_types(a: &Settings, b: &Settings, out: &mut SettingsDiff) {
    let types = |s: &Settings| {
        let k = s.kv_cache_type.clone()?;
        let v = s.kv_cache_type_v.clone().unwrap_or_else(|| k.clone());
        Some((k, v))
    };
    let (Some((ka, va)), Some((kb, vb))) = (types(a), types(b)) else {
        return;
    };
    if ka.eq_ignore_ascii_case(&kb) && va.eq_ignore_ascii_case(&vb) {
        return;
    }
    let words = |k: &str, v: &str| {
        if k.eq_ignore_ascii_case(v) {
            k.to_string()
        } else {
            format!("K {k}, V {v}")
        }
    };
    let (before, after) = (words(&ka, &va), words(&kb, &vb));
    match (
        kv_type(&kb),
        kb.eq_ignore_ascii_case(&vb),
        ka.eq_ignore_ascii_case(&va),
    ) {
        (Some(t), true, true) => {
            out.changes.kv_type = Some(t);
            out.changed.push(modelled(
                "kv-type",
                before,
                after,
                "replayed with --kv-type: the KV cache",
            ));
        }
        (Some(_) | None, _, _) => not_modelled(
            out,
            "kv-type",
            before,
            after,
            "--kv-type sets K and V to one of f16, q8_0, q4_0",
            &[Moves::Kv],
        ),
    }
}

fn unmodelled_flags(a: &Settings, b: &Settings, out: &mut SettingsDiff) {
    let on_off = |v: bool| if v { "on" } else { "off" }.to_string();
    if let (Some(x), Some(y)) = (a.flash_attention, b.flash_attention) {
        if x != y {
            not_modelled(
                out,
                "flash attention",
                on_off(x),
                on_off(y),
                "the compute graph's per-token part differs between the two, src/replay/levers/compute.rs",
                &[Moves::Compute],
            );
        }
    }
    if let (Some(x), Some(y)) = (a.mmap, b.mmap) {
        if x != y {
            not_modelled(
                out,
                "mmap",
                on_off(x),
                on_off(y),
                "where the host's weights live",
                &[Moves::Weights],
            );
        }
    }
    if let (Some(x), Some(y)) = (&a.split_mode, &b.split_mode) {
        if x != y {
            not_modelled(
                out,
                "split-mode",
                x.clone(),
                y.clone(),
                "no lever splits the model another way",
                &[Moves::Weights, Moves::Kv, Moves::Compute, Moves::Layers],
            );
        }
    }
    if let (Some(x), Some(y)) = (a.main_gpu, b.main_gpu) {
        if x != y {
            not_modelled(
                out,
                "main-gpu",
                x.to_string(),
                y.to_string(),
                "no lever moves the main GPU",
                &[Moves::Weights, Moves::Kv, Moves::Compute, Moves::Layers],
            );
        }
    }
    if let (Some(x), Some(y)) = (a.projector_offload, b.projector_offload) {
        if x != y {
            not_modelled(
                out,
                "projector offload",
                on_off(x),
                on_off(y),
                "no lever moves the projector",
                &[Moves::Weights, Moves::Compute],
            );
        }
    }
}

/// The GPUs the loads name (`inference compute` lines, a device list): other cards are another machine or
/// another GPU set, which no lever replays a load on.
fn gpus(from: &Concluded, to: &Concluded, out: &mut SettingsDiff) {
    let names = |c: &Concluded| {
        let mut n: Vec<String> = c
            .reconciled
            .load
            .gpus
            .iter()
            .filter_map(|g| g.name.clone())
            .collect();
        n.sort();
        n
    };
    let (x, y) = (names(from), names(to));
    if !x.is_empty() && !y.is_empty() && x != y {
        not_modelled(
            out,
            "gpus",
            x.join(" + "),
            y.join(" + "),
            "other cards: no lever replays a load on another GPU set",
            ALL,
        );
    }
}

/// A lever the first load's runtime refuses (`whatif` would): dropped from the changes, named as not modelled.
fn refuse(from: &Concluded, number: usize, out: &mut SettingsDiff) {
    let load = &from.reconciled;
    let mut dropped = Vec::new();
    if out.changes.ubatch.is_some() {
        let only = Changes {
            ubatch: out.changes.ubatch,
            ..Changes::default()
        };
        if let Some(why) = refusal(load, number, &only) {
            out.changes.ubatch = None;
            dropped.push(("ubatch", why, COMPUTE));
        }
    }
    if out.changes.gpu_layers.is_some() {
        let only = Changes {
            gpu_layers: out.changes.gpu_layers,
            ..Changes::default()
        };
        if let Some(why) = refusal(load, number, &only) {
            out.changes.gpu_layers = None;
            dropped.push(("ngl", why, LAYERS));
        }
    }
    for (setting, why, moves) in dropped {
        if let Some(c) = out.changed.iter_mut().find(|c| c.setting == setting) {
            c.modelled = false;
            c.why = format!("{setting} {} → {}: not modelled ({why})", c.before, c.after);
            out.unmodelled.push(Unmodelled {
                words: format!("{setting} {} → {}: not modelled", c.before, c.after),
                moves,
            });
        }
    }
}

/// Whether the runtime has a replay at all: every one has (vLLM's and SGLang's is their KV pool's, [`serving`]).
pub fn replayed(runtime: Runtime) -> bool {
    match runtime {
        Runtime::OllamaEstimator
        | Runtime::OllamaEngine
        | Runtime::OllamaFit
        | Runtime::LlamaCpp
        | Runtime::Unknown
        | Runtime::Vllm
        | Runtime::Sglang => true,
    }
}
