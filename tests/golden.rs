//! Golden reports: `reports/` holds what vramdiff writes (text and JSON) for every file in `sample-logs/`.
//! A test fails when a committed report differs from a fresh run of the real binary, byte for byte.
//! Regenerate with `VRAMDIFF_UPDATE_REPORTS=1 cargo test --test integration golden` and review the diff.

use crate::util::{root, run, stdout};

fn samples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("sample-logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    names
}

/// `sample-logs/<stem>.nvidia-smi.txt` for `<stem>.log`, when it exists.
pub fn paired_capture(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".log")?;
    let capture = format!("sample-logs/{stem}.nvidia-smi.txt");
    root().join(&capture).exists().then_some(capture)
}

fn check(format: &str, extension: &str) {
    let update =
        std::env::var_os("VRAMDIFF_UPDATE_REPORTS").is_some() && std::env::var_os("CI").is_none();
    let mut mismatched = Vec::new();
    for name in samples() {
        let input = format!("sample-logs/{name}");
        let mut args = vec!["--format", format, "--fail-on", "never", &input];
        // A log with a capture beside it (`<stem>.nvidia-smi.txt`) is reported with that capture.
        let capture = paired_capture(&name);
        if let Some(c) = &capture {
            args.extend(["--smi", c.as_str()]);
        }
        let out = run(&args, b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{input}: {}",
            crate::util::stderr(&out)
        );
        let path = root().join("reports").join(format!("{name}.{extension}"));
        if update {
            std::fs::write(&path, &out.stdout).unwrap();
            continue;
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        if committed != out.stdout {
            mismatched.push(path.display().to_string());
        }
    }
    assert!(
        mismatched.is_empty(),
        "reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}

#[test]
fn text_reports_are_current() {
    check("text", "txt");
}

#[test]
fn json_reports_are_current() {
    check("json", "json");
}

#[test]
fn same_input_same_bytes() {
    let a = run(
        &[
            "--format",
            "json",
            "sample-logs/founding-k80-gemma3-12b.log",
        ],
        b"",
    );
    let b = run(
        &[
            "--format",
            "json",
            "sample-logs/founding-k80-gemma3-12b.log",
        ],
        b"",
    );
    assert_eq!(stdout(&a), stdout(&b));
}
