//! The catalogue of paste transforms: the ways a log reaches vramdiff other than as the file the server wrote
//! (a collector's prefix, a container runtime's envelope, a terminal's wrap, an editor's or a forum's
//! markup, another encoding), each as a function from the log's text to the bytes a user would paste.
//!
//! `tests/paste_invariance.rs` runs every transform, alone and in compositions, over every real log bundled
//! in the repository and checks that the facts do not change; the tests here check each transform's shape
//! on a real line of the corpus and that vramdiff reads the line back through it. The shapes are the tools'
//! own (journalctl's output modes, Docker's `json-file` driver, the CRI log format of containerd and CRI-O,
//! `kubectl logs --timestamps --prefix`, GitHub Actions' raw step log); `docs/log-formats.md` §6 lists them.
//!
//! A composition nests the way a real paste does: at most one collector writes the lines (journald, a
//! container runtime…), other processes' lines land between them, then a terminal or an editor changes
//! them (colours, tabs, trailing blanks, a hard wrap), then the paste's markup goes around them (line
//! numbers, a Markdown quote or fence, a shell prompt), and last the bytes are encoded (CRLF, UTF-16).
//! [`Stage`] is that order; [`compose`] applies transforms in it.

/// Where a transform acts in a paste's history (see the module doc); a composition applies them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// What wrote the lines down: journald, syslog, a container runtime, a CI runner.
    Collector,
    /// Other processes' lines between the server's.
    Interleave,
    /// What a terminal or an editor did to the lines (colours, tabs, blanks, a hard wrap).
    Terminal,
    /// The paste's markup around the lines (numbers, a quote, a fence, a prompt).
    Markup,
    /// How the bytes were encoded (CRLF, UTF-16).
    Encoding,
}

/// One way of pasting a log: a name for reports, its stage, and the function.
#[derive(Clone, Copy)]
pub struct Transform {
    pub name: &'static str,
    pub stage: Stage,
    /// The log's text (and a seed for what the paste varies: a locale, a position) to the pasted text. An
    /// encoding transform returns its bytes as a string of `char`s each holding one byte (see [`bytes_of`]).
    pub apply: fn(&str, u64) -> String,
}

impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Month abbreviations as glibc's locales print them with `%b` (`abmon` in each locale's `LC_TIME`), for
/// December, which journalctl's `short` and `short-precise` modes and classic syslog put first on each line:
/// Latin, Cyrillic, Greek, Hebrew, Arabic, Thai and CJK scripts, one- and two-word forms, with and without a
/// trailing dot.
pub const DECEMBER: &[(&str, &str)] = &[
    ("C", "Dec"),
    ("de_DE", "Dez"),
    ("fr_FR", "déc."),
    ("es_ES", "dic"),
    ("it_IT", "dic"),
    ("pt_BR", "dez"),
    ("nl_NL", "dec"),
    ("pl_PL", "gru"),
    ("cs_CZ", "pro"),
    ("hu_HU", "dec."),
    ("tr_TR", "Ara"),
    ("ca_ES", "de des."),
    ("vi_VN", "Thg 12"),
    ("ru_RU", "дек"),
    ("uk_UA", "гру"),
    ("bg_BG", "дек"),
    ("el_GR", "Δεκ"),
    ("he_IL", "דצמ"),
    ("ar_EG", "ديس"),
    ("fa_IR", "دسامبر"),
    ("th_TH", "ธ.ค."),
    ("ja_JP", "12月"),
    ("zh_CN", "12月"),
    ("ko_KR", "12월"),
];

/// A small deterministic generator (splitmix64), so a transform's choices follow from its seed alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The log's lines without their terminators (a last line without one included).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
}

/// Every line with `prefix(i)` before it, `\n` after it.
fn each_line(text: &str, mut prefix: impl FnMut(usize) -> String) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (i, line) in lines(text).enumerate() {
        out.push_str(&prefix(i));
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The clock a collector stamps line `i` with: 2026-12-07 03:14:19 plus `i` × 37 ms (a log's lines come in
/// bursts, but every stamp is valid and they never go back).
fn clock(i: usize) -> (u32, u32, u32, u32) {
    let ms = 37 * i as u64;
    let secs = 3 * 3600 + 14 * 60 + 19 + ms / 1000;
    (
        (secs / 3600 % 24) as u32,
        (secs / 60 % 60) as u32,
        (secs % 60) as u32,
        (ms % 1000) as u32,
    )
}

fn journald_short(text: &str, seed: u64) -> String {
    let month = DECEMBER[seed as usize % DECEMBER.len()].1;
    each_line(text, |i| {
        let (h, m, s, _) = clock(i);
        format!("{month} 07 {h:02}:{m:02}:{s:02} gpu-node ollama[2841]: ")
    })
}

fn journald_short_precise(text: &str, seed: u64) -> String {
    let month = DECEMBER[seed as usize % DECEMBER.len()].1;
    each_line(text, |i| {
        let (h, m, s, ms) = clock(i);
        format!("{month} 07 {h:02}:{m:02}:{s:02}.{ms:03}412 gpu-node ollama[2841]: ")
    })
}

/// journalctl `-o short-iso`: `2026-12-07T03:14:19+0000` before systemd 250, `+00:00` since.
fn journald_short_iso(text: &str, seed: u64) -> String {
    let zone = if seed.is_multiple_of(2) {
        "+0000"
    } else {
        "+00:00"
    };
    each_line(text, |i| {
        let (h, m, s, _) = clock(i);
        format!("2026-12-07T{h:02}:{m:02}:{s:02}{zone} gpu-node ollama[2841]: ")
    })
}

/// journalctl `-o short-monotonic`: seconds since boot, in brackets, right-aligned.
fn journald_short_monotonic(text: &str, _seed: u64) -> String {
    each_line(text, |i| {
        let us = 84_213_000_000u64 + 37_000 * i as u64;
        format!(
            "[{:>5}.{:06}] gpu-node ollama[2841]: ",
            us / 1_000_000,
            us % 1_000_000
        )
    })
}

/// journalctl `-o cat`: the message alone, which is the log as the server printed it.
fn journald_cat(text: &str, _seed: u64) -> String {
    each_line(text, |_| String::new())
}

/// Classic syslog (`/var/log/syslog` with the traditional template): the day padded with a space.
fn syslog_classic(text: &str, _seed: u64) -> String {
    each_line(text, |i| {
        let (h, m, s, _) = clock(i);
        format!("Dec  7 {h:02}:{m:02}:{s:02} gpu-node ollama[2841]: ")
    })
}

/// rsyslog's high-precision template (Debian 12, Ubuntu 23.10 and later): RFC 3339 with microseconds.
fn syslog_rfc3339(text: &str, _seed: u64) -> String {
    each_line(text, |i| {
        let (h, m, s, ms) = clock(i);
        format!("2026-12-07T{h:02}:{m:02}:{s:02}.{ms:03}412+00:00 gpu-node ollama[2841]: ")
    })
}

fn rfc3339_nanos(i: usize) -> String {
    let (h, m, s, ms) = clock(i);
    format!("2026-12-07T{h:02}:{m:02}:{s:02}.{ms:03}418113Z")
}

/// `docker logs -t`: RFC 3339 with nanoseconds and a space.
fn docker_timestamps(text: &str, _seed: u64) -> String {
    each_line(text, |i| format!("{} ", rfc3339_nanos(i)))
}

/// The bytes a line holds as a JSON string's content (what Go's `encoding/json` writes: `"`, `\`, control
/// characters and, with HTML escaping on, `<`, `>`, `&` escaped).
fn json_escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Pieces of at most `max` bytes (cut on character boundaries), as a runtime splits a long line.
fn pieces(line: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.push(rest);
    out
}

/// Docker's `json-file` driver (`/var/lib/docker/containers/<id>/<id>-json.log`): one JSON object per line,
/// the line with its `\n` in `log`; a line longer than the driver's buffer is split, every piece but the
/// last without `\n`. Docker splits at 16 KiB; `max` smaller shows the joining on the corpus's lines.
fn docker_json_file_split(text: &str, max: usize) -> String {
    split_lines(text, max, |i, part, last| {
        let newline = if last { "\\n" } else { "" };
        format!(
            "{{\"log\":\"{}{newline}\",\"stream\":\"stderr\",\"time\":\"{}\"}}\n",
            json_escape(part),
            rfc3339_nanos(i)
        )
    })
}

/// Every line of `text` cut in pieces of at most `max` bytes, each written by `piece(line index, piece,
/// whether it is the line's last)`: how a container runtime stores a line longer than its buffer.
fn split_lines(text: &str, max: usize, piece: impl Fn(usize, &str, bool) -> String) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (i, line) in lines(text).enumerate() {
        let parts = pieces(line, max);
        let last = parts.len() - 1;
        for (k, part) in parts.into_iter().enumerate() {
            out.push_str(&piece(i, part, k == last));
        }
    }
    out
}

fn docker_json_file(text: &str, _seed: u64) -> String {
    docker_json_file_split(text, 16 * 1024)
}

fn docker_json_file_partial(text: &str, _seed: u64) -> String {
    docker_json_file_split(text, 100)
}

/// The CRI log format that containerd and CRI-O write under `/var/log/pods/` (`kubectl logs` reads them):
/// time, stream, `F` for a full line or `P` for a partial one, the text. A line longer than the runtime's
/// buffer (16 KiB by default) is written as `P` pieces and a last `F` piece, which a reader joins with
/// nothing between them.
fn cri_split(text: &str, max: usize) -> String {
    split_lines(text, max, |i, part, last| {
        let tag = if last { 'F' } else { 'P' };
        format!("{} stderr {tag} {part}\n", rfc3339_nanos(i))
    })
}

fn cri(text: &str, _seed: u64) -> String {
    cri_split(text, 16 * 1024)
}

fn cri_partial(text: &str, _seed: u64) -> String {
    cri_split(text, 100)
}

/// `docker compose logs`: the service and replica, padded, then ` | `.
fn docker_compose(text: &str, _seed: u64) -> String {
    each_line(text, |_| "ollama-1  | ".to_string())
}

/// `kubectl logs --timestamps --prefix`: `[pod/<pod>/<container>] ` then the runtime's RFC 3339 time.
fn kubectl(text: &str, _seed: u64) -> String {
    each_line(text, |i| {
        format!("[pod/ollama-7d9f8c6b5-x2kqp/ollama] {} ", rfc3339_nanos(i))
    })
}

/// A GitHub Actions step log as downloaded: every line stamped (seven decimals), the step's command in a
/// `##[group]` … `##[endgroup]` block before the output.
fn github_actions(text: &str, _seed: u64) -> String {
    let stamp = |i: usize| {
        let (h, m, s, ms) = clock(i);
        format!("2026-12-07T{h:02}:{m:02}:{s:02}.{ms:03}4411Z ")
    };
    let mut out = String::new();
    out.push_str(&format!("{}##[group]Run cat server.log\n", stamp(0)));
    out.push_str(&format!("{}cat server.log\n", stamp(0)));
    out.push_str(&format!("{}shell: /usr/bin/bash -e {{0}}\n", stamp(0)));
    out.push_str(&format!("{}##[endgroup]\n", stamp(0)));
    out.push_str(&each_line(text, stamp));
    out
}

/// Lines other processes printed, as they land between a server's lines in a journal or a terminal.
pub const OTHER_PROCESSES: &[&str] = &[
    "kernel: NVRM: GPU at PCI:0000:01:00: GPU-5b1c9e7a-1f0d-4a55-9b8c-0d3f2e6a7b41",
    "systemd[1]: Started session-41.scope - Session 41 of User ubuntu.",
    "sshd[90211]: Accepted publickey for ubuntu from 10.0.0.7 port 51234 ssh2",
    "dbus-daemon[812]: [system] Successfully activated service 'org.freedesktop.nm_dispatcher'",
    "containerd[1032]: level=info msg=\"cleaning up dead shim\" namespace=moby",
];

/// Other processes' lines between the log's records (never inside one: a record printed in one write is
/// never split by another process's line; where a record begins is what the framer makes of the original),
/// nor inside what a tool printed in one go (an nvidia-smi table pasted into the log, from its date line on:
/// no other line before a row or border, `|` or `+-`). In a collector's output every line carries the
/// collector's prefix, other processes' lines too: where the log's lines have one, the other line gets the
/// one the record after it begins with ([`collector_prefix`]).
fn interleave(text: &str, seed: u64) -> String {
    let starts = record_starts(text);
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(text.len() + 4096);
    for (i, line) in lines(text).enumerate() {
        let in_table = |l: &str| {
            let l = l.trim_start();
            l.starts_with('|') || l.starts_with("+-")
        };
        let between = !in_table(line);
        if between && starts.contains(&(i as u64 + 1)) && rng.below(4) == 0 {
            let other = OTHER_PROCESSES[rng.below(OTHER_PROCESSES.len())];
            out.push_str(&collector_prefix(line, other));
            out.push_str(other);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The prefix a collector that wrote `line` (journald, a container runtime, compose…) writes before `other`,
/// another process's line in the same output: the shortest start of `line`, up to a blank, that the framer
/// strips from `other` as it strips `other`'s own prefix (journald's time and host before `systemd[1]: `, its
/// whole prefix before `kernel: `); empty when `line` has no collector's prefix.
fn collector_prefix(line: &str, other: &str) -> String {
    use vramdiff::frame::prefix::strip_prefixes;
    let (_, written) = strip_prefixes(line);
    if written.collector.is_none() {
        return String::new();
    }
    let want = strip_prefixes(other).0;
    let prefix = line
        .match_indices(' ')
        .map(|(i, _)| &line[..=i])
        .find(|prefix| {
            let other = format!("{prefix}{other}");
            let (rest, stripped) = strip_prefixes(&other);
            // A container runtime's envelope is on every line it stores.
            rest == want && stripped.envelope_end.is_some() == written.envelope_end.is_some()
        })
        .unwrap_or_default();
    // A container runtime writes the other line whole (`F`), whatever the piece after it is.
    prefix
        .replace(" stdout P ", " stdout F ")
        .replace(" stderr P ", " stderr F ")
}

/// The physical lines (1-based) on which the framer starts a logical line of `text`.
fn record_starts(text: &str) -> std::collections::BTreeSet<u64> {
    let mut framer = vramdiff::frame::Framer::new();
    let mut starts = std::collections::BTreeSet::new();
    for (i, line) in lines(text).enumerate() {
        framer.push(i as u64 + 1, line.as_bytes(), |n, _| {
            starts.insert(n);
        });
    }
    framer.finish(|n, _| {
        starts.insert(n);
    });
    starts
}

/// Colours as a terminal receives them (llama.cpp's `--log-colors`, a coloured `journalctl`): every
/// non-empty line in a colour, reset at its end.
fn ansi_raw(text: &str, seed: u64) -> String {
    colour(text, seed, "\x1b")
}

/// The same colours as a terminal shows them when copied without the escape byte: caret form, `^[[32m`.
fn ansi_caret(text: &str, seed: u64) -> String {
    colour(text, seed, "^[")
}

fn colour(text: &str, seed: u64, esc: &str) -> String {
    const COLOURS: [&str; 4] = ["[32m", "[0;33m", "[1;31m", "[36m"];
    let mut out = String::with_capacity(text.len() * 2);
    for (i, line) in lines(text).enumerate() {
        if !line.is_empty() {
            let c = COLOURS[(seed as usize + i) % COLOURS.len()];
            out.push_str(&format!("{esc}{c}{line}{esc}[0m"));
        }
        out.push('\n');
    }
    out
}

/// The indentation as tabs, as a terminal copy or `unexpand` gives it: every leading run of spaces becomes
/// one tab per 8 columns, the rest spaces; an indented line keeps being indented.
fn tabs(text: &str, _seed: u64) -> String {
    let mut out = String::with_capacity(text.len());
    for line in lines(text) {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        if spaces > 0 {
            out.push('\t');
            for _ in 0..spaces.saturating_sub(8) % 8 {
                out.push(' ');
            }
        }
        out.push_str(&line[spaces..]);
        out.push('\n');
    }
    out
}

/// Trailing blanks removed (an editor's "trim trailing whitespace", a forum's renderer).
fn trim_trailing(text: &str, _seed: u64) -> String {
    each_line(text, |_| String::new())
        .lines()
        .map(|l| l.trim_end_matches([' ', '\t']).to_string() + "\n")
        .collect()
}

/// A terminal `width` columns wide: every longer line cut every `width` characters. A raw escape sequence
/// (a colour) takes no column and is never cut, as on a terminal.
pub fn hard_wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width * 2);
    for line in lines(text) {
        let mut columns = 0;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                // `ESC [ … letter`: copied whole, in no column.
                out.push(c);
                for e in chars.by_ref() {
                    out.push(e);
                    if e.is_ascii_alphabetic() {
                        break;
                    }
                }
                continue;
            }
            if columns == width {
                out.push('\n');
                columns = 0;
            }
            out.push(c);
            columns += 1;
        }
        out.push('\n');
    }
    out
}

fn wrap_80(text: &str, _seed: u64) -> String {
    hard_wrap(text, 80)
}
fn wrap_100(text: &str, _seed: u64) -> String {
    hard_wrap(text, 100)
}
fn wrap_120(text: &str, _seed: u64) -> String {
    hard_wrap(text, 120)
}
fn wrap_160(text: &str, _seed: u64) -> String {
    hard_wrap(text, 160)
}

/// Line numbers as an editor or a code viewer copies them: right-aligned, then ` | `.
fn numbered_bar(text: &str, _seed: u64) -> String {
    let width = lines(text).count().to_string().len().max(3);
    each_line(text, |i| format!("{:>width$} | ", i + 1))
}

/// Line numbers as `grep -n` (or `cat -n | …`, `nl -s:`) prints them for one file: `12:`.
fn numbered_colon(text: &str, _seed: u64) -> String {
    each_line(text, |i| format!("{}:", i + 1))
}

/// A Markdown quote (`> ` before every line, a bare `>` on an empty one).
fn markdown_quote(text: &str, _seed: u64) -> String {
    let mut out = String::with_capacity(text.len() + 2 * text.lines().count());
    for line in lines(text) {
        out.push_str(if line.is_empty() { ">" } else { "> " });
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A Markdown fence with a sentence before it and after it, as in an issue.
fn markdown_fence(text: &str, seed: u64) -> String {
    let info = ["", "log", "text", "shell"][seed as usize % 4];
    format!(
        "Here is what the server printed:\n\n```{info}\n{}```\n\nThanks for looking!\n",
        each_line(text, |_| String::new())
    )
}

/// A shell session: the prompt and the command that printed the log before it, a bare prompt after it.
fn shell_prompt(text: &str, _seed: u64) -> String {
    format!(
        "$ cat ~/.ollama/logs/server.log\n{}$ \n",
        each_line(text, |_| String::new())
    )
}

/// Windows line ends.
fn crlf(text: &str, _seed: u64) -> String {
    each_line(text, |_| String::new()).replace('\n', "\r\n")
}

/// UTF-16 little-endian with a byte-order mark, as PowerShell 5's `>` writes a file (`Out-File`'s default).
fn utf16le(text: &str, _seed: u64) -> String {
    let mut bytes = vec![0xff, 0xfe];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    bytes_as_string(&bytes)
}

/// UTF-16 big-endian with a byte-order mark.
fn utf16be(text: &str, _seed: u64) -> String {
    let mut bytes = vec![0xfe, 0xff];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_be_bytes());
    }
    bytes_as_string(&bytes)
}

/// Bytes carried through the `String`-typed catalogue: each byte as the `char` of the same value, with a
/// marker first so [`bytes_of`] knows to undo it.
fn bytes_as_string(bytes: &[u8]) -> String {
    std::iter::once(BYTES_MARK)
        .chain(bytes.iter().map(|&b| char::from(b)))
        .collect()
}

/// Starts the output of an encoding transform (a private-use character no log holds).
const BYTES_MARK: char = '\u{F8FF}';

/// The bytes a transform's output stands for: its UTF-8, or the bytes an encoding transform carried.
pub fn bytes_of(pasted: &str) -> Vec<u8> {
    match pasted.strip_prefix(BYTES_MARK) {
        Some(rest) => rest.chars().map(|c| c as u32 as u8).collect(),
        None => pasted.as_bytes().to_vec(),
    }
}

/// The catalogue, in stage order.
pub const CATALOGUE: &[Transform] = &[
    Transform {
        name: "journald-short",
        stage: Stage::Collector,
        apply: journald_short,
    },
    Transform {
        name: "journald-short-precise",
        stage: Stage::Collector,
        apply: journald_short_precise,
    },
    Transform {
        name: "journald-short-iso",
        stage: Stage::Collector,
        apply: journald_short_iso,
    },
    Transform {
        name: "journald-short-monotonic",
        stage: Stage::Collector,
        apply: journald_short_monotonic,
    },
    Transform {
        name: "journald-cat",
        stage: Stage::Collector,
        apply: journald_cat,
    },
    Transform {
        name: "syslog-classic",
        stage: Stage::Collector,
        apply: syslog_classic,
    },
    Transform {
        name: "syslog-rfc3339",
        stage: Stage::Collector,
        apply: syslog_rfc3339,
    },
    Transform {
        name: "docker-logs-t",
        stage: Stage::Collector,
        apply: docker_timestamps,
    },
    Transform {
        name: "docker-json-file",
        stage: Stage::Collector,
        apply: docker_json_file,
    },
    Transform {
        name: "docker-json-file-partial",
        stage: Stage::Collector,
        apply: docker_json_file_partial,
    },
    Transform {
        name: "cri",
        stage: Stage::Collector,
        apply: cri,
    },
    Transform {
        name: "cri-partial",
        stage: Stage::Collector,
        apply: cri_partial,
    },
    Transform {
        name: "compose",
        stage: Stage::Collector,
        apply: docker_compose,
    },
    Transform {
        name: "kubectl-timestamps-prefix",
        stage: Stage::Collector,
        apply: kubectl,
    },
    Transform {
        name: "github-actions",
        stage: Stage::Collector,
        apply: github_actions,
    },
    Transform {
        name: "other-processes",
        stage: Stage::Interleave,
        apply: interleave,
    },
    Transform {
        name: "ansi-raw",
        stage: Stage::Terminal,
        apply: ansi_raw,
    },
    Transform {
        name: "ansi-caret",
        stage: Stage::Terminal,
        apply: ansi_caret,
    },
    Transform {
        name: "tabs",
        stage: Stage::Terminal,
        apply: tabs,
    },
    Transform {
        name: "trailing-blanks-trimmed",
        stage: Stage::Terminal,
        apply: trim_trailing,
    },
    Transform {
        name: "wrap-80",
        stage: Stage::Terminal,
        apply: wrap_80,
    },
    Transform {
        name: "wrap-100",
        stage: Stage::Terminal,
        apply: wrap_100,
    },
    Transform {
        name: "wrap-120",
        stage: Stage::Terminal,
        apply: wrap_120,
    },
    Transform {
        name: "wrap-160",
        stage: Stage::Terminal,
        apply: wrap_160,
    },
    Transform {
        name: "numbered-bar",
        stage: Stage::Markup,
        apply: numbered_bar,
    },
    Transform {
        name: "numbered-colon",
        stage: Stage::Markup,
        apply: numbered_colon,
    },
    Transform {
        name: "markdown-quote",
        stage: Stage::Markup,
        apply: markdown_quote,
    },
    Transform {
        name: "markdown-fence",
        stage: Stage::Markup,
        apply: markdown_fence,
    },
    Transform {
        name: "shell-prompt",
        stage: Stage::Markup,
        apply: shell_prompt,
    },
    Transform {
        name: "crlf",
        stage: Stage::Encoding,
        apply: crlf,
    },
    Transform {
        name: "utf16le-bom",
        stage: Stage::Encoding,
        apply: utf16le,
    },
    Transform {
        name: "utf16be-bom",
        stage: Stage::Encoding,
        apply: utf16be,
    },
];

/// The transform named `name`.
pub fn transform(name: &str) -> Transform {
    *CATALOGUE
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no transform {name}"))
}

/// `chosen` applied to `text` in stage order (ties keep their order): what a paste that went through each of
/// them gives. Two transforms of the same stage both apply (a tab-indented capture that was also wrapped);
/// a second encoding would encode bytes twice and is skipped, as is a second collector (one program
/// writes the lines down).
pub fn compose(text: &str, chosen: &[Transform], seed: u64) -> Vec<u8> {
    let mut chosen = chosen.to_vec();
    chosen.sort_by_key(|t| t.stage);
    let mut seen_collector = false;
    let mut seen_encoding = false;
    let mut out = text.to_string();
    for (k, t) in chosen.iter().enumerate() {
        let first_of_kind = match t.stage {
            Stage::Collector => !std::mem::replace(&mut seen_collector, true),
            Stage::Encoding => !std::mem::replace(&mut seen_encoding, true),
            _ => true,
        };
        if first_of_kind {
            out = (t.apply)(&out, seed.wrapping_add(k as u64));
        }
    }
    bytes_of(&out)
}

#[cfg(test)]
mod tests {
    //! Each transform on a real line of the corpus: its shape, and the line read back through it.

    use super::*;
    use crate::properties::{analyze, loads_json};

    /// corpus 014:2 (`sample-logs/014-multigpu-2x-split37-0-projector-estimate.log` line 2), Ollama's estimate.
    const OFFLOAD_014: &str = r#"time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload library=cuda layers.requested=49 layers.model=49 layers.offload=37 layers.split=37,0 memory.available="[11.5 GiB 4.6 GiB]" memory.gpu_overhead="0 B" memory.required.full="14.9 GiB" memory.required.partial="11.4 GiB" memory.required.kv="2.0 GiB" memory.required.allocations="[11.4 GiB 0 B]" memory.weights.total="7.5 GiB" memory.weights.repeating="5.6 GiB" memory.weights.nonrepeating="1.9 GiB" memory.graph.full="1.3 GiB" memory.graph.partial="1.3 GiB" projector.weights="806.2 MiB" projector.graph="1.0 GiB""#;

    /// corpus 001 (`sample-logs/001-kaggle-t4-llama31-8b.log` lines 108–112), llama.cpp's buffers.
    const BUFFERS_001: &str = "llm_load_tensors: offloaded 33/33 layers to GPU\nllm_load_tensors:        CPU buffer size =   281.81 MiB\nllm_load_tensors:      CUDA0 buffer size =  4403.49 MiB\n";

    fn estimate_of(bytes: &[u8]) -> serde_json::Value {
        let loads = loads_json(&analyze("line.log", bytes));
        assert_eq!(loads.len(), 1, "{}", String::from_utf8_lossy(bytes));
        loads[0]["estimate"].clone()
    }

    #[test]
    fn every_transform_keeps_the_estimate_line_of_014() {
        let original = format!("{OFFLOAD_014}\n");
        let want = estimate_of(original.as_bytes());
        assert!(!want.is_null());
        for t in CATALOGUE {
            for seed in 0..DECEMBER.len() as u64 {
                let pasted = compose(&original, &[*t], seed);
                assert_eq!(estimate_of(&pasted), want, "{} seed {seed}", t.name);
                if t.stage != Stage::Collector || !t.name.starts_with("journald-short") {
                    break;
                }
            }
        }
    }

    #[test]
    fn every_transform_keeps_the_buffer_lines_of_001() {
        let want = loads_json(&analyze("buffers.log", BUFFERS_001.as_bytes()));
        assert_eq!(want.len(), 1);
        for t in CATALOGUE {
            let pasted = compose(BUFFERS_001, &[*t], 3);
            assert_eq!(
                loads_json(&analyze("buffers.log", &pasted)),
                want,
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn shapes_are_the_tools_own() {
        let line = "llm_load_tensors: offloaded 33/33 layers to GPU\n";
        let first = |name: &str, seed: u64| {
            String::from_utf8(compose(line, &[transform(name)], seed))
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            first("journald-short", 0),
            "Dec 07 03:14:19 gpu-node ollama[2841]: llm_load_tensors: offloaded 33/33 layers to GPU"
        );
        assert!(first("journald-short", 16).starts_with("Δεκ 07 03:14:19 "));
        assert!(first("journald-short-iso", 0).starts_with("2026-12-07T03:14:19+0000 gpu-node "));
        assert!(first("journald-short-monotonic", 0).starts_with("[84213.000000] gpu-node "));
        assert_eq!(
            first("docker-json-file", 0),
            r#"{"log":"llm_load_tensors: offloaded 33/33 layers to GPU\n","stream":"stderr","time":"2026-12-07T03:14:19.000418113Z"}"#
        );
        assert_eq!(
            first("cri", 0),
            "2026-12-07T03:14:19.000418113Z stderr F llm_load_tensors: offloaded 33/33 layers to GPU"
        );
        assert_eq!(
            first("kubectl-timestamps-prefix", 0),
            "[pod/ollama-7d9f8c6b5-x2kqp/ollama] 2026-12-07T03:14:19.000418113Z llm_load_tensors: offloaded 33/33 layers to GPU"
        );
        assert_eq!(
            first("github-actions", 0),
            "2026-12-07T03:14:19.0004411Z ##[group]Run cat server.log"
        );
        assert_eq!(
            first("numbered-bar", 0),
            "  1 | llm_load_tensors: offloaded 33/33 layers to GPU"
        );
        assert_eq!(
            first("numbered-colon", 0),
            "1:llm_load_tensors: offloaded 33/33 layers to GPU"
        );
        assert_eq!(
            first("ansi-caret", 0),
            "^[[32mllm_load_tensors: offloaded 33/33 layers to GPU^[[0m"
        );
        let cri = String::from_utf8(compose(OFFLOAD_014, &[transform("cri-partial")], 0)).unwrap();
        assert!(cri.lines().next().unwrap().contains(" stderr P "));
        assert!(cri.lines().last().unwrap().contains(" stderr F "));
        let utf16 = compose(line, &[transform("utf16le-bom")], 0);
        assert_eq!(&utf16[..4], &[0xff, 0xfe, b'l', 0]);
    }
}
