//! Property tests (proptest, a fixed small number of cases so the suite stays fast): no input panics, the
//! same input gives the same bytes, unrelated lines interleaved into a log do not change its reconciliation,
//! two logs read as one stream give the loads each gives alone, and quantity arithmetic keeps
//! `low <= bytes <= high`.

use std::sync::{Mutex, OnceLock};

use proptest::prelude::*;
use vramdiff::model::{Analysis, Quantity};
use vramdiff::pipeline::{Options, Pipeline};
use vramdiff::report::{self, Format, ReportOptions};

use crate::util::root;

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const T4: &str = "sample-logs/001-kaggle-t4-llama31-8b.log";

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Shrinking a failing multi-KiB log can take minutes; a failure prints its input anyway.
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One pipeline for every case (the grammar compiled once), keeping unrecognised lines.
fn pipeline() -> &'static Mutex<Pipeline> {
    static PIPELINE: OnceLock<Mutex<Pipeline>> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let options = Options {
            keep_unrecognized: true,
            ..Options::default()
        };
        Mutex::new(Pipeline::new(&options).unwrap())
    })
}

/// Analyse `bytes` as one input, through the pipeline the binary runs.
pub fn analyze(name: &str, bytes: &[u8]) -> Analysis {
    let mut pipeline = pipeline().lock().unwrap_or_else(|e| e.into_inner());
    let report = pipeline.run(
        name,
        vramdiff::source::decoded(std::io::Cursor::new(bytes.to_vec())),
        &mut [],
    );
    Analysis {
        inputs: vec![report.summary],
        loads: report.loads,
    }
}

fn render(analysis: &Analysis) -> (Vec<u8>, Vec<u8>) {
    let text = report::reporter(
        Format::Text,
        ReportOptions {
            show_unrecognized: true,
            ..ReportOptions::default()
        },
    )
    .render(analysis);
    let json = report::reporter(Format::Json, ReportOptions::default()).render(analysis);
    (text, json)
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap()
}

/// A JSON key whose value says where a line sits, not what it says: `line`, `first_line`, `plan_line`,
/// `buffer_lines` (a `--fit` round's test buffers), `capture_began` (a rank's first graph-capture line), the
/// input's `path`.
fn is_line_ref(key: &str) -> bool {
    matches!(
        key,
        "line" | "lines" | "buffer_lines" | "path" | "capture_began"
    ) || key.ends_with("_line")
}

/// A load's JSON without what depends on where its lines sit in the file: line numbers, the input's path.
pub fn figures(load: &serde_json::Value) -> serde_json::Value {
    static LINE_REFS: OnceLock<regex::Regex> = OnceLock::new();
    let refs =
        LINE_REFS.get_or_init(|| regex::Regex::new(r"(?i)\b(lines?:? )[0-9][0-9,+ –]*").unwrap());
    fn walk(v: &serde_json::Value, refs: &regex::Regex) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| !is_line_ref(k))
                    .map(|(k, v)| match (k.as_str(), v) {
                        // `(part, line)`, `(peak, line)`: the first is a fact, the line is where it sits.
                        ("failed_part" | "peak", Value::Array(pair)) => {
                            (k.clone(), Value::Array(pair[..pair.len().min(1)].to_vec()))
                        }
                        // `[(phase, line)]`.
                        ("phases", Value::Array(phases)) => (
                            k.clone(),
                            Value::Array(
                                phases
                                    .iter()
                                    .map(|p| match p {
                                        Value::Array(pair) => {
                                            Value::Array(pair[..pair.len().min(1)].to_vec())
                                        }
                                        other => other.clone(),
                                    })
                                    .collect(),
                            ),
                        ),
                        _ => (k.clone(), walk(v, refs)),
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, refs)).collect()),
            Value::String(s) => Value::String(refs.replace_all(s, "${1}N").into_owned()),
            other => other.clone(),
        }
    }
    walk(load, refs)
}

pub fn loads_json(analysis: &Analysis) -> Vec<serde_json::Value> {
    let (_, json) = render(analysis);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    v["loads"].as_array().unwrap().iter().map(figures).collect()
}

/// Lines from the sample logs, cut anywhere and spliced: text that looks like logs but is broken.
fn mangled_log() -> impl Strategy<Value = Vec<u8>> {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    let lines = LINES.get_or_init(|| {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(root().join("sample-logs")).unwrap() {
            let path = entry.unwrap().path();
            // The `.expect.toml` answer files are not log text.
            if path.to_string_lossy().ends_with(".expect.toml") {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                all.extend(text.lines().map(str::to_string));
            }
        }
        all
    });
    let n = lines.len();
    prop::collection::vec(
        (
            0..n,
            any::<u16>(),
            any::<u16>(),
            prop::option::of(any::<u8>()),
        ),
        0..60,
    )
    .prop_map(move |picks| {
        let mut out = Vec::new();
        for (i, a, b, junk) in picks {
            let line = lines[i].as_bytes();
            let (a, b) = (a as usize % (line.len() + 1), b as usize % (line.len() + 1));
            let (a, b) = (a.min(b), a.max(b));
            // Keep the line, or its start, or a slice of it; sometimes with a stray byte inside.
            let part = match i % 3 {
                0 => line,
                1 => &line[..b],
                _ => &line[a..b],
            };
            out.extend_from_slice(part);
            if let Some(j) = junk {
                out.push(j);
            }
            out.push(b'\n');
        }
        out
    })
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn arbitrary_bytes_never_panic_and_render_the_same_twice(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let first = render(&analyze("fuzz.log", &bytes));
        let second = render(&analyze("fuzz.log", &bytes));
        prop_assert_eq!(first, second);
    }

    #[test]
    fn broken_log_text_never_panics_and_renders_the_same_twice(bytes in mangled_log()) {
        let (text, json) = render(&analyze("mangled.log", &bytes));
        serde_json::from_slice::<serde_json::Value>(&json).unwrap();
        let text = String::from_utf8(text).unwrap();
        prop_assert!(!text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        prop_assert_eq!(render(&analyze("mangled.log", &bytes)), (text.into_bytes(), json));
    }
}

/// Lines that have nothing to do with a model load: HTTP access lines, kernel messages, unrelated slog
/// records, blank lines.
const NOISE: &[&str] = &[
    "[GIN] 2025/07/20 - 09:44:01 | 200 |    1.234567ms |       127.0.0.1 | POST     \"/api/chat\"",
    "[GIN] 2025/07/20 - 09:44:02 | 500 |          4m1s |      172.17.0.1 | POST     \"/api/generate\"",
    "[ 1234.567890] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  470.256.02",
    "kernel: [ 8812.001122] nvidia-uvm: Loaded the UVM driver, major device number 511.",
    "time={time} level=INFO source=images.go:463 msg=\"total blobs: 12\"",
    "time={time} level=WARN source=routes.go:99 msg=\"client disconnected\" remote=10.0.0.7:51234",
    "",
];

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn unrelated_lines_interleaved_do_not_change_the_reconciliation(
        which in 0..2usize,
        inserts in prop::collection::vec((any::<u16>(), 0..NOISE.len()), 1..40),
    ) {
        let name = [FOUNDING, T4][which];
        let clean = sample(name);
        // Unrelated server records carry the server's clock: take the log's first time for them.
        let time = clean
            .lines()
            .find_map(|l| l.strip_prefix("time=").and_then(|t| t.split(' ').next()))
            .unwrap()
            .to_string();
        let noise: Vec<String> = NOISE.iter().map(|n| n.replace("{time}", &time)).collect();
        let mut lines: Vec<&str> = clean.lines().collect();
        let mut positions: Vec<(usize, usize)> = inserts
            .iter()
            .map(|&(at, noise)| (at as usize % (lines.len() + 1), noise))
            .collect();
        // Insert from the end so earlier positions stay valid.
        positions.sort_by_key(|p| std::cmp::Reverse(p.0));
        for (at, which_noise) in positions {
            lines.insert(at, &noise[which_noise]);
        }
        let noisy = lines.join("\n") + "\n";
        let expected = loads_json(&analyze(name, clean.as_bytes()));
        let got = loads_json(&analyze(name, noisy.as_bytes()));
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn two_logs_read_as_one_stream_give_the_loads_each_gives_alone(
        first in 0..5usize,
        second in 0..5usize,
        crlf in any::<bool>(),
    ) {
        // Logs whose loads are complete: a load the first log leaves open ends differently when another
        // log follows ("the log's clock jumps back" instead of "the log ends first").
        let names = [
            FOUNDING,
            T4,
            "sample-logs/002-runpod-rtx4090-llama31-8b-lora.log",
            "sample-logs/004-windows-rocm-780m-gemma3-27b-newengine.log",
            "sample-logs/012-journald-rocm-strixhalo-gfx1151-gptoss-120b-newengine.log",
        ];
        // The stream must show where one log ends: a server start line, or a clock that jumps back (see
        // `parse::clock`). A later log appended to an earlier one without its start line cannot be told from
        // the same server going on, so the later log goes first.
        let first_time = |text: &str| {
            text.lines()
                .find_map(|l| l.find("time=").map(|i| l[i + 5..].split(' ').next().unwrap().to_string()))
                .and_then(|t| vramdiff::parse::clock::parse_rfc3339_ms(&t))
                .unwrap()
        };
        let (mut a, mut b) = (sample(names[first]), sample(names[second]));
        if first_time(&b) > first_time(&a) {
            std::mem::swap(&mut a, &mut b);
        }
        let mut alone = loads_json(&analyze("a", a.as_bytes()));
        alone.extend(loads_json(&analyze("b", b.as_bytes())));
        let mut joined = a;
        if !joined.ends_with('\n') {
            joined.push('\n');
        }
        joined.push_str(&b);
        if crlf {
            joined = joined.replace('\n', "\r\n");
        }
        prop_assert_eq!(loads_json(&analyze("ab", joined.as_bytes())), alone);
    }
}

/// Any quantity: three values, ordered, from anywhere in the i64 range (edges included).
fn quantity() -> impl Strategy<Value = Quantity> {
    let value = prop_oneof![
        any::<i64>(),
        -(1i64 << 45)..(1i64 << 45),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0i64),
    ];
    (value.clone(), value.clone(), value).prop_map(|(a, b, c)| {
        let mut v = [a, b, c];
        v.sort();
        Quantity::with_bounds(v[1], v[0], v[2])
    })
}

fn ordered(q: Quantity) -> bool {
    q.low <= q.bytes && q.bytes <= q.high
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn quantity_arithmetic_keeps_low_le_bytes_le_high(
        a in quantity(),
        b in quantity(),
        n in prop_oneof![any::<i64>(), -64i64..64],
        num in prop_oneof![any::<i64>(), -64i64..64],
        den in prop_oneof![any::<i64>(), -64i64..64],
        more in prop::collection::vec(quantity(), 0..6),
    ) {
        prop_assert!(ordered(a.plus(b)), "{:?} + {:?} = {:?}", a, b, a.plus(b));
        prop_assert!(ordered(a.minus(b)), "{:?} - {:?} = {:?}", a, b, a.minus(b));
        prop_assert!(ordered(a.times(n)), "{:?} × {} = {:?}", a, n, a.times(n));
        prop_assert!(ordered(a.scale(num, den)), "{:?} × {}/{} = {:?}", a, num, den, a.scale(num, den));
        if let Some(s) = Quantity::sum(more.iter().copied()) {
            prop_assert!(ordered(s), "sum {:?} = {:?}", more, s);
        }
        let w = Quantity::with_bounds(a.bytes, b.high, b.low);
        prop_assert!(ordered(w), "{:?}", w);
    }

    #[test]
    fn decimals_as_printed_are_ordered_and_not_negative(
        mantissa in any::<u64>(),
        scale in 0u32..6,
        unit in prop_oneof![Just(1i64), Just(1024), Just(1 << 20), Just(1 << 30), Just(1i64 << 40)],
    ) {
        if let Some(q) = Quantity::from_decimal(mantissa as u128, scale, unit) {
            prop_assert!(ordered(q) && q.low >= 0, "{:?}", q);
        }
    }
}

/// One piece of a log built to push the bounds on what a run keeps: short lines with a memory word (kept as
/// unrecognised, up to `MAX_KEPT_UNRECOGNIZED`), lines about as long as the line cap, invalid UTF-8 (each byte
/// read back as a three-byte U+FFFD), and a record with an open quote followed by long indented
/// continuations, which the framer joins up to its own cap (`src/frame/mod.rs`).
fn bounded_piece() -> impl Strategy<Value = Vec<u8>> {
    use vramdiff::source::MAX_LINE_BYTES;
    prop_oneof![
        (1usize..2_000).prop_map(|n| b"weird buffer 1.0 MiB\n".repeat(n)),
        (MAX_LINE_BYTES - 4..MAX_LINE_BYTES + 4).prop_map(|n| {
            let mut line = b"CUDA0 buffer size = ".to_vec();
            line.resize(n, b'x');
            line.push(b'\n');
            line
        }),
        (1usize..MAX_LINE_BYTES + 4).prop_map(|n| {
            let mut line = b"memory 1 MiB ".to_vec();
            line.resize(n, 0xff);
            line.push(b'\n');
            line
        }),
        (1usize..6, 200_000usize..400_000).prop_map(|(pieces, width)| {
            let mut log =
                b"time=2025-07-20T09:44:01.000Z level=INFO msg=\"memory 1 MiB open".to_vec();
            for _ in 0..pieces {
                log.extend_from_slice(b"\n    key=");
                log.extend(std::iter::repeat_n(b'v', width));
            }
            log.push(b'\n');
            log
        }),
    ]
}

proptest! {
    #![proptest_config(config(6))]

    /// What a run keeps of its input is bounded whatever the input: at most `MAX_KEPT_UNRECOGNIZED`
    /// unrecognised lines, each no longer than the framer's join cap plus one capped physical line, in
    /// U+FFFD's three bytes per byte read. (Peak memory is not measured here: the crate forbids `unsafe`, so no
    /// counting allocator; `tests/bad_input.rs` measures the peak RSS of a 200 MB line and stops a gzip bomb at
    /// the decompression ratio, which takes a GiB of output and so is no property case.)
    #[test]
    fn what_a_run_keeps_is_bounded_whatever_the_input(
        pieces in prop::collection::vec(bounded_piece(), 1..8),
        // Few, or about the cap (`src/pipeline/mod.rs` keeps the first 10 000).
        many in prop_oneof![0usize..100, 9_990usize..10_050],
    ) {
        use vramdiff::pipeline::MAX_KEPT_UNRECOGNIZED;
        use vramdiff::source::MAX_LINE_BYTES;
        let mut log = b"weird 2 MiB\n".repeat(many);
        for piece in &pieces {
            log.extend_from_slice(piece);
        }
        let analysis = analyze("bounded.log", &log);
        let summary = &analysis.inputs[0];
        prop_assert!(summary.unrecognized.len() <= MAX_KEPT_UNRECOGNIZED, "{}", summary.unrecognized.len());
        if many >= MAX_KEPT_UNRECOGNIZED {
            prop_assert_eq!(summary.unrecognized.len(), MAX_KEPT_UNRECOGNIZED);
        }
        let bound = 3 * (2 * MAX_LINE_BYTES + 64);
        for kept in &summary.unrecognized {
            prop_assert!(kept.text.len() <= bound, "line {}: {} bytes", kept.line, kept.text.len());
        }
    }
}
