//! Who estimated a load's memory and who placed its layers: the runtime. It is decided once per load, from
//! the evidence its lines give (`load::runtime`), and every stage whose rules differ per runtime `match`es on
//! it without a catch-all arm, so a new runtime makes the compiler list every place that must decide (the
//! list is in `docs/architecture.md`, "Places that decide per runtime").
//!
//! What each runtime's knobs are called, what they become for the placer and whether they reach it is data:
//! [`super::knobs`].

use serde::Serialize;

/// The runtime of a load: who estimated its memory and who placed its layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Runtime {
    /// Ollama's own estimator (a formula over the model's sizes: the `msg=offload` line and the memory
    /// summary) decided the layers per GPU, and its scheduler placed them; the runner (llama.cpp's, or
    /// Ollama's Go engine before its `load request`s) allocated what it was told.
    OllamaEstimator,
    /// Ollama's Go engine measured each layout with `load request` operations (`fit`, `alloc`, `commit`) and
    /// Ollama's scheduler placed the layers from those measured sizes.
    OllamaEngine,
    /// Ollama ≥ 0.30: Ollama's scheduler picks the GPUs and starts llama-server, whose `--fit` places the
    /// layers from its own dry runs.
    OllamaFit,
    /// llama.cpp on its own (llama-server, llama-cli, llama-completion): `--fit` or the user's flags place the
    /// layers, and the user's flags are the knobs.
    LlamaCpp,
    /// vLLM: its memory profile sizes the KV cache from a budget (total × `--gpu-memory-utilization`) per
    /// rank, and its flags are the knobs (`docs/log-formats.md` §8).
    Vllm,
    /// SGLang: each TP rank sizes its KV pool by `--mem-fraction-static` from the memory left after the
    /// weights (`docs/log-formats.md` §8).
    Sglang,
    /// The log does not say who placed the layers (an excerpt of buffer lines only).
    #[default]
    Unknown,
}

/// The JSON contract's name for who placed the layers (`loads[].era`, schema version 1): `ollama` for
/// Ollama's estimator or engine, `llama-server` for llama.cpp's `--fit` (under Ollama ≥ 0.30 or on its
/// own), `unknown`. Kept as the contract has it; [`Runtime`] is the finer type the stages read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Era {
    Ollama,
    LlamaServer,
    /// vLLM's profiler sized the KV cache (a contract addition of this word, no field changed).
    Vllm,
    /// SGLang's `--mem-fraction-static` sized the KV pool.
    Sglang,
    Unknown,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Ollama => "ollama",
            Era::LlamaServer => "llama-server",
            Era::Vllm => "vllm",
            Era::Sglang => "sglang",
            Era::Unknown => "unknown",
        }
    }
}

impl Runtime {
    /// Every runtime, for tables and tests that must cover them all.
    pub const ALL: [Runtime; 7] = [
        Runtime::OllamaEstimator,
        Runtime::OllamaEngine,
        Runtime::OllamaFit,
        Runtime::LlamaCpp,
        Runtime::Vllm,
        Runtime::Sglang,
        Runtime::Unknown,
    ];

    /// The JSON contract's `era` for this runtime.
    pub fn era(self) -> Era {
        match self {
            Runtime::OllamaEstimator | Runtime::OllamaEngine => Era::Ollama,
            Runtime::OllamaFit | Runtime::LlamaCpp => Era::LlamaServer,
            Runtime::Vllm => Era::Vllm,
            Runtime::Sglang => Era::Sglang,
            Runtime::Unknown => Era::Unknown,
        }
    }

    /// A short name for prose and docs.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::OllamaEstimator => "Ollama's estimator",
            Runtime::OllamaEngine => "Ollama's engine",
            Runtime::OllamaFit => "Ollama with llama-server --fit",
            Runtime::LlamaCpp => "llama.cpp",
            Runtime::Vllm => "vLLM",
            Runtime::Sglang => "SGLang",
            Runtime::Unknown => "unknown runtime",
        }
    }

    /// llama.cpp placed the layers (its `--fit`, standalone or started by Ollama ≥ 0.30): the load has a
    /// `--fit` plan, an exit table, llama.cpp's compute buffers per device and its by-design host weights.
    pub fn llama_cpp_places_layers(self) -> bool {
        match self {
            Runtime::LlamaCpp | Runtime::OllamaFit => true,
            Runtime::OllamaEstimator
            | Runtime::OllamaEngine
            | Runtime::Vllm
            | Runtime::Sglang
            | Runtime::Unknown => false,
        }
    }

    /// vLLM or SGLang: a serving engine that sizes its KV cache from a memory budget per rank, whose figures
    /// are read by `load::serving` rather than from buffer lines.
    pub fn is_serving_engine(self) -> bool {
        match self {
            Runtime::Vllm | Runtime::Sglang => true,
            Runtime::OllamaEstimator
            | Runtime::OllamaEngine
            | Runtime::OllamaFit
            | Runtime::LlamaCpp
            | Runtime::Unknown => false,
        }
    }

    /// Serialise a load's runtime as the contract's `era` (see [`Era`]).
    pub fn serialize_era<S: serde::Serializer>(runtime: &Runtime, s: S) -> Result<S::Ok, S::Error> {
        runtime.era().serialize(s)
    }
}

#[cfg(test)]
impl Runtime {
    /// Its place in [`Runtime::ALL`]; a match, so a new runtime cannot be left out of the list unseen.
    fn position(self) -> usize {
        match self {
            Runtime::OllamaEstimator => 0,
            Runtime::OllamaEngine => 1,
            Runtime::OllamaFit => 2,
            Runtime::LlamaCpp => 3,
            Runtime::Vllm => 4,
            Runtime::Sglang => 5,
            Runtime::Unknown => 6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Era, Runtime};

    #[test]
    fn all_lists_every_runtime_once() {
        for (i, r) in Runtime::ALL.iter().enumerate() {
            assert_eq!(r.position(), i, "{r:?}");
        }
    }

    #[test]
    fn the_contract_era_of_each_runtime() {
        let eras: Vec<&str> = Runtime::ALL.iter().map(|r| r.era().as_str()).collect();
        assert_eq!(
            eras,
            [
                "ollama",
                "ollama",
                "llama-server",
                "llama-server",
                "vllm",
                "sglang",
                "unknown"
            ]
        );
        assert_eq!(
            serde_json::to_string(&Runtime::LlamaCpp.era()).unwrap(),
            "\"llama-server\""
        );
        assert_eq!(Era::Ollama.as_str(), "ollama");
    }
}
