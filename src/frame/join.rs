//! Re-joining records that a paste re-wrapped.
//!
//! People paste logs into issues and notes, and editors wrap them at 80–120 columns, sometimes mid-token
//! (`C\nPU.1.LLAMAFILE`, `GPU\nLayers:[]`). A physical line is joined onto the previous logical line only
//! when it cannot start a record on its own *and* the previous line is a Go slog record that it plausibly
//! continues: either the previous record has an open quote, or the line is an indented run of `key=value`
//! pairs. Everything else stands alone, so a stray line never swallows the next record.

/// True when `line` looks like the start of a record of some dialect we know.
pub fn starts_record(line: &str) -> bool {
    let b = line.as_bytes();
    if b.is_empty() {
        return true;
    }
    if line.starts_with("time=") || line.starts_with("level=") || line.starts_with("[GIN]") {
        return true;
    }
    // llama.cpp `function_name: …`, `Device 0: …`, nvidia-smi `| …` / `+---`.
    if matches!(b[0], b'|' | b'+' | b'#' | b'=') {
        return true;
    }
    if let Some(colon) = line.find(": ") {
        let head = &line[..colon];
        if !head.is_empty() && head.len() <= 48 && !head.contains('=') {
            return true;
        }
    }
    // Go std log `2024/06/27 19:00:53 …` and other date-led lines.
    b.len() >= 10 && b[..4].iter().all(u8::is_ascii_digit) && (b[4] == b'/' || b[4] == b'-')
}

/// True when `record` is a Go slog record whose quoting is still open (an odd number of unescaped quotes).
pub fn has_open_quote(record: &str) -> bool {
    let b = record.as_bytes();
    let mut open = false;
    // A backslash escapes the byte after it, whatever it is.
    let mut escaped_until = 0;
    for i in memchr::memchr2_iter(b'"', b'\\', b) {
        if i < escaped_until {
            continue;
        }
        if b[i] == b'\\' {
            escaped_until = i + 2;
        } else {
            open = !open;
        }
    }
    open
}

/// True when `line` begins with a slog `key=` (bare or quoted key).
fn starts_with_pair(line: &str) -> bool {
    let key_end = if let Some(rest) = line.strip_prefix('"') {
        rest.find('"').map(|i| i + 2)
    } else {
        line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
    };
    matches!(key_end, Some(i) if i > 0 && line.as_bytes().get(i) == Some(&b'='))
}

/// How a physical line continues the previous logical line, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// It is a record of its own.
    No,
    /// Append with a single space between.
    WithSpace,
    /// Append directly (the paste cut a token in two).
    Glued,
}

/// True when a later line may be joined onto `record`: only Go slog records are continued.
pub fn can_be_continued(record: &str) -> bool {
    record.starts_with("time=") || record.starts_with("level=")
}

/// Decide whether `line` (prefixes already stripped; `indented` if it was) continues `previous`.
pub fn continuation(previous: &str, line: &str, indented: bool) -> Continuation {
    if line.is_empty() || !can_be_continued(previous) {
        return Continuation::No;
    }
    if line.starts_with("time=") || line.starts_with("level=") || line.starts_with("[GIN]") {
        return Continuation::No;
    }
    if has_open_quote(previous) {
        let boundary_space = indented || previous.ends_with(' ');
        return if boundary_space {
            Continuation::WithSpace
        } else {
            Continuation::Glued
        };
    }
    if starts_with_pair(line) && (indented || previous.ends_with(' ') || !starts_record(line)) {
        return Continuation::WithSpace;
    }
    Continuation::No
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrapped_offload_line_from_issue_9181() {
        let prev = "time=2025-02-18T02:29:51.627Z level=INFO source=server.go:130 msg=offload library=cuda layers.requested=-1 layers.model=81 ";
        assert_eq!(
            continuation(prev, "layers.offload=44 layers.split=11,11,11,11", true),
            Continuation::WithSpace
        );
    }

    #[test]
    fn a_cut_inside_a_quoted_value_is_glued() {
        let prev = "time=2025-10-01T10:00:00Z level=INFO msg=load request=\"{Operation:fit GPU";
        assert_eq!(
            continuation(prev, "Layers:[] MultiUserCache:false}\"", false),
            Continuation::Glued
        );
    }

    #[test]
    fn open_quotes_with_escapes() {
        assert!(!has_open_quote(r#"msg="a" b="c""#));
        assert!(has_open_quote(r#"msg="a \" b"#));
        assert!(!has_open_quote(r#"msg="a \\" b"#));
        assert!(!has_open_quote(r#"msg="a \\\" b""#));
        assert!(has_open_quote(r#"x=\\""#));
        assert!(!has_open_quote(r#"x=\""#));
    }

    #[test]
    fn records_and_llama_cpp_lines_stand_alone() {
        let prev = "time=2025-08-24T08:26:00.310Z level=INFO msg=\"kv cache\" device=CUDA0 size=\"936.0 MiB\"";
        assert_eq!(
            continuation(prev, "time=2025-08-24T08:26:00.311Z level=INFO", false),
            Continuation::No
        );
        assert_eq!(
            continuation(prev, "load_tensors: offloaded 33/33 layers to GPU", false),
            Continuation::No
        );
        assert_eq!(
            continuation(prev, "releasing nvml library", false),
            Continuation::No
        );
        assert_eq!(
            continuation("llama_context: n_ctx = 4096", "size=1", true),
            Continuation::No
        );
    }
}
