//! End-to-end runs of the real binary: stdin, files, formats, exit codes, and awkward input.

use crate::util::{root, run, stderr, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";

#[test]
fn stdin_gives_the_same_loads_as_the_file() {
    let bytes = std::fs::read(root().join(FOUNDING)).unwrap();
    let piped = run(&["--format", "json"], &bytes);
    let named = run(&["--format", "json", FOUNDING], b"");
    assert_eq!(piped.status.code(), Some(0));
    let p: serde_json::Value = serde_json::from_slice(&piped.stdout).unwrap();
    let n: serde_json::Value = serde_json::from_slice(&named.stdout).unwrap();
    assert_eq!(p["inputs"][0]["path"], "<stdin>");
    assert_eq!(p["loads"][0]["components"], n["loads"][0]["components"]);
    assert_eq!(p["loads"][0]["devices"], n["loads"][0]["devices"]);
}

#[test]
fn dash_reads_stdin_among_files() {
    let bytes = std::fs::read(root().join("sample-logs/001-kaggle-t4-llama31-8b.log")).unwrap();
    let out = run(&["--format", "json", FOUNDING, "-"], &bytes);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["loads"].as_array().unwrap().len(), 2);
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
}

#[test]
fn text_report_names_the_terms_and_the_summary_line() {
    let out = run(&[FOUNDING], b"");
    let text = stdout(&out);
    // The graph as the build that printed the estimate (ollama37 241a0340) charged it.
    assert!(text.contains(
        "190.0 MiB on CUDA0 + memory.graph.full on CUDA1 (as ollama37-241a0340 charges the graph) + projector.graph"
    ));
    assert!(text.contains("CUDA0"));
    assert!(text.contains("36 lines read"), "{text}");
}

#[test]
fn a_missing_file_is_an_error_naming_it_but_the_others_are_reported() {
    let out = run(&["--format", "json", "no/such/server.log", FOUNDING], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no/such/server.log"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["loads"].as_array().unwrap().len(), 1);
}

#[test]
fn a_directory_is_refused_with_a_hint() {
    let out = run(&["sample-logs"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
}

#[test]
fn bad_usage_exits_2() {
    let out = run(&["--format", "yaml"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn crlf_invalid_utf8_and_utf16_logs_parse_like_plain_ones() {
    let plain = std::fs::read_to_string(root().join(FOUNDING)).unwrap();
    let reference: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], plain.as_bytes()).stdout).unwrap();
    // CRLF
    let crlf = plain.replace('\n', "\r\n");
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], crlf.as_bytes()).stdout).unwrap();
    assert_eq!(v["loads"][0]["devices"], reference["loads"][0]["devices"]);
    // UTF-16 LE with a byte-order mark, as PowerShell's `>` writes it.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in plain.encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], &utf16).stdout).unwrap();
    assert_eq!(v["loads"][0]["devices"], reference["loads"][0]["devices"]);
    // Invalid UTF-8 on a line of its own costs nothing else.
    // (not starting with FF FE, which is a UTF-16 byte-order mark)
    let mut broken = b"\xc3\x28 garbage \xa0\xa1 \x00\x01\n".to_vec();
    broken.extend_from_slice(plain.as_bytes());
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], &broken).stdout).unwrap();
    let strip = |v: &serde_json::Value| -> Vec<(String, String)> {
        v["loads"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["delta"].to_string(), c["verdict"].to_string()))
            .collect()
    };
    assert_eq!(strip(&v), strip(&reference));
}

#[test]
fn rewrapped_and_quoted_pastes_are_rejoined() {
    // The founding estimate line, wrapped at ~100 columns with indented continuations and quoted in Markdown.
    let plain = std::fs::read_to_string(root().join(FOUNDING)).unwrap();
    let mut pasted = String::new();
    for line in plain.lines() {
        if line.contains("msg=offload") {
            let cut = line.find(" memory.required.full").unwrap();
            pasted.push_str(&format!("> {}\n>   {}\n", &line[..cut], &line[cut + 1..]));
        } else {
            pasted.push_str(&format!("> {line}\n"));
        }
    }
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], pasted.as_bytes()).stdout).unwrap();
    let reference: serde_json::Value =
        serde_json::from_slice(&run(&["--format", "json"], plain.as_bytes()).stdout).unwrap();
    // Same figures and verdicts; only the line numbers move (the paste has one more physical line).
    let strip = |v: &serde_json::Value| -> Vec<(String, String, String)> {
        v["loads"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["component"].to_string(),
                    c["delta"].to_string(),
                    c["verdict"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&v), strip(&reference));
    assert_eq!(v["inputs"][0]["joined_lines"], 1);
}

#[test]
fn show_unrecognized_lists_memory_lines_no_rule_knows() {
    let log =
        "load_tensors: CUDA0 model buffer size = 100.00 MiB\nsomething odd: 512 MiB of mystery\n";
    let out = run(&["--show-unrecognized"], log.as_bytes());
    let text = stdout(&out);
    assert!(
        text.contains("unrecognized <stdin>:2: something odd: 512 MiB of mystery"),
        "{text}"
    );
    assert!(
        text.contains("1 memory-like lines not understood"),
        "{text}"
    );
}

#[test]
fn grammar_dir_adds_a_fork_line_without_a_rebuild() {
    let dir = crate::util::grammar_dir(
        "cli-grammar",
        r#"format = 1
[[rule]]
id = "fork.weights"
event = "buffer"
anchors = ["fork weights on"]
regex = 'fork weights on (?P<buffer>\S+): (?P<size>\d+\.\d+ MiB)'
set = { component = "fork", kind = "model" }
[[rule.example]]
line = "fork weights on CUDA0: 10.00 MiB"
expect = { buffer = "CUDA0" }
"#,
    );
    let grammar_dir = dir.display().to_string();
    let out = run(
        &["--format", "json", "--grammar-dir", &grammar_dir],
        b"fork weights on CUDA3: 42.00 MiB\n",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["loads"][0]["actual"]["buffers"][0]["device"], "CUDA3");
    assert_eq!(
        v["loads"][0]["actual"]["buffers"][0]["size"]["bytes"],
        42 * 1048576
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn terminal_escapes_from_a_log_never_reach_the_terminal() {
    let log = "load_tensors: \x1b]0;pwned\x07CUDA0 model buffer size = 1.00 MiB\nfoo: \x1b[31m999 MiB\x1b[0m \x1b]2;x\x07\n";
    let out = run(&["--show-unrecognized"], log.as_bytes());
    assert!(!out.stdout.contains(&0x1b), "{:?}", stdout(&out));
}

#[test]
fn empty_input_reports_no_load_and_exits_0() {
    let out = run(&[], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("No model load found."));
}

#[test]
fn a_breakdown_table_printed_after_the_load_is_the_actual_and_before_it_a_probe() {
    // Shape of corpus 042's rows. After the runner reported its layers, the table is the one llama-server
    // prints at exit (free already reduced by self): an actual.
    let table = "common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |\n\
common_memory_breakdown_print: |   - CUDA0 (RTX 5090)   | 32606 = 26000 + ( 6100 =  4000 +    1500 +     600) +         506 |\n\
common_memory_breakdown_print: |   - Host               |                    700 =   500 +       0 +     200                |\n";
    let log = format!("load_tensors: offloaded 37/37 layers to GPU\n{table}");
    let out = run(&["--format", "json"], log.as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["loads"][0]["actual"]["breakdown"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["self"]["bytes"], 6100i64 * 1048576);
    assert_eq!(rows[0]["unaccounted"], 506i64 * 1048576);
    assert_eq!(rows[0]["unaccounted_suspect"], false);
    let devices = v["loads"][0]["devices"].as_array().unwrap();
    assert_eq!(devices[0]["actual"]["bytes"], 6100i64 * 1048576);
    // Printed while the fit is under way, the same table is a test allocation: an estimate, never memory in
    // use, whatever its figures (docs/log-formats.md §5.3).
    let fitting = format!("common_init_result: fitting params to device memory ...\n{table}");
    let out = run(&["--format", "json"], fitting.as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["loads"][0]["actual"]["breakdown"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(
        v["loads"][0]["estimate"]["per_device"][0]["total"]["bytes"],
        6100i64 * 1048576
    );
    // Pasted alone, with no fit around it, a table that adds up (unaccounted zero or more) is judged by that
    // signature: the table printed at exit, an actual (§5.3, §5.7).
    let out = run(&["--format", "json"], table.as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["loads"][0]["actual"]["breakdown"][0]["self"]["bytes"],
        6100i64 * 1048576
    );
    assert_eq!(
        v["loads"][0]["lifecycle"]["tables"][0]["evidence"],
        "adds-up-alone"
    );
    assert!(v["loads"][0]["estimate"].is_null());
}

/// `--gguf` names a file that cannot be used (here one that is not a model: a log): the report still runs,
/// exits 0 and says why in a warning; the JSON has no `model.gguf`.
#[test]
fn an_unusable_gguf_is_a_warning_not_a_failure() {
    let log = root().join("sample-logs/001-kaggle-t4-llama31-8b.log");
    let missing = root().join("sample-logs/002-runpod-rtx4090-llama31-8b-lora.log");
    let out = run(
        &[
            "--format",
            "json",
            "--gguf",
            missing.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let warnings = json["inputs"][0]["warnings"].to_string();
    assert!(
        warnings.contains("002-runpod-rtx4090-llama31-8b-lora.log (--gguf) could not be read"),
        "{warnings}"
    );
    assert!(json["loads"][0]["model"].get("gguf").is_none());
}
