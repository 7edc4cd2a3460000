//! `vramdiff whatif --max-ctx --gguf FILE` on both founding cases with their models at real size (header-only
//! fixtures grown to full length): the context it prints, replayed with `whatif --ctx N --kv-type T --gguf FILE`,
//! keeps every layer on the GPUs, and the next step of 256 does not (as tests/max_ctx.rs, with the file's
//! layers instead of the log's averages).

use serde_json::Value;

use crate::founding_models::{materialise, temp_dir, GEMMA3_12B, GEMMA4_31B, K80_LOG, TODAY_LOG};
use crate::util::{root, run, stderr, stdout};

fn whatif(log: &str, extra: &[&str]) -> Value {
    let path = root().join(log);
    let mut args = vec!["whatif", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let out = run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    json["loads"][0]["whatif"].clone()
}

/// Whether the replay at `--ctx num_ctx --kv-type kv_type` keeps every layer on the GPUs.
fn fits(log: &str, num_ctx: i64, kv_type: &str, extra: &[&str], estimator: bool) -> bool {
    let ctx = num_ctx.to_string();
    let mut args = vec!["--ctx", ctx.as_str(), "--kv-type", kv_type];
    args.extend_from_slice(extra);
    let w = whatif(log, &args);
    if estimator {
        let p = &w["estimate"]["placement"];
        p["offloaded"] == p["total"]
    } else {
        let verdict = w["measured"]["verdict"].as_str().unwrap_or_default();
        verdict.starts_with("fits on")
    }
}

/// Every row of `--max-ctx`: the printed num_ctx fits and the next step up does not (unless it is the cap).
fn check(log: &str, extra: &[&str], estimator: bool) -> Vec<(String, i64)> {
    let mut args = vec!["--max-ctx"];
    args.extend_from_slice(extra);
    let w = whatif(log, &args);
    let m = &w["max_ctx"];
    assert_eq!(m["step"], 256);
    assert!(
        m["from"].to_string().contains("GGUF header")
            || w["estimate"]["figures"]["from"]
                .to_string()
                .contains("GGUF header")
            || w["measured"]["figures"]["from"]
                .to_string()
                .contains("GGUF header"),
        "{log}: the file's layers are used: {w}"
    );
    let mut out = Vec::new();
    for row in m["rows"].as_array().unwrap() {
        let t = row["kv_type"].as_str().unwrap();
        let n = row["num_ctx"]
            .as_i64()
            .unwrap_or_else(|| panic!("{log} {t}: {row}"));
        assert_eq!(n % 256, 0);
        assert!(fits(log, n, t, extra, estimator), "{log} {t}: {n} must fit");
        if row["at_cap"] == false {
            assert!(
                !fits(log, n + 256, t, extra, estimator),
                "{log} {t}: {} must not fit",
                n + 256
            );
        }
        out.push((t.to_string(), n));
    }
    assert_eq!(out.len(), 3, "f16, q8_0 and q4_0");
    out
}

/// The K80 case (Ollama's estimator, gemma3:12b on two K80 halves): with the file's blocks the f16 row still
/// holds the logged 4096, and a quantised cache holds at least as much.
#[test]
fn founding_k80_max_ctx_with_the_model_file() {
    let dir = temp_dir("maxctx-gguf-k80");
    let path = materialise(GEMMA3_12B, &dir, "gemma3.gguf");
    let p = path.to_str().unwrap();
    let rows = check(K80_LOG, &["--gguf", p], true);
    assert!(rows[0].1 >= 4096, "the logged 4096 fitted: {rows:?}");
    assert!(rows[0].1 <= rows[1].1 && rows[1].1 <= rows[2].1, "{rows:?}");
    let one = check(K80_LOG, &["--gguf", p, "--gpu-count", "1"], true);
    assert!(one[0].1 < rows[0].1, "{one:?} vs {rows:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Today's case (llama-server --fit, gemma4:31b on an RTX 3090 + RTX 4060): the file's layers and its output
/// layer (the tied embedding) instead of the measured average.
#[test]
fn founding_today_max_ctx_with_the_model_file() {
    let dir = temp_dir("maxctx-gguf-today");
    let path = materialise(GEMMA4_31B, &dir, "gemma4.gguf");
    let p = path.to_str().unwrap();
    let rows = check(TODAY_LOG, &["--gguf", p], false);
    assert!(rows[1].1 > 16384, "the logged 16384 q8_0 fitted: {rows:?}");
    let one = check(TODAY_LOG, &["--gguf", p, "--gpus", "0"], false);
    assert!(
        one[1].1 >= 16384 && one[1].1 < rows[1].1,
        "{one:?} vs {rows:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The estimator's KV at another context grows as the file's cache does, not linearly: gemma3:12b has 48 layers,
/// one in six with full attention, the rest with a 1024-token window (llama.cpp sizes their cache to
/// 1024 + 512 ubatch = 1536 cells), 8 KiB of f16 K+V per token and layer (8 KV heads × 256 × 2 × 2 bytes). At the
/// logged 4096: 8 × 4096 × 8 KiB + 40 × 1536 × 8 KiB = 256 + 480 = 736 MiB, the log's `memory.required.kv`. At
/// 8192 only the 8 full layers grow: 512 + 480 = 992 MiB (linear scaling would say 1472).
#[test]
fn the_estimators_kv_grows_as_the_files_cache_does() {
    let dir = temp_dir("kv-growth-gguf-k80");
    let path = materialise(GEMMA3_12B, &dir, "gemma3.gguf");
    let w = whatif(
        K80_LOG,
        &["--ctx", "8192", "--gguf", path.to_str().unwrap()],
    );
    let f = &w["estimate"]["figures"];
    let kv_mib = f["layer_kv"].as_f64().unwrap() * f["blocks"].as_f64().unwrap() / 1048576.0;
    assert!((kv_mib - 992.0).abs() < 0.5, "{kv_mib} MiB: {f}");
    let without = whatif(K80_LOG, &["--ctx", "8192", "--no-model-search"]);
    let f = &without["estimate"]["figures"];
    let linear = f["layer_kv"].as_f64().unwrap() * f["blocks"].as_f64().unwrap() / 1048576.0;
    assert!(
        (linear - 1472.0).abs() < 0.5,
        "without the file, linear: {linear} MiB"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
