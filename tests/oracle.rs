//! The real llama.cpp as the oracle (issue 50): logs the real server printed on small models under many
//! settings (`tests/data/oracle/`, written by `scripts/oracle/run.py`), and vramdiff's figures checked against
//! what that server allocated.
//!
//! - every run reconciles without a false finding: no component or device off beyond the printed rounding, no
//!   warning or error, never an incomplete load, the model file and the llama.cpp build named;
//! - `inspect`'s weights equal the buffers where llama.cpp allocates the weights outright (mmap off), and its
//!   KV cache per token times the cells llama.cpp printed equals each KV cache it allocated;
//! - `whatif` from one run's log, with one lever changed, predicts what the real run at that setting allocated.
//!
//! By default the committed logs of llama.cpp build b11549 are read; CI also runs the real server again and
//! points `VRAMDIFF_ORACLE_DIR` at the fresh logs (`.ci/run`), so the same checks meet the runtime itself.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{json, root};

/// The oracle's folder: `VRAMDIFF_ORACLE_DIR` (a fresh run of the real server), else the committed one.
fn oracle_dir() -> PathBuf {
    match std::env::var_os("VRAMDIFF_ORACLE_DIR") {
        Some(dir) => root().join(dir),
        None => root().join("tests/data/oracle/b11549"),
    }
}

struct Run {
    name: String,
    model: String,
    log: PathBuf,
    model_file: PathBuf,
    settings: Value,
    ok: bool,
}

fn runs() -> Vec<Run> {
    let dir = oracle_dir();
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(dir.join("manifest.json")).expect("the oracle's manifest.json"),
    )
    .expect("manifest.json is JSON");
    let runs: Vec<Run> = manifest["runs"]
        .as_array()
        .expect("runs[]")
        .iter()
        .map(|r| Run {
            name: r["run"].as_str().expect("run").to_string(),
            model: r["model"].as_str().expect("model").to_string(),
            log: dir.join(r["log"].as_str().expect("log")),
            model_file: dir.join(r["model_file"].as_str().expect("model_file")),
            settings: r["settings"].clone(),
            ok: r["status"] == "ok",
        })
        .collect();
    assert!(runs.len() >= 10, "the oracle has its runs ({})", runs.len());
    runs
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn report(run: &Run) -> Value {
    json(&[&relative(&run.log), "--format", "json"])
}

fn only_load(report: &Value, run: &Run) -> Value {
    let loads = report["loads"].as_array().expect("loads[]");
    assert_eq!(loads.len(), 1, "{}: one load", run.name);
    loads[0].clone()
}

/// Bytes of a figure as llama.cpp printed it (`{bytes, low, high}`).
fn bytes(q: &Value) -> i64 {
    q["bytes"].as_i64().expect("bytes")
}

/// The half-width of llama.cpp's `%.2f MiB`: a printed figure is within this of the bytes.
const HALF_CENT_MIB: i64 = 5243;

#[test]
fn every_run_reconciles_without_a_false_finding() {
    let mut checked = 0;
    for run in runs().iter().filter(|r| r.ok) {
        let load = only_load(&report(run), run);
        let name = &run.name;
        assert_eq!(load["source"]["partial"], false, "{name}: a whole load");
        assert_eq!(load["era"], "llama-server", "{name}: llama.cpp on its own");
        assert_eq!(
            load["llama_cpp_build"], "b0-unknown",
            "{name}: the build line"
        );
        let model = run.model_file.file_name().unwrap().to_string_lossy();
        assert!(
            load["model"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(&*model)),
            "{name}: the model file is named: {}",
            load["model"]
        );
        for row in load["components"]
            .as_array()
            .unwrap()
            .iter()
            .chain(load["devices"].as_array().unwrap())
        {
            let verdict = row["verdict"].as_str().unwrap_or("unknown");
            assert!(
                verdict == "match" || verdict == "unknown",
                "{name}: {} is '{verdict}' ({})",
                row["component"]
                    .as_str()
                    .or(row["device"].as_str())
                    .unwrap_or("?"),
                row
            );
        }
        for finding in load["findings"].as_array().unwrap() {
            assert_eq!(
                finding["severity"], "info",
                "{name}: a false finding: {finding}"
            );
        }
        if run.settings["verbosity"].as_i64().unwrap_or(4) < 4 {
            let notes = load["notes"].to_string();
            assert!(
                notes.contains("-lv 4"),
                "{name}: says to log at -lv 4: {notes}"
            );
        } else if run.settings["fit"] != false {
            // At verbosity 4 with --fit on (its default), the KV cache is compared, never left unknown.
            let kv = load["components"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["component"] == "kv")
                .expect("a KV row");
            assert_eq!(
                kv["verdict"], "match",
                "{name}: the KV cache is compared: {kv}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} runs checked");
}

#[test]
fn a_refused_setting_is_a_failed_load_not_a_memory_one() {
    for run in runs().iter().filter(|r| !r.ok) {
        let load = only_load(&report(run), run);
        let failed: Vec<&Value> = load["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "load-failed")
            .collect();
        assert_eq!(failed.len(), 1, "{}: {}", run.name, load["findings"]);
        assert!(
            failed[0]["message"]
                .as_str()
                .unwrap()
                .contains("requires flash_attn"),
            "{}: the line that says why: {}",
            run.name,
            failed[0]
        );
        assert!(
            load["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["code"] != "incomplete-load"),
            "{}: a failed load is not an incomplete one",
            run.name
        );
    }
}

/// The slots' KV streams, as the manifest's settings give them (`-np -1` is 4 slots in one unified cache).
fn streams(settings: &Value) -> i64 {
    let parallel = settings["n_parallel"].as_i64().unwrap();
    if parallel < 0 || settings["kv_unified"] == true {
        1
    } else {
        parallel.max(1)
    }
}

#[test]
fn inspect_weights_and_kv_per_token_meet_the_buffers() {
    let mut weights_checked = 0;
    let mut caches_checked = 0;
    for run in runs().iter().filter(|r| r.ok) {
        let inspect = json(&["inspect", &relative(&run.model_file), "--format", "json"]);
        let load = only_load(&report(run), run);
        let buffers = load["actual"]["buffers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let model_buffers: Vec<&Value> = buffers.iter().filter(|b| b["kind"] == "model").collect();
        if run.settings["mmap"] == false {
            // Without mmap llama.cpp allocates every tensor: the plain CPU buffer and the repacked copies.
            let allocated: i64 = model_buffers.iter().map(|b| bytes(&b["size"])).sum();
            let weights = inspect["weights_bytes"].as_i64().unwrap();
            assert!(
                (allocated - weights).abs() <= HALF_CENT_MIB * model_buffers.len() as i64,
                "{}: inspect's weights {weights} B against the buffers' {allocated} B",
                run.name
            );
            weights_checked += 1;
        }
        let per_token = |kind: &str, ty: &str| {
            inspect["kv_cache"][ty][kind]
                .as_i64()
                .unwrap_or_else(|| panic!("kv_cache.{ty}.{kind}"))
        };
        let (k, v) = (
            run.settings["cache_type_k"].as_str().unwrap(),
            run.settings["cache_type_v"].as_str().unwrap(),
        );
        // K and V rows have the same width in these models: a token costs half of each type's K+V figure.
        let token = |kind: &str| (per_token(kind, k) + per_token(kind, v)) / 2;
        let streams = streams(&run.settings);
        let caches = load["actual"]["kv_caches"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for cache in &caches {
            if cache["recurrent"] == true {
                continue;
            }
            let cells = cache["cells"].as_i64().unwrap();
            let window = cache["layers"].as_i64().unwrap() > 1 && run.model == "gemma3";
            let kind = if window {
                "sliding_window_bytes_per_token"
            } else {
                "full_bytes_per_token"
            };
            let expected = token(kind) * cells * streams;
            let printed = bytes(&cache["size"]);
            assert!(
                (printed - expected).abs() <= HALF_CENT_MIB,
                "{}: a {kind} cache of {cells} cells × {streams} streams: inspect gives {expected} B, llama.cpp {printed} B",
                run.name
            );
            caches_checked += 1;
        }
    }
    assert!(weights_checked >= 1, "{weights_checked} runs without mmap");
    assert!(caches_checked >= 10, "{caches_checked} caches");
}

/// A lever of `whatif` and the real run it must predict (`tests/data/oracle/levers.json`).
struct Lever {
    figure: String,
    from: String,
    to: String,
    args: Vec<String>,
}

fn levers() -> Vec<Lever> {
    let file: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/data/oracle/levers.json")).expect("levers.json"),
    )
    .expect("levers.json is JSON");
    file["levers"]
        .as_array()
        .expect("levers[]")
        .iter()
        .map(|l| Lever {
            figure: l["figure"].as_str().expect("figure").to_string(),
            from: l["from"].as_str().expect("from").to_string(),
            to: l["to"].as_str().expect("to").to_string(),
            args: l["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| a.as_str().expect("an argument").to_string())
                .collect(),
        })
        .collect()
}

/// What `whatif` predicts for `figure` (`whatif.effects[]`), in bytes.
fn predicted(report: &Value, figure: &str) -> Option<i64> {
    report["loads"][0]["whatif"]["effects"]
        .as_array()?
        .iter()
        .find(|e| e["figure"] == figure)
        .and_then(|e| e["after"].as_i64())
}

/// What the real run allocated for `figure`: every KV cache, or every compute buffer.
fn measured(load: &Value, figure: &str) -> i64 {
    let kind = match figure {
        "kv-cache" => "kv",
        "compute-buffer" => "compute",
        other => panic!("levers.json: no figure '{other}'"),
    };
    load["actual"]["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == kind)
        .map(|b| bytes(&b["size"]))
        .sum()
}

#[test]
fn whatif_levers_meet_the_real_runs() {
    let all = runs();
    let find = |name: &str| {
        all.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("the oracle has {name}"))
    };
    let levers = levers();
    assert!(levers.len() >= 10, "{} levers", levers.len());
    for lever in &levers {
        let (from, to) = (find(&lever.from), find(&lever.to));
        let log = relative(&from.log);
        let mut args = vec!["whatif", "--format", "json"];
        args.extend(lever.args.iter().map(String::as_str));
        args.push(&log);
        let predicted = predicted(&json(&args), &lever.figure).unwrap_or_else(|| {
            panic!(
                "{} {:?}: whatif predicts the {}",
                from.name, lever.args, lever.figure
            )
        });
        let target = only_load(&report(to), to);
        let real = measured(&target, &lever.figure);
        let within = if lever.figure == "kv-cache" {
            // Both sides are llama.cpp's two-decimal MiB: the prediction is computed from printed figures.
            let buffers = target["actual"]["buffers"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["kind"] == "kv")
                .count() as i64;
            (predicted - real).abs() <= 2 * HALF_CENT_MIB * buffers
        } else {
            // The bar for compute buffers: within 5 % of what the real run allocated.
            (predicted - real).abs() * 20 <= real
        };
        assert!(
            within,
            "{} {:?}: whatif predicts a {} of {predicted} B, the real {} allocated {real} B",
            from.name, lever.args, lever.figure, to.name
        );
    }
}

/// The context the real `--fit` chose when it shrank one (`context size reduced from A to B`), read from the
/// run's own log.
fn fit_choice(run: &Run) -> Option<i64> {
    let log = std::fs::read_to_string(&run.log).expect("the run's log");
    let line = log
        .lines()
        .find(|l| l.contains("context size reduced from"))?;
    let after = &line[line.find(" to ").expect("`to`") + 4..];
    after.split_whitespace().next()?.parse().ok()
}

// `--max-ctx` on a load fitted to system memory: from any run of the same model at the same `--fit` target, the
// largest context vramdiff gives (a range: the host's total is printed in whole MiB) holds the context the
// real fit chose when it had to shrink it. From the user's `-c 8192` (which the fit may not touch) too.
#[test]
fn max_ctx_meets_the_context_the_real_fit_chose() {
    let all = runs();
    let mut checked = 0;
    for chosen in all.iter().filter(|r| r.ok) {
        let Some(choice) = fit_choice(chosen) else {
            continue;
        };
        let same_fit = |r: &&Run| {
            r.ok && r.model == chosen.model
                && [
                    "fit_target_mib",
                    "cache_type_k",
                    "n_parallel",
                    "n_ubatch",
                    "flash_attn",
                ]
                .iter()
                .all(|k| r.settings[k] == chosen.settings[k])
        };
        for from in all.iter().filter(same_fit) {
            let log = relative(&from.log);
            let kv = chosen.settings["cache_type_k"].as_str().unwrap();
            let w = json(&[
                "whatif",
                "--max-ctx",
                "--kv-type",
                kv,
                "--format",
                "json",
                &log,
            ]);
            let m = &w["loads"][0]["whatif"]["max_ctx"];
            assert_eq!(m["on_host"], true, "{}: {m}", from.name);
            let row = &m["rows"][0];
            let (low, high) = match row["range"].as_array() {
                Some(r) => (r[0].as_i64().unwrap(), r[1].as_i64().unwrap()),
                None => (
                    row["num_ctx"].as_i64().unwrap(),
                    row["num_ctx"].as_i64().unwrap(),
                ),
            };
            assert!(
                low <= choice && choice <= high,
                "{}: --max-ctx {low}–{high}, the real fit chose {choice} ({})",
                from.name,
                chosen.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} predictions checked");
}

// The refused run's setting asked of a run that works: `whatif --kv-type q8_0` from a load without flash
// attention gives the smaller cache only with flash attention turned on, which it says, because the real
// llama.cpp refused that setting (the expected-fail run).
#[test]
fn a_quantized_cache_without_flash_attention_is_not_promised() {
    let all = runs();
    let refused = all
        .iter()
        .find(|r| !r.ok && r.settings["flash_attn"] == "off" && r.settings["cache_type_v"] != "f16")
        .expect("the oracle's refused run");
    let from = all
        .iter()
        .find(|r| {
            r.ok && r.model == refused.model
                && r.settings["flash_attn"] == "off"
                && r.settings["cache_type_k"] == "f16"
                && r.settings["cache_type_v"] == "f16"
        })
        .expect("a run of the same model without flash attention");
    let kv = refused.settings["cache_type_v"].as_str().unwrap();
    let w = json(&[
        "whatif",
        "--kv-type",
        kv,
        "--format",
        "json",
        &relative(&from.log),
    ]);
    let effect = w["loads"][0]["whatif"]["effects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["figure"] == "kv-cache")
        .expect("a KV effect")
        .clone();
    let text = effect["text"].as_str().unwrap();
    assert!(
        text.contains("refuses a quantized V cache") && text.contains("-fa on"),
        "{text}"
    );
}
