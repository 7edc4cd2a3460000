//! What was not read is visible (issue 52, part 4): the memory-like lines no rule understood are listed in
//! the JSON report with their line numbers and the sizes they print, counted in every format (text, Markdown,
//! HTML, JUnit), and listed in `doctor --issue`'s block for the load they fall in.

use crate::util::{run, stdout};

/// `sample-logs/807-…`: a vLLM 0.20 start with four memory-like lines no rule reads (lines 3, 7, 30, 54).
const VLLM_807: &str = "sample-logs/807-vllm-0200-gb10-qwen36-35b-nvfp4-graph-estimate-vs-pool.log";

fn report(format: &str) -> String {
    stdout(&run(
        &["--format", format, "--fail-on", "never", VLLM_807],
        b"",
    ))
}

#[test]
fn json_lists_each_line_with_its_number_and_figures() {
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let input = &json["inputs"][0];
    assert_eq!(input["unrecognized_memory_lines"], 4);
    let unread = input["unrecognized"].as_array().unwrap();
    let lines: Vec<u64> = unread.iter().map(|u| u["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [3, 7, 30, 54]);
    // Line 30: `Checkpoint size: 23.32 GiB. Available RAM: 87.94 GiB.`
    let figures = &unread[2]["figures"];
    assert_eq!(figures[0]["text"], "23.32 GiB");
    assert_eq!(figures[1]["text"], "87.94 GiB");
    assert_eq!(
        figures[1]["bytes"],
        (87.94 * (1u64 << 30) as f64).round() as u64
    );
}

#[test]
fn every_format_counts_them() {
    assert!(report("text").contains("4 memory-like lines not understood"));
    let markdown = report("markdown");
    assert!(markdown.contains("memory-like, not understood"));
    assert!(markdown
        .lines()
        .any(|l| l.contains("807-vllm") && l.contains("| 4 |")));
    assert!(report("html").contains("memory-like, not understood"));
    assert!(report("junit").contains(r#"<property name="unrecognized_memory_lines" value="4"/>"#));
}

#[test]
fn the_issue_block_lists_the_lines_of_its_load() {
    use vramdiff::model::Concluded;
    use vramdiff::report::issue::{issue, IssueContext};
    use vramdiff::report::redact::Known;
    let analysis = crate::util::analyze(&[&crate::util::root().join(VLLM_807)]);
    let load: &Concluded = &analysis.loads[0];
    let context = IssueContext {
        origin: "server.log".to_string(),
        unread: vec![(
            30,
            "Checkpoint size: 23.32 GiB. Available RAM: 87.94 GiB.".to_string(),
        )],
        ..IssueContext::default()
    };
    let block = issue(1, load, &context, &Known::default());
    assert!(block.contains("- **Not read:** 1 memory-like line no rule understood"));
    assert!(block.contains("30: Checkpoint size: 23.32 GiB."));
}
