//! Markdown and PNG through the real binary: log text cannot inject markup, chart files are named from the
//! input's file name only and land inside the chart folder, and the same input gives the same PNG bytes.

use crate::util::{root, run, stderr, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";

#[test]
fn markdown_escapes_log_text() {
    let log = std::fs::read_to_string(root().join(FOUNDING))
        .unwrap()
        .replace(
            "architecture=gemma3",
            "architecture=gemma3<img/src=x/onerror=alert(1)>|[click](http://evil)*",
        );
    let out = run(&["--format", "markdown", "-"], log.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(
        md.contains(
            "## Load 1: gemma3\\<img/src=x/onerror=alert(1)\\>\\|\\[click\\](http://evil)\\*"
        ),
        "{md}"
    );
    // The only raw HTML is vramdiff's own <details>; every `<` from the log is escaped or in a code span.
    let outside_code: String = md
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect();
    let own = outside_code
        .replace("<details>", "")
        .replace("</details>", "")
        .replace("<summary>", "")
        .replace("</summary>", "");
    let raw_angles = own
        .match_indices('<')
        .filter(|(i, _)| !own[..*i].ends_with('\\'))
        .count();
    assert_eq!(raw_angles, 0, "no raw HTML from the log");
    assert!(!md.contains("[click]("), "no link from the log");
    // Tables keep their shape: every row of the components table has the header's cell count.
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("| component"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |l: &str| l.matches(" | ").count();
    assert!(table.len() >= 3);
    assert!(
        table.iter().all(|l| cells(l) == cells(table[0])),
        "{table:?}"
    );
}

#[test]
fn charts_are_written_inside_the_folder_with_names_from_the_file_name() {
    let dir = std::env::temp_dir().join(format!("vramdiff-chart-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_text = dir.display().to_string();
    let out = run(
        &[FOUNDING, "--chart", &dir_text, "--format", "markdown"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "founding-k80-gemma3-12b-load1-components.png",
            "founding-k80-gemma3-12b-load1-gpus.png"
        ]
    );
    let err = stderr(&out);
    for n in &names {
        assert!(
            err.contains(&format!("wrote {}", dir.join(n).display())),
            "{err}"
        );
        assert!(
            stdout(&out).contains(&format!("]({})", dir.join(n).display())),
            "the Markdown links it"
        );
    }
    // Same input, same bytes.
    let first = std::fs::read(dir.join(&names[1])).unwrap();
    run(&[FOUNDING, "--chart", &dir_text], b"");
    assert_eq!(std::fs::read(dir.join(&names[1])).unwrap(), first);
    // Standard input gets a fixed stem, whatever the log says.
    let log = std::fs::read(root().join(FOUNDING)).unwrap();
    run(&["--chart", &dir_text, "-"], &log);
    assert!(dir.join("stdin-load1-gpus.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
