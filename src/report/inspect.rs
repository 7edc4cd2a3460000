//! `vramdiff inspect MODEL.gguf`: what a model file says about memory, before any log — the weights per layer
//! (experts apart), what does not repeat, the projector, and the KV cache per token for each cache type, with
//! the sliding-window and recurrent layers named (their cost does not grow with the context the same way).
//!
//! # JSON
//! Keys sorted, deterministic. `schema_version`, `tool`, `file`, `file_bytes`, `gguf_version`, `alignment`,
//! `data_start`, `architecture`, `name`, `block_count`, `trained_context`, `layers[]` (`{index, bytes,
//! dense_bytes, expert_bytes, attention: {kind, …}, kv_bytes_per_token: {f16, q8_0, q4_0}}`), `weights_bytes`,
//! `repeating_bytes`, `expert_bytes`, `nonrepeating_bytes`, `output_bytes`, `projector_bytes`, `projector_file`,
//! `kv_bytes_per_token` (f16 K and V, summed over every attention layer), `kv_cache` (per cache type:
//! `bytes_per_token`, `full_bytes_per_token`, `sliding_window_bytes_per_token`, `sliding_window_bytes_per_slot`:
//! what the window layers hold per sequence at the default micro-batch), `sliding_window`,
//! `sliding_window_cells` (llama.cpp's `pad256(window + n_ubatch)` cells per sequence at `-ub 512`),
//! `sliding_window_layers`, `recurrent_layers`, `recurrent_state_bytes_per_slot`, `tensors` (the count).
//! `--tensors` adds `tensor_list[]` (`{name, type, type_name, shape, offset, bytes, data_bytes}`) and
//! `metadata[]` (`{key, type, value}`, file order; arrays as JSON arrays).

use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::gguf::value::{type_name, value_type, Array, Value};
use crate::gguf::GgufHeader;
use crate::model::kv_geometry::{CacheGeometry, DEFAULT_UBATCH};
use crate::model::{human, KvType, LayerAttention, LayerLayout, ModelLayout};

use super::document::{Block, Document};
use super::table::{Align, Table};

/// What to show.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectOptions {
    /// List every tensor and every metadata value.
    pub tensors: bool,
}

fn layer_bytes(l: &LayerLayout) -> u64 {
    l.dense_bytes
        .unwrap_or(0)
        .saturating_add(l.expert_bytes.unwrap_or(0))
}

fn is_swa(l: &LayerLayout) -> bool {
    matches!(l.attention, LayerAttention::SlidingWindow { .. })
}

/// The cells llama.cpp gives a sliding-window cache per sequence at the default micro-batch, whatever the
/// context above it: `pad256(window + n_ubatch)` (`src/model/kv_geometry.rs`).
fn window_cells(window: u64) -> u64 {
    geometry_per_slot(KvType::F16).window_cells(window)
}

/// One slot with a context no window reaches, at the default micro-batch, in `kv`.
fn geometry_per_slot(kv: KvType) -> CacheGeometry {
    CacheGeometry {
        context: u64::MAX / 2,
        parallel: 1,
        unified: false,
        ubatch: DEFAULT_UBATCH,
        type_k: kv,
        type_v: kv,
    }
}

/// K and V bytes the sliding-window layers hold per slot at the default micro-batch.
fn window_bytes_per_slot(layout: &ModelLayout, kv: KvType) -> u64 {
    let g = geometry_per_slot(kv);
    layout
        .layers
        .iter()
        .filter(|l| is_swa(l))
        .map(|l| g.layer_total(l))
        .sum()
}

fn is_recurrent(l: &LayerLayout) -> bool {
    matches!(l.attention, LayerAttention::Recurrent { .. })
}

/// A value's type as GGUF tools print it: `u32`, `str`, `arr[str]`, `arr[arr[i32]]`.
pub fn value_type_name(v: &Value) -> String {
    match v {
        Value::Array(a) => array_type_name(a),
        other => type_name(other.type_id()).to_string(),
    }
}

fn array_type_name(a: &Array) -> String {
    let inner = match a {
        Array::Array(v) => v
            .first()
            .map(array_type_name)
            .unwrap_or_else(|| "arr".to_string()),
        other => type_name(other.element_type()).to_string(),
    };
    format!("{}[{inner}]", type_name(value_type::ARRAY))
}

/// What `inspect` reports on: a model file's header, the layout read from it, the projector file's header.
#[derive(Debug, Clone, Copy)]
pub struct Inspection<'a> {
    pub header: &'a GgufHeader,
    pub layout: &'a ModelLayout,
    pub mmproj: Option<&'a GgufHeader>,
    pub options: InspectOptions,
}

/// The report's body as JSON (without `schema_version`/`tool`).
pub fn to_json(i: &Inspection<'_>) -> Json {
    let (header, layout, mmproj, options) = (i.header, i.layout, i.mmproj, i.options);
    let per_type = |f: &dyn Fn(&LayerLayout) -> bool, kv: KvType| -> u64 {
        layout
            .layers
            .iter()
            .filter(|l| f(l))
            .map(|l| l.attention.kv_bytes_per_token(kv))
            .sum()
    };
    let window = layout.layers.iter().find_map(|l| match l.attention {
        LayerAttention::SlidingWindow { window, .. } => Some(window),
        _ => None,
    });
    let mut kv_cache = serde_json::Map::new();
    for kv in KvType::ALL {
        kv_cache.insert(
            kv.name().to_string(),
            json!({
                "bytes_per_token": per_type(&|_| true, kv),
                "full_bytes_per_token": per_type(&|l| !is_swa(l), kv),
                "sliding_window_bytes_per_token": per_type(&is_swa, kv),
                "sliding_window_bytes_per_slot": window.map(|_| window_bytes_per_slot(layout, kv)),
            }),
        );
    }
    let layers: Vec<Json> = layout
        .layers
        .iter()
        .map(|l| {
            let kv: serde_json::Map<String, Json> = KvType::ALL
                .iter()
                .map(|&t| {
                    (
                        t.name().to_string(),
                        json!(l.attention.kv_bytes_per_token(t)),
                    )
                })
                .collect();
            json!({
                "index": l.index,
                "bytes": layer_bytes(l),
                "dense_bytes": l.dense_bytes,
                "expert_bytes": l.expert_bytes,
                "attention": l.attention,
                "kv_bytes_per_token": kv,
            })
        })
        .collect();
    let state = layout.layers.iter().find_map(|l| match l.attention {
        LayerAttention::Recurrent {
            state_bytes_per_slot,
        } => Some(state_bytes_per_slot),
        _ => None,
    });
    let repeating: u64 = layout.layers.iter().map(layer_bytes).sum();
    let experts: u64 = layout
        .layers
        .iter()
        .map(|l| l.expert_bytes.unwrap_or(0))
        .sum();
    let mut body = json!({
        "file": header.path,
        "file_bytes": header.file_bytes,
        "gguf_version": header.version,
        "alignment": header.alignment,
        "data_start": header.data_start,
        "architecture": layout.architecture,
        "name": header.get("general.name").and_then(Value::as_str),
        "block_count": layout.block_count(),
        "trained_context": layout.trained_context,
        "layers": layers,
        "weights_bytes": header.tensors.iter().map(|t| t.bytes).sum::<u64>(),
        "repeating_bytes": repeating,
        "expert_bytes": experts,
        "nonrepeating_bytes": layout.nonrepeating_bytes,
        "output_bytes": layout.output_bytes,
        "projector_bytes": layout.projector_bytes,
        "projector_file": mmproj.map(|m| json!({
            "file": m.path,
            "architecture": m.architecture(),
            "tensors": m.tensors.len(),
            "bytes": m.tensors.iter().map(|t| t.bytes).sum::<u64>(),
        })),
        "kv_bytes_per_token": per_type(&|_| true, KvType::F16),
        "kv_cache": kv_cache,
        "sliding_window": window,
        "sliding_window_cells": window.map(window_cells),
        "sliding_window_layers": layout.layers.iter().filter(|l| is_swa(l)).map(|l| l.index).collect::<Vec<_>>(),
        "recurrent_layers": layout.layers.iter().filter(|l| is_recurrent(l)).map(|l| l.index).collect::<Vec<_>>(),
        "recurrent_state_bytes_per_slot": state,
        "tensors": header.tensors.len(),
    });
    if options.tensors {
        #[derive(Serialize)]
        struct MetadataRow<'a> {
            key: &'a str,
            #[serde(rename = "type")]
            value_type: String,
            value: &'a Value,
        }
        let metadata: Vec<MetadataRow> = header
            .metadata
            .iter()
            .map(|m| MetadataRow {
                key: &m.key,
                value_type: value_type_name(&m.value),
                value: &m.value,
            })
            .collect();
        if let Json::Object(map) = &mut body {
            map.insert("tensor_list".into(), json!(header.tensors));
            map.insert("metadata".into(), json!(metadata));
        }
    }
    body
}

/// Control characters from the file become `?` on a terminal.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn h(bytes: u64) -> String {
    human(i64::try_from(bytes).unwrap_or(i64::MAX))
}

/// `0-4, 6, 8-9`.
fn ranges(indices: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && indices[i + 1] == end + 1 {
            i += 1;
            end = indices[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

fn attention_cell(a: &LayerAttention) -> String {
    match *a {
        LayerAttention::Full {
            k_elements,
            v_elements,
        } => format!("full (K {k_elements}, V {v_elements})"),
        LayerAttention::SlidingWindow {
            window,
            k_elements,
            v_elements,
        } => format!("window {window} (K {k_elements}, V {v_elements})"),
        LayerAttention::Recurrent {
            state_bytes_per_slot,
        } => format!("recurrent ({} per slot)", h(state_bytes_per_slot)),
    }
}

/// The report as a document: as a terminal shows it, fenced where the format has code blocks (a model file's
/// report is a listing).
pub fn document(i: &Inspection<'_>) -> Document {
    Document {
        blocks: vec![Block::Fenced(blocks(i).blocks)],
    }
}

/// The file's summary lines, the layer table, with `--tensors` the tensor table and the metadata values.
fn blocks(i: &Inspection<'_>) -> Document {
    let (header, layout, mmproj, options) = (i.header, i.layout, i.mmproj, i.options);
    let mut doc = Document::new();
    let mut out: Vec<String> = Vec::new();
    let name = header
        .get("general.name")
        .and_then(Value::as_str)
        .map(|n| format!(" \"{}\"", clean(n)))
        .unwrap_or_default();
    out.push(format!(
        "{}{name}: GGUF v{}, {} tensors, {} ({} bytes)",
        clean(&header.path),
        header.version,
        header.tensors.len(),
        h(header.file_bytes),
        header.file_bytes
    ));
    let ctx = layout
        .trained_context
        .map(|c| format!(", trained context {c}"))
        .unwrap_or_default();
    out.push(format!(
        "architecture {}, {} layers{ctx}",
        clean(&layout.architecture),
        layout.block_count()
    ));
    let repeating: u64 = layout.layers.iter().map(layer_bytes).sum();
    let experts: u64 = layout
        .layers
        .iter()
        .map(|l| l.expert_bytes.unwrap_or(0))
        .sum();
    out.push(format!(
        "weights: layers {} (experts {}), non-repeating {} (output layer {}), projector {}",
        h(repeating),
        h(experts),
        h(layout.nonrepeating_bytes.unwrap_or(0)),
        h(layout.output_bytes.unwrap_or(0)),
        layout
            .projector_bytes
            .map(h)
            .unwrap_or_else(|| "none".into())
    ));
    if let Some(m) = mmproj {
        out.push(format!(
            "projector file: {} ({} tensors, {})",
            clean(&m.path),
            m.tensors.len(),
            h(m.tensors.iter().map(|t| t.bytes).sum())
        ));
    }
    let totals: Vec<String> = KvType::ALL
        .iter()
        .map(|&t| {
            let sum: u64 = layout
                .layers
                .iter()
                .map(|l| l.attention.kv_bytes_per_token(t))
                .sum();
            format!("{} {}", t.name(), h(sum))
        })
        .collect();
    out.push(format!(
        "KV cache per token, all layers: {}",
        totals.join(", ")
    ));
    let swa: Vec<u32> = layout
        .layers
        .iter()
        .filter(|l| is_swa(l))
        .map(|l| l.index)
        .collect();
    if let Some(LayerAttention::SlidingWindow { window, .. }) = layout
        .layers
        .iter()
        .find(|l| is_swa(l))
        .map(|l| l.attention)
    {
        let cells = window_cells(window);
        let per_slot: Vec<String> = KvType::ALL
            .iter()
            .map(|&t| format!("{} {}", t.name(), h(window_bytes_per_slot(layout, t))))
            .collect();
        out.push(format!(
            "  sliding-window layers {} (window {window}): their cache stops growing at {cells} cells per slot \
             (llama.cpp: pad256(window + n_ubatch) at the default -ub {DEFAULT_UBATCH}): {} per slot",
            ranges(&swa),
            per_slot.join(", ")
        ));
    }
    let recurrent: Vec<u32> = layout
        .layers
        .iter()
        .filter(|l| is_recurrent(l))
        .map(|l| l.index)
        .collect();
    if let Some(LayerAttention::Recurrent {
        state_bytes_per_slot,
    }) = layout
        .layers
        .iter()
        .find(|l| is_recurrent(l))
        .map(|l| l.attention)
    {
        out.push(format!(
            "  recurrent layers {}: no KV cache, a fixed state of {} per slot each",
            ranges(&recurrent),
            h(state_bytes_per_slot)
        ));
    }
    doc.push(Block::Lines(out));
    if !layout.layers.is_empty() {
        let mut t = Table::new(&[
            ("layer", Align::Right),
            ("weights", Align::Right),
            ("experts", Align::Right),
            ("attention", Align::Left),
            ("KV/token f16", Align::Right),
            ("q8_0", Align::Right),
            ("q4_0", Align::Right),
        ]);
        for l in &layout.layers {
            t.push(vec![
                l.index.to_string(),
                h(layer_bytes(l)),
                h(l.expert_bytes.unwrap_or(0)),
                attention_cell(&l.attention),
                h(l.attention.kv_bytes_per_token(KvType::F16)),
                h(l.attention.kv_bytes_per_token(KvType::Q8_0)),
                h(l.attention.kv_bytes_per_token(KvType::Q4_0)),
            ]);
        }
        doc.push(Block::Gap);
        doc.push(Block::Table {
            table: t,
            indent: 0,
        });
    }
    if options.tensors {
        let mut t = Table::new(&[
            ("tensor", Align::Left),
            ("type", Align::Left),
            ("shape", Align::Left),
            ("offset", Align::Right),
            ("bytes", Align::Right),
        ]);
        for ti in &header.tensors {
            t.push(vec![
                clean(&ti.name),
                ti.type_name
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("type {}", ti.ggml_type)),
                format!("{:?}", ti.shape),
                ti.offset.to_string(),
                ti.bytes.to_string(),
            ]);
        }
        doc.push(Block::Gap);
        doc.push(Block::Table {
            table: t,
            indent: 0,
        });
        doc.push(Block::Gap);
        let mut metadata = Vec::new();
        for m in &header.metadata {
            let value = match &m.value {
                Value::Array(a) if a.len() > 8 => format!("[{} elements]", a.len()),
                v => serde_json::to_string(v).unwrap_or_default(),
            };
            metadata.push(format!(
                "{} {} = {}",
                clean(&m.key),
                value_type_name(&m.value),
                clean(&value)
            ));
        }
        doc.push(Block::Lines(metadata));
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_lists_collapse_into_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 3, 4, 6, 8, 9]), "0-4, 6, 8-9");
        assert_eq!(ranges(&[]), "");
    }
}
