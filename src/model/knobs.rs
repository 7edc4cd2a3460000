//! The knobs of each runtime, as data: what the user sets (an environment variable, a model option or a
//! flag), what it becomes for the placer, and whether it reaches the placement at all. The suggestions
//! (`checks::suggest`) and the findings' hints name a knob only through this table, so a setting that does
//! nothing in a runtime (`OLLAMA_GPU_OVERHEAD` under llama-server's `--fit`) is never offered there, and the
//! findings reference (`docs/findings.md`) has one place to read them from.

use super::runtime::Runtime;

/// What a setting is for, whatever a runtime calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// Which GPUs the runtime sees at all.
    VisibleGpus,
    /// Every layer on one GPU (no split).
    OneGpu,
    /// The context of one sequence (Ollama's `num_ctx`; llama.cpp's `--ctx-size` is all sequences').
    Context,
    /// The default context for every model the server loads.
    ContextForEveryModel,
    /// The KV cache's number type.
    KvCacheType,
    /// How many layers go to the GPUs.
    GpuLayers,
    /// How much `--fit` keeps free on each GPU.
    FitMargin,
    /// Memory the estimator reserves on every GPU.
    GpuOverhead,
    /// Spread the model over every GPU instead of as few as hold it.
    Spread,
    /// The logical batch (the compute buffers grow with it).
    Batch,
    /// ollama37's multiplier on the estimated compute graph.
    GraphMultiplier,
    /// How many sequences (slots) run in parallel: each has its own recurrent state.
    Parallel,
    /// The share of each GPU a serving engine may take (vLLM's budget, SGLang's static pool).
    MemoryFraction,
    /// A fixed KV cache size per GPU instead of the profiled one (vLLM skips its memory profile).
    KvCacheMemory,
    /// How many sequences run at once (the activation peak and the CUDA graphs grow with it).
    Sequences,
    /// No CUDA graphs at all (eager mode).
    Eager,
    /// Whether vLLM reserves its CUDA-graph estimate inside the budget (≥ 0.21).
    GraphEstimate,
    /// The largest batch captured as a CUDA graph.
    GraphBatch,
    /// The micro-batch: the compute buffers scale with it.
    Ubatch,
    /// A MoE model's expert tensors of the first N layers kept in host memory, the rest of each layer on the GPU.
    ExpertsOnHost,
    /// Speculative decoding's draft (a draft model or an MTP head): its own context, KV and compute buffers.
    SpeculativeDraft,
    /// llama-server's prompt cache in host RAM (`--cache-ram N` MiB; 0 disables it, -1 is no limit).
    CacheRam,
    /// llama-server's context checkpoints per slot (`--ctx-checkpoints N`), each in host RAM.
    CtxCheckpoints,
}

impl Knob {
    /// Every knob, in the order the findings reference lists them.
    pub const ALL: [Knob; 23] = [
        Knob::VisibleGpus,
        Knob::OneGpu,
        Knob::Context,
        Knob::ContextForEveryModel,
        Knob::KvCacheType,
        Knob::GpuLayers,
        Knob::FitMargin,
        Knob::GpuOverhead,
        Knob::Spread,
        Knob::Batch,
        Knob::GraphMultiplier,
        Knob::Parallel,
        Knob::MemoryFraction,
        Knob::KvCacheMemory,
        Knob::Sequences,
        Knob::Eager,
        Knob::GraphEstimate,
        Knob::GraphBatch,
        Knob::Ubatch,
        Knob::ExpertsOnHost,
        Knob::SpeculativeDraft,
        Knob::CacheRam,
        Knob::CtxCheckpoints,
    ];

    /// What the knob is for, in a few words (the findings reference's first column).
    pub fn purpose(self) -> &'static str {
        match self {
            Knob::VisibleGpus => "the GPUs the runtime sees",
            Knob::OneGpu => "every layer on one GPU",
            Knob::Context => "the context",
            Knob::ContextForEveryModel => "the default context of every model",
            Knob::KvCacheType => "the KV cache's type",
            Knob::GpuLayers => "the layers on the GPUs",
            Knob::FitMargin => "the memory `--fit` keeps free per GPU",
            Knob::GpuOverhead => "memory reserved per GPU",
            Knob::Spread => "spread over every GPU",
            Knob::Batch => "the batch (compute buffers)",
            Knob::GraphMultiplier => "ollama37's graph multiplier",
            Knob::Parallel => "the parallel sequences (slots)",
            Knob::MemoryFraction => "the share of each GPU the engine takes",
            Knob::KvCacheMemory => "a fixed KV cache per GPU",
            Knob::Sequences => "sequences at once",
            Knob::Eager => "no CUDA graphs",
            Knob::GraphEstimate => "the CUDA-graph estimate in the budget",
            Knob::GraphBatch => "the largest CUDA-graph batch",
            Knob::Ubatch => "the micro-batch (compute buffers)",
            Knob::ExpertsOnHost => "a MoE model's experts in host memory",
            Knob::SpeculativeDraft => "speculative decoding's draft context",
            Knob::CacheRam => "the prompt cache in host RAM (MiB)",
            Knob::CtxCheckpoints => "context checkpoints per slot (host RAM)",
        }
    }
}

/// How the user writes a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// An environment variable of the server process: `NAME=value`.
    Env(&'static str),
    /// A model option (a Modelfile `PARAMETER`, the API's `options`): `name=value`.
    ModelOption(&'static str),
    /// Command-line flags, `{}` standing for the value: `--ctx-size {}`.
    Flag(&'static str),
    /// llama-server whose launcher the log does not name: its own flags (`flag`) if the user started it,
    /// Ollama's setting (`ollama`, a template too: `num_ctx={}`) if Ollama ≥ 0.30 did. Both reach the same
    /// setting of llama-server; the suggestion gives both and says which applies when.
    EitherLauncher {
        flag: &'static str,
        ollama: &'static str,
    },
}

/// Whether a setting reaches the placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// It reaches the placer as this (`{}` stands for the value): the flags Ollama passes to its runner, or
    /// what the scheduler does with it.
    Placer(&'static str),
    /// It is read, but the placement does not depend on it in this runtime: why.
    Ignored(&'static str),
}

/// One knob of one runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnobEntry {
    pub knob: Knob,
    pub spelling: Spelling,
    pub reach: Reach,
}

impl KnobEntry {
    /// The setting as the user types it, with its value.
    pub fn setting(&self, value: impl std::fmt::Display) -> String {
        match self.spelling {
            Spelling::Env(name) | Spelling::ModelOption(name) => format!("{name}={value}"),
            Spelling::Flag(flags) => flags.replace("{}", &value.to_string()),
            Spelling::EitherLauncher { flag, ollama } => {
                let value = value.to_string();
                format!(
                    "{} (if Ollama ≥ 0.30 started llama-server: {})",
                    flag.replace("{}", &value),
                    ollama.replace("{}", &value)
                )
            }
        }
    }

    /// The setting as the user types it, `N` standing for the value (`num_ctx`, `--ctx-size N`).
    pub fn spelled(&self) -> String {
        match self.spelling {
            Spelling::Env(name) | Spelling::ModelOption(name) => name.to_string(),
            Spelling::Flag(flags) => flags.replace("{}", "N"),
            Spelling::EitherLauncher { flag, ollama } => format!(
                "{} (under Ollama ≥ 0.30: {})",
                flag.replace("{}", "N"),
                ollama.replace("{}", "N")
            ),
        }
    }

    /// What the placer receives for `value` (`-ngl 40`), when it reaches it.
    pub fn passed_as(&self, value: impl std::fmt::Display) -> Option<String> {
        match self.reach {
            Reach::Placer(flags) => Some(flags.replace("{}", &value.to_string())),
            Reach::Ignored(_) => None,
        }
    }
}

const fn entry(knob: Knob, spelling: Spelling, reach: Reach) -> KnobEntry {
    KnobEntry {
        knob,
        spelling,
        reach,
    }
}

use Knob as K;
use Reach::{Ignored, Placer};
use Spelling::{EitherLauncher, Env, Flag, ModelOption};

/// The GPUs an Ollama server sees (CUDA's variable; Ollama reads it whichever placer it runs).
const CUDA_VISIBLE: KnobEntry = entry(
    K::VisibleGpus,
    Env("CUDA_VISIBLE_DEVICES"),
    Placer("only the GPUs {}"),
);

/// Ollama's default context, the `num_ctx` of every model without its own.
const OLLAMA_CONTEXT: KnobEntry = entry(
    K::ContextForEveryModel,
    Env("OLLAMA_CONTEXT_LENGTH"),
    Placer("num_ctx {}"),
);

/// Ollama's estimator and its engine (≤ 0.2x): the scheduler reads these when it places the layers.
const OLLAMA_SCHEDULER: &[KnobEntry] = &[
    CUDA_VISIBLE,
    entry(
        K::Context,
        ModelOption("num_ctx"),
        Placer("--ctx-size {}×parallel"),
    ),
    OLLAMA_CONTEXT,
    entry(
        K::KvCacheType,
        Env("OLLAMA_KV_CACHE_TYPE"),
        Placer("--kv-cache-type {}"),
    ),
    entry(
        K::GpuLayers,
        ModelOption("num_gpu"),
        Placer("--n-gpu-layers {}"),
    ),
    entry(
        K::GpuOverhead,
        Env("OLLAMA_GPU_OVERHEAD"),
        Placer("{} bytes less free memory per GPU"),
    ),
    entry(K::Spread, Env("OLLAMA_SCHED_SPREAD"), Placer("every GPU")),
    entry(
        K::Batch,
        ModelOption("num_batch"),
        Placer("--batch-size {}"),
    ),
    entry(
        K::GraphMultiplier,
        Env("OLLAMA_GRAPH_SAFETY_MULTIPLIER"),
        Placer("graph × {}"),
    ),
    entry(
        K::Parallel,
        Env("OLLAMA_NUM_PARALLEL"),
        Placer("--parallel {}"),
    ),
];

/// Ollama ≥ 0.30: Ollama's options become llama-server flags; `--fit` places the layers.
const OLLAMA_FIT: &[KnobEntry] = &[
    CUDA_VISIBLE,
    entry(
        K::OneGpu,
        ModelOption("main_gpu"),
        Placer("--split-mode none --main-gpu {}"),
    ),
    entry(K::Context, ModelOption("num_ctx"), Placer("-c {}×parallel")),
    OLLAMA_CONTEXT,
    entry(
        K::KvCacheType,
        Env("OLLAMA_KV_CACHE_TYPE"),
        Placer("--cache-type-k {} --cache-type-v {}"),
    ),
    entry(K::GpuLayers, ModelOption("num_gpu"), Placer("-ngl {}")),
    entry(
        K::FitMargin,
        Env("LLAMA_ARG_FIT_TARGET"),
        Placer("--fit-target {}"),
    ),
    entry(
        K::GpuOverhead,
        Env("OLLAMA_GPU_OVERHEAD"),
        Ignored("llama.cpp's --fit keeps its own margin per GPU (--fit-target)"),
    ),
    entry(K::Batch, ModelOption("num_batch"), Placer("-b {}")),
    // Ollama passes num_batch as both the batch and the micro-batch (`-b 1024 -ub 1024`,
    // sample-logs/founding-today-3090-4060-gemma4-31b.log line 1), so it is the micro-batch's knob too.
    entry(K::Ubatch, ModelOption("num_batch"), Placer("-b {} -ub {}")),
    entry(K::Parallel, Env("OLLAMA_NUM_PARALLEL"), Placer("-np {}")),
    // `LLAMA_ARG_*` in the Ollama server's environment reach llama-server unless Ollama passes the same flag
    // (`docs/log-formats.md` §5.6); no Ollama log in the corpus shows it passing `--cache-ram` or
    // `--ctx-checkpoints` (sample-logs/founding-today-3090-4060-gemma4-31b.log line 1). Ollama's own
    // `OLLAMA_CACHE_RAM` is not listed: no source here says which version reads it.
    entry(
        K::CacheRam,
        Env("LLAMA_ARG_CACHE_RAM"),
        Placer("--cache-ram {}"),
    ),
    entry(
        K::CtxCheckpoints,
        Env("LLAMA_ARG_CTX_CHECKPOINTS"),
        Placer("--ctx-checkpoints {}"),
    ),
];

/// llama.cpp on its own: the flags are the knobs.
const LLAMA_CPP: &[KnobEntry] = &[
    entry(K::VisibleGpus, Flag("--device {}"), Placer("--device {}")),
    entry(
        K::OneGpu,
        Flag("--split-mode none --main-gpu {}"),
        Placer("--split-mode none --main-gpu {}"),
    ),
    entry(K::Context, Flag("--ctx-size {}"), Placer("--ctx-size {}")),
    entry(
        K::KvCacheType,
        Flag("--cache-type-k {} --cache-type-v {}"),
        Placer("--cache-type-k {} --cache-type-v {}"),
    ),
    entry(
        K::GpuLayers,
        Flag("--n-gpu-layers {}"),
        Placer("--n-gpu-layers {}"),
    ),
    entry(
        K::FitMargin,
        Flag("--fit-target {}"),
        Placer("--fit-target {}"),
    ),
    entry(K::Batch, Flag("--batch-size {}"), Placer("--batch-size {}")),
    entry(K::Parallel, Flag("-np {}"), Placer("-np {}")),
    entry(K::Ubatch, Flag("-ub {}"), Placer("--ubatch-size {}")),
    entry(
        K::ExpertsOnHost,
        Flag("--n-cpu-moe {}"),
        Placer("the experts of the first {} layers on the CPU (-ot blk.N.ffn_.*_exps=CPU)"),
    ),
    // The value is the user's own flags, removed: `drop --spec-type draft-mtp`.
    entry(
        K::SpeculativeDraft,
        Flag("drop {}"),
        Placer("no draft context: {} removed"),
    ),
    entry(
        K::CacheRam,
        Flag("--cache-ram {}"),
        Placer("--cache-ram {}"),
    ),
    entry(
        K::CtxCheckpoints,
        Flag("--ctx-checkpoints {}"),
        Placer("--ctx-checkpoints {}"),
    ),
];

/// vLLM: its flags (`vllm serve …`) and environment are the knobs (`docs/log-formats.md` §8). Every one
/// reaches the memory profile that sizes the KV cache, except `--cpu-offload-gb` on the V1 engine (not
/// listed: no suggestion names it).
const VLLM: &[KnobEntry] = &[
    CUDA_VISIBLE,
    entry(
        K::Context,
        Flag("--max-model-len {}"),
        Placer("--max-model-len {}"),
    ),
    entry(
        K::KvCacheType,
        Flag("--kv-cache-dtype {}"),
        Placer("--kv-cache-dtype {}"),
    ),
    entry(
        K::Batch,
        Flag("--max-num-batched-tokens {}"),
        Placer("--max-num-batched-tokens {}"),
    ),
    entry(
        K::MemoryFraction,
        Flag("--gpu-memory-utilization {}"),
        Placer("a budget of total × {} per GPU"),
    ),
    entry(
        K::KvCacheMemory,
        Flag("--kv-cache-memory {}"),
        Placer("{} bytes of KV cache per GPU, no profile"),
    ),
    entry(
        K::Sequences,
        Flag("--max-num-seqs {}"),
        Placer("--max-num-seqs {}"),
    ),
    entry(K::Eager, Flag("--enforce-eager"), Placer("no CUDA graphs")),
    entry(
        K::GraphEstimate,
        Env("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"),
        Placer("the CUDA-graph estimate {} in the budget (0: left out)"),
    ),
];

/// SGLang: its server flags (`python -m sglang.launch_server …`) are the knobs (`docs/log-formats.md` §8).
const SGLANG: &[KnobEntry] = &[
    CUDA_VISIBLE,
    entry(
        K::Context,
        Flag("--context-length {}"),
        Placer("--context-length {}"),
    ),
    entry(
        K::KvCacheType,
        Flag("--kv-cache-dtype {}"),
        Placer("--kv-cache-dtype {}"),
    ),
    entry(
        K::Batch,
        Flag("--chunked-prefill-size {}"),
        Placer("--chunked-prefill-size {}"),
    ),
    entry(
        K::MemoryFraction,
        Flag("--mem-fraction-static {}"),
        Placer("a static pool of {} of each GPU"),
    ),
    entry(
        K::Eager,
        Flag("--disable-cuda-graph"),
        Placer("no CUDA graphs"),
    ),
    entry(
        K::GraphBatch,
        Flag("--cuda-graph-max-bs {}"),
        Placer("--cuda-graph-max-bs {}"),
    ),
    entry(
        K::Sequences,
        Flag("--max-running-requests {}"),
        Placer("--max-running-requests {}"),
    ),
];

/// llama-server whose launcher the log does not name (the user or Ollama ≥ 0.30): only the knobs that reach
/// llama-server's same setting under both, each in both spellings (llama-server's flag, Ollama's setting).
/// Not Ollama's `OLLAMA_CONTEXT_LENGTH` (no user-started llama-server reads it), nor llama.cpp's `--n-cpu-moe`
/// or a draft's flags (Ollama passes none). llama.cpp's `--ctx-size` is every slot's context and Ollama's
/// `num_ctx` one slot's (it passes `-c num_ctx×parallel`), so the context is written as llama-server's total
/// and Ollama's setting as that total over the slots.
/// Nor the GPUs it sees: the user's `--device` takes llama.cpp's device names on every backend, Ollama's
/// `CUDA_VISIBLE_DEVICES` CUDA's indices or UUIDs on CUDA alone, so no one value reaches both.
const LLAMA_CPP_LAUNCHER_UNKNOWN: &[KnobEntry] = &[
    entry(
        K::OneGpu,
        EitherLauncher {
            flag: "--split-mode none --main-gpu {}",
            ollama: "main_gpu={}",
        },
        Placer("--split-mode none --main-gpu {}"),
    ),
    entry(
        K::Context,
        EitherLauncher {
            flag: "--ctx-size {}",
            ollama: "num_ctx={} ÷ the parallel slots",
        },
        Placer("--ctx-size {}"),
    ),
    entry(
        K::KvCacheType,
        EitherLauncher {
            flag: "--cache-type-k {} --cache-type-v {}",
            ollama: "OLLAMA_KV_CACHE_TYPE={}",
        },
        Placer("--cache-type-k {} --cache-type-v {}"),
    ),
    entry(
        K::GpuLayers,
        EitherLauncher {
            flag: "--n-gpu-layers {}",
            ollama: "num_gpu={}",
        },
        Placer("--n-gpu-layers {}"),
    ),
    // llama.cpp reads `LLAMA_ARG_*` whoever starts it (a flag on the command line wins): the variable is
    // the one spelling that reaches both.
    entry(
        K::FitMargin,
        EitherLauncher {
            flag: "--fit-target {}",
            ollama: "LLAMA_ARG_FIT_TARGET={}",
        },
        Placer("--fit-target {}"),
    ),
    entry(
        K::GpuOverhead,
        Env("OLLAMA_GPU_OVERHEAD"),
        Ignored("llama.cpp's --fit keeps its own margin per GPU (--fit-target)"),
    ),
    entry(
        K::Batch,
        EitherLauncher {
            flag: "--batch-size {}",
            ollama: "num_batch={}",
        },
        Placer("--batch-size {}"),
    ),
    // Ollama passes num_batch as both -b and -ub (`OLLAMA_FIT`).
    entry(
        K::Ubatch,
        EitherLauncher {
            flag: "-ub {}",
            ollama: "num_batch={}",
        },
        Placer("--ubatch-size {}"),
    ),
    entry(
        K::Parallel,
        EitherLauncher {
            flag: "-np {}",
            ollama: "OLLAMA_NUM_PARALLEL={}",
        },
        Placer("-np {}"),
    ),
    entry(
        K::CacheRam,
        EitherLauncher {
            flag: "--cache-ram {}",
            ollama: "LLAMA_ARG_CACHE_RAM={}",
        },
        Placer("--cache-ram {}"),
    ),
    entry(
        K::CtxCheckpoints,
        EitherLauncher {
            flag: "--ctx-checkpoints {}",
            ollama: "LLAMA_ARG_CTX_CHECKPOINTS={}",
        },
        Placer("--ctx-checkpoints {}"),
    ),
];

/// Every knob of a runtime, whether it reaches the placement or not.
pub fn table(runtime: Runtime) -> &'static [KnobEntry] {
    match runtime {
        // Either figures, one scheduler: the same knobs.
        Runtime::OllamaEstimator | Runtime::OllamaEngine | Runtime::OllamaPlacerUnknown => {
            OLLAMA_SCHEDULER
        }
        Runtime::OllamaFit => OLLAMA_FIT,
        Runtime::LlamaCpp => LLAMA_CPP,
        Runtime::LlamaCppLauncherUnknown => LLAMA_CPP_LAUNCHER_UNKNOWN,
        Runtime::Vllm => VLLM,
        Runtime::Sglang => SGLANG,
        // Without knowing the runtime, no setting is known to reach anything.
        Runtime::Unknown => &[],
    }
}

/// The runtime's setting for `knob`, when it has one that reaches the placement.
pub fn reaching(runtime: Runtime, knob: Knob) -> Option<&'static KnobEntry> {
    table(runtime)
        .iter()
        .find(|e| e.knob == knob && matches!(e.reach, Placer(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_knob_is_listed_once_per_runtime() {
        for runtime in Runtime::ALL {
            let knobs: Vec<Knob> = table(runtime).iter().map(|e| e.knob).collect();
            for (i, k) in knobs.iter().enumerate() {
                assert!(!knobs[i + 1..].contains(k), "{runtime:?}: {k:?} twice");
            }
        }
    }

    #[test]
    fn a_knob_the_fit_ignores_is_never_offered_there() {
        assert!(reaching(Runtime::OllamaFit, Knob::GpuOverhead).is_none());
        assert!(table(Runtime::OllamaFit)
            .iter()
            .any(|e| e.knob == Knob::GpuOverhead));
        assert_eq!(
            reaching(Runtime::OllamaEstimator, Knob::GpuOverhead).map(|e| e.setting(1024)),
            Some("OLLAMA_GPU_OVERHEAD=1024".to_string())
        );
        assert!(reaching(Runtime::Unknown, Knob::Context).is_none());
    }

    #[test]
    fn an_unknown_launcher_gets_both_spellings_of_what_reaches_both() {
        let unknown = Runtime::LlamaCppLauncherUnknown;
        assert_eq!(
            reaching(unknown, Knob::FitMargin).unwrap().setting(1024),
            "--fit-target 1024 (if Ollama ≥ 0.30 started llama-server: LLAMA_ARG_FIT_TARGET=1024)"
        );
        assert_eq!(
            reaching(unknown, Knob::Context).unwrap().setting(8192),
            "--ctx-size 8192 (if Ollama ≥ 0.30 started llama-server: num_ctx=8192 ÷ the parallel slots)"
        );
        // Every knob it offers reaches llama-server under both launchers.
        for entry in table(unknown) {
            if matches!(entry.reach, Placer(_)) {
                assert!(
                    reaching(Runtime::LlamaCpp, entry.knob).is_some()
                        && reaching(Runtime::OllamaFit, entry.knob).is_some(),
                    "{:?}",
                    entry.knob
                );
            }
        }
        // What only one launcher reads is not offered.
        for knob in [
            Knob::ContextForEveryModel,
            Knob::ExpertsOnHost,
            Knob::SpeculativeDraft,
            Knob::GpuOverhead,
            Knob::VisibleGpus,
        ] {
            assert!(reaching(unknown, knob).is_none(), "{knob:?}");
        }
    }

    #[test]
    fn serving_engines_name_their_own_flags() {
        let util = reaching(Runtime::Vllm, Knob::MemoryFraction).unwrap();
        assert_eq!(util.setting(0.66), "--gpu-memory-utilization 0.66");
        let frac = reaching(Runtime::Sglang, Knob::MemoryFraction).unwrap();
        assert_eq!(frac.setting(0.8), "--mem-fraction-static 0.8");
        assert_eq!(
            reaching(Runtime::Vllm, Knob::GraphEstimate)
                .unwrap()
                .setting(0),
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"
        );
        // SGLang has no `--kv-cache-memory`; vLLM has no `--cuda-graph-max-bs`.
        assert!(reaching(Runtime::Sglang, Knob::KvCacheMemory).is_none());
        assert!(reaching(Runtime::Vllm, Knob::GraphBatch).is_none());
        assert!(reaching(Runtime::OllamaFit, Knob::MemoryFraction).is_none());
    }

    #[test]
    fn settings_are_written_as_each_runtime_takes_them() {
        let ngl = |r| reaching(r, Knob::GpuLayers).unwrap();
        assert_eq!(ngl(Runtime::OllamaFit).setting(40), "num_gpu=40");
        assert_eq!(ngl(Runtime::OllamaFit).passed_as(40).unwrap(), "-ngl 40");
        assert_eq!(ngl(Runtime::LlamaCpp).setting(40), "--n-gpu-layers 40");
        let one = reaching(Runtime::OllamaFit, Knob::OneGpu).unwrap();
        assert_eq!(one.passed_as(1).unwrap(), "--split-mode none --main-gpu 1");
    }

    #[test]
    fn llama_cpp_s_own_flags_reach_only_llama_cpp() {
        assert_eq!(
            reaching(Runtime::LlamaCpp, Knob::Ubatch)
                .unwrap()
                .setting(256),
            "-ub 256"
        );
        assert_eq!(
            reaching(Runtime::LlamaCpp, Knob::ExpertsOnHost)
                .unwrap()
                .setting(12),
            "--n-cpu-moe 12"
        );
        assert_eq!(
            reaching(Runtime::LlamaCpp, Knob::OneGpu)
                .unwrap()
                .setting(0),
            "--split-mode none --main-gpu 0"
        );
        // Ollama's estimator passes neither a micro-batch nor expert overrides to its runner; Ollama ≥ 0.30 passes
        // num_batch as both -b and -ub, and no expert overrides.
        for runtime in [Runtime::OllamaEstimator, Runtime::OllamaEngine] {
            assert!(reaching(runtime, Knob::Ubatch).is_none());
            assert!(reaching(runtime, Knob::ExpertsOnHost).is_none());
        }
        let ub = reaching(Runtime::OllamaFit, Knob::Ubatch).unwrap();
        assert_eq!(ub.setting(512), "num_batch=512");
        assert_eq!(ub.passed_as(512).as_deref(), Some("-b 512 -ub 512"));
        assert!(reaching(Runtime::OllamaFit, Knob::ExpertsOnHost).is_none());
    }
}
