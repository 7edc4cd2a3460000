//! Paste invariance: every real log bundled in the repository, pasted any way of the catalogue
//! (`tests/paste_transforms.rs`) and in random compositions of two or three of them, gives the facts the
//! log gives as the server wrote it: every load's figures, devices, layers, settings, runtime, engine and
//! version, finding and suggestion codes (the load's JSON without line numbers and paths, `figures()` in
//! `tests/properties.rs`).
//!
//! A transform may destroy information (a hard wrap that cuts a number where nothing tells the cut from
//! a record's end); then the report says so rather than read another number (`inputs[].cut_by_wrap`,
//! `tests/wrap_cuts.rs`). A paste's facts must equal the original's, or be the original's without the
//! lines such a notice covers (`missing_with_notice`): never a different value.
//!
//! The logs: `sample-logs/*.log` (the corpus copies and the reconstructed founding logs), the corpus-derived
//! fixtures in `tests/fixtures/` and the corpus copy in `tests/data/follow/`. The nvidia-smi captures
//! (`.nvidia-smi.txt`, `.xml`, `.csv`) are not logs a server printed and are left out.
//!
//! CI runs every (log, transform) pair once (`every_log_survives_every_transform`) and
//! `VRAMDIFF_PASTE_CASES` random compositions (48 by default, fixed seed). A composition is a paste: distinct
//! transforms, at most one of each kind a paste takes once ([`AT_MOST_ONE`]), in the order a paste takes
//! them ([`PASTE_ORDER`]); every one must keep every fact. `docs/testing.md` gives the figures of a longer
//! run.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::paste_transforms::{compose, transform, Stage, Transform, CATALOGUE};
use crate::properties::{analyze, loads_json};
use crate::util::root;

/// The real logs the property runs over, as `(path relative to the root, text)`, sorted by path.
pub fn real_logs() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["sample-logs", "tests/fixtures", "tests/data/follow"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".log") {
                let text = std::fs::read_to_string(root().join(dir).join(&name)).unwrap();
                out.push((format!("{dir}/{name}"), text));
            }
        }
    }
    out.sort();
    out
}

/// The facts of every log as written, computed once.
fn originals() -> &'static Vec<(String, String, Vec<serde_json::Value>)> {
    static ORIGINALS: std::sync::OnceLock<Vec<(String, String, Vec<serde_json::Value>)>> =
        std::sync::OnceLock::new();
    ORIGINALS.get_or_init(|| {
        real_logs()
            .into_iter()
            .map(|(path, text)| {
                let facts = loads_json(&analyze(&path, text.as_bytes()));
                (path, text, facts)
            })
            .collect()
    })
}

/// Where the facts of the pasted log first differ from the original's, or `None` when they are the same.
fn violation(
    path: &str,
    text: &str,
    want: &[serde_json::Value],
    chosen: &[Transform],
    seed: u64,
) -> Option<String> {
    let pasted = compose(text, chosen, seed);
    let analysis = analyze(path, &pasted);
    let got = loads_json(&analysis);
    if got == want || missing_with_notice(path, text, &analysis, &got) {
        return None;
    }
    let names: Vec<&str> = chosen.iter().map(|t| t.name).collect();
    let detail = if got.len() != want.len() {
        format!("{} loads, not {}", got.len(), want.len())
    } else {
        let (i, (g, w)) = got
            .iter()
            .zip(want)
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .unwrap();
        format!("load {i}: {}", first_difference(w, g, ""))
    };
    Some(format!(
        "{path} × {} (seed {seed}): {detail}",
        names.join("+")
    ))
}

/// True when the pasted log's facts (`got`) are the original's without the lines its report says a wrap
/// cut inside a figure (`inputs[].cut_by_wrap`): each fact is equal, or missing with a notice covering its
/// line, never a different value. The original is read again with every line holding a noticed line's text
/// (as read, up to the cut) made empty.
fn missing_with_notice(
    path: &str,
    text: &str,
    analysis: &vramdiff::model::Analysis,
    got: &[serde_json::Value],
) -> bool {
    let cuts = &analysis.inputs[0].cut_by_wrap;
    if cuts.is_empty() {
        return false;
    }
    let without: String = text
        .split_inclusive('\n')
        .map(|line| {
            if cuts.iter().any(|c| line.contains(c.text.as_str())) {
                "\n"
            } else {
                line
            }
        })
        .collect();
    let accepted = loads_json(&analyze(path, without.as_bytes())) == got;
    if accepted {
        MISSING_WITH_NOTICE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    accepted
}

/// How many pastes changed a fact only by a notice's missing line (printed by the long run).
static MISSING_WITH_NOTICE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The first JSON path at which `want` and `got` differ, with both values.
fn first_difference(want: &serde_json::Value, got: &serde_json::Value, at: &str) -> String {
    use serde_json::Value;
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                match g.get(k) {
                    Some(gv) if gv == wv => {}
                    Some(gv) => return first_difference(wv, gv, &format!("{at}.{k}")),
                    None => return format!("{at}.{k} missing"),
                }
            }
            let extra: Vec<&String> = g.keys().filter(|k| !w.contains_key(*k)).collect();
            format!("{at}: extra {extra:?}")
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                if wv != gv {
                    return first_difference(wv, gv, &format!("{at}[{i}]"));
                }
            }
            unreachable!()
        }
        (Value::Array(w), Value::Array(g)) => {
            // Items added or lost: name them by their code, or show them.
            let names = |items: &Vec<Value>| -> Vec<String> {
                items
                    .iter()
                    .map(|v| match v.get("code") {
                        Some(code) => code.to_string(),
                        None => v.to_string().chars().take(80).collect(),
                    })
                    .collect()
            };
            format!("{at}: want {:?} got {:?}", names(w), names(g))
        }
        (Value::String(w), Value::String(g)) => {
            let from = w
                .char_indices()
                .zip(g.chars())
                .find(|((_, a), b)| a != b)
                .map_or(w.len().min(g.len()), |((i, _), _)| i);
            let start = w[..from].char_indices().rev().nth(40).map_or(0, |(i, _)| i);
            let tail = |s: &str| {
                s.get(start..)
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect::<String>()
            };
            format!("{at}: want …{} got …{}", tail(w), tail(g))
        }
        _ => {
            let cut = |v: &Value| {
                let s = v.to_string();
                s.chars().take(160).collect::<String>()
            };
            format!("{at}: want {} got {}", cut(want), cut(got))
        }
    }
}

/// Every log under every transform alone.
#[test]
fn every_log_survives_every_transform() {
    let mut violations = Vec::new();
    let mut cases = 0;
    for (i, (path, text, want)) in originals().iter().enumerate() {
        for t in CATALOGUE {
            cases += 1;
            // The log's index as the seed: the logs between them see every locale's month, every variant.
            violations.extend(violation(path, text, want, &[*t], i as u64));
        }
    }
    assert!(
        violations.is_empty(),
        "{} of {cases} (log, transform) pairs change the facts:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

/// The number of random compositions CI runs (`VRAMDIFF_PASTE_CASES` sets another).
fn composition_cases() -> u32 {
    std::env::var("VRAMDIFF_PASTE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// The order a real paste takes, as data: each stage of [`Stage`] with the reason it comes where it does.
/// [`compose`] applies the transforms of a composition in this order (`the_paste_order_is_the_stage_order`
/// checks that the two agree).
///
/// No order is left out that a paste takes: a terminal wraps what it shows, so a wrap never comes before the
/// collector whose prefix it shows (collectors read a program's output stream, never a terminal's rows), and
/// markup and an encoding are what a user does with the copied text.
pub const PASTE_ORDER: &[(Stage, &str)] = &[
    (
        Stage::Collector,
        "what writes the server's lines down (journald, syslog, a container runtime, a CI runner) reads them \
         as the server printed them",
    ),
    (
        Stage::Interleave,
        "other processes' lines land between the records in the same journal or terminal",
    ),
    (
        Stage::Terminal,
        "a terminal or an editor shows what was collected, prefix included: colours, tabs, trimmed blanks, \
         and last its width, which cuts what it shows",
    ),
    (
        Stage::Markup,
        "the copied text is marked up where it is pasted (line numbers, a quote, a fence, a prompt)",
    ),
    (Stage::Encoding, "the pasted text is saved, last"),
];

/// Whether a transform is of a kind.
pub type Kind = fn(&Transform) -> bool;

/// Kinds of transform a paste takes at most one of, with the reason: a composition of two of a kind is no
/// paste.
pub const AT_MOST_ONE: &[(&str, Kind)] = &[
    ("one program writes the lines down", |t| {
        t.stage == Stage::Collector
    }),
    ("a terminal has one width", |t| t.name.starts_with("wrap-")),
    (
        "colours reach a paste raw or in caret form, not both",
        |t| t.name.starts_with("ansi-"),
    ),
    ("line numbers are put on once", |t| {
        t.name.starts_with("numbered-")
    }),
    ("the bytes are encoded once", |t| t.stage == Stage::Encoding),
];

/// True when `chosen` is a paste: distinct transforms, at most one of each kind of [`AT_MOST_ONE`].
pub fn is_a_paste(chosen: &[Transform]) -> bool {
    let distinct = chosen
        .iter()
        .enumerate()
        .all(|(i, t)| chosen[..i].iter().all(|u| u.name != t.name));
    distinct
        && AT_MOST_ONE
            .iter()
            .all(|(_, kind)| chosen.iter().filter(|t| kind(t)).count() <= 1)
}

#[test]
fn the_paste_order_is_the_stage_order() {
    let stages: Vec<Stage> = PASTE_ORDER.iter().map(|(s, _)| *s).collect();
    let mut sorted = stages.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        stages, sorted,
        "PASTE_ORDER must list every stage once, in compose's order"
    );
    for t in CATALOGUE {
        assert!(stages.contains(&t.stage), "{}", t.name);
    }
    // Every kind limited to one has at least two members, or the limit says nothing.
    for (why, kind) in AT_MOST_ONE {
        assert!(CATALOGUE.iter().filter(|t| kind(t)).count() >= 2, "{why}");
    }
    assert!(!is_a_paste(&[transform("wrap-80"), transform("wrap-120")]));
    assert!(!is_a_paste(&[transform("tabs"), transform("tabs")]));
    assert!(is_a_paste(&[
        transform("kubectl-timestamps-prefix"),
        transform("wrap-80"),
        transform("markdown-quote")
    ]));
}

/// Random compositions of two or three transforms on random logs, from a fixed seed.
#[test]
fn every_log_survives_compositions_of_two_or_three() {
    let logs = originals();
    let config = Config {
        cases: composition_cases(),
        failure_persistence: None,
        // A failure names its log, transforms and seed; shrinking would only re-run whole logs.
        max_shrink_iters: 0,
        // About half the draws of three are no paste (two collectors, mostly) and are drawn again.
        max_global_rejects: u32::MAX,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[52; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    // Distinct transforms, at most one of a kind (`AT_MOST_ONE`), applied in `PASTE_ORDER` (and, within a
    // stage, in the catalogue's order: colours, tabs and trimmed blanks before the terminal's wrap).
    let picks = prop::sample::subsequence((0..CATALOGUE.len()).collect::<Vec<_>>(), 2..=3)
        .prop_filter("no paste", |picks| {
            let chosen: Vec<Transform> = picks.iter().map(|&i| CATALOGUE[i]).collect();
            is_a_paste(&chosen)
        });
    let strategy = (0..logs.len(), picks, any::<u64>());
    // Every case runs (a failure does not stop the run), so the count of violations is the measure.
    let violations = std::cell::RefCell::new(Vec::new());
    runner
        .run(&strategy, |(log, picks, seed)| {
            let (path, text, want) = &logs[log];
            let chosen: Vec<Transform> = picks.iter().map(|&i| CATALOGUE[i]).collect();
            violations
                .borrow_mut()
                .extend(violation(path, text, want, &chosen, seed));
            Ok(())
        })
        .unwrap();
    let violations = violations.into_inner();
    eprintln!(
        "{} of {} compositions lose a fact to a wrap notice, {} change one",
        MISSING_WITH_NOTICE.load(std::sync::atomic::Ordering::Relaxed),
        composition_cases(),
        violations.len()
    );
    assert!(
        violations.is_empty(),
        "{} of {} compositions change the facts:\n{}",
        violations.len(),
        composition_cases(),
        violations.join("\n")
    );
}

/// Writes one paste to `target/paste.log` to look at a violation by hand:
/// `VRAMDIFF_PASTE_DUMP='sample-logs/X.log|journald-short+wrap-80|SEED' cargo test --test integration
/// dump_one_paste -- --ignored` (the log, transforms and seed a violation names).
#[test]
#[ignore]
fn dump_one_paste() {
    let spec = std::env::var("VRAMDIFF_PASTE_DUMP").expect("VRAMDIFF_PASTE_DUMP='log|t1+t2|seed'");
    let parts: Vec<&str> = spec.split('|').collect();
    let [path, names, seed] = parts[..] else {
        panic!("VRAMDIFF_PASTE_DUMP='log|t1+t2|seed', not {spec}");
    };
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let chosen: Vec<Transform> = names.split('+').map(transform).collect();
    let pasted = compose(&text, &chosen, seed.parse().unwrap());
    let out = root().join("target/paste.log");
    std::fs::write(&out, &pasted).unwrap();
    eprintln!("{}", out.display());
    // The logical lines of both, to diff: `target/paste.framed` and `target/original.framed`.
    for (name, bytes) in [("paste", pasted), ("original", text.into_bytes())] {
        let mut framed = String::new();
        vramdiff::frame::read::read_logical_lines(&bytes[..], |read| {
            if let vramdiff::frame::read::Read::Line(_, line) = read {
                framed.push_str(line);
                framed.push('\n');
            }
        });
        std::fs::write(root().join(format!("target/{name}.framed")), framed).unwrap();
    }
}

/// Runs the cases a long run printed again, to look at a class of violations by hand:
/// `VRAMDIFF_PASTE_RECHECK=cases.txt cargo test --test integration recheck_pastes -- --ignored --nocapture`,
/// each line of the file `log × t1+t2 (seed N)` as the long run prints it; prints those that still change
/// a fact.
#[test]
#[ignore]
fn recheck_pastes() {
    let list = std::env::var("VRAMDIFF_PASTE_RECHECK").expect("VRAMDIFF_PASTE_RECHECK=cases.txt");
    let list = std::fs::read_to_string(list).unwrap();
    let logs = originals();
    let (mut checked, mut still) = (0, 0);
    for case in list.lines().filter(|l| l.contains(" × ")) {
        let (path, rest) = case.split_once(" × ").unwrap();
        let (names, seed) = rest.split_once(" (seed ").unwrap();
        let seed: u64 = seed
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap();
        let chosen: Vec<Transform> = names.split('+').map(transform).collect();
        let (_, text, want) = logs.iter().find(|(p, ..)| p == path).unwrap();
        checked += 1;
        if let Some(v) = violation(path, text, want, &chosen, seed) {
            still += 1;
            eprintln!("{v}");
        }
    }
    eprintln!("{still} of {checked} still change a fact");
}
