//! A scheduler's attempt before the load that follows: Ollama's layout that could not place every layer beside
//! the models already loaded, so it evicted one and laid the same load out again (`docs/log-formats.md` §6.3).
//! The attempt is part of that load, not a load of its own: it says what the scheduler asked and what it had,
//! and the load's measured buffers say whether the model would have fit without the eviction
//! (`checks::eviction_overestimate`).

use serde::Serialize;

use super::Quantity;

/// One GPU as the attempt saw it (`gpu memory` before the eviction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptGpu {
    /// Ollama's id for the GPU (`id=0`, a UUID).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Free memory less Ollama's minimum and `OLLAMA_GPU_OVERHEAD`, as the layout used it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<Quantity>,
    pub line: u64,
}

/// The scheduler's attempt: what it asked, what it had, what it evicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    /// The model's layers the attempt laid out (`loading model "model layers"=N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<i64>,
    /// The layers that fit beside the loaded models (`"loaded layers"=N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_fit: Option<i64>,
    /// Each GPU's memory when the attempt was made.
    pub gpus: Vec<AttemptGpu>,
    /// What was evicted, as the log says it (Ollama names no model: "a model").
    pub evicted: String,
    /// The eviction line.
    pub line: u64,
    /// Every line of the attempt.
    pub lines: Vec<u64>,
}

impl Attempt {
    /// The memory every GPU of the attempt had available, summed (`None` when a GPU's figure is missing).
    pub fn available(&self) -> Option<Quantity> {
        let figures: Option<Vec<Quantity>> = self.gpus.iter().map(|g| g.available).collect();
        Quantity::sum(figures?)
    }
}
