//! llama.cpp on its own (`docs/log-formats.md` §5.7): how its lines are framed (level letters, a router's
//! children, grep's file prefixes), what its devices are (ROCm, SYCL, RPC, integrated GPUs, a device without
//! memory) and how its memory splits into components (the speculative draft, the recurrent state, weights on
//! the host by design).
//!
//! Where the corpus has the line it is copied with its source named; where it has none (RPC devices, SYCL's
//! table, `uma: 1`, router mode, ROCm with its VRAM, `did not report memory`) the line is built from §5.7's
//! shapes and says so.

use serde_json::Value;

use crate::util::{analyze, mib, root, run, stdout};
use vramdiff::model::{BufferKind, Component, Concluded, MIB};

fn sample(prefix: &str) -> std::path::PathBuf {
    let name = crate::util::sample_names()
        .into_iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no sample {prefix} in sample-logs/"));
    root().join("sample-logs").join(name)
}

fn json_of(log: &str) -> Value {
    let out = run(
        &["--format", "json", "--fail-on", "never", "-"],
        log.as_bytes(),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn loads(v: &Value) -> &Vec<Value> {
    v["loads"].as_array().unwrap()
}

/// `(device, kind, MiB rounded down)` of every buffer of a JSON load.
fn buffers(load: &Value) -> Vec<(String, String, i64)> {
    load["actual"]["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["device"].as_str().unwrap().to_string(),
                b["kind"].as_str().unwrap().to_string(),
                b["size"]["bytes"].as_i64().unwrap() / MIB,
            )
        })
        .collect()
}

fn notes(load: &Value) -> Vec<&str> {
    load["notes"]
        .as_array()
        .map(|n| n.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

// ---- framing ---------------------------------------------------------------------------------------------

#[test]
fn every_level_letter_and_elapsed_prefix_leaves_the_line_readable() {
    // corpus 707 (`sample-logs/707-…`) lines with each letter llama.cpp's logger prints, bare and after the
    // elapsed time, and LM Studio's `0.03.913.323 W ` (docs/log-formats.md §5.7).
    let v = json_of(
        "I load_tensors: offloaded 43/43 layers to GPU\n\
         W load_tensors:   CPU_Mapped model buffer size =  2208.00 MiB\n\
         E load_tensors:      Vulkan0 model buffer size =  2883.51 MiB\n\
         D llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB\n\
         0.00.078.516 I llama_kv_cache:    Vulkan0 KV buffer size =    21.25 MiB\n\
         0.03.913.323 W sched_reserve:    Vulkan0 compute buffer size =   186.30 MiB\n",
    );
    assert_eq!(loads(&v).len(), 1);
    let l = &loads(&v)[0];
    assert_eq!(
        buffers(l),
        [
            ("CPU".to_string(), "model".to_string(), 2208),
            ("Vulkan0".to_string(), "model".to_string(), 2883),
            ("Vulkan0".to_string(), "kv".to_string(), 544),
            ("Vulkan0".to_string(), "kv".to_string(), 21),
            ("Vulkan0".to_string(), "compute".to_string(), 186),
        ]
    );
    assert_eq!(l["actual"]["offloaded_layers"], 43);
    assert_eq!(v["inputs"][0]["unrecognized_memory_lines"], 0);
}

/// corpus 703's three files (`sample-logs/703-…`), as `grep 'buffer size' raw-log-ctx*.txt` prints them.
fn grep_703() -> String {
    let text = std::fs::read_to_string(sample("703")).unwrap();
    let mut out = String::new();
    let mut file = "";
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix('`')
            .and_then(|l| l.strip_suffix('`'))
            .filter(|n| !n.contains('`'))
        {
            file = name;
        } else if line.contains("buffer size") {
            out.push_str(&format!("{file}:{line}\n"));
        }
    }
    out
}

#[test]
fn each_file_of_a_grep_over_three_logs_is_a_load_of_its_own() {
    let grep = grep_703();
    assert!(
        grep.starts_with("raw-log-ctx2048.txt:load_tensors:"),
        "{grep}"
    );
    for a in [analyze(&[&sample("703")]), {
        let path = crate::util::scratch("grep-703").join("grep.txt");
        std::fs::write(&path, &grep).unwrap();
        analyze(&[&path])
    }] {
        assert_eq!(a.loads.len(), 3);
        // KV 540 → 1080 → 2160 MiB and compute 104 → 188 → 340 MiB, one load per context size; the same
        // 11160.99 MiB of weights on CUDA0 and 137.50 MiB on the host in each, never added across loads.
        let kv: Vec<i64> = a.loads.iter().map(|l| part(l, BufferKind::Kv)).collect();
        assert_eq!(kv, [mib(540.0), mib(1080.0), mib(2160.0)]);
        let compute: Vec<i64> = a
            .loads
            .iter()
            .map(|l| part(l, BufferKind::Compute) - host_part(l, BufferKind::Compute))
            .collect();
        assert_eq!(compute, [mib(104.27), mib(188.27), mib(340.27)]);
        for l in &a.loads {
            assert_eq!(
                part(l, BufferKind::Model),
                mib(11160.99) + mib(137.50),
                "{:?}",
                l.reconciled.load.source
            );
        }
    }
}

fn part(load: &Concluded, kind: BufferKind) -> i64 {
    load.reconciled
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.kind == kind)
        .map(|b| b.size.bytes)
        .sum()
}

fn host_part(load: &Concluded, kind: BufferKind) -> i64 {
    load.reconciled
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.kind == kind && b.host)
        .map(|b| b.size.bytes)
        .sum()
}

#[test]
fn a_routers_children_are_each_their_own_load_never_merged() {
    // Router mode (`--models-preset`) puts each child's pid before its lines (docs/log-formats.md §5.7; no
    // corpus log shows it): two children loading at once, their lines interleaved, the router's own lines
    // around them. The buffer lines are corpus 707's and 708's (`sample-logs/707-…`, `708-…`).
    let v = json_of(
        "srv   load_models: spawning server instance with name=gemma on port 8081\n\
         [34353] I load_tensors: offloaded 43/43 layers to GPU\n\
         [34353] I load_tensors:      Vulkan0 model buffer size =  2883.51 MiB\n\
         [34360] 0.00.412.001 I load_tensors: offloaded 65/65 layers to GPU\n\
         [34360] 0.00.412.002 I load_tensors:        CUDA0 model buffer size = 15345.00 MiB\n\
         [34353] I llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB\n\
         [34360] 0.00.500.000 I llama_kv_cache:        CUDA0 KV buffer size =  5206.00 MiB\n\
         [34353] I sched_reserve:    Vulkan0 compute buffer size =   186.30 MiB\n\
         srv   load_models: instance gemma ready\n",
    );
    let l = loads(&v);
    assert_eq!(l.len(), 2, "{v}");
    assert_eq!(
        buffers(&l[0]),
        [
            ("Vulkan0".to_string(), "model".to_string(), 2883),
            ("Vulkan0".to_string(), "kv".to_string(), 544),
            ("Vulkan0".to_string(), "compute".to_string(), 186),
        ]
    );
    assert_eq!(
        buffers(&l[1]),
        [
            ("CUDA0".to_string(), "model".to_string(), 15345),
            ("CUDA0".to_string(), "kv".to_string(), 5206),
        ]
    );
    assert_eq!(l[0]["actual"]["offloaded_layers"], 43);
    assert_eq!(l[1]["actual"]["offloaded_layers"], 65);
    assert!(notes(&l[0])
        .iter()
        .any(|n| n.contains("router's child process 34353")));
    assert!(notes(&l[1])
        .iter()
        .any(|n| n.contains("router's child process 34360")));
}

// ---- devices ---------------------------------------------------------------------------------------------

fn gpus(load: &Value) -> &Vec<Value> {
    load["gpus"].as_array().unwrap()
}

#[test]
fn rocm_and_sycl_rows_give_each_device_its_size_and_library() {
    // ROCm: corpus 004:23's row (no VRAM: an older build) and the newer row with the VRAM in MiB, its shape
    // from docs/log-formats.md §5.7 (name and size illustrative).
    let v = json_of(
        "ggml_cuda_init: found 1 ROCm devices:\n\
         \x20 Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, Wave Size: 32, VRAM: 24560 MiB\n\
         load_tensors: offloaded 33/33 layers to GPU\n\
         load_tensors:        ROCm0 model buffer size =  4403.49 MiB\n",
    );
    let g = &gpus(&loads(&v)[0])[0];
    assert_eq!(g["name"], "AMD Radeon RX 7900 XTX");
    assert_eq!(g["library"], "ROCm");
    assert_eq!(g["compute"], "gfx1100");
    assert_eq!(g["total"]["bytes"].as_i64(), Some(24560 * MIB));
    let v = json_of(
        "  Device 0: AMD Radeon 780M Graphics, gfx1103 (0x1103), VMM: no, Wave Size: 32\n\
         load_tensors:        ROCm0 model buffer size =  4403.49 MiB\n",
    );
    let g = &gpus(&loads(&v)[0])[0];
    assert_eq!(g["compute"], "gfx1103");
    assert!(g.get("total").is_none_or(Value::is_null), "{g}");
    // SYCL's device table (ggml-sycl's print_device_detail; no corpus log shows it: figures illustrative),
    // its global memory in millions of bytes; then corpus 715:1's SYCL buffer (`sample-logs/715-…`).
    let v = json_of(
        "|ID|        Device Type|                                   Name|Version|units  |group   |group|size   |       Driver version|\n\
         | 0| [level_zero:gpu:0]|                Intel Arc A770 Graphics|    1.6|    512|    1024|   32| 16225M|            1.3.29735|\n\
         | 1|     [opencl:cpu:0]|   Intel Core i7-12700K|    3.0|     20|    8192|   64| 67108M|2024.17.5.0.08_160000.xmain-hotfix|\n\
         0.05.209.581 I load_tensors:        SYCL0 model buffer size = 12867.08 MiB\n",
    );
    let g = gpus(&loads(&v)[0]);
    assert_eq!(g.len(), 1, "the CPU row is no GPU: {g:?}");
    assert_eq!(g[0]["library"], "SYCL");
    assert_eq!(g[0]["name"], "Intel Arc A770 Graphics");
    assert_eq!(g[0]["total"]["bytes"].as_i64(), Some(16_225_000_000));
}

#[test]
fn rpc_devices_are_devices_with_their_host() {
    // Built from docs/log-formats.md §5.7's shapes (no corpus log has an RPC device): the newer first
    // projection, an RPC buffer line, the fit's row and a breakdown row naming the device by index and host.
    let v = json_of(
        "common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3090) : 24135 total,      0 used,  23257 free vs. target of   1024\n\
         common_params_fit_impl:   - RPC0 (mlbox.local:50052) : 48396 total,      0 used,  47817 free vs. target of   1024\n\
         common_params_fit_impl:   - RPC0 (mlbox.local:50052): 20 layers,  30512 MiB used,  17304 MiB free\n\
         load_tensors: offloaded 65/65 layers to GPU\n\
         load_tensors:        CUDA0 model buffer size = 15345.00 MiB\n\
         load_tensors: RPC[10.0.2.242:50052] model buffer size =  9000.00 MiB\n\
         common_memory_breakdown_print: |   - RPC0 (mlbox.local:50052)   | 48396 = 17304 + (30512 = 29000 +    1000 +     512) +         580 |\n",
    );
    let l = &loads(&v)[0];
    let n = notes(l);
    assert!(
        n.iter().any(|n| n.starts_with(
            "RPC0 is a remote device (ggml RPC server mlbox.local:50052, line 2): its memory is that host's"
        )),
        "{n:?}"
    );
    assert!(n.iter().any(|n| n.starts_with(
        "RPC[10.0.2.242:50052] is a remote device (ggml RPC server 10.0.2.242:50052, line 6)"
    )));
    // The remote buffer is a device of its own, never the local GPU's.
    assert!(buffers(l).contains(&(
        "RPC[10.0.2.242:50052]".to_string(),
        "model".to_string(),
        9000
    )));
    let fit_free: Vec<&str> = l["estimate"]["fit"]["free"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["device"].as_str().unwrap())
        .collect();
    assert_eq!(fit_free, ["CUDA0", "RPC0"]);
}

#[test]
fn an_integrated_gpu_shares_the_hosts_memory_and_the_report_says_so() {
    // Vulkan's device line with `uma: 1` (docs/log-formats.md §5.7's shape; no corpus log shows an integrated
    // GPU under Vulkan: name illustrative), then corpus 707's buffers.
    let log = "ggml_vulkan: 0 = AMD Radeon 890M Graphics (RADV GFX1150) (radv) | uma: 1 | fp16: 1 | bf16: 0 | warp size: 64 | shared memory: 65536 | int dot: 1 | matrix cores: KHR_coopmat\n\
         I load_tensors: offloaded 43/43 layers to GPU\n\
         I load_tensors:      Vulkan0 model buffer size =  2883.51 MiB\n";
    let v = json_of(log);
    let l = &loads(&v)[0];
    assert_eq!(gpus(l)[0]["integrated"], true);
    assert!(notes(l).iter().any(|n| n.starts_with(
        "Vulkan0 (AMD Radeon 890M Graphics (RADV GFX1150)) is an integrated GPU (line 1): its memory is the host's RAM, one pool shared with the host, not VRAM"
    )));
    let text = stdout(&run(&["--fail-on", "never", "-"], log.as_bytes()));
    assert!(text.contains("is an integrated GPU"), "{text}");
    // A discrete card's line (`uma: 0`) is no integrated GPU.
    let v = json_of("ggml_vulkan: 0 = NVIDIA GeForce RTX 3090 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: KHR_coopmat\nI load_tensors:      Vulkan0 model buffer size =  2883.51 MiB\n");
    assert!(gpus(&loads(&v)[0])[0].get("integrated").is_none());
}

#[test]
fn a_device_without_memory_is_left_out_of_the_fit_and_said_so() {
    // docs/log-formats.md §5.7's wording (the device illustrative; no corpus log prints it).
    let v = json_of(
        "common_get_device_memory_data_impl: device RPC0 did not report memory; --fit will not use it\n\
         load_tensors: offloaded 33/33 layers to GPU\n\
         load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n",
    );
    let l = &loads(&v)[0];
    let rejected = &l["rejected_gpus"][0];
    assert_eq!(rejected["name"], "RPC0");
    assert_eq!(
        rejected["reason"],
        "did not report memory; --fit will not use it"
    );
    assert_eq!(rejected["line"], 1);
}

// ---- components ------------------------------------------------------------------------------------------

fn load_of(prefix: &str) -> Concluded {
    let mut a = analyze(&[&sample(prefix)]);
    assert_eq!(a.loads.len(), 1, "{prefix}");
    a.loads.remove(0)
}

fn component(load: &Concluded, c: Component) -> &vramdiff::model::ComponentRow {
    load.reconciled
        .components
        .iter()
        .find(|r| r.component == c)
        .unwrap_or_else(|| panic!("no {c:?} row"))
}

#[test]
fn the_mtp_draft_of_706_is_a_component_of_its_own_and_its_estimate_is_exact() {
    let load = load_of("706");
    // The draft: [spec] 162.02 MiB against its KV 32 + compute 130.02 (the re-reserve not counted twice).
    let draft = component(&load, Component::Draft);
    assert_eq!(draft.comparison.estimated.unwrap().bytes, mib(162.02));
    assert_eq!(draft.comparison.actual.unwrap().bytes, mib(32.0 + 130.02));
    assert_eq!(draft.comparison.verdict.as_str(), "match");
    assert!(draft.comparison.lines.contains(&4), "the [spec] line");
    // The main context's KV (512) and recurrent state (37.41 + 1758.09) and compute (174.45): no draft in them.
    let kv = component(&load, Component::Kv);
    assert_eq!(
        kv.comparison.actual.unwrap().bytes,
        mib(512.0 + 37.41 + 1758.09)
    );
    let graph = component(&load, Component::Graph);
    assert_eq!(graph.comparison.actual.unwrap().bytes, mib(174.45));
    // The JSON says it as a component word of its own.
    let v: Value = serde_json::from_slice(
        &run(
            &[
                "--format",
                "json",
                "--fail-on",
                "never",
                sample("706").to_str().unwrap(),
            ],
            b"",
        )
        .stdout,
    )
    .unwrap();
    let words: Vec<&str> = v["loads"][0]["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["component"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        ["weights_gpu", "weights_host", "kv", "graph", "draft"]
    );
}

fn max_ctx(args: &[&str]) -> Value {
    let mut all = vec!["whatif", "--max-ctx", "--format", "json"];
    all.extend_from_slice(args);
    let path = sample("706");
    all.push(path.to_str().unwrap());
    let v: Value = serde_json::from_slice(&run(&all, b"").stdout).unwrap();
    v["loads"][0]["whatif"].clone()
}

#[test]
fn the_recurrent_state_is_not_kv_in_the_replay_nor_in_max_ctx() {
    // 706: KV 512 + 32 MiB (no size line of their own) grow with the context; the recurrent state (1795.50 MiB
    // for 4 sequences) does not. The replay of what happened agrees with the fit: one layer short, not "66 of
    // 66 fit" as when the main KV was read as nothing and the state as fixed KV.
    let w = max_ctx(&[]);
    let measured = &w["measured"];
    let verdict = measured["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("needs 1 of 66 layers on the CPU"),
        "{verdict}"
    );
    let from: Vec<&str> = measured["figures"]["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        from.iter()
            .any(|f| f.contains("544.0 MiB grow with the context")),
        "{from:?}"
    );
    assert!(from.iter().any(
        |f| f.starts_with("recurrent state: RS buffers 1.75 GiB over 65 layers, for 4 slot(s)")
    ));
    let m = &w["max_ctx"];
    assert!(m["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a.as_str().unwrap().starts_with(
            "recurrent state (1.75 GiB measured for 4 slot(s), replayed for 4) held apart from the KV"
        )));
    let f16 = |w: &Value| {
        w["max_ctx"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kv_type"] == "f16")
            .unwrap()["num_ctx"]
            .as_i64()
            .unwrap()
    };
    // 4 slots: the state takes 1.75 GiB of a card the fit had 77 MiB too little of; the context must shrink
    // (`-np auto`: kv_unified, every slot sees the whole -c 8192).
    assert!(f16(&w) < 8192, "{}", f16(&w));
    // One slot: a quarter of the state, and the context it leaves room for grows far beyond the log's.
    let one = max_ctx(&["--parallel", "1"]);
    let verdict = one["measured"]["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("fits on 1 GPU"), "{verdict}");
    assert!(f16(&one) > 8192, "{}", f16(&one));
    // q8_0 halves the KV, not the f32 state: the context it allows grows by about the KV's share only.
    let rows = |w: &Value, t: &str| {
        w["max_ctx"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kv_type"] == t)
            .unwrap()["num_ctx"]
            .as_i64()
            .unwrap()
    };
    let (f16_one, q8_one) = (rows(&one, "f16"), rows(&one, "q8_0"));
    assert!(
        q8_one > f16_one && q8_one < 2 * f16_one,
        "{f16_one} {q8_one}"
    );
}

#[test]
fn host_weights_with_every_layer_offloaded_are_there_by_design_in_every_format() {
    // 707: 43/43 layers on Vulkan0, 2208 MiB of weights (Gemma 4's per-layer embeddings) in CPU_Mapped.
    let load = load_of("707");
    let host = component(&load, Component::WeightsHost);
    assert!(
        host.comparison.actual_from.contains(
            "every layer is on the GPU (43/43): these 2.16 GiB of weights stay on the host by design"
        ),
        "{}",
        host.comparison.actual_from
    );
    let codes: Vec<&str> = load.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(
        !codes.contains(&"partial-offload") && !codes.contains(&"cpu-offload-with-free-vram"),
        "{codes:?}"
    );
    let path = sample("707");
    for format in ["text", "markdown", "html", "json"] {
        let out = stdout(&run(
            &[
                "--format",
                format,
                "--fail-on",
                "never",
                path.to_str().unwrap(),
            ],
            b"",
        ));
        assert!(out.contains("on the host by design"), "{format}");
    }
    // 706 (65/66 layers): its host weights are a layer left on the CPU, not by design.
    let partial = load_of("706");
    assert!(!component(&partial, Component::WeightsHost)
        .comparison
        .actual_from
        .contains("by design"));
}
