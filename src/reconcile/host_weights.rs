//! Weights that stay in host memory with every layer offloaded (`docs/log-formats.md` §5.7): llama.cpp keeps
//! the input embeddings (`token_embd`) on the host, Gemma 3n/4 their per-layer token embeddings
//! (`per_layer_token_embd`, corpus 707: 2208 MiB in `CPU_Mapped` with 43/43 layers on the GPU), and
//! `CPU_REPACK` holds repacked copies; tensor overrides (`-ot`, `--n-cpu-moe`) keep what the user sent there.
//! None of it is a partial offload. The rule is read from the log, never from the model's name: every layer
//! offloaded (`offloaded N/N layers`) and weight buffers in host memory.

use crate::model::{human, BufferKind, FitStopCause, Load};

use super::actuals::is_draft;

/// Words for the host weight row when the load offloaded every layer and still has weights in host memory
/// (the host by design, or by the user's tensor overrides); `None` otherwise.
pub fn by_design(load: &Load) -> Option<String> {
    // Said where llama.cpp placed the layers (the llama-server era, §5.7); the older eras' reports already
    // say host memory is not VRAM (`host-not-vram`) and are left as they were.
    if !load.runtime.llama_cpp_places_layers() {
        return None;
    }
    let a = &load.actual;
    let (done, total) = (a.offloaded_layers?, a.total_layers?);
    if total <= 0 || done < total {
        return None;
    }
    let host: Vec<_> = a
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Model && b.host && !b.projector && !is_draft(b))
        .collect();
    let bytes: i64 = host.iter().map(|b| b.size.bytes).sum();
    if bytes <= 0 {
        return None;
    }
    let overrides = load
        .estimate
        .as_ref()
        .and_then(|e| e.fit.as_ref())
        .and_then(|f| f.stopped.as_ref())
        .is_some_and(|s| s.cause == FitStopCause::OverridesSetByUser);
    let why = if overrides {
        "where the user's tensor overrides (-ot, --n-cpu-moe) put them".to_string()
    } else {
        // What they are, as far as the log says: the architecture names Gemma's per-layer embeddings (when
        // it is unknown both are possible), a `CPU_REPACK` buffer repacked copies.
        let arch = load.model.architecture.as_deref().unwrap_or("");
        let gemma = arch.starts_with("gemma3n") || arch.starts_with("gemma4");
        let mut what = vec!["the input embeddings (token_embd)"];
        if gemma || arch.is_empty() {
            what.push("on Gemma 3n/4 models that have them the per-layer embeddings (per_layer_token_embd)");
        }
        if host.iter().any(|b| b.buffer.ends_with("_REPACK")) {
            what.push("repacked copies (CPU_REPACK)");
        }
        format!("on the host by design: {}", what.join(", "))
    };
    Some(format!(
        "; every layer is on the GPU ({done}/{total}): these {} of weights stay {why}, not a partial offload",
        human(bytes)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::loads_of;

    /// corpus 707 (`sample-logs/707-…`, its level letters framed off): 43/43 layers, 2208 MiB in `CPU_Mapped`,
    /// and the fit's lines that make it a llama.cpp load.
    const CORPUS_707: [&str; 6] = [
        "load_tensors: offloading 41 repeating layers to GPU",
        "load_tensors: offloaded 43/43 layers to GPU",
        "load_tensors:   CPU_Mapped model buffer size =  2208.00 MiB",
        "load_tensors:      Vulkan0 model buffer size =  2883.51 MiB",
        "common_params_fit_impl: projected to use 3635 MiB of device memory vs. 5150 MiB of free device memory",
        "common_params_fit_impl: will leave 1515 >= 1024 MiB of free device memory, no changes needed",
    ];

    #[test]
    fn host_weights_with_every_layer_offloaded_are_there_by_design() {
        let loads = loads_of(&CORPUS_707);
        let words = by_design(&loads[0]).expect("every layer offloaded, host weights");
        assert!(
            words.contains("every layer is on the GPU (43/43): these 2.16 GiB of weights stay on the host by design: the input embeddings (token_embd), on Gemma 3n/4 models that have them the per-layer embeddings (per_layer_token_embd), not a partial offload"),
            "{words}"
        );
    }

    #[test]
    fn a_partial_offload_is_not_by_design() {
        // corpus 706 (`sample-logs/706-…`): 65/66 layers, 931.63 MiB in CPU_Mapped: one layer is on the host.
        let loads = loads_of(&[
            "load_tensors: offloaded 65/66 layers to GPU",
            "load_tensors:   CPU_Mapped model buffer size =   931.63 MiB",
            "load_tensors:      Vulkan0 model buffer size = 17913.46 MiB",
            CORPUS_707[4],
        ]);
        assert_eq!(by_design(&loads[0]), None);
        // Every layer offloaded and no host weights: nothing to say.
        let loads = loads_of(&[CORPUS_707[1], CORPUS_707[3], CORPUS_707[4]]);
        assert_eq!(by_design(&loads[0]), None);
    }
}
