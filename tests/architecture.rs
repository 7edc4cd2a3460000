//! The layering that `docs/architecture.md` describes, held by a test: the top-level modules of `src/` import
//! each other without a cycle, no stage imports the command layer (`cli`, `commands`), clap, polars, plotters
//! and ureq stay in the folders that own them, and `fetch` (the network) imports nothing of the crate. The imports are read from the source text (`crate::module`
//! paths outside comments and unit tests), so a new module needs no registration here: it is checked like the
//! others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The command layer: clap's types and the commands. Only `main.rs` and the command layer itself import it.
// `mcp` (the MCP server, `src/mcp/`) sits beside `commands`: it plans each call as a command line clap checks.
const COMMAND_LAYER: [&str; 3] = ["cli", "commands", "mcp"];

/// Each of these crates is used only under the listed top-level modules (the stage that owns it).
const OWNED_CRATES: [(&str, &[&str]); 6] = [
    ("clap", &["cli", "commands", "mcp"]),
    // The MCP SDK and its runtime: the server alone (`src/mcp/`).
    ("rmcp", &["mcp"]),
    ("tokio", &["mcp"]),
    ("polars", &["batch"]),
    ("plotters", &["report", "batch"]),
    // The HTTP(S) client of `inspect URL` and `--gguf URL` (`src/fetch/`).
    ("ureq", &["fetch"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules (`src/<name>.rs` or `src/<name>/`), without the crate roots.
fn top_level_modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    for entry in fs::read_dir(src()).expect("src/") {
        let path = entry.expect("an entry of src/").path();
        let name = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        } else {
            continue;
        }
        modules.insert(name, files);
    }
    modules
}

/// The code of a file without its comment lines (`//`, `//!`, `///`: doc links name modules without
/// importing them) and without its unit tests (a `#[cfg(test)]` module, last in the file by the house style):
/// the layering holds for the code that ships, and a test may borrow a later stage's helper.
fn code_lines(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| (*l).to_owned())
        .collect()
}

/// The top-level modules a piece of code names as `crate::<module>`.
fn crate_paths(line: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let word: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if modules.contains(&word) {
            named.insert(word);
        }
        rest = after;
    }
    named
}

fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = top_level_modules();
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut deps = BTreeSet::new();
        for file in files {
            for line in code_lines(file) {
                deps.extend(crate_paths(&line, &names));
            }
        }
        deps.remove(module);
        graph.insert(module.clone(), deps);
    }
    graph
}

/// A cycle of the graph, as the modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let graph = import_graph();
    assert!(
        graph.len() > 10,
        "the modules of src/ were not found: {graph:?}"
    );
    assert_eq!(
        find_cycle(&graph),
        None,
        "an import cycle between top-level modules"
    );
}

#[test]
fn no_stage_imports_the_command_layer() {
    let graph = import_graph();
    for (module, deps) in &graph {
        if COMMAND_LAYER.contains(&module.as_str()) {
            continue;
        }
        for layer in COMMAND_LAYER {
            assert!(
                !deps.contains(layer),
                "src/{module} imports the command layer `{layer}`"
            );
        }
    }
}

#[test]
fn clap_polars_and_plotters_stay_where_they_belong() {
    for (module, files) in top_level_modules() {
        for file in files {
            for line in code_lines(&file) {
                for (krate, owners) in OWNED_CRATES {
                    let uses = line.contains(&format!("{krate}::"))
                        || line.contains(&format!("use {krate}"));
                    assert!(
                        !uses || owners.contains(&module.as_str()),
                        "{} uses `{krate}`, which belongs to {owners:?}: {line}",
                        file.display()
                    );
                }
            }
        }
    }
}

/// `fetch` sits beside `source`, left of every stage: it turns an address into bytes and knows nothing of GGUF
/// or of the stages that read them (`src/fetch/mod.rs`).
#[test]
fn fetch_imports_nothing_of_the_crate() {
    let graph = import_graph();
    assert_eq!(
        graph.get("fetch"),
        Some(&BTreeSet::new()),
        "src/fetch imports another module"
    );
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(vec![
            "a".to_owned(),
            "b".to_owned(),
            "c".to_owned(),
            "a".to_owned()
        ])
    );
}
