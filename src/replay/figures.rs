//! The figures a replay runs on: derived from the estimate line (per-layer sizes are its totals divided by the
//! block count, since the log has no per-tensor sizes), or from the measured buffers and nvidia-smi.

use crate::model::kv_geometry::{kv_geometry_of, kv_type, signed, CacheGeometry, SlotContext};
use crate::model::WeightsSemantics;
use crate::model::{
    human, Component, Engine, Estimate, KvType, Quantity, Reconciled, ReplayFigures, GIB,
};
use crate::reconcile::terms::is_single_line;
use crate::reconcile::terms::minimum_memory;

use super::families::{Family, KvPerBlock, Projector, Rules, WeightsMeaning};

/// What the user asked to change before replaying.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Use only these of the load's GPUs (by position in the estimate's list).
    pub gpus: Option<Vec<usize>>,
    /// Use only the N GPUs with the most free memory.
    pub gpu_count: Option<usize>,
    /// Context per slot (`num_ctx`).
    pub ctx: Option<i64>,
    /// The load's context × numerator / denominator, for a log that does not print its context (an estimate
    /// line without `num_ctx` or `KvSize`): the KV cache and the graph scale by it as by a new context.
    pub context_scale: Option<(i64, i64)>,
    pub parallel: Option<i64>,
    /// `OLLAMA_GPU_OVERHEAD` in bytes.
    pub gpu_overhead: Option<i64>,
    /// ollama37's `OLLAMA_GRAPH_SAFETY_MULTIPLIER` applied to the estimate's graph.
    pub graph_multiplier: Option<f64>,
    /// Let a scheduler choose the GPUs (instead of replaying on the GPUs the log used).
    pub scheduler: Option<super::placement::Scheduler>,
    /// The KV cache type (`OLLAMA_KV_CACHE_TYPE`, `--cache-type-k/v`).
    pub kv_type: Option<KvType>,
    /// Replay by this estimator family's rules instead of the one the evidence picks (`--family`).
    pub family: Option<Family>,
    /// The micro-batch (llama.cpp's `-ub`, `n_ubatch`): the compute buffers scale with it
    /// ([`super::levers::MicroBatch`]). Only llama.cpp on its own takes it (`src/model/knobs.rs`).
    pub ubatch: Option<i64>,
    /// The layers on the GPUs (`-ngl`, Ollama's `num_gpu`): fixed, so llama.cpp's `--fit` moves none.
    pub gpu_layers: Option<i64>,
    /// Flash attention on or off (`-fa`): the compute buffers' masks and scores change
    /// ([`super::levers::ComputeLaw`]). Set by the pairs of loads (`crate::pairs`), not by a `whatif` flag.
    pub flash_attention: Option<bool>,
}

impl Changes {
    /// The changes in words, for the report.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(g) = &self.gpus {
            let list: Vec<String> = g.iter().map(|i| i.to_string()).collect();
            out.push(format!("gpus {}", list.join(",")));
        }
        if let Some(n) = self.gpu_count {
            out.push(format!("gpu-count {n}"));
        }
        if let Some(c) = self.ctx {
            out.push(format!("ctx {c}"));
        }
        if let Some((num, den)) = self.context_scale {
            out.push(format!("context × {num}/{den}"));
        }
        if let Some(p) = self.parallel {
            out.push(format!("parallel {p}"));
        }
        if let Some(o) = self.gpu_overhead {
            out.push(format!("gpu-overhead {}", human(o)));
        }
        if let Some(m) = self.graph_multiplier {
            out.push(format!("graph-multiplier {m}"));
        }
        if let Some(s) = self.scheduler {
            out.push(s.describe().to_string());
        }
        if let Some(t) = self.kv_type {
            out.push(format!("kv-type {}", t.name()));
        }
        if let Some(f) = self.family {
            out.push(format!("family {}", f.name()));
        }
        if let Some(u) = self.ubatch {
            out.push(format!("ubatch {u}"));
        }
        if let Some(n) = self.gpu_layers {
            out.push(format!("ngl {n}"));
        }
        if let Some(on) = self.flash_attention {
            out.push(format!("flash-attention {}", if on { "on" } else { "off" }));
        }
        out
    }

    /// The context in tokens before and after the change (new total, logged total), when the log prints it.
    /// `--ctx` is the context a slot sees (Ollama's `num_ctx`, llama.cpp's `n_ctx_seq`): the new `-c` is it
    /// times the slots when each slot has its own share, and it alone when every slot sees the whole cache
    /// (`kv_unified = true`, llama-server's `-np auto`) ([`SlotContext`]).
    pub(crate) fn context_tokens(&self, load: &Reconciled) -> Option<(i64, i64)> {
        if self.ctx.is_none() && self.parallel.is_none() && self.context_scale.is_none() {
            return None;
        }
        let (logged, new) = self.slots(load)?;
        let mut new_total = signed(new.total());
        if let Some((num, den)) = self.context_scale {
            new_total = Quantity::exact(new_total).scale(num, den.max(1)).bytes;
        }
        Some((new_total, signed(logged.total()).max(1)))
    }

    /// The load's slots and their context, as logged and as changed by `--ctx` and `--parallel`.
    pub(crate) fn slots(&self, load: &Reconciled) -> Option<(SlotContext, SlotContext)> {
        let logged = SlotContext::of(&load.load.settings)?;
        let positive = |v: Option<i64>| v.and_then(|v| u64::try_from(v.max(1)).ok());
        Some((
            logged,
            logged.with(positive(self.ctx), positive(self.parallel)),
        ))
    }

    /// The cache geometry of the load with these changes: the context (`--ctx`, `--parallel`, a context
    /// scale), the slots, the micro-batch (`--ubatch`, at most the logical batch) and the cache type; `None`
    /// when the log does not give the load's geometry.
    pub(crate) fn geometry(&self, load: &Reconciled) -> Option<CacheGeometry> {
        let mut geometry = kv_geometry_of(&load.load.settings)?;
        if let Some((total, _)) = self.context_tokens(load) {
            geometry.context = u64::try_from(total).ok()?.max(1);
        }
        if let Some(p) = self.parallel {
            geometry.parallel = u64::try_from(p).ok()?.max(1);
        }
        if let Some(u) = self.ubatch {
            geometry.ubatch = u64::try_from(super::levers::MicroBatch::of(load, u).to).ok()?;
        }
        if let Some(t) = self.kv_type {
            geometry.type_k = t;
            geometry.type_v = t;
        }
        Some(geometry)
    }

    /// How much the context changes the KV cache (and, approximately, the graph): new total / logged total,
    /// or the scale asked for when the log does not print its context.
    fn context_factor(&self, load: &Reconciled) -> Option<(i64, i64)> {
        self.context_tokens(load).or_else(|| {
            self.context_scale
                .filter(|_| load.load.settings.ctx_size.is_none())
                .map(|(num, den)| (num, den.max(1)))
        })
    }
}

/// The context a slot sees before and after, in the words of the load's runtime: "context per slot 2048 →
/// 4096 (llama-server -c 8192 → 16384 with 4 slots, one cache each)", or with `kv_unified = true` "… (-c 8192
/// → 16384: the 4 slots share one cache and each sees all of it)"; Ollama's `num_ctx` for its runtimes.
pub(crate) fn slot_words(load: &Reconciled, logged: SlotContext, new: SlotContext) -> String {
    use crate::model::Runtime;
    let (what, flag) = match load.load.runtime {
        Runtime::LlamaCpp | Runtime::LlamaCppLauncherUnknown | Runtime::Unknown => {
            ("context per slot", "llama-server -c")
        }
        Runtime::OllamaFit => ("num_ctx (context per slot)", "llama-server -c"),
        Runtime::OllamaEstimator | Runtime::OllamaEngine | Runtime::OllamaPlacerUnknown => {
            ("num_ctx (context per slot)", "the runner's context")
        }
        Runtime::Vllm | Runtime::Sglang => ("context per sequence", "the context"),
    };
    let arrow = |a: u64, b: u64| {
        if a == b {
            a.to_string()
        } else {
            format!("{a} → {b}")
        }
    };
    let slots = arrow(logged.parallel, new.parallel);
    let plural = if new.parallel == 1 && logged.parallel == 1 {
        "slot"
    } else {
        "slots"
    };
    let how = if new.shared {
        format!(": the {slots} {plural} share one cache and each sees all of it")
    } else {
        format!(" with {slots} {plural}")
    };
    format!(
        "{what} {} ({flag} {}{how})",
        arrow(logged.per_slot, new.per_slot),
        arrow(logged.total(), new.total())
    )
}

/// Ollama's estimator's bytes per element in halves (`kvCacheBytesPerElement`: f16 2, q8_0 1, q4_0 0.5).
fn estimator_bytes(t: KvType) -> i64 {
    match t {
        KvType::F16 => 4,
        KvType::Q8_0 => 2,
        KvType::Q4_0 => 1,
    }
}

/// llama.cpp's bytes per 32 elements (f16 64, q8_0 34, q4_0 18).
fn llama_cpp_bytes(t: KvType) -> i64 {
    t.bytes(32) as i64
}

impl Changes {
    /// The KV cache type asked for, the load's, and the factor between them by `bytes`; `None` when no type
    /// was asked for, or it is the load's.
    pub(crate) fn kv_type_factor(
        &self,
        load: &Reconciled,
        bytes: fn(KvType) -> i64,
    ) -> Option<(KvType, KvType, (i64, i64))> {
        let to = self.kv_type?;
        let from = logged_kv_type(load);
        (to != from).then(|| (to, from, (bytes(to), bytes(from))))
    }
}

/// The load's KV cache type (f16 when the log does not say, or names a type other than q8_0/q4_0).
pub(crate) fn logged_kv_type(load: &Reconciled) -> KvType {
    load.load
        .settings
        .kv_cache_type
        .as_deref()
        .and_then(kv_type)
        .unwrap_or(KvType::F16)
}

/// Which end of each printed figure's rounding interval to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Low,
    Nominal,
    High,
}

impl End {
    pub fn of(self, q: Quantity) -> i64 {
        match self {
            End::Low => q.low,
            End::Nominal => q.bytes,
            End::High => q.high,
        }
    }
}

fn scale(v: i64, (num, den): (i64, i64)) -> i64 {
    Quantity::exact(v).scale(num, den).bytes
}

/// Figures from a single-line estimate (`msg=offload`/`offload to …`) read as upstream 0.7.1–0.11.4 reads them;
/// `None` for other estimate forms or when the line lacks a term the placement needs.
pub fn from_estimate(load: &Reconciled, changes: &Changes, end: End) -> Option<ReplayFigures> {
    let rules = Family::Upstream071.rules();
    let mut f = from_estimate_by(load, changes, end, rules)?;
    // The log's own reading of its weights fields (by its version) stays the default.
    if let Some(e) = load.load.estimate.as_ref() {
        if e.weights_semantics == WeightsSemantics::BlocksWithKv {
            f = from_estimate_by(
                load,
                changes,
                end,
                &Rules {
                    weights: WeightsMeaning::TotalHoldsKv,
                    ..*rules
                },
            )?;
        }
    }
    Some(f)
}

/// Figures from a single-line estimate as the build family `rules` wrote it: which field holds the blocks,
/// where the projector goes, how the KV is shared over the blocks.
pub fn from_estimate_by(
    load: &Reconciled,
    changes: &Changes,
    end: End,
    rules: &Rules,
) -> Option<ReplayFigures> {
    let e = load.load.estimate.as_ref()?;
    if !is_single_line(e) {
        return None;
    }
    let blocks = e.layers.model? - 1;
    if blocks < 1 {
        return None;
    }
    let (block_total, block_from) = match rules.weights {
        WeightsMeaning::TotalHoldsKv => (
            e.weights_total?.minus(e.kv?),
            "(memory.weights.total − memory.required.kv)",
        ),
        WeightsMeaning::Repeating => (e.weights_repeating?, "memory.weights.repeating"),
    };
    let v = |q: Quantity| end.of(q);
    let mut from = vec![format!("layer weights = {block_from} / {blocks} blocks")];
    let mut layer_kv = e.kv.map(v).unwrap_or(0) / blocks;
    from.push("layer KV = memory.required.kv / blocks".to_string());
    let mut output = v(e.weights_nonrepeating?);
    from.push("output = memory.weights.nonrepeating".to_string());
    let mut first_gpu_extra = 0;
    let projector = e.projector_weights.map(v).unwrap_or(0);
    if rules.projector == Projector::FirstGpu {
        first_gpu_extra = projector + e.projector_graph.map(v).unwrap_or(0);
        if first_gpu_extra > 0 {
            from.push("projector.weights + projector.graph on the first GPU".into());
        }
    } else if load.load.engine == Engine::Ollama {
        output += projector + e.projector_graph.map(v).unwrap_or(0);
        if projector > 0 {
            from.push(
                "+ projector.weights + projector.graph with the output (Ollama engine)".into(),
            );
        }
    } else if projector > 0 {
        first_gpu_extra = projector;
        from.push("projector.weights on the first GPU (llama engine)".into());
    }
    let mut graph = e.graph_full.map(v)?;
    let mut graph_partial = e.graph_partial.map(v).unwrap_or(graph);
    from.push("graph = memory.graph.full (partial: memory.graph.partial)".to_string());
    if let Some(factor) = changes.context_factor(load) {
        graph = scale(graph, factor);
        graph_partial = scale(graph_partial, factor);
        match layout_kv_growth(load, changes, blocks) {
            Some(growth) => {
                layer_kv = scale(layer_kv, growth);
                from.push(format!(
                    "KV × {}/{} as the layout's cache grows to the new context{}; graph × {}/{} (linear, an \
                     upper bound with flash attention)",
                    growth.0,
                    growth.1,
                    window_words(load),
                    factor.0,
                    factor.1
                ));
            }
            None => {
                layer_kv = scale(layer_kv, factor);
                from.push(format!(
                    "KV and graph × {}/{} for the new context (graph: linear, an upper bound with flash \
                     attention)",
                    factor.0, factor.1
                ));
            }
        }
    }
    if let Some((to, from_type, factor)) = changes.kv_type_factor(load, estimator_bytes) {
        layer_kv = scale(layer_kv, factor);
        from.push(format!(
            "KV × {}/{} for a {} cache instead of {} (the estimator's bytes per element)",
            factor.0,
            factor.1,
            to.name(),
            from_type.name()
        ));
    }
    if let Some(m) = changes.graph_multiplier {
        let m = (m * 1000.0).round() as i64;
        graph = scale(graph, (m, 1000));
        graph_partial = scale(graph_partial, (m, 1000));
        from.push(format!("graph × {} (graph multiplier)", m as f64 / 1000.0));
    }
    let library = e.library.as_deref();
    let layer_weights = v(block_total) / blocks;
    // The layout shares the estimate's KV over the blocks (a window layer holds less) and, from a GGUF file,
    // gives each block its own weights, as the estimator sums `blk.N` tensors.
    let per_layer = layout_blocks(load, changes, blocks)
        .map(|(weights, kv)| {
            from.push(layout_note(load));
            let kv_total: i128 = kv.iter().map(|&k| i128::from(k)).sum();
            let estimate_total = i128::from(layer_kv).saturating_mul(i128::from(blocks));
            weights
                .iter()
                .zip(&kv)
                .map(|(w, &k)| {
                    let share = if kv_total == 0 {
                        layer_kv
                    } else {
                        i64::try_from(estimate_total.saturating_mul(i128::from(k)) / kv_total)
                            .unwrap_or(i64::MAX)
                    };
                    let share = match rules.kv {
                        KvPerBlock::Even => layer_kv,
                        KvPerBlock::PerLayer => share,
                    };
                    (w.map_or(layer_weights, signed), share)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(ReplayFigures {
        layer_weights,
        layer_kv,
        blocks,
        output,
        first_gpu_extra,
        graph,
        graph_partial,
        per_gpu_floor: minimum_memory(library),
        gpu_overhead: changes.gpu_overhead.or(e.gpu_overhead.map(v)).unwrap_or(0),
        layer_buffer: true,
        from,
        per_layer,
    })
}

/// Each block's weights (when the layout knows them) and KV bytes in llama.cpp's sizing at the context, slots
/// and cache type `changes` asks for; `None` without a layout of `blocks` layers or a cache geometry.
fn layout_blocks(
    load: &Reconciled,
    changes: &Changes,
    blocks: i64,
) -> Option<(Vec<Option<u64>>, Vec<u64>)> {
    let layout = load.load.model.layout.as_ref()?;
    if layout.layers.len() as i64 != blocks {
        return None;
    }
    let geometry = changes.geometry(load)?;
    let weights = layout
        .layers
        .iter()
        .map(|l| Some(l.dense_bytes?.saturating_add(l.expert_bytes.unwrap_or(0))))
        .collect();
    let kv = layout
        .layers
        .iter()
        .map(|l| geometry.layer_total(l))
        .collect();
    Some((weights, kv))
}

/// How the layout's KV cache grows from the logged context and slots to those `changes` asks for, the cache type
/// kept: (new total, logged total) in bytes. The estimator's logged KV is scaled by it, so a model whose window
/// layers stop growing (gemma3: 5 of 6) is not charged a linear cache. `None` without a layout of `blocks` layers.
fn layout_kv_growth(load: &Reconciled, changes: &Changes, blocks: i64) -> Option<(i64, i64)> {
    let total = |kv: Vec<u64>| kv.into_iter().map(signed).fold(0i64, i64::saturating_add);
    let same_type = Changes {
        kv_type: None,
        ..changes.clone()
    };
    let (_, new) = layout_blocks(load, &same_type, blocks)?;
    let (_, logged) = layout_blocks(load, &Changes::default(), blocks)?;
    let (new, logged) = (total(new), total(logged));
    (logged > 0).then_some((new, logged))
}

/// What the layout's sliding-window layers hold, in words (" (sliding-window layers: pad256(window 1024 +
/// n_ubatch) cells per sequence)"); empty for a model without a window.
pub(crate) fn window_words(load: &Reconciled) -> String {
    let Some(window) = load.load.model.layout.as_ref().and_then(|l| {
        l.layers.iter().find_map(|l| match l.attention {
            crate::model::LayerAttention::SlidingWindow { window, .. } => Some(window),
            _ => None,
        })
    }) else {
        return String::new();
    };
    format!(
        " (sliding-window layers stop growing at pad256(window {window} + n_ubatch) cells per sequence, \
         pad256(window × slots + n_ubatch) in a unified cache)"
    )
}

fn layout_note(load: &Reconciled) -> String {
    match load.load.model.layout.as_ref().map(|l| &l.source) {
        Some(crate::model::LayoutSource::Gguf { path }) => {
            format!("per-block weights and KV shares: the GGUF header of {path}")
        }
        _ => "per-block KV shares: the hyperparameters the log prints (weights: the average)"
            .to_string(),
    }
}

fn component(load: &Reconciled, c: Component) -> Option<&crate::model::ComponentRow> {
    load.components.iter().find(|r| r.component == c)
}

/// Figures from what the runner really allocated, scaled from the estimate's shape: per-layer weights are the
/// estimate's times the measured/estimated weight ratio; KV and graph are the measured totals; the per-GPU
/// floor is the CUDA context nvidia-smi measured (else Ollama's MinimumMemory), and no layer is held back.
pub fn measured(load: &Reconciled, changes: &Changes) -> Option<ReplayFigures> {
    let base = from_estimate(load, &Changes::default(), End::Nominal)?;
    let e: &Estimate = load.load.estimate.as_ref()?;
    let mut from = Vec::new();
    // Without measured weights there is nothing measured to replay.
    let weights = component(load, Component::WeightsGpu)?;
    let (Some(a), Some(est)) = (weights.actual, weights.estimated) else {
        return None;
    };
    if a.bytes <= 0 || est.bytes <= 0 {
        return None;
    }
    from.push(format!(
        "weights: estimate's per-layer sizes × measured/estimated GPU weights ({} / {})",
        human(a.bytes),
        human(est.bytes)
    ));
    let (ratio_num, ratio_den) = (a.bytes, est.bytes);
    let blocks = base.blocks;
    let layer_weights = scale(base.layer_weights, (ratio_num, ratio_den));
    let nonrep = e.weights_nonrepeating.map(|q| q.bytes).unwrap_or(0);
    let mut output = scale(nonrep, (ratio_num, ratio_den));
    let mut first_gpu_extra = 0;
    let projector = component(load, Component::Projector);
    let projector_weights = e.projector_weights.map(|q| q.bytes).unwrap_or(0);
    if load.load.engine == Engine::Ollama {
        // The Ollama engine loads vision tensors with the weights and runs the vision graph in the compute
        // buffers, so both are inside the measured weights and graph.
        output += scale(projector_weights, (ratio_num, ratio_den));
    } else if let Some(p) = projector.and_then(|p| p.actual.or(p.estimated)) {
        first_gpu_extra = p.bytes;
        from.push(format!("projector: {} on the first GPU", human(p.bytes)));
    }
    let kv_total = match component(load, Component::Kv).and_then(|r| r.actual) {
        Some(kv) => {
            from.push(format!("KV: measured {}", human(kv.bytes)));
            kv.bytes
        }
        None => {
            let kv = e.kv.map(|q| q.bytes).unwrap_or(0);
            from.push(format!(
                "KV: the estimate's {} (no KV buffer line)",
                human(kv)
            ));
            kv
        }
    };
    let mut layer_kv = kv_total / blocks;
    let mut graph = match component(load, Component::Graph).and_then(|r| r.actual) {
        Some(g) => {
            from.push(format!(
                "graph: all measured GPU compute buffers, {} (charged once per GPU used)",
                human(g.bytes)
            ));
            g.bytes
        }
        None => {
            from.push("graph: the estimate's (no compute buffer line)".into());
            base.graph
        }
    };
    if let Some(factor) = changes.context_factor(load) {
        layer_kv = scale(layer_kv, factor);
        graph = scale(graph, factor);
        from.push(format!(
            "KV and graph × {}/{} for the new context",
            factor.0, factor.1
        ));
    }
    if let Some((to, from_type, factor)) = changes.kv_type_factor(load, llama_cpp_bytes) {
        layer_kv = scale(layer_kv, factor);
        from.push(format!(
            "KV × {}/{} for a {} cache instead of {} (llama.cpp's bytes per element)",
            factor.0,
            factor.1,
            to.name(),
            from_type.name()
        ));
    }
    let context = load
        .observed
        .iter()
        .filter_map(|o| o.unattributed)
        .map(|q| q.bytes)
        .filter(|&b| b > 0 && b < 4 * GIB)
        .min();
    let per_gpu_floor = match context {
        Some(c) => {
            from.push(format!(
                "per-GPU floor: CUDA context measured by nvidia-smi, {} (the smallest unattributed figure)",
                human(c)
            ));
            c
        }
        None => {
            let m = minimum_memory(e.library.as_deref());
            from.push(format!(
                "per-GPU floor: Ollama's MinimumMemory {} (no nvidia-smi capture; a K80 context measured ≈553 MiB)",
                human(m)
            ));
            m
        }
    };
    // With a layout, each block's KV in llama.cpp's sizing (checked against the logs' KV lines) and, from a
    // GGUF file, its own weights.
    let per_layer = layout_blocks(load, changes, blocks)
        .map(|(weights, kv)| {
            from.push(layout_note(load).replace("KV shares", "KV"));
            weights
                .iter()
                .zip(kv)
                .map(|(w, k)| (w.map_or(layer_weights, signed), signed(k)))
                .collect()
        })
        .unwrap_or_default();
    Some(ReplayFigures {
        layer_weights,
        layer_kv,
        blocks,
        output,
        first_gpu_extra,
        graph,
        graph_partial: graph,
        per_gpu_floor,
        gpu_overhead: changes
            .gpu_overhead
            .or(e.gpu_overhead.map(|q| q.bytes))
            .unwrap_or(0),
        layer_buffer: false,
        from,
        per_layer,
    })
}
