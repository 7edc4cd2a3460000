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
