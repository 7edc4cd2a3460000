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
//! A device is named as the runner prints it (`CUDA0`, `Metal`, `CPU`); `GPU0` is a GPU whose backend the log does
//! not say (a vLLM or SGLang rank before its platform line); `unknown` is a device the log does not name (clip's
//! buffers without a line saying where clip runs: `host` false, and no `devices[]` row).
//! Every byte figure is a quantity `{"bytes": nominal, "low": …, "high": …}` (integers). Keys are sorted, so
//! the same input gives the same bytes. Names are stable: fields may be added, never renamed or removed.
//! `tests/json_contract.rs` pins the names with `deny_unknown_fields` structs, and the finding codes.
//!
//! Added with the llama-server era (Ollama ≥ 0.30), all optional and omitted when empty unless noted:
//! `loads[].era` (always: `ollama`, `llama-server` or `unknown`), `loads[].rejected_gpus[]`
//! (`{name, reason, line}`), `model.block_count`, `gpus[].free`, `settings.{ubatch_size, kv_cache_type_v,
//! projector_offload, projector_offload_reason, projector_offload_line, split_mode, main_gpu, mmap, speculative,
//! fit_target}`, `estimate.{projector_total, projector_device, draft_total, fit}` (`fit`: `{outcome, target,
//! reduce_by, context, context_by_user, context_scaled_from, probes, plan_line, seconds, free[], lines}`),
//! `actual.{projector_device, projector_device_line, kv_caches[]}`, `whatif.estimate.layers_agree`; estimate
//! forms `fit-plan`, `fit-probe`, `fit-result`; finding codes `gpu-unused` and `projector-on-cpu`.
//!
//! Added with `--follow`: `loads[].ollama_ps` (`{url, name, size, size_vram, context_length, models_listed,
//! matched_by}`, omitted without `--ollama`), finding code `ps-mismatch`, and `--format jsonl`: one line per load,
//! a `loads[]` element with `input` (the input's name) and `schema_version` beside its fields.
//! Added with the model's layout (issue 14), optional: `model.gguf` (the GGUF file whose header was read),
//! `settings.kv_unified`, `whatif.max_ctx` (`vramdiff whatif --max-ctx`).
//! Added with llama.cpp on its own (issue 21): the component word `draft` in `components[]` (a speculative
//! draft's context against its `[spec]` estimate), `gpus[].integrated` from Vulkan's `uma: 1`.
//! Added with the memory a server takes while it serves (issue 54), optional: `loads[].timeline` (`{samples[],
//! limits, peaks, over_limit, strict_limit_line, alloc_failed_line, preemptions, killed, slowest_prefill, request_failed, cancelled_line, lines}` (`killed`: `{message, line}`, the host's OOM kill while serving; `request_failed`: `{status, elapsed, line}`, a request answered with a server error); a sample is `{line,
//! prompt_cache, checkpoints, kv_percent, running, waiting}`, each series absent until the log printed it;
//! `limits` `{prompt_cache, prompt_cache_unlimited, prompt_cache_tokens, checkpoints_per_slot, slot_context,
//! host_total, host_free}`; `peaks` `{prompt_cache, checkpoints, kv_percent, running, waiting, checkpoint_size,
//! entry}`; a figure is a quantity with its `line`, a count or ratio `{value, line}`; see
//! `src/model/timeline.rs`).

use serde::Serialize;
use serde_json::{json, Value};

use super::json_nested::NestedPretty;
use crate::model::{Analysis, Concluded, InputSummary};

/// The contract version; bump only for a breaking change.
pub const SCHEMA_VERSION: u64 = 1;

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

/// The main report as JSON.
pub fn report(analysis: &Analysis) -> Vec<u8> {
    render(analysis).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}").into_bytes())
}

/// One load as one line of JSON (`--format jsonl` writes one per load): the element of the report's `loads[]` (the same serialisation, keys sorted)
/// with `input`, the name of the input it was read from, and `schema_version`.
pub fn load_line(load: &Concluded) -> Vec<u8> {
    let line = serde_json::to_value(load).and_then(|mut value| {
        if let Value::Object(map) = &mut value {
            map.insert("input".to_string(), json!(load.reconciled.load.source.path));
            map.insert("schema_version".to_string(), json!(SCHEMA_VERSION));
        }
        serde_json::to_vec(&value)
    });
    let mut out = line.unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}").into_bytes());
    out.push(b'\n');
    out
}

/// The bytes `serde_json::to_vec_pretty` would give for the whole report as one `Value` (serde_json's map is
/// a BTreeMap without `preserve_order`, so going through `Value` sorts every key), built one input and one
/// load at a time: a `Value` tree is several times the size of its text, and a long log has many loads.
fn render(analysis: &Analysis) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, load) in analysis.loads.iter().enumerate() {
        load_element(&mut out, load, i == 0)?;
    }
    let mut whole = Vec::with_capacity(out.len() + 4096);
    report_until_loads(&mut whole, &analysis.inputs)?;
    whole.extend_from_slice(&out);
    report_after_loads(
        &mut whole,
        !analysis.loads.is_empty(),
        &crate::pairs::find(&analysis.loads),
    )?;
    Ok(whole)
}

/// The report's text before its first load: the inputs, which sort before `loads`. A report written load by
/// load (`report::streamed`) holds the loads' elements ([`load_element`]) until the inputs are read, and
/// writes this, the elements, then [`report_after_loads`].
pub(super) fn report_until_loads(
    out: &mut Vec<u8>,
    inputs: &[InputSummary],
) -> serde_json::Result<()> {
    // The top-level keys, in sorted order.
    out.extend_from_slice(b"{\n  \"inputs\": ");
    pretty_array(out, inputs, 1)?;
    out.extend_from_slice(b",\n  \"loads\": ");
    Ok(())
}

/// One element of the report's `loads[]` as it stands in the report (`first`: no comma before it).
pub(super) fn load_element(
    out: &mut Vec<u8>,
    load: &Concluded,
    first: bool,
) -> serde_json::Result<()> {
    out.extend_from_slice(if first { b"[\n" } else { b",\n" });
    indent(out, 2);
    // The same bytes as `pretty_at(out, &serde_json::to_value(load)?, 2)`, without building the `Value`.
    super::json_sorted::write_sorted_pretty(out, load, 2)
}

/// The report's text after its loads (`any`: whether [`load_element`] wrote one): the pairs of loads when
/// there are any (`crate::pairs`; the key is left out without one), the schema and the tool.
pub(super) fn report_after_loads(
    out: &mut Vec<u8>,
    any: bool,
    pairs: &[crate::model::LoadPair],
) -> serde_json::Result<()> {
    if any {
        out.push(b'\n');
        indent(out, 1);
        out.push(b']');
    } else {
        out.extend_from_slice(b"[]");
    }
    if !pairs.is_empty() {
        out.extend_from_slice(b",\n  \"pairs\": ");
        pretty_array(out, pairs, 1)?;
    }
    let tool = json!({"name": "vramdiff", "version": env!("CARGO_PKG_VERSION")});
    out.extend_from_slice(
        format!(",\n  \"schema_version\": {SCHEMA_VERSION},\n  \"tool\": ").as_bytes(),
    );
    pretty_at(out, &tool, 1)?;
    out.extend_from_slice(b"\n}\n");
    Ok(())
}

/// A JSON array of `items` as the pretty printer writes it at nesting `depth`.
fn pretty_array<T: Serialize>(
    out: &mut Vec<u8>,
    items: &[T],
    depth: usize,
) -> serde_json::Result<()> {
    if items.is_empty() {
        out.extend_from_slice(b"[]");
        return Ok(());
    }
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'\n');
        indent(out, depth + 1);
        pretty_at(out, &serde_json::to_value(item)?, depth + 1)?;
    }
    out.push(b'\n');
    indent(out, depth);
    out.push(b']');
    Ok(())
}

/// `value` pretty-printed as if nested `depth` levels deep.
fn pretty_at(out: &mut Vec<u8>, value: &Value, depth: usize) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(
        out,
        NestedPretty::at(depth),
    ))
}

fn indent(out: &mut Vec<u8>, depth: usize) {
    out.extend(std::iter::repeat_n(b' ', 2 * depth));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_rendering_is_byte_identical_to_one_value() {
        let mut analysis = Analysis::default();
        assert_eq!(render(&analysis).unwrap(), whole(&analysis));
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-logs");
        let mut paths: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path().display().to_string())
            // The tests' answer files (`<sample>.expect.toml`) are not inputs.
            .filter(|p| !p.ends_with(".expect.toml"))
            .collect();
        paths.sort();
        analysis = crate::pipeline::analyze(&paths, &crate::pipeline::Options::default()).unwrap();
        assert!(analysis.loads.len() > 10);
        assert_eq!(
            String::from_utf8(render(&analysis).unwrap()).unwrap(),
            String::from_utf8(whole(&analysis)).unwrap()
        );
    }

    /// The reference: the whole report as one `Value`.
    fn whole(analysis: &Analysis) -> Vec<u8> {
        let mut value: Value = json!({
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "vramdiff", "version": env!("CARGO_PKG_VERSION")},
            "inputs": analysis.inputs,
            "loads": analysis.loads,
        });
        // The pairs of loads, only when there is one (an addition to the contract).
        let pairs = crate::pairs::find(&analysis.loads);
        if !pairs.is_empty() {
            value["pairs"] = json!(pairs);
        }
        let mut out = serde_json::to_vec_pretty(&value).unwrap();
        out.push(b'\n');
        out
    }
}
