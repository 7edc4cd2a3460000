//! vramdiff: line Ollama's GPU memory estimate up against what the runner actually allocated, component by
//! component and per GPU, with the rounding of every printed number carried through.
//!
//! Stages, each a module, with imports flowing one way:
//! `source` (bytes, decompressed) → `frame` (logical lines) → `grammar` + `parse` (typed events; `prefilter`
//! lets the parser skip lines no rule can use) → `load` (one [`model::Load`] per model load) → `reconcile`
//! ([`model::Reconciled`]: component and device rows, the device × part grid, what nvidia-smi observed; `smi`
//! reads the captures) → `replay` (the placement, Ollama's or `--fit`'s) → `checks` ([`model::Concluded`]:
//! findings and suggestions) → `report` (text, Markdown, JSON, charts). `model` is the vocabulary they share.
//! [`pipeline::Pipeline`] carries one input through every stage and is the only way in: the command line
//! (`app`, with `cli` for its arguments), `batch`, `live` (`--follow`), the property tests and the fuzz target
//! all call it.

#[cfg(feature = "batch")]
pub mod batch;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod frame;
pub mod gguf;
pub mod grammar;
pub mod live;
pub mod load;
pub mod model;
pub mod parse;
pub mod pipeline;
pub mod prefilter;
pub mod reconcile;
pub mod replay;
pub mod report;
pub mod smi;
pub mod source;
