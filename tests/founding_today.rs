//! The founding case of today (Ollama 0.30.6, llama-server with `--fit`, an RTX 3090 and an RTX 4060, gemma4:31b;
//! reconstructed from ollama#16599): `--fit` kept llama.cpp's default split over both GPUs although the 3090
//! alone holds the model, and Ollama kept the projector on the CPU.

use serde_json::Value;

use crate::util::{analyze, mib, root, run};
use vramdiff::model::{Concluded, Device, FitDecision, Runtime, Verdict, GIB, MIB};

const LOG: &str = "sample-logs/founding-today-3090-4060-gemma4-31b.log";

fn today() -> Concluded {
    let a = analyze(&[&root().join(LOG)]);
    assert_eq!(
        a.loads.len(),
        1,
        "one load (the second `llama-server started` is not another)"
    );
    a.loads.into_iter().next().unwrap()
}

#[test]
fn the_era_and_its_settings_are_read() {
    let load = today();
    assert_eq!(load.reconciled.load.runtime, Runtime::OllamaFit);
    assert!(!load.reconciled.load.source.partial);
    let s = &load.reconciled.load.settings;
    assert_eq!(
        (s.ctx_size, s.parallel, s.batch_size, s.ubatch_size),
        (Some(16384), Some(1), Some(1024), Some(1024))
    );
    assert_eq!(s.kv_cache_type.as_deref(), Some("q8_0"));
    assert_eq!(s.kv_cache_type_v.as_deref(), Some("q8_0"));
    assert_eq!(
        (s.projector_offload, s.projector_offload_reason.as_deref()),
        (Some(false), Some("limited-vram"))
    );
    assert_eq!(s.mmap, Some(false));
    // Ollama's `available` and the measured `free` are two figures, kept apart.
    let gpu0 = &load.reconciled.load.gpus[0];
    assert_eq!(gpu0.name.as_deref(), Some("NVIDIA GeForce RTX 3090"));
    assert_eq!(
        gpu0.available.unwrap().bytes,
        (22.3 * GIB as f64).round() as i64
    );
    assert_eq!(gpu0.free.unwrap().bytes, (22.8 * GIB as f64).round() as i64);
    assert_eq!(load.reconciled.load.model.block_count, Some(60));
}

#[test]
fn the_fit_plan_is_the_per_device_estimate_and_matches_the_buffers() {
    let load = today();
    let e = load.reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(e.form.as_str(), "fit-plan");
    let fit = e.fit.as_ref().unwrap();
    assert_eq!(fit.outcome, FitDecision::NoChange);
    assert_eq!(fit.plan_line, Some(34));
    assert_eq!(fit.target.unwrap().bytes, 1024 * MIB);
    assert_eq!(fit.seconds, Some(2.41));
    // Headline from the plan: every layer on the GPUs.
    assert_eq!((e.layers.offload, e.layers.model), (Some(61), Some(61)));
    let cuda0 = e
        .per_device
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("CUDA0"))
        .unwrap();
    // Truncated MiB: the table's 11750 is [11750, 11751) MiB.
    assert_eq!(
        (cuda0.weights.unwrap().low, cuda0.weights.unwrap().high),
        (11750 * MIB, 11751 * MIB - 1)
    );
    for device in ["CUDA0", "CUDA1", "CPU"] {
        let row = load
            .reconciled
            .devices
            .iter()
            .find(|d| d.device == Device::named(device))
            .unwrap();
        assert_eq!(
            row.verdict,
            Verdict::Match,
            "{device}: {:?} vs {:?}",
            row.estimated,
            row.actual
        );
    }
    // The projector is charged where it ran (the host), and matches clip's buffers.
    assert_eq!(e.projector_device, Some(Device::Host));
    let projector = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == vramdiff::model::Component::Projector)
        .unwrap();
    assert_eq!(projector.verdict, Verdict::Match);
    assert_eq!(projector.actual.unwrap().bytes, mib(812.46) + mib(57.84));
}

#[test]
fn the_exit_table_is_an_actual_and_the_probe_is_not() {
    let load = today();
    let rows = &load.reconciled.load.actual.breakdown;
    assert_eq!(rows.len(), 3, "the table printed after the load");
    assert!(rows.iter().all(|r| r.line > 130));
    assert_eq!(rows[0].free.unwrap().bytes, 9868 * MIB);
    assert!(!rows[0].unaccounted_suspect);
}

#[test]
fn the_replay_keeps_the_default_split_and_fits_the_3090_alone() {
    let load = today();
    let w = load.whatif.as_ref().unwrap();
    let e = w.estimate.as_ref().unwrap();
    // llama.cpp's default split in proportion to free memory: 23347 : 7065 MiB over 61 layers.
    assert_eq!(e.placement.split(), vec![47, 14]);
    assert_eq!(e.layers_agree, Some(true));
    assert!(e.strategy.contains("no changes needed"));
    let m = w.measured.as_ref().unwrap();
    assert_eq!(m.placement.used_gpus(), 1);
    assert_eq!(m.placement.gpus[0].device, Device::named("CUDA0"));
    assert!(m.placement.fully_offloaded());
    assert!(m.margin > 3 * GIB, "margin {}", m.margin);
}

fn report() -> Value {
    let out = run(&["--format", "json", "--fail-on", "never", LOG], b"");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn needless_split_names_the_gpu_that_holds_it_with_its_margin() {
    let r = report();
    let load = &r["loads"][0];
    let f = load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "needless-split")
        .unwrap();
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("CUDA0 (NVIDIA GeForce RTX 3090)"),
        "{message}"
    );
    assert!(
        message.contains("3.35 GiB to spare above the 1.00 GiB --fit margin"),
        "{message}"
    );
    assert!(message.contains("no changes needed"), "{message}");
    let p = load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "projector-on-cpu")
        .unwrap();
    assert_eq!(p["severity"], "warning");
    assert!(p["message"]
        .as_str()
        .unwrap()
        .contains("reason=limited-vram"));
}

#[test]
fn suggestions_use_only_knobs_that_reach_llama_server() {
    let r = report();
    let settings = settings(&r["loads"][0]);
    assert_eq!(
        settings,
        [
            "CUDA_VISIBLE_DEVICES=GPU-4f1c8e02-7a3d-5b9e-c61f-2d8e0a9b3c47",
            "main_gpu=0"
        ]
    );
    let text = r.to_string();
    for ignored in [
        "OLLAMA_GPU_OVERHEAD",
        "OLLAMA_GRAPH_SAFETY_MULTIPLIER",
        "OLLAMA_SCHED_SPREAD",
    ] {
        assert!(!text.contains(ignored), "{ignored} does not reach --fit");
    }
}

/// The settings a JSON load's suggestions offer, in order.
fn settings(load: &Value) -> Vec<&str> {
    load["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["setting"].as_str().unwrap())
        .collect()
}

/// The same load without a line of Ollama's (no `level=` record, no `[GIN]`): llama-server's own lines, which
/// Ollama ≥ 0.30 relays unchanged. Its loader still names a model file of Ollama's blob store, so Ollama started
/// it and the advice is Ollama's. Without those lines too, who started llama-server is not known: every setting
/// offered reaches llama-server under both launchers and is written in both spellings, and no hint names a
/// setting only one of them reads.
#[test]
fn without_ollama_s_lines_the_advice_is_in_llama_server_flags() {
    let text = std::fs::read_to_string(root().join(LOG)).unwrap();
    let report = |without_blobs: bool| -> Value {
        let standalone: String = text
            .lines()
            .filter(|l| !l.contains("level=") && !l.contains("[GIN]"))
            .filter(|l| !(without_blobs && l.contains("blobs\\sha256-")))
            .map(|l| format!("{l}\n"))
            .collect();
        let out = run(
            &["--format", "json", "--no-model-search", "-"],
            standalone.as_bytes(),
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["loads"][0].clone()
    };
    let load = report(false);
    assert_eq!(load["era"], "llama-server");
    assert_eq!(
        settings(&load),
        [
            "CUDA_VISIBLE_DEVICES=GPU-4f1c8e02-7a3d-5b9e-c61f-2d8e0a9b3c47",
            "main_gpu=0"
        ]
    );
    let load = report(true);
    assert_eq!(load["era"], "llama-server");
    assert_eq!(
        settings(&load),
        ["--split-mode none --main-gpu 0 (if Ollama ≥ 0.30 started llama-server: main_gpu=0)"]
    );
    for f in load["findings"].as_array().unwrap() {
        let hint = f["hint"].as_str().unwrap();
        for one_launcher_only in [
            "CUDA_VISIBLE_DEVICES",
            "--device",
            "OLLAMA_CONTEXT_LENGTH",
            "OLLAMA_GPU_OVERHEAD",
        ] {
            assert!(!hint.contains(one_launcher_only), "{}: {hint}", f["code"]);
        }
    }
    let analysis = analyze(&[&root().join(LOG)]);
    assert_eq!(
        analysis.loads[0].reconciled.load.runtime,
        Runtime::OllamaFit
    );
}
