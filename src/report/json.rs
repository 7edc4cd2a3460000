//! The JSON report: the public contract, `schema_version` 1.
//!
//! # Wire format
//! ```text
//! { "schema_version": 1,
//!   "tool": {"name": "vramdiff", "version": "…"},
//!   "inputs": [ {"path", "lines", "recognized_lines", "unrecognized_memory_lines", …} ],
//!   "loads": [ {"source", "engine", "model", "settings", "gpus", "estimate", "actual", "components",
//!               "devices", …} ] }
//! ```
//! Every byte figure is a quantity `{"bytes": nominal, "low": …, "high": …}` (integers). Keys are sorted, so
//! the same input gives the same bytes. Names are stable: fields may be added, never renamed or removed.
//! `tests/json_contract.rs` pins the names with `deny_unknown_fields` structs.

use serde_json::{json, Value};

use super::Reporter;
use crate::model::Analysis;

/// The contract version; bump only for a breaking change.
pub const SCHEMA_VERSION: u64 = 1;

pub struct JsonReporter;

/// A JSON document with the version header and the given top-level fields, keys sorted.
pub fn document(body: Value) -> Vec<u8> {
    // serde_json's map is a BTreeMap (no `preserve_order`), so going through Value sorts every key.
    let mut value = json!({
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "vramdiff", "version": env!("CARGO_PKG_VERSION")},
    });
    if let (Some(map), Value::Object(body)) = (value.as_object_mut(), body) {
        map.extend(body);
    }
    let mut out = serde_json::to_vec_pretty(&value)
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}").into_bytes());
    out.push(b'\n');
    out
}

impl Reporter for JsonReporter {
    fn render(&self, analysis: &Analysis) -> Vec<u8> {
        document(json!({
            "inputs": analysis.inputs,
            "loads": analysis.loads,
        }))
    }
}
