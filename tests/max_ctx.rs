//! `vramdiff whatif --max-ctx` on both founding cases, through the real binary: the context it prints, replayed
//! with `whatif --ctx N --kv-type T` (the same replay), keeps every layer on the GPUs, and the next step of 256
//! does not.

use serde_json::Value;

use crate::util::{root, run, stderr, stdout};

/// The first load's `whatif` object of `vramdiff whatif --format json [extra] LOG`.
pub fn whatif(log: &str, extra: &[&str]) -> Value {
    let path = root().join(log);
    let mut args = vec!["whatif", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let out = run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    json["loads"][0]["whatif"].clone()
}

/// Whether the replay at `--ctx num_ctx --kv-type kv_type` (plus `gpus`, any other whatif flags) keeps every
/// layer on the GPUs.
pub fn fits(log: &str, num_ctx: i64, kv_type: &str, gpus: &[&str], estimator: bool) -> bool {
    let ctx = num_ctx.to_string();
    let mut args = vec!["--ctx", ctx.as_str(), "--kv-type", kv_type];
    args.extend_from_slice(gpus);
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
pub fn check(log: &str, gpus: &[&str], estimator: bool) -> Vec<(String, i64)> {
    let mut args = vec!["--max-ctx"];
    args.extend_from_slice(gpus);
    let w = whatif(log, &args);
    let m = &w["max_ctx"];
    assert_eq!(m["step"], 256);
    let mut out = Vec::new();
    for row in m["rows"].as_array().unwrap() {
        let t = row["kv_type"].as_str().unwrap();
        let n = row["num_ctx"]
            .as_i64()
            .unwrap_or_else(|| panic!("{log} {t}: {row}"));
        assert_eq!(n % 256, 0);
        assert!(fits(log, n, t, gpus, estimator), "{log} {t}: {n} must fit");
        if row["at_cap"] == false {
            assert!(
                !fits(log, n + 256, t, gpus, estimator),
                "{log} {t}: {} must not fit",
                n + 256
            );
        }
        out.push((t.to_string(), n));
    }
    assert_eq!(out.len(), 3, "f16, q8_0 and q4_0");
    out
}

/// The founding case (Ollama's estimator on two K80 halves, gemma3:12b at num_ctx 4096): the estimator
/// accepts up to 12032 tokens in f16 (its graph, scaled with the context, is what runs out first), more with a
/// quantised cache.
#[test]
fn founding_k80_max_ctx_fits_and_the_next_step_does_not() {
    let log = "sample-logs/founding-k80-gemma3-12b.log";
    let rows = check(log, &[], true);
    assert!(rows[0].1 >= 4096, "the logged 4096 fitted: {rows:?}");
    assert!(rows[0].1 <= rows[1].1 && rows[1].1 <= rows[2].1, "{rows:?}");
    // On one K80 half, as the founding issue asked.
    let one = check(log, &["--gpu-count", "1"], true);
    assert!(one[0].1 < rows[0].1, "{one:?} vs {rows:?}");
}

/// Today's founding case (llama-server's --fit on an RTX 3090 + RTX 4060, gemma4:31b at 16384 tokens, q8_0):
/// with the per-layer KV from the log's hyperparameters (10 full-attention layers grow, 50 window layers stop
/// at 2048 cells).
#[test]
fn founding_today_max_ctx_fits_and_the_next_step_does_not() {
    let log = "sample-logs/founding-today-3090-4060-gemma4-31b.log";
    let rows = check(log, &[], false);
    assert!(
        rows[1].1 > 16384,
        "the logged 16384 q8_0 fitted with room: {rows:?}"
    );
    // The 3090 alone, the question.
    let one = check(log, &["--gpus", "0"], false);
    assert!(
        one[1].1 >= 16384 && one[1].1 < rows[1].1,
        "{one:?} vs {rows:?}"
    );
}

/// The text and Markdown forms name the replay, the GPUs, the step and how the compute buffer is treated.
#[test]
fn max_ctx_in_text_and_markdown() {
    let log = root().join("sample-logs/founding-today-3090-4060-gemma4-31b.log");
    let log = log.to_str().unwrap();
    let text = stdout(&run(
        &["whatif", "--max-ctx", "--kv-type", "q8_0", log],
        b"",
    ));
    assert!(
        text.contains("largest num_ctx that keeps every layer on CUDA0, CUDA1 (llama.cpp --fit with the measured figures; 1 slot; steps of 256"),
        "{text}"
    );
    assert!(
        text.contains("compute buffers grown with each context by llama.cpp's law"),
        "{text}"
    );
    let md = stdout(&run(
        &["whatif", "--max-ctx", "--format", "markdown", log],
        b"",
    ));
    assert!(md.contains("| KV type | num\\_ctx |"), "{md}");
    assert!(md.contains("| q4\\_0 | 262144 (the cap) |"), "{md}");
    assert!(
        md.contains("  - compute buffers grown with each context by llama.cpp's law"),
        "{md}"
    );
}

/// The search's verdicts (`replay::max_ctx::fits_at`, which replays only the side it reads and chooses the
/// estimator's family once) are what the whole replay at the same changes says, on every load of every
/// sample, for each KV cache type, at contexts from one step to past the trained one, by both judges.
#[test]
fn the_search_reads_what_the_whole_replay_says() {
    use vramdiff::model::{KvType, ReplayOutcome};
    use vramdiff::replay::max_ctx::{fits_at, Judge};
    use vramdiff::replay::{margin, replay, Changes};

    let mut compared = 0;
    let mut logs: Vec<_> = std::fs::read_dir(root().join("sample-logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    for log in &logs {
        for concluded in crate::util::analyze(&[log]).loads {
            let load = &concluded.reconciled;
            for judge in [Judge::Measured, Judge::Runtime] {
                let measured =
                    judge == Judge::Measured || load.load.runtime.llama_cpp_places_layers();
                for kv_type in KvType::ALL {
                    for num_ctx in [256, 4096, 32768, 1 << 20] {
                        let changes = Changes {
                            ctx: Some(num_ctx),
                            kv_type: Some(kv_type),
                            ..Changes::default()
                        };
                        let whole = replay(load, &changes).and_then(|w| {
                            if measured {
                                let m = w.measured?;
                                Some((
                                    matches!(m.verdict.outcome, ReplayOutcome::Fits { .. }),
                                    m.margin,
                                ))
                            } else {
                                let e = w.estimate?;
                                Some((
                                    e.placement.fully_offloaded(),
                                    margin(&e.placement, e.figures.gpu_overhead),
                                ))
                            }
                        });
                        let searched = fits_at(load, &Changes::default(), num_ctx, kv_type, judge);
                        assert_eq!(
                            searched,
                            whole,
                            "{} {judge:?} {kv_type:?} {num_ctx}",
                            log.display()
                        );
                        compared += usize::from(whole.is_some());
                    }
                }
            }
        }
    }
    assert!(compared > 300, "{compared} verdicts compared");
}
