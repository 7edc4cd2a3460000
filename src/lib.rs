//! vramdiff: line Ollama's GPU memory estimate up against what the runner actually allocated, component by
//! component and per GPU, with the rounding of every printed number carried through.
//!
//! Stages, each a module, with imports flowing one way:
//! `source` (bytes, decompressed) → `frame` (logical lines) → `grammar` + `parse` (typed events; `prefilter`
//! lets the parser skip lines no rule can use) → `load` (one [`model::Load`] per model load; `gguf` reads the
//! model file it names, and `fetch` brings a model's header over HTTP for `inspect URL` and `--gguf URL`) → `reconcile` ([`model::Reconciled`]: component and device rows, the device × part
//! grid, and what was observed beside the log — nvidia-smi captures, which `smi` reads, and Ollama's
//! `/api/ps`) → `replay` (the placement, Ollama's or `--fit`'s) → `checks` ([`model::Concluded`]: findings
//! and suggestions) → `report` (text, Markdown, JSON, charts). `model` is the vocabulary they share; `diff`
//! compares two runs' concluded loads.
//!
//! [`pipeline::Pipeline`] carries one input through every stage and is the only way in: the commands, `batch`
//! (many logs into tables), `live` (the `--follow` loop), the property tests and the fuzz target all call it.
//!
//! Above the stages, the command layer: `cli` is the command line as typed (clap), `commands` resolves it once
//! into clap-free options ([`commands::resolve`]) and runs one command per file, each returning an
//! [`commands::Outcome`] that `main.rs` prints. No stage imports `cli` or `commands`.

#[cfg(feature = "batch")]
pub mod batch;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod fetch;
pub mod frame;
pub mod gguf;
pub mod grammar;
pub mod live;
pub mod load;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod pairs;
pub mod parse;
pub mod pipeline;
pub mod prefilter;
pub mod reconcile;
pub mod replay;
pub mod report;
pub mod smi;
pub mod source;
