//! `--summary`: a Markdown report appended to the file GitHub Actions names in `$GITHUB_STEP_SUMMARY`. The
//! one place a command writes a file it was not told the name of on the command line.

use std::io::Write;

/// The variable GitHub Actions sets to the step summary file.
pub const STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// Append `markdown` to the file `$GITHUB_STEP_SUMMARY` names. Unset or empty: nothing, no message. A file
/// that cannot be written is a warning in `messages`, never a failure of the command.
pub fn step_summary(markdown: &[u8], messages: &mut Vec<String>) {
    let Some(path) = std::env::var_os(STEP_SUMMARY).filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown).and_then(|_| f.write_all(b"\n")));
    if let Err(e) = written {
        messages.push(format!(
            "warning: cannot append the summary to ${STEP_SUMMARY} ({}): {e}",
            std::path::Path::new(&path).display()
        ));
    }
}
