//! Ollama's projector gate, end to end (`docs/log-formats.md` §5.6 item 4): the fit margin Ollama ≥ 0.31.2 pads
//! by ⌈projector + 1 GiB⌉ for an offloaded projector and what that cost (`projector-headroom`, the chain's
//! projector step, `whatif.projector_padding`), and the rule that kept a projector on the CPU for lack of VRAM
//! (0.30's flat 10 GiB floor, or the projector + 1 GiB of 0.31 and later; `projector-on-cpu`).
//!
//! The corpus has no Ollama ≥ 0.31.2 load with its projector offloaded and its buffers printed, so the cost is
//! tested on a load built from the shapes of real lines: `server config` and `vram-based default context` of
//! `sample-logs/511-…`, `inference compute` of `docs/log-formats.md` §5.6 item 1, `using llama-server for model`,
//! `starting llama-server`, `gpu memory` and `loading model via llama-server` of `sample-logs/505-…` and
//! `sample-logs/511-…` (a `--mmproj` without `--no-mmproj-offload`), llama.cpp's inventory, `[mtmd]` estimate and
//! fit lines of `sample-logs/founding-today-chain-…` and §5.4 item 6 (`cannot meet free memory target of … MiB`
//! holds llama-server's own reserve for the projector on top of Ollama's target, as
//! `sample-logs/719-…`'s 3471 = 1024 + 2447 does), buffer and clip lines of the same. The figures are made up and
//! consistent: a 16 GB card, a 63-layer model of 260 MiB weights and 40 MiB KV per layer, an 850.96 MiB
//! projector, so Ollama's target is ⌈850.96 + 1024⌉ = 1875 MiB and the fit's 1875 + 850 = 2725 MiB. The real
//! vision loads of the corpus (`sample-logs/506-…`, `508-…`, `722-…`) are tested for what their excerpts hold.

use crate::util::{analyze, root, run, scratch, stdout};
use vramdiff::model::scheduler::{PaddingEvidence, ProjectorRuleKind, RuleEvidence};
use vramdiff::model::{FindingCode, Runtime, MIB};

/// The built load (see the module doc).
pub(crate) const PADDED: &str = r#"time=2026-08-20T09:00:00.100Z level=INFO source=routes.go:1951 msg="server config" env="map[CUDA_VISIBLE_DEVICES: GGML_VK_VISIBLE_DEVICES: LLAMA_ARG_FIT: LLAMA_ARG_FIT_TARGET: OLLAMA_CONTEXT_LENGTH:8192 OLLAMA_GPU_OVERHEAD:0 OLLAMA_KV_CACHE_TYPE: OLLAMA_NUM_PARALLEL:1 OLLAMA_SCHED_SPREAD:false]"
time=2026-08-20T09:00:00.200Z level=INFO source=routes.go:2008 msg="Listening on 127.0.0.1:11434 (version 0.32.4)"
time=2026-08-20T09:00:01.500Z level=INFO source=types.go:50 msg="inference compute" id=0 filter_id=0 library=CUDA compute=8.9 name=CUDA0 description="NVIDIA GeForce RTX 4060 Ti" libdirs=ollama,cuda_v13 driver=13.0 pci_id=0000:01:00.0 type=discrete total="16.0 GiB" available="15.1 GiB"
time=2026-08-20T09:00:01.501Z level=INFO source=routes.go:2058 msg="vram-based default context" total_vram="16.0 GiB" default_num_ctx=4096
time=2026-08-20T09:00:10.000Z level=INFO source=server.go:109 msg="using llama-server for model" model=/root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a
time=2026-08-20T09:00:10.010Z level=INFO source=llama_server.go:433 msg="starting llama-server" cmd="/usr/lib/ollama/llama-server --model /root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a --port 40117 --host 127.0.0.1 --no-webui --offline -c 8192 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj /root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a --flash-attn on -b 512 -ub 512"
time=2026-08-20T09:00:10.011Z level=INFO source=sched.go:613 msg="system memory" total="31.3 GiB" free="27.9 GiB" free_swap="8.0 GiB"
time=2026-08-20T09:00:10.011Z level=INFO source=sched.go:620 msg="gpu memory" id=0 library=CUDA available="14.7 GiB" free="15.1 GiB" minimum="457.0 MiB" overhead="0 B"
time=2026-08-20T09:00:10.012Z level=INFO source=llama_server.go:1048 msg="loading model via llama-server" model=/root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes, ID: GPU-7d2e9a41-3c6b-4f08-9e15-b2a4c8d61f73
cmn  common_param: device_info:
cmn  common_param:   - CUDA0   : NVIDIA GeForce RTX 4060 Ti (16379 MiB, 15500 MiB free)
cmn  common_param:   - CPU     : AMD Ryzen 7 7700 8-Core Processor (32053 MiB, 28562 MiB free)
srv    load_model: loading model '/root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a'
srv    load_model: [mtmd] estimated worst-case memory usage of mmproj is 850.96 MiB (took 22.40 ms)
cmn  common_init_: fitting params to device memory ...
common_params_fit_impl: getting device memory data for initial parameters:
common_params_fit_impl: projected to use 19484 MiB of device memory vs. 15500 MiB of free device memory
common_params_fit_impl: cannot meet free memory target of 2725 MiB, need to reduce device memory by 6709 MiB
common_params_fit_impl: context size set by user to 8192 -> no change
common_params_fit_impl: filling dense layers back-to-front:
common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 4060 Ti): 40 layers,  12560 MiB used,   2940 MiB free
common_fit_params: successfully fit params to free device memory
common_fit_params: fitting params to free memory took 1.84 seconds
load_tensors: loading model tensors, this can take a while... (load_mode = none)
load_tensors: offloading output layer to GPU
load_tensors: offloading 39 repeating layers to GPU
load_tensors: offloaded 40/63 layers to GPU
load_tensors:   CPU_Mapped model buffer size =  7340.00 MiB
load_tensors:        CUDA0 model buffer size = 10400.00 MiB
llama_context: n_ctx                 = 8192
llama_context: n_batch               = 512
llama_context: n_ubatch              = 512
llama_context: flash_attn            = enabled
llama_context:  CUDA_Host  output buffer size =     1.00 MiB
llama_kv_cache:      CUDA0 KV buffer size =  1560.00 MiB
llama_kv_cache:        CPU KV buffer size =   920.00 MiB
llama_kv_cache: size = 2480.00 MiB (  8192 cells,  62 layers,  1/1 seqs), K (f16): 1240.00 MiB, V (f16): 1240.00 MiB
sched_reserve:      CUDA0 compute buffer size =   600.00 MiB
sched_reserve:  CUDA_Host compute buffer size =    44.00 MiB
clip_model_loader: has vision encoder
clip_ctx: CLIP using CUDA0 backend
load_hparams: model size:         812.46 MiB
reserve_compute_meta:      CUDA0 compute buffer size =    38.50 MiB
srv    load_model: loaded multimodal model, '/root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a'
srv  llama_server: model loaded
time=2026-08-20T09:00:31.400Z level=INFO source=llama_server.go:1362 msg="llama-server started in 21.39 seconds"
"#;

fn write(tag: &str, text: &str) -> std::path::PathBuf {
    let path = scratch(tag).join("load.log");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_padding_that_cost_layers_is_found_with_the_replay_s_figures() {
    let path = write("projector-padding", PADDED);
    let a = analyze(&[&path]);
    let c = &a.loads[0];
    let load = &c.reconciled.load;
    assert_eq!(load.runtime, Runtime::OllamaFit);
    let gate = load.scheduler.as_ref().unwrap().projector.as_ref().unwrap();
    assert!(gate.offloaded);
    // ⌈850.96 + 1024⌉ MiB, known from the version (0.32.4).
    assert_eq!(gate.fit_target.unwrap().bytes, 1875 * MIB);
    assert_eq!(gate.padding, Some(PaddingEvidence::Version));
    let p = c
        .whatif
        .as_ref()
        .unwrap()
        .projector_padding
        .as_ref()
        .unwrap();
    // The fit's printed target, and the same without Ollama's 851 MiB.
    assert_eq!(
        (p.padded_target.bytes / MIB, p.plain_target.bytes / MIB),
        (2725, 1874)
    );
    assert_eq!(
        (p.layers_padded, p.layers_plain, p.total_layers),
        (40, 43, 63)
    );
    assert_eq!((p.gpus_padded, p.gpus_plain), (1, 1));
    assert_eq!(p.layers_lost(), 3);
    // Three layers of 260 MiB weights and 40 MiB KV.
    assert_eq!(p.moved.bytes, 900 * MIB);
    assert_eq!(p.agrees_with_log, Some(true));
    let f = c
        .findings
        .iter()
        .find(|f| f.code == FindingCode::ProjectorHeadroom)
        .expect("projector-headroom");
    assert_eq!(f.severity, vramdiff::model::Severity::Warning);
    for words in [
        "⌈the projector's 851.0 MiB + 1 GiB⌉",
        "Ollama 0.32.4 pads it",
        "--fit kept 2.66 GiB free per GPU where it would keep 1.83 GiB without the padding",
        "3 of 63 layers stay on the CPU (40 on the GPUs, 43 at the default margin",
        "reproduces the log's offloaded layers",
    ] {
        assert!(f.message.contains(words), "{words}: {}", f.message);
    }
    assert!(f
        .hint
        .starts_with("set LLAMA_ARG_FIT_TARGET=1024 in the server's environment"));
    // The knob reaches the placement in this era; the old estimator's never appears.
    let s = c
        .suggestions
        .iter()
        .find(|s| s.because.contains(&FindingCode::ProjectorHeadroom))
        .expect("a suggestion");
    assert_eq!(s.setting, "LLAMA_ARG_FIT_TARGET=1024");
    assert!(s
        .effect
        .contains("43 of 63 layers on the GPUs by the measured sizes (now 40)"));
    assert!(c
        .suggestions
        .iter()
        .all(|s| !s.setting.contains("OLLAMA_GPU_OVERHEAD")));
    // The chain shows the padding as projector + 1 GiB and its cost.
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(
        text.contains(
            "Ollama raised the --fit margin to ⌈projector + 1 GiB⌉ = 1875 MiB (1.83 GiB) per GPU"
        ),
        "{text}"
    );
    assert!(
        text.contains("the padding cost 3 layers by the fit replayed with the measured sizes (40 of 63 layers on 1 GPU at 2.66 GiB, 43 on 1 at 1.83 GiB)"),
        "{text}"
    );
    // JSON: the contract's addition.
    let json: serde_json::Value = serde_json::from_slice(
        &run(
            &[
                "--format",
                "json",
                "--fail-on",
                "never",
                path.to_str().unwrap(),
            ],
            b"",
        )
        .stdout,
    )
    .unwrap();
    let load = &json["loads"][0];
    assert_eq!(load["whatif"]["projector_padding"]["layers_plain"], 43);
    assert_eq!(load["whatif"]["projector_padding"]["evidence"], "version");
    assert_eq!(load["scheduler"]["projector"]["padding"], "version");
}

#[test]
fn padding_that_cost_nothing_is_a_fact_in_the_chain_not_a_finding() {
    // The same load on a 24 GB card: every layer fits at either margin, and the fit says so (§5.5 step 2).
    let fit_lines = "common_params_fit_impl: projected to use 19484 MiB of device memory vs. 15500 MiB of free device memory\ncommon_params_fit_impl: cannot meet free memory target of 2725 MiB, need to reduce device memory by 6709 MiB\ncommon_params_fit_impl: context size set by user to 8192 -> no change\ncommon_params_fit_impl: filling dense layers back-to-front:\ncommon_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 4060 Ti): 40 layers,  12560 MiB used,   2940 MiB free\n";
    assert!(PADDED.contains(fit_lines));
    let roomy = PADDED
        .replace(
            fit_lines,
            "common_params_fit_impl: projected to use 19460 MiB of device memory vs. 23716 MiB of free device memory\ncommon_params_fit_impl: will leave 4256 >= 2725 MiB of free device memory, no changes needed\n",
        )
        .replace("RTX 4060 Ti", "RTX 4090")
        .replace("(16379 MiB, 15500 MiB free)", "(24563 MiB, 23716 MiB free)")
        .replace(
            "offloaded 40/63 layers to GPU",
            "offloaded 63/63 layers to GPU",
        )
        .replace("CPU_Mapped model buffer size =  7340.00 MiB", "CPU_Mapped model buffer size =  1360.00 MiB")
        .replace("CUDA0 model buffer size = 10400.00 MiB", "CUDA0 model buffer size = 16380.00 MiB")
        .replace("CUDA0 KV buffer size =  1560.00 MiB", "CUDA0 KV buffer size =  2480.00 MiB")
        .replace("llama_kv_cache:        CPU KV buffer size =   920.00 MiB\n", "");
    let path = write("projector-padding-free", &roomy);
    let a = analyze(&[&path]);
    let c = &a.loads[0];
    let p = c
        .whatif
        .as_ref()
        .unwrap()
        .projector_padding
        .as_ref()
        .unwrap();
    assert!(p.cost_nothing(), "{p:?}");
    assert!(c
        .findings
        .iter()
        .all(|f| f.code != FindingCode::ProjectorHeadroom));
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(
        text.contains("the padding cost nothing: by the fit replayed with the measured sizes 63 of 63 layers are on the GPUs at either margin"),
        "{text}"
    );
}

#[test]
fn no_padding_before_0_31_2_nor_for_a_target_the_user_set() {
    // 0.31.1 does not pad: no target of Ollama's, nothing to cost.
    let older = PADDED.replace("(version 0.32.4)", "(version 0.31.1)");
    let a = analyze(&[&write("projector-padding-0311", &older)]);
    let gate = a.loads[0]
        .reconciled
        .load
        .scheduler
        .as_ref()
        .unwrap()
        .projector
        .clone()
        .unwrap();
    assert_eq!((gate.fit_target, gate.padding), (None, None));
    assert!(a.loads[0]
        .findings
        .iter()
        .all(|f| f.code != FindingCode::ProjectorHeadroom));
    // A target in the server's environment is the user's: Ollama does not pad it.
    let users = PADDED.replace("LLAMA_ARG_FIT_TARGET: ", "LLAMA_ARG_FIT_TARGET:2725 ");
    let a = analyze(&[&write("projector-padding-user", &users)]);
    let gate = a.loads[0]
        .reconciled
        .load
        .scheduler
        .as_ref()
        .unwrap()
        .projector
        .clone()
        .unwrap();
    assert!(gate.fit_target_set_by_user);
    assert_eq!(gate.padding, None);
    assert!(a.loads[0]
        .findings
        .iter()
        .all(|f| f.code != FindingCode::ProjectorHeadroom));
}

#[test]
fn a_real_vision_excerpt_shows_the_padding_without_a_cost_it_cannot_compute() {
    // `sample-logs/506-…`: Ollama's llama-server (its `waiting for llama-server` line), the `[mtmd]` estimate of
    // 1136.09 MiB, a pre-fit table on CUDA0, no version, no fit target, no buffers.
    let path =
        root().join("sample-logs/506-linux-cuda-3090-mmproj-mtp-prefit-breakdown-excerpt.log");
    let a = analyze(&[&path]);
    let c = &a.loads[0];
    assert_eq!(c.reconciled.load.runtime, Runtime::OllamaFit);
    let gate = c
        .reconciled
        .load
        .scheduler
        .as_ref()
        .unwrap()
        .projector
        .as_ref()
        .unwrap();
    assert!(gate.offloaded);
    assert_eq!(gate.fit_target.unwrap().bytes, 2161 * MIB);
    assert_eq!(gate.padding, Some(PaddingEvidence::Assumed));
    assert!(c
        .whatif
        .as_ref()
        .and_then(|w| w.projector_padding.as_ref())
        .is_none());
    assert!(c
        .findings
        .iter()
        .all(|f| f.code != FindingCode::ProjectorHeadroom));
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(
        text.contains("⌈projector + 1 GiB⌉ = 2161 MiB (2.11 GiB) per GPU, 1.11 GiB above llama.cpp's 1 GiB (if this Ollama is 0.31.2 or later: the log gives neither the version nor the fit's target); its cost in layers is not computed: the log has no buffers to replay the fit with"),
        "{text}"
    );
}

/// `sample-logs/722-…` (ollama#16496, Ollama 0.30.x by the issue; the wave-3 maintainer's reading): the
/// projector forced to the CPU with `reason=limited-vram` although 7.5 GiB was available, read from a
/// `gpu memory` line pasted without its slog framing and wrapped in two; the engine is llama.cpp's (Ollama's
/// llama-server path); the rule is 0.30's flat 10 GiB floor, which no knob of 0.30 reaches: upgrade to ≥ 0.31.
#[test]
fn the_0_30_floor_explains_722_and_the_advice_is_to_upgrade() {
    let path =
        root().join("sample-logs/722-ollama-030-rocm-w7500-rewrapped-key-lines-projector-cpu.log");
    let a = analyze(&[&path]);
    assert_eq!(a.loads.len(), 1);
    let c = &a.loads[0];
    let load = &c.reconciled.load;
    assert_eq!(load.engine.as_str(), "llama");
    assert_eq!(load.runtime, Runtime::OllamaFit);
    // The wrapped gpu-memory line, read whole.
    let gpu = &load.gpus[0];
    assert_eq!(gpu.library.as_deref(), Some("ROCm"));
    let gib = |x: f64| (x * vramdiff::model::GIB as f64).round() as i64;
    assert_eq!(
        (gpu.available.unwrap().bytes, gpu.free.unwrap().bytes),
        (gib(7.5), gib(7.9))
    );
    let rule = load
        .scheduler
        .as_ref()
        .unwrap()
        .projector
        .as_ref()
        .unwrap()
        .rule
        .clone()
        .unwrap();
    assert_eq!(rule.kind, ProjectorRuleKind::Floor10Gib);
    assert_eq!(rule.by, RuleEvidence::Figures);
    assert_eq!(rule.line, 5);
    let f = c
        .findings
        .iter()
        .find(|f| f.code == FindingCode::ProjectorOnCpu)
        .unwrap();
    assert_eq!(f.severity, vramdiff::model::Severity::Warning);
    for words in [
        "reason=limited-vram",
        "GPU 0 had 7.50 GiB available, 7.90 GiB free before the load (gpu memory, line 5)",
        "under the flat 10 GiB floor Ollama 0.30 required on every GPU for projector offload",
    ] {
        assert!(f.message.contains(words), "{words}: {}", f.message);
    }
    assert!(!f.message.contains("does not show"), "{}", f.message);
    assert!(f.hint.contains("no setting of Ollama 0.30 changes it"));
    assert!(f.hint.contains("upgrade to Ollama 0.31 or later"));
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(text.contains("engine llama"), "{text}");
    assert!(
        text.contains("Ollama 0.30's flat 10 GiB floor, GPU 0 had 7.50 GiB available"),
        "{text}"
    );
}

/// The rule by version, whatever the file: the same lines under 0.30.6 name the floor by the version, under
/// 0.31 the projector + 1 GiB (lines of `sample-logs/722-…` with a `Listening` line of §5.6's shape).
#[test]
fn the_projector_rule_follows_the_version() {
    let lines = "level=INFO source=llama_server.go:611 msg=\"disabling multimodal projector offload\" reason=limited-vram\nclip_ctx: CLIP using CPU backend\ngpu memory id=0 library=ROCm available=\"7.5 GiB\" free=\"7.9 GiB\" minimum=\"457.0 MiB\" overhead=\"0 B\"\n";
    for (version, kind) in [
        ("0.30.6", ProjectorRuleKind::Floor10Gib),
        ("0.31.0", ProjectorRuleKind::ProjectorPlus1Gib),
        ("0.33.2", ProjectorRuleKind::ProjectorPlus1Gib),
    ] {
        let log = format!("time=2026-06-04T10:00:00.000Z level=INFO source=routes.go:1951 msg=\"Listening on 127.0.0.1:11434 (version {version})\"\n{lines}");
        let a = analyze(&[&write(&format!("projector-rule-{version}"), &log)]);
        let rule = a.loads[0]
            .reconciled
            .load
            .scheduler
            .as_ref()
            .unwrap()
            .projector
            .clone()
            .unwrap()
            .rule
            .unwrap();
        assert_eq!(
            (rule.kind, rule.by),
            (kind, RuleEvidence::Version),
            "{version}"
        );
        let f = a.loads[0]
            .findings
            .iter()
            .find(|f| f.code == FindingCode::ProjectorOnCpu)
            .unwrap();
        match kind {
            ProjectorRuleKind::Floor10Gib => assert!(f.hint.contains("upgrade"), "{}", f.hint),
            ProjectorRuleKind::ProjectorPlus1Gib => {
                assert!(
                    f.message.contains("less than the projector + 1 GiB"),
                    "{}",
                    f.message
                );
                assert!(!f.hint.contains("upgrade"), "{}", f.hint);
            }
        }
    }
}

/// The eviction check and an integrated GPU as facts of the chain (`docs/log-formats.md` §5.6 items 1 and 3),
/// on the load above with an eviction line of §5.6's shape after `using llama-server for model`, and its GPU
/// marked `type=iGPU` as discovery marks an integrated one.
#[test]
fn eviction_and_an_integrated_gpu_are_told_in_the_chain() {
    let using = "msg=\"using llama-server for model\" model=/root/.ollama/models/blobs/sha256-5c3a9e0d7b1f4e2a8c6d0b9f3e7a1c5d9b2f6e0a4c8d2b6f0e4a8c2d6b0f4e8a\n";
    assert!(PADDED.contains(using));
    let evicting = PADDED.replace(
        using,
        &format!("{using}time=2026-08-20T09:00:10.005Z level=INFO source=sched.go:1066 msg=\"llama-server model predicted to exceed available memory, evicting\" predicted=\"18.9 GiB\" predicted_num_ctx=8192 num_batch=512 available=\"14.7 GiB\" gpu_free=\"15.1 GiB\" system_free=\"27.9 GiB\" system_limited=false\n"),
    );
    let path = write("chain-eviction", &evicting);
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(
        text.contains("eviction: the prediction exceeded the memory available (prediction 18.90 GiB against 14.70 GiB available): Ollama unloaded other models before this load"),
        "{text}"
    );
    let a = analyze(&[&path]);
    assert_eq!(
        a.loads.len(),
        1,
        "the eviction line belongs to the load it makes room for"
    );
    assert!(
        a.loads[0]
            .reconciled
            .load
            .scheduler
            .as_ref()
            .unwrap()
            .eviction
            .as_ref()
            .unwrap()
            .evicting
    );

    let igpu = PADDED.replace("type=discrete", "type=iGPU");
    let path = write("chain-igpu", &igpu);
    let a = analyze(&[&path]);
    let views = &a.loads[0].reconciled.gpu_views;
    assert!(views[0].integrated);
    // The row of all GPUs counts no iGPU memory as VRAM.
    let all = views.last().unwrap();
    assert!(all.device.is_none() && all.buffers.is_none(), "{all:?}");
    let text = stdout(&run(&["--fail-on", "never", path.to_str().unwrap()], b""));
    assert!(
        text.contains("integrated GPU: NVIDIA GeForce RTX 4060 Ti is integrated (type=iGPU): its free memory is the system's available memory"),
        "{text}"
    );
    assert!(
        text.contains("(iGPU: system memory, not in all GPUs)"),
        "{text}"
    );
}
