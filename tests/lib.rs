//! The integration test binary: end-to-end runs of the real `vramdiff`, golden reports, the corpus and the
//! peer vectors, the JSON contract, every grammar rule against its own examples, and the nvidia-smi/rocm-smi
//! capture parsers on the real captures.

mod util;

mod architecture;
mod bad_input;
#[cfg(feature = "batch")]
mod batch;
mod census;
mod ci;
mod cli;
mod compute_imbalance;
mod corpus;
mod diff;
mod docs;
mod doctor;
mod estimator_families;
mod failures;
mod findings;
#[cfg(feature = "batch")]
mod fleet;
mod follow;
mod founding_case;
mod founding_chain;
mod founding_models;
mod founding_today;
mod fragments;
mod gguf_bad_input;
mod gguf_e2e;
mod gguf_oracle;
mod gguf_real_logs;
mod golden;
mod grammar_examples;
mod html_report;
mod inspect_contract;
mod inspect_golden;
mod json_contract;
mod kv_geometry;
mod layout_replay;
mod lifecycle;
mod llama_cpp_alone;
mod llama_cpp_devices;
mod manners;
mod max_ctx;
mod max_ctx_gguf;
#[cfg(feature = "mcp")]
mod mcp;
mod observed;
mod oracle;
mod oracle_levers;
mod pairs;
mod paste_invariance;
mod paste_transforms;
mod peer_vectors;
mod projector_headroom;
mod properties;
#[cfg(feature = "remote")]
mod remote_gguf;
mod report_formats;
mod runtime_growth;
mod runtime_signatures;
mod serving;
mod serving_fragments;
mod serving_ranks;
mod serving_timeline;
mod skim;
mod smi;
mod spills;
mod streamed_report;
mod unread_lines;
mod whatif_levers;
mod wrap_cuts;
