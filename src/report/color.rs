//! Colour for a terminal: the text report with its severities, verdicts and regressions painted with ANSI
//! SGR codes. Applied to the terminal's layout after it is written, only when the command decided colour is
//! wanted (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`, a terminal on stdout: `commands::resolve`), so every
//! golden and every pipe stays plain. Log text was made safe (`sanitize`) before: it holds no escape of its
//! own, and painting only wraps the report's own words.

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

/// `text` (the terminal's report) painted: a finding's severity at the start of its line, and the verdict
/// words of the tables and regressions.
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
}
