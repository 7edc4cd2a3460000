//! What the llama-server replay reads from a load: the model's per-layer shape from the measured buffers and
//! the KV size lines, the GPUs as llama.cpp measured them before the load, the `--fit` margin, and the
//! measured compute and projector costs.

use super::super::fit::{FitLayer, DEFAULT_FIT_TARGET};
use crate::model::kv_geometry::{kv_geometry_of, signed, CacheGeometry};
use crate::model::{human, Device, KvType, ModelLayout, Part, Quantity, Reconciled};

/// The model's shape as the replay needs it, with where each figure came from.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Repeating layers (`n_layer`).
    pub blocks: i64,
    /// Weights of one layer (the output layer is taken as one more such layer).
    pub layer_weights: i64,
    /// KV bytes of one layer that grow with the context, at `context`.
    pub layer_kv_scaling: i64,
    /// KV bytes of one layer that do not (sliding-window caches).
    pub layer_kv_fixed: i64,
    /// Recurrent state of one layer (`llama_memory_recurrent`'s RS buffers): one per sequence, f32 whatever the
    /// KV cache type, so it grows with the slots (`-np`), never with the context or a KV type.
    pub layer_state: i64,
    /// The slots the recurrent state was measured for.
    pub parallel: i64,
    /// The context (all slots) the KV was measured at.
    pub context: i64,
    pub from: Vec<String>,
    /// The model's own layers, when known: their KV (and, from a GGUF file, their weights) replace the
    /// averages above.
    pub per_layer: Option<LayoutKv>,
}

/// A layout and the cache geometry of the load (its context replaced by the one asked for).
#[derive(Debug, Clone)]
pub struct LayoutKv {
    pub layout: ModelLayout,
    pub geometry: CacheGeometry,
}

impl Shape {
    pub(super) fn layers(&self, context: i64) -> Vec<FitLayer> {
        if let Some(p) = &self.per_layer {
            let geometry = CacheGeometry {
                context: context.max(1) as u64,
                ..p.geometry
            };
            return p
                .layout
                .layers
                .iter()
                .map(|l| FitLayer {
                    dense: l.dense_bytes.map_or(self.layer_weights, signed),
                    experts: l.expert_bytes.map_or(0, signed),
                    kv: signed(geometry.layer_total(l)),
                })
                .collect();
        }
        vec![
            FitLayer {
                dense: self.layer_weights,
                experts: 0,
                kv: self.layer_kv_at(context),
            };
            self.blocks.max(0) as usize
        ]
    }

    /// The output layer's weights: the GGUF header's (`output.weight` and its norm, or the tied embedding
    /// llama.cpp copies there) when the layout has per-layer weights, else an average layer.
    pub fn output_weights(&self) -> i64 {
        self.per_layer
            .as_ref()
            .filter(|p| p.layout.layers.iter().all(|l| l.dense_bytes.is_some()))
            .and_then(|p| p.layout.output_bytes)
            .map_or(self.layer_weights, signed)
    }

    /// KV of one (average) layer at `context` tokens (all slots).
    pub fn layer_kv_at(&self, context: i64) -> i64 {
        if let Some(p) = &self.per_layer {
            let n = p.layout.layers.len().max(1) as i64;
            let geometry = CacheGeometry {
                context: context.max(1) as u64,
                ..p.geometry
            };
            let total: u64 = p
                .layout
                .layers
                .iter()
                .map(|l| geometry.layer_total(l))
                .sum();
            return total as i64 / n;
        }
        self.layer_kv_fixed + self.layer_state + scale(self.layer_kv_scaling, context, self.context)
    }

    /// The same shape with another KV cache type: the layout's types, or the measured KV scaled by the bytes
    /// per element (f16 2, q8_0 34/32, q4_0 18/32) against the load's type. The recurrent state stays f32.
    pub fn with_kv_type(mut self, to: KvType, logged: KvType) -> Shape {
        if let Some(p) = &mut self.per_layer {
            p.geometry.type_k = to;
            p.geometry.type_v = to;
        } else {
            let (num, den) = (to.bytes(32) as i64, logged.bytes(32) as i64);
            self.layer_kv_scaling = self.layer_kv_scaling * num / den;
            self.layer_kv_fixed = self.layer_kv_fixed * num / den;
        }
        self
    }

    /// The same shape with `parallel` slots: the layout's geometry, or the measured recurrent state (one per
    /// sequence) scaled by the slots; the KV averages do not depend on them (the context is all slots').
    pub fn with_parallel(mut self, parallel: i64) -> Shape {
        let parallel = parallel.max(1);
        if let Some(p) = &mut self.per_layer {
            p.geometry.parallel = parallel as u64;
        }
        if self.parallel > 0 {
            self.layer_state = scale(self.layer_state, parallel, self.parallel);
        }
        self.parallel = parallel;
        self
    }
}

/// The layout's KV for the load, when the load has a layout and the geometry is known.
pub(super) fn layout_kv(load: &Reconciled) -> Option<LayoutKv> {
    let layout = load.load.model.layout.clone()?;
    let geometry = kv_geometry_of(&load.load.settings)?;
    Some(LayoutKv { layout, geometry })
}

fn scale(v: i64, num: i64, den: i64) -> i64 {
    if den <= 0 {
        return v;
    }
    Quantity::exact(v).scale(num, den).bytes
}

/// One GPU the replay may use.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub device: Device,
    pub free: i64,
    /// Compute buffer the GPU needs when it holds layers.
    pub compute: i64,
}

/// The free-memory margin `--fit` keeps on each device.
pub fn target(load: &Reconciled) -> i64 {
    let e = load.load.estimate.as_ref();
    e.and_then(|e| e.fit.as_ref())
        .and_then(|f| f.target)
        .or(load.load.settings.fit_target)
        .map(|q| q.bytes)
        .unwrap_or(DEFAULT_FIT_TARGET)
}

/// The GPUs as llama.cpp measured them before the load, in device order.
pub(super) fn gpus(load: &Reconciled, compute: impl Fn(&Device) -> i64) -> Vec<Gpu> {
    let measured: Vec<(Device, i64)> = load
        .load
        .estimate
        .as_ref()
        .and_then(|e| e.fit.as_ref())
        .map(|f| {
            f.free
                .iter()
                .filter(|d| d.device.is_gpu())
                .map(|d| (d.device.clone(), d.free.bytes))
                .collect()
        })
        .unwrap_or_default();
    let list: Vec<(Device, i64)> = if measured.is_empty() {
        load.load
            .gpus
            .iter()
            .enumerate()
            .filter_map(|(i, g)| {
                Some((
                    Device::gpu(crate::model::Backend::Cuda, i as u32),
                    g.free.or(g.available)?.bytes,
                ))
            })
            .collect()
    } else {
        measured
    };
    list.into_iter()
        .map(|(device, free)| Gpu {
            compute: compute(&device),
            device,
            free,
        })
        .collect()
}

/// The shape from the measured buffers and the KV size lines.
pub fn measured_shape(load: &Reconciled) -> Option<Shape> {
    let a = &load.load.actual;
    let gpu_weights = load
        .grid
        .gpus_total(&[Part::Weights])
        .map_or(0, |c| c.size.bytes);
    let offloaded = a.offloaded_layers?;
    let total = a.total_layers?;
    if gpu_weights <= 0 || offloaded <= 0 || total < 2 {
        return None;
    }
    let blocks = load.load.model.block_count.unwrap_or(total - 1);
    let mut from = vec![format!(
        "layer weights: GPU weight buffers {} over the {offloaded} layers on GPUs (the output layer counted as one)",
        human(gpu_weights)
    )];
    let context = load.load.settings.ctx_size.unwrap_or(0);
    let KvSplit {
        scaling,
        fixed,
        state,
    } = kv_split(load);
    if scaling + fixed > 0 {
        from.push(format!(
            "layer KV: KV buffers over {blocks} layers ({} grow with the context, {} do not)",
            human(scaling),
            human(fixed)
        ));
    }
    let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
    if state > 0 {
        from.push(format!(
            "recurrent state: RS buffers {} over {blocks} layers, for {parallel} slot(s): one per sequence, f32; it grows with -np, not with the context or a KV type",
            human(state)
        ));
    }
    let per_layer = layout_kv(load).filter(|p| p.layout.layers.len() as i64 == blocks);
    if let Some(p) = &per_layer {
        from.push(per_layer_note(&p.layout));
    }
    Some(Shape {
        blocks,
        layer_weights: gpu_weights / offloaded,
        layer_kv_scaling: scaling / blocks.max(1),
        layer_kv_fixed: fixed / blocks.max(1),
        layer_state: state / blocks.max(1),
        parallel,
        context,
        from,
        per_layer,
    })
}

/// The measured KV and recurrent state of a load, on every device, by how each grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvSplit {
    /// KV that grows with the context.
    pub scaling: i64,
    /// KV that does not (sliding-window caches sized below the context).
    pub fixed: i64,
    /// Recurrent state: one per sequence, whatever the context.
    pub state: i64,
}

/// The KV and recurrent-state buffers on every device, split by how they grow. The KV size lines say which
/// cache is a sliding window (sized for fewer cells than the context); a KV buffer without a size line (the
/// main KV of corpus 706 prints none, only the recurrent state does) grows with the context. The recurrent
/// state is its own part: never KV, never scaled with the context.
pub fn kv_split(load: &Reconciled) -> KvSplit {
    let a = &load.load.actual;
    // A full-attention stream holds at least the context, or its share per slot when every slot has its own stream
    // (`kv_unified = false`: `-c 8192 -np 4` prints 2048 cells and that cache grows with the context).
    let settings = &load.load.settings;
    let streams = if settings.kv_unified == Some(false) {
        settings.parallel.unwrap_or(1).max(1)
    } else {
        1
    };
    let stream_cells = settings.ctx_size.map(|c| c / streams);
    let total = |part| load.grid.total(&[part]).map_or(0, |c| c.size.bytes);
    let (kv, state) = (total(Part::Kv), total(Part::State));
    let window: i64 = a
        .kv_caches
        .iter()
        .filter(|k| !k.recurrent && matches!((k.cells, stream_cells), (Some(c), Some(s)) if c < s))
        .map(|k| k.size.bytes)
        .sum();
    if kv + state > 0 {
        let fixed = window.min(kv);
        return KvSplit {
            scaling: kv - fixed,
            fixed,
            state,
        };
    }
    // No KV buffers (a load whose KV only the size lines give).
    let sized = |recurrent: bool| -> i64 {
        a.kv_caches
            .iter()
            .filter(|k| k.recurrent == recurrent)
            .map(|k| k.size.bytes)
            .sum()
    };
    let fixed = window;
    KvSplit {
        scaling: sized(false) - fixed,
        fixed,
        state: sized(true),
    }
}

/// Measured compute buffer of one GPU (its own compute buffers, the projector's excepted).
pub(super) fn measured_compute(load: &Reconciled, device: &Device) -> i64 {
    if device.is_gpu() {
        load.grid.bytes(device, Part::Graph)
    } else {
        0
    }
}

/// What the projector costs on a GPU when it runs there (nothing when it runs on the CPU).
pub(super) fn projector_on_gpu(load: &Reconciled) -> Option<(Device, i64)> {
    let (device, _) = load.grid.first_gpu_with(Part::Projector)?;
    let all = load.grid.gpus_total(&[Part::Projector])?;
    Some((device.clone(), all.size.bytes))
}

/// Where the per-layer figures come from, in words.
pub(super) fn per_layer_note(layout: &ModelLayout) -> String {
    let weights = layout.layers.iter().all(|l| l.dense_bytes.is_some());
    let source = match &layout.source {
        crate::model::LayoutSource::Gguf { path } => format!("the GGUF header of {path}"),
        crate::model::LayoutSource::LogHyperparameters { .. } => {
            "the hyperparameters the log prints".to_string()
        }
    };
    if weights {
        let output = layout
            .output_bytes
            .map(|b| format!("; output layer {}", human(signed(b))))
            .unwrap_or_default();
        format!("per-layer weights and KV: {source} (layer by layer, not an average{output})")
    } else {
        format!("per-layer KV: {source} (full, sliding-window and recurrent layers apart); weights: the average above")
    }
}
