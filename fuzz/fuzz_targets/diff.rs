//! `vramdiff diff` of two logs: the input cut at its first NUL byte into an old and a new log, each carried
//! through the pipeline, its loads turned into the facts a diff compares (`diff::facts::from_concluded`),
//! paired and compared (`diff::diff`), then rendered as text, Markdown and JSON (`src/report/diff.rs`).
//!
//! The other side of `diff`, a `batch --out` folder, is read by `src/batch/diff_tables.rs` from Parquet files
//! with polars, behind the `batch` feature this crate leaves off (fuzz/README.md says why); what it reads
//! ends in the same `LoadFacts` this target compares. Invariants: no panic; the JSON diff is JSON.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::diff::{self, facts::from_concluded, LoadFacts};
use vramdiff::pipeline::{Options, Pipeline};
use vramdiff::report::diff as render;

fn pipeline() -> &'static Mutex<Pipeline> {
    static PIPELINE: OnceLock<Mutex<Pipeline>> = OnceLock::new();
    PIPELINE
        .get_or_init(|| Mutex::new(Pipeline::new(&Options::default()).expect("built-in grammar")))
}

fn facts(name: &str, bytes: &[u8]) -> Vec<LoadFacts> {
    let report = pipeline().lock().unwrap_or_else(|e| e.into_inner()).run(
        name,
        vramdiff::source::decoded(std::io::Cursor::new(bytes.to_vec())),
        &mut [],
    );
    report.loads.iter().map(from_concluded).collect()
}

fuzz_target!(|data: &[u8]| {
    let (old, new) = match data.iter().position(|&b| b == 0) {
        Some(cut) => (&data[..cut], &data[cut + 1..]),
        None => (data, data),
    };
    let old = facts("old.log", old);
    let new = facts("new.log", new);
    let result = diff::diff("old.log", "new.log", &old, &new);
    let _ = result.has_regression();
    let _ = render::text(&result);
    let _ = render::markdown(&result);
    serde_json::from_slice::<serde_json::Value>(&render::json(&result))
        .expect("the JSON diff is JSON");
});
