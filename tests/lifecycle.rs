//! The load lifecycle in every era, each as a class of logs, not one file: what starts a load and what does not,
//! what ends it in failure and what is recovered, which summary lines are actuals, which engine ran. The lines
//! are real shapes (the format strings of the emitting code, or lines from the corpus); the figures are made up
//! where a test needs them and say so.

use serde_json::Value;

use crate::util::run;

fn report(log: &str) -> Value {
    let out = run(&["--format", "json", "--fail-on", "never"], log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn codes(load: &Value) -> Vec<&str> {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect()
}

/// Ollama ≥ 0.12 starts model-less runners to discover GPUs (shape: `msg="starting runner"` as in corpus 012,
/// without `--model`); they print the device list and exit. Three of them and one load make one load.
#[test]
fn discovery_runners_are_not_loads() {
    let discovery = r#"time=2025-11-20T10:00:00.100Z level=INFO source=server.go:392 msg="starting runner" cmd="/usr/local/bin/ollama runner --ollama-engine --port 39511"
ggml_cuda_init: found 1 CUDA devices:
  Device 0: Tesla T4, compute capability 7.5, VMM: yes, ID: GPU-1e96f9a2-3b4c-5d6e-7f80-91a2b3c4d5e6
load_backend: loaded CUDA backend from /usr/local/lib/ollama/cuda_v12/libggml-cuda.so
"#;
    let load = r#"time=2025-11-20T10:00:05.000Z level=INFO source=server.go:392 msg="starting runner" cmd="/usr/local/bin/ollama runner --ollama-engine --model /root/.ollama/models/blobs/sha256-797b70c4edf85907fe0a49eb85811256f65fa0f7bf52166b147fd16be2be4662 --port 45233"
time=2025-11-20T10:00:05.010Z level=INFO source=server.go:757 msg="loading model" "model layers"=29 requested=-1
time=2025-11-20T10:00:05.500Z level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:512 FlashAttention:Enabled KvSize:4096 KvCacheType: NumThreads:4 GPULayers:29[ID:GPU-1e96f9a2-3b4c-5d6e-7f80-91a2b3c4d5e6 Layers:29(0..28)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}"
time=2025-11-20T10:00:05.600Z level=INFO source=ggml.go:494 msg="offloaded 29/29 layers to GPU"
time=2025-11-20T10:00:05.601Z level=INFO source=device.go:240 msg="model weights" device=CUDA0 size="1.9 GiB"
time=2025-11-20T10:00:05.602Z level=INFO source=server.go:1272 msg="llama runner started in 1.60 seconds"
"#;
    let log = format!("{discovery}{discovery}{discovery}{load}");
    let r = report(&log);
    let loads = r["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[0]["source"]["first_line"], 13);
    assert_eq!(loads[0]["engine"], "ollama");
    // The discovery runners' device list still names the load's GPU.
    assert_eq!(loads[0]["gpus"][0]["name"], "Tesla T4");
}

/// The Ollama engine's memory summary after a `commit` request is what it allocated, whether it is printed
/// before or after `offloaded N/M layers` (corpus 011 prints weights first).
#[test]
fn summary_lines_after_a_commit_request_are_actuals_in_either_order() {
    let commit = r#"time=2026-04-09T23:38:35.344-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType:q4_0 NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}""#;
    let weights = r#"time=2026-04-09T23:38:35.344-07:00 level=INFO source=device.go:240 msg="model weights" device=CUDA0 size="19.9 GiB""#;
    let offloaded = r#"time=2026-04-09T23:38:35.344-07:00 level=INFO source=ggml.go:494 msg="offloaded 20/49 layers to GPU""#;
    for log in [
        format!("{commit}\n{weights}\n{offloaded}\n"),
        format!("{commit}\n{offloaded}\n{weights}\n"),
    ] {
        let r = report(&log);
        let load = &r["loads"][0];
        assert!(
            load["estimate"].is_null(),
            "no estimate from actuals: {log}"
        );
        assert_eq!(load["actual"]["buffers"][0]["device"], "CUDA0");
        assert_eq!(load["actual"]["buffers"][0]["component"], "memory-summary");
    }
}

/// Every shape of a failed load: the load is `failed` with its reason and a `load-failed` finding.
#[test]
fn failures_of_every_kind_fail_the_load() {
    let start = r#"time=2025-06-14T09:12:00.000Z level=INFO source=server.go:438 msg="starting llama server" cmd="/usr/local/bin/ollama runner --model /root/.ollama/models/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --threads 8 --parallel 1 --port 40001"
load_tensors: offloaded 33/33 layers to GPU
load_tensors:        CUDA0 model buffer size =  4403.49 MiB
"#;
    let endings = [
        (r#"time=2025-06-14T09:12:03.118Z level=ERROR source=sched.go:489 msg="error loading llama server" error="llama runner process has terminated: exit status 127""#, "exit status 127"),
        ("Error: llama runner process has terminated: exit status 2", "exit status 2"),
        ("/build/ggml/src/ggml-cuda/ggml-cuda.cu:96: GGML_ASSERT(ggml_nbytes(src0) <= INT_MAX) failed", "GGML_ASSERT"),
        ("SIGSEGV: segmentation violation", "SIGSEGV"),
        (r#"time=2025-06-14T09:12:03.118Z level=ERROR source=server.go:464 msg="llama runner terminated" error="signal: killed""#, "signal: killed"),
        ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 7577.60 MiB on device 0: cudaMalloc failed: out of memory", "out of memory"),
    ];
    for (end, why) in endings {
        let r = report(&format!("{start}{end}\n"));
        let load = &r["loads"][0];
        assert_eq!(load["actual"]["failed"], true, "{end}");
        assert!(
            load["actual"]["failure"].as_str().unwrap().contains(why),
            "{end}"
        );
        assert!(codes(load).contains(&"load-failed"), "{end}");
    }
}

/// Pinned host memory that could not be allocated is replaced by an ordinary host buffer: not a failure.
#[test]
fn a_recovered_pinned_memory_allocation_is_not_a_failure() {
    let log = r#"time=2025-06-14T09:12:00.000Z level=INFO source=server.go:438 msg="starting llama server" cmd="/usr/local/bin/ollama runner --model /root/.ollama/models/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 8192 --port 40001"
load_tensors: offloaded 33/33 layers to GPU
load_tensors:        CUDA0 model buffer size =  4403.49 MiB
ggml_cuda_host_malloc: failed to allocate 2048.00 MiB of pinned memory: out of memory
llama_kv_cache:        CPU KV buffer size =  1024.00 MiB
time=2025-06-14T09:12:03.000Z level=INFO source=server.go:630 msg="llama runner started in 3.00 seconds"
"#;
    let r = report(log);
    let load = &r["loads"][0];
    assert_eq!(load["actual"]["failed"], false);
    assert!(!codes(load).contains(&"load-failed"));
    assert!(load["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("pinned memory")));
}

/// The engine whenever the log shows it.
#[test]
fn the_engine_is_known_from_any_sign() {
    let cases = [
        (r#"time=2025-03-01T10:00:00.000Z level=INFO source=server.go:438 msg="starting llama server" cmd="/usr/local/bin/ollama runner --model /m/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 2048 --port 1""#, "llama"),
        (r#"time=2025-03-01T10:00:00.000Z level=INFO source=server.go:438 msg="starting llama server" cmd="/usr/local/bin/ollama runner --ollama-engine --model /m/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 2048 --port 1""#, "ollama"),
        (r#"time=2024-06-06T11:17:05.137Z level=INFO source=server.go:341 msg="starting llama server" cmd="/tmp/ollama1403192506/runners/cuda_v11/ollama_llama_server --model /data/blobs/sha256-0bd51f8f0c975ce910ed067dcb962a9af05b77bafcdc595ef02178387f10e51d --ctx-size 2048 --port 39905""#, "llama"),
        ("llama_model_loader: loaded meta data with 29 key-value pairs and 291 tensors from /m (version GGUF V3 (latest))\nllama_kv_cache:      CUDA0 KV buffer size =  1024.00 MiB", "llama"),
    ];
    for (log, engine) in cases {
        let r = report(&format!("{log}\n"));
        assert_eq!(r["loads"][0]["engine"], engine, "{log}");
    }
}

/// A CPU-only estimate (`library=cpu`) has nothing to place on a GPU: the replay never puts layers on a
/// device named CPU.
#[test]
fn the_replay_never_places_layers_on_the_cpu() {
    let log = r#"time=2025-05-01T10:00:00.000Z level=INFO source=server.go:168 msg=offload library=cpu layers.requested=-1 layers.model=33 layers.offload=0 layers.split="" memory.available="[]" memory.gpu_overhead="0 B" memory.required.full="5.0 GiB" memory.required.partial="0 B" memory.required.kv="256.0 MiB" memory.required.allocations="[]" memory.weights.total="3.9 GiB" memory.weights.repeating="3.5 GiB" memory.weights.nonrepeating="411.0 MiB" memory.graph.full="164.0 MiB" memory.graph.partial="181.0 MiB"
"#;
    let r = report(log);
    let w = &r["loads"][0]["whatif"];
    let placed: Vec<&Value> = ["estimate", "measured"]
        .iter()
        .filter_map(|k| w.get(*k))
        .filter(|p| !p.is_null())
        .flat_map(|p| p["placement"]["gpus"].as_array().unwrap())
        .collect();
    assert!(placed.iter().all(|g| g["device"] != "CPU"), "{w}");
}

/// A breakdown table's truncated MiB against the buffers it stands for is a match (1530 vs 1530.62 MiB).
#[test]
fn a_truncated_table_figure_matches_its_buffers() {
    let log = "common_init_: fitting params to device memory ...
common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |
common_memory_breakdown_print: |   - CUDA0 (RTX 3090)   | 24575 = 23347 + ( 1530 =  1530 +       0 +       0) +         -302 |
common_params_fit_impl: will leave 21816 >= 1024 MiB of free device memory, no changes needed
load_tensors: offloaded 1/1 layers to GPU
load_tensors:        CUDA0 model buffer size =  1530.62 MiB
";
    let r = report(log);
    let load = &r["loads"][0];
    let cuda0 = load["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == "CUDA0")
        .unwrap();
    assert_eq!(cuda0["verdict"], "match", "{cuda0}");
    assert!(!codes(load).contains(&"underestimate"));
}
