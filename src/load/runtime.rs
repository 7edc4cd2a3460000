//! Who estimated and who placed a load's layers ([`Runtime`]), decided once from the signs its lines give.
//! Every later stage reads the decision; none looks at the signs again.
//!
//! The signs, strongest first:
//! - llama.cpp's `--fit` placed the layers when the log has its lines (`llama_params_fit…`), llama-server's
//!   command line, Ollama's `loading model via llama-server`, a memory breakdown table or a dry run (only
//!   llama.cpp prints them), llama-server's own start lines (`initializing`, its build), Ollama's `disabling multimodal projector offload` or `waiting for llama-server …`
//!   (its llama-server wrapper), or Ollama's version is 0.30 or later. Who started it is decided from
//!   evidence only, since Ollama ≥ 0.30 relays llama-server's lines unchanged: Ollama
//!   ([`Runtime::OllamaFit`]) when one of Ollama's own server lines is in the load (its version, the runner
//!   command it starts, its GPU discovery, a load request, its estimate) or llama-server loads a model file of
//!   Ollama's blob store (`…/models/blobs/sha256-…`); the user ([`Runtime::LlamaCpp`]) when their own command
//!   line is pasted with the log (`$ llama-server -m …`, a wrapper's `argv:`; llama.cpp never prints its own,
//!   and one Ollama logged is Ollama's) or the model file is in LM Studio's store; otherwise the launcher is
//!   not known ([`Runtime::LlamaCppLauncherUnknown`]: what both launchers agree on holds, knobs in both
//!   spellings). A failure line only llama.cpp's own programs print (`common_init_from_params`,
//!   `main: error: unable to load model`; Ollama's runner before 0.30 never links `common`) makes a fragment
//!   of failure lines llama.cpp's as well.
//! - Otherwise Ollama's scheduler placed the layers when its estimate, memory summary, load requests, version,
//!   runner command or `loading model` line is there: from `load request`s (`fit`, `alloc`, `commit`) its
//!   engine measured the layout ([`Runtime::OllamaEngine`]); its estimator computed it
//!   ([`Runtime::OllamaEstimator`]) when the log says the load is older than the load requests (its
//!   `offload` line, a version before 0.11.5, a runner command carrying the context); else a fragment
//!   without the requests cannot tell ([`Runtime::OllamaPlacerUnknown`]).
//! - vLLM and SGLang name themselves: a line only SGLang prints (its stages, pool, `server_args`) makes the
//!   load [`Runtime::Sglang`], else one only vLLM prints (its profile, engine start, advisories)
//!   [`Runtime::Vllm`] (`load::serving`).
//! - A line only one runtime prints (the table of `docs/log-formats.md` §0.1, read by `grammar::signatures`)
//!   is a sign only as far as it goes, so that a fragment knows less, never something else: Ollama's Go slog
//!   records say Ollama launched what placed the layers (never whether its estimator or its engine, which
//!   only the load requests tell), its `llama_server.go` lines that `--fit` placed them under Ollama, and
//!   llama-server's own tags or llama.cpp's `common` library that llama-server placed them, launched by
//!   whom only a line of the launcher's says.
//! - Otherwise [`Runtime::Unknown`] (an excerpt of buffer lines).
//!
//! The line shapes are in `docs/log-formats.md`.

use crate::model::{Launcher, Runtime};
use crate::parse::event::SignedRuntime;

use super::builder::LoadBuilder;
use super::engine::parse_version;

impl LoadBuilder {
    /// One of Ollama's own server lines is part of this load.
    fn ollama_server_seen(&self) -> bool {
        self.version.is_some()
            || self.runner.is_some()
            || self.model_path.is_some()
            || self.loading_model.is_some()
            || !self.requests.is_empty()
            || !self.inventory.is_empty()
            || !self.gpu_memory.is_empty()
            || !self.estimator.is_empty()
            || !self.summary_estimate.is_empty()
            || self.projector_offload_disabled.is_some()
            || self.ollama_llama_server
            || !self.attempts.is_empty()
            || self.signed(SignedRuntime::Ollama)
            || self.signed(SignedRuntime::OllamaLlamaServer)
    }

    /// Who started the llama.cpp program that placed the layers, from evidence only: any Ollama line, or a
    /// model file in Ollama's blob store, says Ollama (≥ 0.30 relays llama-server's lines unchanged, so they
    /// alone say nothing); the user's own command line pasted with the log, or a model file of LM Studio's
    /// store, says the user (a program of their own, not Ollama); otherwise it is not known.
    fn launcher(&self) -> Launcher {
        let model_file = self
            .llama_server
            .as_ref()
            .and_then(|(start, _)| start.model.as_deref())
            .and_then(launcher_of_model_path);
        // A failure line names the model file too (`common_init_from_params: failed to create context with
        // model '…'`).
        let failed_file = self.failed_model_store;
        if self.ollama_server_seen() || model_file == Some(Launcher::Ollama) {
            Launcher::Ollama
        } else if self.command_line.is_some()
            || model_file == Some(Launcher::User)
            || failed_file == Some(Launcher::User)
        {
            Launcher::User
        } else if failed_file == Some(Launcher::Ollama) {
            Launcher::Ollama
        } else {
            Launcher::Unknown
        }
    }

    /// A line only `runtime` prints is part of this load (`docs/log-formats.md` §0.1).
    pub(super) fn signed(&self, runtime: SignedRuntime) -> bool {
        self.signs.iter().any(|s| s.runtime == runtime)
    }

    /// Who estimated and who placed the layers (see the module doc).
    pub(super) fn runtime(&self) -> Runtime {
        // vLLM's and SGLang's memory lines name their engine (SGLang's first: it prints vLLM's platform line).
        if self.serving.sglang {
            return Runtime::Sglang;
        }
        if self.serving.vllm {
            return Runtime::Vllm;
        }
        let version = self.version.as_deref().and_then(parse_version);
        let cmd = self.command().map(|(c, _)| c);
        let fit_placed = cmd.is_some_and(|c| c.llama_server)
            || self.model_path.is_some()
            // llama-server's own start lines (`srv  llama_server: initializing`, its build).
            || self.llama_server.is_some()
            || !self.fit.is_empty()
            || !self.tables.is_empty()
            || self.dry_run.is_some()
            // A round the next one reprinted is no dry run of the load's, but its 0.00 MiB buffer is the fit's.
            || self.no_alloc_print_line.is_some()
            // Only the scheduler of 0.30 and later decides the projector's offload for llama-server.
            || self.projector_offload_disabled.is_some()
            || self.ollama_llama_server
            // A failure line only llama.cpp's own programs print (`common_init_from_params`, `main: error:`).
            || self.llama_cpp_tool
            // A line only Ollama's wrapper of llama-server prints, or one only llama-server (or llama.cpp's
            // `common` library, which Ollama's runner before 0.30 never linked) prints: alone, the launcher is
            // not known (the user or Ollama ≥ 0.30, `Self::launcher`).
            || self.signed(SignedRuntime::OllamaLlamaServer)
            || self.signed(SignedRuntime::LlamaServer)
            || version.is_some_and(|v| v >= (0, 30, 0));
        if fit_placed {
            return match self.launcher() {
                Launcher::Ollama => Runtime::OllamaFit,
                Launcher::User => Runtime::LlamaCpp,
                Launcher::Unknown => Runtime::LlamaCppLauncherUnknown,
            };
        }
        // Not Ollama's memory summary alone: its estimator and its engine print it alike, so a fragment of
        // those lines names no placer (the runtime stays unknown rather than guessed).
        let ollama_scheduled = !self.estimator.is_empty()
            || !self.requests.is_empty()
            || version.is_some()
            || cmd.is_some_and(|c| c.ollama_runner)
            || self.loading_model.is_some()
            || !self.attempts.is_empty();
        // Only the load requests tell the engine's measured layouts, and from 0.11.5 every load prints them
        // (`docs/log-formats.md` §0, §4.3): without them the estimator decided only where the log says the
        // load is older than that — its `offload` estimate line (≤ 0.12.10, the estimator's own), a version
        // before 0.11.5, or a runner command carrying the context (0.11.5 and later pass it in the request).
        let before_load_requests = version.is_some_and(|v| v < (0, 11, 5))
            || cmd.is_some_and(|c| c.ollama_runner && c.ctx_size.is_some());
        if !ollama_scheduled {
            Runtime::Unknown
        } else if !self.requests.is_empty() {
            Runtime::OllamaEngine
        } else if !self.estimator.is_empty() || before_load_requests {
            Runtime::OllamaEstimator
        } else {
            Runtime::OllamaPlacerUnknown
        }
    }
}

/// Who a model file's path says started llama.cpp, when its store is one only a launcher uses: Ollama keeps
/// its models as content-addressed blobs (`…/models/blobs/sha256-` and 64 hex digits, no extension: no name a
/// user gives a GGUF file, and the path llama-server's loader prints when Ollama ≥ 0.30 passes `--model`),
/// LM Studio under `.lmstudio/models/` (its own program, started by the user, not by Ollama). Any other path
/// says nothing.
pub(super) fn launcher_of_model_path(text: &str) -> Option<Launcher> {
    let blob = text.match_indices("blobs").any(|(at, _)| {
        let rest = &text[at + "blobs".len()..];
        let Some(rest) = rest
            .strip_prefix('/')
            .or_else(|| rest.strip_prefix('\\'))
            .and_then(|r| r.strip_prefix("sha256-"))
        else {
            return false;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        digits == 64 && !rest[64..].starts_with('.')
    });
    if blob {
        Some(Launcher::Ollama)
    } else if text.contains(".lmstudio/models/") || text.contains(".lmstudio\\models\\") {
        Some(Launcher::User)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{Engine, Runtime};

    #[test]
    fn a_no_alloc_round_the_next_round_reprinted_still_says_llama_cpp_placed_the_layers() {
        // `tests/data/peer-vectors/303-…-fit-probe-2gpu.input:2,5,13,15`: the fit's no-alloc round prints the
        // GPUs' weights and KV as 0.00 MiB, the next round reprints them with their sizes. A window of the
        // first round alone is a dry run of llama.cpp's; the whole log must not know less than that window.
        let loads = loads_of(&[
            "load_tensors:        CUDA0 model buffer size =     0.00 MiB",
            "llama_kv_cache:      CUDA0 KV buffer size =     0.00 MiB",
            "load_tensors:        CUDA0 model buffer size =  8171.01 MiB",
            "llama_kv_cache:      CUDA0 KV buffer size =  9216.00 MiB",
        ]);
        assert_eq!(loads[0].runtime, Runtime::LlamaCppLauncherUnknown);
        // The sizes alone say nothing of who placed the layers.
        let loads = loads_of(&[
            "load_tensors:        CUDA0 model buffer size =  8171.01 MiB",
            "llama_kv_cache:      CUDA0 KV buffer size =  9216.00 MiB",
        ]);
        assert_eq!(loads[0].runtime, Runtime::Unknown);
    }

    #[test]
    fn llama_server_s_lines_alone_leave_its_launcher_unknown() {
        // `sample-logs/506-…-prefit-breakdown-excerpt.log:2` (Ollama 0.30's llama-server, its own line,
        // relayed unchanged): llama-server placed the layers, started by whom the line does not say.
        let loads = loads_of(&["srv  llama_server: loading model"]);
        assert_eq!(loads[0].runtime, Runtime::LlamaCppLauncherUnknown);
        // `sample-logs/506-…:3`: the model file is in Ollama's blob store, so Ollama started it.
        let loads = loads_of(&[
            "srv  llama_server: loading model",
            "srv    load_model: loading model '/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0'",
        ]);
        assert_eq!(loads[0].runtime, Runtime::OllamaFit);
        // Corpus raw/708 (a user's llama-server, a file the user named): still not known who started it.
        let loads = loads_of(&[
            "main: loading model",
            "srv    load_model: loading model '/home/fak/Downloads/Qwen3.6-27B-Q4_K_M.gguf'",
        ]);
        assert_eq!(loads[0].runtime, Runtime::LlamaCppLauncherUnknown);
        // The user's own command line pasted above it says the user (`grammars/40-llama-cpp.toml`'s example).
        let loads = loads_of(&[
            "$ ./llama-server -m /home/fak/Downloads/Qwen3.6-27B-Q4_K_M.gguf -c 8192",
            "main: loading model",
            "srv    load_model: loading model '/home/fak/Downloads/Qwen3.6-27B-Q4_K_M.gguf'",
        ]);
        assert_eq!(loads[0].runtime, Runtime::LlamaCpp);
    }

    #[test]
    fn a_model_store_names_its_launcher() {
        use super::launcher_of_model_path as of;
        use crate::model::Launcher;
        let blob = "sha256-9ed150d4367e68df0ac8e1540f6ddc65b42d0ee26378329d1ecbca60f93fc5f8";
        assert_eq!(
            of(&format!("/root/.ollama/models/blobs/{blob}")),
            Some(Launcher::Ollama)
        );
        assert_eq!(
            of(&format!("C:\\Users\\M\\.ollama\\models\\blobs\\{blob}")),
            Some(Launcher::Ollama)
        );
        // A user's copy of a blob renamed to a GGUF file, or a shortened hash, is no blob of the store.
        assert_eq!(of(&format!("/data/blobs/{blob}.gguf")), None);
        assert_eq!(of("/root/.ollama/models/blobs/sha256-9ed150d4"), None);
        // `sample-logs/1003-…:11` (LM Studio).
        assert_eq!(
            of("common_init_from_params: failed to create context with model '/home/skrrt/.lmstudio/models/unsloth/Qwen3-30B-A3B-Thinking-2507-GGUF/Qwen3-30B-A3B-Thinking-2507-UD-Q8_K_XL.gguf'"),
            Some(Launcher::User)
        );
        assert_eq!(of("/home/fak/Downloads/Qwen3.6-27B-Q4_K_M.gguf"), None);
    }

    #[test]
    fn without_its_load_requests_a_load_of_ollama_0_11_5_or_later_names_no_placer() {
        // `sample-logs/1101-ollama-0170-metal-m4-phi3-128k-kv12gib-evict-then-load.log:5,8,9,32`: the
        // eviction and the memory summary, then the `commit` load request.
        let eviction = r#"time=2026-02-25T18:14:52.529+08:00 level=INFO source=server.go:1029 msg="model requires more gpu memory than is currently available, evicting a model to make space" "loaded layers"=32"#;
        let loading = r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=server.go:498 msg="loading model" "model layers"=33 requested=-1"#;
        let weights = r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:240 msg="model weights" device=Metal size="2.0 GiB""#;
        let commit = r#"time=2026-02-25T18:14:52.650+08:00 level=INFO source=runner.go:895 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:512 FlashAttention:Auto KvSize:32768 KvCacheType: NumThreads:4 GPULayers:33[ID:0 Layers:33(0..32)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:true}""#;
        let loads = loads_of(&[eviction, loading, weights, commit]);
        assert_eq!(loads[0].runtime, Runtime::OllamaEngine);
        // Without the request: Ollama's scheduler, from whose figures the lines do not say.
        let loads = loads_of(&[eviction, loading, weights]);
        assert_eq!(loads[0].runtime, Runtime::OllamaPlacerUnknown);
        // `sample-logs/005-macos-metal-qwen2-7b-estimate-only.log:1`: the estimator's own `offload` line.
        let loads = loads_of(&[
            r#"time=2024-08-14T16:27:00.222+08:00 level=INFO source=memory.go:309 msg="offload to metal" layers.requested=-1 layers.model=29 layers.offload=29 layers.split="" memory.available="[21.3 GiB]" memory.required.full="5.4 GiB" memory.required.partial="5.4 GiB" memory.required.kv="448.0 MiB" memory.required.allocations="[5.4 GiB]" memory.weights.total="3.9 GiB" memory.weights.repeating="3.4 GiB" memory.weights.nonrepeating="426.4 MiB" memory.graph.full="478.0 MiB" memory.graph.partial="478.0 MiB""#,
        ]);
        assert_eq!(loads[0].runtime, Runtime::OllamaEstimator);
    }

    #[test]
    fn llama_server_s_side_estimates_name_it_and_its_engine() {
        // `sample-logs/719-llama-server-mmproj-raises-fit-target-demo.log:2` and
        // `sample-logs/506-…-prefit-breakdown-excerpt.log:9`: only llama-server's `load_model` prints them.
        for line in [
            "srv    load_model: [mtmd] estimated memory usage of mmproj is 2447.80 MiB",
            "srv    load_model: [spec] estimated memory usage of MTP context is 581.77 MiB",
        ] {
            let loads = loads_of(&[line]);
            assert_eq!(
                (loads[0].runtime, loads[0].engine),
                (Runtime::LlamaCppLauncherUnknown, Engine::Llama),
                "{line}"
            );
        }
    }

    #[test]
    fn the_runner_command_names_engine_and_runtime() {
        // `sample-logs/004-windows-rocm-780m-gemma3-27b-newengine.log:12`: `runner --ollama-engine`.
        let loads = loads_of(&[
            r#"time=2025-07-24T18:29:07.517+09:00 level=INFO source=server.go:438 msg="starting llama server" cmd="C:\\Users\\araki\\AppData\\Local\\Programs\\Ollama\\ollama.exe runner --ollama-engine --model C:\\Users\\araki\\.ollama\\models\\blobs\\sha256-e796792eba26c4d3b04b0ac5adb01a453dd9ec2dfd83b6c59cbf6fe5f30b0f68 --ctx-size 8192 --batch-size 512 --n-gpu-layers 63 --threads 8 --parallel 2 --port 49262""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].runtime),
            (Engine::Ollama, Runtime::OllamaEstimator)
        );
        // `sample-logs/002-runpod-rtx4090-llama31-8b-lora.log:23`: `ollama_llama_server runner`.
        let loads = loads_of(&[
            r#"time=2025-12-01T20:28:54.084Z level=INFO source=server.go:376 msg="starting llama server" cmd="/usr/lib/ollama/runners/cuda_v12_avx/ollama_llama_server runner --model /runpod-volume/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --lora /runpod-volume/blobs/sha256-27152a06f8a83c9b950a1c0e85c9cfc1ef8e52c9da9e1df6cd0dfa38184819c8 --threads 24 --parallel 4 --port 46753""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].runtime),
            (Engine::Llama, Runtime::OllamaEstimator)
        );
        // `sample-logs/501-…-start-excerpt.log:1`: `starting llama-server` (Ollama 0.30+).
        let loads = loads_of(&[
            r#"time=2026-06-07T18:12:00.136+07:00 level=INFO source=llama_server.go:403 msg="starting llama-server" cmd="C:\\Users\\M\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\llama-server.exe --model C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --port 51282 --host 127.0.0.1 --no-webui --offline -c 16384 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --no-mmproj-offload --no-mmap --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on -b 1024 -ub 1024""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].runtime),
            (Engine::Llama, Runtime::OllamaFit)
        );
    }
}
