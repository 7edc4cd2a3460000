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
    assert_eq!(
        codes(&load),
        ["incomplete-load", "partial-offload", "host-not-vram"]
    );
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
    let f = load
        .findings
        .iter()
        .find(|f| f.code.as_str() == "partial-offload")
        .unwrap();
    assert!(f.message.contains("61 %"), "{}", f.message);
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
            .contains("what failed: the KV cache (line 4)"),
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
