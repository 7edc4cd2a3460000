//! The model file end to end, through the real binary, with the founding cases' models at their real size
//! (header-only fixtures grown to full length, see `founding_models`): `vramdiff inspect` reads them as the logs
//! describe them; `--gguf FILE` and the blob the log names (`$OLLAMA_MODELS/blobs/`, `~/.ollama/models/blobs/`)
//! give the replay its per-layer figures, and the replay's per-GPU allocations are the sums of the layers placed
//! there; a file of another model, or a broken one, is a warning and changes nothing.

use serde_json::Value;

use crate::founding_models::{
    block_bytes, bytes_where, materialise, oracle, run_searching, GEMMA3_12B, GEMMA3_12B_BLOB,
    GEMMA4_31B, GEMMA4_31B_BLOB, K80_LOG, TODAY_LOG,
};
use crate::util::{root, run, scratch, stderr, stdout};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

fn json(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).expect("JSON on stdout")
}

fn log(path: &str) -> String {
    root().join(path).display().to_string()
}

/// `vramdiff [args] --format json LOG`.
fn report(args: &[&str], log_path: &str) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let l = log(log_path);
    all.push(&l);
    json(&run(&all, b""))
}

/// `vramdiff whatif [args] --format json LOG`: the first load's `whatif`.
fn whatif(args: &[&str], log_path: &str) -> Value {
    let mut all = vec!["whatif", "--format", "json"];
    all.extend_from_slice(args);
    let l = log(log_path);
    all.push(&l);
    json(&run(&all, b""))["loads"][0]["whatif"].clone()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The report without the input warnings (what a model file that is not used may add).
fn without_warnings(mut v: Value) -> Value {
    for input in v["inputs"].as_array_mut().unwrap() {
        input["warnings"] = Value::Array(Vec::new());
    }
    v
}

/// KV bytes of one layer as llama.cpp sizes it: `cells` × (K + V elements) in the cache type (f16 2 bytes,
/// q8_0 34 per 32). Full-attention layers hold the context; window layers `window + ubatch` cells (padded to
/// 256), at most the context.
fn layer_kv(full: bool, ctx: u64, window: u64, ubatch: u64, elements: u64, q8_0: bool) -> u64 {
    let cells = if full {
        ctx
    } else {
        ctx.min((window + ubatch).div_ceil(256) * 256)
    };
    let per_cell = if q8_0 {
        2 * elements / 32 * 34
    } else {
        2 * elements * 2
    };
    cells * per_cell
}

/// gemma3 (the fixture has no pattern key: llama.cpp's gemma3 pattern, each sixth layer global) and gemma4
/// (the file's pattern, the same: 10 of 60 layers global).
fn is_full(layer: usize) -> bool {
    layer % 6 == 5
}

#[test]
fn inspect_reads_the_founding_models_as_their_logs_describe_them() {
    let dir = scratch("inspect-founding");
    // gemma3:12b — the K80 log: layers.model=49 (48 blocks + output), CUDA0 "136.7 MiB" (block 0, split 1,48),
    // memory.weights.repeating "6.0 GiB", nonrepeating and CPU "787.5 MiB" (the embedding), CUDA1 "7.4 GiB"
    // (47 blocks, the tied output, the vision tower), projector.weights "795.9 MiB" (the `v` tensors).
    let path = materialise(GEMMA3_12B, &dir, "gemma3.gguf");
    let v = json(&run(
        &["inspect", "--format", "json", path.to_str().unwrap()],
        b"",
    ));
    let o = oracle(GEMMA3_12B);
    assert_eq!(v["file_bytes"], o["file_bytes"]);
    assert_eq!(v["tensors"], 1065, "the K80 log's num_tensors");
    assert_eq!(v["architecture"], "gemma3");
    assert_eq!(v["block_count"], 48);
    let blocks = block_bytes(GEMMA3_12B);
    let layers: Vec<u64> = v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(
        layers, blocks,
        "inspect's layers are the oracle's blk.N sums"
    );
    let within = |bytes: f64, logged: f64, half_step: f64| (bytes - logged).abs() <= half_step;
    assert!(within(blocks[0] as f64 / MIB, 136.7, 0.05), "{}", blocks[0]);
    let repeating: u64 = blocks.iter().sum();
    assert!(within(repeating as f64 / GIB, 6.0, 0.05), "{repeating}");
    let embd = bytes_where(GEMMA3_12B, |n| n == "token_embd.weight");
    assert!(within(embd as f64 / MIB, 787.5, 0.05), "{embd}");
    let vision = bytes_where(GEMMA3_12B, |n| n.starts_with("v."));
    assert!(within(vision as f64 / MIB, 795.9, 0.05), "{vision}");
    let output = v["output_bytes"].as_u64().unwrap();
    let projector = v["projector_bytes"].as_u64().unwrap();
    assert_eq!(
        projector,
        bytes_where(GEMMA3_12B, |n| n.starts_with("v.") || n.starts_with("mm."))
    );
    let cuda1 = repeating - blocks[0] + output + projector;
    assert!(within(cuda1 as f64 / GIB, 7.4, 0.05), "{cuda1}");
    // The KV the log's estimate prints at num_ctx 4096 (f16, batch 512): memory.required.kv="736.0 MiB".
    let kv: u64 = (0..48)
        .map(|i| layer_kv(is_full(i), 4096, 1024, 512, 8 * 256, false))
        .sum();
    assert_eq!(kv, 736 << 20);
    assert_eq!(v["sliding_window"], 1024);
    let swa = v["sliding_window_layers"].as_array().unwrap();
    assert_eq!(swa.len(), 40);
    assert!(swa.iter().all(|l| !is_full(l.as_u64().unwrap() as usize)));

    // gemma4:31b — today's log: n_layer 60, CUDA0 model buffer 11750.47 MiB (layers 0–46), CUDA1 4352.53 MiB
    // (layers 47–59 and the output layer, the tied embedding's copy), CPU 1102.50 MiB (the embedding); KV at
    // 16384 q8_0, ubatch 1024: 680.00 MiB for 10 full layers, 425.00 MiB for 50 window layers of 2048 cells.
    let path = materialise(GEMMA4_31B, &dir, "gemma4.gguf");
    let v = json(&run(
        &["inspect", "--format", "json", path.to_str().unwrap()],
        b"",
    ));
    assert_eq!(v["file_bytes"], oracle(GEMMA4_31B)["file_bytes"]);
    assert_eq!(v["block_count"], 60);
    assert_eq!(v["trained_context"], 262144, "n_ctx_train");
    let blocks = block_bytes(GEMMA4_31B);
    let embd = bytes_where(GEMMA4_31B, |n| n == "token_embd.weight");
    assert_eq!(embd as f64 / MIB, 1102.5);
    let output = v["output_bytes"].as_u64().unwrap();
    assert_eq!(
        output,
        embd + bytes_where(GEMMA4_31B, |n| n == "output_norm.weight")
    );
    let cuda0: u64 = blocks[..47].iter().sum();
    let cuda1: u64 = blocks[47..].iter().sum::<u64>() + output;
    // The header's layers are quantised tensors of 249.99 MiB; the log's buffers average 250.01 MiB a layer:
    // within 1 MiB of each buffer (0.01 %).
    assert!(within(cuda0 as f64 / MIB, 11750.47, 1.0), "{cuda0}");
    assert!(within(cuda1 as f64 / MIB, 4352.53, 1.0), "{cuda1}");
    let full: u64 = (0..60)
        .filter(|&i| is_full(i))
        .map(|_| layer_kv(true, 16384, 1024, 1024, 16 * 128, true))
        .sum();
    let window: u64 = (0..60)
        .filter(|&i| !is_full(i))
        .map(|_| layer_kv(false, 16384, 1024, 1024, 16 * 128, true))
        .sum();
    assert_eq!((full, window), (680 << 20, 425 << 20));
    assert_eq!(v["sliding_window_layers"].as_array().unwrap().len(), 50);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The K80 founding case with `--gguf`: the file is named in the JSON and in a note, and both replays run on its
/// layers: the measured one puts all 49 layers on CUDA0, whose allocation is the floor, the output, the graph,
/// the 48 blocks' weights and their KV (llama.cpp's sizes, which add up to the log's 736 MiB); the estimate's
/// (Ollama's round-robin on two GPUs) puts the even blocks and the output on CUDA0, the odd ones on CUDA1, each
/// block with its own weights and its share of the estimate's KV.
#[test]
fn gguf_on_the_k80_founding_case_replays_with_the_files_layers() {
    let dir = scratch("gguf-k80");
    let path = materialise(GEMMA3_12B, &dir, "gemma3.gguf");
    let p = path.to_str().unwrap();
    let r = report(&["--gguf", p], K80_LOG);
    let load = &r["loads"][0];
    assert_eq!(load["model"]["gguf"], p);
    let notes: Vec<&str> = load["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(
            &format!("model file: {p} (--gguf), its GGUF header gives the per-layer sizes")
                .as_str()
        ),
        "{notes:?}"
    );
    let without = report(&["--no-model-search"], K80_LOG);
    assert_eq!(without["loads"][0]["model"]["gguf"], Value::Null);

    // Upstream 0.7.1's rules (the arithmetic below alternates blocks); the log's own family is the fork's.
    let w = whatif(&["--gguf", p, "--family", "upstream-0.7.1"], K80_LOG);
    let blocks = block_bytes(GEMMA3_12B);
    let kv: Vec<u64> = (0..48)
        .map(|i| layer_kv(is_full(i), 4096, 1024, 512, 8 * 256, false))
        .collect();
    let weights: u64 = blocks.iter().sum();
    let kv_total: u64 = kv.iter().sum();

    let m = &w["measured"];
    let f = &m["figures"];
    let gpus = m["placement"]["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0]["layers"], 49);
    assert_eq!(
        int(&gpus[0]["allocation"]),
        int(&f["per_gpu_floor"])
            + int(&f["output"])
            + int(&f["graph"])
            + (weights + kv_total) as i64
    );
    assert!(f["from"].as_array().unwrap().iter().any(|s| s
        .as_str()
        .unwrap()
        .contains(&format!("the GGUF header of {p}"))));

    let e = &w["estimate"];
    let f = &e["figures"];
    let gpus = e["placement"]["gpus"].as_array().unwrap();
    // The estimate's KV (memory.required.kv over 48 blocks, times 48) shared by each block's llama.cpp size.
    let estimate_kv = i128::from(int(&f["layer_kv"])) * 48;
    let share =
        |i: usize| (estimate_kv * i128::from(kv[i] as i64) / i128::from(kv_total as i64)) as i64;
    let cost = |i: usize| blocks[i] as i64 + share(i);
    let base = int(&f["per_gpu_floor"]) + cost(0) + int(&f["graph"]);
    let even: i64 = (0..48).filter(|i| i % 2 == 0).map(cost).sum();
    let odd: i64 = (0..48).filter(|i| i % 2 == 1).map(cost).sum();
    assert_eq!(
        (gpus[0]["layers"].clone(), gpus[1]["layers"].clone()),
        (25.into(), 24.into())
    );
    assert_eq!(int(&gpus[0]["allocation"]), base + even + int(&f["output"]));
    assert_eq!(int(&gpus[1]["allocation"]), base + odd);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Today's founding case with `--gguf`: the plan replay (llama.cpp's --fit on the plan's figures) and the
/// measured one run on the file's layers and its output layer (the tied embedding, 1102.5 MiB); each GPU's
/// allocation is the sum of its layers' weights and KV (q8_0, 16384 cells, window layers 2048) and its compute.
#[test]
fn gguf_on_todays_founding_case_replays_with_the_files_layers() {
    let dir = scratch("gguf-today");
    let path = materialise(GEMMA4_31B, &dir, "gemma4.gguf");
    let p = path.to_str().unwrap();
    let r = report(&["--gguf", p], TODAY_LOG);
    assert_eq!(r["loads"][0]["model"]["gguf"], p);
    let blocks = block_bytes(GEMMA4_31B);
    let output = bytes_where(GEMMA4_31B, |n| {
        n == "token_embd.weight" || n == "output_norm.weight"
    }) as i64;
    let layer =
        |i: usize| blocks[i] as i64 + layer_kv(is_full(i), 16384, 1024, 1024, 2048, true) as i64;
    let w = whatif(&["--gguf", p], TODAY_LOG);

    // The plan: 47 layers on CUDA0, 13 and the output on CUDA1 (as logged), each with the plan's compute
    // column (612 and 1071 MiB).
    let e = &w["estimate"];
    let gpus = e["placement"]["gpus"].as_array().unwrap();
    assert_eq!(int(&gpus[0]["layers"]), 47);
    assert_eq!(int(&gpus[1]["layers"]), 14);
    let cuda0: i64 = (0..47).map(layer).sum::<i64>() + (612 << 20);
    let cuda1: i64 = (47..60).map(layer).sum::<i64>() + output + (1071 << 20);
    assert_eq!(int(&gpus[0]["allocation"]), cuda0);
    assert_eq!(int(&gpus[1]["allocation"]), cuda1);
    assert_eq!(int(&e["figures"]["output"]), output);

    // Measured: everything on the 3090 with every GPU's compute buffers.
    let m = &w["measured"];
    let gpus = m["placement"]["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(int(&gpus[0]["layers"]), 61);
    let all: i64 = (0..60).map(layer).sum::<i64>() + output + int(&m["figures"]["graph"]);
    assert_eq!(int(&gpus[0]["allocation"]), all);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The blob the log names, found in `$OLLAMA_MODELS/blobs/` and in `~/.ollama/models/blobs/`, is used and
/// named; with neither holding it there is no warning and the report is the one `--no-model-search` writes.
#[test]
fn the_blob_the_log_names_is_found_where_ollama_keeps_it() {
    let dir = scratch("model-search");
    let models = dir.join("models");
    let blob = materialise(GEMMA3_12B, &models.join("blobs"), GEMMA3_12B_BLOB);
    let home = dir.join("home");
    let home_blob = materialise(
        GEMMA4_31B,
        &home.join(".ollama/models/blobs"),
        GEMMA4_31B_BLOB,
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let args = |l: &str| vec!["--format".to_string(), "json".to_string(), log(l)];
    let run_json = |l: &str, models: Option<&std::path::Path>, home: Option<&std::path::Path>| {
        let a = args(l);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        json(&run_searching(&a, models, home))
    };

    let found = run_json(K80_LOG, Some(&models), Some(&empty));
    let load = &found["loads"][0];
    assert_eq!(load["model"]["gguf"], blob.to_str().unwrap());
    let note = format!(
        "model file: {} ($OLLAMA_MODELS), its GGUF header gives the per-layer sizes",
        blob.display()
    );
    assert!(
        load["notes"]
            .as_array()
            .unwrap()
            .contains(&Value::from(note.clone())),
        "{note}: {}",
        load["notes"]
    );

    let found = run_json(TODAY_LOG, Some(&empty), Some(&home));
    let load = &found["loads"][0];
    assert_eq!(load["model"]["gguf"], home_blob.to_str().unwrap());
    assert!(load["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("(~/.ollama/models)")));

    // Absent: OLLAMA_MODELS and HOME without the blob, or not set at all.
    for (l, models, home) in [
        (K80_LOG, Some(empty.as_path()), Some(empty.as_path())),
        (TODAY_LOG, None, None),
        (TODAY_LOG, Some(models.as_path()), None),
    ] {
        let a = args(l);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let searched = run_searching(&a, models, home);
        assert_eq!(searched.status.code(), Some(0));
        assert_eq!(stderr(&searched), "");
        let plain = run(&["--format", "json", "--no-model-search", &log(l)], b"");
        assert_eq!(stdout(&searched), stdout(&plain), "{l}");
        let v: Value = serde_json::from_str(&stdout(&searched)).unwrap();
        assert_eq!(v["loads"][0]["model"]["gguf"], Value::Null);
        assert!(v["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["warnings"].as_array().unwrap().is_empty()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A model file that is not the log's model (another block count), found by the search or named with
/// `--gguf`, is a warning that it was not used, and the report is otherwise the one without it.
#[test]
fn a_file_with_another_block_count_is_not_used() {
    let dir = scratch("wrong-model");
    let plain = report(&["--no-model-search"], TODAY_LOG);
    // The gemma3 header under gemma4's blob name.
    let models = dir.join("models");
    let wrong = materialise(GEMMA3_12B, &models.join("blobs"), GEMMA4_31B_BLOB);
    let a = ["--format".to_string(), "json".to_string(), log(TODAY_LOG)];
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let searched = json(&run_searching(&a, Some(&models), None));
    let explicit = report(&["--gguf", wrong.to_str().unwrap()], TODAY_LOG);
    for (v, how) in [(&searched, "$OLLAMA_MODELS"), (&explicit, "--gguf")] {
        let warnings = v["inputs"][0]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let message = warnings[0]["message"].as_str().unwrap();
        assert_eq!(
            message,
            format!(
                "model file {} ({how}) has 48 blocks but the log's model has 60: not used",
                wrong.display()
            )
        );
        assert_eq!(without_warnings(v.clone()), plain);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A truncated header and a hostile one (a tensor count no file can back): a warning naming the file and the
/// byte, exit 0, the report otherwise unchanged.
#[test]
fn a_broken_model_file_is_a_warning() {
    let dir = scratch("broken-model");
    let plain = report(&["--no-model-search"], K80_LOG);
    let header = std::fs::read(
        root()
            .join("tests/data/gguf-headers")
            .join(format!("{GEMMA3_12B}.header.gguf")),
    )
    .unwrap();
    let truncated = dir.join("truncated.gguf");
    std::fs::write(&truncated, &header[..1000]).unwrap();
    let mut hostile_bytes = header.clone();
    // The tensor count (bytes 8..16 after magic and version) set to 2^60.
    hostile_bytes[8..16].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let hostile = dir.join("hostile.gguf");
    std::fs::write(&hostile, &hostile_bytes).unwrap();
    for file in [&truncated, &hostile] {
        let shown = file.display().to_string();
        let out = run(&["--format", "json", "--gguf", &shown, &log(K80_LOG)], b"");
        let v = json(&out);
        let warnings = v["inputs"][0]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let message = warnings[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "model file {shown} (--gguf) could not be read: {shown}: at byte "
            )),
            "{message}"
        );
        assert!(message.ends_with("; using the log's figures"), "{message}");
        assert_eq!(without_warnings(v), plain);
        // The text report says it too.
        let text = stdout(&run(&["--gguf", &shown, &log(K80_LOG)], b""));
        assert!(text.contains("could not be read"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
