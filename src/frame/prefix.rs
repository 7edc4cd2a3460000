//! Removing what log collectors put in front of a log line: journald, docker compose, `docker logs
//! --timestamps`, kubectl `--prefix`, Markdown quote markers, SSE `data:` framing, llama-server's `-lv 4`
//! elapsed-time prefix, ANSI colour codes and indentation.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// `Oct 29 10:00:00 host ollama[123]: ` (month names in any locale, including `de des. 03` in Catalan) or a
/// bare `ollama[1773]: `; the identifier can be a container id.
static JOURNALD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?:\S+\s+){1,4}?\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+\S+\s+)?[^\s\[\]]+\[\d+\]:(?:\s|$)",
    )
    .unwrap()
});

/// `docker logs --timestamps`: RFC 3339 with nanoseconds, then one space.
static DOCKER_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) ").unwrap()
});

/// docker compose: `ollama-1  | `, `ollama  | `.
static COMPOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][\w.-]*\s+\| ").unwrap());

/// llama-server `-lv 4`: `0.00.163.006 I ` then an optional component tag (`cmn  `, `srv  `).
static ELAPSED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+\.\d{2}\.\d{3}\.\d{3} [A-Z] (?:[a-z]{2,5}  +)?").unwrap());

/// ANSI escape sequences (colours, cursor movement).
static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07").unwrap());

/// What was in front of a line, so the joiner can tell an indented continuation from a record.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stripped {
    /// The line was indented (after any collector prefix).
    pub indented: bool,
}

/// Remove ANSI escape sequences.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, line.as_bytes()).is_some() {
        ANSI.replace_all(line, "")
    } else {
        Cow::Borrowed(line)
    }
}

/// Strip every collector prefix from a line (in any nesting order), returning the rest.
pub fn strip_prefixes(mut line: &str) -> (&str, Stripped) {
    let mut info = Stripped::default();
    // Each pass removes one prefix; ten is more nesting than any real capture has.
    for _ in 0..10 {
        let before = line.len();
        let blanks = line
            .bytes()
            .take_while(|&b| b == b' ' || b == b'\t')
            .count();
        if blanks > 0 {
            info.indented = true;
            line = &line[blanks..];
        }
        if let Some(rest) = line.strip_prefix('>') {
            // Markdown quote marker from a pasted log (`> ` or a bare `>`).
            if rest.is_empty() || rest.starts_with(' ') || rest.starts_with('>') {
                line = rest.strip_prefix(' ').unwrap_or(rest);
                info.indented = false;
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("data: ") {
            line = rest;
            continue;
        }
        if line.starts_with('[') {
            let b = line.as_bytes();
            if let Some(end) = memchr::memchr_iter(b']', b).find(|&i| b.get(i + 1) == Some(&b' ')) {
                let inner = &line[1..end];
                // `[33899] ` (a router's pid) or kubectl's `[pod/name/container] `.
                if inner.bytes().all(|b| b.is_ascii_digit()) && !inner.is_empty()
                    || inner.starts_with("pod/") && inner.matches('/').count() >= 2
                {
                    line = &line[end + 2..];
                    continue;
                }
            }
        }
        let first = line.as_bytes().first().copied().unwrap_or(0);
        if first.is_ascii_digit() {
            if let Some(m) = DOCKER_TIMESTAMP.find(line) {
                line = &line[m.end()..];
                continue;
            }
            if let Some(m) = ELAPSED.find(line) {
                line = &line[m.end()..];
                continue;
            }
        }
        if first.is_ascii_alphanumeric() {
            // Cheap checks first: journald needs "]: " and compose needs " | " near the start.
            let head = &line[..floor_char_boundary(line, 160)];
            if let Some(end) = plain_journald(line.as_bytes(), head.len()) {
                // What the journald regex would match, found without it (the usual `journalctl` layout).
                line = &line[end..];
                info.indented = false;
                continue;
            }
            let (bracket_colon, spaced_bar) = hints(head.as_bytes());
            if bracket_colon {
                if let Some(m) = JOURNALD.find(line) {
                    line = &line[m.end()..];
                    info.indented = false;
                    continue;
                }
            }
            if spaced_bar && !line.starts_with("[GIN]") {
                if let Some(m) = COMPOSE.find(line) {
                    line = &line[m.end()..];
                    info.indented = false;
                    continue;
                }
            }
        }
        if line.len() == before {
            break;
        }
    }
    // llama.cpp progress dots printed without a newline glue onto the next line.
    if line.starts_with("...") {
        let rest = line.trim_start_matches('.');
        if rest
            .as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic())
        {
            line = rest;
        }
    }
    (line, info)
}

/// Whether `b` contains `]:` (a journald prefix may end there) and ` | ` (a compose prefix may), in one pass.
fn hints(b: &[u8]) -> (bool, bool) {
    let (mut bracket_colon, mut spaced_bar) = (false, false);
    for i in memchr::memchr2_iter(b']', b'|', b) {
        if b[i] == b']' {
            bracket_colon |= b.get(i + 1) == Some(&b':');
        } else {
            spaced_bar |= i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' ');
        }
        if bracket_colon && spaced_bar {
            break;
        }
    }
    (bracket_colon, spaced_bar)
}

/// The length of a journald prefix in the layout `journalctl` prints by default, `Nov  1 06:05:00 host
/// ident[1234]: ` (English month abbreviation, ASCII host and identifier, no fractional seconds), or `None`
/// for anything else, which then goes to the [`JOURNALD`] regex. For every line this accepts, the regex
/// matches the same span: its lazy `{1,4}?` cannot stop after the month (a space follows the day, not a
/// colon), so it takes month and day as its two leading tokens, and the rest of the pattern is forced. Like the
/// regex path, it needs the `]:` within the first `head` bytes.
fn plain_journald(b: &[u8], head: usize) -> Option<usize> {
    let graphic = |c: &u8| (0x21..=0x7e).contains(c);
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    // `Nov ` then `30 ` or ` 1 `.
    if !(b.len() > 16 && b[..3].iter().all(u8::is_ascii_alphabetic) && at(3, b' ')) {
        return None;
    }
    if !((digit(4) || at(4, b' ')) && digit(5) && at(6, b' ')) {
        return None;
    }
    // `06:05:00 `
    if !(digit(7) && digit(8) && at(9, b':') && digit(10) && digit(11) && at(12, b':'))
        || !(digit(13) && digit(14) && at(15, b' '))
    {
        return None;
    }
    // `host `
    let mut i = 16;
    let host = b[i..].iter().take_while(|c| graphic(c)).count();
    if host == 0 || !at(i + host, b' ') {
        return None;
    }
    i += host + 1;
    // `ident[1234]:` then a space or the end.
    let ident = b[i..]
        .iter()
        .take_while(|&&c| graphic(&c) && c != b'[' && c != b']')
        .count();
    if ident == 0 || !at(i + ident, b'[') {
        return None;
    }
    i += ident + 1;
    let pid = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if pid == 0 || !at(i + pid, b']') || !at(i + pid + 1, b':') {
        return None;
    }
    i += pid + 2;
    if i > head {
        return None;
    }
    match b.get(i) {
        None => Some(i),
        Some(b' ') => Some(i + 1),
        Some(_) => None,
    }
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(line: &str) -> &str {
        strip_prefixes(line).0
    }

    #[test]
    fn journald_in_any_locale() {
        // corpus 025, 032 (Catalan), 026 (container id as identifier), 030 (no date).
        assert_eq!(
            strip("Feb 10 17:39:08 debian ollama[1741]: llm_load_tensors: offloaded 37/49 layers to GPU"),
            "llm_load_tensors: offloaded 37/49 layers to GPU"
        );
        assert_eq!(
            strip("de des. 03 11:10:07 PC127 ollama[43993]: ggml_cuda_init: found 2 CUDA devices:"),
            "ggml_cuda_init: found 2 CUDA devices:"
        );
        assert_eq!(
            strip("Sep 30 17:45:54 dying-love 6f929011afab[1234]: llama_kv_cache_init:      CUDA0 KV buffer size = 12800.00 MiB"),
            "llama_kv_cache_init:      CUDA0 KV buffer size = 12800.00 MiB"
        );
        assert_eq!(
            strip("ollama[1773]: time=2024-11-10T21:32:56.205+08:00 level=WARN"),
            "time=2024-11-10T21:32:56.205+08:00 level=WARN"
        );
    }

    #[test]
    fn journald_prefix_keeps_indentation_of_the_payload() {
        let (rest, info) = strip_prefixes("de des. 03 11:10:07 PC127 ollama[43993]:   Device 0: Quadro P2200, compute capability 6.1");
        assert_eq!(rest, "Device 0: Quadro P2200, compute capability 6.1");
        assert!(info.indented);
    }

    #[test]
    fn compose_with_and_without_colour() {
        // corpus 018; colour codes as docker compose prints them on a TTY.
        assert_eq!(
            strip("ollama  | time=2025-01-16T04:29:50.395Z level=WARN"),
            "time=2025-01-16T04:29:50.395Z level=WARN"
        );
        let coloured =
            strip_ansi("\x1b[36mollama-1  |\x1b[0m llm_load_tensors: offloaded 1/62 layers to GPU");
        assert_eq!(
            strip(&coloured),
            "llm_load_tensors: offloaded 1/62 layers to GPU"
        );
    }

    #[test]
    fn gin_lines_are_not_compose_lines() {
        let gin =
            "[GIN] 2025/07/24 - 18:29:06 | 200 |            0s |       127.0.0.1 | HEAD     \"/\"";
        assert_eq!(strip(gin), gin);
    }

    #[test]
    fn docker_timestamps_kubectl_and_quotes() {
        assert_eq!(
            strip("2025-01-16T04:29:50.741234567Z load_tensors: x"),
            "load_tensors: x"
        );
        assert_eq!(
            strip("[pod/ollama-0/ollama] load_tensors: x"),
            "load_tensors: x"
        );
        assert_eq!(
            strip("> llama_kv_cache_init:      Metal KV buffer size =  4608.00 MiB"),
            "llama_kv_cache_init:      Metal KV buffer size =  4608.00 MiB"
        );
    }

    #[test]
    fn llama_server_elapsed_and_sse_prefixes() {
        // corpus 044, peer vectors 316 and 317.
        assert_eq!(
            strip("0.00.874.514 I common_params_fit_impl: projected to use 6007 MiB"),
            "common_params_fit_impl: projected to use 6007 MiB"
        );
        assert_eq!(
            strip("0.00.165.102 I srv  llama_server: n_parallel is set to auto"),
            "llama_server: n_parallel is set to auto"
        );
        assert_eq!(
            strip("data: [33899] 0.14.275.751 I load_tensors:   CPU_Mapped model buffer size =  1288.28 MiB"),
            "load_tensors:   CPU_Mapped model buffer size =  1288.28 MiB"
        );
        assert_eq!(strip("[44479] 0.12.132.473 I load_tensors:        ROCm0 model buffer size = 21297.21 MiB"), "load_tensors:        ROCm0 model buffer size = 21297.21 MiB");
    }

    #[test]
    fn plain_journald_agrees_with_the_regex() {
        let mut lines = vec![
            "Nov  1 06:00:01 gpuhost ollama[1234]: [GIN] 2025/11/01 - 06:00:01 | 200 |",
            "Nov 30 06:05:00 host ollama[1234]: time=2025-11-30T06:05:00.000Z level=INFO",
            "Nov 30 06:05:00 host ollama[1234]:",
            "Nov 30 06:05:00 host ollama[1234]:   Device 0: Tesla T4",
            "Nov 30 06:05:00 host ollama[1234]:x",
            "Nov 30 06:05:00 host ollama[1234]:\tx",
            "Nov 30 06:05:00.123 host ollama[1234]: x",
            "Nov 30 06:05:00 host kernel: NVRM: loading",
            "Nov 30 06:05:00 host  ollama[1234]: x",
            "Nov 30 06:05:00 host olla]ma[1234]: x",
            "Nov 30 06:05:00 host ollama[]: x",
            "Nov 3 06:05:00 host ollama[1]: x",
            "Sep 30 17:45:54 dying-love 6f929011afab[1234]: llama_kv_cache_init: x",
        ];
        let long = format!("Nov 30 06:05:00 {} ollama[1234]: x", "h".repeat(140));
        lines.push(&long);
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-logs");
        let texts: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            // The tests' answer files (`<sample>.expect.toml`) are not log lines.
            .filter(|p| !p.to_string_lossy().ends_with(".expect.toml"))
            .map(|p| std::fs::read(p).unwrap())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        lines.extend(texts.iter().flat_map(|t| t.lines()));
        for line in lines {
            let head = floor_char_boundary(line, 160);
            if let Some(end) = plain_journald(line.as_bytes(), head) {
                assert_eq!(JOURNALD.find(line).map(|m| m.end()), Some(end), "{line}");
            }
        }
        assert!(plain_journald(b"Nov  1 06:00:01 gpuhost ollama[1234]: x", 160).is_some());
    }

    #[test]
    fn tabs_and_progress_dots() {
        // peer vector 311 indents with two tabs.
        assert_eq!(
            strip("\t\ttime=2025-07-01T19:36:13.315Z level=INFO"),
            "time=2025-07-01T19:36:13.315Z level=INFO"
        );
        assert_eq!(
            strip(".......llama_new_context_with_model: n_ctx = 2048"),
            "llama_new_context_with_model: n_ctx = 2048"
        );
    }
}
