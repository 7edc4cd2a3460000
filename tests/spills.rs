//! Loads that spilled to host memory by Ollama's own estimate, through the real binary: `partial-offload` names
//! the estimate's figures, and the suggestions give the context (and KV cache type) with which the estimator
//! itself brings the layers back, the effect replayed — a fraction of the context when the log prints none, the
//! largest `num_ctx` when it does — and never `OLLAMA_GPU_OVERHEAD` (issue 35).

use serde_json::Value;

use crate::util::run;

const NO_CONTEXT: &str =
    "sample-logs/1026-windows-ollama-01111-quadro-rtx3000-estimate-0of41-kv-20gib.log";
const ONE_LAYER_SHORT: &str = "sample-logs/016-journald-cuda-projector-newengine-estimate.log";
const WEIGHTS_TOO_BIG: &str = "sample-logs/018-compose-cuda-deepseek671b-partial-estimate.log";

fn load_of(path: &str) -> Value {
    let out = run(&["--format", "json", "--fail-on", "never", path], b"");
    assert_eq!(out.status.code(), Some(0), "{}", crate::util::stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["loads"][0].clone()
}

fn partial_offload(load: &Value) -> String {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "partial-offload")
        .and_then(|f| f["message"].as_str())
        .expect("partial-offload")
        .to_string()
}

fn suggestions(load: &Value) -> Vec<(String, String)> {
    load["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["setting"].as_str().unwrap().to_string(),
                s["effect"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn no_overhead(load: &Value) {
    for (setting, _) in suggestions(load) {
        assert!(!setting.contains("OLLAMA_GPU_OVERHEAD"), "{setting}");
        assert!(!setting.starts_with("num_gpu"), "{setting}");
    }
}

#[test]
fn every_layer_on_the_host_for_a_20_gib_kv_cache_asks_for_a_sixteenth_of_the_context() {
    let load = load_of(NO_CONTEXT);
    let message = partial_offload(&load);
    // Line 3: `layers.offload=0`, `memory.available="[4.9 GiB]"`, `memory.required.full="33.0 GiB"`,
    // `memory.required.kv="20.0 GiB"`, `memory.graph.partial="8.9 GiB"`, weights 12.5 GiB + 525.0 MiB.
    for figure in [
        "all 41 layers",
        "33.00 GiB for the whole model",
        "a KV cache of 20.00 GiB",
        "a graph of 8.90 GiB",
        "4.90 GiB available on the GPU",
        "the graph alone is more than is available",
        "the weights alone, 13.01 GiB",
    ] {
        assert!(message.contains(figure), "{figure} in {message}");
    }
    let s = suggestions(&load);
    let (setting, effect) = &s[0];
    assert_eq!(
        setting,
        "num_ctx at 1/16 of this load's context (the log does not print it)"
    );
    // 20.0 GiB / 16 = 1.25 GiB; the graph 8.9 GiB / 16 = 569.6 MiB.
    assert!(
        effect.contains("the KV cache 20.00 GiB → about 1.25 GiB"),
        "{effect}"
    );
    assert!(effect.contains("8.90 GiB → about 569.6 MiB"), "{effect}");
    assert!(
        effect.contains("10 of 41 layers on the GPUs (now 0)"),
        "{effect}"
    );
    // The layers each fraction places, so the user sees the trade-off; more context, fewer layers.
    assert!(
        effect.contains("1/2: 0, 1/4: 4, 1/8: 7, 1/16: 10"),
        "{effect}"
    );
    assert!(effect.contains("OLLAMA_CONTEXT_LENGTH"), "{effect}");
    no_overhead(&load);
}

#[test]
fn one_layer_short_asks_for_the_largest_num_ctx_that_places_it() {
    let load = load_of(ONE_LAYER_SHORT);
    let message = partial_offload(&load);
    assert!(message.starts_with("1 of 49 layers"), "{message}");
    assert!(!message.contains("weights alone"), "{message}");
    let s = suggestions(&load);
    let (setting, effect) = s
        .iter()
        .find(|(s, _)| s.starts_with("num_ctx="))
        .expect("num_ctx");
    let n: i64 = setting["num_ctx=".len()..].parse().unwrap();
    // The log's context is 8192 (KV 992.0 MiB); the answer is smaller and a multiple of whatif's step.
    assert!(n < 8192 && n % 256 == 0, "{setting}");
    assert!(
        effect.contains("49 of 49 layers on the GPUs (now 48)"),
        "{effect}"
    );
    assert!(
        effect.contains(&format!("OLLAMA_CONTEXT_LENGTH={n} does the same")),
        "{effect}"
    );
    // With a q8_0 cache a larger context keeps every layer.
    let (_, q8) = s
        .iter()
        .find(|(s, _)| s == "OLLAMA_KV_CACHE_TYPE=q8_0")
        .expect("q8_0");
    assert!(q8.contains("needs flash attention"), "{q8}");
    assert!(q8.contains("49 of 49 layers"), "{q8}");
    no_overhead(&load);
}

#[test]
fn weights_larger_than_the_gpu_are_said_and_no_context_is_promised() {
    let load = load_of(WEIGHTS_TOO_BIG);
    let message = partial_offload(&load);
    assert!(message.contains("57 of 62 layers"), "{message}");
    assert!(
        message.contains("some layers stay on the host at any context"),
        "{message}"
    );
    no_overhead(&load);
}

/// Sample 008's KV lines (142–143: `CPU KV buffer size = 8000.00 MiB`, `Metal KV buffer size = 10000.00 MiB`) and
/// its layer count (115: `offloaded 20/37 layers to GPU`), as an excerpt of llama.cpp's own lines.
fn kv_lines(with_layers: bool) -> String {
    let text = std::fs::read_to_string(
        crate::util::root().join("sample-logs/008-macos-metal-m1pro-granite-8b-128k-partial.log"),
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[141].contains("CPU KV buffer size =  8000.00 MiB"));
    assert!(lines[142].contains("Metal KV buffer size = 10000.00 MiB"));
    let mut out = String::new();
    if with_layers {
        assert!(lines[114].contains("offloaded 20/37 layers to GPU"));
        out.push_str(lines[114]);
        out.push('\n');
    }
    for l in &lines[141..143] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn partial_offload_of(text: &str) -> Option<String> {
    let out = run(
        &["--format", "json", "--fail-on", "never", "-"],
        text.as_bytes(),
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["loads"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "partial-offload")
        .and_then(|f| f["message"].as_str())
        .map(str::to_string)
}

#[test]
fn a_kv_cache_split_between_host_and_gpu_buffers_is_a_partial_offload() {
    // The two lines alone name nobody who placed the layers (an `-ngl` or Ollama's scheduler may be outside the
    // paste): no finding, as the fragment property asks (`tests/fragments.rs`).
    assert_eq!(partial_offload_of(&kv_lines(false)), None);
    assert_eq!(partial_offload_of(&kv_lines(true)), None);
    // Run by the user's llama-server without -ngl: llama.cpp placed them.
    let by_llama = |with_layers| format!("$ llama-server -m model.gguf\n{}", kv_lines(with_layers));
    let m = partial_offload_of(&by_llama(false)).expect("partial-offload");
    assert!(m.starts_with("some layers are in host memory"), "{m}");
    assert!(
        m.contains("host buffers (7.81 GiB, 44 % of it) and the GPUs (9.77 GiB)"),
        "{m}"
    );
    let m = partial_offload_of(&by_llama(true)).expect("partial-offload");
    assert!(m.starts_with("17 of 37 layers are in host memory"), "{m}");
    // The user's own -ngl 20 placed exactly those layers: their choice, no finding.
    let chosen = format!("$ llama-server -m model.gguf -ngl 20\n{}", kv_lines(true));
    assert_eq!(partial_offload_of(&chosen), None);
}
