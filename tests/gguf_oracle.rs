//! `vramdiff inspect` against an independent oracle: the GGUF fixtures in `tests/data/gguf/` were written by
//! llama.cpp's own Python package `gguf` (`scripts/gen_gguf_fixtures.py`), and beside each one is what that
//! package's `GGUFReader` reads back (`*.oracle.json`). Every tensor (name, type, shape, offset, bytes) and
//! every metadata value must agree; then the layout built from them is checked against the fixtures' design.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{root, run, stderr, stdout};

const FIXTURES: [&str; 5] = [
    "llama-tiny.gguf",
    "moe-tiny.gguf",
    "swa-tiny.gguf",
    "mmproj-tiny.gguf",
    "hybrid-tiny.gguf",
];

fn fixture(name: &str) -> PathBuf {
    root().join("tests/data/gguf").join(name)
}

fn inspect(args: &[&str]) -> Value {
    let mut all = vec!["inspect", "--format", "json"];
    all.extend_from_slice(args);
    let out = run(&all, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("inspect writes JSON")
}

fn oracle(name: &str) -> Value {
    let path = fixture(name).with_extension("oracle.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// GGUFReader flattens nested arrays; so does the comparison.
fn flatten(v: &Value) -> Value {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            other => out.push(other.clone()),
        }
    }
    match v {
        Value::Array(_) => {
            let mut out = Vec::new();
            walk(v, &mut out);
            Value::Array(out)
        }
        other => other.clone(),
    }
}

#[test]
fn inspect_agrees_with_the_python_reader_tensor_by_tensor() {
    let mut tensors_compared = 0;
    let mut values_compared = 0;
    for name in FIXTURES {
        let path = fixture(name);
        let ours = inspect(&["--tensors", path.to_str().unwrap()]);
        let theirs = oracle(name);
        for key in ["data_start", "alignment", "file_bytes"] {
            assert_eq!(ours[key], theirs[key], "{name}: {key}");
        }
        let alignment = theirs["alignment"].as_u64().unwrap();
        let data_start = theirs["data_start"].as_u64().unwrap();
        let (a, b) = (
            ours["tensor_list"].as_array().unwrap(),
            theirs["tensors"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{name}: tensor count");
        assert_eq!(ours["tensors"].as_u64(), Some(b.len() as u64), "{name}");
        for (t, o) in a.iter().zip(b) {
            let label = format!("{name}: {}", o["name"]);
            assert_eq!(t["name"], o["name"], "{label}");
            assert_eq!(t["type"], o["type"], "{label}");
            assert_eq!(t["type_name"], o["type_name"], "{label}");
            assert_eq!(t["shape"], o["shape"], "{label}");
            let offset = t["offset"].as_u64().unwrap();
            assert_eq!(
                data_start + offset,
                o["data_offset"].as_u64().unwrap(),
                "{label}"
            );
            let n_bytes = o["n_bytes"].as_u64().unwrap();
            assert_eq!(t["data_bytes"].as_u64(), Some(n_bytes), "{label}");
            // The distance to the next offset: the data and its padding to the alignment (the writer pads
            // after every tensor, the last one too).
            assert_eq!(
                t["bytes"].as_u64(),
                Some(n_bytes.div_ceil(alignment) * alignment),
                "{label}"
            );
            tensors_compared += 1;
        }
        let (a, b) = (
            ours["metadata"].as_array().unwrap(),
            theirs["metadata"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{name}: metadata count");
        for (m, o) in a.iter().zip(b) {
            assert_eq!(m["key"], o["key"], "{name}");
            assert_eq!(m["type"], o["type"], "{name}: {}", o["key"]);
            assert_eq!(flatten(&m["value"]), o["value"], "{name}: {}", o["key"]);
            values_compared += 1;
        }
    }
    assert_eq!(tensors_compared, 163);
    assert!(values_compared > 90, "{values_compared}");
}

fn layers(v: &Value) -> &Vec<Value> {
    v["layers"].as_array().unwrap()
}

/// Sum of the oracle's padded tensor sizes for the tensors whose name passes `keep`.
fn oracle_bytes(name: &str, keep: impl Fn(&str) -> bool) -> u64 {
    let o = oracle(name);
    let alignment = o["alignment"].as_u64().unwrap();
    o["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| keep(t["name"].as_str().unwrap()))
        .map(|t| t["n_bytes"].as_u64().unwrap().div_ceil(alignment) * alignment)
        .sum()
}

#[test]
fn a_dense_model_has_its_layers_and_gqa_kv_per_token() {
    let v = inspect(&[fixture("llama-tiny.gguf").to_str().unwrap()]);
    assert_eq!(v["architecture"], "llama");
    assert_eq!(v["block_count"], 2);
    assert_eq!(v["trained_context"], 4096);
    for (i, l) in layers(&v).iter().enumerate() {
        let prefix = format!("blk.{i}.");
        assert_eq!(
            l["bytes"].as_u64(),
            Some(oracle_bytes("llama-tiny.gguf", |n| n.starts_with(&prefix)))
        );
        assert_eq!(l["expert_bytes"], 0);
        // 2 KV heads of 64/4 = 16: 32 K and 32 V elements, 2 bytes each in f16.
        assert_eq!(l["attention"]["kind"], "full");
        assert_eq!(l["kv_bytes_per_token"]["f16"], 128);
        assert_eq!(l["kv_bytes_per_token"]["q8_0"], 68);
        assert_eq!(l["kv_bytes_per_token"]["q4_0"], 36);
    }
    assert_eq!(v["kv_bytes_per_token"], 256);
    assert_eq!(
        v["nonrepeating_bytes"].as_u64(),
        Some(oracle_bytes("llama-tiny.gguf", |n| !n.starts_with("blk.")))
    );
    assert_eq!(
        v["output_bytes"].as_u64(),
        Some(oracle_bytes("llama-tiny.gguf", |n| n.starts_with("output")))
    );
    assert_eq!(v["projector_bytes"], Value::Null);
}

#[test]
fn experts_are_counted_apart_from_the_dense_weights_and_the_shared_expert() {
    let v = inspect(&[fixture("moe-tiny.gguf").to_str().unwrap()]);
    assert_eq!(v["alignment"], 64);
    for (i, l) in layers(&v).iter().enumerate() {
        let experts = oracle_bytes("moe-tiny.gguf", |n| {
            n.starts_with(&format!("blk.{i}.")) && n.contains("_exps")
        });
        let dense = oracle_bytes("moe-tiny.gguf", |n| {
            n.starts_with(&format!("blk.{i}.")) && !n.contains("_exps")
        });
        assert!(experts > 0 && dense > 0);
        assert_eq!(l["expert_bytes"].as_u64(), Some(experts));
        assert_eq!(l["dense_bytes"].as_u64(), Some(dense));
        // key_length 16 given explicitly: 2 KV heads × 16.
        assert_eq!(l["attention"]["k_elements"], 32);
    }
}

#[test]
fn gemma3_slides_its_window_on_five_layers_of_six_and_its_projector_is_counted() {
    let v = inspect(&[fixture("swa-tiny.gguf").to_str().unwrap()]);
    assert_eq!(v["sliding_window"], 1024);
    assert_eq!(
        v["sliding_window_layers"],
        serde_json::json!([0, 1, 2, 3, 4])
    );
    assert_eq!(layers(&v)[5]["attention"]["kind"], "full");
    assert_eq!(layers(&v)[0]["attention"]["kind"], "sliding-window");
    assert_eq!(
        v["kv_cache"]["f16"]["sliding_window_bytes_per_token"],
        5 * 128
    );
    assert_eq!(v["kv_cache"]["f16"]["full_bytes_per_token"], 128);
    let in_file = oracle_bytes("swa-tiny.gguf", |n| {
        n.starts_with("v.") || n.starts_with("mm.")
    });
    assert_eq!(v["projector_bytes"].as_u64(), Some(in_file));
    // Tied embeddings: no output.weight, so the output layer multiplies by token_embd.
    assert_eq!(
        v["output_bytes"].as_u64(),
        Some(oracle_bytes("swa-tiny.gguf", |n| {
            n == "token_embd.weight" || n == "output_norm.weight"
        }))
    );

    // With a separate mmproj file, its tensors join the projector.
    let mmproj = fixture("mmproj-tiny.gguf");
    let with = inspect(&[
        fixture("swa-tiny.gguf").to_str().unwrap(),
        "--mmproj",
        mmproj.to_str().unwrap(),
    ]);
    let file = oracle_bytes("mmproj-tiny.gguf", |_| true);
    assert_eq!(with["projector_bytes"].as_u64(), Some(in_file + file));
    assert_eq!(with["projector_file"]["architecture"], "clip");
    assert_eq!(with["projector_file"]["bytes"].as_u64(), Some(file));
}

#[test]
fn a_hybrid_model_keeps_a_recurrent_state_where_head_count_kv_is_zero() {
    let v = inspect(&[fixture("hybrid-tiny.gguf").to_str().unwrap()]);
    assert_eq!(v["recurrent_layers"], serde_json::json!([0, 1, 2]));
    assert_eq!(layers(&v)[3]["attention"]["kind"], "full");
    // Mamba2: conv state (4-1) × (64 + 2·1·16) and SSM state 16 × 64, f32.
    assert_eq!(v["recurrent_state_bytes_per_slot"], 4 * (3 * 96 + 16 * 64));
    assert_eq!(v["kv_bytes_per_token"], 128);
}

#[test]
fn the_text_report_names_the_window_and_the_recurrent_layers() {
    let out = run(
        &["inspect", fixture("swa-tiny.gguf").to_str().unwrap()],
        b"",
    );
    let text = stdout(&out);
    assert!(
        text.contains("architecture gemma3, 6 layers, trained context 131072"),
        "{text}"
    );
    assert!(
        text.contains("sliding-window layers 0-4 (window 1024)"),
        "{text}"
    );
    let out = run(
        &["inspect", fixture("hybrid-tiny.gguf").to_str().unwrap()],
        b"",
    );
    assert!(
        stdout(&out).contains("recurrent layers 0-2: no KV cache"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_json_is_the_same_bytes_every_time() {
    let path = fixture("moe-tiny.gguf");
    let a = run(
        &[
            "inspect",
            "--format",
            "json",
            "--tensors",
            path.to_str().unwrap(),
        ],
        b"",
    );
    let b = run(
        &[
            "inspect",
            "--format",
            "json",
            "--tensors",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn a_file_that_is_not_gguf_exits_2_naming_the_file_and_the_offset() {
    let out = run(&["inspect", "sample-logs/README.md"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("sample-logs/README.md: at byte 0: not a GGUF file"),
        "{err}"
    );
    let out = run(&["inspect", "no-such-file.gguf"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no-such-file.gguf"),
        "{}",
        stderr(&out)
    );
}
