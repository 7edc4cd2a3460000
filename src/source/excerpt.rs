//! A few lines of an input read again by number: the evidence a finding names (`lines 9,29`) as the log
//! wrote it, for the reports that quote it (HTML, `doctor --issue`). The pipeline keeps no line's text, so the
//! file is read a second time, decompressed and decoded as the first read was. Standard input cannot be read
//! twice and gives nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::{open, LineReader, PhysicalLine};

/// The longest excerpt kept of one line, in characters; a longer line ends with `…`.
pub const MAX_EXCERPT_CHARS: usize = 500;

/// The text of each wanted line (1-based physical line numbers) of the file at `path`, lossily decoded and
/// cut at [`MAX_EXCERPT_CHARS`]. Lines past the end, an unreadable file or stdin (`-`) give no entry.
pub fn lines_at(path: &str, wanted: &BTreeSet<u64>) -> BTreeMap<u64, String> {
    let mut found = BTreeMap::new();
    let Some(&last) = wanted.iter().next_back() else {
        return found;
    };
    if path == "-" || path == "<stdin>" {
        return found;
    }
    let Ok(input) = open(path) else {
        return found;
    };
    let mut reader = LineReader::new(input.reader);
    let mut line = PhysicalLine::default();
    while let Ok(true) = reader.next_line(&mut line) {
        if wanted.contains(&line.number) {
            let text = String::from_utf8_lossy(&line.bytes);
            let mut cut: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
            if text.chars().nth(MAX_EXCERPT_CHARS).is_some() {
                cut.push('…');
            }
            found.insert(line.number, cut);
        }
        if line.number >= last {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wanted_lines_of_a_file_and_nothing_of_stdin() {
        let dir = std::env::temp_dir().join(format!("vramdiff-excerpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.log");
        let long = "x".repeat(MAX_EXCERPT_CHARS + 10);
        std::fs::write(&path, format!("one\r\ntwo <b>\n{long}\nfour\n")).unwrap();
        let wanted: BTreeSet<u64> = [2, 3, 9].into_iter().collect();
        let got = lines_at(path.to_str().unwrap(), &wanted);
        assert_eq!(got.len(), 2);
        assert_eq!(got[&2], "two <b>");
        assert_eq!(got[&3].chars().count(), MAX_EXCERPT_CHARS + 1);
        assert!(got[&3].ends_with('…'));
        assert!(lines_at("-", &wanted).is_empty());
        assert!(lines_at(dir.join("missing").to_str().unwrap(), &wanted).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
