//! The CI outputs of the real binary: JUnit XML (parsed back with quick-xml and counted against the JSON
//! report's loads and findings), `--summary` into `$GITHUB_STEP_SUMMARY`, shell completions and the man page,
//! and golden JUnit files (`reports/ci/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::diff::{golden, GROWN, OLD};
use crate::util::{root, run, stderr, stdout};

/// What a JUnit document holds, read back with a strict XML parser.
#[derive(Debug, Default, PartialEq)]
struct Junit {
    suites: Vec<String>,
    cases: Vec<String>,
    /// (`type`, `message`) of every failure.
    failures: Vec<(String, String)>,
    errors: usize,
}

fn attribute(e: &quick_xml::events::BytesStart, name: &str) -> String {
    e.try_get_attribute(name)
        .expect("well-formed attributes")
        .map(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .expect("escaped value")
                .into_owned()
        })
        .unwrap_or_default()
}

fn parse_junit(xml: &[u8]) -> Junit {
    let text = std::str::from_utf8(xml).expect("JUnit is UTF-8");
    // XML 1.0 cannot carry control characters other than tab, newline and carriage return, even escaped.
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')),
        "a control character in the XML"
    );
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut junit = Junit::default();
    let mut depth = 0usize;
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("invalid XML: {e}\n{text}"))
        {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let name: String = e.local_name().as_ref().to_owned();
                match name.as_str() {
                    "testsuite" => {
                        junit.suites.push(attribute(&e, "name"));
                        depth += 1;
                    }
                    "testcase" => junit.cases.push(attribute(&e, "name")),
                    "failure" => junit
                        .failures
                        .push((attribute(&e, "type"), attribute(&e, "message"))),
                    "error" => junit.errors += 1,
                    _ => {}
                }
            }
            Event::GeneralRef(r) => {
                // Only the five predefined entities (no DTD declares others).
                let name: &str = &r;
                assert!(
                    ["lt", "gt", "amp", "quot", "apos"].contains(&name),
                    "entity &{name};"
                );
            }
            _ => {}
        }
    }
    assert!(depth > 0 || junit.cases.is_empty());
    junit
}

/// The JSON report's loads and its findings at warning or above.
fn json_counts(args: &[&str]) -> (usize, Vec<(String, String)>) {
    let mut all = vec!["--format", "json", "--fail-on", "never"];
    all.extend(args);
    let out = run(&all, b"");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let loads = report["loads"].as_array().unwrap();
    let findings = loads
        .iter()
        .flat_map(|l| l["findings"].as_array().unwrap())
        .filter(|f| f["severity"] == "warning" || f["severity"] == "error")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                format!(
                    "{}: {}",
                    f["code"].as_str().unwrap(),
                    f["message"].as_str().unwrap()
                ),
            )
        })
        .collect();
    (loads.len(), findings)
}

#[test]
fn junit_of_the_founding_case_has_a_case_per_load_and_a_failure_per_warning_or_worse() {
    let out = run(&["--format", "junit", "--fail-on", "warning", OLD], b"");
    // The exit code is the gate's, as with every format: the founding case has warnings.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let junit = parse_junit(&out.stdout);
    let (loads, findings) = json_counts(&[OLD]);
    assert_eq!(junit.suites, [OLD]);
    assert_eq!(junit.cases.len(), loads);
    assert_eq!(
        junit.cases,
        ["gemma3 ctx=4096 parallel=1 on Tesla K80 + Tesla K80 (line 9)"]
    );
    assert_eq!(junit.failures, findings);
    // needless-split, projector-double-counted, overestimate.
    assert_eq!(junit.failures.len(), 3);
    assert_eq!(junit.errors, 0);
    // At the default threshold (error) the same load passes.
    let passing = parse_junit(&run(&["--format", "junit", OLD], b"").stdout);
    assert!(passing.failures.is_empty());
    assert_eq!(passing.cases.len(), 1);
}

#[test]
fn junit_counts_match_the_json_report_on_several_inputs_at_once() {
    let inputs = [
        OLD,
        "sample-logs/founding-today-3090-4060-gemma4-31b.log",
        "sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log",
        "sample-logs/001-kaggle-t4-llama31-8b.log",
    ];
    let mut args = vec!["--format", "junit", "--fail-on", "warning"];
    args.extend(inputs);
    let junit = parse_junit(&run(&args, b"").stdout);
    assert_eq!(junit.suites, inputs);
    let (loads, findings) = json_counts(&inputs);
    assert_eq!(junit.cases.len(), loads);
    assert_eq!(junit.failures, findings);
}

#[test]
fn an_unreadable_input_is_a_suite_with_an_error() {
    let out = run(&["--format", "junit", OLD, "no-such-file.log"], b"");
    assert_eq!(out.status.code(), Some(2));
    let junit = parse_junit(&out.stdout);
    assert_eq!(junit.suites, [OLD, "no-such-file.log"]);
    assert_eq!(junit.errors, 1);
}

/// A scratch folder of this test process.
fn scratch(tag: &str) -> PathBuf {
    crate::util::scratch(&format!("ci-{tag}"))
}

#[test]
fn log_text_with_markup_and_control_characters_stays_valid_xml() {
    // The founding case under a name full of markup, quotes and control characters (the suite's name is the
    // path): the XML parser must read it back to the same name, controls replaced by '?'.
    let dir = scratch("xml");
    let name = "a<b>&\"c'\u{1}\u{1b}[31m\u{202e}.log";
    std::fs::copy(root().join(OLD), dir.join(name)).unwrap();
    let out = crate::util::run_in(&dir, &["--format", "junit", "--fail-on", "info", name], b"");
    let junit = parse_junit(&out.stdout);
    assert_eq!(junit.suites, ["a<b>&\"c'??[31m?.log"]);
    assert_eq!(junit.cases.len(), 1);
    assert_eq!(
        junit.failures.len(),
        json_counts(&[OLD]).1.len() + 2,
        "two info findings as well"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn whatif_and_diff_speak_junit_too() {
    let whatif = run(
        &[
            "whatif",
            "--format",
            "junit",
            "--fail-on",
            "warning",
            OLD,
            "--gpu-count",
            "1",
        ],
        b"",
    );
    assert_eq!(whatif.status.code(), Some(0), "{}", stderr(&whatif));
    let junit = parse_junit(&whatif.stdout);
    assert_eq!(junit.cases.len(), 1);
    // needless-split, projector-double-counted, overestimate.
    assert_eq!(junit.failures.len(), 3);
    assert!(
        stdout(&whatif).contains("<system-out>"),
        "the replay rides along"
    );
    let diff = parse_junit(&run(&["diff", "--format", "junit", OLD, GROWN], b"").stdout);
    assert_eq!(diff.cases.len(), 1);
    // CUDA1, weights_gpu, and the underestimate that appeared.
    assert_eq!(diff.failures.len(), 3);
    assert!(diff.failures.iter().all(|(kind, _)| kind == "regression"));
    let same = parse_junit(&run(&["diff", "--format", "junit", OLD, OLD], b"").stdout);
    assert_eq!((same.cases.len(), same.failures.len()), (1, 0));
}

/// Run the binary with `GITHUB_STEP_SUMMARY` set to `summary` (or removed).
fn run_with_summary(args: &[&str], summary: Option<&Path>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
    command
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .env_remove("GITHUB_STEP_SUMMARY");
    if let Some(path) = summary {
        command.env("GITHUB_STEP_SUMMARY", path);
    }
    command.output().expect("vramdiff runs")
}

#[test]
fn summary_appends_the_markdown_report_to_the_github_step_summary() {
    let dir = scratch("summary");
    let file = dir.join("step-summary.md");
    let first = run_with_summary(&["--summary", "--fail-on", "warning", OLD], Some(&file));
    assert_eq!(first.status.code(), Some(1), "the gate is unchanged");
    assert_eq!(
        first.stdout,
        run(&["--fail-on", "warning", OLD], b"").stdout,
        "stdout keeps the chosen format (text)"
    );
    let markdown = run(&["--format", "markdown", OLD], b"").stdout;
    let written = std::fs::read(&file).unwrap();
    assert_eq!(written, [markdown.as_slice(), b"\n"].concat());
    // Appended, not replaced: a second step adds its own.
    let diff = run_with_summary(&["diff", "--summary", OLD, GROWN], Some(&file));
    assert_eq!(diff.status.code(), Some(0));
    let both = std::fs::read_to_string(&file).unwrap();
    assert!(both.starts_with(std::str::from_utf8(&markdown).unwrap()));
    assert!(both.contains("## vramdiff diff"));
    assert!(both.contains("**REGRESSION** CUDA1: more VRAM used"));
    // Unset: nothing written, nothing said.
    let unset = run_with_summary(&["--summary", OLD], None);
    assert_eq!(unset.status.code(), Some(0));
    assert!(stderr(&unset).is_empty(), "{}", stderr(&unset));
    // Unwritable (a folder): a warning, the report and the exit code as without --summary.
    let bad = run_with_summary(&["--summary", OLD], Some(&dir));
    assert_eq!(bad.status.code(), Some(0));
    assert!(stderr(&bad).contains("warning: cannot append the summary to $GITHUB_STEP_SUMMARY"));
    assert_eq!(bad.stdout, run(&[OLD], b"").stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_for_four_shells_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = run(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for word in [
            "whatif",
            "batch",
            "diff",
            "completions",
            "man",
            "fail-on",
            "summary",
        ] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    assert_eq!(run(&["completions", "tcsh"], b"").status.code(), Some(2));
}

#[test]
fn the_man_page_renders_with_man() {
    let out = run(&["man"], b"");
    assert_eq!(out.status.code(), Some(0));
    let roff = stdout(&out);
    assert!(roff.contains(".TH vramdiff 1"), "{roff}");
    for word in ["whatif", "diff", "completions", "\\-\\-format"] {
        assert!(roff.contains(word), "the man page lacks {word}");
    }
    // `man -l` where man-db is installed (`.ci/run` installs it in CI); elsewhere the roff checks above stand.
    if Command::new("man").arg("--version").output().is_err() {
        eprintln!("man not installed: `man -l` not tried here");
        return;
    }
    let dir = scratch("man");
    let page = dir.join("vramdiff.1");
    std::fs::write(&page, &out.stdout).unwrap();
    let rendered = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs");
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("NAME") && text.contains("vramdiff"), "{text}");
    assert!(text.contains("Reconcile Ollama"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn golden_junit_reports_are_current() {
    let mut mismatched = Vec::new();
    for (name, input) in [
        ("founding-k80-gemma3-12b.log.junit.xml", OLD),
        (
            "founding-today-3090-4060-gemma4-31b.log.junit.xml",
            "sample-logs/founding-today-3090-4060-gemma4-31b.log",
        ),
    ] {
        let out = run(&["--format", "junit", "--fail-on", "warning", input], b"");
        mismatched.extend(golden(name, &out.stdout));
    }
    let diff = run(&["diff", "--format", "junit", OLD, GROWN], b"");
    mismatched.extend(golden(
        "diff-founding-k80-cuda1-weights-plus-1gib.junit.xml",
        &diff.stdout,
    ));
    assert!(
        mismatched.is_empty(),
        "reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}

/// `batch --junit FILE` holds what the report's `--format junit` holds for the same logs: a suite per log, a case
/// per load, one failure per finding at or above `--fail-on` (batch's gate exits 1 on them as well); `--summary`
/// appends the batch's Markdown summary, which is also its stdout.
#[cfg(feature = "batch")]
#[test]
fn batch_speaks_junit_and_appends_its_summary() {
    let inputs = [
        OLD,
        "sample-logs/founding-today-3090-4060-gemma4-31b.log",
        "sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log",
        "sample-logs/001-kaggle-t4-llama31-8b.log",
    ];
    let dir = scratch("batch-junit");
    let xml = dir.join("vramdiff.xml");
    let summary = dir.join("step-summary.md");
    let xml_arg = xml.display().to_string();
    let mut args = vec![
        "batch",
        "--quiet",
        "--threads",
        "1",
        "--fail-on",
        "warning",
        "--junit",
        xml_arg.as_str(),
        "--summary",
    ];
    args.extend(inputs);
    let out = run_with_summary(&args, Some(&summary));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let batch = parse_junit(&std::fs::read(&xml).unwrap());
    let mut report_args = vec!["--format", "junit", "--fail-on", "warning"];
    report_args.extend(inputs);
    let report = parse_junit(&run(&report_args, b"").stdout);
    let (loads, mut findings) = json_counts(&inputs);
    // batch reads its files in path order; the report in the order given.
    let mut names: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
    names.sort();
    assert_eq!(batch.suites, names);
    assert_eq!(batch.cases.len(), loads);
    let (mut from_batch, mut from_report) = (batch.failures, report.failures);
    findings.sort();
    from_batch.sort();
    from_report.sort();
    assert_eq!(from_batch, findings);
    assert_eq!(from_batch, from_report);
    assert_eq!(
        std::fs::read(&summary).unwrap(),
        [out.stdout.as_slice(), b"\n"].concat()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
