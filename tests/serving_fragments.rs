//! vLLM and SGLang as users paste them: the fragments `sample-logs/1032`, `1038`, `1039` and `1040` (a TP2
//! excerpt, the tail of a start, a TP8 excerpt that ends in a crash, a TP2 capture on MUSA; provenance in
//! `sample-logs/README.md`, the maintainer's reading in each `.expect.toml`). Each is a load of its engine,
//! every rank a device, every figure it printed carried, and the advice the maintainer gives, through the
//! library and through the real binary.

use crate::serving::{codes, gib, loads, serving};
use crate::util::{root, run, stdout};
use vramdiff::model::{Concluded, FindingCode, PartialReason, Runtime};

fn load(prefix: &str) -> Concluded {
    let mut loads = loads(prefix);
    assert_eq!(loads.len(), 1, "{prefix}: one load");
    loads.remove(0)
}

fn settings(l: &Concluded) -> Vec<&str> {
    l.suggestions.iter().map(|s| s.setting.as_str()).collect()
}

fn report(prefix: &str) -> String {
    let dir = root().join("sample-logs");
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .find(|n| n.starts_with(prefix) && n.ends_with(".log"))
        .unwrap();
    let out = run(&[&format!("sample-logs/{name}")], b"");
    assert!(out.status.success(), "{prefix}: exit {:?}", out.status);
    stdout(&out)
}

#[test]
fn the_1032_tp2_excerpt_is_two_vllm_ranks_whose_graph_estimates_differ() {
    let l = load("1032");
    assert_eq!(l.reconciled.load.runtime, Runtime::Vllm);
    let s = serving(&l);
    let ranks: Vec<(&str, String)> = s
        .ranks
        .iter()
        .map(|r| (r.rank.as_str(), r.device.to_string()))
        .collect();
    assert_eq!(
        ranks,
        [("TP0", "GPU0".to_string()), ("TP1", "GPU1".to_string())]
    );
    let (tp0, tp1) = (&s.ranks[0], &s.ranks[1]);
    assert_eq!(tp0.graph_estimate.unwrap().size.bytes, gib(4.38));
    assert_eq!(tp1.graph_estimate.unwrap().size.bytes, gib(4.30));
    assert_eq!(tp0.kv.unwrap().size.bytes, gib(25.46));
    assert!(tp1.kv.is_none(), "TP1's KV line is not in the excerpt");
    assert_eq!(tp0.utilization_without_graphs.unwrap().value, 0.8015);
    assert_eq!(tp1.utilization_keeping_kv.unwrap().value, 0.9967);
    // 4.38 − 4.30 is beyond the ±0.005 GiB each figure carries.
    let imbalance = l
        .findings
        .iter()
        .find(|f| f.code == FindingCode::RankImbalance)
        .expect("rank-imbalance");
    assert!(
        imbalance
            .message
            .starts_with("CUDA-graph estimate: rank TP0 has 4.38 GiB, rank TP1 has 4.30 GiB"),
        "{}",
        imbalance.message
    );
    assert!(!codes(&l).contains(&FindingCode::LoadFailed));
    // The maintainer: raise the utilization toward the printed 0.9985 (the rank that needs most), or opt out.
    assert_eq!(
        settings(&l),
        [
            "--gpu-memory-utilization 0.9985",
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"
        ]
    );
    let text = report("1032");
    assert!(text.lines().next().unwrap().ends_with("  vLLM"), "{text}");
    assert!(
        text.contains("  TP1   GPU1            –           4.30 GiB                      0.8033                  0.9967  2,4"),
        "{text}"
    );
}

#[test]
fn the_1038_tail_of_a_start_is_a_healthy_sglang_load() {
    let l = load("1038");
    assert_eq!(l.reconciled.load.runtime, Runtime::Sglang);
    let s = serving(&l);
    let r = &s.ranks[0];
    // `mem usage=1.44 GB. avail mem=37.06 GB.`: the order of builds from 2025 on.
    assert_eq!(r.graph_actual.unwrap().size.bytes, gib(1.44));
    assert_eq!(r.avail_after_graphs.unwrap().size.bytes, gib(37.06));
    assert_eq!(s.kv_tokens.unwrap().value, 2_261_377);
    assert_eq!(s.max_len.unwrap().value, 128_000);
    // Uvicorn's line ends the start: only the beginning is missing.
    assert_eq!(
        l.reconciled.load.source.partial_reasons,
        [PartialReason::StartsMidLoad]
    );
    let c = codes(&l);
    assert!(!c.contains(&FindingCode::LoadFailed) && !c.contains(&FindingCode::KvTooSmall));
    assert!(l.suggestions.is_empty(), "{:?}", settings(&l));
}

#[test]
fn the_1039_tp8_excerpt_crashes_in_the_capture_with_memory_free() {
    let l = load("1039");
    assert_eq!(l.reconciled.load.runtime, Runtime::Sglang);
    let s = serving(&l);
    let devices: Vec<String> = s.ranks.iter().map(|r| r.device.to_string()).collect();
    assert_eq!(
        devices,
        ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7"]
    );
    let tp7 = s.ranks.iter().find(|r| r.rank == "TP7").unwrap();
    assert_eq!(tp7.avail_after_weights.unwrap().size.bytes, gib(22.01));
    assert_eq!(tp7.avail_after_pool.unwrap().size.bytes, gib(18.66));
    let tp1 = s.ranks.iter().find(|r| r.rank == "TP1").unwrap();
    assert_eq!(tp1.avail_after_pool.unwrap().size.bytes, gib(18.61));
    assert!(s.ranks.iter().all(|r| r.capture_began.is_some()));
    // `[23:17:08 TP4] Exception in run_tp_server:`: TP4 crashed, not out of memory.
    let failed = l
        .findings
        .iter()
        .find(|f| f.code == FindingCode::LoadFailed)
        .expect("load-failed");
    assert!(
        failed.message.contains("rank TP4 crashed"),
        "{}",
        failed.message
    );
    assert!(
        failed.hint.starts_with("not a memory failure"),
        "{}",
        failed.hint
    );
    // No memory knob: only the capture skipped.
    assert_eq!(settings(&l), ["--disable-cuda-graph"]);
    assert!(l.suggestions[0]
        .effect
        .contains("rank TP4 crashed with 18.66 GiB still available"));
}

#[test]
fn the_1040_musa_capture_is_two_healthy_ranks() {
    let l = load("1040");
    assert_eq!(l.reconciled.load.runtime, Runtime::Sglang);
    let s = serving(&l);
    assert_eq!(s.ranks.len(), 2);
    let (tp0, tp1) = (&s.ranks[0], &s.ranks[1]);
    // `Capture cuda graph begin. … avail mem=11.64 GB`: what the capture started with.
    assert_eq!(tp0.avail_after_pool.unwrap().size.bytes, gib(11.64));
    assert_eq!(tp0.graph_actual.unwrap().size.bytes, gib(0.83));
    assert_eq!(tp0.avail_after_graphs.unwrap().size.bytes, gib(10.81));
    assert_eq!(tp1.graph_actual.unwrap().size.bytes, gib(0.83));
    assert_eq!(tp1.avail_after_graphs.unwrap().size.bytes, gib(10.88));
    // 11.64 − 10.81 = 0.83: the two lines agree.
    assert_eq!(
        tp0.avail_after_pool.unwrap().size.bytes - tp0.avail_after_graphs.unwrap().size.bytes,
        tp0.graph_actual.unwrap().size.bytes
    );
    assert!(!codes(&l).contains(&FindingCode::LoadFailed));
    let text = report("1040");
    assert!(text.lines().next().unwrap().ends_with("  SGLang"), "{text}");
}

/// Findings and suggestions of a fragment given on standard input, through the real binary.
fn json_of(lines: &[&str]) -> serde_json::Value {
    let input = lines.join("\n") + "\n";
    let out = run(&["--format", "json", "-"], input.as_bytes());
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

fn finding_codes(v: &serde_json::Value) -> Vec<String> {
    v["loads"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_hybrid_models_token_count_below_the_length_is_no_alarm_when_one_request_fits() {
    // `sample-logs/804-…:115-116`'s line shapes (Qwen3-Next, whose `GPU KV cache size` counts the attention
    // layers' tokens only) with a token count below the max length, as Kimi Linear prints: the engine's own
    // concurrency (≥ 1×) says one request of the max length fits.
    let fits = json_of(&[
        "(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 97,376 tokens",
        "(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1032] Maximum concurrency for 262,144 tokens per request: 1.47x",
    ]);
    assert!(
        !finding_codes(&fits).contains(&"kv-too-small".to_string()),
        "{fits}"
    );
    // Below 1×, the longest request that fits is the max length × the concurrency.
    let short = json_of(&[
        "(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 97,376 tokens",
        "(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1032] Maximum concurrency for 262,144 tokens per request: 0.50x",
    ]);
    assert!(
        finding_codes(&short).contains(&"kv-too-small".to_string()),
        "{short}"
    );
    let settings: Vec<&str> = short["loads"][0]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["setting"].as_str().unwrap())
        .collect();
    assert!(settings.contains(&"--max-model-len 131072"), "{settings:?}");
}

#[test]
fn vllms_newer_max_length_refusal_carries_its_figures_and_its_own_length() {
    // vLLM V1's wording (`grammars/35-vllm.toml`, rule `vllm.failure.max-len-over-kv-memory`).
    let v = json_of(&[
        "(EngineCore_DP0 pid=1) ERROR 05-03 17:54:32 [core.py:700] ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.31 GiB). Based on the available memory, the estimated maximum model length is 76208. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    ]);
    let load = &v["loads"][0];
    assert_eq!(load["era"], "vllm");
    let failure = &load["serving"]["failure"];
    assert_eq!(failure["cause"], "max-len-over-kv");
    assert_eq!(failure["len"], 131072);
    assert_eq!(failure["tokens"], 76208);
    assert_eq!(failure["needed"]["bytes"], gib(16.00));
    assert_eq!(load["serving"]["ranks"][0]["kv"]["bytes"], gib(9.31));
    let codes = finding_codes(&v);
    assert!(
        codes.contains(&"load-failed".to_string()) && codes.contains(&"kv-too-small".to_string())
    );
    let first = &load["suggestions"][0];
    assert_eq!(first["setting"], "--max-model-len 76208");
    assert!(load["actual"]["failure"]
        .as_str()
        .unwrap()
        .contains("needs 16.00 GiB of KV cache, more than the 9.31 GiB available"));
}

#[test]
fn torchs_process_list_is_foreign_memory_only_for_processes_that_are_not_this_one() {
    // torch's message (`grammars/37-torch.toml`, rule `torch.oom`; the shape from docs/log-formats.md §8,
    // figures illustrative) after a real vLLM V1 weights line shape (`sample-logs/805-…:2`).
    let oom = |processes: &str| {
        json_of(&[
            "(EngineCore_DP0 pid=1) INFO 05-03 17:54:30 [gpu_model_runner.py:2000] Model loading took 65.97 GiB and 12.8 seconds",
            &format!("(EngineCore_DP0 pid=1) ERROR 05-03 17:54:32 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.37 GiB is free. {processes}Of the allocated memory 58.10 GiB is allocated by PyTorch, and 1.46 GiB is reserved by PyTorch but unallocated."),
        ])
    };
    // In a container this process is listed under its host pid: the one entry holding at least PyTorch's own
    // 59.56 GiB is it, and nothing is another process's.
    let alone = oom("Process 2611 has 77.81 GiB memory in use. ");
    assert!(alone["loads"][0]["serving"]["failure"]["others"].is_null());
    assert!(!finding_codes(&alone).contains(&"foreign-memory".to_string()));
    // A second process of 17 GiB left less than the 0.9 budget: foreign memory, and the utilization beside it.
    let shared =
        oom("Process 2611 has 60.81 GiB memory in use. Process 3001 has 17.00 GiB memory in use. ");
    assert_eq!(
        shared["loads"][0]["serving"]["failure"]["others"]["bytes"],
        gib(17.00)
    );
    let f = shared["loads"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "foreign-memory")
        .expect("foreign-memory");
    assert!(f["hint"]
        .as_str()
        .unwrap()
        .contains("--gpu-memory-utilization 0.78"));
    // 7 GiB beside a 0.9 budget still fits: not the cause, no alarm.
    let small =
        oom("Process 2611 has 60.81 GiB memory in use. Process 3001 has 7.00 GiB memory in use. ");
    assert!(!finding_codes(&small).contains(&"foreign-memory".to_string()));
    // torch names this process when NVML's pid is its own: every `Process P` entry is another's.
    let named = oom("Process 3001 has 17.00 GiB memory in use. Including non-PyTorch memory, this process has 60.81 GiB memory in use. ");
    assert_eq!(
        named["loads"][0]["serving"]["failure"]["others"]["bytes"],
        gib(17.00)
    );
}

#[test]
fn a_gpu_page_fault_or_a_missing_compiler_is_not_memory_and_gets_no_memory_knob() {
    // ROCm's runtime message and Triton's (`grammars/40-llama-cpp.toml` `llama.gpu-memory-fault`,
    // `grammars/37-torch.toml` `torch.compiler-missing`; their format strings, no such line in the corpus),
    // between vLLM V1 line shapes (`sample-logs/805-…:2`, `:8`).
    for (failure, words) in [
        (
            "Memory access fault by GPU node-2 (Agent handle: 0x55d4b0a0c5b0) on address 0x7f3a8c000000. Reason: Page not present or supervisor privilege.",
            "Memory access fault by GPU node-2",
        ),
        (
            "(EngineCore_DP0 pid=1) ERROR 05-03 17:54:40 [core.py:708] RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
            "Failed to find C compiler",
        ),
    ] {
        let v = json_of(&[
            "(EngineCore_DP0 pid=1) INFO 05-03 17:54:30 [gpu_model_runner.py:2000] Model loading took 65.97 GiB and 12.8 seconds",
            failure,
            "(EngineCore_DP0 pid=1) ERROR 05-03 17:54:40 [core.py:708] EngineCore failed to start.",
        ]);
        let load = &v["loads"][0];
        assert_eq!(load["era"], "vllm");
        let f = load["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "load-failed")
            .expect("load-failed");
        // The line that says why, not `EngineCore failed to start`.
        assert!(f["message"].as_str().unwrap().contains(words), "{f}");
        assert!(
            f["hint"].as_str().unwrap().starts_with("not memory"),
            "{f}"
        );
        assert_eq!(load["suggestions"], serde_json::json!([]), "{failure}");
    }
}
