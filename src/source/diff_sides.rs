//! A pasted diff of two runs (`diff -u old.log new.log`, a ```` ```diff ```` block of an issue) holds two
//! logs in one: the old run's lines marked `-`, the new run's `+`, the lines both share marked by a space,
//! interleaved hunk by hunk. Read as one log, a hunk's `-n_ctx = 4096` and `+n_ctx = 8192` would be one
//! load's two values; read as its two sides, they are the two loads of a pair (issue 53, `crate::pairs`).
//!
//! An input is taken for a diff only when its first line that is not blank or a fence is a diff's (a
//! `diff `/`--- `/`@@ ` header, or a `-`/`+` line) and then every line is a diff line. Lines are held until
//! the first that is not a diff's (a log that starts with a `-` line is read on from there, its memory still
//! bounded), a diff whole up to [`MAX_DIFF_BYTES`] (a bigger input is read as it is). Each side keeps the
//! diff's line numbers: the other side's lines, the headers and the markers are read as blank lines, so
//! a finding's line is the pasted diff's line. Anything else is read unchanged, the bytes peeked included.

use std::io::{self, BufRead, Cursor, Read};

use super::Input;

/// The largest diff held: a pasted diff is a few hundred KiB; a bigger one is read as a log, in bounded memory
/// (`README.md`: under 32 MB).
pub const MAX_DIFF_BYTES: u64 = 16 << 20;

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DiffLine {
    /// `diff --git …`, `index …`, `--- a/…`, `+++ b/…`, `@@ -1,3 +1,3 @@`, `\ No newline at end of file`, a
    /// Markdown fence, a blank line: on neither side.
    Header,
    Old,
    New,
    Both,
    /// Not a line of a diff.
    Other,
}

fn classify(line: &[u8]) -> DiffLine {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let header = [
        &b"diff "[..],
        b"index ",
        b"--- ",
        b"+++ ",
        b"@@ ",
        b"\\ ",
        b"```",
        b"~~~",
    ];
    if line.is_empty() || header.iter().any(|h| line.starts_with(h)) {
        return DiffLine::Header;
    }
    match line[0] {
        b'-' => DiffLine::Old,
        b'+' => DiffLine::New,
        b' ' => DiffLine::Both,
        _ => DiffLine::Other,
    }
}

/// Whether the first line that is neither blank nor a fence starts a diff.
fn starts_like_a_diff(head: &[u8]) -> bool {
    head.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.is_empty() && !l.starts_with(b"```") && !l.starts_with(b"~~~"))
        .is_some_and(|l| {
            matches!(
                classify(l),
                DiffLine::Old | DiffLine::New | DiffLine::Header
            )
        })
}

/// `input` as its two sides when it is a pasted diff of two runs (the `-` side first, named `NAME (− lines)`,
/// then `NAME (+ lines)`), else `input` unchanged.
pub fn sides(input: Input) -> io::Result<Vec<Input>> {
    let Input { name, mut reader } = input;
    let head = reader.fill_buf()?;
    if !starts_like_a_diff(head) {
        return Ok(vec![Input { name, reader }]);
    }
    // Read line by line until a line that is no diff's (a log that starts with `-` or `+`: held no further)
    // or the end; a diff is held whole, up to MAX_DIFF_BYTES.
    let mut whole = Vec::new();
    let mut kinds = Vec::new();
    let mut is_diff = true;
    loop {
        let start = whole.len();
        if (&mut reader)
            .take(MAX_DIFF_BYTES + 1)
            .read_until(b'\n', &mut whole)?
            == 0
        {
            break;
        }
        let line = whole[start..]
            .strip_suffix(b"\n")
            .unwrap_or(&whole[start..]);
        let kind = classify(line);
        kinds.push(kind);
        if kind == DiffLine::Other || whole.len() as u64 > MAX_DIFF_BYTES {
            is_diff = false;
            break;
        }
    }
    if !(is_diff && kinds.contains(&DiffLine::Old) && kinds.contains(&DiffLine::New)) {
        let rest: Box<dyn BufRead + Send> = Box::new(Cursor::new(whole).chain(reader));
        return Ok(vec![Input { name, reader: rest }]);
    }
    let side = |keep: DiffLine| -> Vec<u8> {
        let mut out = Vec::with_capacity(whole.len());
        for (line, kind) in whole
            .split(|&b| b == b'\n')
            .zip(kinds.iter().chain([&DiffLine::Header]))
        {
            if *kind == keep || *kind == DiffLine::Both {
                out.extend_from_slice(&line[1..]);
            }
            out.push(b'\n');
        }
        out.pop();
        out
    };
    let (old, new) = (side(DiffLine::Old), side(DiffLine::New));
    Ok(vec![
        Input {
            name: format!("{name} (− lines)"),
            reader: Box::new(Cursor::new(old)),
        },
        Input {
            name: format!("{name} (+ lines)"),
            reader: Box::new(Cursor::new(new)),
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(inputs: Vec<Input>) -> Vec<(String, String)> {
        inputs
            .into_iter()
            .map(|mut i| {
                let mut s = String::new();
                i.reader.read_to_string(&mut s).unwrap();
                (i.name, s)
            })
            .collect()
    }

    fn input(text: &str) -> Input {
        Input {
            name: "paste".to_string(),
            reader: Box::new(Cursor::new(text.as_bytes().to_vec())),
        }
    }

    #[test]
    fn a_unified_diff_splits_into_its_two_sides_on_the_diff_s_line_numbers() {
        // Lines as llama.cpp b11549 prints them (tests/data/oracle/b11549/logs/llama-gqa--ctx4096.log and
        // llama-gqa--ub128.log), one hunk of their diff.
        let diff = "--- a.log\n+++ b.log\n@@ -1,4 +1,4 @@\n llama_context: n_ctx         = 4096\n\
                    -llama_context: n_ubatch      = 512\n+llama_context: n_ubatch      = 128\n \
                    llama_context: causal_attn   = 1\n";
        let got = read(sides(input(diff)).unwrap());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "paste (− lines)");
        assert_eq!(
            got[0].1,
            "\n\n\nllama_context: n_ctx         = 4096\nllama_context: n_ubatch      = 512\n\n\
             llama_context: causal_attn   = 1\n"
        );
        assert_eq!(
            got[1].1,
            "\n\n\nllama_context: n_ctx         = 4096\n\nllama_context: n_ubatch      = 128\n\
             llama_context: causal_attn   = 1\n"
        );
    }

    #[test]
    fn anything_but_a_diff_is_read_unchanged() {
        for text in [
            "llama_context: n_ctx         = 4096\n",
            // A Markdown list of log lines: `- ` then text that is not a diff's.
            "- llama_context: n_ctx = 4096\nsome words\n",
            // Only one side: a list, not two runs.
            "-a\n-b\n",
            // Both signs, then a line no diff has: read from there as a log, the lines held given back first.
            "-a\n+b\nplain text\n-c\n+d\n",
            "",
        ] {
            let got = read(sides(input(text)).unwrap());
            assert_eq!(got, vec![("paste".to_string(), text.to_string())], "{text}");
        }
    }
}
