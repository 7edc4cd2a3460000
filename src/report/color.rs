//! Colour for a terminal: the text report with its severities, verdicts and regressions painted with ANSI
//! SGR codes. Applied to the terminal's layout after it is written, only when the command decided colour is
//! wanted (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`, a terminal on stdout: `commands::resolve`), so every
//! golden and every pipe stays plain. Log text was made safe (`sanitize`) before: it holds no escape of its
//! own, and painting only wraps the report's own words.

use std::sync::LazyLock;

use regex::Regex;

const RED: &str = "\x1b[31m";
const BOLD_RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[33m";
const BLUE: &str = "\x1b[34m";
const GREEN: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

/// The words painted where they stand as the report writes them.
const WORDS: [(&str, &str); 4] = [
    ("over (estimate larger)", YELLOW),
    ("UNDER (estimate smaller)", RED),
    ("match (within rounding)", GREEN),
    ("REGRESSION", BOLD_RED),
];

/// The what-if's verdicts (`report/whatif.rs`): `fits on 1 GPU`, and what a placement leaves to the CPU
/// (`2.55 GiB left to the CPU`).
static VERDICTS: LazyLock<[(Regex, &str); 2]> = LazyLock::new(|| {
    [
        (
            Regex::new(r"\bfits on \d+ GPUs?\b").expect("a valid pattern"),
            GREEN,
        ),
        (
            Regex::new(r"\b\d+(?:\.\d+)? [KMGT]?i?B left to the CPU\b").expect("a valid pattern"),
            YELLOW,
        ),
    ]
});

/// `text` (the terminal's report) painted: a finding's severity at the start of its line, and the verdict
/// words of the tables, the what-if's placements and the regressions.
pub fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let mut painted = line.to_string();
        // `  warning needless-split: …` (the findings' lines, `text.rs`).
        for (severity, colour) in [("error", BOLD_RED), ("warning", YELLOW), ("info", BLUE)] {
            let prefix = format!("  {severity} ");
            if let Some(rest) = line.strip_prefix(&prefix) {
                if rest.trim_start().split(':').next().is_some_and(|code| {
                    !code.is_empty() && code.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                }) {
                    painted = format!("  {colour}{severity}{RESET} {rest}");
                }
                break;
            }
        }
        for (word, colour) in WORDS {
            if painted.contains(word) {
                painted = painted.replace(word, &format!("{colour}{word}{RESET}"));
            }
        }
        for (pattern, colour) in VERDICTS.iter() {
            if pattern.is_match(&painted) {
                painted = pattern
                    .replace_all(&painted, format!("{colour}${{0}}{RESET}").as_str())
                    .into_owned();
            }
        }
        out.push_str(&painted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::paint;

    #[test]
    fn severities_and_verdicts_are_painted_and_nothing_else() {
        let text = "  graph  3.60 GiB  1.18 GiB  over (estimate larger)\n  warning needless-split: split 1,48\n          hint: pin it\n  info    rounding-limited: inside\n  note: a warning about nothing\n";
        let painted = paint(text);
        assert!(painted.contains("\x1b[33mover (estimate larger)\x1b[0m"));
        assert!(painted.contains("  \x1b[33mwarning\x1b[0m needless-split:"));
        assert!(painted.contains("  \x1b[34minfo\x1b[0m    rounding-limited:"));
        assert!(painted.contains("  note: a warning about nothing\n"));
        assert_eq!(
            painted
                .replace("\x1b[33m", "")
                .replace("\x1b[34m", "")
                .replace("\x1b[0m", ""),
            text
        );
    }

    #[test]
    fn the_what_ifs_verdicts_are_painted() {
        // Lines as `report/whatif.rs` writes them (the founding case with --gpu-count 1).
        let text = "  with the estimate's figures (…): 48/49 layers on GPUs, 2.55 GiB left to the CPU; logged split not compared\n  with the measured figures: fits on 1 GPU (CUDA0 9.88 GiB of 11.10 GiB), 1.22 GiB to spare on the tightest\n";
        let painted = paint(text);
        assert!(
            painted.contains("\x1b[33m2.55 GiB left to the CPU\x1b[0m;"),
            "{painted}"
        );
        assert!(
            painted.contains("figures: \x1b[32mfits on 1 GPU\x1b[0m (CUDA0"),
            "{painted}"
        );
    }
}
