//! Ollama's estimator replayed by each build's own rules (issue 23): the founding case by ollama37
//! `241a0340`'s, corpus 014 by 0.7.0's, 015 by 0.5's, and every other estimate line in the samples either
//! reproduced or answered with the families tried and the closest one. Through the library (the placement, the
//! trace) and the real binary (`whatif --explain`, `--family`).

use crate::util::{root, run, sample_names, stdout};
use vramdiff::model::{Concluded, TraceStage, WhatIf, GIB};
use vramdiff::pipeline::{self, Options};
use vramdiff::replay::Asked;

fn explained(name: &str) -> Vec<Concluded> {
    let path = root().join("sample-logs").join(name).display().to_string();
    let options = Options {
        whatif: Some(Asked {
            explain: true,
            ..Asked::default()
        }),
        ..Options::default()
    };
    pipeline::analyze(&[path], &options)
        .expect("built-in grammar loads")
        .loads
}

fn whatif(name: &str) -> WhatIf {
    explained(name)
        .into_iter()
        .next()
        .and_then(|l| l.whatif)
        .expect("a replay")
}

/// Bytes as Ollama prints them: GiB with one decimal.
fn gib1(bytes: i64) -> String {
    format!("{:.1}", bytes as f64 / GIB as f64)
}

#[test]
fn the_founding_split_is_reproduced_by_the_fork_build_that_printed_it() {
    let w = whatif("founding-k80-gemma3-12b.log");
    assert_eq!(w.family.as_deref(), Some("ollama37-241a0340"));
    let e = w.estimate.as_ref().unwrap();
    assert_eq!(e.placement.split(), vec![1, 48]);
    assert_eq!(e.placement.offloaded, 49);
    let allocations: Vec<String> = e
        .placement
        .gpus
        .iter()
        .map(|g| gib1(g.allocation))
        .collect();
    assert_eq!(allocations, ["3.3", "8.6"]);
    let total: i64 = e.placement.gpus.iter().map(|g| g.allocation).sum();
    assert_eq!(gib1(total + e.placement.overflow), "11.9");
    assert_eq!(e.split_agrees, Some(true));
    assert_eq!(e.allocations_agree, Some(true));
    let hinge = w.hinge.as_deref().unwrap();
    assert!(
        hinge.starts_with("the last layer missed CUDA1 by"),
        "{hinge}"
    );
    assert!(hinge.contains("hangs on the rounding"), "{hinge}");
}

#[test]
fn the_founding_trace_says_why_gpu0_got_one_layer_and_one_die_was_rejected() {
    let t = whatif("founding-k80-gemma3-12b.log")
        .trace
        .expect("--explain keeps the trace");
    let of = |stage: TraceStage| -> Vec<&str> {
        t.steps
            .iter()
            .filter(|s| s.stage == stage)
            .map(|s| s.text.as_str())
            .collect()
    };
    // One die alone: 48 blocks fit, the last-layer bucket does not (48 of 49 layers).
    let tries = of(TraceStage::Scheduler);
    assert_eq!(tries.len(), 2, "{tries:?}");
    for t in &tries {
        assert!(
            t.contains("alone: 48 of 49 layers placed, not a fit: the last layer missed"),
            "{t}"
        );
    }
    // All 48 blocks on the last GPU listed.
    let blocks = of(TraceStage::Blocks);
    assert_eq!(blocks.len(), 1);
    assert!(
        blocks[0].starts_with("blk.47 → blk.0 (48 blocks) on CUDA1"),
        "{}",
        blocks[0]
    );
    // The bucket (output + projector) misses CUDA1 and lands on CUDA0: GPU0's one "layer".
    let last = of(TraceStage::LastLayer);
    assert_eq!(last.len(), 2);
    assert!(
        last[0].contains("offered to CUDA1") && last[0].contains("does not fit"),
        "{}",
        last[0]
    );
    assert!(
        last[0].contains("output 787.5 MiB + projector"),
        "{}",
        last[0]
    );
    assert!(last[1].contains("placed on CUDA0"), "{}", last[1]);
    // The fork's 190 MiB graph on CUDA0, the full graph on CUDA1.
    let graph = of(TraceStage::Graph);
    assert!(
        graph[0].starts_with("CUDA0 charged its graph 190.0 MiB"),
        "{}",
        graph[0]
    );
    assert!(
        graph[1].starts_with("CUDA1 charged its graph 1.30 GiB"),
        "{}",
        graph[1]
    );
    // The runner reads 1,48 from blk.0: CUDA0 got blk.0, the output ran on CUDA1.
    assert_eq!(t.runner[0], "the runner puts blk.0 on CUDA0");
    assert!(
        t.runner[1].contains("blk.1 – blk.47 and the output"),
        "{}",
        t.runner[1]
    );
    // Upstream 0.7.1's rules give 25,24 on the same figures.
    let upstream = t
        .tried
        .iter()
        .find(|f| f.family == "upstream-0.7.1")
        .unwrap();
    assert_eq!(upstream.split, vec![25, 24]);
    assert!(!upstream.split_reproduced);
}

#[test]
fn corpus_014_is_reproduced_by_0_7_0s_largest_group_buffer() {
    let w = whatif("014-multigpu-2x-split37-0-projector-estimate.log");
    assert_eq!(w.family.as_deref(), Some("upstream-0.7.0"));
    let e = w.estimate.as_ref().unwrap();
    assert_eq!(e.placement.split(), vec![37, 0]);
    assert_eq!(e.placement.offloaded, 37);
    assert_eq!(
        (e.layers_agree, e.split_agrees, e.allocations_agree),
        (Some(true), Some(true), Some(true))
    );
    let t = w.trace.unwrap();
    let entry: Vec<&str> = t
        .steps
        .iter()
        .filter(|s| s.stage == TraceStage::Entry)
        .map(|s| s.text.as_str())
        .collect();
    assert!(
        entry[1].starts_with("CUDA1 rejected by the entry filter"),
        "{}",
        entry[1]
    );
    // 0.7.1's rules would have used the small GPU.
    let later = t
        .tried
        .iter()
        .find(|f| f.family == "upstream-0.7.1")
        .unwrap();
    assert!(later.split[1] > 0);
}

#[test]
fn corpus_015_is_reproduced_by_0_5s_weights_that_hold_the_kv() {
    let w = whatif("015-multigpu-4x-split11x4-estimate.log");
    assert_eq!(w.family.as_deref(), Some("upstream-0.5"));
    let e = w.estimate.as_ref().unwrap();
    assert_eq!(e.placement.split(), vec![11, 11, 11, 11]);
    assert_eq!(e.placement.offloaded, 44);
    assert_eq!(
        (e.layers_agree, e.split_agrees, e.allocations_agree),
        (Some(true), Some(true), Some(true))
    );
    assert!(e
        .figures
        .from
        .iter()
        .any(|f| f.contains("memory.weights.total − memory.required.kv")));
}

#[test]
fn every_estimate_line_in_the_samples_is_reproduced_or_names_the_families_tried() {
    let mut replayed = 0;
    for name in sample_names() {
        for (i, load) in explained(&name).into_iter().enumerate() {
            let Some(w) = load.whatif else { continue };
            let Some(trace) = w.trace else { continue };
            replayed += 1;
            let e = w.estimate.as_ref().unwrap();
            let reproduced = e.layers_agree != Some(false) && e.split_agrees != Some(false);
            assert!(!trace.tried.is_empty(), "{name} load {i}");
            if reproduced {
                assert!(
                    trace.chosen.contains("reproduces") || trace.chosen.contains("no split"),
                    "{name} load {i}: {}",
                    trace.chosen
                );
            } else {
                // Not reproduced: every family tried is named with what it gives, and the closest.
                assert!(
                    trace.chosen.starts_with("no family tried reproduces"),
                    "{name} load {i}: {}",
                    trace.chosen
                );
                for f in &trace.tried {
                    assert!(
                        trace.chosen.contains(&f.family),
                        "{name} load {i}: {}",
                        trace.chosen
                    );
                }
                assert!(trace.chosen.contains("closest: "), "{name} load {i}");
            }
        }
    }
    assert!(
        replayed >= 12,
        "only {replayed} estimate replays in the samples"
    );
}

#[test]
fn whatif_family_forces_a_family_and_the_cli_rejects_an_unknown_one() {
    let input = "sample-logs/founding-k80-gemma3-12b.log";
    let out = run(
        &[
            "whatif",
            "--no-model-search",
            "--family",
            "upstream-0.7.1",
            input,
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("upstream-0.7.1 rules"), "{text}");
    assert!(text.contains("logged split NOT reproduced"), "{text}");
    let bad = run(&["whatif", "--family", "upstream-9", input], b"");
    assert_eq!(bad.status.code(), Some(2));
    // --scheduler family: the fork's own scheduler (each die alone, then both) keeps both dies.
    let out = run(
        &[
            "whatif",
            "--no-model-search",
            "--scheduler",
            "family",
            input,
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(
        text.contains("the estimator family's own scheduler"),
        "{text}"
    );
    assert!(text.contains("CUDA0        1    3.32 GiB"), "{text}");
}
