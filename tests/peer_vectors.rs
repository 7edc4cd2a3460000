//! Peer vectors: inputs from other projects' test suites, with the figures those projects assert (copied byte for
//! byte from the shared corpus into tests/data/peer-vectors; see tests/data/README.md). vramdiff must reproduce
//! them.

use serde_json::Value;

use crate::util::{analyze, mib, peer_vectors};
use vramdiff::model::{Buffer, BufferKind, Concluded, GIB};

fn vector(id: &str) -> (Vec<Concluded>, Value) {
    let dir = peer_vectors();
    let mut input = None;
    let mut expected = None;
    for entry in std::fs::read_dir(&dir).expect("peer-vectors folder") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(id) && name.ends_with(".input") {
            input = Some(path.clone());
        } else if name.starts_with(id) && name.ends_with(".expected.json") {
            expected = Some(path.clone());
        }
    }
    let input = input.unwrap_or_else(|| panic!("no input for {id}"));
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(expected.unwrap()).unwrap()).unwrap();
    let analysis = analyze(&[&input]);
    assert!(analysis.inputs[0].error.is_none());
    (analysis.loads, expected)
}

fn buffers(loads: &[Concluded]) -> Vec<&Buffer> {
    assert_eq!(loads.len(), 1, "one load expected");
    loads[0].reconciled.load.actual.buffers.iter().collect()
}

fn sum(bs: &[&Buffer], keep: impl Fn(&Buffer) -> bool) -> i64 {
    bs.iter().filter(|b| keep(b)).map(|b| b.size.bytes).sum()
}

/// Ollama's memory-parsing writer vectors: GPU and total sums within the peer's 1024-byte tolerance.
#[test]
fn ollama_memory_writer_vectors_301_to_307() {
    for id in ["301", "302", "303", "304", "305", "306", "307"] {
        let (loads, expected) = vector(id);
        let bs = buffers(&loads);
        let gpu = sum(&bs, |b| !b.host);
        let total = sum(&bs, |_| true);
        let want_gpu = expected["expected"]["memGPU_bytes"].as_i64().unwrap();
        let want_total = expected["expected"]["memTotal_bytes"].as_i64().unwrap();
        assert!(
            (gpu - want_gpu).abs() <= 1024,
            "{id}: GPU {gpu} vs {want_gpu}"
        );
        assert!(
            (total - want_total).abs() <= 1024,
            "{id}: total {total} vs {want_total}"
        );
    }
}

#[test]
fn ggrun_ik_allocation_devices_313() {
    let (loads, expected) = vector("313");
    let bs = buffers(&loads);
    let ceil_mib = |bytes: i64| (bytes + mib(1.0) - 1) / mib(1.0);
    for device in expected["expected"]["devices"].as_array().unwrap() {
        let name = device["Name"].as_str().unwrap();
        let on = |b: &Buffer| {
            if name == "Host" {
                b.host
            } else {
                b.device == vramdiff::model::Device::named(name)
            }
        };
        let check = |kind: BufferKind, key: &str| {
            let got = ceil_mib(sum(&bs, |b| on(b) && b.kind == kind));
            let want = device[key].as_i64().unwrap_or(0);
            assert_eq!(got, want, "313 {name} {key}");
        };
        check(BufferKind::Model, "ModelMB");
        check(BufferKind::Kv, "ContextMB");
        check(BufferKind::Compute, "ComputeMB");
    }
}

#[test]
fn ggrun_kv_vectors_314_and_315() {
    // 314: two CPU KV caches (non-SWA + SWA) add up; the `size = …` summaries are not counted again.
    let (loads, expected) = vector("314");
    let kv = sum(&buffers(&loads), |b| b.kind == BufferKind::Kv);
    let range = expected["expected"]["TotalMB(1048576,swa_full=false)"]
        .as_array()
        .unwrap();
    let (lo, hi) = (range[0].as_i64().unwrap(), range[1].as_i64().unwrap());
    assert!(kv >= mib(lo as f64) && kv <= mib(hi as f64), "314 KV {kv}");
    // 315: KV over GPUs and the CPU.
    let (loads, expected) = vector("315");
    let kv = sum(&buffers(&loads), |b| b.kind == BufferKind::Kv);
    assert_eq!(
        kv,
        mib(expected["expected"]["kv_total_MiB"].as_f64().unwrap())
    );
}

#[test]
fn toolchest_rocm_meta_repeated_reserve_316() {
    let (loads, expected) = vector("316");
    let e = &expected["expected"];
    let bs = buffers(&loads);
    let close = |got: i64, want_mib: f64, what: &str| {
        assert!(
            (got - mib(want_mib)).abs() <= mib(0.005),
            "316 {what}: {got} vs {want_mib} MiB"
        );
    };
    close(
        sum(&bs, |b| b.kind == BufferKind::Model),
        e["by_kind_MiB"]["model"].as_f64().unwrap(),
        "model",
    );
    close(
        sum(&bs, |b| b.kind == BufferKind::Kv),
        e["by_kind_MiB"]["kv"].as_f64().unwrap(),
        "kv",
    );
    close(
        sum(&bs, |b| b.kind == BufferKind::Rs),
        e["by_kind_MiB"]["recurrent"].as_f64().unwrap(),
        "rs",
    );
    close(
        sum(&bs, |b| b.kind == BufferKind::Output),
        e["by_kind_MiB"]["output"].as_f64().unwrap(),
        "output",
    );
    close(
        sum(&bs, |b| b.kind == BufferKind::Model && b.host),
        e["model_host_MiB"].as_f64().unwrap(),
        "host model",
    );
    close(
        sum(&bs, |b| b.kind == BufferKind::Model && !b.host),
        e["model_gpu_MiB"].as_f64().unwrap(),
        "gpu model",
    );
    // Compute on Meta() was reserved twice (384.95 then 324.02 MiB). vramdiff follows Ollama's rule (the last
    // value wins) and keeps the earlier one as the upper bound: the GPU total's high bound is the peer's
    // "peak" reading. The peer's "sum" reading (8666.36) counts both reservations; vramdiff does not.
    let gpu_nominal: i64 = bs.iter().filter(|b| !b.host).map(|b| b.size.bytes).sum();
    let gpu_high: i64 = bs.iter().filter(|b| !b.host).map(|b| b.size.high).sum();
    close(
        gpu_nominal,
        7252.51 + 448.88 + 256.0 + 324.02,
        "gpu nominal (last reservation)",
    );
    // Each of the four GPU buffers adds its ±0.005 MiB print rounding to the high bound.
    assert!(
        (gpu_high - mib(e["GPUMiB_peak"].as_f64().unwrap())).abs() <= mib(0.025),
        "316 gpu high {gpu_high}"
    );
}

#[test]
fn toolchest_rocm_4gpu_317() {
    let (loads, expected) = vector("317");
    let e = &expected["expected"];
    let bs = buffers(&loads);
    let gib = |bytes: i64| bytes as f64 / GIB as f64;
    let weights = gib(sum(&bs, |b| b.kind == BufferKind::Model));
    assert!(
        (weights - e["weights_total_GiB"]["value"].as_f64().unwrap()).abs() <= 0.05,
        "weights {weights}"
    );
    assert!(
        gib(sum(&bs, |b| b.kind == BufferKind::Model && b.host))
            >= e["host_model_GiB"]["min"].as_f64().unwrap()
    );
    let gpu = gib(sum(&bs, |b| !b.host));
    let gap = e["gpu_total_GiB_vs_measured"]["measured_GiB"]
        .as_f64()
        .unwrap()
        - gpu;
    assert!((0.0..=3.0).contains(&gap), "GPU total {gpu} GiB, gap {gap}");
    let gpu_compute = gib(sum(&bs, |b| !b.host && b.kind == BufferKind::Compute));
    let host_compute = gib(sum(&bs, |b| b.host && b.kind == BufferKind::Compute));
    assert!(gpu_compute >= e["gpu_compute_GiB"]["min"].as_f64().unwrap());
    assert!(host_compute >= e["host_compute_GiB"]["min"].as_f64().unwrap());
    assert!(sum(&bs, |b| b.kind == BufferKind::Compute) > sum(&bs, |b| b.kind == BufferKind::Kv));
    // Both KV caches per device count: 816 + 306 MiB on each of the four cards.
    assert_eq!(
        sum(&bs, |b| b.device == vramdiff::model::Device::named("ROCm2")
            && b.kind == BufferKind::Kv),
        mib(816.0) + mib(306.0)
    );
}

/// Ollama's desktop app reads `inference compute` lines; vramdiff's discovered-GPU list must agree.
#[test]
fn ollama_app_inference_compute_vectors_308_to_312() {
    for id in ["308", "309", "310", "311", "312"] {
        let dir = peer_vectors();
        let input = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name().unwrap().to_string_lossy().starts_with(id)
                    && p.extension().is_some_and(|e| e == "input")
            })
            .unwrap();
        let expected_path = input.with_extension("expected.json");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(expected_path).unwrap()).unwrap();
        let analysis = analyze(&[&input]);
        let got = &analysis.inputs[0].discovered_gpus;
        let want = expected["expected"]["Computes"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{id}: number of GPUs");
        for (g, w) in got.iter().zip(want) {
            let text = |k: &str| w.get(k).and_then(Value::as_str).map(str::to_string);
            assert_eq!(g.library, text("Library"), "{id} library");
            assert_eq!(g.variant, text("Variant"), "{id} variant");
            assert_eq!(g.compute, text("Compute"), "{id} compute");
            assert_eq!(g.driver, text("Driver"), "{id} driver");
            assert_eq!(g.name, text("Name"), "{id} name");
            let vram = vramdiff::parse::values::parse_size(w["VRAM"].as_str().unwrap()).unwrap();
            assert_eq!(g.total, Some(vram), "{id} total");
        }
    }
}

/// The copy is whole: every vector `INDEX.tsv` lists has its input and expected figures, and nothing else is there.
#[test]
fn every_indexed_vector_is_in_the_copy() {
    let index = std::fs::read_to_string(peer_vectors().join("INDEX.tsv")).unwrap();
    let mut listed = std::collections::BTreeSet::from(["INDEX.tsv".to_string()]);
    for row in index.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        assert!(
            cols[1].ends_with(".input") && cols[2].ends_with(".expected.json"),
            "{row}"
        );
        for file in &cols[1..3] {
            assert!(cols[0].len() == 3 && file.starts_with(cols[0]), "{row}");
            listed.insert(file.to_string());
        }
    }
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(peer_vectors())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(present, listed);
    assert_eq!(listed.len(), 1 + 2 * 17, "vectors 301–317");
}
