//! `vramdiff whatif` against the real llama.cpp: each prediction is made from one real run's log and checked
//! against the figure the real run with those settings printed (`tests/data/oracle-levers/`, llama.cpp build
//! b11549 through xllamacpp 2026.10.11549 on the CPU; the README there gives the models and settings). The
//! expected figures are read from the target run's own lines, never typed in: llama.cpp prints MiB with two
//! decimals, so a prediction agrees when it is within half a hundredth of a MiB of each line it sums.

use serde_json::Value;

use crate::util::{root, run, stderr, stdout};

const MIB: f64 = 1048576.0;

fn data(name: &str) -> String {
    root()
        .join("tests/data/oracle-levers")
        .join(format!("{name}.log"))
        .to_string_lossy()
        .into_owned()
}

/// The figures (MiB) of the lines of `log` holding `marker`, read as `… = X MiB` (the first `= N MiB`).
fn printed(log: &str, marker: &str) -> Vec<f64> {
    std::fs::read_to_string(data(log))
        .unwrap()
        .lines()
        .filter(|l| l.contains(marker))
        .map(|l| {
            let after = &l[l.find(marker).unwrap() + marker.len()..];
            let after = &after[after.find('=').unwrap() + 1..];
            after.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// The KV caches' sizes a real run printed (`llama_kv_cache: size = X MiB (…)`, one line per cache).
fn real_kv(log: &str) -> Vec<f64> {
    let kv = printed(log, "llama_kv_cache: size");
    assert!(!kv.is_empty(), "{log}: no KV size line");
    kv
}

/// The CPU compute buffer a real run printed (`sched_reserve: CPU compute buffer size = X MiB`).
pub fn real_compute(log: &str) -> f64 {
    let c = printed(log, "CPU compute buffer size");
    assert_eq!(c.len(), 1, "{log}: one compute buffer line");
    c[0]
}

/// `vramdiff whatif --format json ARGS LOG`'s replay of the load.
fn whatif(log: &str, args: &[&str]) -> Value {
    let log = data(log);
    let mut all = vec!["whatif", "--format", "json"];
    all.extend_from_slice(args);
    all.push(&log);
    let out = run(&all, b"");
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["loads"][0]["whatif"].clone()
}

/// The one effect on `figure` of a replay.
fn effect(w: &Value, figure: &str) -> Value {
    let all: Vec<&Value> = w["effects"]
        .as_array()
        .unwrap_or_else(|| panic!("no effects: {w}"))
        .iter()
        .filter(|e| e["figure"] == figure)
        .collect();
    assert_eq!(all.len(), 1, "one {figure} effect: {w}");
    all[0].clone()
}

/// `bytes` agrees with the printed lines `real` (MiB, two decimals each) within their rounding.
fn assert_printed(bytes: i64, real: &[f64], what: &str) {
    let got = bytes as f64 / MIB;
    let want: f64 = real.iter().sum();
    let slack = 0.005 * real.len() as f64 + 1e-9;
    assert!(
        (got - want).abs() <= slack,
        "{what}: predicted {got:.4} MiB, the real run printed {real:?} = {want:.2} MiB"
    );
}

/// The KV effect of `args` on `from`, against the KV lines of the real run `to`; returns the effect's text.
fn kv_prediction(from: &str, args: &[&str], to: &str) -> String {
    let w = whatif(from, args);
    let kv = effect(&w, "kv-cache");
    assert_printed(kv["before"].as_i64().unwrap(), &real_kv(from), from);
    assert_printed(
        kv["after"].as_i64().unwrap(),
        &real_kv(to),
        &format!("{from} {args:?} → {to}"),
    );
    kv["text"].as_str().unwrap().to_string()
}

// Point 2: `--ctx` is the context a slot sees. `-c 8192 -np 4` (kv_unified false) gives each slot 2048 cells;
// `--ctx 4096` is `-c 16384 -np 4`, whose real run allocated twice the cache.
#[test]
fn ctx_is_the_context_per_slot_on_a_split_cache() {
    let text = kv_prediction("llama-c8192-np4", &["--ctx", "4096"], "llama-c16384-np4");
    assert!(
        text.contains("context per slot 2048 → 4096 (llama-server -c 8192 → 16384 with 4 slots)"),
        "{text}"
    );
    // gemma3: the full cache doubles, the four window caches (one per slot) stay.
    kv_prediction("gemma3-c8192-np4", &["--ctx", "4096"], "gemma3-c16384-np4");
    kv_prediction("gemma3-c8192-np1", &["--ctx", "16384"], "gemma3-c16384-np1");
}

// Point 2: a model without a sliding window is not said to have one.
#[test]
fn a_model_without_a_window_gets_no_window_words() {
    for args in [["--ctx", "4096"], ["--parallel", "2"]] {
        let w = whatif("llama-c8192-np4", &args);
        let all = w.to_string();
        assert!(!all.contains("sliding"), "{args:?}: {all}");
    }
    // Ollama's estimator on llama 3.1 8B (sample 001), whose layout comes from the log's hyperparameters.
    let log = root().join("sample-logs/001-kaggle-t4-llama31-8b.log");
    let out = run(&["whatif", "--ctx", "8192", &log.to_string_lossy()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("as the layout's cache grows"), "{text}");
    assert!(!text.contains("sliding"), "{text}");
    let out = run(&["whatif", "--max-ctx", &log.to_string_lossy()], b"");
    let text = stdout(&out);
    assert!(text.contains("layout's cache grows"), "{text}");
    assert!(!text.contains("sliding"), "{text}");
}

// Point 3: llama-server's `-np auto` (4 slots, kv_unified true) gives every slot the whole -c: `--ctx 16384`
// is `-c 16384`, one stream of 16384 cells, not 4 × 16384.
#[test]
fn ctx_on_a_unified_cache_is_the_whole_context() {
    let text = kv_prediction(
        "llama-c8192-npauto",
        &["--ctx", "16384"],
        "llama-c16384-npauto",
    );
    assert!(
        text.contains(
            "context per slot 8192 → 16384 (llama-server -c 8192 → 16384: the 4 slots share one cache and each sees all of it)"
        ),
        "{text}"
    );
    // gemma3's window cache in a unified stream holds pad256(window × 4 slots + ubatch) cells, whatever -c.
    kv_prediction(
        "gemma3-c8192-npauto",
        &["--ctx", "16384"],
        "gemma3-c16384-npauto",
    );
}

// Point 4: `--parallel` on a llama.cpp log keeps each slot's context and adds slots: `-np 1 → 2` is `-c 8192 →
// 16384 -np 2`, and each new sequence has its own window cache.
#[test]
fn parallel_adds_slots_with_their_own_window_caches() {
    let text = kv_prediction(
        "gemma3-c8192-np1",
        &["--parallel", "2"],
        "gemma3-c16384-np2",
    );
    assert!(
        text.contains("context per slot 8192 (llama-server -c 8192 → 16384 with 1 → 2 slots)"),
        "{text}"
    );
    // Fewer slots, each keeping its 4096: -c 16384 -np 4 → -c 8192 -np 2.
    kv_prediction(
        "gemma3-c16384-np4",
        &["--parallel", "2"],
        "gemma3-c8192-np2",
    );
    kv_prediction("llama-c16384-np4", &["--parallel", "2"], "llama-c8192-np2");
}

// Point 1: a sliding-window cache holds pad256(window + n_ubatch) cells a sequence, not the window: `inspect`
// says so for the tiny gemma3 (window 512) and the real run of the same file printed that cache at -c 8192.
#[test]
fn inspect_sizes_the_window_cache_as_llama_cpp_does() {
    let gguf = root().join("tests/data/oracle-levers/gemma3-tiny.gguf");
    let out = run(
        &["inspect", "--format", "json", &gguf.to_string_lossy()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let log = std::fs::read_to_string(data("gemma3-c8192-np1")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("creating     SWA KV cache, size = "))
        .unwrap();
    let cells: u64 = line
        .rsplit("size = ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(v["sliding_window_cells"].as_u64(), Some(cells), "{line}");
    assert_ne!(
        v["sliding_window"].as_u64(),
        Some(cells),
        "the bare window is not the cache"
    );
    // The window cache's line is the smaller of the two `llama_kv_cache: size` lines (1 slot).
    let kv = real_kv("gemma3-c8192-np1");
    let window = kv.iter().cloned().fold(f64::MAX, f64::min);
    assert_printed(
        v["kv_cache"]["f16"]["sliding_window_bytes_per_slot"]
            .as_i64()
            .unwrap(),
        &[window],
        "the window layers' cache per slot",
    );
}

/// The compute-buffer effect of `args` on `from` against the CPU compute buffer of the real run `to`: within
/// the printed rounding, scaled as the prediction scales the logged figure.
fn compute_prediction(from: &str, args: &[&str], to: &str) -> String {
    let w = whatif(from, args);
    let c = effect(&w, "compute-buffer");
    assert_eq!(c["device"], "CPU", "{c}");
    let before = c["before"].as_i64().unwrap();
    let after = c["after"].as_i64().unwrap();
    assert_printed(before, &[real_compute(from)], from);
    let (got, want) = (after as f64 / MIB, real_compute(to));
    // The logged figure's ±0.005 MiB grows with the scale, the target's adds its own.
    let slack = 0.005 * (got / (before as f64 / MIB)).max(1.0) + 0.005 + 1e-9;
    assert!(
        (got - want).abs() <= slack,
        "{from} {args:?} → {to}: predicted {got:.4} MiB, the real run printed {want:.2} MiB"
    );
    c["text"].as_str().unwrap().to_string()
}

// Point 5: a CPU-only log answers `--ubatch` with its compute buffer (it said "no replay").
// Point 6: the buffer follows llama.cpp's law (src/replay/levers/compute.rs): proportional to n_ubatch at a
// fixed context, but for a window cache's cells, which grow with it (gemma3: 1024 → 2560 cells at -ub 2048).
#[test]
fn ubatch_predicts_the_cpu_compute_buffer() {
    let text = compute_prediction(
        "llama-c8192-np1",
        &["--ubatch", "2048"],
        "llama-faon-c8192-u2048-np1",
    );
    assert!(text.starts_with("the CPU's compute buffer:"), "{text}");
    // The log says `flash_attn = auto`, then `resolve_fused_ops: Flash Attention enabled`: no assumption left.
    assert!(
        text.contains("with flash attention") && !text.contains("assumed"),
        "{text}"
    );
    compute_prediction(
        "llama-c8192-np1",
        &["--ubatch", "128"],
        "llama-faon-c8192-u128-np1",
    );
    compute_prediction(
        "llama-faoff-c8192-u512-np1",
        &["--ubatch", "2048"],
        "llama-faoff-c8192-u2048-np1",
    );
    // The window's cells: linear would say 42.12 MiB for the real 48.11.
    compute_prediction(
        "gemma3-c8192-np1",
        &["--ubatch", "2048"],
        "gemma3-faon-c8192-u2048-np1",
    );
    compute_prediction(
        "gemma3-c8192-np1",
        &["--ubatch", "128"],
        "gemma3-faon-c8192-u128-np1",
    );
    compute_prediction(
        "gemma3-faoff-c8192-u512-np1",
        &["--ubatch", "2048"],
        "gemma3-faoff-c8192-u2048-np1",
    );
    // The KV effect of the micro-batch: the window cache's cells grow with it.
    let w = whatif("gemma3-c8192-np1", &["--ubatch", "2048"]);
    assert!(
        w["effects"].as_array().is_some_and(|e| !e.is_empty()),
        "{w}"
    );
}

// Point 6: with flash attention the context adds 2 bytes × n_ubatch a cell (the f16 masks), whatever the
// slots: holding the buffer fixed was 37 % low at -c 16384, scaling it with the context 26 % high.
#[test]
fn ctx_and_parallel_predict_the_cpu_compute_buffer() {
    compute_prediction("llama-c8192-np1", &["--ctx", "16384"], "llama-c16384-np1");
    compute_prediction(
        "llama-c8192-npauto",
        &["--ctx", "16384"],
        "llama-c16384-npauto",
    );
    compute_prediction("llama-c8192-np4", &["--ctx", "4096"], "llama-c16384-np4");
    compute_prediction("gemma3-c8192-np1", &["--ctx", "16384"], "gemma3-c16384-np1");
    compute_prediction(
        "gemma3-c8192-npauto",
        &["--ctx", "16384"],
        "gemma3-c16384-npauto",
    );
    // More slots, each with its 8192: the cells per stream stay, so does the buffer.
    compute_prediction(
        "gemma3-c8192-np1",
        &["--parallel", "2"],
        "gemma3-c16384-np2",
    );
    // Without flash attention the f32 scores of every head grow with the context: 4 × (n_head + 1) bytes a
    // cell and token, n_head from the log's print_info line (held proportional to the cells, the figure was an
    // upper bound, 167.02 for 163.51).
    let w = whatif("llama-faoff-c8192-u512-np1", &["--ctx", "16384"]);
    let c = effect(&w, "compute-buffer");
    let (got, want) = (
        c["after"].as_i64().unwrap() as f64 / MIB,
        real_compute("llama-faoff-c16384-u512-np1"),
    );
    assert!((got - want).abs() <= 0.005, "{got} vs {want}");
    assert!(c["text"].as_str().unwrap().contains("n_head 4"), "{c}");
}
