//! Removing what log collectors put in front of a log line: journald, docker compose, `docker logs
//! --timestamps`, kubectl `--prefix`, Markdown quote markers, shell comment markers, SSE `data:` framing,
//! grep's file-name prefix, llama.cpp's elapsed time and level letter, llama-server's router `[pid] ` and
//! component tags, ANSI colour codes and indentation.
//!
//! Prefixes nest (a compose line inside a Markdown quote, a journald line with a llama-server tag), so
//! [`strip_prefixes`] removes one at a time until none is left. Each shape is checked with a few byte tests
//! before any regex, because every line of every input passes through here.
//!
//! * journald: `Oct 29 10:00:00 host ollama[123]: `, also without a host (`Mar 02 08:15:00 ollama[4321]: `) and
//!   with an empty host and pid (`Sep 10 23:59:32   ollama[]: `, corpus 503).
//! * llama-server component tags (Ollama >= 0.30 runs it with `--no-log-prefix --no-log-timestamps`, and with
//!   `-lv 4` after the elapsed time): a tag of 3–4 lowercase letters padded to 4, a space, the function name
//!   right-aligned in a 12-character field, then `:` (`srv    load_model: `, `cmn  common_param: `). The tag
//!   and the padding go; the function field stays, because grammar rules anchor on it.
//! * llama.cpp's common logger (`docs/log-formats.md` §5.7), unless run with `--no-log-prefix`: the elapsed
//!   time and a level letter, `0.00.078.516 I `, or the bare letter (`I load_tensors: …`, corpus 707; also
//!   `W `, `E `, `D `). The bare letter goes only when a llama.cpp line follows it, so a sentence starting
//!   with `I ` keeps it. Router mode (`--models-preset`) puts the child's pid before that (`[34353] `): it
//!   goes, and the pid is handed on ([`Stripped::pid`]) so the framer can tell one child's lines from
//!   another's.
//! * grep's `file.log:` / `file.log-` before a line of a paste of several files: it goes, and the file it
//!   names is handed on ([`Stripped::file`], read by [`super::source_file::grep_prefix`]) so the framer can
//!   tell where a new file starts.
//! * Shell comments: a log pasted into a script or a CI config as comments (`# time=…`, `#   Device 0: …`, a
//!   bare `#`). The `# ` goes only when what follows is itself a log line (a record start in the sense of
//!   [`super::join::is_record_start`], or a collector prefix), so nvidia-smi `dmon` headers (`# gpu   pwr
//!   temp …`) and ordinary comments (`# leg2-baseline — argv: …`) are left as they are.
//! * vLLM and SGLang (`docs/log-formats.md` §8): vLLM's process prefix (`(Worker_TP1 pid=448) `,
//!   `(VllmWorker rank=1 pid=448) `, `(VllmWorkerProcess pid=1786) `, `(EngineCore_DP0 pid=1) `,
//!   `(APIServer pid=1) `), its logger's level, date and source (`INFO 08-14 14:07:22 [gpu_worker.py:563] `, V0
//!   `INFO 12-13 19:54:18 worker.py:243] `, or the source alone where a paste starts mid-line), SGLang's
//!   `[2025-03-08 12:29:21 TP0] ` (also `DP0 TP0`, `EP3`, or no rank), and a tqdm bar a redraw left before an
//!   SGLang record. The rank a prefix names is data, not decoration: it is handed on ([`Stripped::rank`]) and
//!   the framer keeps it before the payload as `[rank=TP1] ` ([`rank_tag`]), the one form the grammar reads,
//!   so the load stage can make each rank a device of the load.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::join::is_record_start;
use super::source_file::grep_prefix;

/// `Oct 29 10:00:00 host ollama[123]: ` (month names in any locale, including `de des. 03` in Catalan) or a
/// bare `ollama[1773]: `; the identifier can be a container id. After a date the host may be missing
/// (`Mar 02 08:15:00 ollama[4321]: `) and the pid empty (`Sep 10 23:59:32   ollama[]: `, corpus 503). The
/// host is lazy (`??`): `ollama[1]: ` right after the time is taken as the identifier, never as a host, so
/// a payload such as `foo[]: x` is not eaten as well.
static JOURNALD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?:\S+\s+){1,4}?\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+(?:\S+\s+)??[^\s\[\]]+\[\d*\]|[^\s\[\]]+\[\d+\]):(?:\s|$)",
    )
    .unwrap()
});

/// What follows journald's time when the time is one token (`short-iso`, `short-iso-precise`, rsyslog's RFC
/// 3339 template: `2026-12-07T03:14:19+0000 `) or bracketed (`short-monotonic`: `[ 8421.034112] `): the
/// host, if any, and `ident[pid]: `.
static JOURNALD_TAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\S+ +)??[^\s\[\]]+\[\d*\]:(?: |$)").unwrap());

/// `docker logs --timestamps`: RFC 3339 with nanoseconds, then one space.
static DOCKER_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) ").unwrap()
});

/// docker compose: `ollama-1  | `, `ollama  | `.
static COMPOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][\w.-]*\s+\| ").unwrap());

/// llama-server `-lv 4`: `0.00.163.006 I `. A component tag after it (`cmn  common_param:`) is removed by the
/// next pass, by the same rule as without the elapsed prefix ([`component_tag`]).
static ELAPSED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+\.\d{2}\.\d{3}\.\d{3} [A-Z] ").unwrap());

/// ANSI escape sequences (colours, cursor movement), raw or as a terminal shows them when pasted: caret
/// form, `^[[1;36m` (`docs/log-formats.md` §8: vLLM's coloured level, pasted).
static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\x1b|\^\[)\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07").unwrap());

/// vLLM's process prefix: `(Worker_TP1 pid=448) `, `(VllmWorker rank=1 pid=448) `, `(EngineCore_DP0 pid=1) `,
/// and the names the census (`census/vllm.tsv`'s sources) found besides: `(Worker_3 pid=…)`, `(VllmWorker-1
/// pid=…)`, and Ray's `(RayWorkerWrapper pid=…, ip=10.0.0.2)` on a multi-node start.
static VLLM_PROCESS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\(([A-Za-z][A-Za-z0-9_-]*)(?: rank=(\d+))? pid=(\d+)(?:, ip=[0-9A-Fa-f.:]+)?\) ")
        .unwrap()
});

/// vLLM's logger: level, `MM-DD HH:MM:SS` and the source, `[gpu_worker.py:563] ` (V1) or `worker.py:243] ` (V0).
static VLLM_LOGGER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? (?:\[[\w.]+\.py:\d+\]|[\w.]+\.py:\d+\]) ",
    )
    .unwrap()
});

/// vLLM's source field alone, where a paste starts after the date: `[multiproc_executor.py:492] `.
static VLLM_SOURCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[[\w.]+\.py:\d+\] ").unwrap());

/// SGLang's prefix: `[2025-03-08 12:29:21 TP0] `, `[2025-07-02 07:41:58 DP0 TP0] `, `[2026-07-15 13:14:53] `,
/// and before late 2024 without the date (`[23:17:01 TP7] `, corpus 1039). Its `configure_logger`
/// (`sglang/srt/utils`, census `census/sglang.tsv`) adds milliseconds under `SGLANG_LOG_MS`
/// (`[2026-10-30 08:01:02.345 TP0] `) and, from 0.5.10, ranks in this order: `DP`, `PP`, `ATTN_CP`, `MOE_DP`,
/// `TP`, `EP`.
static SGLANG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}(?:\.\d{3})?((?: (?:DP|TP|EP|PP|ATTN_CP|MOE_DP)\d+)*)\] ",
    )
    .unwrap()
});

/// A tqdm bar a redraw left before a record on the same line: `  0%|    | 0/13 [00:00<?, ?it/s]`.
static TQDM_BAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d{1,3}%\|[^|]*\| *\d+/\d+ \[[^\]]*\]").unwrap());

/// The rank a vLLM or SGLang prefix names, as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank<'a> {
    /// vLLM's worker name after `Worker_` (`TP1`, `DP1_TP1_EP3`).
    Parallel(&'a str),
    /// SGLang's rank words with their leading spaces (` TP0`, ` DP0 TP0`).
    Words(&'a str),
    /// `(VllmWorker rank=1 pid=…)`: the rank number.
    Number(&'a str),
    /// `(VllmWorkerProcess pid=1786)`: a V0 worker known only by its process id.
    Process(&'a str),
    /// `(EngineCore_DP3 pid=…)`, `(EngineCore_3 pid=…)`: an engine core's data-parallel rank number.
    EngineCore(&'a str),
}

/// The logical line of a ranked line: `[rank=TP1] ` before the payload (see the module doc). The label is
/// `TP1`, `DP1_TP1_EP3`, `DP0_TP0`, `rank1`, `pid1786` or `EngineCore_DP3`; `load::serving` turns it into a
/// device.
pub fn rank_tag(rank: Rank<'_>, payload: &str) -> String {
    let label = match rank {
        Rank::Parallel(name) => name.to_string(),
        Rank::Words(words) => words.split_whitespace().collect::<Vec<_>>().join("_"),
        Rank::Number(n) => format!("rank{n}"),
        Rank::Process(pid) => format!("pid{pid}"),
        Rank::EngineCore(dp) => format!("EngineCore_DP{dp}"),
    };
    format!("[rank={label}] {payload}")
}

/// The rank a vLLM process name gives: a worker's parallel ranks, its rank number, else (a V0 worker) its
/// process id; an engine core other than the first its data-parallel rank (`EngineCore_DP3`, before 0.10.2 `EngineCore_3`, under
/// Ray `DPEngineCoreActor_DP3`: the names vLLM's `v1/engine/core.py` and `utils.py` give the process, read in
/// the releases of `census/vllm.releases.tsv`), which is a GPU of its own
/// when the engine core runs its one worker in-process (TP 1; `load::serving` folds it into the workers
/// otherwise); the API server is no rank.
fn vllm_rank<'a>(name: &'a str, rank: Option<&'a str>, pid: &'a str) -> Option<Rank<'a>> {
    if name.contains("EngineCore") {
        // `EngineCore`, `EngineCore_DP3`, `EngineCore_3`, Ray's `DPEngineCoreActor_DP3`
        let (_, n) = name.rsplit_once('_')?;
        let dp = n.strip_prefix("DP").unwrap_or(n);
        // The first engine core is the one of every single-GPU start: no rank, as before data parallelism.
        return (!dp.is_empty()
            && dp.bytes().all(|b| b.is_ascii_digit())
            && !dp.trim_start_matches('0').is_empty())
        .then_some(Rank::EngineCore(dp));
    }
    if !name.contains("Worker") {
        return None;
    }
    let parallel = name.split_once("Worker_").map(|(_, p)| p).filter(|p| {
        !p.is_empty()
            && p.split('_').all(|part| {
                let letters = part.bytes().take_while(u8::is_ascii_uppercase).count();
                letters > 0
                    && letters < part.len()
                    && part[letters..].bytes().all(|b| b.is_ascii_digit())
            })
    });
    // `Worker_3`, `VllmWorker-1`: the rank as a bare number after the name
    let numbered = name
        .rsplit_once(['_', '-'])
        .map(|(_, n)| n)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    match (parallel, rank.or(numbered)) {
        (Some(p), _) => Some(Rank::Parallel(p)),
        (None, Some(n)) => Some(Rank::Number(n)),
        (None, None) => Some(Rank::Process(pid)),
    }
}

/// A collector that stamps every line it writes down, by the shape of its prefix: the same collector writes
/// the same shape on every line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector {
    /// journald or syslog with a month and a time (`Dec 07 03:14:19 host ollama[2841]: `), or with the time
    /// since boot (`[ 8421.034112] host ollama[2841]: `).
    Journald,
    /// An RFC 3339 time first: `docker logs -t`, journald `short-iso`, RFC 3339 syslog, a CI runner, a
    /// container runtime's envelope.
    Stamp,
    /// `kubectl logs --prefix`: `[pod/name/container] `.
    Kubectl,
    /// docker compose's service, padded so that every service's bar is in the same column (`ollama-1  | `):
    /// the prefix's length.
    Compose(usize),
}

impl Collector {
    /// True when `row` begins as this collector's lines do, whether or not the stripper takes its whole
    /// prefix: journald writes the kernel's lines without a pid (`Nov  1 06:48:31 gpuhost kernel: …`), which
    /// is still its time first, so such a row is a line it wrote, not the rest of the one before.
    pub fn begins(self, row: &str) -> bool {
        match self {
            Collector::Journald => {
                JOURNALD_TIME.is_match(row) || monotonic_stamp(row.as_bytes()).is_some()
            }
            Collector::Stamp => DOCKER_TIMESTAMP.is_match(row),
            Collector::Kubectl => row.starts_with("[pod/"),
            Collector::Compose(width) => COMPOSE.find(row).is_some_and(|m| m.end() == width),
        }
    }
}

/// The date and time journald and syslog begin a line with, in any locale (what [`JOURNALD`] takes before its
/// host and identifier).
static JOURNALD_TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\S+\s+){1,4}?\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s").unwrap());

/// What was in front of a line, so the joiner can tell an indented continuation from a record, and the framer
/// which file of a paste the line comes from.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stripped<'a> {
    /// The line was indented (after any collector prefix).
    pub indented: bool,
    /// The file grep's prefix named ([`super::source_file::grep_prefix`]), when the line had one.
    pub file: Option<&'a str>,
    /// The rank a vLLM or SGLang prefix named, when the line had one.
    pub rank: Option<Rank<'a>>,
    /// The child process a llama-server router's `[pid] ` prefix named (`34353`), when the line had one.
    pub pid: Option<&'a str>,
    /// Where the text a container runtime's CRI envelope holds starts in the line given to
    /// [`strip_prefixes`] (after `… stderr F `), when the line had one: the piece that continues a partial
    /// line is this text as it is, nothing else stripped from it.
    pub envelope_end: Option<usize>,
    /// The CRI envelope said `P`: the line goes on in the next piece, glued on with nothing between.
    pub partial: bool,
    /// The outermost collector's prefix stripped, if any: one that stamps every line it writes down with a
    /// time or its source, not a bare `ident[pid]: ` or a server's own prefix. A row of a terminal's wrap
    /// after such a line does not begin with it ([`super::Framer`]).
    pub collector: Option<Collector>,
    /// A server's own logger prefix was stripped whole (SGLang's time, vLLM's level and time): the line is a
    /// record that logger wrote, never the rest of another.
    pub logger: bool,
    /// How many bytes at the start of the line are a paste's markup, outside every other prefix: a Markdown
    /// quote marker, a comment marker, a line number (`12:`, `  12 | `). Markup is put on every physical
    /// line after a terminal wrapped them, so the framer measures a hard wrap's pieces without it.
    pub markup: usize,
}

/// Remove ANSI escape sequences.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    let bytes = line.as_bytes();
    // One pass for both forms: a raw escape, or the caret form `^[[`.
    let escaped = memchr::memchr2_iter(0x1b, b'^', bytes)
        .any(|i| bytes[i] == 0x1b || bytes[i + 1..].starts_with(b"[["));
    if escaped {
        ANSI.replace_all(line, "")
    } else {
        Cow::Borrowed(line)
    }
}

/// The columns the caret-form colours of `line` take on a terminal (`^[[32m` is six): a terminal that shows
/// them counts them in its width, so a hard wrap's pieces are measured with them ([`super::Framer`]).
pub fn caret_columns(line: &str) -> usize {
    if memchr::memmem::find(line.as_bytes(), b"^[[").is_none() {
        return 0;
    }
    ANSI.find_iter(line)
        .filter(|m| m.as_str().starts_with('^'))
        .map(|m| m.len())
        .sum()
}

/// True when `line` starts with a container runtime's envelope as it begins a stored line: the CRI node
/// log's time and stream (`2026-…Z stderr P `) or Docker's `json-file` object (`{"log":"`); with the piece's
/// `P` (partial) flag for the CRI form. `None` for any other line.
pub fn starts_envelope(line: &str) -> Option<bool> {
    let first = *line.as_bytes().first()?;
    if first == b'{' {
        return line.starts_with("{\"log\":\"").then_some(false);
    }
    if !first.is_ascii_digit() {
        return None;
    }
    let m = DOCKER_TIMESTAMP.find(line)?;
    cri_envelope(&line[m.end()..]).map(|(_, partial)| partial)
}

/// Strip every collector prefix from a line (in any nesting order), returning the rest.
pub fn strip_prefixes(mut line: &str) -> (&str, Stripped<'_>) {
    let whole = line;
    let mut info = Stripped::default();
    // Markup counts while nothing but markup (and blanks) was removed.
    let mut outermost = true;
    // Each pass removes one prefix; ten is more nesting than any real capture has.
    for _ in 0..10 {
        let before = line.len();
        if outermost
            && !whole.as_bytes()[info.markup..whole.len() - line.len()]
                .iter()
                .all(|&b| b == b' ' || b == b'\t')
        {
            // Something other than markup and blanks was removed: what follows is inside it.
            outermost = false;
        }
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
                if outermost {
                    info.markup = whole.len() - line.len();
                }
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix('#') {
            // A log pasted as shell comments (`# time=…`, a bare `#`); see the module doc.
            if rest.is_empty() || rest.starts_with(' ') && commented_log_line(&rest[1..]) {
                line = rest.strip_prefix(' ').unwrap_or(rest);
                info.indented = false;
                if outermost {
                    info.markup = whole.len() - line.len();
                }
                continue;
            }
        }
        if info.file.is_none()
            && grep_may_start(line)
            && whole[..whole.len() - line.len()]
                .bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'>' | b'#'))
        {
            // grep puts `file.log:` before the line as it was in the file, so it is the outermost prefix, after
            // nothing but the indentation, quote or comment marker of a paste.
            if let Some((file, rest)) = grep_prefix(line) {
                info.file = Some(file);
                info.indented = false;
                line = rest;
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("data: ") {
            line = rest;
            continue;
        }
        if line.starts_with('(') {
            if let Some(c) = VLLM_PROCESS.captures(line) {
                let (name, pid) = (c.get(1).unwrap(), c.get(3).unwrap());
                let rank = c.get(2).map(|m| m.as_str());
                info.rank = vllm_rank(name.as_str(), rank, pid.as_str()).or(info.rank);
                line = &line[c.get(0).unwrap().end()..];
                info.indented = false;
                continue;
            }
        }
        if line.starts_with('[') && line.as_bytes().get(1).is_some_and(u8::is_ascii_digit) {
            if let Some(c) = SGLANG.captures(line) {
                // SGLang's logger is the innermost prefix: the message follows.
                let words = c.get(1).unwrap().as_str();
                if !words.is_empty() {
                    info.rank = Some(Rank::Words(words));
                }
                line = &line[c.get(0).unwrap().end()..];
                info.indented = false;
                info.logger = true;
                break;
            }
        }
        if line.starts_with('[') && line.contains(".py:") {
            if let Some(m) = VLLM_SOURCE.find(line) {
                // (Not a logger's whole prefix: the rest of one a terminal cut, `[gpu_worker.py:452] `.)
                line = &line[m.end()..];
                break;
            }
        }
        if let Some(stamp) = monotonic_stamp(line.as_bytes()) {
            // journald's `short-monotonic`: the time since boot, then a journald line's host and identifier.
            if let Some(m) = JOURNALD_TAIL.find(&line[stamp..]) {
                line = &line[stamp + m.end()..];
                info.indented = false;
                info.collector = info.collector.or(Some(Collector::Journald));
                continue;
            }
        }
        if line.starts_with('[') {
            let b = line.as_bytes();
            if let Some(end) = memchr::memchr_iter(b']', b).find(|&i| b.get(i + 1) == Some(&b' ')) {
                let inner = &line[1..end];
                // `[33899] ` (a router's pid) or kubectl's `[pod/name/container] `.
                if inner.bytes().all(|b| b.is_ascii_digit()) && !inner.is_empty() {
                    // A router's child: its pid is handed on, each child being a load of its own.
                    info.pid = info.pid.or(Some(inner));
                    line = &line[end + 2..];
                    continue;
                }
                if inner.starts_with("pod/") && inner.matches('/').count() >= 2 {
                    line = &line[end + 2..];
                    info.collector = info.collector.or(Some(Collector::Kubectl));
                    continue;
                }
            }
        }
        let first = line.as_bytes().first().copied().unwrap_or(0);
        if first.is_ascii_digit() {
            if let Some(m) = DOCKER_TIMESTAMP.find(line) {
                info.collector = info.collector.or(Some(Collector::Stamp));
                let rest = &line[m.end()..];
                if let Some((text, partial)) = cri_envelope(rest) {
                    // containerd's and CRI-O's node log: the stream and whether the line is whole.
                    line = &rest[text..];
                    info.envelope_end = Some(whole.len() - line.len());
                    info.partial = partial;
                    continue;
                }
                line = rest;
                // journald `short-iso` and RFC 3339 syslog: the host and identifier follow the time.
                let head = &line[..floor_char_boundary(line, 160)];
                if hints(head.as_bytes()).0 {
                    if let Some(m) = JOURNALD_TAIL.find(line) {
                        line = &line[m.end()..];
                        info.indented = false;
                    }
                }
                continue;
            }
            if line.as_bytes()[..line.len().min(5)].contains(&b'%') {
                if let Some(m) = TQDM_BAR.find(line) {
                    // Only before an SGLang record: a bar alone is progress, not a prefix.
                    if SGLANG.is_match(&line[m.end()..]) {
                        line = &line[m.end()..];
                        continue;
                    }
                }
            }
            if let Some(m) = ELAPSED.find(line) {
                line = &line[m.end()..];
                continue;
            }
            if let Some(end) = bar_number(line.as_bytes()) {
                // An editor's line number (`  12 | `, its blanks stripped above) before a line that a
                // collector's prefix begins (`  13 | Sep 11 00:42:49 ai ollama[3110]: …`): markup, taken
                // before the collector's pattern, which would take it in (a terminal's row after it is
                // measured without it, as on every other row).
                line = &line[end..];
                info.indented = false;
                if outermost {
                    info.markup = whole.len() - line.len();
                }
                continue;
            }
            if let Some(end) = line_number(line.as_bytes()) {
                // `grep -n` over one file (`12:`): what follows is the line as it was.
                line = &line[end..];
                info.indented = false;
                if outermost {
                    info.markup = whole.len() - line.len();
                }
                continue;
            }
        }
        if matches!(first, b'I' | b'W' | b'E' | b'D' | b'C')
            && line.as_bytes().get(1).is_some_and(u8::is_ascii_uppercase)
        {
            if let Some(m) = VLLM_LOGGER.find(line) {
                // vLLM's logger is the innermost prefix: the message follows.
                line = &line[m.end()..];
                info.logger = true;
                break;
            }
        }
        if matches!(first, b'I' | b'W' | b'E' | b'D')
            && line.as_bytes().get(1) == Some(&b' ')
            && level_letter_line(&line[2..])
        {
            // llama.cpp's level letter without the elapsed time (`I load_tensors: …`, corpus 707).
            line = &line[2..];
            continue;
        }
        if first.is_ascii_lowercase() {
            if let Some(end) = component_tag(line.as_bytes()) {
                // llama-server's own tag is the innermost prefix: the function name follows, nothing else.
                line = &line[end..];
                break;
            }
        }
        if first.is_ascii_alphanumeric() || first >= 0x80 {
            // Cheap checks first: journald needs "]: " and compose needs " | " near the start. A month in
            // another script (`дек`, `Δεκ`, `ديس`) starts with a byte past ASCII.
            let head = &line[..floor_char_boundary(line, 160)];
            if let Some(end) = plain_journald(line.as_bytes(), head.len()) {
                // What the journald regex would match, found without it (the usual `journalctl` layout).
                line = &line[end..];
                info.indented = false;
                info.collector = info.collector.or(Some(Collector::Journald));
                continue;
            }
            let (bracket_colon, spaced_bar) = hints(head.as_bytes());
            if bracket_colon {
                if let Some(m) = JOURNALD.find(line) {
                    // With a time (the bare `ident[pid]: ` has no blank before its `]:`).
                    if m.as_str().trim_end().contains([' ', '\t']) {
                        info.collector = info.collector.or(Some(Collector::Journald));
                    }
                    line = &line[m.end()..];
                    info.indented = false;
                    continue;
                }
            }
            if spaced_bar && !line.starts_with("[GIN]") {
                if let Some(m) = COMPOSE.find(line) {
                    // An editor's line number (`  12 | `) has the compose prefix's shape: it is markup.
                    let number = line.as_bytes()[..m.end() - 3]
                        .iter()
                        .all(|b| b.is_ascii_digit() || *b == b' ');
                    line = &line[m.end()..];
                    info.indented = false;
                    if number && outermost {
                        info.markup = whole.len() - line.len();
                    } else {
                        outermost = false;
                        info.collector = info.collector.or(Some(Collector::Compose(m.end())));
                    }
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

/// The length of journald's `short-monotonic` time, `[ 8421.034112] ` (spaces, seconds, six decimals), when
/// `b` starts with one.
#[inline]
fn monotonic_stamp(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'[') || !b.get(1).is_some_and(|&c| c == b' ' || c.is_ascii_digit()) {
        return None;
    }
    let spaces = b[1..].iter().take_while(|&&c| c == b' ').count();
    let digits = b[1 + spaces..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let dot = 1 + spaces + digits;
    let decimals = b.get(dot + 1..dot + 7)?;
    (digits > 0
        && b[dot] == b'.'
        && decimals.iter().all(u8::is_ascii_digit)
        && b.get(dot + 7) == Some(&b']')
        && b.get(dot + 8) == Some(&b' '))
    .then_some(dot + 9)
}

/// After a CRI node log's time (containerd's and CRI-O's `/var/log/pods/…` files): `stderr F ` or `stdout P `
/// (`F` a full line, `P` a partial one that the next piece continues). The offset of the text, and whether
/// the piece is partial.
#[inline]
fn cri_envelope(rest: &str) -> Option<(usize, bool)> {
    let b = rest.as_bytes();
    if b.len() < 8 || !(b.starts_with(b"stderr ") || b.starts_with(b"stdout ")) {
        return None;
    }
    let partial = match b[7] {
        b'F' => false,
        b'P' => true,
        _ => return None,
    };
    match b.get(8) {
        None => Some((8, partial)),
        Some(b' ') => Some((9, partial)),
        Some(_) => None,
    }
}

/// The length of `grep -n`'s line number over one file, `12:`, when `b` starts with one: one to seven digits
/// and a colon, unless exactly two digits follow (`03:14:19`, `12:30 ` are times; `1:0.05.209.581 I …` and
/// `1:2026-06-06T…` are numbered lines). No log line of the corpus starts that way.
#[inline]
/// The length of an editor's line number as a code viewer copies it, blanks before it stripped: one to
/// seven digits, then ` | ` (`12 | `).
fn bar_number(b: &[u8]) -> Option<usize> {
    let digits = b.iter().take(8).take_while(|c| c.is_ascii_digit()).count();
    (digits > 0 && digits <= 7 && b[digits..].starts_with(b" | ")).then_some(digits + 3)
}

fn line_number(b: &[u8]) -> Option<usize> {
    let digits = b.iter().take(8).take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 7 || b.get(digits) != Some(&b':') {
        return None;
    }
    let after = &b[digits + 1..];
    let next = after
        .iter()
        .take(3)
        .take_while(|c| c.is_ascii_digit())
        .count();
    // A time is an hour and minutes followed by what follows a time (`03:14:19`, `12:30 `, `12:30`); a wrap's
    // row after a number (`57:16): 6144.00 MiB`, `12:90a618fe…`) is no time.
    let number = |d: &[u8]| d.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0'));
    let time = next == 2
        && digits <= 2
        && number(&b[..digits]) <= 23
        && number(&after[..2]) <= 59
        && matches!(
            after.get(2),
            None | Some(b':' | b' ' | b'\t' | b',' | b'Z' | b'+' | b'-')
        );
    (!time).then_some(digits + 1)
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
/// ident[1234]: ` (English month abbreviation, ASCII host and identifier, no fractional seconds), also without
/// a host or with an empty one and with an empty pid (`Sep 10 23:59:32   ollama[]: `), or `None` for anything
/// else, which then goes to the [`JOURNALD`] regex. For every line this accepts, the regex matches the same
/// span: its lazy `{1,4}?` cannot stop after the month (a space follows the day, not a colon), so it takes
/// month and day as its two leading tokens; then, like its lazy `??` host, this tries the identifier right
/// after the time first and a host before it second, and the rest of the pattern is forced. Like the regex
/// path, it needs the `]:` within the first `head` bytes.
///
/// Every journald line passes here, so it is inlined into [`strip_prefixes`] (out of line, with closures, it
/// cost 3 % of a whole run on a journald dump) and scans with plain loops and a byte-class table.
#[inline(always)]
fn plain_journald(b: &[u8], head: usize) -> Option<usize> {
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
    // Plain loops with the cheapest test per byte: this runs on every line of a journald dump.
    let n = b.len();
    let mut i = 16;
    while i < n && b[i] == b' ' {
        i += 1;
    }
    // The token after the time: `ident[1234]:` when there is no host, else the host.
    let mut end = i;
    while end < n && JOURNALD_CLASS[usize::from(b[end])] & PRINTABLE != 0 {
        end += 1;
    }
    if end == i || end < n && b[end] != b' ' {
        return None;
    }
    // The identifier first, as the regex's lazy host does (a host ends in `]:` only if it is one).
    let colon = if b.get(end - 1) == Some(&b':') && journald_ident_pid(&b[i..end - 1]) {
        end
    } else {
        let mut j = end;
        while j < n && b[j] == b' ' {
            j += 1;
        }
        let mut ident = j;
        while ident < n && JOURNALD_CLASS[usize::from(b[ident])] & NAME != 0 {
            ident += 1;
        }
        if ident == j || !at(ident, b'[') {
            return None;
        }
        let mut k = ident + 1;
        while k < n && b[k].is_ascii_digit() {
            k += 1;
        }
        if !(at(k, b']') && at(k + 1, b':') && matches!(b.get(k + 2), None | Some(b' '))) {
            return None;
        }
        k + 2
    };
    // The `]:` must lie within `head`; the prefix takes the space after it too.
    (colon <= head).then(|| (colon + 1).min(b.len()))
}

/// Byte classes for [`plain_journald`], one table load per byte: [`PRINTABLE`] ASCII (`!` to `~`), and of
/// those the [`NAME`] bytes of an identifier (not `[` or `]`).
static JOURNALD_CLASS: [u8; 256] = {
    let mut table = [0; 256];
    let mut c = 0x21;
    while c <= 0x7e {
        table[c] = if c == b'[' as usize || c == b']' as usize {
            PRINTABLE
        } else {
            PRINTABLE | NAME
        };
        c += 1;
    }
    table
};
/// See [`JOURNALD_CLASS`].
const PRINTABLE: u8 = 1;
/// See [`JOURNALD_CLASS`].
const NAME: u8 = 2;

/// True when `token` (printable ASCII) is `ident[1234]` (the pid possibly empty, the identifier not): a
/// journald identifier and pid without their colon.
fn journald_ident_pid(token: &[u8]) -> bool {
    let Some((&b']', rest)) = token.split_last() else {
        return false;
    };
    let digits = rest.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let Some((&b'[', ident)) = rest[..rest.len() - digits].split_last() else {
        return false;
    };
    !ident.is_empty() && !ident.iter().any(|&c| c == b'[' || c == b']')
}

/// The length of a llama-server component tag and the padding of the function field after it, when `b`
/// starts with one: `srv    load_model: …` (→ 7), `cmn  common_param: …` (→ 5), `slot   operator(): …`.
///
/// The layout is fixed (llama.cpp's `common_log` with `--no-log-prefix`): a tag of 3–4 lowercase letters
/// padded with spaces to 4, one space, the function name right-aligned (and cut) in a 12-character field,
/// then `:` and a space or the end of the line. Anything else is not a tag: `llama_context: n_ctx = 8192`,
/// `load_tensors: …` and `time=…` have no space at byte 4, English text has no 12-character field ending in
/// `:` at byte 17.
#[inline]
fn component_tag(b: &[u8]) -> Option<usize> {
    if b.len() < 18 || b[17] != b':' || b[4] != b' ' || !matches!(b.get(18), None | Some(b' ')) {
        return None;
    }
    let letters = b[..4].iter().take_while(|c| c.is_ascii_lowercase()).count();
    if letters < 3 || b[letters..4].iter().any(|&c| c != b' ') {
        return None;
    }
    let field = &b[5..17];
    let pad = field.iter().take_while(|&&c| c == b' ').count();
    let name = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'(' | b')' | b'~');
    (pad < field.len() && field[pad..].iter().all(name)).then_some(5 + pad)
}

/// True when `rest`, the text after a bare level letter (`I `, `W `, `E `, `D `), is what llama.cpp's logger
/// prints after it: a record start ([`is_record_start`]: `load_tensors: …`, `  Device 0: …` indented) or a
/// line with a llama-server component tag. English that starts with `I ` (`I think …`) is left as it is.
fn level_letter_line(rest: &str) -> bool {
    let rest = rest.trim_start_matches([' ', '\t']);
    is_record_start(rest) || component_tag(rest.as_bytes()).is_some()
}

/// The cheap test before [`grep_prefix`]: a path starts with one of its bytes and has a `.` in its first
/// token (after a Windows drive), so `time=…`, `load_tensors: …` and a journald date are turned down at once.
#[inline]
fn grep_may_start(line: &str) -> bool {
    let b = line.as_bytes();
    let b = if b.len() > 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        &b[2..]
    } else {
        b
    };
    b.first().is_some_and(|&c| {
        c.is_ascii_alphanumeric() || matches!(c, b'/' | b'\\' | b'.' | b'_' | b'~')
    }) && b
        .iter()
        .take_while(|&&c| !matches!(c, b' ' | b':' | b'='))
        .any(|&c| c == b'.')
}

/// True when `rest`, the text after a `# ` comment marker, is a log line (see the module doc): blank, a record
/// start ([`is_record_start`]), or a line with a llama-server tag or a journald, compose or `docker logs
/// --timestamps` prefix.
fn commented_log_line(rest: &str) -> bool {
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() || is_record_start(rest) || component_tag(rest.as_bytes()).is_some() {
        return true;
    }
    let b = rest.as_bytes();
    let head = floor_char_boundary(rest, 160);
    if plain_journald(b, head).is_some() || DOCKER_TIMESTAMP.is_match(rest) {
        return true;
    }
    let (bracket_colon, spaced_bar) = hints(&b[..head]);
    bracket_colon && JOURNALD.is_match(rest) || spaced_bar && COMPOSE.is_match(rest)
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

    /// `grep -n`'s line numbers before the rows of a wrapped line (corpus 1101's KV cache line, cut by a
    /// terminal before `16): 6144.00 MiB`), against times.
    #[test]
    fn a_numbered_row_is_told_from_a_time() {
        assert_eq!(line_number(b"57:16): 6144.00 MiB, V (f16)"), Some(3));
        assert_eq!(line_number(b"12:90a618fe6ff21b09"), Some(3));
        assert_eq!(line_number(b"45:16 cells"), Some(3));
        assert_eq!(line_number(b"1:0.05.209.581 I load"), Some(2));
        for time in ["03:14:19 host", "12:30 ", "12:30", "9:05,123"] {
            assert_eq!(line_number(time.as_bytes()), None, "{time}");
        }
    }

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

    /// corpus 707 (`sample-logs/707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log`), all its
    /// lines: llama.cpp's common logger at `-lv 6` without timestamps, the bare level letter before each.
    const CORPUS_707: &str = include_str!(
        "../../sample-logs/707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log"
    );

    #[test]
    fn llama_cpp_bare_level_letters() {
        let lines: Vec<&str> = CORPUS_707.lines().collect();
        assert_eq!(lines.len(), 13);
        for line in &lines {
            let rest = line.strip_prefix("I ").unwrap();
            assert_eq!(strip(line), rest, "{line}");
        }
        assert_eq!(
            strip(lines[3]),
            "load_tensors:   CPU_Mapped model buffer size =  2208.00 MiB"
        );
        // The other letters (corpus 706:42 without its elapsed time, as `--log-timestamps` off prints it), and
        // the letter before an indented line or a component tag (corpus 708:2 and 706:2 likewise).
        assert_eq!(
            strip("W sched_reserve: layer 0 is assigned to device CPU but the fused Gated Delta Net tensor is assigned to device Vulkan0 (usually due to missing support)"),
            "sched_reserve: layer 0 is assigned to device CPU but the fused Gated Delta Net tensor is assigned to device Vulkan0 (usually due to missing support)"
        );
        for letter in ["W", "E", "D"] {
            assert_eq!(
                strip(&format!("{letter} {}", &lines[9][2..])),
                "sched_reserve:    Vulkan0 compute buffer size =   186.30 MiB"
            );
        }
        let (rest, info) = strip_prefixes("I   Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24159 MiB");
        assert_eq!(
            rest,
            "Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24159 MiB"
        );
        assert!(info.indented, "the message's own indentation is kept");
        assert_eq!(
            strip("I cmn  common_param: device_info:"),
            "common_param: device_info:"
        );
        // Router mode puts the child's pid first (docs/log-formats.md §6.2), before the letter.
        assert_eq!(
            strip(&format!("[34353] {}", lines[2])),
            "load_tensors: offloaded 43/43 layers to GPU"
        );
        // The elapsed time before the letter, as before (corpus 706:42 as it is).
        assert_eq!(
            strip("0.09.961.639 W sched_reserve: layer 0 is assigned to device CPU"),
            "sched_reserve: layer 0 is assigned to device CPU"
        );
    }

    #[test]
    fn a_sentence_starting_with_a_level_letter_keeps_it() {
        // corpus 803:9 and 809:1, the users' own words around their logs.
        for line in [
            "I know I can use max_model_len to fix the issue, BUT I hope I can make full use of the two GPU. ",
            "I ran `Inferact/Qwen3.8-2.4T-A95B-NVFP4` -tp2 -dp4 -ep on 4*4GB300 and saw",
            "E",
            "I ",
            "D  ",
        ] {
            assert_eq!(strip(line), line, "{line}");
        }
    }

    #[test]
    fn grep_file_prefixes_go_and_name_their_file() {
        // corpus 703:3 and 707:4 as `grep buffer` prints them over several files (-H, -n, -A), quoted in Markdown,
        // around a journald line (016's prefix on 703:6) and after a level letter.
        let cases = [
            ("raw-log-ctx2048.txt:load_tensors:        CUDA0 model buffer size = 11160.99 MiB", "raw-log-ctx2048.txt", "load_tensors:        CUDA0 model buffer size = 11160.99 MiB"),
            ("raw-log-ctx2048.txt:3:load_tensors:        CUDA0 model buffer size = 11160.99 MiB", "raw-log-ctx2048.txt", "load_tensors:        CUDA0 model buffer size = 11160.99 MiB"),
            ("> raw-log-ctx2048.txt-load_tensors:        CUDA0 model buffer size = 11160.99 MiB", "raw-log-ctx2048.txt", "load_tensors:        CUDA0 model buffer size = 11160.99 MiB"),
            ("ollama.log:Aug 22 17:36:22 amobile ollama[30907]: sched_reserve:      CUDA0 compute buffer size =   104.27 MiB", "ollama.log", "sched_reserve:      CUDA0 compute buffer size =   104.27 MiB"),
            ("e4b-64k.log:I load_tensors:   CPU_Mapped model buffer size =  2208.00 MiB", "e4b-64k.log", "load_tensors:   CPU_Mapped model buffer size =  2208.00 MiB"),
            ("e4b-64k.log-0.00.078.516 I cmn  common_param: device_info:", "e4b-64k.log", "common_param: device_info:"),
        ];
        for (line, file, rest) in cases {
            let (got, info) = strip_prefixes(line);
            assert_eq!((got, info.file), (rest, Some(file)), "{line}");
        }
        // No file for the usual lines, and a grep prefix is only the outermost one.
        assert_eq!(strip_prefixes(CORPUS_503_LINE_8).1.file, None);
        assert_eq!(
            strip_prefixes(CORPUS_707.lines().next().unwrap()).1.file,
            None
        );
        let (rest, info) = strip_prefixes("Mar 02 08:15:00 ollama[4321]: server.log: x");
        assert_eq!((rest, info.file), ("server.log: x", None));
    }

    /// Lines of corpus 503 (`journalctl` with the host left out, hence three spaces, and an empty pid).
    const CORPUS_503_LINE_1: &str = r#"Sep 10 23:59:32   ollama[]: time=2026-09-10T23:59:32.922Z level=INFO source=sched.go:613 msg="system memory" total="81.5 GiB" free="80.0 GiB" free_swap="8.0 GiB""#;
    const CORPUS_503_LINE_8: &str = "Sep 10 23:59:33   ollama[]: cmn  common_param: device_info:";

    #[test]
    fn journald_without_a_host_or_with_an_empty_host_and_pid() {
        assert_eq!(
            strip(CORPUS_503_LINE_1),
            r#"time=2026-09-10T23:59:32.922Z level=INFO source=sched.go:613 msg="system memory" total="81.5 GiB" free="80.0 GiB" free_swap="8.0 GiB""#
        );
        // The journald prefix goes, then the llama-server tag.
        assert_eq!(strip(CORPUS_503_LINE_8), "common_param: device_info:");
        // No host at all (the shape of the brief; the payload is corpus 503's line 4).
        assert_eq!(
            strip(
                r#"Mar 02 08:15:00 ollama[4321]: time=2026-09-10T23:59:32.922Z level=INFO source=llama_server.go:1295 msg="waiting for llama-server to start responding""#
            ),
            r#"time=2026-09-10T23:59:32.922Z level=INFO source=llama_server.go:1295 msg="waiting for llama-server to start responding""#
        );
        // The identifier right after the time is never taken for a host, so `foo[]: ` stays in the payload.
        assert_eq!(strip("Mar 02 08:15:00 ollama[4321]: foo[]: x"), "foo[]: x");
        // Both paths: the fast one and, for a month it does not know, the regex.
        for line in [
            CORPUS_503_LINE_1,
            CORPUS_503_LINE_8,
            "Mar 02 08:15:00 ollama[4321]: x",
        ] {
            assert!(plain_journald(line.as_bytes(), 160).is_some(), "{line}");
            let catalan =
                line.replacen("Sep 10", "de set. 10", 1)
                    .replacen("Mar 02", "de març 02", 1);
            assert_eq!(strip(&catalan), strip(line), "{catalan}");
        }
        // A bare identifier still needs a pid: `GPU[]: ` at the start of a line is no journald prefix.
        assert_eq!(strip("GPU[]: x"), "GPU[]: x");
    }

    #[test]
    fn journald_without_a_host_keeps_the_payload_indentation() {
        // corpus 503's prefix on an indented llama.cpp line (the payload of founding-k80-gemma3-12b.log:21).
        let (rest, info) = strip_prefixes(
            "Sep 10 23:59:33   ollama[]:   Device 0: Tesla K80, compute capability 3.7, VMM: yes",
        );
        assert_eq!(
            rest,
            "Device 0: Tesla K80, compute capability 3.7, VMM: yes"
        );
        assert!(info.indented);
        assert!(!strip_prefixes(CORPUS_503_LINE_1).1.indented);
        assert!(!strip_prefixes(CORPUS_503_LINE_8).1.indented);
    }

    #[test]
    fn llama_server_component_tags_without_the_elapsed_prefix() {
        // corpus 503, 506 and 511: Ollama >= 0.30 runs llama-server with --no-log-prefix.
        let cases = [
            ("cmn  common_param: device_info:", "common_param: device_info:"),
            (
                "cmn  common_param:   - CPU     : AMD Ryzen 7 5800H with Radeon Graphics (6858 MiB, 6858 MiB free)",
                "common_param:   - CPU     : AMD Ryzen 7 5800H with Radeon Graphics (6858 MiB, 6858 MiB free)",
            ),
            (
                "cmn  common_init_: fitting params to device memory ...",
                "common_init_: fitting params to device memory ...",
            ),
            (
                "srv    load_model: [mtmd] estimated worst-case memory usage of mmproj is 1136.09 MiB (took 21.91 ms)",
                "load_model: [mtmd] estimated worst-case memory usage of mmproj is 1136.09 MiB (took 21.91 ms)",
            ),
            ("srv  llama_server: model loaded", "llama_server: model loaded"),
            (
                "srv         start: binding port with default address family",
                "start: binding port with default address family",
            ),
            (
                "slot   load_model: id  0 | task -1 | new slot, n_ctx = 4096",
                "load_model: id  0 | task -1 | new slot, n_ctx = 4096",
            ),
            (
                "spec common_specu: no implementations specified for speculative decoding",
                "common_specu: no implementations specified for speculative decoding",
            ),
            (
                "cmn          init: llama threadpool init, n_threads = 8",
                "init: llama threadpool init, n_threads = 8",
            ),
            ("srv    operator(): chat format: peg-native", "operator(): chat format: peg-native"),
            ("srv  llama_server: -----------------", "llama_server: -----------------"),
        ];
        for (line, want) in cases {
            assert_eq!(strip(line), want, "{line}");
            // After the `-lv 4` elapsed prefix, the same rule (corpus 044 shape).
            assert_eq!(strip(&format!("0.00.163.006 I {line}")), want, "{line}");
        }
        // corpus 044, lines 2 and 3, as they are.
        assert_eq!(
            strip("0.00.163.006 I cmn  common_param: device_info:"),
            "common_param: device_info:"
        );
        assert_eq!(
            strip("0.00.165.102 I srv  llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true"),
            "llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true"
        );
    }

    #[test]
    fn lines_that_only_look_like_tags_are_untouched() {
        let untouched = [
            // corpus 511:175, 024:5, 511:113, 001:47 and 001:48 (llama.cpp)
            "llama_context: n_ctx                 = 8192",
            "load_tensors: offloaded 81/81 layers to GPU",
            "load: special tokens cache size = 1000",
            "llm_load_print_meta: format           = GGUF V3 (latest)",
            "llm_load_print_meta: arch             = llama",
            // corpus 020:7, 505:1, sample founding-k80-gemma3-12b.log:21 (stripped), 038:8 (nvidia-smi)
            r#"time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA1 size="11.9 GiB""#,
            r#"[GIN] 2026/08/01 - 07:03:02 | 200 |      38.553µs |       127.0.0.1 | GET      "/api/ps""#,
            "Device 0: Tesla K80, compute capability 3.7, VMM: yes",
            "|   0  NVIDIA GeForce RTX 3060        On  |   00000000:01:00.0 Off |                  N/A |",
            // corpus 044:6, a function name longer than the field, without a tag.
            "common_params_fit_impl: getting device memory data for initial parameters:",
            // English with the tag's spacing but no 12-character field ending in `:`.
            "see  the documentation for details: x",
            "srv  llama server: x",
        ];
        for line in untouched {
            assert_eq!(component_tag(line.as_bytes()), None, "{line}");
            assert_eq!(strip(line), line, "{line}");
        }
        let (rest, info) =
            strip_prefixes("  Device 0: Tesla K80, compute capability 3.7, VMM: yes");
        assert_eq!(
            rest,
            "Device 0: Tesla K80, compute capability 3.7, VMM: yes"
        );
        assert!(info.indented);
    }

    #[test]
    fn a_log_pasted_as_shell_comments() {
        // corpus 020:7, 002:128 (`load_tensors:` as in newer builds), founding-k80-gemma3-12b.log:21.
        assert_eq!(
            strip(
                r#"# time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA1 size="11.9 GiB""#
            ),
            r#"time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA1 size="11.9 GiB""#
        );
        assert_eq!(
            strip("# load_tensors:        CUDA0 model buffer size =  4403.49 MiB"),
            "load_tensors:        CUDA0 model buffer size =  4403.49 MiB"
        );
        let (rest, info) =
            strip_prefixes("#   Device 0: Tesla K80, compute capability 3.7, VMM: yes");
        assert_eq!(
            rest,
            "Device 0: Tesla K80, compute capability 3.7, VMM: yes"
        );
        assert!(info.indented, "the payload's own indentation is kept");
        let (rest, info) = strip_prefixes("    # time=2025-07-18T14:50:57.066Z level=INFO");
        assert_eq!(rest, "time=2025-07-18T14:50:57.066Z level=INFO");
        assert!(
            !info.indented,
            "a YAML comment's indentation is not the payload's"
        );
        assert_eq!(strip("#"), "");
        assert_eq!(strip("# "), "");
        // Nested collector prefixes after the marker (corpus 503:8, 506:4).
        assert_eq!(
            strip(&format!("# {CORPUS_503_LINE_8}")),
            "common_param: device_info:"
        );
        assert_eq!(
            strip("# srv    load_model: [mtmd] estimated worst-case memory usage of mmproj is 1136.09 MiB (took 21.91 ms)"),
            "load_model: [mtmd] estimated worst-case memory usage of mmproj is 1136.09 MiB (took 21.91 ms)"
        );
    }

    #[test]
    fn comments_that_are_not_log_lines_keep_their_marker() {
        let kept = [
            // corpus 044:1 (cut here), and nvidia-smi dmon / dmon -s m / pmon headers (docs/log-formats.md §7.4).
            r"# leg2-baseline — argv: <drive>\runtime\llama.cpp\win\llama-server.exe --host 127.0.0.1 --port 52804",
            "# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk",
            "# Idx     W     C     %     %     %     %   MHz   MHz",
            "# gpu    fb  bar1",
            "# gpu        pid  type    sm   mem   enc   dec   command",
            "#!/bin/sh",
            "## Logs",
            "#time=2025-07-18T14:50:57.066Z level=INFO",
        ];
        for line in kept {
            assert_eq!(strip(line), line, "{line}");
        }
    }

    #[test]
    fn plain_journald_agrees_with_the_regex() {
        let mut lines = vec![
            CORPUS_503_LINE_1,
            CORPUS_503_LINE_8,
            "Sep 10 23:59:33   ollama[]: cmn  common_param:   - CPU     : AMD Ryzen 7 5800H with Radeon Graphics (6858 MiB, 6858 MiB free)",
            "Sep 10 23:59:33   ollama[]:",
            "Sep 10 23:59:33   ollama[]:x",
            "Sep 10 23:59:33   ollama[]:   Device 0: Tesla T4",
            "Mar 02 08:15:00 ollama[4321]: time=2026-09-10T23:59:32.922Z level=INFO",
            "Mar 02 08:15:00 ollama[4321]: foo[2]: x",
            "Mar 02 08:15:00 ollama[4321]:\tx",
            "Mar 02 08:15:00 a[1]:b ollama[2]: x",
            "Mar 02 08:15:00 \tollama[1]: x",
            "Mar 02 08:15:00  host   ollama[1]: x",
            "Mar 02 08:15:00 ollamä[1]: foo[2]: x",
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
        // Every sequence of up to four of these tokens after the time: where the fast path answers, it
        // answers as the regex does.
        let tokens = [
            " ",
            "  ",
            "\t",
            "host",
            "ollama[1]:",
            "ollama[]:",
            "a[1]:b",
            "[1]:",
            "x]",
            "foo[2]:",
            ":",
        ];
        let mut accepted = 0;
        let mut stack = vec![(String::from("Mar 02 08:15:00 "), 0)];
        while let Some((line, depth)) = stack.pop() {
            let head = floor_char_boundary(&line, 160);
            if let Some(end) = plain_journald(line.as_bytes(), head) {
                assert_eq!(JOURNALD.find(&line).map(|m| m.end()), Some(end), "{line:?}");
                accepted += 1;
            }
            if depth < 4 {
                stack.extend(tokens.iter().map(|t| (format!("{line}{t}"), depth + 1)));
            }
        }
        assert!(accepted > 1000, "{accepted}");
        // The fast path takes the new shapes itself.
        for line in [
            CORPUS_503_LINE_1,
            CORPUS_503_LINE_8,
            "Sep 10 23:59:33   ollama[]:",
            "Mar 02 08:15:00 ollama[4321]: foo[]: x",
            "Mar 02 08:15:00 a[1]:b ollama[2]: x",
            "Nov 30 06:05:00 host ollama[]: x",
        ] {
            assert!(plain_journald(line.as_bytes(), 160).is_some(), "{line}");
        }
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

    fn framed(line: &str) -> String {
        let mut out = Vec::new();
        let mut framer = super::super::Framer::new();
        framer.push(1, line.as_bytes(), |_, l| out.push(l.to_string()));
        framer.finish(|_, l| out.push(l.to_string()));
        out.concat()
    }

    #[test]
    fn vllm_prefixes_keep_the_rank_as_a_tag() {
        // `sample-logs/808-…-util-advisory.log:2`, `…/804-…:102`, `…/809-…:3`, `…/810-…:6`.
        assert_eq!(
            framed("(Worker_TP1 pid=448) INFO 08-14 14:07:22 [gpu_model_runner.py:6806] Estimated CUDA graph memory: 0.36 GiB total"),
            "[rank=TP1] Estimated CUDA graph memory: 0.36 GiB total"
        );
        assert_eq!(
            framed("(Worker_DP1_TP1_EP3 pid=3585771) INFO 08-19 05:56:57 [gpu_model_runner.py:6936] Estimated CUDA graph memory: 118.65 GiB total"),
            "[rank=DP1_TP1_EP3] Estimated CUDA graph memory: 118.65 GiB total"
        );
        assert_eq!(
            framed("(VllmWorkerProcess pid=13105) INFO 08-19 07:51:03 model_runner.py:732] Loading model weights took 2.3463 GB"),
            "[rank=pid13105] Loading model weights took 2.3463 GB"
        );
        assert_eq!(
            framed("(VllmWorker rank=1 pid=448) INFO 08-14 14:07:22 [gpu_worker.py:563] Available KV cache memory: 6.87 GiB"),
            "[rank=rank1] Available KV cache memory: 6.87 GiB"
        );
        // Names with a bare rank number, and Ray's workers with their node's address (census/vllm.tsv sources).
        assert_eq!(
            framed("(Worker_3 pid=448) INFO 08-14 14:07:22 [gpu_worker.py:563] Available KV cache memory: 6.87 GiB"),
            "[rank=rank3] Available KV cache memory: 6.87 GiB"
        );
        assert_eq!(
            framed("(VllmWorker-1 pid=448) INFO 08-14 14:07:22 [gpu_worker.py:563] Available KV cache memory: 6.87 GiB"),
            "[rank=rank1] Available KV cache memory: 6.87 GiB"
        );
        assert_eq!(
            framed("(RayWorkerWrapper pid=36405, ip=192.168.1.11) INFO 08-14 14:07:22 worker.py:243] # GPU blocks: 22982, # CPU blocks: 6241"),
            "[rank=pid36405] # GPU blocks: 22982, # CPU blocks: 6241"
        );
        // The engine core is its data-parallel rank, however the release named it (`load::serving` decides
        // whether it is a GPU of its own); the API server is no rank; V0's logger without brackets; the source
        // alone.
        assert_eq!(
            strip("(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 973,760 tokens"),
            "GPU KV cache size: 973,760 tokens"
        );
        for (name, tag) in [
            ("EngineCore_DP0", ""),
            ("EngineCore_0", ""),
            ("EngineCore_DP3", "[rank=EngineCore_DP3] "),
            ("EngineCore_3", "[rank=EngineCore_DP3] "),
            ("DPEngineCoreActor_DP3", "[rank=EngineCore_DP3] "),
            ("EngineCore", ""),
            ("APIServer", ""),
        ] {
            assert_eq!(
                framed(&format!("({name} pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 973,760 tokens")),
                format!("{tag}GPU KV cache size: 973,760 tokens")
            );
        }
        assert_eq!(
            strip("INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB"),
            "total_gpu_memory     79.22GiB"
        );
        assert_eq!(
            strip("[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup"),
            "ValueError: Free memory on device (31.44/47.38 GiB) on startup"
        );
        // Docker's stamp and colour before them (the shapes `docker logs --timestamps` and a TTY give).
        assert_eq!(
            framed("2026-05-03T17:54:32.123456789Z \x1b[1;36m(EngineCore pid=125)\x1b[0;0m INFO 05-03 17:54:32 [gpu_worker.py:440] Available KV cache memory: 66.93 GiB"),
            "Available KV cache memory: 66.93 GiB"
        );
    }

    #[test]
    fn sglang_prefixes_keep_the_rank_as_a_tag() {
        // `sample-logs/811-…:54`, `…/812-…:4`, `…/813-…:1`, and 811:63 where a tqdm redraw precedes the record.
        assert_eq!(
            framed("[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB"),
            "[rank=TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB"
        );
        assert_eq!(
            framed("[2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB."),
            "[rank=DP0_TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB."
        );
        assert_eq!(
            framed("[2026-07-15 13:14:54] Memory pool end. avail mem=74.01 GB"),
            "Memory pool end. avail mem=74.01 GB"
        );
        assert_eq!(
            framed("  0%|          | 0/13 [00:00<?, ?it/s][2025-03-08 12:29:21 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=1.45 GB"),
            "[rank=TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=1.45 GB"
        );
        // A bar alone stays; a bracket that is no SGLang stamp stays.
        assert_eq!(
            strip("100%|##| 13/13 [00:07<00:00,  1.80it/s]"),
            "100%|##| 13/13 [00:07<00:00,  1.80it/s]"
        );
        assert_eq!(
            strip("[2025-03-08] not a stamp"),
            "[2025-03-08] not a stamp"
        );
        // Milliseconds (`SGLANG_LOG_MS`) and every rank word of 0.5.10+ (census `census/sglang.tsv`).
        assert_eq!(
            framed("[2026-10-30 08:01:02.345 DP1 PP0 ATTN_CP0 MOE_DP0 TP3 EP3] Load weight end. type=X, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=16.59 GB."),
            "[rank=DP1_PP0_ATTN_CP0_MOE_DP0_TP3_EP3] Load weight end. type=X, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=16.59 GB."
        );
        // Builds of 2024 print the time without the date (`sample-logs/1039-…:1`, `:18`).
        assert_eq!(
            framed("[23:17:01 TP7] Load weight end. type=DeepseekV2ForCausalLM, dtype=torch.bfloat16, avail mem=22.01 GB"),
            "[rank=TP7] Load weight end. type=DeepseekV2ForCausalLM, dtype=torch.bfloat16, avail mem=22.01 GB"
        );
        assert_eq!(
            framed("[23:17:08 TP4] Exception in run_tp_server:"),
            "[rank=TP4] Exception in run_tp_server:"
        );
    }

    #[test]
    fn vllm_pipeline_workers_and_pasted_colours_keep_the_rank() {
        // `docs/log-formats.md` §8: a pipeline stage's worker (`(Worker_PP6 pid=…)`), a plain `(Worker pid=…)`,
        // and the colour codes a terminal shows in caret form when the text is pasted (`^[[1;36m`), around
        // `sample-logs/1032-…:3`'s line.
        assert_eq!(
            framed("(Worker_PP6 pid=646936) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.30 GiB total"),
            "[rank=PP6] Estimated CUDA graph memory: 4.30 GiB total"
        );
        assert_eq!(
            framed("(Worker pid=646817) INFO 03-17 17:07:06 [gpu_worker.py:452] Available KV cache memory: 25.46 GiB"),
            "[rank=pid646817] Available KV cache memory: 25.46 GiB"
        );
        assert_eq!(
            framed("^[[1;36m(Worker_TP0 pid=646817)^[[0;0m INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.38 GiB total"),
            "[rank=TP0] Estimated CUDA graph memory: 4.38 GiB total"
        );
        // journald's prefix in another locale before them (`déc.`, `Mär`), and before SGLang's dateless stamp.
        assert_eq!(
            framed("déc. 03 17:07:06 gpu-box vllm[646936]: (Worker_TP1 pid=646936) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.30 GiB total"),
            "[rank=TP1] Estimated CUDA graph memory: 4.30 GiB total"
        );
        assert_eq!(
            framed("Mär 03 17:07:07 gpu-box python[11]: [23:17:01 TP3] Memory pool end. avail mem=18.66 GB"),
            "[rank=TP3] Memory pool end. avail mem=18.66 GB"
        );
        // A caret that is no escape stays.
        assert_eq!(strip_ansi("x^[y ^ [[z"), "x^[y ^ [[z");
    }
}
