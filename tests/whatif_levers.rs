//! `vramdiff whatif --ubatch/--ngl/--ctx/--kv-type` (issue 35, item 5) through the real binary: the levers the
//! suggestions name, with the same computed effect. The micro-batch's effect is checked against the suggestion
//! for the same value on sample-logs/1003-… (one Vulkan GPU, the compute allocation that failed) and on two GPUs
//! with their compute buffers (the lines of `sample-logs/founding-today-3090-4060-gemma4-31b.log`, lines 33–36,
//! 69 and 85–94 as tests/llama_cpp_alone.rs takes them, CUDA1's compute buffer raised so that compute-imbalance
//! suggests `-ub 256`; and the same lines unchanged). A lever that does not reach the runtime is refused.

use serde_json::Value;

use crate::util::{root, run, scratch, stderr, stdout};

const ALLOC_LIMIT: &str =
    "sample-logs/1003-llama-server-vulkan-strixhalo-uma-lmstudio-model-compute-4gib-alloc-limit.log";
const VULKAN_3090: &str =
    "sample-logs/706-llama-server-vulkan-rtx3090-qwen38-27b-mtp-fit-65of66.log";
const GEMMA_ISWA: &str =
    "sample-logs/707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log";
const OLLAMA_ESTIMATOR: &str = "sample-logs/001-kaggle-t4-llama31-8b.log";
const OLLAMA_FIT: &str = "sample-logs/founding-today-3090-4060-gemma4-31b.log";

/// llama.cpp alone on two GPUs: the fit's table and the buffer lines of the founding-today sample, CUDA1's
/// compute buffer at `cuda1_compute` MiB (1071.03 in the sample).
fn two_gpus(cuda1_compute: &str) -> String {
    let today = std::fs::read_to_string(root().join(OLLAMA_FIT)).unwrap();
    let table: Vec<&str> = today.lines().skip(32).take(4).collect();
    let log = format!(
        "common_init_result: fitting params to device memory, for bugs during this step try to reproduce them with -fit off, or provide --verbose logs if the bug only occurs with -fit on
{}
common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3090): 24575 total,  13178 used,  10168 free vs. target of   1024
common_params_fit_impl:   - CUDA1 (NVIDIA GeForce RTX 4060):  8187 total,   5712 used,   1352 free vs. target of   1024
common_params_fit_impl: targets for free memory can be met on all devices, no changes needed
load_tensors: offloaded 61/61 layers to GPU
load_tensors:        CUDA0 model buffer size = 11750.00 MiB
load_tensors:        CUDA1 model buffer size =  4352.00 MiB
llama_kv_cache:      CUDA0 KV buffer size =   816.00 MiB
llama_kv_cache:      CUDA1 KV buffer size =   289.00 MiB
sched_reserve:      CUDA0 compute buffer size =   612.03 MiB
sched_reserve:      CUDA1 compute buffer size = {cuda1_compute} MiB
",
        table.join("\n")
    );
    // A folder of its own per call: the tests run at once, and `scratch` empties its folder.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = scratch(&format!("whatif-levers-{n}")).join("two-gpus.log");
    std::fs::write(&path, log).unwrap();
    path.to_string_lossy().into_owned()
}

fn json_of(args: &[&str]) -> Value {
    let out = run(args, b"");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn path(log: &str) -> String {
    if log.starts_with('/') {
        log.to_string()
    } else {
        root().join(log).to_string_lossy().into_owned()
    }
}

/// The first load's `whatif` of `vramdiff whatif --format json ARGS LOG`.
fn whatif(log: &str, args: &[&str]) -> Value {
    let log = path(log);
    let mut all = vec!["whatif", "--format", "json"];
    all.extend_from_slice(args);
    all.push(&log);
    json_of(&all)["loads"][0]["whatif"].clone()
}

/// The effect of the report's suggestion `setting` for the first load.
fn suggestion(log: &str, setting: &str) -> String {
    let log = path(log);
    let report = json_of(&["--format", "json", "--fail-on", "never", &log]);
    report["loads"][0]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == setting)
        .unwrap_or_else(|| {
            panic!(
                "no suggestion {setting}: {}",
                report["loads"][0]["suggestions"]
            )
        })["effect"]
        .as_str()
        .unwrap()
        .to_string()
}

fn effects(w: &Value, figure: &str) -> Vec<Value> {
    w["effects"]
        .as_array()
        .unwrap_or_else(|| panic!("no effects: {w}"))
        .iter()
        .filter(|e| e["figure"] == figure)
        .cloned()
        .collect()
}

/// The text between `after` and the next `end` in `text`.
fn between<'a>(text: &'a str, after: &str, end: &str) -> &'a str {
    let start = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {text}"))
        + after.len();
    let rest = &text[start..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[test]
fn the_micro_batch_shrinks_the_failed_compute_buffer_as_the_suggestion_says() {
    // The suggestion: "… the 4.43 GiB buffer on Vulkan0 becomes about 2.22 GiB, under …".
    let effect = suggestion(ALLOC_LIMIT, "-ub 256");
    let suggested = between(&effect, "becomes about ", ",");
    assert_eq!(suggested, "2.22 GiB", "{effect}");
    let w = whatif(ALLOC_LIMIT, &["--ubatch", "256"]);
    assert_eq!(w["changes"], serde_json::json!(["ubatch 256"]));
    let failed = effects(&w, "failed-allocation");
    assert_eq!(failed.len(), 1, "{w}");
    let f = &failed[0];
    // 4,757,131,264 bytes (the failure line) × 256 / 512, the micro-batch llama.cpp's default: assumed.
    assert_eq!(f["before"], 4_757_131_264i64);
    assert_eq!(f["after"], 2_378_565_632i64);
    assert_eq!(f["device"], "Vulkan0");
    let text = f["text"].as_str().unwrap();
    assert_eq!(between(text, "→ about ", " "), "2.22", "{text}");
    assert!(text.contains("4.43 GiB → about 2.22 GiB"), "{text}");
    assert!(text.contains("512, llama.cpp's default (assumed"), "{text}");
    // The text report says the same.
    let log = path(ALLOC_LIMIT);
    let out = run(&["whatif", "--ubatch", "256", &log], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("changes: ubatch 256"), "{text}");
    assert!(
        text.contains(
            "the compute buffer the load failed to allocate on Vulkan0: 4.43 GiB → about 2.22 GiB"
        ),
        "{text}"
    );
}

#[test]
fn the_micro_batch_halves_each_gpus_compute_buffer_as_the_suggestion_says() {
    // CUDA1's buffer raised to 2071.03 MiB: compute-imbalance suggests -ub 256, "CUDA1's 2.02 GiB → about 1.01 GiB".
    let log = two_gpus("2071.03");
    // The two GPUs' lines name no launcher: both spellings.
    let effect = suggestion(
        &log,
        "-ub 256 (if Ollama ≥ 0.30 started llama-server: num_batch=256)",
    );
    let suggested = between(&effect, "CUDA1's ", ",");
    assert_eq!(suggested, "2.02 GiB → about 1.01 GiB", "{effect}");
    let w = whatif(&log, &["--ubatch", "256"]);
    let compute = effects(&w, "compute-buffer");
    assert_eq!(compute.len(), 2, "{w}");
    let cuda1 = compute.iter().find(|e| e["device"] == "CUDA1").unwrap();
    let text = cuda1["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("CUDA1's compute buffer: {suggested}")),
        "{text}"
    );
    // The replay runs with the halved buffers: the figure it charges the largest GPU is half the measured one
    // (the buffer line's nominal value; the effect takes its low end, as compute-imbalance does: 0.005 MiB apart).
    let graph = w["measured"]["figures"]["graph"].as_i64().unwrap();
    assert!(
        (graph - cuda1["after"].as_i64().unwrap()).abs() < 8 * 1024,
        "{w}"
    );
    assert!(w["measured"]["verdict"]
        .as_str()
        .unwrap()
        .starts_with("fits on 2 GPUs"));
    // The sample's own buffers (612.03 and 1071.03 MiB), both halved; the same with the micro-batch doubled.
    let log = two_gpus("1071.03");
    let w = whatif(&log, &["--ubatch", "1024"]);
    for e in effects(&w, "compute-buffer") {
        let (before, after) = (e["before"].as_i64().unwrap(), e["after"].as_i64().unwrap());
        assert_eq!(after, before * 2, "{e}");
    }
    let w = whatif(&log, &["--ubatch", "256"]);
    let text: Vec<String> = effects(&w, "compute-buffer")
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        text[0].starts_with("CUDA0's compute buffer: 612.0 MiB → about 306.0 MiB"),
        "{text:?}"
    );
    assert!(
        text[1].starts_with("CUDA1's compute buffer: 1.05 GiB → about 535.5 MiB"),
        "{text:?}"
    );
}

#[test]
fn hostile_micro_batches_are_refused_or_capped_never_a_panic() {
    let log = path(VULKAN_3090);
    let out = run(&["whatif", "--ubatch", "0", &log], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--ubatch"), "{}", stderr(&out));
    // 2^40: llama.cpp takes min(n_batch, n_ubatch), so the load's n_batch caps it.
    let w = whatif(VULKAN_3090, &["--ubatch", "1099511627776"]);
    let e = &effects(&w, "compute-buffer")[0];
    assert_eq!(e["after"], e["before"].as_i64().unwrap() * 4, "{e}");
    assert!(e["text"].as_str().unwrap().contains("capped at"), "{e}");
    let w = whatif(VULKAN_3090, &["--ngl", "1099511627776"]);
    assert_eq!(effects(&w, "layers")[0]["after"], 66);
}

#[test]
fn ngl_fixes_the_layers_and_says_whether_they_fit_in_free_memory() {
    let w = whatif(VULKAN_3090, &["--ngl", "40"]);
    assert_eq!(w["changes"], serde_json::json!(["ngl 40"]));
    let layers = &effects(&w, "layers")[0];
    assert_eq!(
        (layers["before"].as_i64(), layers["after"].as_i64()),
        (Some(65), Some(40))
    );
    assert_eq!(w["measured"]["placement"]["offloaded"], 40);
    let gpu = &effects(&w, "gpu-memory")[0];
    assert_eq!(gpu["device"], "Vulkan0");
    let (need, free) = (
        gpu["after"].as_i64().unwrap(),
        gpu["free"].as_i64().unwrap(),
    );
    assert!(need < free, "{gpu}");
    assert!(gpu["text"].as_str().unwrap().contains("fits,"), "{gpu}");
    let verdict = w["measured"]["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("40 of 66 layers on the GPUs fit in the free memory"),
        "{verdict}"
    );
    // Every layer at eight times the context: no fit moves a layer off, so the GPU is over its free memory.
    // 706 runs llama-server's `-np auto` (4 slots, `kv_unified = true`): every slot sees the whole -c 8192,
    // so a slot's context of 65536 is -c 65536.
    let w = whatif(VULKAN_3090, &["--ngl", "66", "--ctx", "65536"]);
    let gpu = &effects(&w, "gpu-memory")[0];
    let (need, free) = (
        gpu["after"].as_i64().unwrap(),
        gpu["free"].as_i64().unwrap(),
    );
    assert!(need > free, "{gpu}");
    assert!(gpu["text"].as_str().unwrap().contains("over by"), "{gpu}");
    assert!(w["measured"]["verdict"].as_str().unwrap().starts_with(
        "does not fit with the layers fixed (66 of 66 layers on the GPUs): Vulkan0 needs"
    ));
    // Two GPUs: the loader's split of the 30 top layers by free memory, each GPU judged.
    let w = whatif(&two_gpus("1071.03"), &["--ngl", "30"]);
    assert_eq!(effects(&w, "gpu-memory").len(), 2, "{w}");
    assert_eq!(w["measured"]["placement"]["offloaded"], 30);
}

#[test]
fn ngl_is_num_gpu_for_ollamas_estimator() {
    let w = whatif(OLLAMA_ESTIMATOR, &["--ngl", "20"]);
    assert_eq!(w["estimate"]["placement"]["offloaded"], 20);
    let layers = &effects(&w, "layers")[0];
    assert_eq!(
        (layers["before"].as_i64(), layers["after"].as_i64()),
        (Some(33), Some(20))
    );
    assert!(layers["text"]
        .as_str()
        .unwrap()
        .contains("by the estimator's rules"));
}

#[test]
fn ctx_and_kv_type_show_the_kv_cache_and_the_layers_for_llama_cpp() {
    // 707: 544 MiB of the KV grow with the context (65536 tokens), 21.2 MiB (the sliding window) do not.
    let w = whatif(GEMMA_ISWA, &["--ctx", "4096"]);
    let kv = &effects(&w, "kv-cache")[0];
    assert_eq!(kv["levers"], serde_json::json!(["ctx"]));
    let (before, after) = (
        kv["before"].as_i64().unwrap(),
        kv["after"].as_i64().unwrap(),
    );
    assert!(after < before / 8, "{kv}");
    assert!(
        kv["text"]
            .as_str()
            .unwrap()
            .contains("context per slot 65536 → 4096 (llama-server -c 65536 → 4096 with 1 slot)"),
        "{kv}"
    );
    assert_eq!(effects(&w, "layers")[0]["after"], 43);
    // A q4_0 cache on 706: the KV shrinks to 18/64, the recurrent state (f32) stays; the layer left on the
    // CPU comes back.
    let w = whatif(VULKAN_3090, &["--kv-type", "q4_0"]);
    let kv = &effects(&w, "kv-cache")[0];
    let text = kv["text"].as_str().unwrap();
    assert!(text.contains("2.28 GiB → 1.90 GiB"), "{text}");
    assert!(text.contains("f16 → q4_0"), "{text}");
    assert!(
        text.contains("recurrent state's 1.75 GiB included"),
        "{text}"
    );
    let layers = &effects(&w, "layers")[0];
    assert_eq!(
        (layers["before"].as_i64(), layers["after"].as_i64()),
        (Some(65), Some(66))
    );
    // A load that failed before its layers: the KV buffers alone, scaled (sample 1003: 6564 MiB at 70016).
    let w = whatif(ALLOC_LIMIT, &["--ctx", "35008"]);
    let kv = &effects(&w, "kv-cache")[0];
    assert_eq!(
        kv["after"].as_i64().unwrap(),
        kv["before"].as_i64().unwrap() / 2,
        "{kv}"
    );
}

#[test]
fn a_lever_that_does_not_reach_the_runtime_is_refused_with_one_line() {
    let log = path(OLLAMA_ESTIMATOR);
    let out = run(&["whatif", "--ubatch", "256", &log], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("whatif --ubatch"), "{err}");
    assert!(err.contains("Ollama's estimator"), "{err}");
    assert!(
        err.contains("Ollama's estimator passes no micro-batch (-ub) to its runner"),
        "{err}"
    );
    // Ollama ≥ 0.30 passes num_batch as -b and -ub (`-b 1024 -ub 1024` on the founding-today command line):
    // the micro-batch reaches llama-server there.
    let w = whatif(OLLAMA_FIT, &["--ubatch", "512"]);
    assert!(
        w["effects"].as_array().is_some_and(|e| !e.is_empty()),
        "{w}"
    );
    // vLLM shards every layer over its ranks: no -ngl.
    let log =
        path("sample-logs/801-vllm-065-h100-llama3-8b-tp1-tp2-profiling-results-multiline.log");
    let out = run(&["whatif", "--ngl", "20", &log], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("whatif --ngl"), "{}", stderr(&out));
    // Ollama ≥ 0.30 passes num_gpu as -ngl: accepted there.
    let w = whatif(OLLAMA_FIT, &["--ngl", "40"]);
    assert_eq!(w["measured"]["placement"]["offloaded"], 40);
}
