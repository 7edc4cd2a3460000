//! Noticing which file of a paste a line comes from, so that a paste of several logs splits where each file
//! starts: each file is its own log, however alike the files are (one log per context size, corpus 703;
//! `docs/log-formats.md` §6.3).
//!
//! Two signs name a file, and both are read here:
//!
//! * **grep's prefixes.** `grep PATTERN a.log b.log` (or `-r`, `-H`) puts the file name before every line:
//!   `a.log:` before a matching line, `a.log-` before a context line (`-A`/`-B`/`-C`), with a line number
//!   between when `-n` is given (`a.log:12:`, `a.log-13-`); groups of context are separated by a `--` line.
//!   [`grep_prefix`] reads the prefix (the framer strips it as it strips a collector's prefix).
//! * **A header line naming a file**, on a line of its own: `head`/`tail` over several files print
//!   `==> a.log <==`; a Markdown paste names each block with the file name as a heading, in code spans or in
//!   bold (`` `raw-log-ctx2048.txt` ``, `### server.log`, `**server.log**:`). [`header`] reads it.
//!
//! A file name is told from a llama.cpp function name (`load_tensors:`) or a host (`user@box:`) by its
//! extension: one of [`EXTENSIONS`], possibly followed by a rotation number (`server.log.1`). Any other
//! file name is not recognised, so no ordinary log line is taken for a grep prefix. A `==> … <==` header
//! names any file, as `head` prints it for every file.

/// The extensions of a log file's name (compared without case), the only ones a grep prefix or a Markdown
/// header is recognised by.
pub const EXTENSIONS: [&str; 4] = ["log", "txt", "out", "err"];

/// Every spelling of `.` and an extension of [`EXTENSIONS`] (`.log`, `.LOG`, `.Log` …, compared without case
/// like the extensions): a grep prefix or a header naming a file holds one, so a line without any names no
/// file (see `super::skim`).
pub fn name_literals() -> Vec<String> {
    let mut out = Vec::new();
    for ext in EXTENSIONS {
        let letters = ext.len();
        for mask in 0..1u32 << letters {
            let spelt: String = ext
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if mask & (1 << i) != 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            out.push(format!(".{spelt}"));
        }
    }
    out
}

/// Bytes of a path as grep prints it (no space, no `:`: a Windows drive is read apart).
#[inline]
fn path_byte(b: u8) -> bool {
    PATH_BYTES[usize::from(b)]
}

/// [`path_byte`] as a table: it is asked of the first bytes of every framed line ([`header`]).
static PATH_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'/' | b'\\' | b'.' | b'_' | b'-' | b'~' | b'+' | b'@' | b'%' | b','
            );
        b += 1;
    }
    table
};

/// Where a log file's extension that starts at the `.` at `dot` of `token` ends, with a rotation number
/// after it (`.log`, `.LOG`, `.log.1`); `None` when no extension of [`EXTENSIONS`] starts there or nothing
/// names the file before it.
fn extension_end(token: &[u8], dot: usize) -> Option<usize> {
    // Nothing names the file when the dot starts the token or a path's last part (`/.log`). Looking only at
    // the byte before keeps this constant-time: it runs for every dot of a line (a line of progress dots made
    // it quadratic, seconds for one 200 KB line).
    if dot == 0 || matches!(token[dot - 1], b'/' | b'\\') {
        return None;
    }
    let after = &token[dot + 1..];
    let ext = EXTENSIONS.iter().find(|e| {
        after.len() >= e.len()
            && after[..e.len()].eq_ignore_ascii_case(e.as_bytes())
            && !after.get(e.len()).is_some_and(u8::is_ascii_alphanumeric)
    })?;
    let mut end = dot + 1 + ext.len();
    // A rotation number: `server.log.1`.
    if token.get(end) == Some(&b'.') {
        let digits = token[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > 0
            && !token
                .get(end + 1 + digits)
                .is_some_and(u8::is_ascii_alphanumeric)
        {
            end += 1 + digits;
        }
    }
    Some(end)
}

/// True when all of `name` is a log file's name (a path whose last extension is a log extension).
fn is_log_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.iter().all(|&b| path_byte(b) || b == b':')
        // Only the last dot (`a.log`) or the one before it (`a.log.1`) can start an extension that ends the
        // name: after any earlier one, a rotation number would be followed by another dot.
        && memchr::memrchr_iter(b'.', name)
            .take(2)
            .any(|dot| extension_end(name, dot) == Some(name.len()))
}

/// The length of a Windows drive (`C:\`, `D:/`) at the start of `b`, else 0.
fn drive(b: &[u8]) -> usize {
    if b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/') {
        2
    } else {
        0
    }
}

/// The file name and the rest of `line` when it starts with grep's file prefix (see the module doc): `a.log:`
/// or `a.log-`, then a line number and the same separator when grep was given `-n`.
///
/// A matching line's prefix is the whole path-like token before the first `:` when that token is a log file's
/// name (`raw-log-ctx2048.txt:load_tensors: …`). Otherwise, a context line's is the token up to the first log
/// extension followed by `-` (`raw-log-ctx2048.txt-load_tensors: …`, `server.log-  Device 0: …`).
pub fn grep_prefix(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    let start = drive(b);
    let token = start + b[start..].iter().take_while(|&&c| path_byte(c)).count();
    let dots = memchr::memchr_iter(b'.', &b[start..token]).map(|i| start + i);
    let (name_end, separator) = if b.get(token) == Some(&b':') && is_log_name(&b[..token]) {
        (token, b':')
    } else {
        let end = dots
            .filter_map(|dot| extension_end(&b[..token], dot))
            .find(|&end| b.get(end) == Some(&b'-'))?;
        (end, b'-')
    };
    let mut rest = name_end + 1;
    // `-n`: the line number and the separator again.
    let digits = b[rest..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && b.get(rest + digits) == Some(&separator) {
        rest += digits + 1;
    }
    Some((&line[..name_end], &line[rest..]))
}

/// True when `line` (prefixes stripped) is grep's separator between groups of context lines.
pub fn is_grep_separator(line: &str) -> bool {
    line == "--"
}

/// The file a header line names (see the module doc): `==> a.log <==`, or a line that is only a log file's
/// name, as a Markdown heading (`### a.log`), in a code span or bold (`` `a.txt` ``, `**a.log**`), possibly
/// followed by a colon.
pub fn header(line: &str) -> Option<&str> {
    // Blanks trimmed byte by byte (every framed line is asked this; `trim_matches` decodes characters).
    let b = line.as_bytes();
    let start = b
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| c != b' ' && c != b'\t')
        .map_or(start, |i| i + 1);
    let line = &line[start..end];
    if let Some(inner) = line
        .strip_prefix("==> ")
        .and_then(|l| l.strip_suffix(" <=="))
    {
        let name = inner.trim();
        return (!name.is_empty()).then_some(name);
    }
    // The cheap tests first: a name is short and has a dot, and after the heading marks and blanks before it
    // the line holds nothing but the name's bytes and the marks around it (`:` and the `` ` ``, `*`, `_` of a
    // code span or bold). A byte of any other kind would lie inside the name, which every log line's first
    // space or `=` ends at once.
    if line.len() > 512
        || !line
            .trim_start_matches(['#', ' ', '\t'])
            .bytes()
            .all(|b| path_byte(b) || matches!(b, b':' | b'`' | b'*'))
        || memchr::memchr(b'.', line.as_bytes()).is_none()
    {
        return None;
    }
    let name = line
        .trim_start_matches('#')
        .trim_start_matches([' ', '\t'])
        .trim_end_matches(':')
        .trim_matches(['`', '*', '_'])
        .trim_end_matches(':');
    is_log_name(name.as_bytes()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of corpus 703 (`sample-logs/703-md-ollama-03213-deepseek-coder-v2-3loads-buffer-grep.log`, lines
    /// 3 and 4), the output of `grep 'buffer size'` over its three files with the file names cut by the author.
    const BUFFER_703: &str = "load_tensors:        CUDA0 model buffer size = 11160.99 MiB";
    const KV_703: &str = "llama_kv_cache:      CUDA0 KV buffer size =   540.00 MiB";

    #[test]
    fn grep_prefixes_of_matching_and_context_lines() {
        // What grep prints for these lines over the paste's files, with and without -n, -A/-B/-C and -r.
        let cases = [
            (
                format!("raw-log-ctx2048.txt:{BUFFER_703}"),
                "raw-log-ctx2048.txt",
                BUFFER_703,
            ),
            (
                format!("raw-log-ctx2048.txt:12:{BUFFER_703}"),
                "raw-log-ctx2048.txt",
                BUFFER_703,
            ),
            (
                format!("raw-log-ctx4096.txt-{KV_703}"),
                "raw-log-ctx4096.txt",
                KV_703,
            ),
            (
                format!("raw-log-ctx4096.txt-13-{KV_703}"),
                "raw-log-ctx4096.txt",
                KV_703,
            ),
            (
                format!("logs/ctx8192/server.log:{KV_703}"),
                "logs/ctx8192/server.log",
                KV_703,
            ),
            (format!("server.log.1:{KV_703}"), "server.log.1", KV_703),
            (format!("SERVER.LOG:{KV_703}"), "SERVER.LOG", KV_703),
            (
                format!(r"C:\Users\me\ollama\server-1.log:{KV_703}"),
                r"C:\Users\me\ollama\server-1.log",
                KV_703,
            ),
            (
                "run.out-  Device 0: NVIDIA GeForce RTX 3090".to_string(),
                "run.out",
                "  Device 0: NVIDIA GeForce RTX 3090",
            ),
            ("server.log-".to_string(), "server.log", ""),
            ("server.log:".to_string(), "server.log", ""),
        ];
        for (line, name, rest) in &cases {
            assert_eq!(grep_prefix(line), Some((*name, *rest)), "{line}");
        }
    }

    #[test]
    fn log_lines_are_not_grep_prefixes() {
        // corpus 703:3, 707:1 (prefix stripped), 001:47, 044:2, 016:2 (journald), 018 (compose), a docker
        // timestamp, a shell prompt, a Go std log line (`routes.go:1060:`), a CUDA error (`ggml-cuda.cu:75:`),
        // a model path.
        for line in [
            BUFFER_703,
            "load_tensors: offloading output layer to GPU",
            "llm_load_print_meta: format           = GGUF V3 (latest)",
            "0.00.163.006 I cmn  common_param: device_info:",
            "Aug 22 17:36:22 amobile ollama[30907]: time=2025-08-22T17:36:22.027-04:00 level=INFO",
            "ollama  | time=2025-01-16T04:29:50.395Z level=WARN",
            "2025-01-16T04:29:50.741234567Z load_tensors: x",
            "user@box:~$ grep buffer server.log",
            "2024/06/27 19:00:53 routes.go:1060: INFO server config",
            "/src/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error",
            "/models/qwen3.gguf: invalid magic",
            "time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg=\"model weights\"",
            ".log: x",
            "server.logs: x",
            "catalog-x: y",
        ] {
            assert_eq!(grep_prefix(line), None, "{line}");
        }
    }

    #[test]
    fn every_spelling_of_an_extension_is_a_name_literal() {
        let literals = name_literals();
        assert_eq!(literals.len(), 32);
        for name in ["a.log", "A.LOG", "b.Txt", "c.oUt", "d.ERR", "server.log.1"] {
            assert!(is_log_name(name.as_bytes()), "{name}");
            assert!(literals.iter().any(|l| name.contains(l.as_str())), "{name}");
        }
    }

    #[test]
    fn headers_naming_a_file() {
        // corpus 703:1, 11, 21, then the other shapes of the module doc.
        for (line, name) in [
            ("`raw-log-ctx2048.txt`", "raw-log-ctx2048.txt"),
            ("`raw-log-ctx4096.txt`", "raw-log-ctx4096.txt"),
            ("`raw-log-ctx8192.txt`", "raw-log-ctx8192.txt"),
            (
                "==> /var/log/ollama/server.log <==",
                "/var/log/ollama/server.log",
            ),
            ("==> llama-server.stderr <==", "llama-server.stderr"),
            ("### server-1.log", "server-1.log"),
            ("**server.log**:", "server.log"),
            ("`server.log`:", "server.log"),
            ("server.log", "server.log"),
        ] {
            assert_eq!(header(line), Some(name), "{line}");
        }
        for line in [
            "```",
            "## Logs from server.log",
            "load_tensors: offloaded 43/43 layers to GPU",
            "`torch_dtype` is deprecated! Use `dtype` instead!",
            "# leg1-ubatch-512 : argv: llama-server --host 127.0.0.1",
            "....................................................................................................",
            "`model.gguf`",
            "==>  <==",
        ] {
            assert_eq!(header(line), None, "{line}");
        }
    }

    /// A dot that starts the token or a path's last part names no file; a line of progress dots (llama.cpp's
    /// loading dots, the journald noise of `benches/gen.py`) is no name and no grep prefix however long.
    #[test]
    fn an_extension_needs_a_name_before_it() {
        for name in [".log", "logs/.log", r"C:\logs\.txt", "a/.log.1"] {
            assert!(!is_log_name(name.as_bytes()), "{name}");
        }
        for name in ["a/b.log", r"C:\logs\x.txt", "a/b.log.1", "..log"] {
            assert!(is_log_name(name.as_bytes()), "{name}");
        }
        let dots = ".".repeat(100_000);
        assert_eq!(grep_prefix(&format!("{dots}:x")), None);
        let named = format!("{dots}.log");
        assert_eq!(
            grep_prefix(&format!("{named}-x")),
            Some((named.as_str(), "x"))
        );
        assert_eq!(header(&dots), None);
    }
}
