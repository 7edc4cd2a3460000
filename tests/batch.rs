//! `vramdiff batch` end to end: tables that read back, the summary and calibration, a corrupt input among good
//! ones, the CI gate, a planted regression found by the baseline compare, and thread-count independence.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::util::{analyze, expect, root, run, sample_names, stderr, stdout};

fn scratch(tag: &str) -> PathBuf {
    crate::util::scratch(&format!("batch-{tag}"))
}

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The row of the `loads` table read from the file whose name contains `part`.
fn row_of(loads: &DataFrame, part: &str) -> usize {
    (0..loads.height())
        .find(|&i| {
            vramdiff::batch::tables::text_at(loads, "file", i).is_some_and(|f| f.contains(part))
        })
        .unwrap_or_else(|| panic!("no load of {part}"))
}

fn read(p: &Path) -> DataFrame {
    vramdiff::batch::tables::read_parquet(p).unwrap()
}

#[test]
fn a_folder_of_samples_gives_tables_summary_calibration_and_charts() {
    let out = scratch("samples");
    let run_out = run(
        &["batch", "sample-logs", "--out", text(&out), "--jsonl"],
        b"",
    );
    assert_eq!(run_out.status.code(), Some(0), "{}", stderr(&run_out));
    let loads = read(&out.join("loads.parquet"));
    // The walk reads every sample but no `.expect.toml`: the loads are those the samples' expect files count, plus
    // what README.md gives, which the walk reads like any file (it quotes log lines; one is taken for a partial
    // load).
    let samples = sample_names();
    let readme = analyze(&[&root().join("sample-logs/README.md")])
        .loads
        .len();
    let want: usize = readme
        + samples
            .iter()
            .map(|n| expect(&format!("sample-logs/{n}")).loads)
            .sum::<usize>();
    assert_eq!(loads.height(), want, "every load of every sample");
    for name in [
        "file",
        "load",
        "key",
        "model",
        "gpu_names",
        "memory_required_full",
        "est_graph",
        "act_graph",
        "ratio_graph",
        "verdict_graph",
        "findings",
        "replay_gpus",
    ] {
        assert!(loads.column(name).is_ok(), "loads has {name}");
    }
    // The founding load: one row with its figures.
    let founding = loads
        .clone()
        .lazy()
        .filter(col("file").eq(lit("sample-logs/founding-k80-gemma3-12b.log")))
        .collect()
        .unwrap();
    assert_eq!(founding.height(), 1);
    let get = |c: &str| founding.column(c).unwrap().get(0).unwrap().to_string();
    assert_eq!(get("layers_split"), "\"1,48\"");
    assert_eq!(
        get("replay_gpus"),
        "1",
        "the measured replay fits it on one die"
    );
    assert!(get("findings").contains("needless-split"));
    let ratio = founding
        .column("ratio_graph")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    // The graph as ollama37 241a0340 charged it: 190 MiB + 1.3 GiB + the 1.0 GiB projector graph.
    assert!((ratio - 1.18 / 2.49).abs() < 0.01, "{ratio}");
    let components = read(&out.join("components.parquet"));
    assert!(
        components.height() > loads.height() * 2,
        "long form: component and device rows"
    );
    for f in [
        "loads.csv",
        "components.csv",
        "loads.jsonl",
        "calibration.csv",
        "summary.md",
        "estimated-vs-actual.png",
        "ratio-graph.png",
    ] {
        assert!(out.join(f).exists(), "{f} written");
    }
    let csv = std::fs::read_to_string(out.join("loads.csv")).unwrap();
    assert!(
        csv.starts_with("file,load,first_line,last_line,key,"),
        "stable header"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert_eq!(
        summary,
        stdout(&run_out),
        "the summary printed is the summary written"
    );
    let files = samples.len() + 1;
    assert!(
        summary.contains(&format!(
            "{files} files read (0 with an error, skipped), {want} loads."
        )),
        "{summary}"
    );
    assert!(
        summary.contains("| graph | 3.7 | 2 | 0.476 |"),
        "calibration row for the K80 graph:\n{summary}"
    );
    // The founding K80 load, its CI copy, and the two founding cases of today.
    assert!(
        summary.contains("`needless-split` | warning | 4 |"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_corrupt_or_missing_file_is_reported_and_the_others_processed() {
    let dir = scratch("corrupt");
    std::fs::copy(
        root().join("sample-logs/founding-k80-gemma3-12b.log"),
        dir.join("good.log"),
    )
    .unwrap();
    // A gzip file whose stream is corrupt after the header, and a compressed copy of a good log.
    let mut corrupt = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    corrupt.extend(b"this is not a deflate stream at all".repeat(20));
    std::fs::write(dir.join("ci-run-7.log.gz"), &corrupt).unwrap();
    let good = std::fs::read(root().join("sample-logs/001-kaggle-t4-llama31-8b.log")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &good).unwrap();
    std::fs::write(dir.join("ci-run-8.log.gz"), gz.finish().unwrap()).unwrap();
    let missing = dir.join("missing.log");
    let out = run(
        &["batch", text(&dir), text(&missing), "--threads", "2"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        summary.contains("4 files read (2 with an error, skipped), 2 loads."),
        "{summary}"
    );
    assert!(
        summary.contains("ci-run-7.log.gz"),
        "the corrupt file is named:\n{summary}"
    );
    assert!(summary.contains("missing.log"), "the missing file is named");
    assert!(stderr(&out).contains("2 skipped"));
    // Nothing readable at all is an error.
    let none = run(&["batch", text(&missing)], b"");
    assert_eq!(none.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_gate_fails_on_findings_and_on_estimate_error() {
    let founding = "sample-logs/founding-k80-gemma3-12b.log";
    let ok = run(&["batch", founding], b"");
    assert_eq!(ok.status.code(), Some(0), "no gate by default");
    let warn = run(&["batch", founding, "--fail-on", "warning"], b"");
    assert_eq!(warn.status.code(), Some(1));
    assert!(
        stderr(&warn).contains("needless-split"),
        "{}",
        stderr(&warn)
    );
    let graph = run(&["batch", founding, "--max-error", "graph=25"], b"");
    assert_eq!(graph.status.code(), Some(1));
    assert!(
        stderr(&graph).contains(":9: graph actual/estimated 0.476"),
        "{}",
        stderr(&graph)
    );
    let weights = run(&["batch", founding, "--max-error", "weights_gpu=5"], b"");
    assert_eq!(weights.status.code(), Some(0), "weights are within 5 %");
    let bad = run(&["batch", founding, "--max-error", "vram=5"], b"");
    assert_eq!(bad.status.code(), Some(2), "unknown component");
}

#[test]
fn the_baseline_compare_finds_a_planted_regression() {
    let before = scratch("before");
    let after = scratch("after");
    let log =
        std::fs::read_to_string(root().join("sample-logs/founding-k80-gemma3-12b.log")).unwrap();
    std::fs::write(before.join("ci.log"), &log).unwrap();
    // The planted regression: the next build's runner allocates 1 GiB more weights on CUDA1.
    let worse = log.replace(
        r#"buffer=CUDA1 size="7.4 GiB""#,
        r#"buffer=CUDA1 size="8.4 GiB""#,
    );
    assert_ne!(worse, log);
    std::fs::write(after.join("ci.log"), &worse).unwrap();
    let base_out = before.join("out");
    assert_eq!(
        run(&["batch", text(&before), "--out", text(&base_out)], b"")
            .status
            .code(),
        Some(0)
    );
    let baseline = base_out.join("loads.parquet");
    let cmp = run(&["batch", text(&after), "--baseline", text(&baseline)], b"");
    assert_eq!(cmp.status.code(), Some(0), "reported, not gated");
    let summary = stdout(&cmp);
    assert!(summary.contains("**REGRESSION**"), "{summary}");
    assert!(
        summary.contains("uses more VRAM: 8.72 GiB → 9.72 GiB"),
        "{summary}"
    );
    assert!(
        summary.contains("weights\\_gpu estimate error grew"),
        "{summary}"
    );
    let gated = run(
        &[
            "batch",
            text(&after),
            "--baseline",
            text(&baseline),
            "--fail-on-regression",
        ],
        b"",
    );
    assert_eq!(gated.status.code(), Some(1));
    // The same logs against their own baseline: nothing changed.
    let same = run(
        &[
            "batch",
            text(&before),
            "--baseline",
            text(&baseline),
            "--fail-on-regression",
        ],
        b"",
    );
    assert_eq!(same.status.code(), Some(0));
    assert!(stdout(&same).contains("0 loads changed, 0 with a regression."));
    let _ = std::fs::remove_dir_all(&before);
    let _ = std::fs::remove_dir_all(&after);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let one = scratch("t1");
    let two = scratch("t2");
    run(
        &[
            "batch",
            "sample-logs",
            "--threads",
            "1",
            "--out",
            text(&one),
        ],
        b"",
    );
    run(
        &[
            "batch",
            "sample-logs",
            "--threads",
            "2",
            "--out",
            text(&two),
        ],
        b"",
    );
    // Every file, the Parquet ones too: the tables, charts and summary are written beside each other on the
    // threads there are (src/batch/mod.rs), each from the same rows in the same order.
    for f in [
        "loads.csv",
        "loads.parquet",
        "components.csv",
        "components.parquet",
        "calibration.csv",
        "calibration.parquet",
        "summary.md",
        "estimated-vs-actual.png",
    ] {
        assert_eq!(
            std::fs::read(one.join(f)).unwrap(),
            std::fs::read(two.join(f)).unwrap(),
            "{f}"
        );
    }
    let glob = run(&["batch", "sample-logs/00*.log"], b"");
    assert!(stdout(&glob).contains("6 files read"), "{}", stdout(&glob));
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&two);
}

/// One file and two threads: the file is read ahead on a thread of its own (src/batch/ingest.rs), and the
/// tables are the ones one thread writes.
#[test]
fn one_file_read_ahead_gives_the_tables_of_one_thread() {
    let one = scratch("one-file-t1");
    let two = scratch("one-file-t2");
    let file = "sample-logs/032-journald-catalan-2x-quadro-newengine-fit.log";
    for (threads, out) in [("1", &one), ("2", &two)] {
        run(
            &["batch", file, "--threads", threads, "--out", text(out)],
            b"",
        );
    }
    for f in ["loads.csv", "components.csv", "summary.md"] {
        let table = std::fs::read(one.join(f)).unwrap();
        assert_eq!(table, std::fs::read(two.join(f)).unwrap(), "{f}");
    }
    let loads = std::fs::read_to_string(one.join("loads.csv")).unwrap();
    assert!(loads.lines().count() > 1, "{loads}");
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&two);
}

/// vLLM and SGLang loads go through batch like any other: the `runtime` and `runtime_version` columns name the
/// engine and its version (Ollama's loads keep theirs), the component rows carry the runtime too.
#[test]
fn serving_loads_have_their_runtime_and_version_in_the_tables() {
    let out = scratch("serving");
    let run_out = run(
        &[
            "batch",
            "sample-logs/804-vllm-0102-2xh200-tp2-qwen3-next-80b-advisory-bytes-dup-lines.log",
            "sample-logs/811-sglang-043-4xl4-tp4-qwq-32b-full-start-graph-end-mem-usage.log",
            "sample-logs/004-windows-rocm-780m-gemma3-27b-newengine.log",
            "--out",
            text(&out),
            "--fail-on",
            "never",
        ],
        b"",
    );
    assert_eq!(run_out.status.code(), Some(0), "{}", stderr(&run_out));
    let loads = read(&out.join("loads.parquet"));
    let by_file = |file_part: &str| row_of(&loads, file_part);
    let cell = |row: usize, column: &str| vramdiff::batch::tables::text_at(&loads, column, row);
    let vllm = by_file("804-vllm");
    assert_eq!(cell(vllm, "runtime").as_deref(), Some("vllm"));
    assert_eq!(cell(vllm, "runtime_version").as_deref(), Some("0.10.2"));
    let sglang = by_file("811-sglang");
    assert_eq!(cell(sglang, "runtime").as_deref(), Some("sglang"));
    assert_eq!(cell(sglang, "runtime_version"), None);
    let ollama = by_file("004-windows");
    assert_eq!(cell(ollama, "runtime").as_deref(), Some("ollama"));
    assert_eq!(cell(ollama, "runtime_version").as_deref(), Some("0.9.6"));
    let components = read(&out.join("components.parquet"));
    let runtimes: Vec<Option<String>> = (0..components.height())
        .map(|i| vramdiff::batch::tables::text_at(&components, "runtime", i))
        .collect();
    assert!(runtimes.contains(&Some("vllm".to_string())));
    assert!(runtimes.contains(&Some("sglang".to_string())));
    // Two ranks of the TP2 vLLM load: one device row each.
    let devices = (0..components.height())
        .filter(|&i| {
            vramdiff::batch::tables::text_at(&components, "file", i)
                .is_some_and(|f| f.contains("804-vllm"))
                && vramdiff::batch::tables::text_at(&components, "kind", i).as_deref()
                    == Some("device")
        })
        .count();
    assert_eq!(devices, 2);
}

#[test]
fn the_scorecard_sets_each_pair_s_prediction_beside_its_measurement_and_gates_on_it() {
    // Two real llama.cpp runs of one model pasted one after the other: the KV type changed (f16 → q8_0).
    let dir = scratch("pairs");
    let logs = root().join("tests/data/oracle/b11549/logs");
    let mut paste = std::fs::read(logs.join("llama-gqa--ctx4096.log")).unwrap();
    paste.extend(std::fs::read(logs.join("llama-gqa--kq8_0-vq8_0-faon.log")).unwrap());
    let log = dir.join("kv-type-pair.log");
    std::fs::write(&log, paste).unwrap();
    let passed = run(&["batch", text(&log), "--max-error", "prediction=5"], b"");
    assert_eq!(passed.status.code(), Some(0), "{}", stderr(&passed));
    let summary = stdout(&passed);
    assert!(
        summary.contains("## Pairs of loads: predicted against measured"),
        "{summary}"
    );
    // The KV predicted from the f16 run's 4.00 MiB at q8_0 meets the q8_0 run's 2.12 MiB within the rounding.
    assert!(
        summary.contains(
            "| 1 → 2 | llama-server b0-unknown | kv-type f16 → q8\\_0 | kv | 2.1 MiB | 2.1 MiB |"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("| llama-server | kv-type | kv | 1 | 1 | 1 | – |"),
        "{summary}"
    );
    // The compute buffer, predicted unchanged, grew by 30 KiB (0.4 %): beyond the rounding, so a tight gate
    // fails on it.
    let failed = run(&["batch", text(&log), "--max-error", "prediction=0.1"], b"");
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("loads 1 → 2 (kv-type f16 → q8_0): compute predicted -0.4 %"),
        "{}",
        stderr(&failed)
    );
}

#[test]
fn batch_pairs_the_loads_of_one_model_across_its_files() {
    // sample-logs/008-… and 201-…: granite 8b (one blob) on one M1 Pro, in two files. Each file has one load,
    // so only the pair across the files exists; it is the pair the two files given together make.
    let dir = scratch("pairs-across");
    let out = dir.join("out");
    let (old, new) = (
        "sample-logs/008-macos-metal-m1pro-granite-8b-128k-partial.log",
        "sample-logs/201-macos-metal-m1pro-granite8b-full-mdquote.log",
    );
    let passed = run(&["batch", old, new, "--out", text(&out)], b"");
    assert_eq!(passed.status.code(), Some(0), "{}", stderr(&passed));
    let summary = stdout(&passed);
    assert!(
        summary.contains(&format!(
            "| `{new}` | {old} #1 → 1 | Ollama's estimator | ctx 128000 → 32768, parallel 1 → 4, ngl 20 → 37 | kv | 4.51 GiB | 4.50 GiB | +5.7 MiB | within rounding |"
        )),
        "{summary}"
    );
    // The same rows as a table: both loads' files, and the ranges of both figures.
    let pairs = read(&out.join("pairs.parquet"));
    let kv = (0..pairs.height())
        .find(|&i| {
            vramdiff::batch::tables::text_at(&pairs, "component", i).as_deref() == Some("kv")
        })
        .expect("the KV row");
    let cell = |c: &str| vramdiff::batch::tables::text_at(&pairs, c, kv);
    let number = |c: &str| vramdiff::batch::tables::int_at(&pairs, c, kv);
    assert_eq!(cell("file_first").as_deref(), Some(old));
    assert_eq!(cell("file").as_deref(), Some(new));
    assert_eq!(cell("verdict").as_deref(), Some("within rounding"));
    assert_eq!(number("measured"), Some(4608 << 20));
    let (low, high) = (
        number("predicted_low").unwrap(),
        number("predicted_high").unwrap(),
    );
    assert!(low <= number("predicted").unwrap() && number("predicted").unwrap() <= high);
    assert!(low <= number("measured_high").unwrap() && number("measured_low").unwrap() <= high);
    assert!(out.join("pairs.csv").exists());
    // The files in the other order: the 32768-token run first, the pair the other way round.
    let reversed = dir.join("reversed");
    std::fs::create_dir_all(&reversed).unwrap();
    for (name, from) in [("a.log", new), ("b.log", old)] {
        std::fs::copy(root().join(from), reversed.join(name)).unwrap();
    }
    let other = run(&["batch", text(&reversed)], b"");
    assert!(
        stdout(&other).contains("ctx 32768 → 128000, parallel 4 → 1, ngl 37 → 20"),
        "{}",
        stdout(&other)
    );
}

#[test]
fn serving_peaks_are_columns_of_the_loads_table() {
    // Issue 54: 1201's prompt cache peaks at 523.390 MiB of state + 10 × 170.013 MiB of checkpoints (line 57), its
    // checkpoints at 10 × 170.013 MiB (line 34), against a cache limit of 8192 MiB; 811's SGLang prefill line
    // gives a KV fill of 0.00; 1206 printed no limit.
    let out = scratch("serving-peaks");
    let run_out = run(
        &[
            "batch",
            "sample-logs/1201-llama-server-rtx5090-gemma4-12b-np1-ctx256k-checkpoints-7-to-10-prompt-cache-2223mib.log",
            "sample-logs/811-sglang-043-4xl4-tp4-qwq-32b-full-start-graph-end-mem-usage.log",
            "sample-logs/1206-llama-server-systemd-rtx3090-16gb-ram-gemma4-31b-prompt-save-3462mib-oom-killed.log",
            "--out",
            text(&out),
            "--fail-on",
            "never",
        ],
        b"",
    );
    assert_eq!(run_out.status.code(), Some(0), "{}", stderr(&run_out));
    let loads = read(&out.join("loads.parquet"));
    let row = |part: &str| row_of(&loads, part);
    let int = |column: &str, i: usize| vramdiff::batch::tables::int_at(&loads, column, i);
    let mib = |x: f64| (x * (1 << 20) as f64).round() as i64;
    let llama = row("1201-");
    let cache = int("serving_prompt_cache_peak", llama).unwrap();
    assert!(
        (cache - mib(523.390 + 10.0 * 170.013)).abs() < mib(0.01),
        "{cache}"
    );
    let checkpoints = int("serving_checkpoints_peak", llama).unwrap();
    assert!(
        (checkpoints - mib(1700.13)).abs() < mib(0.01),
        "{checkpoints}"
    );
    assert_eq!(int("serving_prompt_cache_limit", llama), Some(8192 << 20));
    let kv = loads
        .column("serving_kv_percent_peak")
        .unwrap()
        .f64()
        .unwrap();
    assert_eq!(kv.get(llama), None);
    assert_eq!(kv.get(row("811-sglang")), Some(0.0));
    let killed = row("1206-");
    assert_eq!(int("serving_prompt_cache_limit", killed), None);
    assert!(int("serving_prompt_cache_peak", killed).is_some());
}

#[test]
fn batch_reads_a_pasted_diff_as_its_two_runs() {
    // tests/data/pairs/…diff: `diff -u` of two real llama.cpp runs (-ub 512, then 128): one file, two loads,
    // and their pair, the compute buffer predicted at -ub 128 within the rounding.
    let diff = "tests/data/pairs/llama-gqa--ctx4096-vs-ub128.diff";
    let out = run(&["batch", diff], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        summary.contains("1 files read (0 with an error, skipped), 2 loads."),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "| `{diff}` | 1 → 2 | llama-server b0-unknown | ubatch 512 → 128 | compute (CPU) | 1.8 MiB | 1.8 MiB |"
        )),
        "{summary}"
    );
}
