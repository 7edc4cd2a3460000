//! The attention arithmetic of the GGUF layout against real logs. llama.cpp's loader prints the model file's
//! metadata (`llama_model_loader: - kv N: llama.block_count u32 = 32`) and, later, the KV cache it allocated
//! (`KV self size = 1024.00 MiB, K (f16): 512.00 MiB, …`, or `llama_kv_cache: size = … (4096 cells, 26 layers,
//! 2/2 seqs), K (f16): …`). Each test rebuilds a header-only GGUF file from the printed metadata, reads it with
//! vramdiff's reader, and checks that the KV bytes per token it derives, times the cells, give the logged K and V
//! sizes to the MiB (the log prints two decimals). The logs are the corpus copies in `sample-logs/`.

use crate::util::root;
use vramdiff::gguf;
use vramdiff::model::{KvType, LayerAttention};

fn string(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(s.as_bytes());
    b
}

/// A GGUF file (no tensors) holding the `u32` keys and `general.architecture` of the first load's metadata
/// lines; the line holding the first KV size; and the cache's cells over all sequences, from that line
/// (`4096 cells, …, 2/2 seqs`) or from the `n_ctx = N` line before it.
fn header_from_log(name: &str) -> (Vec<u8>, String, u64) {
    let text = std::fs::read_to_string(root().join("sample-logs").join(name)).unwrap();
    let kv =
        regex::Regex::new(r"llama_model_loader: - kv +\d+: +(\S+) +(u32|str) += (.*)$").unwrap();
    let mut entries: Vec<Vec<u8>> = Vec::new();
    let mut size_line = None;
    let mut n_ctx = None;
    for line in text.lines() {
        if line.contains("KV self size") || line.contains("llama_kv_cache: size =") {
            size_line = Some(line.to_string());
            break;
        }
        if line.contains("n_ctx ") && line.contains(" = ") && !line.contains("n_ctx_") {
            n_ctx = Some(number_after(line, "=") as u64);
        }
        let Some(c) = kv.captures(line) else { continue };
        let (key, t, value) = (&c[1], &c[2], c[3].trim());
        let mut e = string(key);
        match t {
            "u32" => {
                e.extend(4u32.to_le_bytes());
                e.extend(value.parse::<u32>().unwrap().to_le_bytes());
            }
            _ if key == "general.architecture" => {
                e.extend(8u32.to_le_bytes());
                e.extend(string(value));
            }
            _ => continue,
        }
        entries.push(e);
    }
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend((entries.len() as u64).to_le_bytes());
    b.extend(entries.concat());
    let size_line = size_line.expect("a KV size line");
    let cells = match size_line.find(" cells") {
        Some(_) => {
            let cells = number_after(&size_line, "(") as u64;
            let seqs = number_after(&size_line, "layers,") as u64;
            cells * seqs
        }
        None => n_ctx.expect("an n_ctx line before the KV size"),
    };
    (b, size_line, cells)
}

/// The last number before `unit` after `label` in `line`.
fn number_after(line: &str, label: &str) -> f64 {
    let rest = &line[line.find(label).unwrap() + label.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().unwrap()
}

fn check(name: &str, expected_cells: u64) {
    let (bytes, size_line, cells) = header_from_log(name);
    assert_eq!(cells, expected_cells, "{name}: cells read from the log");
    let header = gguf::read_header_bytes(&bytes, name).unwrap();
    let layout = gguf::layout::build(&header, None).unwrap();
    let (mut k, mut v) = (0u64, 0u64);
    for l in &layout.layers {
        let LayerAttention::Full {
            k_elements,
            v_elements,
        } = l.attention
        else {
            panic!("{name}: layer {} is not full attention", l.index)
        };
        k += KvType::F16.bytes(k_elements);
        v += KvType::F16.bytes(v_elements);
    }
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    let logged_k = number_after(&size_line, "K (f16):");
    let logged_v = number_after(&size_line, "V (f16):");
    assert!(
        (mib(k * cells) - logged_k).abs() < 0.005,
        "{name}: K {} MiB, log {logged_k}",
        mib(k * cells)
    );
    assert!(
        (mib(v * cells) - logged_v).abs() < 0.005,
        "{name}: V {} MiB, log {logged_v}",
        mib(v * cells)
    );
}

#[test]
fn llama31_8b_kv_from_its_metadata_matches_the_logged_kv_self_size() {
    // n_ctx = 8192 (line 105): 32 layers × 8 KV heads × 128 → 512 MiB of K.
    check("001-kaggle-t4-llama31-8b.log", 8192);
    check("002-runpod-rtx4090-llama31-8b-lora.log", 8192);
}

#[test]
fn granite_8b_kv_from_its_metadata_matches_the_logged_kv_self_size() {
    // n_ctx = 128000 (line 122): 36 layers → 9000 MiB of K; the full load with n_ctx 32768 → 2304 MiB.
    check("008-macos-metal-m1pro-granite-8b-128k-partial.log", 128000);
    check("201-macos-metal-m1pro-granite8b-full-mdquote.log", 32768);
}

#[test]
fn ministral3_kv_with_explicit_head_dimensions_matches_the_logged_cache() {
    // llama_kv_cache: 4096 cells × 2 seqs (not unified): key_length/value_length 128 given in the metadata.
    check(
        "511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log",
        4096 * 2,
    );
}
