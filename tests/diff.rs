//! `vramdiff diff` end to end, on the real binary: the founding case against its copy with 1 GiB more weights
//! on CUDA1 (`tests/fixtures/founding-k80-gemma3-12b-cuda1-weights-plus-1gib.log`), the founding case against
//! itself, the same two runs as `batch --out` folders, the diff JSON pinned by strict deserialisation, and
//! golden files of the text, Markdown and JSON comparison (`reports/ci/`).

#![allow(dead_code)]

use serde::Deserialize;

use crate::util::{root, run, stderr, stdout};

pub const OLD: &str = "sample-logs/founding-k80-gemma3-12b.log";
pub const GROWN: &str = "tests/fixtures/founding-k80-gemma3-12b-cuda1-weights-plus-1gib.log";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffDoc {
    schema_version: u64,
    tool: Tool,
    old: String,
    new: String,
    matched: usize,
    only_old: usize,
    only_new: usize,
    changed: usize,
    regressed: usize,
    loads: Vec<LoadDiff>,
    /// The new run's loads paired with the old run's of one model whose settings differ (issue 53).
    #[serde(default)]
    pairs: Vec<crate::json_contract::LoadPair>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
    version: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Key {
    model: String,
    ctx: Option<i64>,
    parallel: Option<i64>,
    gpus: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Side {
    path: String,
    first_line: u64,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct Quantity {
    bytes: i64,
    low: i64,
    high: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Figure {
    old: Option<Quantity>,
    new: Option<Quantity>,
    change: Option<Quantity>,
    movement: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    name: String,
    host: bool,
    estimated: Figure,
    actual: Figure,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Placement {
    split: Vec<i64>,
    layers_on_gpu: Option<i64>,
    layers_total: Option<i64>,
    gpus_used: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlacementChange {
    old: Placement,
    new: Placement,
    changes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Finding {
    code: String,
    severity: Option<String>,
    message: String,
    device: Option<String>,
    component: Option<String>,
    lines: Vec<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KvFill {
    percent: f64,
    plus_minus: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct KvFillChange {
    old: Option<KvFill>,
    new: Option<KvFill>,
    movement: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct LoadDiff {
    key: Key,
    label: String,
    old: Option<Side>,
    new: Option<Side>,
    settings_changes: Vec<String>,
    components: Vec<Row>,
    devices: Vec<Row>,
    /// Added with issue 54: host-RAM peaks while serving, omitted when neither run has a timeline.
    #[serde(default)]
    serving: Vec<Row>,
    /// Added with issue 54: the KV cache's fill peak while serving (vLLM, SGLang), omitted when neither run
    /// has one.
    #[serde(default)]
    kv_fill: Option<KvFillChange>,
    placement: Option<PlacementChange>,
    findings_appeared: Vec<Finding>,
    findings_cleared: Vec<Finding>,
    changed: bool,
    regressions: Vec<String>,
}

pub fn diff_json(old: &str, new: &str) -> DiffDoc {
    let out = run(&["diff", "--format", "json", old, new], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // No field the structs above do not declare; every field that is not optional present.
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn one_gib_more_weights_on_cuda1_is_a_regression_per_gpu_and_component() {
    let doc = diff_json(OLD, GROWN);
    assert_eq!(doc.schema_version, 1);
    assert_eq!(doc.tool.name, "vramdiff");
    assert_eq!((doc.matched, doc.only_old, doc.only_new), (1, 0, 0));
    assert_eq!((doc.changed, doc.regressed), (1, 1));
    let load = &doc.loads[0];
    assert_eq!(load.key.model, "gemma3");
    assert_eq!(load.key.ctx, Some(4096));
    assert_eq!(load.key.gpus, ["Tesla K80", "Tesla K80"]);
    assert!(load.settings_changes.is_empty());
    // CUDA1's buffers grew by the edit's 1 GiB (7.4 → 8.4 GiB printed), beyond rounding.
    let cuda1 = row(&load.devices, "CUDA1");
    assert_eq!(cuda1.actual.movement, "up");
    let change = cuda1.actual.change.unwrap();
    assert_eq!(change.bytes, 1 << 30);
    assert!(change.low > 0 && change.low <= change.bytes && change.bytes <= change.high);
    // CUDA0 and the host did not move; the estimate did not either (the estimate line is the same).
    assert_eq!(row(&load.devices, "CUDA0").actual.movement, "same");
    assert_eq!(row(&load.devices, "CPU").actual.movement, "same");
    assert!(load
        .devices
        .iter()
        .all(|d| matches!(d.estimated.movement.as_str(), "same" | "absent")));
    // Per component: the GPU weights grew, nothing else.
    let weights = row(&load.components, "weights_gpu");
    assert_eq!(weights.actual.movement, "up");
    assert_eq!(weights.actual.change.unwrap().bytes, 1 << 30);
    for c in load.components.iter().filter(|c| c.name != "weights_gpu") {
        assert!(
            matches!(c.actual.movement.as_str(), "same" | "absent"),
            "{}: {}",
            c.name,
            c.actual.movement
        );
    }
    // The placement is the same; the GPU weights' underestimate appeared. CUDA1's row holds the output and
    // projector weights the runner ran there (booked on CUDA0 by the estimator's last-layer bucket), so 1 GiB
    // more stays inside its estimate and rounding-limited stays.
    let placement = load.placement.as_ref().unwrap();
    assert!(placement.changes.is_empty(), "{:?}", placement.changes);
    assert_eq!(placement.new.split, [1, 48]);
    let appeared: Vec<(&str, Option<&str>, Option<&str>)> = load
        .findings_appeared
        .iter()
        .map(|f| (f.code.as_str(), f.device.as_deref(), f.component.as_deref()))
        .collect();
    assert_eq!(appeared, [("underestimate", None, Some("weights_gpu"))]);
    assert!(load.findings_cleared.is_empty());
    assert!(load
        .regressions
        .iter()
        .any(|r| r.starts_with("CUDA1: more VRAM used")));
    assert!(load
        .regressions
        .iter()
        .any(|r| r.starts_with("weights_gpu: more memory")));
}

#[test]
fn fail_on_regression_exits_1_on_the_grown_copy_and_0_on_identical_logs() {
    let grown = run(&["diff", "--fail-on-regression", OLD, GROWN], b"");
    assert_eq!(grown.status.code(), Some(1), "{}", stderr(&grown));
    let text = stdout(&grown);
    assert!(
        text.contains("REGRESSION CUDA1: more VRAM used, 8.50 GiB → 9.50 GiB"),
        "{text}"
    );
    assert!(text.contains("result: REGRESSION in 1 load"), "{text}");
    // Without the gate the same comparison exits 0.
    assert_eq!(run(&["diff", OLD, GROWN], b"").status.code(), Some(0));
    // Backwards the weights shrank: a change, not a regression.
    let shrunk = run(&["diff", "--fail-on-regression", GROWN, OLD], b"");
    assert_eq!(shrunk.status.code(), Some(0), "{}", stdout(&shrunk));
    assert!(stdout(&shrunk).contains("result: changed, no regression"));

    let same = run(&["diff", "--fail-on-regression", OLD, OLD], b"");
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(stdout(&same).contains("no change: every figure the same within rounding"));
    assert!(stdout(&same).ends_with("result: no change\n"));
    let doc = diff_json(OLD, OLD);
    assert_eq!((doc.matched, doc.changed, doc.regressed), (1, 0, 0));
    assert!(doc.loads[0]
        .components
        .iter()
        .chain(&doc.loads[0].devices)
        .all(|r| matches!(r.actual.movement.as_str(), "same" | "absent")
            && matches!(r.estimated.movement.as_str(), "same" | "absent")));
}

#[test]
fn loads_match_by_key_in_order_of_appearance_and_the_rest_stand_alone() {
    // Two loads of different models in the new run against one in the old: one pair, one load only new.
    let two = "sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log";
    let doc = diff_json(OLD, two);
    assert_eq!(doc.matched, 0);
    assert_eq!((doc.only_old, doc.only_new), (1, 2));
    assert_eq!(doc.loads.len(), 3);
    // New run's order first, then what only the old run has.
    assert!(doc.loads[0].old.is_none() && doc.loads[1].old.is_none());
    assert!(doc.loads[2].new.is_none());
    assert!(doc.loads.iter().all(|l| l.regressions.is_empty()));
    let self_diff = diff_json(two, two);
    assert_eq!((self_diff.matched, self_diff.changed), (2, 0));
}

/// `batch` run over the log `old` into a folder `old` and over `new` into `new`, under a fresh scratch folder
/// named for the test: (scratch, old folder, new folder).
#[cfg(feature = "batch")]
fn batch_folders(
    name: &str,
    old: &str,
    new: &str,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let scratch = std::env::temp_dir().join(format!("vramdiff-diff-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (a, b) = (scratch.join("old"), scratch.join("new"));
    for (input, out) in [(old, &a), (new, &b)] {
        let o = run(
            &["batch", "--quiet", "--out", out.to_str().unwrap(), input],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    (scratch, a, b)
}

#[cfg(feature = "batch")]
#[test]
fn batch_folders_compare_like_their_logs() {
    let (scratch, a, b) = batch_folders("batch", OLD, GROWN);
    let out = run(
        &[
            "diff",
            "--fail-on-regression",
            "--format",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: DiffDoc = serde_json::from_slice(&out.stdout).unwrap();
    let logs = diff_json(OLD, GROWN);
    // The same figures, bounds included, from the tables as from the logs.
    for (from_tables, from_logs) in [
        (&doc.loads[0].devices, &logs.loads[0].devices),
        (&doc.loads[0].components, &logs.loads[0].components),
    ] {
        assert_eq!(from_tables.len(), from_logs.len());
        for (t, l) in from_tables.iter().zip(from_logs) {
            assert_eq!((&t.name, &t.actual.movement), (&l.name, &l.actual.movement));
            assert_eq!(
                t.actual.change.map(|q| (q.bytes, q.low, q.high)),
                l.actual.change.map(|q| (q.bytes, q.low, q.high))
            );
        }
    }
    // A table keeps finding codes only: the underestimate appears without a severity.
    let appeared: Vec<&str> = doc.loads[0]
        .findings_appeared
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    assert_eq!(appeared, ["underestimate"]);
    // A folder against a log is refused, naming why.
    let mixed = run(&["diff", a.to_str().unwrap(), GROWN], b"");
    assert_eq!(mixed.status.code(), Some(2));
    assert!(stderr(&mixed).contains("compare a log with a log"));
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn unreadable_sides_are_errors_naming_the_file() {
    let out = run(&["diff", OLD, "no-such-file.log"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no-such-file.log"),
        "{}",
        stderr(&out)
    );
    let empty = std::env::temp_dir().join(format!("vramdiff-diff-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(
        &["diff", empty.to_str().unwrap(), empty.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("loads.parquet"), "{}", stderr(&out));
    // An empty log is no error: no loads, its warning on stderr.
    let log = empty.join("empty.log");
    std::fs::write(&log, b"").unwrap();
    let out = run(
        &["diff", "--fail-on-regression", log.to_str().unwrap(), OLD],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("empty input"), "{}", stderr(&out));
    assert!(stdout(&out).contains("0 loads matched, 0 only in the old run, 1 only in the new run"));
    let _ = std::fs::remove_dir_all(&empty);
}

/// Golden comparisons in `reports/ci/`: the tests named `golden_*` are regenerated with the other golden reports
/// (`VRAMDIFF_UPDATE_REPORTS=1 cargo test --test integration golden`, see `tests/golden.rs`).
pub fn golden(name: &str, bytes: &[u8]) -> Option<String> {
    let path = root().join("reports/ci").join(name);
    if std::env::var_os("VRAMDIFF_UPDATE_REPORTS").is_some() && std::env::var_os("CI").is_none() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        return None;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    (committed != bytes).then(|| path.display().to_string())
}

#[test]
fn golden_diff_reports_are_current() {
    let mut mismatched = Vec::new();
    for (format, extension) in [("text", "txt"), ("markdown", "md"), ("json", "json")] {
        let out = run(&["diff", "--format", format, OLD, GROWN], b"");
        assert_eq!(out.status.code(), Some(0));
        mismatched.extend(golden(
            &format!("diff-founding-k80-cuda1-weights-plus-1gib.{extension}"),
            &out.stdout,
        ));
    }
    assert!(
        mismatched.is_empty(),
        "reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}

#[test]
fn a_changed_context_is_compared_with_the_change_named() {
    // The founding case with the runner's `--ctx-size 4096` edited to 8192 (written to a scratch file): the
    // same model on the same GPUs, so the loads pair on model and GPU set, and the settings change is named.
    let dir = std::env::temp_dir().join(format!("vramdiff-diff-ctx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root().join(OLD)).unwrap();
    assert!(text.contains("--ctx-size 4096"));
    let edited = dir.join("ctx-8192.log");
    std::fs::write(&edited, text.replace("--ctx-size 4096", "--ctx-size 8192")).unwrap();
    let doc = diff_json(OLD, edited.to_str().unwrap());
    assert_eq!((doc.matched, doc.only_old, doc.only_new), (1, 0, 0));
    assert_eq!(doc.loads[0].settings_changes, ["ctx 4096 → 8192"]);
    // And the two loads are a pair: the old one replayed at the new context (issue 53).
    assert_eq!(doc.pairs.len(), 1);
    assert!(doc.loads[0].changed && doc.loads[0].regressions.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A folder that `batch --shard K/N` runs wrote into (`loads-K-of-N.parquet`, …) reads as the shards' tables
/// stacked: against the unsharded run of the same logs every load is matched and nothing changed.
#[cfg(feature = "batch")]
#[test]
fn a_folder_of_shards_compares_like_the_unsharded_run() {
    let scratch = std::env::temp_dir().join(format!("vramdiff-diff-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (whole, sharded) = (scratch.join("whole"), scratch.join("sharded"));
    let logs = root().join("sample-logs");
    let batch = |out: &std::path::Path, shard: Option<&str>| {
        let mut args = vec!["batch", "--quiet", "--out", out.to_str().unwrap()];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        args.push(logs.to_str().unwrap());
        let o = run(&args, b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    batch(&whole, None);
    batch(&sharded, Some("1/2"));
    batch(&sharded, Some("2/2"));
    assert!(sharded.join("loads-1-of-2.parquet").is_file());
    assert!(!sharded.join("loads.parquet").exists());
    let out = run(
        &[
            "diff",
            "--fail-on-regression",
            "--format",
            "json",
            whole.to_str().unwrap(),
            sharded.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: DiffDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.matched > 10, "every sample's loads: {}", doc.matched);
    assert_eq!((doc.changed, doc.only_old, doc.only_new), (0, 0, 0));
    // An empty folder names what it looked for.
    let empty = scratch.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(
        &["diff", whole.to_str().unwrap(), empty.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no loads.parquet nor loads-K-of-N.parquet"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Issue 54: the serving peaks are compared like the components: 1205's prompt cache peaked at 2460.007 MiB, 1206's
/// at 3462.850 MiB (matched on the same empty key: neither excerpt names a model, a context or a GPU); more host
/// RAM while serving is a regression, with the finding that appeared.
#[test]
fn diff_compares_the_serving_peaks() {
    let doc = diff_json(
        "sample-logs/1205-llama-server-gemma4-31b-cache-ram-1200-state-2460mib-exceeds-limit-excerpt.log",
        "sample-logs/1206-llama-server-systemd-rtx3090-16gb-ram-gemma4-31b-prompt-save-3462mib-oom-killed.log",
    );
    assert_eq!((doc.matched, doc.regressed), (1, 1));
    let l = &doc.loads[0];
    let cache = l
        .serving
        .iter()
        .find(|r| r.name == "prompt_cache_peak")
        .expect("the prompt cache's peak");
    assert!(cache.host);
    assert_eq!(cache.actual.movement, "up");
    let mib = |q: &Option<Quantity>| q.as_ref().unwrap().bytes as f64 / (1 << 20) as f64;
    assert!((mib(&cache.actual.old) - 2460.007).abs() < 0.001);
    assert!((mib(&cache.actual.new) - 3462.850).abs() < 0.001);
    assert!(l
        .regressions
        .iter()
        .any(|r| r.starts_with("prompt_cache_peak: more host RAM while serving")));
    assert!(l
        .regressions
        .contains(&"finding appeared: serving-host-memory (error)".to_string()));
}

/// Sample 804's real start (vLLM 0.10.2) followed by the first stats line vLLM 0.10.2 printed with its own
/// logger (`tests/data/serving-printed/`), then by all four: the KV cache at 12.5 %, then full.
const KV_CALM: &str = "tests/data/serving-printed/composed/804-then-vllm-0.10.2-stats-calm.log";
const KV_FULL: &str = "tests/data/serving-printed/composed/804-then-vllm-0.10.2-stats-full.log";

#[test]
fn diff_compares_the_kv_cache_fill_peak_with_its_printed_rounding() {
    let doc = diff_json(KV_CALM, KV_FULL);
    assert_eq!(doc.matched, 1);
    let k = doc.loads[0].kv_fill.as_ref().expect("the KV fill peak");
    let (old, new) = (k.old.as_ref().unwrap(), k.new.as_ref().unwrap());
    assert_eq!((old.percent, new.percent), (12.5, 100.0));
    // vLLM prints one decimal of a percentage: ±0.05.
    assert_eq!((old.plus_minus, new.plus_minus), (0.05, 0.05));
    assert_eq!(k.movement, "up");
    assert!(doc.loads[0].changed);
    // The same log on both sides: the same peak, no change.
    let same = diff_json(KV_FULL, KV_FULL);
    assert_eq!(same.loads[0].kv_fill.as_ref().unwrap().movement, "same");
    assert!(!same.loads[0].changed);
    // A log without serving stats has none, and the field is omitted.
    let none = diff_json(OLD, OLD);
    assert!(none.loads[0].kv_fill.is_none());
}

#[test]
fn golden_diff_kv_fill_reports_are_current() {
    let mut mismatched = Vec::new();
    // JUnit carries the regressions only (a fuller cache is not one): not among them.
    for (format, extension) in [
        ("text", "txt"),
        ("markdown", "md"),
        ("json", "json"),
        ("html", "html"),
    ] {
        let out = run(&["diff", "--format", format, KV_CALM, KV_FULL], b"");
        assert_eq!(out.status.code(), Some(0));
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("12.5") && shown.contains("100"),
            "{format}: {shown}"
        );
        mismatched.extend(golden(
            &format!("diff-804-vllm-kv-fill-calm-to-full.{extension}"),
            &out.stdout,
        ));
    }
    assert!(
        mismatched.is_empty(),
        "reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}

#[cfg(feature = "batch")]
#[test]
fn batch_folders_compare_the_kv_fill_peak_like_their_logs() {
    let (scratch, a, b) = batch_folders("kv-batch", KV_CALM, KV_FULL);
    let out = run(
        &[
            "diff",
            "--format",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    let doc: DiffDoc = serde_json::from_slice(&out.stdout).unwrap();
    let k = doc.loads[0]
        .kv_fill
        .as_ref()
        .expect("the KV fill peak from the tables");
    assert_eq!(
        (
            k.old.as_ref().unwrap().percent,
            k.new.as_ref().unwrap().percent,
            k.old.as_ref().unwrap().plus_minus
        ),
        (12.5, 100.0, 0.05)
    );
    assert_eq!(k.movement, "up");
    let _ = std::fs::remove_dir_all(&scratch);
}
