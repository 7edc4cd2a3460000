//! Failed loads through the real binary: the failure's cause read from every failure line, what failed with its
//! size and device, and the suggestions in the runtime's own knobs with their computed effect — none for a
//! failure that is not memory, and never an Ollama knob for llama.cpp on its own (issue 35).

use serde_json::Value;

use crate::util::{run, stdout};

const LIMIT_SAMPLE: &str =
    "sample-logs/1003-llama-server-vulkan-strixhalo-uma-lmstudio-model-compute-4gib-alloc-limit.log";

fn report_of(args: &[&str], stdin: &[u8]) -> Value {
    let mut all = vec!["--format", "json", "--fail-on", "never"];
    all.extend(args);
    let out = run(&all, stdin);
    assert_eq!(out.status.code(), Some(0), "{}", crate::util::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn settings(load: &Value) -> Vec<String> {
    load["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["setting"].as_str().unwrap().to_string())
        .collect()
}

fn effect<'a>(load: &'a Value, setting: &str) -> &'a str {
    load["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == setting)
        .and_then(|s| s["effect"].as_str())
        .unwrap_or_else(|| panic!("no {setting} in {:?}", settings(load)))
}

fn failed(load: &Value) -> &Value {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "load-failed")
        .expect("load-failed")
}

/// No knob of Ollama, and no GPU selection, in a llama.cpp load's suggestions: llama-server's flags, with
/// Ollama's spelling beside them only as the alternative when the launcher is unknown.
fn assert_llama_cpp_knobs_only(load: &Value) {
    for s in settings(load) {
        let flags = s
            .split(" (if Ollama ≥ 0.30 started llama-server: ")
            .next()
            .unwrap();
        assert!(
            !flags.contains("OLLAMA") && !flags.starts_with("num_") && !s.contains("CUDA_VISIBLE"),
            "{s}"
        );
    }
}

#[test]
fn a_compute_buffer_over_the_vulkan_allocation_limit_asks_for_a_smaller_micro_batch() {
    let r = report_of(&[LIMIT_SAMPLE], b"");
    let load = &r["loads"][0];
    // Only failure lines and two buffers: still llama.cpp on its own (common_init_from_params, main: error).
    assert_eq!(load["era"], "llama-server");
    assert_eq!(load["actual"]["failure_cause"], "allocation-limit");
    assert_eq!(load["actual"]["failed_allocation"]["device"], "Vulkan0");
    assert_eq!(
        load["actual"]["failed_allocation"]["size"]["bytes"],
        4_757_131_264i64
    );
    let f = failed(load);
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("a compute buffer of 4.43 GiB on Vulkan0"),
        "{message}"
    );
    assert!(message.contains("not a lack of memory"), "{message}");
    assert!(f["hint"].as_str().unwrap().contains("-ub"));
    // Ranked: the micro-batch first (4,757,131,264 × 256/512 = 2.22 GiB, under 4 GiB), then the context.
    let all = settings(load);
    assert_eq!(all[0], "-ub 256", "{all:?}");
    assert!(effect(load, "-ub 256").contains("about 2.22 GiB"));
    assert!(all.iter().any(|s| s.starts_with("--ctx-size ")), "{all:?}");
    assert_llama_cpp_knobs_only(load);
}

/// The KV cache's allocation failing on CUDA, as llama.cpp words it (`docs/log-formats.md` §6.3; the figure is
/// the doc's illustration), in a fragment with llama.cpp's own last words.
const KV_FAILURE: &str = "\
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 7577.60 MiB on device 0: cudaMalloc failed: out of memory
llama_init_from_model: failed to allocate buffer for kv cache
common_init_from_params: failed to create context with model 'models/qwen.gguf'
main: error: unable to load model
";

#[test]
fn a_kv_cache_that_does_not_fit_asks_for_a_quantised_cache_with_its_size() {
    let r = report_of(&["-"], KV_FAILURE.as_bytes());
    let load = &r["loads"][0];
    assert_eq!(load["era"], "llama-server");
    assert_eq!(load["actual"]["failure_cause"], "out-of-memory");
    assert_eq!(load["actual"]["failed_part"][0], "kv-cache");
    let message = failed(load)["message"].as_str().unwrap();
    assert!(
        message.contains("the KV cache of 7.40 GiB on GPU0"),
        "{message}"
    );
    // 7577.60 MiB × 34/64 (q8_0's 34 bytes per 32 elements) = 3.93 GiB.
    // Failure lines alone do not say who started llama-server: both spellings.
    let kv = effect(
        load,
        "--cache-type-k q8_0 --cache-type-v q8_0 (if Ollama ≥ 0.30 started llama-server: OLLAMA_KV_CACHE_TYPE=q8_0)",
    );
    assert!(kv.contains("7.40 GiB → about 3.93 GiB"), "{kv}");
    assert_llama_cpp_knobs_only(load);
}

#[test]
fn a_crash_after_every_buffer_was_allocated_gets_no_memory_knob() {
    // Real buffer lines (sample 703, a grep of Ollama 0.3's runner), then the runner's crash header.
    let log = "\
llm_load_tensors: offloaded 28/28 layers to GPU
sched_reserve:      CUDA0 compute buffer size =   104.27 MiB
sched_reserve:  CUDA_Host compute buffer size =    12.01 MiB
SIGSEGV: segmentation violation
";
    let r = report_of(&["-"], log.as_bytes());
    let load = &r["loads"][0];
    assert_eq!(load["actual"]["failure_cause"], "not-memory");
    let f = failed(load);
    assert!(f["hint"]
        .as_str()
        .unwrap()
        .contains("no memory setting helps"));
    assert!(settings(load).is_empty(), "{:?}", settings(load));
}

#[test]
fn the_text_report_names_the_cause_and_the_computed_micro_batch() {
    let out = run(&[LIMIT_SAMPLE, "--fail-on", "never"], b"");
    let text = stdout(&out);
    assert!(text.contains("-ub 256"), "{text}");
    assert!(text.contains("single-allocation limit"), "{text}");
}

const BACKOFF: &str = "tests/fixtures/012-rocm-layout-backoff-after-alloc-failure.log";

fn codes(load: &Value) -> Vec<String> {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn recovered_message(load: &Value) -> String {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "load-recovered")
        .and_then(|f| f["message"].as_str())
        .expect("load-recovered")
        .to_string()
}

#[test]
fn an_allocation_failure_ollama_backed_off_from_is_recovered_not_failed() {
    let r = report_of(&[BACKOFF], b"");
    let load = &r["loads"][0];
    assert!(
        !codes(load).contains(&"load-failed".to_string()),
        "{:?}",
        codes(load)
    );
    assert_eq!(load["actual"]["failed"], false);
    assert!(load["actual"].get("failure_cause").is_none());
    let recovered = &load["actual"]["recovered"][0];
    assert_eq!(recovered["failure_line"], 8);
    assert_eq!(recovered["recovery_line"], 10);
    assert_eq!(recovered["recovery"], "backoff 0.10");
    assert_eq!(recovered["cause"], "out-of-memory");
    // `allocating 61234.00 MiB on device 0`: the load's GPU at position 0 is ROCm0.
    assert_eq!(recovered["allocation"]["device"], "ROCm0");
    assert_eq!(
        recovered["allocation"]["size"]["bytes"],
        61234_i64 * 1024 * 1024
    );
    let message = recovered_message(load);
    assert!(message.contains("then backoff 0.10 (line 10)"), "{message}");
    assert!(message.contains("37 of 37 layers on the GPUs"), "{message}");
    // Information: it never fails a CI gate.
    let gate = run(&["--fail-on", "warning", BACKOFF], b"");
    assert_eq!(gate.status.code(), Some(0), "{}", stdout(&gate));
}

#[test]
fn a_backoff_excerpt_cut_before_the_runner_started_is_incomplete_not_failed() {
    let text = std::fs::read_to_string(crate::util::root().join(BACKOFF)).unwrap();
    let cut: String = text.lines().take(28).map(|l| format!("{l}\n")).collect();
    let r = report_of(&["-"], cut.as_bytes());
    let load = &r["loads"][0];
    let codes = codes(load);
    assert!(codes.contains(&"incomplete-load".to_string()), "{codes:?}");
    assert!(codes.contains(&"load-recovered".to_string()), "{codes:?}");
    assert!(!codes.contains(&"load-failed".to_string()), "{codes:?}");
}

#[test]
fn a_failure_after_the_backoff_is_the_load_s_failure() {
    let text = std::fs::read_to_string(crate::util::root().join(BACKOFF)).unwrap();
    let mut cut: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    // The backoff's smaller layout fails too (the same line shape as line 8).
    cut.push_str("Sep 11 00:42:49 ai ollama[3110]: ggml_backend_cuda_buffer_type_alloc_buffer: allocating 55110.00 MiB on device 0: cudaMalloc failed: out of memory\n");
    let r = report_of(&["-"], cut.as_bytes());
    let load = &r["loads"][0];
    let codes = codes(load);
    assert!(codes.contains(&"load-failed".to_string()), "{codes:?}");
    assert!(!codes.contains(&"load-recovered".to_string()), "{codes:?}");
    assert_eq!(load["actual"]["failure_cause"], "out-of-memory");
    assert_eq!(load["actual"]["recovered"][0]["failure_line"], 8);
}

const FIT_ABORTED: &str = "tests/fixtures/708-fit-aborted-ngl-set-by-user.log";

#[test]
fn a_fit_aborted_at_the_user_s_layers_suggests_letting_it_place_them_with_its_projection() {
    let r = report_of(&[FIT_ABORTED], b"");
    let load = &r["loads"][0];
    // `already set by user to 99`; the projection 21388 MiB against 23257 MiB free keeps the 1 GiB margin.
    let e = effect(
        load,
        "drop --n-gpu-layers 99 (if Ollama ≥ 0.30 started llama-server: unset num_gpu)",
    );
    assert!(e.contains("20.89 GiB against 22.71 GiB free"), "{e}");
    assert!(e.contains("1.82 GiB to spare: nothing moves now"), "{e}");
    // Nothing to shed: no fewer layers, no smaller context.
    assert_eq!(
        settings(load),
        vec![
            "drop --n-gpu-layers 99 (if Ollama ≥ 0.30 started llama-server: unset num_gpu)"
                .to_string()
        ]
    );
    assert_llama_cpp_knobs_only(load);
}

#[test]
fn a_fit_aborted_beyond_free_memory_gives_the_layers_and_the_context_that_keep_the_margin() {
    let text = std::fs::read_to_string(crate::util::root().join(FIT_ABORTED)).unwrap();
    // The same load projected 2600 MiB larger (a 65536-token context the user set, as a pasted command line),
    // and the model's layer count as llama.cpp prints it.
    let over = format!(
        "$ llama-server -m /home/fak/Downloads/Qwen3.6-27B-Q4_K_M.gguf -c 65536 -ngl 99\n{}print_info: n_layer               = 64\n",
        text.replace(
            "21388 = 15345 +    5206 +     836) +      -20486",
            "23988 = 15345 +    7806 +     836) +      -23086"
        )
        .replace("projected to use 21388 MiB", "projected to use 23988 MiB")
    );
    let r = report_of(&["-"], over.as_bytes());
    let load = &r["loads"][0];
    let fit = load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "fit-aborted")
        .unwrap();
    assert_eq!(fit["severity"], "error");
    // 23988 (+1, truncated) + 1024 − 23257 = 1756 MiB over the margin.
    let e = effect(load, "drop --n-gpu-layers 99");
    assert!(e.contains("moves about 1.71 GiB off the GPU"), "{e}");
    // 15345 MiB of weights over 65 layers (64 blocks and the output) = 236.1 MiB each: 8 layers cover 1756 MiB.
    let layers = effect(load, "--n-gpu-layers 57");
    assert!(layers.contains("8 layers fewer"), "{layers}");
    assert!(layers.contains("about 236.1 MiB each"), "{layers}");
    let context = effect(load, "--ctx-size 32768");
    assert!(
        context.contains("7.62 GiB, about 3.81 GiB smaller, enough"),
        "{context}"
    );
    assert_llama_cpp_knobs_only(load);
}

const KV_IN_HOST_MEMORY: &str = "tests/fixtures/501-win-kv-host-buffer-failed-before-retry.log";

#[test]
fn a_kv_cache_that_failed_in_host_memory_under_ollama_asks_for_a_smaller_num_ctx() {
    let r = report_of(&[KV_IN_HOST_MEMORY], b"");
    let load = &r["loads"][0];
    assert_eq!(load["era"], "llama-server");
    // The CPU buffer's failure (line 7) is the KV cache's, as line 8 says.
    assert_eq!(load["actual"]["failed_part"][0], "kv-cache");
    assert_eq!(load["actual"]["failed_allocation"]["device"], "CPU");
    assert_eq!(load["actual"]["failure_cause"], "out-of-memory");
    let f = failed(load);
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.starts_with("host memory ran out"), "{hint}");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("retried once (line 11)"));
    // The command's `--ctx-size 16384` with q8_0 already: only the context is left, with its effect.
    let e = effect(load, "num_ctx=8192");
    assert!(e.contains("4.00 GiB → about 2.00 GiB"), "{e}");
    for s in settings(load) {
        assert!(
            !s.contains("OLLAMA_GPU_OVERHEAD") && !s.contains("FIT_TARGET") && !s.contains("q8_0"),
            "{s}"
        );
        assert!(
            !s.starts_with('-'),
            "an Ollama load gets Ollama's knobs: {s}"
        );
    }
    // An f16 cache: the q8_0 cache comes first, in Ollama's spelling.
    let text = std::fs::read_to_string(crate::util::root().join(KV_IN_HOST_MEMORY)).unwrap();
    let f16 = text.replace("--cache-type-k q8_0 --cache-type-v q8_0 ", "");
    assert_ne!(f16, text);
    let r = report_of(&["-"], f16.as_bytes());
    let load = &r["loads"][0];
    let e = effect(load, "OLLAMA_KV_CACHE_TYPE=q8_0");
    assert!(e.contains("4.00 GiB → about 2.12 GiB"), "{e}");
    assert_eq!(settings(load)[0], "OLLAMA_KV_CACHE_TYPE=q8_0");
}

const DRAFT_FAILED: &str = "tests/fixtures/706-mtp-draft-context-failed.log";

#[test]
fn a_draft_context_that_fails_after_the_main_one_is_the_draft_s_and_dropping_it_is_suggested() {
    let r = report_of(&[DRAFT_FAILED], b"");
    let load = &r["loads"][0];
    assert_eq!(load["era"], "llama-server");
    // Line 52 (the allocation) names no part; after line 45's `creating MTP draft context` it is the draft's.
    assert_eq!(load["actual"]["failed_part"][0], "draft-context");
    assert_eq!(load["actual"]["failed_allocation"]["device"], "Vulkan0");
    assert_eq!(load["actual"]["failure_cause"], "out-of-memory");
    let f = failed(load);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("the speculative draft's context of 130.0 MiB on Vulkan0"),
        "{f}"
    );
    assert!(f["hint"]
        .as_str()
        .unwrap()
        .starts_with("the speculative draft's own context failed"));
    // The command's `--spec-type draft-mtp`, with the draft's estimate (line 4: 162.02 MiB) as the figure.
    let e = effect(load, "drop --spec-type draft-mtp");
    assert!(e.contains("estimated at 162.0 MiB (line 4)"), "{e}");
    assert_eq!(settings(load)[0], "drop --spec-type draft-mtp");
    assert_llama_cpp_knobs_only(load);
}

const PIPELINE_COMPUTE: &str = "tests/fixtures/founding-today-pipeline-copies-compute-failed.log";

#[test]
fn a_pipeline_parallel_compute_buffer_that_failed_asks_for_a_smaller_batch_naming_the_copies() {
    let r = report_of(&[PIPELINE_COMPUTE], b"");
    let load = &r["loads"][0];
    assert_eq!(load["settings"]["pipeline_copies"], 4);
    assert_eq!(load["actual"]["failed_part"][0], "compute");
    assert_eq!(load["actual"]["failed_allocation"]["device"], "CUDA0");
    // Ollama ≥ 0.30 started this llama-server: its knob is num_batch (n_ubatch 1024 on line 78).
    let e = effect(load, "num_batch=512");
    assert!(e.contains("1024 → 512"), "{e}");
    assert!(
        e.contains("2.39 GiB buffer on CUDA0 (4 pipeline copies of the graph"),
        "{e}"
    );
    assert!(e.contains("becomes about 1.20 GiB"), "{e}");
}
