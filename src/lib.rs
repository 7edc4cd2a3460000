//! vramdiff: line Ollama's GPU memory estimate up against what the runner actually allocated, component by
//! component and per GPU, with the rounding of every printed number carried through.
//!
//! Stages, each a module, with imports flowing one way:
//! `source` (bytes) → `frame` (logical lines) → `grammar` + `parse` (typed events) → `load` (one model load
//! each) → `reconcile` (component and device rows) → `report` (text, JSON). `model` is the vocabulary they
//! share; `app` wires them together for the command line; `prefilter` lets it skip lines no stage can use.

pub mod app;
#[cfg(feature = "batch")]
pub mod batch;
pub mod checks;
pub mod cli;
pub mod frame;
pub mod grammar;
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
