//! `vramdiff whatif --max-ctx --gguf FILE` on both founding cases with their models at real size (header-only
//! fixtures grown to full length): the context it prints, replayed with `whatif --ctx N --kv-type T --gguf FILE`,
//! keeps every layer on the GPUs, and the next step of 256 does not (as tests/max_ctx.rs, with the file's
//! layers instead of the log's averages).

use crate::founding_models::{materialise, GEMMA3_12B, GEMMA4_31B, K80_LOG, TODAY_LOG};
use crate::max_ctx::whatif;
use crate::util::scratch;

/// Every row of `--max-ctx` with the file: the printed num_ctx fits and the next step up does not (the check of
/// tests/max_ctx.rs), and the replay says it used the file's layers.
fn check(log: &str, extra: &[&str], estimator: bool) -> Vec<(String, i64)> {
    let rows = crate::max_ctx::check(log, extra, estimator);
    let mut args = vec!["--max-ctx"];
    args.extend_from_slice(extra);
    let w = whatif(log, &args);
    assert!(
        w["max_ctx"]["from"].to_string().contains("GGUF header")
            || w["estimate"]["figures"]["from"]
                .to_string()
                .contains("GGUF header")
            || w["measured"]["figures"]["from"]
                .to_string()
                .contains("GGUF header"),
        "{log}: the file's layers are used: {w}"
    );
    rows
}

/// The K80 case (Ollama's estimator, gemma3:12b on two K80 halves): with the file's blocks the f16 row still
/// holds the logged 4096, and a quantised cache holds at least as much.
#[test]
fn founding_k80_max_ctx_with_the_model_file() {
    let dir = scratch("maxctx-gguf-k80");
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
    let dir = scratch("maxctx-gguf-today");
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
    let dir = scratch("kv-growth-gguf-k80");
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
