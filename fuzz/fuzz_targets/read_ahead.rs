//! Reading ahead on a thread of its own (`Pipeline::read_ahead`, `src/pipeline/read_ahead.rs`) against reading
//! on one thread, on arbitrary bytes, through read buffers of two sizes. Invariants: no panic; the two reports
//! (summary, warnings, unrecognised lines, loads) are the same.
#![no_main]

use std::io::BufReader;
use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::pipeline::{Options, Pipeline};

/// The pipeline reading on one thread, and a clone of it that reads ahead.
fn pipelines() -> &'static Mutex<(Pipeline, Pipeline)> {
    static PIPELINES: OnceLock<Mutex<(Pipeline, Pipeline)>> = OnceLock::new();
    PIPELINES.get_or_init(|| {
        let options = Options {
            keep_unrecognized: true,
            ..Options::default()
        };
        let inline = Pipeline::new(&options).expect("built-in grammar");
        let mut ahead = inline.clone();
        ahead.read_ahead();
        Mutex::new((inline, ahead))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut pipelines = pipelines().lock().unwrap_or_else(|e| e.into_inner());
    for capacity in [256 * 1024, 61] {
        let inline = pipelines
            .0
            .run("fuzz.log", BufReader::with_capacity(capacity, data), &mut []);
        let ahead = pipelines
            .1
            .run("fuzz.log", BufReader::with_capacity(capacity, data), &mut []);
        assert_eq!(
            format!("{inline:?}"),
            format!("{ahead:?}"),
            "read ahead, buffers of {capacity} bytes"
        );
    }
});
