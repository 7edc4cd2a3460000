//! Who estimated a load's memory and who placed its layers: the runtime. It is decided once per load, from
//! the evidence its lines give (`load::runtime`).
//!
//! Most rules differ not per runtime but per kind of placer: Ollama's scheduler, llama.cpp's `--fit` (started
//! by Ollama or by the user), a serving engine's per-rank budget (vLLM, SGLang). So [`Runtime::placer`] is the
//! one place that sorts runtimes into a [`Placer`], and the stages `match` on the placer without a catch-all
//! arm: a new runtime of a known kind is one arm here and a knob table (`super::knobs`); a new kind of placer
//! makes the compiler list every place that must decide (the list is in `docs/architecture.md`, "Places that
//! decide per runtime").
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
    /// Ollama's scheduler placed the layers, but the log does not say from whose figures: its estimator's
    /// or its engine's `load request`s. Only the load requests tell (`docs/log-formats.md` §4.3), and from
    /// 0.11.5 every load prints them, so a fragment without them (an eviction and a memory summary, the
    /// runner's lines) may be either. Less than [`Runtime::OllamaEstimator`] and [`Runtime::OllamaEngine`],
    /// never either: both are Ollama's scheduler, whose knobs are the same.
    OllamaPlacerUnknown,
    /// Ollama ≥ 0.30: Ollama's scheduler picks the GPUs and starts llama-server, whose `--fit` places the
    /// layers from its own dry runs.
    OllamaFit,
    /// llama.cpp on its own (llama-server, llama-cli, llama-completion): `--fit` or the user's flags place the
    /// layers, and the user's flags are the knobs.
    LlamaCpp,
    /// llama.cpp's llama-server (or its `--fit`) placed the layers, but the log does not say who started it:
    /// the user (their flags are the knobs) or Ollama ≥ 0.30 (its options and variables are), which relays
    /// llama-server's lines unchanged. Less than [`Runtime::LlamaCpp`] and [`Runtime::OllamaFit`], never
    /// either: what both agree on holds, and a knob is given in both spellings (`super::knobs`).
    LlamaCppLauncherUnknown,
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

/// The kind of placer behind a load: what decides which rules, hints and knobs apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placer {
    /// Ollama's scheduler placed the layers by its estimator's or its engine's figures (`num_gpu`,
    /// `OLLAMA_*`).
    OllamaScheduler,
    /// llama.cpp's `--fit` placed the layers, in a llama-server (or llama-cli) that `Launcher` started.
    LlamaFit(Launcher),
    /// A serving engine sized its KV cache from a memory budget per rank and keeps every layer on its GPUs.
    ServingEngine(ServingEngine),
    /// The log does not say who placed the layers: no knob is known to reach anything.
    Unknown,
}

/// Who starts llama-server with the settings: Ollama (≥ 0.30, from its options and variables, `num_ctx`,
/// `LLAMA_ARG_*`), the user (its own flags, `-c`, `--fit-target`), or one of the two, the log does not say
/// which (llama-server's own lines are the same bytes under both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    Ollama,
    User,
    /// The user or Ollama ≥ 0.30: a rule, hint or knob holds only if it holds for both.
    Unknown,
}

/// Which serving engine: their figures and flags differ (`docs/log-formats.md` §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServingEngine {
    Vllm,
    Sglang,
}

/// The JSON contract's name for who placed the layers (`loads[].era`, schema version 1): `ollama` for
/// Ollama's estimator or engine, `llama-server` for llama.cpp's `--fit` (under Ollama ≥ 0.30, on its
/// own, or launched by one of the two, the log does not say which), `unknown`. Kept as the contract has it; [`Runtime`] is the finer type the stages read.
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
    pub const ALL: [Runtime; 9] = [
        Runtime::OllamaEstimator,
        Runtime::OllamaEngine,
        Runtime::OllamaPlacerUnknown,
        Runtime::OllamaFit,
        Runtime::LlamaCpp,
        Runtime::LlamaCppLauncherUnknown,
        Runtime::Vllm,
        Runtime::Sglang,
        Runtime::Unknown,
    ];

    /// The JSON contract's `era` for this runtime.
    pub fn era(self) -> Era {
        match self {
            Runtime::OllamaEstimator | Runtime::OllamaEngine | Runtime::OllamaPlacerUnknown => {
                Era::Ollama
            }
            Runtime::OllamaFit | Runtime::LlamaCpp | Runtime::LlamaCppLauncherUnknown => {
                Era::LlamaServer
            }
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
            // Its estimator or its engine: the scheduler, not whose figures it read.
            Runtime::OllamaPlacerUnknown => "Ollama",
            Runtime::OllamaFit => "Ollama with llama-server --fit",
            Runtime::LlamaCpp => "llama.cpp",
            // Its launcher unknown: the program, not who started it.
            Runtime::LlamaCppLauncherUnknown => "llama-server",
            Runtime::Vllm => "vLLM",
            Runtime::Sglang => "SGLang",
            Runtime::Unknown => "unknown runtime",
        }
    }

    /// Which kind of placer decided the load's memory (see the module doc): the one `match` that sorts
    /// runtimes, which every stage reads instead of naming runtimes.
    pub fn placer(self) -> Placer {
        match self {
            Runtime::OllamaEstimator | Runtime::OllamaEngine | Runtime::OllamaPlacerUnknown => {
                Placer::OllamaScheduler
            }
            Runtime::OllamaFit => Placer::LlamaFit(Launcher::Ollama),
            Runtime::LlamaCpp => Placer::LlamaFit(Launcher::User),
            Runtime::LlamaCppLauncherUnknown => Placer::LlamaFit(Launcher::Unknown),
            Runtime::Vllm => Placer::ServingEngine(ServingEngine::Vllm),
            Runtime::Sglang => Placer::ServingEngine(ServingEngine::Sglang),
            Runtime::Unknown => Placer::Unknown,
        }
    }

    /// llama.cpp placed the layers (its `--fit`, standalone or started by Ollama ≥ 0.30): the load has a
    /// `--fit` plan, an exit table, llama.cpp's compute buffers per device and its by-design host weights.
    pub fn llama_cpp_places_layers(self) -> bool {
        match self.placer() {
            Placer::LlamaFit(_) => true,
            Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => false,
        }
    }

    /// vLLM or SGLang: a serving engine that sizes its KV cache from a memory budget per rank, whose figures
    /// are read by `load::serving` rather than from buffer lines.
    pub fn is_serving_engine(self) -> bool {
        match self.placer() {
            Placer::ServingEngine(_) => true,
            Placer::OllamaScheduler | Placer::LlamaFit(_) | Placer::Unknown => false,
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
            Runtime::OllamaPlacerUnknown => 2,
            Runtime::OllamaFit => 3,
            Runtime::LlamaCpp => 4,
            Runtime::LlamaCppLauncherUnknown => 5,
            Runtime::Vllm => 6,
            Runtime::Sglang => 7,
            Runtime::Unknown => 8,
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
                "ollama",
                "llama-server",
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
