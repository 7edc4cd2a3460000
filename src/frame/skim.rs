//! Which physical lines can matter at all, decided on whole read buffers: the literals whose absence proves
//! that framing a line, and handing it on, would change nothing but the line count.
//!
//! Most of a multi-GB log is lines nobody reads (access logs, chatter, progress dots). [`super::read`] searches
//! each read buffer once for every literal in a [`Skim`] (one SIMD multi-literal search, `crate::prefilter`)
//! and frames only the lines a literal occurs in, plus the neighbours framing or its consumer needs; the
//! lines between are counted (their newlines) and never decoded. A line may be skipped only when feeding it
//! would have done nothing, which holds when all of these do:
//!
//! * **The consumer's literals** are absent: for the pipeline, every grammar anchor and memory word (a line
//!   without them matches no rule and is not memory-like, `crate::parse`) and the literals that start a GPU
//!   capture in a log (`crate::smi`).
//! * **Framing's own literals** are absent ([`FRAMING_LITERALS`], [`super::source_file::name_literals`]): a
//!   line that starts a Go slog record (`time=`, `level=`: the framer holds it for joining, and the log
//!   boundary clock, `crate::parse::clock`, reads its `time=`), an ANSI escape (removing it can make a literal
//!   appear), a NUL byte (the stream's first one is reported), a file name with a log extension or a `==> `
//!   header (where a file of a paste starts), a Docker `json-file` object (decoding its escapes can make a
//!   literal appear) or a CRI partial piece (the literal may begin in it and end in the next). Prefix stripping only removes bytes at the front of a line and
//!   the lossy UTF-8 decoding only replaces invalid bytes, so neither can make a literal appear.
//! * **Nothing is open**: the framer holds no record that the line could continue and has learnt no
//!   hard-wrap width that a longer line would reset ([`super::Framer::is_quiet`]), and the consumer says it
//!   needs only candidate lines (`Wants::Candidates` in [`super::read`]: no capture open, no capture prelude).
//!   Otherwise the next line is framed whatever it holds.
//! * **No look-back is needed**: an nvidia-smi table start uses the date line and the top border above it,
//!   which other writers' lines may have come between, so the [`Skim::lookback_lines`] lines before a line
//!   holding one of the [`Skim`]'s look-back literals are framed first (as many lines at the end of every
//!   read buffer are always framed, so they never lie in a buffer already gone). A date line holds no
//!   literal to search for, and whether a table follows it is known only at the table's first line: the
//!   look-back is how the skim keeps it, bounded by the consumer's count.

use crate::prefilter::{LineFilter, LineFilterBuilder};

/// The literals framing itself needs to see (besides the file names of [`super::source_file::name_literals`]):
/// the starts of the records the framer can join lines onto ([`super::join::can_be_continued`]; `time=` is
/// also the log boundary clock's), an ANSI escape ([`super::prefix::strip_ansi`]), a NUL byte (reported with
/// the stream's facts), the `==> ` of a `head`/`tail` header ([`super::source_file::header`]), and the
/// envelopes that change a line's bytes or split it: Docker's `json-file` object (its escapes hide literals,
/// [`super::envelope`]) and a CRI node log's partial piece (a literal may straddle two pieces).
pub const FRAMING_LITERALS: [&str; 8] = [
    "time=",
    "level=",
    "\x1b",
    "\0",
    "==> ",
    "{\"log\":\"",
    " stderr P ",
    " stdout P ",
];

/// Shorter literals that stand for every literal containing them (the search drops a literal that contains
/// another): `msg=` stands for the many anchors of Go slog messages (`msg="offload to gpu"` …). Every line
/// holding one of those anchors holds `msg=`, and the lines holding `msg=` are slog records, framed anyway
/// for their `time=`, so nothing more is framed and the search has some forty keys fewer (fewer keys per
/// Teddy bucket, fewer false hits to verify).
pub const COVERING_LITERALS: [&str; 1] = ["msg="];

/// The literal search that picks candidate lines out of a read buffer (see the module doc).
///
/// The file names' 32 spellings (`.log`, `.LOG` …) are searched with the other literals, in one search: a
/// Teddy searcher costs a pass over every byte however few keys it has, and a searcher of their own was a
/// fifth of the skim's instructions (`docs/performance.md`, Speed II, fourth stop).
#[derive(Debug, Clone)]
pub struct Skim {
    filter: LineFilter,
    lookback: Vec<memchr::memmem::Finder<'static>>,
    lookback_lines: usize,
}

impl Skim {
    /// A skim for a consumer that needs the lines holding one of `literals`, and the `lookback_lines` lines
    /// before each line holding one of `lookback` (which count as literals too). Framing's own literals are
    /// added here.
    pub fn new<'a>(
        literals: impl IntoIterator<Item = &'a str>,
        lookback: impl IntoIterator<Item = &'a str>,
        lookback_lines: usize,
    ) -> Skim {
        let lookback: Vec<&str> = lookback.into_iter().filter(|l| !l.is_empty()).collect();
        let filter = LineFilterBuilder::new()
            .add(1, literals)
            .add(1, FRAMING_LITERALS)
            .add(1, COVERING_LITERALS)
            .add(1, lookback.iter().copied())
            .add(1, super::source_file::name_literals())
            .build();
        Skim {
            filter,
            lookback: lookback
                .iter()
                .map(|l| memchr::memmem::Finder::new(l.as_bytes()).into_owned())
                .collect(),
            lookback_lines,
        }
    }

    /// True when the search is vectorised (Teddy), not the scalar automaton that a grammar with too many
    /// anchors for Teddy would get (several times slower).
    pub fn is_vectorised(&self) -> bool {
        self.filter.is_vectorised()
    }

    /// The search over one read buffer: the literals and the file names.
    pub(super) fn filter(&self) -> &LineFilter {
        &self.filter
    }

    /// True when `line` holds one of the skim's literals or file names (one line's search, for the tests).
    #[cfg(test)]
    fn holds_literal(&self, line: &[u8]) -> bool {
        self.filter.scan(line).possible != 0
    }

    /// How many lines before a line holding a look-back literal are framed before it.
    pub fn lookback_lines(&self) -> usize {
        self.lookback_lines
    }

    /// How many look-back literals there are.
    pub(super) fn lookback_literals(&self) -> usize {
        self.lookback.len()
    }

    /// Where look-back literal `k` first occurs in `block`.
    pub(super) fn find_lookback(&self, k: usize, block: &[u8]) -> Option<usize> {
        self.lookback[k].find(block)
    }

    /// True when the [`Skim::lookback_lines`] lines before `line` must be framed before it (it holds a
    /// look-back literal).
    pub(super) fn needs_lookback(&self, line: &[u8]) -> bool {
        self.lookback.iter().any(|f| f.find(line).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_literals_and_file_names_are_candidates() {
        let skim = Skim::new(["buffer size ="], ["NVIDIA-SMI"], 2);
        for line in [
            "load_tensors: CUDA0 model buffer size =  4403.49 MiB",
            "Aug 22 17:36:22 amobile ollama[30907]: time=2025-08-22T17:36:22.027-04:00 level=INFO",
            "level=INFO source=server.go:168",
            "\x1b[32mINFO\x1b[0m",
            "bad\0line",
            "==> /var/log/ollama/server.log <==",
            "SERVER.LOG:whatever",
            "raw-log-ctx2048.Txt-13-x",
            "| NVIDIA-SMI 535.183.01 |",
        ] {
            assert!(skim.holds_literal(line.as_bytes()), "{line:?}");
        }
        for line in [
            "[GIN] 2025/07/31 - 08:32:16 | 200 | 1.2s | POST \"/api/chat\"",
            "Nov 30 06:05:00 gpuhost kernel: nvidia-uvm: Loaded the UVM driver, major device number 235.",
            "....................",
        ] {
            assert!(!skim.holds_literal(line.as_bytes()), "{line}");
        }
        assert!(skim.needs_lookback(b"| NVIDIA-SMI 535.183.01 |"));
        assert!(!skim.needs_lookback(b"load_tensors: buffer size = 1 MiB"));
    }
}
