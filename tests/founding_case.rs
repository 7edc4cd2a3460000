//! The project's founding case (two Tesla K80 dies, gemma3:12b, estimate 11.9 GiB split 1,48): the report must
//! compare like with like and say which estimate terms it summed.

use crate::util::{analyze, mib, root};
use vramdiff::model::{Component, Concluded, Engine, Verdict, GIB};

fn founding() -> Concluded {
    let a = analyze(&[&root().join("sample-logs/founding-k80-gemma3-12b.log")]);
    assert_eq!(a.loads.len(), 1);
    a.loads.into_iter().next().unwrap()
}

fn component(load: &Concluded, c: Component) -> &vramdiff::model::ComponentRow {
    load.reconciled
        .components
        .iter()
        .find(|r| r.component == c)
        .expect("component row")
}

#[test]
fn load_header_is_read() {
    let load = founding();
    assert!(!load.reconciled.load.source.partial);
    assert_eq!(load.reconciled.load.engine, Engine::Ollama);
    assert_eq!(load.reconciled.load.settings.ctx_size, Some(4096));
    assert_eq!(load.reconciled.load.settings.batch_size, Some(512));
    assert_eq!(load.reconciled.load.settings.parallel, Some(1));
    assert_eq!(load.reconciled.load.gpus.len(), 2);
    assert!(load
        .reconciled
        .load
        .gpus
        .iter()
        .all(|g| g.name.as_deref() == Some("Tesla K80") && g.compute.as_deref() == Some("3.7")));
    let e = load.reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(e.layers.split, vec![1, 48]);
    assert_eq!(e.layers.model, Some(49));
    assert_eq!(e.allocations.len(), 2);
}

#[test]
fn gpu_weights_match_repeating_plus_nonrepeating_plus_projector() {
    let load = founding();
    let w = component(&load, Component::WeightsGpu);
    assert_eq!(w.verdict, Verdict::Match);
    assert!(w
        .estimated_from
        .contains("memory.weights.repeating + memory.weights.nonrepeating + projector.weights"));
    // 136.7 MiB + 7.4 GiB
    let actual = w.actual.unwrap();
    assert_eq!(
        actual.bytes,
        (136.7 * 1048576.0f64).round() as i64 + (7.4 * GIB as f64).round() as i64
    );
}

#[test]
fn cpu_weight_buffer_is_host_memory_not_an_underestimate() {
    let load = founding();
    let host = component(&load, Component::WeightsHost);
    assert_eq!(host.actual.unwrap().bytes, (787.5 * 1048576.0f64) as i64);
    assert!(host.actual_from.contains("host memory, not VRAM"));
    assert!(
        load.reconciled
            .components
            .iter()
            .all(|c| c.verdict != Verdict::Under),
        "no false underestimate"
    );
}

#[test]
fn graph_is_charged_as_the_fork_build_charged_it_plus_projector_and_is_over() {
    let load = founding();
    let g = component(&load, Component::Graph);
    assert_eq!(g.verdict, Verdict::Over);
    // ollama37 241a0340 (the build the replay names) charges CUDA0, not the last GPU, a fixed 190 MiB.
    assert!(
        g.estimated_from.contains(
            "190.0 MiB on CUDA0 + memory.graph.full on CUDA1 (as ollama37-241a0340 charges the graph) + projector.graph"
        ),
        "{}",
        g.estimated_from
    );
    // 190 MiB + 1.3 GiB + 1.0 GiB
    assert_eq!(
        g.estimated.unwrap().bytes,
        190 * vramdiff::model::MIB + (1.3 * GIB as f64).round() as i64 + GIB
    );
    // 85.8 MiB + 1.1 GiB ≈ 1.19 GiB (within the 1.1 GiB rounding)
    let a = g.actual.unwrap();
    assert!(a.low <= (1.19 * GIB as f64) as i64 && (1.19 * GIB as f64) as i64 <= a.high);
}

#[test]
fn kv_has_no_actual_line_and_is_unknown() {
    let load = founding();
    let kv = component(&load, Component::Kv);
    assert_eq!(kv.verdict, Verdict::Unknown);
    assert_eq!(kv.estimated.unwrap().bytes, mib(736.0));
    assert!(kv.actual.is_none());
}

#[test]
fn allocations_against_per_device_buffer_sums() {
    let load = founding();
    let d0 = load
        .reconciled
        .devices
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("CUDA0"))
        .unwrap();
    let d1 = load
        .reconciled
        .devices
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("CUDA1"))
        .unwrap();
    // The estimator booked its last-layer bucket (output 787.5 MiB + projector weights 795.9 MiB + vision graph)
    // on CUDA0; the runner read "1,48" from blk.0 and ran the output and vision tensors on CUDA1. The rows
    // move those weights so each compares the estimate of what the GPU ran.
    let moved = mib(787.5) + mib(795.9);
    assert_eq!(
        d0.estimated.unwrap().bytes,
        (3.3 * GIB as f64).round() as i64 - moved
    );
    assert_eq!(
        d1.estimated.unwrap().bytes,
        (8.6 * GIB as f64).round() as i64 + moved
    );
    assert!(d0.estimated_from.contains("the runner ran them on CUDA1"));
    assert!(d1
        .estimated_from
        .contains("the estimator booked them on CUDA0"));
    // GPU0 holds blk.0: 136.7 + 85.8 = 222.5 MiB of buffers.
    assert_eq!(d0.actual.unwrap().bytes, mib(136.7) + mib(85.8));
    assert_eq!(d0.verdict, Verdict::Over);
    assert_eq!(d1.verdict, Verdict::Over);
    let host = load.reconciled.devices.iter().find(|d| d.host).unwrap();
    assert_eq!(host.actual.unwrap().bytes, mib(787.5) + mib(7.5));
}
