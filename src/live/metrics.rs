//! `--follow --serve ADDR`: what the follow has seen, as Prometheus/OpenMetrics text on `/metrics` and as the
//! last loads' JSON lines on `/loads`. Every gauge is read from the load's JSON line (`report::json::load_line`,
//! the `--format jsonl` element), so the figures a scraper gets are those of the JSON contract, byte for byte.
//!
//! Per model and device: estimated (`devices[].estimated`), planned (the placement replayed with the
//! estimate's figures, `whatif.estimate.placement.gpus[].allocation`), actual (the runner's buffers,
//! `devices[].actual`), driver-observed (`observed[].used`, and the runner's process, `observed[].runner_process`)
//! and the unattributed residual (`observed[].unattributed`); per model the layers on GPU and on CPU
//! (`actual.offloaded_layers`, `total_layers`); counters of loads and of findings by code and severity; the time
//! the last load completed. A model's gauges are those of its last load.
//!
//! While a server serves (`loads[].timeline`): per model, the prompt cache and the slots' checkpoints in host RAM
//! and the KV cache's fill at the timeline's last sample, the requests running and waiting, and the prompt cache's
//! limit. A followed server's serving lines come as loads of their own once its load was reported (they name
//! no model): their gauges are the last model's, the server that loaded last.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;

use serde_json::Value;

/// How many loads `/loads` keeps.
pub const KEPT_LOADS: usize = 20;

/// Gauges of one model's last load: `(metric, device) → bytes`.
type Gauges = BTreeMap<(&'static str, String), i64>;

/// What the follow has seen so far.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Per model (architecture, else blob), its last load's gauges and layers `(gpu, cpu)`.
    models: BTreeMap<String, (Gauges, Option<(i64, i64)>)>,
    /// `(code, severity) → count` over every load.
    findings: BTreeMap<(String, String), u64>,
    loads: u64,
    /// Seconds since the Unix epoch when the last load completed.
    last_load: Option<f64>,
    /// The last loads' JSON lines, oldest first.
    recent: VecDeque<String>,
    /// Per model, its timeline's last sample and limit: `metric → value`.
    serving: BTreeMap<String, BTreeMap<&'static str, f64>>,
    /// The model of the last load that named one.
    last_model: Option<String>,
}

fn bytes(v: &Value) -> Option<i64> {
    v.get("bytes").and_then(Value::as_i64)
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// A label value as the exposition format writes it: `\`, `"` and line breaks escaped.
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The model's name in the labels: its architecture, else its blob, else `unknown`.
fn model_of(line: &Value) -> String {
    let model = &line["model"];
    text(&model["architecture"])
        .or_else(|| text(&model["blob"]))
        .unwrap_or_else(|| "unknown".to_string())
}

impl Metrics {
    /// Record one load from its JSON line (`--format jsonl`'s element), completed at `now` (Unix seconds).
    pub fn record(&mut self, json_line: &str, now: f64) {
        let Ok(line) = serde_json::from_str::<Value>(json_line) else {
            return;
        };
        let mut gauges = Gauges::new();
        for d in line["devices"].as_array().into_iter().flatten() {
            let Some(device) = text(&d["device"]) else {
                continue;
            };
            for (metric, key) in [("estimated", "estimated"), ("actual", "actual")] {
                if let Some(b) = bytes(&d[key]) {
                    gauges.insert((metric, device.clone()), b);
                }
            }
        }
        let planned = &line["whatif"]["estimate"]["placement"]["gpus"];
        for g in planned.as_array().into_iter().flatten() {
            if let (Some(device), Some(b)) = (text(&g["device"]), g["allocation"].as_i64()) {
                gauges.insert(("planned", device), b);
            }
        }
        for o in line["observed"].as_array().into_iter().flatten() {
            let Some(device) = text(&o["device"]) else {
                continue;
            };
            for (metric, key) in [
                ("observed_used", "used"),
                ("observed_runner", "runner_process"),
                ("unattributed", "unattributed"),
            ] {
                if let Some(b) = bytes(&o[key]) {
                    gauges.insert((metric, device.clone()), b);
                }
            }
        }
        let actual = &line["actual"];
        let layers = match (
            actual["offloaded_layers"].as_i64(),
            actual["total_layers"].as_i64(),
        ) {
            (Some(gpu), Some(total)) => Some((gpu, total.saturating_sub(gpu).max(0))),
            _ => None,
        };
        for f in line["findings"].as_array().into_iter().flatten() {
            if let (Some(code), Some(severity)) = (text(&f["code"]), text(&f["severity"])) {
                *self.findings.entry((code, severity)).or_default() += 1;
            }
        }
        let model = model_of(&line);
        let timeline = &line["timeline"];
        if timeline.is_object() {
            // Serving lines alone name no model: they are the last model's.
            let owner = match (&self.last_model, model.as_str()) {
                (Some(last), "unknown") => last.clone(),
                (Some(_), _) | (None, _) => model.clone(),
            };
            let mut values = BTreeMap::new();
            let last = timeline["samples"].as_array().and_then(|s| s.last());
            if let Some(sample) = last {
                for (metric, key) in [
                    ("prompt_cache_bytes", "prompt_cache"),
                    ("checkpoints_bytes", "checkpoints"),
                ] {
                    if let Some(b) = bytes(&sample[key]) {
                        values.insert(metric, b as f64);
                    }
                }
                if let Some(p) = sample["kv_percent"].as_f64() {
                    values.insert("kv_cache_usage_ratio", p / 100.0);
                }
                for key in ["running", "waiting"] {
                    if let Some(n) = sample[key].as_i64() {
                        values.insert(key, n as f64);
                    }
                }
            }
            if let Some(b) = bytes(&timeline["limits"]["prompt_cache"]) {
                values.insert("prompt_cache_limit_bytes", b as f64);
            }
            self.serving.insert(owner, values);
        }
        if model != "unknown" {
            self.last_model = Some(model.clone());
        }
        self.models.insert(model, (gauges, layers));
        self.loads += 1;
        self.last_load = Some(now);
        self.recent.push_back(json_line.trim_end().to_string());
        while self.recent.len() > KEPT_LOADS {
            self.recent.pop_front();
        }
    }

    /// The last loads as JSON lines, oldest first.
    pub fn loads(&self) -> String {
        let mut out = String::new();
        for line in &self.recent {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// Everything as the OpenMetrics text format (which Prometheus reads too), ending in `# EOF`.
    pub fn exposition(&self) -> String {
        let mut out = String::new();
        const BYTES: [(&str, &str); 6] = [
            (
                "estimated",
                "What the server's estimate charged to the device.",
            ),
            (
                "planned",
                "What the placement replayed with the estimate's figures puts on the device.",
            ),
            ("actual", "What the runner's buffers hold on the device."),
            (
                "observed_used",
                "What the driver (nvidia-smi, rocm-smi) reported used on the device.",
            ),
            (
                "observed_runner",
                "What the driver reported for the runner's process on the device.",
            ),
            (
                "unattributed",
                "Driver-observed memory of the runner that no logged buffer accounts for.",
            ),
        ];
        for (metric, help) in BYTES {
            let name = format!("vramdiff_{metric}_bytes");
            let _ = writeln!(
                out,
                "# TYPE {name} gauge\n# UNIT {name} bytes\n# HELP {name} {help}"
            );
            for (model, (gauges, _)) in &self.models {
                for ((m, device), value) in gauges {
                    if *m == metric {
                        let _ = writeln!(
                            out,
                            "{name}{{model=\"{}\",device=\"{}\"}} {value}",
                            label(model),
                            label(device)
                        );
                    }
                }
            }
        }
        out.push_str("# TYPE vramdiff_layers gauge\n# HELP vramdiff_layers Layers of the model's last load, on a GPU or on the CPU.\n");
        for (model, (_, layers)) in &self.models {
            if let Some((gpu, cpu)) = layers {
                for (on, n) in [("gpu", gpu), ("cpu", cpu)] {
                    let _ = writeln!(
                        out,
                        "vramdiff_layers{{model=\"{}\",on=\"{on}\"}} {n}",
                        label(model)
                    );
                }
            }
        }
        const SERVING: [(&str, &str, &str); 4] = [
            (
                "prompt_cache_bytes",
                "bytes",
                "Host RAM of llama-server's prompt cache at the timeline's last sample.",
            ),
            (
                "checkpoints_bytes",
                "bytes",
                "Host RAM of the slots' context checkpoints at the timeline's last sample.",
            ),
            (
                "prompt_cache_limit_bytes",
                "bytes",
                "The prompt cache's limit as the log printed it.",
            ),
            (
                "kv_cache_usage_ratio",
                "ratio",
                "A serving engine's KV cache fill at the timeline's last sample (0 to 1).",
            ),
        ];
        for (metric, unit, help) in SERVING {
            let name = format!("vramdiff_serving_{metric}");
            let _ = writeln!(
                out,
                "# TYPE {name} gauge\n# UNIT {name} {unit}\n# HELP {name} {help}"
            );
            for (model, values) in &self.serving {
                if let Some(v) = values.get(metric) {
                    let _ = writeln!(out, "{name}{{model=\"{}\"}} {v}", label(model));
                }
            }
        }
        out.push_str("# TYPE vramdiff_serving_requests gauge\n# HELP vramdiff_serving_requests Requests running and waiting at the timeline's last sample.\n");
        for (model, values) in &self.serving {
            for state in ["running", "waiting"] {
                if let Some(v) = values.get(state) {
                    let _ = writeln!(
                        out,
                        "vramdiff_serving_requests{{model=\"{}\",state=\"{state}\"}} {v}",
                        label(model)
                    );
                }
            }
        }
        out.push_str("# TYPE vramdiff_findings counter\n# HELP vramdiff_findings Findings given, by code and severity, since the follow began.\n");
        for ((code, severity), n) in &self.findings {
            let _ = writeln!(
                out,
                "vramdiff_findings_total{{code=\"{}\",severity=\"{}\"}} {n}",
                label(code),
                label(severity)
            );
        }
        let _ = writeln!(
            out,
            "# TYPE vramdiff_loads counter\n# HELP vramdiff_loads Loads reported since the follow began.\nvramdiff_loads_total {}",
            self.loads
        );
        out.push_str("# TYPE vramdiff_last_load_timestamp_seconds gauge\n# UNIT vramdiff_last_load_timestamp_seconds seconds\n# HELP vramdiff_last_load_timestamp_seconds When the last load completed (Unix time).\n");
        if let Some(t) = self.last_load {
            let _ = writeln!(out, "vramdiff_last_load_timestamp_seconds {t:.3}");
        }
        out.push_str("# EOF\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_counters_and_labels_from_a_json_line() {
        let line = serde_json::json!({
            "model": {"architecture": "gem\"ma\\3"},
            "devices": [{"device": "CUDA0", "estimated": {"bytes": 300}, "actual": {"bytes": 200}}],
            "observed": [{"device": "CUDA0", "used": {"bytes": 250}, "runner_process": {"bytes": 240},
                          "unattributed": {"bytes": 40}}],
            "whatif": {"estimate": {"placement": {"gpus": [{"device": "CUDA0", "allocation": 310}]}}},
            "actual": {"offloaded_layers": 30, "total_layers": 49},
            "findings": [{"code": "needless-split", "severity": "warning"}]
        })
        .to_string();
        let mut m = Metrics::default();
        m.record(&line, 1_700_000_000.5);
        m.record(&line, 1_700_000_001.0);
        let text = m.exposition();
        for wanted in [
            "vramdiff_estimated_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 300\n",
            "vramdiff_planned_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 310\n",
            "vramdiff_actual_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 200\n",
            "vramdiff_observed_used_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 250\n",
            "vramdiff_observed_runner_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 240\n",
            "vramdiff_unattributed_bytes{model=\"gem\\\"ma\\\\3\",device=\"CUDA0\"} 40\n",
            "vramdiff_layers{model=\"gem\\\"ma\\\\3\",on=\"gpu\"} 30\n",
            "vramdiff_layers{model=\"gem\\\"ma\\\\3\",on=\"cpu\"} 19\n",
            "vramdiff_findings_total{code=\"needless-split\",severity=\"warning\"} 2\n",
            "vramdiff_loads_total 2\n",
            "vramdiff_last_load_timestamp_seconds 1700000001.000\n",
        ] {
            assert!(text.contains(wanted), "{wanted} not in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(m.loads().lines().count(), 2);
    }

    #[test]
    fn serving_lines_alone_are_the_last_model_s_gauges() {
        let load =
            serde_json::json!({"model": {"architecture": "gemma3"}, "findings": []}).to_string();
        let serving = serde_json::json!({
            "model": {},
            "findings": [],
            "timeline": {
                "samples": [
                    {"line": 57, "prompt_cache": {"bytes": 2048}},
                    {"line": 81, "prompt_cache": {"bytes": 4096}, "checkpoints": {"bytes": 512},
                     "kv_percent": 50.0, "running": 3, "waiting": 1}
                ],
                "limits": {"prompt_cache": {"bytes": 8192, "line": 59}}
            }
        })
        .to_string();
        let mut m = Metrics::default();
        m.record(&load, 1.0);
        m.record(&serving, 2.0);
        let text = m.exposition();
        for wanted in [
            "vramdiff_serving_prompt_cache_bytes{model=\"gemma3\"} 4096\n",
            "vramdiff_serving_checkpoints_bytes{model=\"gemma3\"} 512\n",
            "vramdiff_serving_prompt_cache_limit_bytes{model=\"gemma3\"} 8192\n",
            "vramdiff_serving_kv_cache_usage_ratio{model=\"gemma3\"} 0.5\n",
            "vramdiff_serving_requests{model=\"gemma3\",state=\"running\"} 3\n",
            "vramdiff_serving_requests{model=\"gemma3\",state=\"waiting\"} 1\n",
        ] {
            assert!(text.contains(wanted), "{wanted} not in\n{text}");
        }
        assert!(!text.contains("vramdiff_serving_prompt_cache_bytes{model=\"unknown\"}"));
    }
}
