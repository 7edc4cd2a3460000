//! The short text an agent reads first, beside the full JSON report (the structured content): a few lines taken
//! from that JSON, never figures of its own, so the two cannot disagree.

use serde_json::Value;

use super::plan::Tool;

/// The summary of a command's JSON output and its notes on stderr.
pub fn summary(tool: Tool, json: &Value, notes: &[String]) -> String {
    let mut lines = match tool {
        Tool::AnalyzeLog => loads(json, false),
        Tool::Whatif => loads(json, true),
        Tool::InspectModel => vec![model(json)],
        Tool::Doctor => doctor(json),
    };
    lines.extend(notes.iter().map(|n| format!("note: {n}")));
    lines.push(
        "The full JSON report (schema_version 1) is this result's structured content.".to_string(),
    );
    lines.join("\n")
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("?")
}

/// Each load: its model and runtime, its findings (severity, code, message), and with `whatif` the replay's
/// changes and placements.
fn loads(json: &Value, whatif: bool) -> Vec<String> {
    let loads = json
        .get("loads")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut lines = vec![match loads.len() {
        0 => "No model load found in the log.".to_string(),
        1 => "1 model load.".to_string(),
        n => format!("{n} model loads."),
    }];
    for (i, load) in loads.iter().enumerate() {
        lines.extend(one_load(i + 1, load, whatif));
    }
    lines
}

fn one_load(index: usize, load: &Value, whatif: bool) -> Vec<String> {
    let architecture = load
        .pointer("/model/architecture")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let mut head = format!("Load {index}: {architecture}");
    if let Some(engine) = load.get("engine").and_then(Value::as_str) {
        head.push_str(&format!(" on {engine}"));
    }
    if let Some(version) = load.get("ollama_version").and_then(Value::as_str) {
        head.push_str(&format!(" {version}"));
    }
    if let Some(line) = load.pointer("/source/first_line").and_then(Value::as_u64) {
        head.push_str(&format!(" (from line {line})"));
    }
    let mut lines = vec![head];
    if let Some(findings) = load.get("findings").and_then(Value::as_array) {
        if findings.is_empty() && !whatif {
            lines.push("  no finding".to_string());
        }
        for finding in findings {
            lines.push(format!(
                "  {} {}: {}",
                text(finding, "severity"),
                text(finding, "code"),
                text(finding, "message")
            ));
        }
    }
    if whatif {
        lines.extend(replay(load.get("whatif").unwrap_or(&Value::Null)));
    }
    lines
}

/// The replay: its changes, where each replay put the layers, the largest contexts.
fn replay(whatif: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(changes) = whatif.get("changes").and_then(Value::as_array) {
        let changes: Vec<&str> = changes.iter().filter_map(Value::as_str).collect();
        lines.push(format!(
            "  changes: {}",
            if changes.is_empty() {
                "none (as logged)".to_string()
            } else {
                changes.join(", ")
            }
        ));
    }
    for which in ["estimate", "measured"] {
        if let Some(placement) = whatif.pointer(&format!("/{which}/placement")) {
            let gpus: Vec<String> = placement
                .get("gpus")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .map(|g| {
                    format!(
                        "{} {}",
                        text(g, "device"),
                        g.get("layers").and_then(Value::as_u64).unwrap_or(0)
                    )
                })
                .collect();
            lines.push(format!(
                "  {which} replay: {} of {} layers on GPU ({})",
                placement
                    .get("offloaded")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                placement.get("total").and_then(Value::as_u64).unwrap_or(0),
                gpus.join(", ")
            ));
        }
    }
    if let Some(hinge) = whatif.get("hinge").and_then(Value::as_str) {
        lines.push(format!("  {hinge}"));
    }
    if let Some(rows) = whatif.pointer("/max_ctx/rows").and_then(Value::as_array) {
        for row in rows {
            lines.push(format!(
                "  largest num_ctx with {}: {}",
                text(row, "kv_type"),
                row.get("num_ctx")
                    .and_then(Value::as_u64)
                    .map_or("none".to_string(), |n| n.to_string())
            ));
        }
    }
    lines
}

/// A model header: its name, architecture, blocks, weights and KV cache per token.
fn model(json: &Value) -> String {
    let number = |key: &str| json.get(key).and_then(Value::as_u64);
    let mut line = format!("{} ({}", text(json, "name"), text(json, "architecture"));
    if let Some(blocks) = number("block_count") {
        line.push_str(&format!(", {blocks} blocks"));
    }
    line.push(')');
    if let Some(bytes) = number("weights_bytes") {
        line.push_str(&format!(": weights {}", gib(bytes)));
    }
    if let Some(bytes) = number("kv_bytes_per_token") {
        line.push_str(&format!(", KV cache {bytes} bytes per token"));
    }
    if let Some(context) = number("trained_context") {
        line.push_str(&format!(", trained context {context}"));
    }
    line
}

fn gib(bytes: u64) -> String {
    format!(
        "{:.2} GiB ({bytes} bytes)",
        bytes as f64 / f64::from(1u32 << 30)
    )
}

/// `doctor --format json`: the last load (one `loads[]` element with its `input`).
fn doctor(json: &Value) -> Vec<String> {
    let mut lines = vec![format!("The last load read from {}:", text(json, "input"))];
    lines.extend(one_load(1, json, false).into_iter().skip(1));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_and_notes_are_listed_from_the_json() {
        let json = serde_json::json!({"loads": [{
            "model": {"architecture": "gemma3"}, "engine": "ollama", "ollama_version": "0.9.6",
            "source": {"first_line": 9},
            "findings": [{"severity": "warning", "code": "needless-split", "message": "split 1,48"}]
        }]});
        let text = summary(Tool::AnalyzeLog, &json, &["reading x".to_string()]);
        assert_eq!(
            text,
            "1 model load.\nLoad 1: gemma3 on ollama 0.9.6 (from line 9)\n  warning needless-split: split 1,48\n\
             note: reading x\nThe full JSON report (schema_version 1) is this result's structured content."
        );
    }

    #[test]
    fn a_model_header_in_one_line() {
        let json = serde_json::json!({"name": "m", "architecture": "llama", "block_count": 2,
            "weights_bytes": 1u64 << 30, "kv_bytes_per_token": 384, "trained_context": 4096});
        assert!(summary(Tool::InspectModel, &json, &[]).starts_with(
            "m (llama, 2 blocks): weights 1.00 GiB (1073741824 bytes), KV cache 384 bytes per token, trained context 4096\n"
        ));
    }

    #[test]
    fn whatever_the_json_holds_a_summary_is_written() {
        for json in [
            serde_json::json!(null),
            serde_json::json!({"loads": 3}),
            serde_json::json!([1]),
        ] {
            for tool in [
                Tool::AnalyzeLog,
                Tool::Whatif,
                Tool::InspectModel,
                Tool::Doctor,
            ] {
                assert!(!summary(tool, &json, &[]).is_empty());
            }
        }
    }
}
