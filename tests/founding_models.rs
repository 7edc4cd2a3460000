//! The founding cases' models as real-sized GGUF files without real-sized bytes. A tensor's bytes are the
//! distance to the next tensor's offset and the last tensor runs to the end of the file, so the committed header
//! (`tests/data/gguf-headers/*.header.gguf`) grown to the model's length with `File::set_len` (a sparse file) is
//! a faithful model file. The length, and every tensor as llama.cpp's `gguf` package reads it from that file, are
//! in the oracle beside the header (`scripts/gen_gguf_fixtures.py`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::root;

/// gemma3:12b Q4_K_M, as the founding K80 log loads it.
pub const GEMMA3_12B: &str = "gemma3-12b-q4_k_m";
/// gemma4:31b Q4_K_M, as today's founding log loads it.
pub const GEMMA4_31B: &str = "gemma4-31b-q4_k_m";

/// The blob each founding log names (`--model …/blobs/sha256-…`).
pub const GEMMA3_12B_BLOB: &str =
    "sha256-e8ad13eff07a78d89926e9e8b882317d082ef5bf9768ad7b50fcdbbcd63748de";
pub const GEMMA4_31B_BLOB: &str =
    "sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313";

pub const K80_LOG: &str = "sample-logs/founding-k80-gemma3-12b.log";
pub const TODAY_LOG: &str = "sample-logs/founding-today-3090-4060-gemma4-31b.log";

/// What the `gguf` package read from the full-length file: `file_bytes`, `header_bytes`, `alignment`,
/// `tensors` (name, n_bytes, …).
pub fn oracle(model: &str) -> Value {
    let path = root()
        .join("tests/data/gguf-headers")
        .join(format!("{model}.oracle.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Write `model`'s header to `dir/file_name` and grow it to the model file's full length (sparse: the data
/// reads as zeros and takes no disk). Returns the path.
pub fn materialise(model: &str, dir: &Path, file_name: &str) -> PathBuf {
    let header = root()
        .join("tests/data/gguf-headers")
        .join(format!("{model}.header.gguf"));
    let bytes = std::fs::read(&header).unwrap();
    let o = oracle(model);
    assert_eq!(o["header_bytes"].as_u64(), Some(bytes.len() as u64));
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file_name);
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(o["file_bytes"].as_u64().unwrap()).unwrap();
    path
}

/// Each tensor's bytes as vramdiff counts them (its data padded to the alignment), by name.
pub fn tensor_bytes(model: &str) -> Vec<(String, u64)> {
    let o = oracle(model);
    let alignment = o["alignment"].as_u64().unwrap();
    o["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = t["n_bytes"].as_u64().unwrap();
            (
                t["name"].as_str().unwrap().to_string(),
                n.div_ceil(alignment) * alignment,
            )
        })
        .collect()
}

/// Weights of each repeating layer (`blk.N.*`), from the oracle.
pub fn block_bytes(model: &str) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (name, bytes) in tensor_bytes(model) {
        let Some(rest) = name.strip_prefix("blk.") else {
            continue;
        };
        let index: usize = rest.split('.').next().unwrap().parse().unwrap();
        if out.len() <= index {
            out.resize(index + 1, 0);
        }
        out[index] += bytes;
    }
    out
}

/// Bytes of the tensors whose name passes `keep`.
pub fn bytes_where(model: &str, keep: impl Fn(&str) -> bool) -> u64 {
    tensor_bytes(model)
        .iter()
        .filter(|(n, _)| keep(n))
        .map(|(_, b)| b)
        .sum()
}

/// Run the real binary with the model search on (no `VRAMDIFF_NO_MODEL_SEARCH`), `OLLAMA_MODELS` and `HOME`
/// as given (`None`: unset).
pub fn run_searching(args: &[&str], ollama_models: Option<&Path>, home: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .env_remove("VRAMDIFF_NO_MODEL_SEARCH")
        .env_remove("OLLAMA_MODELS")
        .env_remove("HOME")
        .env_remove("USERPROFILE")
        .stdin(Stdio::null());
    if let Some(d) = ollama_models {
        cmd.env("OLLAMA_MODELS", d);
    }
    if let Some(h) = home {
        cmd.env("HOME", h);
    }
    cmd.output().expect("vramdiff runs")
}
