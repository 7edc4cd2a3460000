//! Golden `inspect` reports: `reports/inspect/` holds what `vramdiff inspect` writes (text, and JSON with
//! `--tensors`) for every GGUF fixture in `tests/data/gguf/`, byte for byte. Regenerate with the other golden
//! reports: `VRAMDIFF_UPDATE_REPORTS=1 cargo test --test integration golden`, and review the diff.

use crate::util::{root, run, stderr};

const FIXTURES: [&str; 5] = [
    "llama-tiny",
    "moe-tiny",
    "swa-tiny",
    "mmproj-tiny",
    "hybrid-tiny",
];

#[test]
fn golden_inspect_reports_are_current() {
    let update =
        std::env::var_os("VRAMDIFF_UPDATE_REPORTS").is_some() && std::env::var_os("CI").is_none();
    let dir = root().join("reports/inspect");
    let mut mismatched = Vec::new();
    for name in FIXTURES {
        let input = format!("tests/data/gguf/{name}.gguf");
        for (extension, args) in [
            ("txt", vec!["inspect", input.as_str()]),
            (
                "json",
                vec!["inspect", "--format", "json", "--tensors", input.as_str()],
            ),
        ] {
            let out = run(&args, b"");
            assert_eq!(out.status.code(), Some(0), "{input}: {}", stderr(&out));
            let path = dir.join(format!("{name}.{extension}"));
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &out.stdout).unwrap();
                continue;
            }
            if std::fs::read(&path).unwrap_or_default() != out.stdout {
                mismatched.push(path.display().to_string());
            }
        }
    }
    assert!(
        mismatched.is_empty(),
        "inspect reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}
