//! nvidia-smi beside the runner's buffers, through the real binary: the founding capture given with `--smi`,
//! captures pasted inside a CI log (idle baseline, UUID join), a `-q` capture whose indentation a log collector
//! stripped, and hostile XML.

use serde_json::Value;

use crate::util::{mib, run, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const FOUNDING_SMI: &str = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt";
const CI_LOG: &str = "sample-logs/founding-k80-gemma3-12b-ci-with-smi.log";

fn json(args: &[&str], stdin: &[u8]) -> Value {
    let mut all = vec!["--format", "json", "--fail-on", "never"];
    all.extend(args);
    let out = run(&all, stdin);
    assert_eq!(out.status.code(), Some(0), "{}", crate::util::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bytes(v: &Value) -> i64 {
    v["bytes"]
        .as_i64()
        .unwrap_or_else(|| panic!("not a quantity: {v}"))
}

fn observed<'a>(report: &'a Value, device: &str) -> &'a Value {
    report["loads"][0]["observed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["device"] == device)
        .unwrap_or_else(|| panic!("no observed row for {device}"))
}

#[test]
fn founding_capture_puts_observed_memory_beside_estimate_and_buffers() {
    let report = json(&[FOUNDING, "--smi", FOUNDING_SMI], b"");
    let gpu0 = observed(&report, "CUDA0");
    // The figures: GPU0 estimated 3.3 GiB, buffers ≈ 222.5 MiB, observed 617 MiB.
    assert_eq!(
        gpu0["join"], "index",
        "the table prints no UUID; the log prints no bus id"
    );
    // The estimate as the device row reads it: the logged 3.3 GiB less the last-layer bucket the runner ran
    // on CUDA1 (the runner's mapping, docs/founding-cases.md).
    let device_row = report["loads"][0]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == "CUDA0")
        .unwrap();
    assert_eq!(gpu0["estimated"], device_row["estimated"]);
    assert!(bytes(&gpu0["estimated"]) < mib(3.3 * 1024.0));
    assert_eq!(bytes(&gpu0["buffers"]), mib(136.7 + 85.8));
    assert_eq!(bytes(&gpu0["used"]), mib(617.0));
    assert_eq!(bytes(&gpu0["total"]), mib(11441.0));
    assert_eq!(
        gpu0["used"]["low"].as_i64().unwrap(),
        mib(616.5),
        "whole MiB: ±0.5 MiB"
    );
    assert_eq!(bytes(&gpu0["runner_process"]), mib(614.0));
    assert_eq!(bytes(&gpu0["other_processes"]), 0);
    // Residual = runner process − buffers: the CUDA context the log never mentions.
    assert_eq!(bytes(&gpu0["unattributed"]), mib(614.0 - 222.5));
    assert_eq!(gpu0["gpu_id"], "GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27");
    let gpu1 = observed(&report, "CUDA1");
    assert!(
        bytes(&gpu1["estimated"]) > mib(8.6 * 1024.0),
        "the bucket ran on CUDA1"
    );
    assert_eq!(bytes(&gpu1["used"]), mib(9866.0));
    assert_eq!(bytes(&gpu1["runner_process"]), mib(9863.0));
    // The KV cache has no line in this log, so the residual's low end allows for it (up to 736 MiB).
    let u1 = &gpu1["unattributed"];
    assert!(u1["low"].as_i64().unwrap() < bytes(u1) - mib(700.0));
    let notes = report["loads"][0]["notes"].to_string();
    assert!(notes.contains("by index (identical cards"), "{notes}");
    // The capture file is an input of its own, with its snapshot.
    let capture = report["inputs"].as_array().unwrap().last().unwrap();
    assert_eq!(capture["role"], "capture");
    assert_eq!(capture["captures"][0]["format"], "table");
}

#[test]
fn founding_text_report_has_the_observed_columns() {
    let out = run(&[FOUNDING, "--smi", FOUNDING_SMI], b"");
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("CUDA0") && l.contains("617 MiB / 11441 MiB"))
        .unwrap_or_else(|| panic!("no observed row for CUDA0 in:\n{text}"));
    for cell in [
        "Tesla K80 (index)",
        "1.75 GiB",
        "222.5 MiB",
        "614 MiB",
        "+391.5 MiB",
    ] {
        assert!(row.contains(cell), "{cell} missing from {row}");
    }
    assert!(text.contains("9866 MiB / 11441 MiB"));
}

#[test]
fn captures_inside_a_ci_log_join_by_uuid_and_subtract_the_idle_baseline() {
    let report = json(&[CI_LOG], b"");
    let captures = report["inputs"][0]["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 2, "idle table before, CSV after");
    assert_eq!(captures[0]["format"], "table");
    assert_eq!(
        captures[0]["processes"],
        serde_json::json!([]),
        "No running processes found"
    );
    assert_eq!(captures[1]["format"], "query-gpu-csv");
    let gpu0 = observed(&report, "CUDA0");
    assert_eq!(gpu0["join"], "uuid");
    assert_eq!(bytes(&gpu0["baseline"]), mib(4.0));
    assert_eq!(
        gpu0["runner_process"],
        Value::Null,
        "a CSV of GPUs has no process table"
    );
    assert_eq!(bytes(&gpu0["unattributed"]), mib(617.0 - 4.0 - 222.5));
    assert!(gpu0["unattributed_from"]
        .as_str()
        .unwrap()
        .contains("idle baseline"));
    assert_eq!(gpu0["capture"]["line"], 66);
    // The same load without the captures has no observed rows.
    let plain = json(&[FOUNDING], b"");
    assert_eq!(plain["loads"][0]["observed"], serde_json::json!([]));
}

#[test]
fn a_query_capture_whose_indentation_was_stripped_still_reads_fb_memory_not_bar1() {
    // `nvidia-smi -q -d MEMORY` as a journald collector prints it: every line prefixed, indentation gone.
    let capture = [
        "==============NVSMI LOG==============",
        "Timestamp                                 : Sun Jul 20 09:44:10 2025",
        "Driver Version                            : 470.256.02",
        "CUDA Version                              : 11.4",
        "Attached GPUs                             : 2",
        "GPU 00000000:04:00.0",
        "    FB Memory Usage",
        "        Total                             : 11441 MiB",
        "        Used                              : 617 MiB",
        "        Free                              : 10824 MiB",
        "    BAR1 Memory Usage",
        "        Total                             : 16384 MiB",
        "        Used                              : 2 MiB",
        "        Free                              : 16382 MiB",
        "GPU 00000000:07:00.0",
        "    FB Memory Usage",
        "        Total                             : 11441 MiB",
        "        Used                              : 9866 MiB",
        "        Free                              : 1575 MiB",
        "    BAR1 Memory Usage",
        "        Total                             : 16384 MiB",
        "        Used                              : 3 MiB",
        "        Free                              : 16381 MiB",
    ];
    let mut log = std::fs::read_to_string(crate::util::root().join(FOUNDING)).unwrap();
    for line in capture {
        log.push_str(&format!("Jul 20 09:44:10 k80 ci[991]: {line}\n"));
    }
    let report = json(&["-"], log.as_bytes());
    let snapshot = &report["inputs"][0]["captures"][0];
    assert_eq!(snapshot["format"], "query");
    assert_eq!(bytes(&snapshot["gpus"][0]["used"]), mib(617.0));
    assert_eq!(
        bytes(&snapshot["gpus"][1]["used"]),
        mib(9866.0),
        "not BAR1's 3 MiB"
    );
    assert_eq!(bytes(&observed(&report, "CUDA1")["used"]), mib(9866.0));
}

#[test]
fn hostile_xml_is_refused_with_a_message_and_the_log_is_still_reported() {
    let mut input = std::fs::read_to_string(crate::util::root().join(FOUNDING)).unwrap();
    input.push_str(concat!(
        "<?xml version=\"1.0\" ?>\n",
        "<!DOCTYPE nvidia_smi_log [\n",
        "<!ENTITY lol \"lol\">\n",
        "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n",
        "<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n",
        "]>\n",
        "<nvidia_smi_log><gpu id=\"00000000:04:00.0\"><product_name>&lol3;</product_name>\n",
        "<fb_memory_usage><total>11441 MiB</total><used>617 MiB</used></fb_memory_usage></gpu></nvidia_smi_log>\n",
    ));
    let report = json(&["-"], input.as_bytes());
    let warnings = report["inputs"][0]["warnings"].to_string();
    assert!(
        warnings.contains("ENTITY") || warnings.contains("entit"),
        "{warnings}"
    );
    assert!(
        !report.to_string().contains("lollollol"),
        "no entity was expanded"
    );
    assert_eq!(
        report["loads"].as_array().unwrap().len(),
        1,
        "the log is still reported"
    );
}
