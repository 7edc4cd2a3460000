//! From a GGUF header to a [`ModelLayout`]: the tensors grouped by layer (`blk.N.*`, experts `*_exps` apart),
//! what does not repeat, the output layer and the projector; and each layer's attention from the metadata, the
//! way llama.cpp's `llama_hparams` reads it: `{arch}.attention.head_count_kv` (a number or one per layer), the
//! head dimensions (`key_length`/`value_length`, else `embedding_length / head_count`), the sliding window
//! (`{arch}.attention.sliding_window` with `sliding_window_pattern`, or the architecture's own pattern), and
//! recurrent layers (the `ssm.*`, `wkv.*` and `shortconv.*` keys give their fixed state).

use crate::model::{
    architecture_swa_pattern, swa_dense_first, uses_window, LayerAttention, LayerLayout,
    LayoutSource, ModelLayout,
};

use super::error::{GgufError, GgufErrorKind};
use super::header::GgufHeader;
use super::value::Value;

/// More layers than any model has; a block count above it is a hostile header, not a model.
pub const MAX_LAYERS: u64 = 1 << 16;

/// Where a tensor belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorRole {
    /// `blk.N.*`: layer N; `expert` for `*_exps` tensors.
    Layer { index: u64, expert: bool },
    /// The vision (or audio) tower and projector: `v.*`, `mm.*`, `a.*`.
    Projector,
    /// Everything else: `token_embd`, `output*`, `rope_freqs`, …
    NonRepeating,
}

/// What a tensor name says about where the tensor belongs.
pub fn role(name: &str) -> TensorRole {
    if let Some(rest) = name.strip_prefix("blk.") {
        if let Some((n, tail)) = rest.split_once('.') {
            if let Ok(index) = n.parse::<u64>() {
                let expert = tail.split('.').next().is_some_and(|t| t.ends_with("_exps"));
                return TensorRole::Layer { index, expert };
            }
        }
    }
    if ["v.", "mm.", "a."].iter().any(|p| name.starts_with(p)) {
        return TensorRole::Projector;
    }
    TensorRole::NonRepeating
}

/// Architectures whose every layer is recurrent.
fn fully_recurrent(arch: &str) -> bool {
    matches!(
        arch,
        "mamba" | "mamba2" | "rwkv6" | "rwkv6qwen2" | "rwkv7" | "arwkv7"
    )
}

/// A key that is a number for every layer or an array with one entry per layer (llama.cpp's
/// `get_key_or_arr`); a short array is padded with its last entry.
fn per_layer(header: &GgufHeader, key: &str, n_layer: usize) -> Option<Vec<u64>> {
    match header.get(key)? {
        Value::Array(a) => {
            let mut v = a.as_u64s()?;
            let last = v.last().copied().unwrap_or(0);
            v.resize(n_layer, last);
            Some(v)
        }
        other => other.as_u64().map(|x| vec![x; n_layer]),
    }
}

/// Layers that use the sliding window, for a model whose window is `window`.
fn swa_layers(header: &GgufHeader, arch: &str, n_layer: usize) -> Vec<bool> {
    let key = format!("{arch}.attention.sliding_window_pattern");
    let pattern = match header.get(&key) {
        Some(Value::Array(a)) => {
            if let Some(mut flags) = a.as_bools() {
                flags.resize(n_layer, false);
                return flags;
            }
            None
        }
        Some(v) => v.as_u64(),
        None => architecture_swa_pattern(arch),
    };
    match pattern {
        Some(n) => {
            let dense_first = swa_dense_first(arch);
            (0..n_layer as u64)
                .map(|il| uses_window(il, n, dense_first))
                .collect()
        }
        None => vec![false; n_layer],
    }
}

/// Layers that keep a recurrent state instead of a KV cache.
fn recurrent_layers(header: &GgufHeader, arch: &str, n_head_kv: &[u64]) -> Vec<bool> {
    let n_layer = n_head_kv.len();
    if fully_recurrent(arch) {
        return vec![true; n_layer];
    }
    if let Some(interval) = header.get_u64(&format!("{arch}.full_attention_interval")) {
        return (0..n_layer as u64)
            .map(|il| interval > 0 && (il + 1) % interval != 0)
            .collect();
    }
    let hybrid = [
        "ssm.conv_kernel",
        "ssm.state_size",
        "shortconv.l_cache",
        "wkv.head_size",
    ]
    .iter()
    .any(|k| header.get(&format!("{arch}.{k}")).is_some());
    if hybrid {
        n_head_kv.iter().map(|&h| h == 0).collect()
    } else {
        vec![false; n_layer]
    }
}

/// Bytes of one slot's recurrent state for one layer (llama.cpp's `n_embd_r() + n_embd_s()`, f32 cells).
fn recurrent_state_bytes(header: &GgufHeader, arch: &str) -> u64 {
    let get = |k: &str| header.get_u64(&format!("{arch}.{k}")).unwrap_or(0);
    let n_embd = get("embedding_length");
    let wkv_head_size = get("wkv.head_size");
    let (r, s) = if wkv_head_size != 0 {
        let token_shift = header
            .get_u64(&format!("{arch}.token_shift_count"))
            .unwrap_or(2);
        (
            token_shift.saturating_mul(n_embd),
            n_embd.saturating_mul(wkv_head_size),
        )
    } else if get("shortconv.l_cache") != 0 {
        (n_embd.saturating_mul(get("shortconv.l_cache") - 1), 0)
    } else {
        let d_conv = get("ssm.conv_kernel");
        let d_inner = get("ssm.inner_size");
        let d_state = get("ssm.state_size");
        let n_group = get("ssm.group_count");
        let conv_width = n_group
            .saturating_mul(d_state)
            .saturating_mul(2)
            .saturating_add(d_inner);
        (
            d_conv.saturating_sub(1).saturating_mul(conv_width),
            d_state.saturating_mul(d_inner),
        )
    };
    r.saturating_add(s).saturating_mul(4)
}

/// Each layer's attention.
fn attention(header: &GgufHeader, arch: &str, n_layer: usize) -> Vec<LayerAttention> {
    let key = |k: &str| format!("{arch}.{k}");
    let n_embd = header.get_u64(&key("embedding_length")).unwrap_or(0);
    let n_head =
        per_layer(header, &key("attention.head_count"), n_layer).unwrap_or(vec![0; n_layer]);
    let n_head_kv = per_layer(header, &key("attention.head_count_kv"), n_layer)
        .unwrap_or_else(|| n_head.clone());
    let head_dim = |il: usize, k: &str| {
        header
            .get_u64(&key(k))
            .or_else(|| n_embd.checked_div(n_head[il]))
            .unwrap_or(0)
    };
    let window = header
        .get_u64(&key("attention.sliding_window"))
        .unwrap_or(0);
    let swa = if window > 0 {
        swa_layers(header, arch, n_layer)
    } else {
        vec![false; n_layer]
    };
    let recurrent = recurrent_layers(header, arch, &n_head_kv);
    let state = recurrent_state_bytes(header, arch);
    // Multi-head latent attention (both `*_length_mla` keys set, llama_hparams::is_mla): the cache holds the
    // compressed K row (`key_length`) and no V.
    let mla = ["attention.key_length_mla", "attention.value_length_mla"]
        .iter()
        .all(|k| header.get_u64(&key(k)).is_some_and(|v| v > 0));
    let v_of = |v: u64| if mla { 0 } else { v };
    let with_kv = layers_with_kv(header, arch, n_layer);
    (0..n_layer)
        .map(|il| {
            if il >= with_kv {
                // Reuses an earlier layer's cache: allocates none.
                return LayerAttention::Full {
                    k_elements: 0,
                    v_elements: 0,
                };
            }
            if recurrent[il] {
                return LayerAttention::Recurrent {
                    state_bytes_per_slot: state,
                };
            }
            if swa[il] {
                let k = header
                    .get_u64(&key("attention.key_length_swa"))
                    .unwrap_or_else(|| head_dim(il, "attention.key_length"));
                let v = header
                    .get_u64(&key("attention.value_length_swa"))
                    .unwrap_or_else(|| head_dim(il, "attention.value_length"));
                return LayerAttention::SlidingWindow {
                    window,
                    k_elements: n_head_kv[il].saturating_mul(k),
                    v_elements: v_of(n_head_kv[il].saturating_mul(v)),
                };
            }
            LayerAttention::Full {
                k_elements: n_head_kv[il].saturating_mul(head_dim(il, "attention.key_length")),
                v_elements: v_of(
                    n_head_kv[il].saturating_mul(head_dim(il, "attention.value_length")),
                ),
            }
        })
        .collect()
}

/// How many layers from the first have a KV cache of their own (`llama_hparams::has_kv`): the later ones reuse
/// an earlier layer's. llama.cpp b11549 sets it for two architectures: gemma3n fixes it at 20
/// (`n_layer_kv_from_start = 20`), gemma4 reads `attention.shared_kv_layers` (the layers counted from the end
/// that share).
fn layers_with_kv(header: &GgufHeader, arch: &str, n_layer: usize) -> usize {
    match arch {
        "gemma3n" => n_layer.min(20),
        _ => header
            .get_u64(&format!("{arch}.attention.shared_kv_layers"))
            .map_or(n_layer, |shared| {
                n_layer.saturating_sub(usize::try_from(shared).unwrap_or(usize::MAX))
            }),
    }
}

/// The number of repeating layers: `{arch}.block_count`, else one past the highest `blk.N`.
fn block_count(header: &GgufHeader, arch: &str) -> Result<usize, GgufError> {
    let key = format!("{arch}.block_count");
    let from_tensors = header
        .tensors
        .iter()
        .filter_map(|t| match role(&t.name) {
            TensorRole::Layer { index, .. } => Some(index.saturating_add(1)),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let n = header.get_u64(&key).unwrap_or(0).max(from_tensors);
    if n > MAX_LAYERS {
        let offset = header
            .metadata
            .iter()
            .find(|m| m.key == key)
            .map(|m| m.offset)
            .or_else(|| {
                header
                    .tensors
                    .iter()
                    .find(|t| matches!(role(&t.name), TensorRole::Layer { index, .. } if index.saturating_add(1) == n))
                    .map(|t| t.info_offset)
            })
            .unwrap_or(0);
        return Err(GgufError {
            path: header.path.clone(),
            offset,
            kind: GgufErrorKind::TooLarge {
                what: "a layer count",
                count: n,
                limit: MAX_LAYERS,
            },
        });
    }
    Ok(n as usize)
}

/// The model's layout from its header and, when the projector is a separate file, that file's header.
pub fn build(header: &GgufHeader, mmproj: Option<&GgufHeader>) -> Result<ModelLayout, GgufError> {
    let arch = header.architecture().unwrap_or("unknown").to_string();
    let n_layer = block_count(header, &arch)?;
    let mut dense = vec![0u64; n_layer];
    let mut experts = vec![0u64; n_layer];
    let mut nonrepeating = 0u64;
    let mut projector: Option<u64> = None;
    let mut output = 0u64;
    let mut has_output = false;
    let mut token_embd = 0u64;
    for t in &header.tensors {
        match role(&t.name) {
            TensorRole::Layer { index, expert } => {
                let slot = if expert { &mut experts } else { &mut dense };
                slot[index as usize] = slot[index as usize].saturating_add(t.bytes);
            }
            TensorRole::Projector => *projector.get_or_insert(0) += t.bytes,
            TensorRole::NonRepeating => {
                nonrepeating += t.bytes;
                if t.name.starts_with("output.") || t.name.starts_with("output_norm.") {
                    output += t.bytes;
                    has_output |= t.name == "output.weight";
                }
                if t.name == "token_embd.weight" {
                    token_embd = t.bytes;
                }
            }
        }
    }
    if !has_output {
        // Tied embeddings: the output layer multiplies by token_embd.
        output += token_embd;
    }
    if let Some(m) = mmproj {
        *projector.get_or_insert(0) += m.tensors.iter().map(|t| t.bytes).sum::<u64>();
    }
    let attention = attention(header, &arch, n_layer);
    Ok(ModelLayout {
        source: LayoutSource::Gguf {
            path: header.path.clone(),
        },
        trained_context: header.get_u64(&format!("{arch}.context_length")),
        layers: (0..n_layer)
            .map(|i| LayerLayout {
                index: i as u32,
                dense_bytes: Some(dense[i]),
                expert_bytes: Some(experts[i]),
                attention: attention[i],
            })
            .collect(),
        nonrepeating_bytes: Some(nonrepeating),
        output_bytes: Some(output),
        projector_bytes: projector,
        architecture: arch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_names_say_where_they_belong() {
        assert_eq!(
            role("blk.3.ffn_gate_exps.weight"),
            TensorRole::Layer {
                index: 3,
                expert: true
            }
        );
        assert_eq!(
            role("blk.3.ffn_gate_shexp.weight"),
            TensorRole::Layer {
                index: 3,
                expert: false
            }
        );
        assert_eq!(role("v.blk.0.attn_q.weight"), TensorRole::Projector);
        assert_eq!(role("mm.0.weight"), TensorRole::Projector);
        assert_eq!(role("token_embd.weight"), TensorRole::NonRepeating);
        assert_eq!(role("blk.x.weight"), TensorRole::NonRepeating);
    }

    fn header(metadata: &[(&str, Value)]) -> GgufHeader {
        GgufHeader {
            path: "test.gguf".into(),
            version: 3,
            file_bytes: 0,
            alignment: 32,
            data_start: 0,
            metadata: metadata
                .iter()
                .map(|(key, value)| crate::gguf::Metadata {
                    key: (*key).into(),
                    value: value.clone(),
                    offset: 0,
                })
                .collect(),
            tensors: Vec::new(),
        }
    }

    #[test]
    fn layers_that_share_an_earlier_cache_allocate_none() {
        // gemma4 with `shared_kv_layers` (llama.cpp: n_layer_kv_from_start = n_layer − shared): of 6 layers, the
        // last 2 reuse a cache; gemma3n's first 20 layers alone have one.
        let kv = |arch: &str, extra: &[(&str, Value)]| -> Vec<bool> {
            let mut keys = vec![
                (format!("{arch}.embedding_length"), Value::U32(256)),
                (format!("{arch}.attention.head_count"), Value::U32(4)),
                (format!("{arch}.attention.head_count_kv"), Value::U32(2)),
            ];
            keys.extend(
                extra
                    .iter()
                    .map(|(k, v)| (format!("{arch}.{k}"), v.clone())),
            );
            let keys: Vec<(&str, Value)> =
                keys.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let n = if arch == "gemma3n" { 30 } else { 6 };
            attention(&header(&keys), arch, n)
                .iter()
                .map(|a| {
                    !matches!(
                        a,
                        LayerAttention::Full {
                            k_elements: 0,
                            v_elements: 0
                        }
                    )
                })
                .collect()
        };
        let gemma4 = kv("gemma4", &[("attention.shared_kv_layers", Value::U32(2))]);
        assert_eq!(gemma4, vec![true, true, true, true, false, false]);
        let gemma3n = kv("gemma3n", &[]);
        assert_eq!(gemma3n.iter().filter(|&&k| k).count(), 20);
        assert!(gemma3n[19] && !gemma3n[20]);
        assert!(kv("llama", &[]).iter().all(|&k| k));
    }
}
