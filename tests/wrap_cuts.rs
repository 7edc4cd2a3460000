//! A terminal's wrap that destroyed a figure is said (issue 52, part 1): where the framer cannot undo a hard
//! wrap because nothing tells the next row for the rest of the figure the held row ends in
//! (`src/frame/join.rs`, `figure_cut`), the line is not read (no other number stands in for the one the
//! server printed) and the report lists it in JSON (`inputs[].cut_by_wrap`) and in text, Markdown and HTML.

use crate::paste_invariance::real_logs;
use crate::paste_transforms::hard_wrap;
use crate::properties::analyze;
use crate::util::{run, stdout};

/// `sample-logs/511-…` line 13 (corpus raw 0511), 133 characters: the scheduler's default context.
const LOG_511: &str =
    "sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log";

/// Line 13 of corpus 511 as a terminal 132 columns wide shows it, alone (the first record of the paste that
/// wraps, so no width was learnt): `… default_num_ctx=409` / `6`.
fn cut_line() -> Vec<u8> {
    let text = std::fs::read_to_string(crate::util::root().join(LOG_511)).unwrap();
    let line = text.lines().nth(12).unwrap();
    assert!(line.ends_with("default_num_ctx=4096"), "{line}");
    let wrapped = hard_wrap(&format!("{line}\n"), 132);
    assert!(wrapped.ends_with("default_num_ctx=409\n6\n"), "{wrapped}");
    wrapped.into_bytes()
}

fn report(format: &str) -> String {
    stdout(&run(
        &["--format", format, "--fail-on", "never", "-"],
        &cut_line(),
    ))
}

#[test]
fn json_lists_the_cut_line_and_does_not_read_it() {
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let cut = json["inputs"][0]["cut_by_wrap"].as_array().unwrap();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(cut[0]["line"], 1);
    assert_eq!(cut[0]["width"], 132);
    assert_eq!(
        cut[0]["notice"],
        "a figure was cut by a wrap at column 132; not read"
    );
    assert!(cut[0]["text"]
        .as_str()
        .unwrap()
        .ends_with("default_num_ctx=409"));
    // The line whole is read (no notice).
    let whole = analyze(LOG_511, b"time=2026-09-02T16:52:04.751Z level=INFO source=routes.go:2058 msg=\"vram-based default context\" total_vram=\"0 B\" default_num_ctx=4096\n");
    assert!(whole.inputs[0].cut_by_wrap.is_empty());
    assert_eq!(whole.inputs[0].recognized_lines, 1);
    let cut = analyze(LOG_511, &cut_line());
    assert_eq!(cut.inputs[0].recognized_lines, 0);
}

#[test]
fn every_format_lists_it() {
    let text = report("text");
    assert!(
        text.contains("1 line cut inside a figure by a terminal's wrap, not read"),
        "{text}"
    );
    assert!(text.contains("a figure was cut by a wrap at column 132; not read"));
    assert!(report("markdown").contains("cut inside a figure by a terminal's wrap, not read"));
    assert!(report("html").contains("cut inside a figure by a terminal's wrap, not read"));
}

/// Never a notice on a real log as the server wrote it: every log the paste property runs over.
#[test]
fn no_bundled_log_has_a_cut_figure() {
    for (path, text) in real_logs() {
        let analysis = analyze(&path, text.as_bytes());
        assert!(
            analysis.inputs[0].cut_by_wrap.is_empty(),
            "{path}: {:?}",
            analysis.inputs[0].cut_by_wrap
        );
    }
}

#[test]
fn junit_counts_it() {
    assert!(
        report("junit").contains(r#"<property name="lines_cut_by_wrap" value="1"/>"#),
        "{}",
        report("junit")
    );
}

#[test]
fn the_issue_block_lists_it() {
    use vramdiff::report::issue::{issue, IssueContext};
    use vramdiff::report::redact::Known;
    // The notice of the cut line, beside the load of the whole log it belongs to (`doctor --issue` keeps
    // the cut lines of the load it reports).
    let analysis = analyze(
        LOG_511,
        &std::fs::read(crate::util::root().join(LOG_511)).unwrap(),
    );
    let cut = analyze(LOG_511, &cut_line()).inputs[0].cut_by_wrap[0].clone();
    let context = IssueContext {
        origin: "server.log".to_string(),
        cut_by_wrap: vec![(13, cut.text.clone(), cut.width)],
        ..IssueContext::default()
    };
    let block = issue(1, &analysis.loads[0], &context, &Known::default());
    assert!(
        block.contains("- **Cut by a wrap:** 1 line whose figure a terminal's wrap cut, not read"),
        "{block}"
    );
    assert!(
        block.contains("default_num_ctx=409 (cut at column 132)"),
        "{block}"
    );
}
