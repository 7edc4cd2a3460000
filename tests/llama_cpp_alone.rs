//! llama.cpp on its own (`docs/log-formats.md` §5.7), on the standalone samples 7NN in sample-logs/: what a
//! maintainer tells each log's user (the figures, the phase of every table, the finding or the flag) holds.

use crate::util::{analyze, mib, root};
use vramdiff::model::{
    Component, Concluded, DryRunEvidence, FitDecision, TableEvidence, TablePhase, MIB,
};

fn sample(prefix: &str) -> std::path::PathBuf {
    let name = crate::util::sample_names()
        .into_iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no sample {prefix} in sample-logs/"));
    root().join("sample-logs").join(name)
}

fn load_of(prefix: &str) -> Concluded {
    let mut a = analyze(&[&sample(prefix)]);
    assert_eq!(a.loads.len(), 1, "{prefix}");
    a.loads.remove(0)
}

fn device_actual(load: &Concluded, device: &str) -> Option<i64> {
    load.reconciled
        .devices
        .iter()
        .find(|d| d.device.to_string() == device)
        .and_then(|d| d.comparison.actual)
        .map(|q| q.bytes)
}

fn device_estimate(load: &Concluded, device: &str) -> Option<i64> {
    load.reconciled
        .devices
        .iter()
        .find(|d| d.device.to_string() == device)
        .and_then(|d| d.comparison.estimated)
        .map(|q| q.bytes)
}

#[test]
fn the_fit_dry_run_of_709_is_a_plan_and_no_memory_in_use() {
    let load = load_of("709");
    let l = &load.reconciled.load;
    // The context from the KV line's cells (131072), q8_0 from its types.
    assert_eq!(l.settings.ctx_size, Some(131072));
    assert_eq!(l.settings.kv_cache_type.as_deref(), Some("q8_0"));
    // Everything here is the fit's no-alloc dry run: no actual buffer, no actual table.
    assert!(l.actual.buffers.is_empty(), "{:?}", l.actual.buffers);
    assert!(l.actual.breakdown.is_empty());
    assert_eq!(device_actual(&load, "MTL0"), None);
    // The evidence: the 0.00 MiB KV buffer (line 8) among the buffer lines, the fit following them.
    let dry = l
        .lifecycle
        .dry_run_buffers
        .as_ref()
        .expect("dry-run buffers");
    assert!(dry.lines.contains(&8), "{:?}", dry.lines);
    assert!(dry.evidence.contains(&DryRunEvidence::ZeroSizeBuffer));
    assert!(dry.evidence.contains(&DryRunEvidence::FitFollows));
    // The table (negative unaccounted) is the plan, since the fit needed no change.
    let t = &l.lifecycle.tables[0];
    assert_eq!(
        (t.line, t.phase, t.evidence),
        (25, TablePhase::Plan, TableEvidence::NegativeUnaccounted)
    );
    let e = l.estimate.as_ref().unwrap();
    let fit = e.fit.as_ref().unwrap();
    assert_eq!(fit.outcome, FitDecision::NoChange);
    // MTL0 8323 = 5294 weights + 2527 context + 501 compute against 16031 MiB free (7708 left).
    let mtl0 = &e.per_device[0];
    assert_eq!(mtl0.total.unwrap().low, 8323 * MIB);
    assert_eq!(mtl0.weights.unwrap().low, 5294 * MIB);
    assert_eq!(mtl0.kv.unwrap().low, 2527 * MIB);
    assert_eq!(mtl0.graph.unwrap().low, 501 * MIB);
    assert_eq!(fit.free[0].free.low, 16031 * MIB);
    assert_eq!(device_estimate(&load, "MTL0"), Some(8323 * MIB));
    // The host row: 545 weights + 544 compute (two 272.29 MiB CPU compute buffers).
    let host = e.per_device.iter().find(|d| d.device.is_host()).unwrap();
    assert_eq!(host.weights.unwrap().low, 545 * MIB);
    assert_eq!(host.graph.unwrap().low, 544 * MIB);
}

#[test]
fn the_lone_exit_table_of_717_is_an_actual() {
    let load = load_of("717");
    let l = &load.reconciled.load;
    // No fit around it, unaccounted positive, columns adding up: the exit table, an actual.
    let t = &l.lifecycle.tables[0];
    assert_eq!(
        (t.line, t.phase, t.evidence),
        (6, TablePhase::Exit, TableEvidence::AddsUpAlone)
    );
    assert!(l.estimate.is_none(), "not a fit projection");
    assert_eq!(l.actual.breakdown.len(), 5);
    // Real use: 1916 + 1738 + 1198 + 2205 = 7057 MiB on the GPU, 364 MiB on the host.
    let selfs: Vec<i64> = ["MTL0", "MTL1", "MTL2", "MTL3"]
        .iter()
        .map(|d| device_actual(&load, d).unwrap() / MIB)
        .collect();
    assert_eq!(selfs, [1916, 1738, 1198, 2205]);
    assert_eq!(device_actual(&load, "CPU").map(|b| b / MIB), Some(364));
    let kv = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::Kv)
        .and_then(|c| c.actual)
        .unwrap();
    assert_eq!(kv.low, mib(1024.0 + 896.0 + 896.0 + 768.0));
}

fn codes(load: &Concluded) -> Vec<&str> {
    load.findings.iter().map(|f| f.code.as_str()).collect()
}

fn suggestion<'a>(load: &'a Concluded, setting: &str) -> &'a vramdiff::model::Suggestion {
    load.suggestions
        .iter()
        .find(|s| s.setting == setting)
        .unwrap_or_else(|| panic!("no suggestion {setting}: {:?}", load.suggestions))
}

#[test]
fn the_four_metal_devices_of_717_are_one_pool_never_added_up() {
    let load = load_of("717");
    let l = &load.reconciled.load;
    let pool: Vec<String> = l.shared_pools[0].iter().map(|d| d.to_string()).collect();
    assert_eq!(pool, ["MTL0", "MTL1", "MTL2", "MTL3"]);
    assert!(l.notes.iter().any(|n| n.contains("one memory pool")));
    // Metal's total is its recommended working set (sample 709's 16384 MiB on a 24 GB Mac).
    let m = load_of("709");
    assert!(m
        .reconciled
        .load
        .notes
        .iter()
        .any(|n| n.contains("MTL0's total (16.00 GiB) is Metal's recommended working set")));
}

#[test]
fn the_mtp_run_of_706_is_short_by_77_mib_of_what_the_fit_saw_and_np_1_is_the_lever() {
    let load = load_of("706");
    let l = &load.reconciled.load;
    // n_parallel went to auto = 4; the context is the user's 8192.
    assert_eq!(l.settings.parallel, Some(4));
    assert_eq!(l.settings.parallel_auto, Some(true));
    assert_eq!(l.settings.ctx_size, Some(8192));
    let e = l.estimate.as_ref().unwrap();
    let fit = e.fit.as_ref().unwrap();
    // The target 1186 = 1024 + the 162.02 MiB [spec] MTP estimate; the fit was 77 MiB short.
    assert_eq!(fit.target.unwrap().low, 1186 * MIB);
    assert_eq!(fit.reduce_by.unwrap().low, 77 * MIB);
    assert_eq!(e.draft_total.unwrap().bytes, mib(162.02));
    // The free memory the fit saw (21728 MiB), not the loader's later reading (23525 MiB).
    assert_eq!(fit.free[0].free.low, 21728 * MIB);
    assert_eq!(fit.free[0].device.to_string(), "Vulkan0");
    assert_eq!(l.gpus[0].free.unwrap().low, 23525 * MIB);
    assert_eq!(fit.projected.unwrap().low, 20619 * MIB);
    // Main context 17913.46 + 512 + 1758.09 + 174.45 = 20358 (the fit line) plus the draft's 32 + 130.02 = 162.02,
    // exactly its estimate: the estimate is exact, and the draft's compute never replaces the main one's.
    assert_eq!(
        device_estimate(&load, "Vulkan0"),
        Some(20358 * MIB + mib(162.02))
    );
    let actual = device_actual(&load, "Vulkan0").unwrap();
    assert_eq!(
        actual,
        mib(17913.46 + 512.0 + 1758.09 + 174.45 + 32.0 + 130.02)
    );
    let compute: Vec<(String, i64)> = l
        .actual
        .buffers
        .iter()
        .filter(|b| b.kind == vramdiff::model::BufferKind::Compute && !b.host)
        .map(|b| (b.component.clone(), b.size.bytes))
        .collect();
    assert_eq!(
        compute,
        [
            ("sched_reserve".to_string(), mib(174.45)),
            ("draft".to_string(), mib(130.02))
        ]
    );
    // The re-reserved 130.02 MiB is the same draft buffer, not a second allocation.
    let draft = l
        .actual
        .buffers
        .iter()
        .find(|b| {
            b.component == "draft" && b.kind == vramdiff::model::BufferKind::Compute && !b.host
        })
        .unwrap();
    assert_eq!(draft.superseded.len(), 1);
    // Partial offload (65/66), not "66 of 66 fit": the fit's own dry run with every layer missed its target.
    // The load is complete: the server serves a task on it (line 67).
    assert_eq!(codes(&load), ["partial-offload", "host-not-vram"]);
    // The levers, in llama.cpp's own flags: -np 1 frees about 3/4 of the 1758.09 MiB recurrent state on the GPU.
    let np = suggestion(&load, "-np 1");
    assert!(np.effect.contains("1.29 GiB"), "{}", np.effect);
    assert!(np.effect.contains("n_parallel went to auto"));
    let target = suggestion(&load, "--fit-target 900");
    assert!(
        target.effect.contains("162.0 MiB draft estimate"),
        "{}",
        target.effect
    );
    // Quantising the KV does not shrink the f32 recurrent state.
    let kv = suggestion(&load, "--cache-type-k q8_0 --cache-type-v q8_0");
    assert!(
        kv.effect.contains("recurrent state stays f32"),
        "{}",
        kv.effect
    );
    assert!(load
        .suggestions
        .iter()
        .all(|s| !s.setting.contains("OLLAMA") && !s.setting.contains("num_gpu")));
}

#[test]
fn the_command_line_above_706_gives_its_batch_and_starts_the_load() {
    // 706:1 is the wrapper's `argv: llama-server … --batch-size 2048 …`: the user's own command, so the load
    // starts there (not "in the middle"), takes -b 2048, and is still llama.cpp on its own, not Ollama's.
    let load = load_of("706");
    let l = &load.reconciled.load;
    assert_eq!(l.settings.batch_size, Some(2048));
    assert_eq!(l.settings.ubatch_size, Some(512));
    assert_eq!(l.runtime, vramdiff::model::Runtime::LlamaCpp);
    assert_eq!(l.source.first_line, 1);
    assert_eq!(
        l.model.path.as_deref(),
        Some("<drive>/models/chat/qwen3.8-27b-ud-q5km.gguf")
    );
    // n_parallel was left to auto: the command has no -np, so it stays "auto = 4".
    assert_eq!(l.settings.parallel_auto, Some(true));
}

#[test]
fn a_command_line_without_a_model_is_no_load_and_each_run_is_its_own() {
    // Two runs pasted one after the other, each under its command (the framing of 706's lines), with a
    // `--help` between them: two loads, each with its own context; the help is none.
    let run = |ctx: &str| {
        format!(
            "$ ./build/bin/llama-server -m /models/qwen.gguf -c {ctx} -ngl 99 -np 1\n\
             0.00.165.102 I srv  llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true\n\
             0.01.561.990 I load_tensors:      Vulkan0 model buffer size = 17913.46 MiB\n"
        )
    };
    let log = format!("{}$ llama-server --help\n{}", run("8192"), run("32768"));
    let loads = loads_of_text("command-lines", &log);
    let ctx: Vec<Option<i64>> = loads
        .iter()
        .map(|c| c.reconciled.load.settings.ctx_size)
        .collect();
    assert_eq!(ctx, [Some(8192), Some(32768)]);
    for c in &loads {
        let s = &c.reconciled.load.settings;
        assert_eq!(
            (s.gpu_layers, s.parallel, s.parallel_auto),
            (Some(99), Some(1), None)
        );
        assert_eq!(
            c.reconciled.load.runtime,
            vramdiff::model::Runtime::LlamaCpp
        );
    }
}

#[test]
fn the_fit_of_708_needs_no_change_and_the_card_has_its_size_and_library() {
    let load = load_of("708");
    let l = &load.reconciled.load;
    let gpu = &l.gpus[0];
    assert_eq!(gpu.total.unwrap().low, 24159 * MIB);
    assert_eq!(gpu.library.as_deref(), Some("CUDA"));
    assert_eq!(l.settings.parallel, Some(4));
    let e = l.estimate.as_ref().unwrap();
    let fit = e.fit.as_ref().unwrap();
    assert_eq!(fit.outcome, FitDecision::NoChange);
    assert_eq!(fit.free[0].free.low, 23257 * MIB);
    // CUDA0 21388 = 15345 weights + 5206 KV + 836 compute; the host 682 (input embeddings) + 532 compute.
    let cuda0 = &e.per_device[0];
    assert_eq!(
        (
            cuda0.total.unwrap().low,
            cuda0.weights.unwrap().low,
            cuda0.kv.unwrap().low,
            cuda0.graph.unwrap().low
        ),
        (21388 * MIB, 15345 * MIB, 5206 * MIB, 836 * MIB)
    );
    let t = &l.lifecycle.tables[0];
    assert_eq!(
        (t.phase, t.evidence),
        (TablePhase::Plan, TableEvidence::InsideFit)
    );
    assert_eq!(codes(&load), ["incomplete-load"]);
}

#[test]
fn the_sycl_host_holds_most_weights_of_715() {
    let load = load_of("715");
    let l = &load.reconciled.load;
    assert_eq!(l.settings.ctx_size, Some(131072));
    assert_eq!(l.settings.parallel, Some(2));
    assert_eq!(l.settings.ubatch_size, Some(2048));
    // `common_init_result` is llama.cpp's `common` library (llama-server, whoever started it): llama.cpp
    // placed the layers, so most of the weights on the host is a partial offload under either launcher.
    assert_eq!(l.runtime, vramdiff::model::Runtime::LlamaCppLauncherUnknown);
    assert!(codes(&load).contains(&"partial-offload"));
    assert!(codes(&load).contains(&"host-not-vram"));
}

#[test]
fn the_projector_estimate_of_719_is_the_fit_target_padding() {
    let load = load_of("719");
    let e = load.reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(e.projector_total.unwrap().bytes, mib(2447.80));
    let fit = e.fit.as_ref().unwrap();
    assert_eq!(fit.outcome, FitDecision::NoChange);
    assert_eq!(fit.target.unwrap().low, 3471 * MIB);
    let text = crate::util::stdout(&crate::util::run(
        &["--fail-on", "never", sample("719").to_str().unwrap()],
        b"",
    ));
    assert!(
        text.contains(
            "margin 3.39 GiB per device (the default 1.00 GiB + the projector's 2.39 GiB estimate)"
        ),
        "{text}"
    );
}

fn failure_of(log: &str) -> serde_json::Value {
    let out = crate::util::run(
        &["--format", "json", "--fail-on", "never", "-"],
        log.as_bytes(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["loads"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "load-failed")
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn a_failed_load_names_what_failed_and_a_host_kill_is_host_memory() {
    // The KV cache's allocation failed after the CUDA allocator's out-of-memory (docs/log-formats.md §5.7).
    let f = failure_of(
        "load_tensors: offloaded 33/33 layers to GPU\n\
         load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n\
         ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n\
         llama_init_from_model: failed to allocate buffer for kv cache\n",
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("what failed: the KV cache of 8.00 GiB on CUDA0 (line 4)"),
        "{f}"
    );
    // The kernel killed the process for a cgroup's limit: host memory, not VRAM.
    let f = failure_of(
        "load_tensors: offloaded 33/33 layers to GPU\n\
         load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n\
         Memory cgroup out of memory: Killed process 34353 (llama-server) total-vm:61210828kB, anon-rss:30871232kB, file-rss:0kB, shmem-rss:0kB\n",
    );
    assert!(
        f["hint"]
            .as_str()
            .unwrap()
            .starts_with("host memory, not VRAM"),
        "{f}"
    );
    // A shell prompt that merely contains "out of memory" is not a failure.
    let f = failure_of(
        "load_tensors: offloaded 33/33 layers to GPU\n\
         load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n\
         $ journalctl -k | grep -i 'out of memory'\n",
    );
    assert!(f.is_null(), "{f}");
}

// ---- The acceptance audit (the points of each sample's note that the log supports), and the findings of the
// ---- exit table, the Metal budget and the compute buffers (docs/findings.md).

fn findings_of<'a>(load: &'a Concluded, code: &str) -> Vec<&'a vramdiff::model::Finding> {
    load.findings
        .iter()
        .filter(|f| f.code.as_str() == code)
        .collect()
}

fn loads_of_text(tag: &str, log: &str) -> Vec<Concluded> {
    let dir = crate::util::scratch(tag);
    let path = dir.join("log.txt");
    std::fs::write(&path, log).unwrap();
    analyze(&[&path]).loads
}

#[test]
fn the_three_loads_of_703_scale_their_kv_and_compute_with_the_context() {
    let a = analyze(&[&sample("703")]);
    assert_eq!(a.loads.len(), 3, "one load per file of the paste");
    // The contexts the files' names give: 2048, 4096, 8192 tokens.
    let contexts = [2048i64, 4096, 8192];
    let compute = [104.27, 188.27, 340.27];
    let totals = [11805, 12429, 13661];
    let host_weights = ["CUDA_Host", "CPU_Mapped", "CPU_Mapped"];
    for (i, load) in a.loads.iter().enumerate() {
        let l = &load.reconciled.load;
        let gpu = |kind: vramdiff::model::BufferKind| -> Vec<i64> {
            l.actual
                .buffers
                .iter()
                .filter(|b| b.kind == kind && !b.host)
                .map(|b| b.size.bytes)
                .collect()
        };
        // The same weights in every load: 11160.99 MiB on CUDA0 and 137.50 MiB on the host (pinned
        // CUDA_Host in the first, CPU_Mapped in the others): never two loads' buffers added together.
        assert_eq!(gpu(vramdiff::model::BufferKind::Model), [mib(11160.99)]);
        let host: Vec<(&str, i64)> = l
            .actual
            .buffers
            .iter()
            .filter(|b| b.kind == vramdiff::model::BufferKind::Model && b.host)
            .map(|b| (b.buffer.as_str(), b.size.bytes))
            .collect();
        assert_eq!(host, [(host_weights[i], mib(137.50))], "load {i}");
        // The KV cache scales exactly linearly: 270 KiB per token, f16 (MLA's K/V materialised).
        assert_eq!(
            gpu(vramdiff::model::BufferKind::Kv),
            [contexts[i] * 270 * 1024]
        );
        assert_eq!(gpu(vramdiff::model::BufferKind::Compute), [mib(compute[i])]);
        // GPU totals 11805 / 12429 / 13661 MiB: every load fits, nothing failed.
        assert_eq!(device_actual(load, "CUDA0").unwrap() / MIB, totals[i]);
        assert_eq!(codes(load), ["incomplete-load", "host-not-vram"]);
    }
}

#[test]
fn the_707_load_is_read_whole_with_both_kv_caches_and_it_fits() {
    let a = analyze(&[&sample("707")]);
    // The bare `I ` level letter no longer hides the memory lines: 13 of 13 recognised.
    assert_eq!((a.inputs[0].lines, a.inputs[0].recognized_lines), (13, 13));
    let load = &a.loads[0];
    let l = &load.reconciled.load;
    assert_eq!(
        (l.actual.offloaded_layers, l.actual.total_layers),
        (Some(43), Some(43))
    );
    // Interleaved SWA: 544 MiB (4 full-attention layers × 65536 cells) and 21.25 MiB (20 SWA layers × 1024).
    let kv: Vec<(Option<i64>, Option<i64>, i64)> = l
        .actual
        .kv_caches
        .iter()
        .map(|k| (k.cells, k.layers, k.size.bytes))
        .collect();
    assert_eq!(
        kv,
        [
            (Some(65536), Some(4), mib(544.0)),
            (Some(1024), Some(20), mib(21.25))
        ]
    );
    // 3635 = 2883.51 + 544 + 21.25 + 186.30 MiB on Vulkan0, against 5150 MiB free, leaving 1515: it fits.
    assert_eq!(
        device_actual(load, "Vulkan0"),
        Some(mib(2883.51 + 544.0 + 21.25 + 186.30))
    );
    let fit = l.estimate.as_ref().unwrap().fit.as_ref().unwrap();
    assert_eq!(fit.outcome, FitDecision::NoChange);
    assert_eq!(fit.projected.unwrap().low, 3635 * MIB);
    assert_eq!(fit.free[0].free.low, 5150 * MIB);
    // The projection names no device; the load has one GPU, so it is Vulkan0's estimate, and it matches.
    assert_eq!(device_estimate(load, "Vulkan0"), Some(3635 * MIB));
    let row = load
        .reconciled
        .devices
        .iter()
        .find(|d| d.device.to_string() == "Vulkan0")
        .unwrap();
    assert_eq!(row.comparison.verdict, vramdiff::model::Verdict::Match);
    // Every layer is on the GPU: the 2208 MiB in CPU_Mapped is no partial offload.
    assert!(findings_of(load, "partial-offload").is_empty());
    assert_eq!(codes(load), ["incomplete-load", "host-not-vram"]);
}

#[test]
fn the_708_host_row_and_the_memory_other_programs_held() {
    let load = load_of("708");
    let l = &load.reconciled.load;
    let e = l.estimate.as_ref().unwrap();
    // The host holds 682 MiB of input embeddings and 532 MiB of compute.
    let host = e.per_device.iter().find(|d| d.device.is_host()).unwrap();
    assert_eq!(
        (host.weights.unwrap().low, host.graph.unwrap().low),
        (682 * MIB, 532 * MIB)
    );
    // About 900 MiB of the 24159 MiB card was in use before the load (24159 − 23257 = 902).
    let fit = e.fit.as_ref().unwrap();
    let total = l.gpus[0].total.unwrap().low;
    assert_eq!((total - fit.free[0].free.low) / MIB, 902);
    // The plan leaves 1868 MiB, above the 1024 MiB target: no growth, no imbalance, no alarm.
    assert_eq!(fit.target.unwrap().low, 1024 * MIB);
}

#[test]
fn the_sycl_figures_of_715() {
    let load = load_of("715");
    // SYCL1 holds 12867 MiB of weights and SYCL_Host 20184 MiB: 61 % of what the excerpt shows.
    assert_eq!(device_actual(&load, "SYCL1"), Some(mib(12867.08)));
    let host = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::WeightsHost)
        .and_then(|c| c.actual)
        .unwrap();
    assert_eq!(host.bytes, mib(20183.74));
    // A deep partial offload, its figures the excerpt's (the_sycl_host_holds_most_weights_of_715).
    let f = findings_of(&load, "partial-offload");
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("19.71 GiB"), "{}", f[0].message);
}

#[test]
fn each_virtual_metal_device_of_717_counts_the_others_as_unaccounted() {
    let load = load_of("717");
    let rows = &load.reconciled.load.actual.breakdown;
    let selfs: Vec<i64> = rows.iter().take(4).map(|r| r.self_.low / MIB).collect();
    // MTL0 5143 ≈ 1738 + 1198 + 2205 = 5141: inside the rounding of four truncated figures.
    for (i, r) in rows.iter().take(4).enumerate() {
        let others: i64 = selfs
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, s)| s)
            .sum();
        let unaccounted = r.unaccounted.unwrap() / MIB;
        assert!(
            (unaccounted - others).abs() <= 3,
            "{}: {unaccounted} vs {others}",
            r.device
        );
    }
    // Real use: 7057 MiB on the one GPU plus 364 MiB on the host.
    assert_eq!(selfs.iter().sum::<i64>(), 7057);
    // A lone exit table has no plan: no growth is claimed, and one pool has no imbalance.
    assert_eq!(codes(&load), ["incomplete-load"]);
}

#[test]
fn the_719_projection_fits_with_the_projector_in_the_margin() {
    let load = load_of("719");
    let e = load.reconciled.load.estimate.clone().unwrap();
    let fit = e.fit.clone().unwrap();
    // Projected 3287 MiB against 110100 MiB free: it fits.
    assert_eq!(fit.projected.unwrap().low, 3287 * MIB);
    assert_eq!(e.available[0].low, 110100 * MIB);
    assert_eq!(codes(&load), ["incomplete-load"]);
}

#[test]
fn the_706_fit_left_one_of_66_layers_on_the_host() {
    let load = load_of("706");
    let l = &load.reconciled.load;
    assert_eq!(
        (l.actual.offloaded_layers, l.actual.total_layers),
        (Some(65), Some(66))
    );
    // The fit line: 20358 MiB used on Vulkan0 (the main context's buffers, exactly).
    let mtl = &l.estimate.as_ref().unwrap().per_device[0];
    assert_eq!(mtl.layers, Some(65));
    let main: f64 = 17913.46 + 512.0 + 1758.09 + 174.45;
    assert_eq!((main as i64), 20358);
}

/// A Metal load beyond its budget: the lines' shapes are sample-logs/008-…:139 (`recommendedMaxWorkingSetSize`,
/// 10^6 bytes), sample-logs/709-… (MTL0 buffers) and LM Studio's fit abort (docs/log-formats.md §5.7); Metal's
/// warning is ggml-metal's `ggml_backend_metal_log_allocated_size` line. -ngl was set, so --fit did not size it.
const OVER_BUDGET: &str = "\
common_init_result: fitting params to device memory, for bugs during this step try to reproduce them with -fit off, or provide --verbose logs if the bug only occurs with -fit on
common_params_fit_impl: projected to use 31090 MiB of device memory vs. 21845 MiB of free device memory
common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 999, abort
load_tensors: offloaded 37/37 layers to GPU
load_tensors:   CPU_Mapped model buffer size =   157.50 MiB
load_tensors:  MTL0_Mapped model buffer size =  4376.56 MiB
ggml_metal_init: recommendedMaxWorkingSetSize  = 22906.50 MB
llama_context: n_ctx         = 131072
llama_kv_cache:       MTL0 KV buffer size = 18432.00 MiB
llama_kv_cache: size = 18432.00 MiB (131072 cells,  36 layers,  1/1 seqs), K (f16): 9216.00 MiB, V (f16): 9216.00 MiB
sched_reserve:       MTL0 compute buffer size =  8282.00 MiB
ggml_backend_metal_log_allocated_size: warning: current allocated size is greater than the recommended max working set size
";

#[test]
fn a_metal_load_beyond_its_working_set_is_named_with_a_computed_lever() {
    let loads = loads_of_text("working-set", OVER_BUDGET);
    let load = &loads[0];
    // llama.cpp's lines alone (no command line, no Ollama line): llama-server, launcher unknown.
    assert_eq!(
        load.reconciled.load.runtime,
        vramdiff::model::Runtime::LlamaCppLauncherUnknown
    );
    let f = findings_of(load, "working-set-exceeded");
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    // 4376.56 + 18432 + 8282 = 31090.56 MiB against 22906.50 MB = 21845.34 MiB: 9245 MiB beyond it.
    assert!(
        f.message.contains("30.36 GiB allocated on the GPU against Metal's recommended working set of 21.33 GiB, 9.03 GiB beyond it"),
        "{}",
        f.message
    );
    assert!(f.message.contains("macOS pages"));
    assert_eq!(f.lines, [6, 7, 9, 11, 12]);
    // The context that frees the excess: 131072 × (18432 − 9245) / 18432, down to a multiple of 256.
    assert!(
        f.hint.contains("--ctx-size 65280 (if Ollama ≥ 0.30 started llama-server: num_ctx=65280 ÷ the parallel slots)"),
        "{}",
        f.hint
    );
    assert!(f.hint.contains("--fit (the default"), "{}", f.hint);
    // q8_0 would save 47 % of 18 GiB = 8.46 GiB, less than the excess: not offered; nor fewer layers
    // (9.03 GiB is more than every layer's weights).
    assert!(
        !f.hint.contains("q8_0") && !f.hint.contains("--n-gpu-layers"),
        "{}",
        f.hint
    );
}

#[test]
fn a_metal_load_inside_its_working_set_is_no_alarm() {
    // sample-logs/008-… and 201-… print the budget (21845.34 MiB) and stay below it; 709's dry run and 717's
    // exit table are no allocation beyond it either.
    for prefix in ["008", "201", "709", "717"] {
        for load in analyze(&[&sample(prefix)]).loads {
            assert!(
                findings_of(&load, "working-set-exceeded").is_empty(),
                "{prefix}"
            );
        }
    }
    let a = analyze(&[&sample("201")]);
    let ws = a.loads[0]
        .reconciled
        .load
        .actual
        .working_set
        .clone()
        .unwrap();
    assert_eq!(ws.budget.unwrap().bytes, 22_906_500_000);
}

#[test]
fn the_exit_table_against_the_plan_names_memory_outside_llama_cpp() {
    // sample-logs/founding-today-…: the plan (line 34: 24575 total, 23347 free) and the exit table (line 135:
    // unaccounted 1529): 1529 − (24575 − 23347) = 301 MiB appeared outside llama.cpp's accounting on CUDA0,
    // 1393 − (8187 − 7065) = 271 MiB on CUDA1; compute did not grow (612 and 1071 both times).
    let load = load_of("founding-today-3090");
    let f = findings_of(&load, "runtime-growth");
    assert_eq!(f.len(), 1);
    let f = f[0];
    assert!(f.message.contains("CUDA0: 301.0 MiB outside llama.cpp's accounting (unaccounted 1.49 GiB at exit, 1.20 GiB in use before the load as the fit saw it)"), "{}", f.message);
    assert!(
        f.message.contains("CUDA1: 271.0 MiB outside"),
        "{}",
        f.message
    );
    assert!(!f.message.contains("compute"), "{}", f.message);
    // CUDA1 kept 1082 MiB free, above the 1024 MiB target: information, not a warning.
    assert_eq!(f.severity, vramdiff::model::Severity::Info);
    // Ollama ≥ 0.30's own knob, with the growth added to the target.
    assert!(f.hint.contains("LLAMA_ARG_FIT_TARGET=1344"), "{}", f.hint);
    assert!(!f.hint.contains("-ub"), "{}", f.hint);
}

/// sample-logs/708-… (the plan) with an exit table in the shape of sample-logs/founding-today-…:133-137.
fn with_exit(cuda0_row: &str) -> String {
    let mut log = std::fs::read_to_string(sample("708")).unwrap();
    log.push_str("srv    operator(): cleaning up before exit...\n");
    log.push_str("common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |\n");
    log.push_str(cuda0_row);
    log.push_str("\ncommon_memory_breakdown_print: |   - Host               |                   1214 =   682 +       0 +     532                |\n");
    log
}

#[test]
fn compute_growth_at_exit_is_named_and_rounding_never_is() {
    let loads = loads_of_text(
        "growth",
        &with_exit("common_memory_breakdown_print: |   - CUDA0 (RTX 3090)   | 24159 =   872 + (21900 = 15345 +    5206 +    1348) +        1387 |"),
    );
    let f = findings_of(&loads[0], "runtime-growth");
    let f = f[0];
    assert!(
        f.message
            .contains("compute 836.0 MiB at load → 1.32 GiB at exit (+512.0 MiB)"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("485.0 MiB outside llama.cpp's accounting"),
        "{}",
        f.message
    );
    // 872 MiB free at exit, below the fit's 1024 MiB target: a warning.
    assert_eq!(f.severity, vramdiff::model::Severity::Warning);
    // llama.cpp's flags: half the micro-batch, and the target raised by the 997 MiB that grew.
    assert!(f.hint.contains("-ub 256"), "{}", f.hint);
    assert!(f.hint.contains("--fit-target 2048"), "{}", f.hint);
    // One MiB more compute and two more outside are the truncation of the figures: no growth.
    let loads = loads_of_text(
        "no-growth",
        &with_exit("common_memory_breakdown_print: |   - CUDA0 (RTX 3090)   | 24159 =  1866 + (21389 = 15345 +    5206 +     837) +         904 |"),
    );
    assert!(findings_of(&loads[0], "runtime-growth").is_empty());
}

/// Two GPUs, the second holding the output layer and a compute buffer over three times the first's: the
/// plan table is sample-logs/founding-today-…:33-36, the other lines its shapes (:37-40, 93-94).
fn imbalanced() -> String {
    let today = std::fs::read_to_string(sample("founding-today-3090")).unwrap();
    let table: Vec<&str> = today.lines().skip(32).take(4).collect();
    format!(
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
sched_reserve:      CUDA1 compute buffer size =  2071.03 MiB
",
        table.join("\n")
    )
}

#[test]
fn one_gpus_compute_buffer_several_times_the_others_is_named_with_its_levers() {
    let loads = loads_of_text("imbalance", &imbalanced());
    let load = &loads[0];
    let f = findings_of(load, "compute-imbalance");
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    assert!(
        f.message.starts_with("CUDA1's compute buffer (2.02 GiB) is 3× the others' (CUDA0 612.0 MiB), by compute buffers"),
        "{}",
        f.message
    );
    assert_eq!(
        f.device.as_ref().map(|d| d.to_string()).as_deref(),
        Some("CUDA1")
    );
    // Half the micro-batch halves it; CUDA0 holds the whole model with one compute buffer:
    // 11750 + 4352 + 816 + 289 + 2071 = 19278 MiB of the 23347 MiB the fit saw free, 1024 kept.
    assert!(f.hint.contains("-ub 256"), "{}", f.hint);
    assert!(f.hint.contains("--split-mode none --main-gpu 0 (if Ollama ≥ 0.30 started llama-server: main_gpu=0) (every layer and one compute buffer on CUDA0: 18.83 GiB of 22.80 GiB free"), "{}", f.hint);
    let ub = suggestion(
        load,
        "-ub 256 (if Ollama ≥ 0.30 started llama-server: num_batch=256)",
    );
    assert!(
        ub.effect.contains("CUDA1's 2.02 GiB → about 1.01 GiB"),
        "{}",
        ub.effect
    );
    // llama-server's flags first; Ollama's spelling only beside them, the launcher being unknown.
    assert!(load.suggestions.iter().all(|s| s.setting.starts_with('-')
        && s.setting
            .contains("(if Ollama ≥ 0.30 started llama-server: ")));
    // needless-split named the one-GPU setting already: it is offered once.
    let one = load
        .suggestions
        .iter()
        .filter(|s| {
            s.setting
                == "--split-mode none --main-gpu 0 (if Ollama ≥ 0.30 started llama-server: main_gpu=0)"
        })
        .count();
    assert_eq!(one, 1);
    // Probe tables (sample-logs/042-…: the log stops before the fit's result) are no allocation: no alarm.
    for load in analyze(&[&sample("042")]).loads {
        assert!(findings_of(&load, "compute-imbalance").is_empty());
    }
}
