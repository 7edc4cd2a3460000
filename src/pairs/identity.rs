//! Which loads are of one model: the pairs of issue 53 replay one load with another's settings, which means
//! nothing unless both loaded the same model on the same runtime. A model is named by Ollama's blob digest or
//! the model file's name, a serving engine's by the model its arguments name (`vllm serve
//! meta-llama/Meta-Llama-3-8B`); a paste of buffer lines names neither (`sample-logs/703-…`), and there the weight
//! buffers — equal to the byte on the same devices — are the model's fingerprint, said to be one.

use crate::model::{Concluded, ModelIdentity, Part, Runtime, MIB};

/// The model and runtime `load` ran, as far as its log says; `None` when neither the model nor its weights are
/// in the log.
pub fn identity(load: &Concluded) -> Option<(Runtime, ModelIdentity)> {
    let l = &load.reconciled.load;
    let model = if let Some(blob) = l.model.blob.as_deref().filter(|b| !b.is_empty()) {
        ModelIdentity::Digest(blob.to_string())
    } else if let Some(file) = l.model.file_name() {
        ModelIdentity::File(file.to_string())
    } else if let Some(name) = l.serving.as_ref().and_then(|s| s.model.clone()) {
        ModelIdentity::Name(name)
    } else {
        ModelIdentity::Weights(weights_fingerprint(load)?)
    };
    Some((l.runtime, model))
}

/// The weight buffers per device as llama.cpp prints them, `CUDA0 11160.99 MiB + CPU 137.50 MiB`; `None`
/// without any.
fn weights_fingerprint(load: &Concluded) -> Option<String> {
    let grid = &load.reconciled.grid;
    let parts: Vec<String> = grid
        .devices()
        .into_iter()
        .filter_map(|d| {
            grid.cell(d, Part::Weights)
                .filter(|c| c.size.bytes > 0)
                .map(|c| format!("{d} {:.2} MiB", c.size.bytes as f64 / MIB as f64))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" + "))
}
