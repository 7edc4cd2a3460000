//! The levers `vramdiff whatif` shares with the suggestions (issue 35): `--ubatch`, `--ngl`, `--ctx` and
//! `--kv-type`. A suggestion prints one setting with its effect computed from the log's own figures
//! (`src/checks/suggest/failure.rs`, `src/checks/suggest/fit.rs`); `whatif` takes the same setting from the user
//! and must print the same effect, computed the same way, for llama.cpp's loads as for Ollama's. A lever that
//! does not reach the load's runtime (`src/model/knobs.rs`) is refused rather than replayed as if it did.

mod compute;
mod effects;
mod micro_batch;
mod reach;

pub use compute::ComputeLaw;
pub use effects::effects;
pub use micro_batch::{MicroBatch, DEFAULT_BATCH, DEFAULT_UBATCH};
pub use reach::refusal;
