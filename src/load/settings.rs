//! A load's settings (context, batch, parallel, GPU layers, KV cache type, flash attention, projector
//! offload, `--fit` target …) resolved from every line that states them, by a fixed precedence.

use crate::model::{Quantity, Settings};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The load's settings, each from the most direct source that gives it: Ollama's `load request` (what
    /// the runner was asked for), the runner's command line (Ollama's, or the user's own llama.cpp command),
    /// then what llama.cpp printed when it created the context.
    pub(super) fn settings(&self) -> Settings {
        let request = self.commit_request();
        let cmd = self.command().map(|(c, _)| c);
        let context = &self.context;
        let flash = request
            .and_then(|r| r.flash_attention)
            .or(cmd.and_then(|c| c.flash_attention))
            .or(context.flash_attention);
        let disabled = self.projector_offload_disabled.as_ref();
        Settings {
            ubatch_size: cmd.and_then(|c| c.ubatch_size).or(context.ubatch),
            kv_cache_type_v: cmd.and_then(|c| c.kv_cache_type_v.clone()),
            projector_offload: if disabled.is_some() {
                Some(false)
            } else {
                cmd.and_then(|c| {
                    c.projector_offload.or(c
                        .mmproj
                        .as_ref()
                        .filter(|_| c.llama_server)
                        .map(|_| true))
                })
            },
            projector_offload_reason: disabled.and_then(|(r, _)| r.clone()),
            projector_offload_line: disabled.map(|(_, l)| *l).or(self
                .command()
                .filter(|(c, _)| c.projector_offload.is_some())
                .map(|(_, l)| *l)),
            split_mode: cmd.and_then(|c| c.split_mode.clone()),
            main_gpu: cmd.and_then(|c| c.main_gpu),
            mmap: cmd.and_then(|c| c.mmap),
            speculative: cmd.and_then(|c| c.speculative.clone()),
            kv_unified: context.kv_unified,
            pipeline_copies: context.pipeline_copies,
            fit_target: cmd
                .and_then(|c| c.fit_target)
                .and_then(|m| Quantity::from_truncated(m, crate::model::MIB)),
            ctx_size: request
                .and_then(|r| r.kv_size)
                .or(cmd.and_then(|c| c.ctx_size))
                .or(context.ctx)
                .or(self.kv_cells)
                // The KV line's cells (`size = … (131072 cells, …, 2/2 seqs)`, per stream): the largest
                // cache is full attention. Not a cache announced as the sliding window's (its cells are the
                // window's), nor, when a sliding-window model's cache is not announced, a guess from one of
                // two: a fragment may hold only the window's. Nor, unless announced as the full cache, when the
                // log starts at the caches: llama.cpp creates a sliding-window model's full cache first and
                // announces each cache just before its buffers, so a log that begins at a KV line may have
                // lost the announcement and the full cache both, and hold the window's alone
                // (`sample-logs/707-…:8–9`, the gemma3 oracle runs).
                .or(self
                    .kv_caches
                    .iter()
                    .filter(|(k, _)| {
                        k.swa == Some(false)
                            || self.first_kv_line.is_some_and(|kv| kv > self.first_line)
                    })
                    .filter(|(k, _)| !k.recurrent && k.swa != Some(true))
                    .filter(|(k, _)| {
                        k.swa.is_some() || self.kv_caches.iter().all(|(o, _)| o.swa.is_none())
                    })
                    .filter_map(|(k, _)| Some(k.cells? * k.streams.unwrap_or(1)))
                    .max()),
            // llama.cpp's `n_batch` is the context's batch, not the setting: Ollama's runner asks for the
            // batch times the slots (`sample-logs/002-…`: `--batch-size 512 --parallel 4`, `n_batch = 2048`),
            // and llama.cpp caps it at the context. It stands for the setting only where llama-server's own
            // flags are the settings: the user's, or llama-server's whose launcher is unknown (the user's
            // `-b`, or the `-b num_batch` Ollama ≥ 0.30 passes).
            batch_size: request
                .and_then(|r| r.batch_size)
                .or(cmd.and_then(|c| c.batch_size))
                .or(context.batch.filter(|_| {
                    matches!(
                        self.runtime(),
                        crate::model::Runtime::LlamaCpp
                            | crate::model::Runtime::LlamaCppLauncherUnknown
                    )
                })),
            parallel: request
                .and_then(|r| r.parallel)
                .or(cmd.and_then(|c| c.parallel))
                .or(context.seq_max)
                .or(context.parallel_auto),
            parallel_auto: (context.parallel_auto.is_some()
                && cmd.and_then(|c| c.parallel).is_none())
            .then_some(true),
            gpu_layers: request
                .and_then(|r| r.gpu_layers)
                .or(cmd.and_then(|c| c.gpu_layers)),
            kv_cache_type: request
                .and_then(|r| r.kv_cache_type.clone())
                .or(cmd.and_then(|c| c.kv_cache_type.clone()))
                .or(self.kv_type.clone())
                .or(self
                    .kv_caches
                    .iter()
                    .find(|(k, _)| !k.recurrent)
                    .and_then(|(k, _)| k.type_k.clone())),
            flash_attention: flash,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;

    /// `sample-logs/004-windows-rocm-780m-gemma3-27b-newengine.log:12`: the runner's command line (`--ctx-size 8192 --batch-size 512 --parallel 2`).
    const COMMAND_004: &str = r#"time=2025-07-24T18:29:07.517+09:00 level=INFO source=server.go:438 msg="starting llama server" cmd="C:\\Users\\araki\\AppData\\Local\\Programs\\Ollama\\ollama.exe runner --ollama-engine --model C:\\Users\\araki\\.ollama\\models\\blobs\\sha256-e796792eba26c4d3b04b0ac5adb01a453dd9ec2dfd83b6c59cbf6fe5f30b0f68 --ctx-size 8192 --batch-size 512 --n-gpu-layers 63 --threads 8 --parallel 2 --port 49262""#;
    /// `sample-logs/009-linux-cuda-qwen3-coder-next-partial-kvf16-newengine.log:1`: Ollama's commit request (`KvSize:32768 BatchSize:1024 Parallel:1`).
    const COMMIT_009: &str = r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}""#;

    #[test]
    fn the_commit_request_outranks_the_command_line_and_the_context_lines() {
        // `sample-logs/001-kaggle-t4-llama31-8b.log:105-108`: what llama.cpp printed.
        let loads = loads_of(&[
            COMMAND_004,
            COMMIT_009,
            "llama_new_context_with_model: n_ctx      = 8192",
            "llama_new_context_with_model: n_batch    = 512",
            "llama_new_context_with_model: n_ubatch   = 512",
            "llama_new_context_with_model: flash_attn = 0",
        ]);
        assert_eq!(loads.len(), 1);
        let s = &loads[0].settings;
        assert_eq!(s.ctx_size, Some(32768));
        assert_eq!(s.batch_size, Some(1024));
        assert_eq!(s.parallel, Some(1));
        assert_eq!(s.gpu_layers, Some(20));
        assert_eq!(s.flash_attention, Some(true));
        // Only the context lines give the micro-batch.
        assert_eq!(s.ubatch_size, Some(512));
    }

    #[test]
    fn the_command_line_outranks_the_context_lines() {
        // `sample-logs/511-…-2loads.log:176-180`: llama.cpp's context lines (`flash_attn = auto`).
        let loads = loads_of(&[
            COMMAND_004,
            "llama_context: n_ctx_seq             = 4096",
            "llama_context: n_batch               = 1024",
            "llama_context: n_ubatch              = 1024",
            "llama_context: flash_attn            = auto",
        ]);
        let s = &loads[0].settings;
        assert_eq!(s.ctx_size, Some(8192), "--ctx-size, not n_ctx_seq");
        assert_eq!(s.batch_size, Some(512), "--batch-size, not n_batch 1024");
        assert_eq!(s.parallel, Some(2));
        assert_eq!(s.ubatch_size, Some(1024));
        assert_eq!(s.flash_attention, None, "auto says nothing");
    }

    #[test]
    fn without_a_commit_the_last_request_counts() {
        // `sample-logs/032-journald-catalan-2x-quadro-newengine-fit.log:7` (journald prefix removed): a fit
        // request, cut by the collector after KvSize.
        let fit = r#"time=2025-12-03T11:10:07.729+01:00 level=INFO source=runner.go:1271 msg=load request="{Operation:fit LoraPath:[] Parallel:1 BatchSize:512 FlashAttention:true KvSize:4096 KvCacheType: NumThreads:8 GPULayers:37[ID:GPU-d5703024-26e4-303b-8104-7d33cce0eeb1 Layers:20(0..19) ID:"#;
        let loads = loads_of(&[fit]);
        assert_eq!(loads[0].settings.ctx_size, Some(4096));
        let loads = loads_of(&[fit, COMMIT_009]);
        assert_eq!(loads[0].settings.ctx_size, Some(32768));
    }

    #[test]
    fn the_context_from_kv_cells_counts_every_stream_and_never_the_sliding_window() {
        // `tests/data/oracle/b11549/logs/gemma3--np2-split.log:135–137` (`-c 4096 -np 2`, not unified): the
        // full cache is 2048 cells per stream, two streams.
        let loads = loads_of(&[
            "llama_kv_cache_iswa: creating non-SWA KV cache, size = 2048 cells",
            "llama_kv_cache:        CPU KV buffer size =     1.00 MiB",
            "llama_kv_cache: size =    1.00 MiB (  2048 cells,   1 layers,  2/2 seqs), K (f16):    0.50 MiB, V (f16):    0.50 MiB",
        ]);
        assert_eq!(loads[0].settings.ctx_size, Some(4096));
        // `tests/data/oracle/b11549/logs/gemma3--ub1024.log:140–142`: the window's cache alone says nothing
        // of the context.
        let loads = loads_of(&[
            "llama_kv_cache_iswa: creating     SWA KV cache, size = 1536 cells",
            "llama_kv_cache:        CPU KV buffer size =     1.88 MiB",
            "llama_kv_cache: size =    1.88 MiB (  1536 cells,   5 layers,  1/1 seqs), K (f16):    0.94 MiB, V (f16):    0.94 MiB",
        ]);
        assert_eq!(loads[0].settings.ctx_size, None);
    }

    /// `sample-logs/707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log:5–9` (`-c 65536`):
    /// the full cache then the sliding window's, neither announced (framed: the `I ` level tag removed).
    const CACHES_707: [&str; 5] = [
        "load_tensors:      Vulkan0 model buffer size =  2883.51 MiB",
        "llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB",
        "llama_kv_cache: size =  544.00 MiB ( 65536 cells,   4 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (q8_0):  272.00 MiB",
        "llama_kv_cache:    Vulkan0 KV buffer size =    21.25 MiB",
        "llama_kv_cache: size =   21.25 MiB (  1024 cells,  20 layers,  1/1 seqs), K (q8_0):   10.62 MiB, V (q8_0):   10.62 MiB",
    ];

    #[test]
    fn kv_cells_give_the_context_only_when_the_caches_start_in_the_log() {
        // From the model's buffers on: the full cache is printed first, the largest is the context.
        assert_eq!(loads_of(&CACHES_707)[0].settings.ctx_size, Some(65536));
        // From the sliding window's buffer on (or the first cache's size line): the start of the caches is
        // cut, and what is left may be the window's alone.
        assert_eq!(loads_of(&CACHES_707[3..])[0].settings.ctx_size, None);
        assert_eq!(loads_of(&CACHES_707[2..])[0].settings.ctx_size, None);
    }
}
