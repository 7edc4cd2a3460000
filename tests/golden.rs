//! Golden reports: `reports/` holds what vramdiff writes (text, JSON, Markdown, HTML and PNG charts) for every file in
//! `sample-logs/`. A test fails when a committed report differs from a fresh run of the real binary, byte for
//! byte (PNG too: the font is embedded, so the pixels do not depend on the machine).
//! Regenerate with `VRAMDIFF_UPDATE_REPORTS=1 cargo test --test integration golden` and review the diff.

use crate::util::{root, run, run_in, sample_names as samples, stdout};

/// `sample-logs/<stem>.nvidia-smi.txt` for `<stem>.log`, when it exists.
pub fn paired_capture(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".log")?;
    let capture = format!("sample-logs/{stem}.nvidia-smi.txt");
    root().join(&capture).exists().then_some(capture)
}

/// Write `fresh` to the golden `path` when updating, else note `path` in `mismatched` when they differ.
fn compare_or_update(
    path: &std::path::Path,
    fresh: &[u8],
    update: bool,
    mismatched: &mut Vec<String>,
) {
    if update {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, fresh).unwrap();
    } else if std::fs::read(path).unwrap_or_default() != fresh {
        mismatched.push(path.display().to_string());
    }
}

fn updating() -> bool {
    std::env::var_os("VRAMDIFF_UPDATE_REPORTS").is_some() && std::env::var_os("CI").is_none()
}

fn check(format: &str, extension: &str) {
    let update = updating();
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

/// The HTML reports: self-contained pages with the charts embedded and the findings' lines quoted.
#[test]
fn html_reports_are_current() {
    check("html", "html");
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// Markdown reports with their charts, run from `reports/` so the links (`charts/…`) work where they are read.
#[test]
fn markdown_reports_and_charts_are_current() {
    let update = updating();
    let reports = root().join("reports");
    let charts = reports.join("charts");
    // A sibling of reports/ (so `../sample-logs/…` resolves the same), git-ignored.
    let scratch = root().join(format!(".scratch-reports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut mismatched = Vec::new();
    let mut produced = std::collections::BTreeSet::new();
    for name in samples() {
        let input = format!("../sample-logs/{name}");
        let mut args = vec![
            "--format",
            "markdown",
            "--fail-on",
            "never",
            "--chart",
            "charts",
            &input,
        ];
        let capture = paired_capture(&name).map(|c| format!("../{c}"));
        if let Some(c) = &capture {
            args.extend(["--smi", c.as_str()]);
        }
        // Charts go to a scratch copy of reports/ so a failing run leaves the committed ones alone.
        std::fs::create_dir_all(&scratch).unwrap();
        let out = run_in(&scratch, &args, b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{input}: {}",
            crate::util::stderr(&out)
        );
        let md = reports.join(format!("{name}.md"));
        if update {
            std::fs::write(&md, &out.stdout).unwrap();
        } else if std::fs::read(&md).unwrap_or_default() != out.stdout {
            mismatched.push(md.display().to_string());
        }
    }
    let fresh = scratch.join("charts");
    for entry in std::fs::read_dir(&fresh).into_iter().flatten() {
        let entry = entry.unwrap();
        let file = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).unwrap();
        assert_eq!(png_size(&bytes), (1000, 600), "{file}");
        produced.insert(file.clone());
        let committed = charts.join(&file);
        if update {
            std::fs::create_dir_all(&charts).unwrap();
            std::fs::write(&committed, &bytes).unwrap();
        } else if std::fs::read(&committed).unwrap_or_default() != bytes {
            mismatched.push(committed.display().to_string());
        }
    }
    assert!(
        produced.len() >= 40,
        "charts for every load: {}",
        produced.len()
    );
    for entry in std::fs::read_dir(&charts).into_iter().flatten() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !produced.contains(&file) {
            if update {
                std::fs::remove_file(charts.join(&file)).unwrap();
            } else {
                mismatched.push(format!("stale chart {file}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        mismatched.is_empty(),
        "reports differ from a fresh run (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
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

/// `whatif --explain` (issue 23): the estimator's placement decision by decision, for the founding case (the
/// ollama37 `241a0340` family), corpus 014 (upstream 0.7.0) and 015 (upstream 0.5), in text, Markdown and JSON.
/// Goldens in `reports/whatif/`, regenerated like the others.
#[test]
fn whatif_explain_reports_are_current() {
    let update = updating();
    let mut mismatched = Vec::new();
    for name in [
        "founding-k80-gemma3-12b.log",
        "014-multigpu-2x-split37-0-projector-estimate.log",
        "015-multigpu-4x-split11x4-estimate.log",
    ] {
        for (format, extension) in [("text", "txt"), ("markdown", "md"), ("json", "json")] {
            let input = format!("sample-logs/{name}");
            let args = [
                "whatif",
                "--explain",
                "--no-model-search",
                "--format",
                format,
                input.as_str(),
            ];
            let out = run(&args, b"");
            assert_eq!(out.status.code(), Some(0), "{input}");
            let path = root()
                .join("reports/whatif")
                .join(format!("{name}.explain.{extension}"));
            compare_or_update(&path, &out.stdout, update, &mut mismatched);
        }
    }
    assert!(
        mismatched.is_empty(),
        "whatif --explain reports differ (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}

/// Pairs of loads in two files given together (issue 53): the Ollama pair of sample-logs/008-… and 201-…
/// (granite 8b on one M1 Pro, one blob, `num_ctx` 128000 → 32768 with 4 slots, 20 → 37 layers), in text,
/// Markdown, JSON and HTML. The llama.cpp pair (1256) and the vLLM pair (801) are samples of one file each,
/// with the goldens of every sample. Goldens in `reports/pairs/`, regenerated like the others.
#[test]
fn pair_reports_are_current() {
    let update = updating();
    let mut mismatched = Vec::new();
    let cases: [(&str, &[&str]); 1] = [(
        "ollama-granite-008-then-201",
        &[
            "sample-logs/008-macos-metal-m1pro-granite-8b-128k-partial.log",
            "sample-logs/201-macos-metal-m1pro-granite8b-full-mdquote.log",
        ],
    )];
    for (name, inputs) in cases {
        for (format, extension) in [
            ("text", "txt"),
            ("markdown", "md"),
            ("json", "json"),
            ("html", "html"),
        ] {
            let mut args = vec!["--format", format, "--fail-on", "never"];
            args.extend(inputs);
            let out = run(&args, b"");
            assert_eq!(out.status.code(), Some(0), "{name}");
            let report = String::from_utf8_lossy(&out.stdout);
            assert!(
                report.contains("Pairs of loads") || report.contains("\"pairs\""),
                "{name}.{extension}: a pair"
            );
            let path = root()
                .join("reports/pairs")
                .join(format!("{name}.{extension}"));
            compare_or_update(&path, &out.stdout, update, &mut mismatched);
        }
    }
    assert!(
        mismatched.is_empty(),
        "pair reports differ (regenerate with VRAMDIFF_UPDATE_REPORTS=1 and review): {mismatched:?}"
    );
}
