//! From the `print_info:` lines of a load to typed [`Hyperparameters`], and from those to a [`ModelLayout`]
//! whose layers carry their KV shape (full attention, sliding window or recurrent state). Weights per layer are
//! not in the log: they stay unknown (`None`).
//!
//! Which layers use the sliding window: the log prints `n_swa_pattern` (llama.cpp builds of mid-2025) or nothing
//! but `n_swa`/`is_swa_any`; then the pattern llama.cpp sets for the architecture is used
//! ([`architecture_swa_pattern`], [`uses_window`]: `hparams.set_swa_pattern(n)`). For other architectures with a
//! window and no pattern no layout is built (the reason is returned).

use crate::model::{
    architecture_swa_pattern, swa_dense_first, uses_window, Hyperparameters, LayerAttention,
    LayerLayout, LayoutSource, ModelLayout, PerLayer,
};
use crate::parse::event::ParamValue;

/// The hyperparameters from `(key, value, line)` triples, last value per key. A value of the wrong shape (text
/// where a count is due) is left out: the layout then lacks what needed it.
pub fn hyperparameters(params: &[(String, ParamValue, u64)]) -> Option<Hyperparameters> {
    if params.is_empty() {
        return None;
    }
    let mut h = Hyperparameters::default();
    let per_layer = |v: &ParamValue| match v {
        ParamValue::Count(n) => Some(PerLayer::All(*n)),
        ParamValue::PerLayer(values) => Some(PerLayer::Each(values.clone())),
        ParamValue::Text(_) => None,
    };
    for (key, value, line) in params {
        let count = value.count();
        match key.as_str() {
            "arch" => {
                h.architecture = match value {
                    ParamValue::Text(t) => Some(t.clone()),
                    _ => None,
                }
            }
            "n_layer" => h.n_layer = count,
            "n_ctx_train" => h.n_ctx_train = count,
            "n_head" => h.n_head = per_layer(value),
            "n_head_kv" => h.n_head_kv = per_layer(value),
            "n_embd_head_k" => h.n_embd_head_k = count,
            "n_embd_head_v" => h.n_embd_head_v = count,
            "n_embd_head_k_mla" => h.n_embd_head_k_mla = count,
            "n_embd_head_v_mla" => h.n_embd_head_v_mla = count,
            "n_embd_k_gqa" => h.n_embd_k_gqa = per_layer(value),
            "n_embd_v_gqa" => h.n_embd_v_gqa = per_layer(value),
            "n_swa" => h.n_swa = count,
            "n_swa_pattern" => h.n_swa_pattern = count,
            "is_swa_any" => h.is_swa_any = count.map(|n| n != 0),
            "n_expert" => h.n_expert = count,
            "ssm_d_conv" => h.ssm_d_conv = count,
            "ssm_d_inner" => h.ssm_d_inner = count,
            "ssm_d_state" => h.ssm_d_state = count,
            "ssm_n_group" => h.ssm_n_group = count,
            _ => continue,
        }
        h.lines.push(*line);
    }
    h.lines.sort_unstable();
    Some(h)
}

/// The layout the hyperparameters describe: one layer per `n_layer`, each with its KV elements per token (or
/// its recurrent state), weights unknown. `Err` says what is missing.
pub fn layout(h: &Hyperparameters) -> Result<ModelLayout, String> {
    let n = h.n_layer.ok_or("the log does not print n_layer")?;
    if n == 0 || n > 100_000 {
        return Err(format!("n_layer = {n} is not a layer count"));
    }
    let window = h.n_swa.filter(|&w| w > 0 && h.is_swa_any != Some(false));
    let pattern = match window {
        None => None,
        Some(_) => Some(
            h.n_swa_pattern
                .or_else(|| h.architecture.as_deref().and_then(architecture_swa_pattern))
                .ok_or_else(|| {
                    format!(
                        "n_swa = {} but neither n_swa_pattern nor a known pattern for architecture '{}'",
                        h.n_swa.unwrap_or(0),
                        h.architecture.as_deref().unwrap_or("?")
                    )
                })?,
        ),
    };
    let elements = |gqa: &Option<PerLayer>, head: Option<u64>, il: usize| -> Option<u64> {
        gqa.as_ref()
            .and_then(|g| g.at(il))
            .or_else(|| Some(h.n_head_kv.as_ref()?.at(il)?.saturating_mul(head?)))
    };
    // Far above any real model (128 heads × 512): a width past it is a hostile or garbled line.
    const MAX_WIDTH: u64 = 1 << 24;
    let dense_first = h.architecture.as_deref().is_some_and(swa_dense_first);
    let recurrent_state = recurrent_state_bytes(h);
    // llama_hparams::is_mla: the *_mla widths printed are the plain ones unless the model uses MLA.
    let differs =
        |mla: Option<u64>, plain: Option<u64>| mla.zip(plain).is_some_and(|(m, p)| m != p);
    let mla = differs(h.n_embd_head_k_mla, h.n_embd_head_k)
        || differs(h.n_embd_head_v_mla, h.n_embd_head_v);
    let mut layers = Vec::with_capacity(n as usize);
    for il in 0..n as usize {
        let k = elements(&h.n_embd_k_gqa, h.n_embd_head_k, il).ok_or_else(|| {
            format!("no K width for layer {il} (n_embd_k_gqa or n_head_kv × n_embd_head_k)")
        })?;
        let v = elements(&h.n_embd_v_gqa, h.n_embd_head_v, il).ok_or_else(|| {
            format!("no V width for layer {il} (n_embd_v_gqa or n_head_kv × n_embd_head_v)")
        })?;
        // MLA: the cache has no V (llama_kv_cache allocates K alone).
        let v = if mla { 0 } else { v };
        if k > MAX_WIDTH || v > MAX_WIDTH {
            return Err(format!(
                "layer {il}: K/V width {k}/{v} is not a real model's"
            ));
        }
        let attention = match (recurrent_state, k.saturating_add(v)) {
            (Some(state), 0) => LayerAttention::Recurrent {
                state_bytes_per_slot: state,
            },
            _ => match (window, pattern) {
                (Some(w), Some(p)) if uses_window(il as u64, p, dense_first) => {
                    LayerAttention::SlidingWindow {
                        window: w,
                        k_elements: k,
                        v_elements: v,
                    }
                }
                _ => LayerAttention::Full {
                    k_elements: k,
                    v_elements: v,
                },
            },
        };
        layers.push(LayerLayout {
            index: il as u32,
            dense_bytes: None,
            expert_bytes: None,
            attention,
        });
    }
    Ok(ModelLayout {
        source: LayoutSource::LogHyperparameters {
            lines: h.lines.clone(),
        },
        architecture: h.architecture.clone().unwrap_or_default(),
        trained_context: h.n_ctx_train,
        layers,
        nonrepeating_bytes: None,
        output_bytes: None,
        projector_bytes: None,
    })
}

/// A recurrent layer's state per slot in f32, as llama.cpp sizes it: R holds `(d_conv − 1) × (d_inner +
/// 2 · n_group · d_state)` values, S `d_state × d_inner`. `None` for a model without recurrent layers.
fn recurrent_state_bytes(h: &Hyperparameters) -> Option<u64> {
    let state = h.ssm_d_state.filter(|&s| s > 0)?;
    let inner = h.ssm_d_inner.unwrap_or(0);
    let conv = h.ssm_d_conv.unwrap_or(0).saturating_sub(1);
    let group = h.ssm_n_group.unwrap_or(0);
    let r =
        conv.saturating_mul(inner.saturating_add(group.saturating_mul(state).saturating_mul(2)));
    let s = state.saturating_mul(inner);
    Some(r.saturating_add(s).saturating_mul(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `print_info:` lines through the parser's own value typing.
    fn params(lines: &[(&str, &str)]) -> Vec<(String, ParamValue, u64)> {
        lines
            .iter()
            .enumerate()
            .map(|(i, (k, v))| {
                let value = if let Some(list) = v.strip_prefix('[') {
                    ParamValue::PerLayer(
                        list.trim_end_matches(']')
                            .split(',')
                            .map(|n| n.trim().parse().unwrap())
                            .collect(),
                    )
                } else if let Ok(n) = v.parse() {
                    ParamValue::Count(n)
                } else {
                    ParamValue::Text(v.to_string())
                };
                (k.to_string(), value, i as u64 + 1)
            })
            .collect()
    }

    #[test]
    fn gemma4_31b_has_ten_full_attention_layers_of_sixty() {
        // `sample-logs/founding-today-3090-4060-gemma4-31b.log:51-62`.
        let h = hyperparameters(&params(&[
            ("arch", "gemma4"),
            ("n_layer", "60"),
            ("n_head_kv", "16"),
            ("n_swa", "1024"),
            ("n_embd_head_k", "128"),
            ("n_embd_head_v", "128"),
            ("n_embd_k_gqa", "2048"),
            ("n_embd_v_gqa", "2048"),
        ]))
        .unwrap();
        let l = layout(&h).unwrap();
        let full: Vec<u32> = l
            .layers
            .iter()
            .filter(|l| matches!(l.attention, LayerAttention::Full { .. }))
            .map(|l| l.index)
            .collect();
        assert_eq!(full, vec![5, 11, 17, 23, 29, 35, 41, 47, 53, 59]);
        assert!(l.layers.iter().all(|l| l.dense_bytes.is_none()));
    }

    #[test]
    fn a_window_without_a_pattern_is_not_guessed() {
        let h = hyperparameters(&params(&[
            ("arch", "mystery"),
            ("n_layer", "4"),
            ("n_head_kv", "8"),
            ("n_swa", "512"),
            ("n_embd_head_k", "64"),
            ("n_embd_head_v", "64"),
        ]))
        .unwrap();
        assert!(layout(&h).unwrap_err().contains("mystery"));
    }

    #[test]
    fn per_layer_arrays_make_recurrent_layers() {
        let h = hyperparameters(&params(&[
            ("arch", "hybrid"),
            ("n_layer", "4"),
            ("n_head_kv", "[0, 0, 0, 2]"),
            ("n_embd_head_k", "256"),
            ("n_embd_head_v", "256"),
            ("ssm_d_conv", "4"),
            ("ssm_d_inner", "4096"),
            ("ssm_d_state", "128"),
            ("ssm_n_group", "16"),
        ]))
        .unwrap();
        let l = layout(&h).unwrap();
        let state = (3 * (4096 + 2 * 16 * 128) + 128 * 4096) * 4;
        assert_eq!(
            l.layers[0].attention,
            LayerAttention::Recurrent {
                state_bytes_per_slot: state
            }
        );
        assert_eq!(
            l.layers[3].attention,
            LayerAttention::Full {
                k_elements: 512,
                v_elements: 512
            }
        );
    }

    #[test]
    fn multi_head_latent_attention_caches_k_alone() {
        // `tests/data/oracle/b11549/logs/deepseek2--baseline.log` (print_info, llama.cpp b11549): the K row is
        // kv_lora_rank + rope = 96, and llama.cpp allocates no V cache for an MLA model.
        let mla = |k_mla: &'static str| {
            let h = hyperparameters(&params(&[
                ("arch", "deepseek2"),
                ("n_layer", "2"),
                ("n_head_kv", "1"),
                ("n_embd_head_k", "96"),
                ("n_embd_head_v", "64"),
                ("n_embd_k_gqa", "96"),
                ("n_embd_v_gqa", "64"),
                ("n_embd_head_k_mla", k_mla),
                ("n_embd_head_v_mla", if k_mla == "96" { "64" } else { "32" }),
            ]))
            .unwrap();
            layout(&h).unwrap().layers[0].attention
        };
        let (k_elements, v_elements) = match mla("64") {
            LayerAttention::Full {
                k_elements,
                v_elements,
            } => (k_elements, v_elements),
            other => panic!("{other:?}"),
        };
        assert_eq!((k_elements, v_elements), (96, 0));
        // The same widths printed twice: no MLA (an older conversion), K and V both cached.
        assert_eq!(
            mla("96"),
            LayerAttention::Full {
                k_elements: 96,
                v_elements: 64
            }
        );
    }
}
