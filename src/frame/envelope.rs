//! Opening Docker's `json-file` envelope: a log copied off a Docker host (`/var/lib/docker/containers/<id>/
//! <id>-json.log`) holds each line the server printed as a JSON object, `{"log":"…\n","stream":"stderr",
//! "time":"…"}`, the line's quotes, backslashes and control characters escaped (`docs/log-formats.md` §6).
//!
//! Unlike a collector prefix, the envelope changes the line itself (its escapes), so it is opened before any
//! prefix is stripped and gives an owned line: the `log` string decoded, and whether it was a whole line. The
//! driver writes a line longer than its buffer (16 KiB) as several objects, every one but the last without the
//! final `\n`; such a piece is *partial*, and the framer glues the next piece onto it with nothing between
//! (as it does for the CRI format's `P` lines, [`super::prefix`]).
//!
//! Markup a paste put before the object (a Markdown quote, a line number, indentation) is kept before the
//! decoded line, so the prefix stripper removes it as usual.

/// Where `{"log":"` must start for a line to be read as an envelope: at most this many bytes of markup
/// (`> `, `  12 | `, `12:`) may come before it.
const MAX_MARKUP: usize = 24;

/// The object's opening, up to the `log` string's first byte.
const OPENING: &str = "{\"log\":\"";

/// The line inside a `json-file` object, when `line` is one (after at most `MAX_MARKUP` bytes of
/// markup): the markup followed by the decoded `log` string without its final `\n` (or `\r\n`), the
/// markup's length (where the decoded string starts), and whether the string lacked that `\n` (a partial
/// piece). `None` for any other line, and for an object whose string
/// is cut or badly escaped (the line then stays as it is).
pub fn open(line: &str) -> Option<(String, usize, bool)> {
    let b = line.as_bytes();
    let head = &b[..b.len().min(MAX_MARKUP + 1)];
    let brace = memchr::memchr(b'{', head)?;
    if !b[brace..].starts_with(OPENING.as_bytes()) {
        return None;
    }
    let markup = &line[..brace];
    if !markup
        .bytes()
        .all(|c| matches!(c, b' ' | b'\t' | b'>' | b'#' | b'|' | b':') || c.is_ascii_digit())
    {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    out.push_str(markup);
    let body = &line[brace + OPENING.len()..];
    let end = decode_string(body, &mut out)?;
    // What follows the string: the object's other fields, which say nothing about the line.
    if !body[end..].starts_with(['"']) {
        return None;
    }
    let partial = !out.ends_with('\n');
    if !partial {
        out.pop();
        if out.ends_with('\r') {
            out.pop();
        }
    }
    Some((out, brace, partial))
}

/// Decode the JSON string whose content starts `s` (after the opening quote) into `out`; the offset of the
/// closing quote, or `None` when the string is cut or an escape is bad.
fn decode_string(s: &str, out: &mut String) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        // Copy the run up to the next quote or backslash at once.
        let run = memchr::memchr2(b'"', b'\\', &b[i..])?;
        out.push_str(&s[i..i + run]);
        i += run;
        if b[i] == b'"' {
            return Some(i);
        }
        let escape = *b.get(i + 1)?;
        i += 2;
        match escape {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let unit = hex4(b.get(i..i + 4)?)?;
                i += 4;
                let c = if (0xd800..0xdc00).contains(&unit) && b[i..].starts_with(b"\\u") {
                    let low = hex4(b.get(i + 2..i + 6)?)?;
                    if (0xdc00..0xe000).contains(&low) {
                        i += 6;
                        char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00))
                    } else {
                        None
                    }
                } else {
                    char::from_u32(unit)
                };
                out.push(c.unwrap_or('\u{fffd}'));
            }
            _ => return None,
        }
    }
}

fn hex4(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b).ok()?;
    u32::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// corpus 001:111 (`sample-logs/001-kaggle-t4-llama31-8b.log`) as Docker's json-file driver stores it.
    const KV_001: &str = r#"{"log":"llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\n","stream":"stderr","time":"2026-12-07T03:14:19.000418113Z"}"#;
    /// corpus 014:2's first 100 bytes, a partial piece (escaped quotes inside).
    const PIECE_014: &str = r#"{"log":"time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload memory.available=\"[11.5 GiB","stream":"stderr","time":"2026-12-07T03:14:19.000418113Z"}"#;

    #[test]
    fn a_whole_line_and_a_partial_piece() {
        assert_eq!(
            open(KV_001),
            Some((
                "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB".to_string(),
                0,
                false
            ))
        );
        assert_eq!(
            open(PIECE_014),
            Some((
                "time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload memory.available=\"[11.5 GiB".to_string(),
                0,
                true
            ))
        );
    }

    #[test]
    fn escapes_and_markup() {
        let (line, markup, partial) = open(
            r#"> 12:{"log":"a\tb \u003c\u0026\u003e \ud83d\ude80 \\ \/\r\n","stream":"stdout"}"#,
        )
        .unwrap();
        assert_eq!(line, "> 12:a\tb <&> 🚀 \\ /");
        assert_eq!(markup, 5);
        assert!(!partial);
    }

    #[test]
    fn other_lines_and_broken_objects_are_left_alone() {
        for line in [
            "time=2025-05-23T17:16:43.377Z level=INFO msg=\"{\\\"log\\\":\"",
            r#"{"log":"cut off"#,
            r#"{"log":"bad \q escape","stream":"stderr"}"#,
            r#"{"log":"bad \u12 unit","stream":"stderr"}"#,
            r#"some words {"log":"x\n"}"#,
            r#"{"level":"info","log":"x\n"}"#,
            "",
            "{",
        ] {
            assert_eq!(open(line), None, "{line}");
        }
    }
}
