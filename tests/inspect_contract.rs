//! The `vramdiff inspect --format json` contract, pinned by strict deserialisation as tests/json_contract.rs
//! pins the report's: every field inspect writes is declared here (`deny_unknown_fields`) and every declared
//! field must be present. Adding a field means adding it here, on purpose; renaming one breaks this test.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::util::{root, run, stderr, stdout};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Inspect {
    schema_version: u64,
    tool: Tool,
    file: String,
    file_bytes: u64,
    gguf_version: u32,
    alignment: u64,
    data_start: u64,
    architecture: String,
    name: Option<String>,
    block_count: u64,
    trained_context: Option<u64>,
    layers: Vec<Layer>,
    weights_bytes: u64,
    repeating_bytes: u64,
    expert_bytes: u64,
    nonrepeating_bytes: Option<u64>,
    output_bytes: Option<u64>,
    projector_bytes: Option<u64>,
    projector_file: Option<ProjectorFile>,
    kv_bytes_per_token: u64,
    kv_cache: BTreeMap<String, KvCache>,
    sliding_window: Option<u64>,
    /// llama.cpp's cells per sequence for the window cache at the default micro-batch.
    sliding_window_cells: Option<u64>,
    sliding_window_layers: Vec<u32>,
    recurrent_layers: Vec<u32>,
    recurrent_state_bytes_per_slot: Option<u64>,
    tensors: u64,
    #[serde(default)]
    tensor_list: Option<Vec<Tensor>>,
    #[serde(default)]
    metadata: Option<Vec<Metadata>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
    version: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    index: u32,
    bytes: u64,
    dense_bytes: Option<u64>,
    expert_bytes: Option<u64>,
    attention: Attention,
    kv_bytes_per_token: KvPerToken,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
enum Attention {
    Full {
        k_elements: u64,
        v_elements: u64,
    },
    SlidingWindow {
        window: u64,
        k_elements: u64,
        v_elements: u64,
    },
    Recurrent {
        state_bytes_per_slot: u64,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KvPerToken {
    f16: u64,
    q8_0: u64,
    q4_0: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KvCache {
    bytes_per_token: u64,
    full_bytes_per_token: u64,
    sliding_window_bytes_per_token: u64,
    sliding_window_bytes_per_slot: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectorFile {
    file: String,
    architecture: Option<String>,
    tensors: u64,
    bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tensor {
    name: String,
    #[serde(rename = "type")]
    ggml_type: u32,
    type_name: Option<String>,
    shape: Vec<u64>,
    offset: u64,
    bytes: u64,
    data_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    key: String,
    #[serde(rename = "type")]
    value_type: String,
    value: serde_json::Value,
}

#[test]
fn inspect_json_follows_its_contract_on_every_fixture() {
    let dir = root().join("tests/data/gguf");
    let mmproj = dir.join("mmproj-tiny.gguf");
    for name in [
        "llama-tiny",
        "moe-tiny",
        "swa-tiny",
        "mmproj-tiny",
        "hybrid-tiny",
    ] {
        let path = dir.join(format!("{name}.gguf"));
        for tensors in [false, true] {
            let mut args = vec!["inspect", "--format", "json", path.to_str().unwrap()];
            if tensors {
                args.extend(["--tensors", "--mmproj", mmproj.to_str().unwrap()]);
            }
            let out = run(&args, b"");
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let text = stdout(&out);
            let doc: Inspect =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(doc.schema_version, 1);
            assert_eq!(doc.tool.name, "vramdiff");
            assert_eq!(doc.block_count, doc.layers.len() as u64);
            assert_eq!(
                doc.kv_cache.keys().collect::<Vec<_>>(),
                ["f16", "q4_0", "q8_0"]
            );
            assert_eq!(doc.tensor_list.is_some(), tensors, "{name}");
            assert_eq!(doc.metadata.is_some(), tensors, "{name}");
            assert_eq!(doc.projector_file.is_some(), tensors, "{name}");
            if let Some(list) = &doc.tensor_list {
                assert_eq!(list.len() as u64, doc.tensors);
                assert_eq!(list.iter().map(|t| t.bytes).sum::<u64>(), doc.weights_bytes);
            }
            let layer_sum: u64 = doc.layers.iter().map(|l| l.bytes).sum();
            assert_eq!(layer_sum, doc.repeating_bytes);
            // Keys sorted at every level: the text is what serde_json writes for a sorted map.
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::to_string_pretty(&value).unwrap() + "\n", text);
        }
    }
}
