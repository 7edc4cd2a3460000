//! Shared helpers: where things are, and how to run vramdiff.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use vramdiff::model::{Analysis, MIB};
use vramdiff::pipeline::{self, Options};

/// The crate root (tests run with it as the working directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/data/peer-vectors/`: byte-for-byte copies of the shared corpus's peer vectors (see tests/data/README.md).
pub fn peer_vectors() -> PathBuf {
    root().join("tests/data/peer-vectors")
}

/// The samples in `sample-logs/` (logs and captures), sorted: every file but README.md and the answer files
/// `<sample>.expect.toml` beside them.
pub fn sample_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("sample-logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| is_sample(n))
        .collect();
    names.sort();
    names
}

/// A file name in `sample-logs/` (or `tests/fixtures/`) that is an input, not README.md or an `.expect.toml`.
pub fn is_sample(name: &str) -> bool {
    name != "README.md" && !name.ends_with(".expect.toml")
}

/// The answers for one sample, from `<sample>.expect.toml` beside it: how many loads vramdiff must find, and
/// each load's findings in report order (most severe first).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub loads: usize,
    #[serde(default)]
    pub load: Vec<ExpectedLoad>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedLoad {
    pub findings: Vec<String>,
}

/// Read and check `<sample>.expect.toml` for the sample at `path` (relative to the crate root): one `[[load]]`
/// table per load, and only codes of registered checks.
pub fn expect(path: &str) -> Expect {
    let file = root().join(format!("{path}.expect.toml"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let expect: Expect =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert_eq!(
        expect.load.len(),
        expect.loads,
        "{}: one [[load]] per load",
        file.display()
    );
    for code in expect.load.iter().flat_map(|l| &l.findings) {
        assert!(
            vramdiff::checks::REGISTRY
                .iter()
                .any(|d| d.code.as_str() == code),
            "{}: {code} is not a registered check",
            file.display()
        );
    }
    expect
}

/// Run the real binary with `args`, feeding `stdin`.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_in(&root(), args, stdin)
}

/// Run the real binary in `dir`.
pub fn run_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        // Reports must depend on the repository alone, not on model blobs this machine may hold.
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vramdiff runs");
    {
        let mut input = child.stdin.take().expect("stdin");
        // The child may exit before reading everything (an error case); a broken pipe here is fine.
        let _ = input.write_all(stdin);
    }
    child.wait_with_output().expect("vramdiff finishes")
}

/// Analyse files through the library, as the binary does.
pub fn analyze(paths: &[&Path]) -> Analysis {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    pipeline::analyze(&paths, &Options::default()).expect("built-in grammar loads")
}

/// MiB with two decimals, as llama.cpp prints them, to bytes.
pub fn mib(x: f64) -> i64 {
    (x * MIB as f64).round() as i64
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary grammar folder holding one file, `60-fork.toml`, with `toml` as its text.
pub fn grammar_dir(tag: &str, toml: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vramdiff-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("60-fork.toml"), toml).unwrap();
    dir
}

/// Run an smi scanner over `text` line by line (line endings already stripped, numbered from 1), then
/// finish it. Returns everything it emitted, and which lines it claimed.
pub fn scan_smi(
    mut scanner: vramdiff::smi::SmiScanner,
    text: &str,
) -> (Vec<vramdiff::smi::SmiItem>, Vec<u64>) {
    let mut items = Vec::new();
    let mut claimed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let number = i as u64 + 1;
        if scanner.feed(number, line, &mut |it| items.push(it)) {
            claimed.push(number);
        }
    }
    scanner.finish(&mut |it| items.push(it));
    (items, claimed)
}

/// A capture in `sample-logs/`, scanned as a `--smi` file.
pub fn scan_smi_sample(name: &str) -> Vec<vramdiff::smi::SmiItem> {
    let text =
        std::fs::read_to_string(root().join("sample-logs").join(name)).expect("sample exists");
    scan_smi(vramdiff::smi::SmiScanner::capture_file(None), &text).0
}

/// A fresh, empty temporary folder `vramdiff-TAG-PID` for one test (emptied first if a run left it behind).
pub fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vramdiff-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary's JSON for `args` (exit 0, or 1 for findings at `--fail-on`), parsed.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = run(args, b"");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "vramdiff {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: JSON: {e}"))
}
