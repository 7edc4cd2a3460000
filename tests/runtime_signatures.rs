//! The table of lines only one runtime prints (`docs/log-formats.md` §0.1), row by row on its real line: the
//! line in the repository holds the row's example, the row's rule reads it, and a fragment that holds it names
//! the runtime and engine the row gives — and no more than the row gives.

use vramdiff::grammar::signatures::{signatures, Signature};
use vramdiff::model::{Concluded, Engine, Runtime};

use crate::properties::analyze;
use crate::util::root;

/// A real fragment that names no runtime: a Vulkan compute buffer over the allocation limit, the context
/// failing (`sample-logs/1003-…`, lines 8–10).
const FAILURE: &str =
    "ggml_gallocr_reserve_n: failed to allocate Vulkan0 buffer of size 4757131264\n\
graph_reserve: failed to allocate compute buffers\n\
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers\n";

/// An Ollama server line its own rule reads (`sample-logs/002-…:4`, GPU discovery) and a llama-server line
/// (`sample-logs/706-…:54`).
const OLLAMA: &str = r#"time=2025-12-01T20:28:45.760Z level=INFO source=types.go:131 msg="inference compute" id=GPU-93e08bff-19ea-9448-3848-d2ab3d687e30 library=cuda variant=v12 compute=8.9 driver=12.4 name="NVIDIA GeForce RTX 4090" total="23.6 GiB" available="23.3 GiB""#;
const LLAMA_SERVER: &str =
    "load_model: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'";

fn real_line(row: &Signature) -> String {
    let (path, n) = row.real_line.rsplit_once(':').unwrap();
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    text.lines()
        .nth(n.parse::<usize>().unwrap() - 1)
        .unwrap()
        .to_string()
}

fn load(lines: &[&str]) -> Concluded {
    let text = lines.join("\n") + "\n";
    let mut loads = analyze("fragment.log", text.as_bytes()).loads;
    assert_eq!(loads.len(), 1, "{text}");
    loads.remove(0)
}

fn who(l: &Concluded) -> (Runtime, Engine) {
    (l.reconciled.load.runtime, l.reconciled.load.engine)
}

#[test]
fn a_fragment_without_a_signature_names_nothing() {
    assert_eq!(who(&load(&[FAILURE])), (Runtime::Unknown, Engine::Unknown));
}

#[test]
fn every_row_reads_its_real_line_and_names_what_the_row_says() {
    let rows = signatures();
    assert_eq!(rows.len(), 5);
    for row in &rows {
        let line = real_line(row);
        assert!(line.contains(&row.example), "{}: {line}", row.id);
        let engine = match row.engine.as_str() {
            "llama" => Engine::Llama,
            "ollama" => Engine::Ollama,
            _ => Engine::Unknown,
        };
        // Before the fragment's lines (a grep that begins with it) and after them (the tail of a crash).
        for lines in [[line.as_str(), FAILURE], [FAILURE, line.as_str()]] {
            let (runtime, got) = who(&load(&lines));
            assert_eq!(got, engine, "{}: {lines:?}", row.id);
            let expected = match row.runtime.as_str() {
                "ollama-llama-server" => Runtime::OllamaFit,
                // llama-server alone does not say who launched it; Ollama's slog says nothing of the placer.
                "llama-server" => Runtime::LlamaCppLauncherUnknown,
                "ollama" => Runtime::Unknown,
                other => panic!("{}: runtime {other}", row.id),
            };
            assert_eq!(runtime, expected, "{}: {lines:?}", row.id);
        }
        // Beside the other runtime's sign: llama-server launched by Ollama.
        let beside = match row.runtime.as_str() {
            "llama-server" => OLLAMA,
            "ollama" | "ollama-llama-server" => LLAMA_SERVER,
            _ => unreachable!(),
        };
        let (runtime, got) = who(&load(&[beside, line.as_str(), FAILURE]));
        assert_eq!(
            (runtime, got),
            (Runtime::OllamaFit, Engine::Llama),
            "{}",
            row.id
        );
    }
}

#[test]
fn the_table_in_the_doc_is_the_grammar_the_binary_reads() {
    let grammar = vramdiff::grammar::load(None).unwrap();
    let ids: Vec<String> = grammar
        .rules
        .iter()
        .filter(|r| r.file == vramdiff::grammar::signatures::FILE_NAME)
        .map(|r| r.id.clone())
        .collect();
    let rows: Vec<String> = signatures()
        .iter()
        .map(|s| format!("signature.{}", s.id))
        .collect();
    assert_eq!(ids, rows);
}
