//! `cargo bench`: times the library's whole pipeline (read, frame, prefilter, parse, assemble, reconcile)
//! on the 100 MiB journald input of `benches/run.sh`, generating it first if needed, and the start-up a run
//! on a short log is mostly made of. It prints numbers and asserts nothing; `bash benches/run.sh` is the full
//! comparison with grep.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    start_up(root);
    let file = format!("{root}/target/bench-data/journald-100M.log");
    if !Path::new(&file).exists() {
        std::fs::create_dir_all(format!("{root}/target/bench-data")).expect("target/bench-data");
        let status = Command::new("python3")
            .args([&format!("{root}/benches/gen.py"), "journald", "100M", &file])
            .status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!("could not generate {file} (needs python3); skipping");
            return;
        }
    }
    let bytes = std::fs::metadata(&file).expect("bench input").len() as f64;
    let options = vramdiff::pipeline::Options::default();
    let mut seconds: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            let analysis = vramdiff::pipeline::analyze(std::slice::from_ref(&file), &options)
                .expect("built-in grammar");
            std::hint::black_box(analysis);
            start.elapsed().as_secs_f64()
        })
        .collect();
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    println!(
        "journald-100M: median {:.1} ms over {} runs, {:.0} MB/s (analysis only, no report)",
        median * 1e3,
        seconds.len(),
        bytes / 1e6 / median
    );
}

/// Start-up: the grammar compiled and the searchers built (`Pipeline::new`), and a one-load sample analysed
/// whole (its rules' regexes built on first use), medians of 21 runs in this process (the prefix regexes,
/// built once a process, are paid by the first run only).
fn start_up(root: &str) {
    let options = vramdiff::pipeline::Options::default();
    let sample = format!("{root}/sample-logs/founding-k80-gemma3-12b.log");
    let median_ms = |run: &dyn Fn()| {
        let mut ms: Vec<f64> = (0..21)
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    };
    let new = median_ms(&|| {
        std::hint::black_box(
            vramdiff::pipeline::Pipeline::new(&options).expect("built-in grammar"),
        );
    });
    let sample_ms = median_ms(&|| {
        let analysis = vramdiff::pipeline::analyze(std::slice::from_ref(&sample), &options)
            .expect("built-in grammar");
        std::hint::black_box(analysis);
    });
    println!(
        "start-up: Pipeline::new median {new:.2} ms; the founding sample (one load) analysed, median {sample_ms:.2} ms"
    );
}
