//! The KV cache computed from the hyperparameters a log prints (`print_info:` / `llm_load_print_meta:`), at the
//! load's context, slots, micro-batch and cache types, against the KV lines of the same log: every corpus log
//! that prints both (the repository's copies in `sample-logs/`, and the one fixture derived from them).

use vramdiff::reconcile::kv_check::{check, KvLineCheck};

use crate::util::{analyze, root};

/// The checks of load `index` of a sample log.
fn checks(file: &str, index: usize) -> Vec<KvLineCheck> {
    let a = analyze(&[&root().join(file)]);
    let load = &a.loads[index].reconciled.load;
    let (_, checks) = check(load).unwrap_or_else(|| panic!("{file}: no layout or geometry"));
    checks
}

/// Every figure agrees to the byte: the logs print MiB with two decimals and every cache here is a whole number
/// of 1/100 MiB, so no rounding is left.
fn assert_exact(file: &str, index: usize, expected: &[(&str, u64, f64)]) {
    let got = checks(file, index);
    let described: Vec<(&str, u64, f64)> = got
        .iter()
        .map(|c| (c.what, c.line, c.logged as f64 / 1048576.0))
        .collect();
    assert_eq!(described, expected, "{file}: the logged KV lines");
    for c in &got {
        assert!(c.agrees(0), "{file}:{}: {c:?}", c.line);
    }
}

// `llm_load_print_meta:` era (one unified cache, `KV self size`): 32 layers × 1024 K and 1024 V elements × 8192
// cells in f16.
#[test]
fn llama31_8b_on_a_t4() {
    assert_exact(
        "sample-logs/001-kaggle-t4-llama31-8b.log",
        0,
        &[("full", 112, 1024.0), ("buffers", 111, 1024.0)],
    );
}

// Four slots of 2048 share one unified stream of 8192 cells in this era.
#[test]
fn llama31_8b_with_four_slots_on_a_4090() {
    assert_exact(
        "sample-logs/002-runpod-rtx4090-llama31-8b-lora.log",
        0,
        &[("full", 139, 1024.0), ("buffers", 138, 1024.0)],
    );
}

// A 128000-token context split over the CPU and Metal KV buffers.
#[test]
fn granite_8b_at_128k_on_metal_and_cpu() {
    assert_exact(
        "sample-logs/008-macos-metal-m1pro-granite-8b-128k-partial.log",
        0,
        &[("full", 144, 18000.0), ("buffers", 142, 18000.0)],
    );
}

// The lines carry a markdown quote marker (`> `) in this paste.
#[test]
fn granite_8b_at_32k_pasted_as_a_quote() {
    assert_exact(
        "sample-logs/201-macos-metal-m1pro-granite8b-full-mdquote.log",
        0,
        &[("full", 141, 4608.0), ("buffers", 140, 4608.0)],
    );
}

// `kv_unified = false`: two slots get a stream of 4096 cells each (`4096 cells, … 2/2 seqs` is 2 × 416 MiB).
// The second load (bge-m3, an encoder) has no KV cache and prints no KV line.
#[test]
fn ministral_3b_with_two_streams() {
    assert_exact(
        "sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log",
        0,
        &[("full", 190, 832.0), ("buffers", 189, 832.0)],
    );
}

// Sliding window (reconstructed founding case, its KV arithmetic kept exact): 10 full-attention layers at 16384
// cells and 50 window layers at pad(1024 + n_ubatch 1024, 256) = 2048 cells, q8_0 K and V.
#[test]
fn gemma4_31b_full_and_window_caches() {
    assert_exact(
        "sample-logs/founding-today-3090-4060-gemma4-31b.log",
        0,
        &[
            ("full", 87, 680.0),
            ("window", 91, 425.0),
            ("buffers", 85, 1105.0),
        ],
    );
}

// The fixture derived from 001 with a q8_0 cache (34 bytes per 32 elements): 544 MiB.
#[test]
fn llama31_8b_with_a_q8_0_cache() {
    assert_exact(
        "tests/fixtures/001-t4-kv-q8_0.log",
        0,
        &[("full", 112, 544.0), ("buffers", 111, 544.0)],
    );
}

/// A log whose KV lines the hyperparameters do not explain gets a note on the load naming both figures (here 001
/// with `n_embd_k_gqa`/`n_embd_v_gqa` edited to twice the width: the computed KV doubles). The unedited logs
/// above get none.
#[test]
fn a_kv_line_the_layout_does_not_explain_is_noted() {
    let path = root().join("sample-logs/001-kaggle-t4-llama31-8b.log");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text
        .replace("n_embd_k_gqa     = 1024", "n_embd_k_gqa     = 2048")
        .replace("n_embd_v_gqa     = 1024", "n_embd_v_gqa     = 2048");
    assert_ne!(edited, text);
    let out = crate::util::run(&["--format", "json", "-"], edited.as_bytes());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = json["loads"][0]["notes"].to_string();
    assert!(
        notes.contains("KV computed from the model's layout (full cache): 2.00 GiB where line 112 prints 1.00 GiB"),
        "{notes}"
    );
    let plain = analyze(&[&path]);
    assert!(
        !plain.loads[0]
            .reconciled
            .load
            .notes
            .iter()
            .any(|n| n.contains("KV computed")),
        "{:?}",
        plain.loads[0].reconciled.load.notes
    );
}
