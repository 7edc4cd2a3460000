//! Reading a whole stream as logical lines: the physical lines of each read buffer (at most 1 MiB each),
//! framed, and the facts about the stream a report needs — lines read, lines cut, the first NUL byte, lines
//! joined, a read error. Logs and capture files are both read this way.
//!
//! With a [`Skim`] ([`read_skimmed_lines`]), each read buffer is searched once for the skim's literals and
//! only the lines that can matter are framed (see [`super::skim`] for why the others cannot): the lines
//! between are counted by their newlines and never decoded, so line numbers stay exact. A line that does not
//! end inside one read buffer is gathered (up to [`MAX_LINE_BYTES`], the rest counted as cut) and always
//! framed, as are the last two whole lines of every buffer. Without a skim ([`read_logical_lines`]) every
//! line is framed.

use std::io::BufRead;

use super::skim::Skim;
use super::{Framed, Framer};
use crate::source::follow::Quiet;
use crate::source::MAX_LINE_BYTES;

/// At most this much of a read buffer is searched at once (a reader over a slice hands out all of it): every
/// line inside it is shorter than [`MAX_LINE_BYTES`], so only a line gathered across buffers can be cut.
const WINDOW_BYTES: usize = 256 * 1024;

/// What reading a stream found out about it.
#[derive(Debug, Default)]
pub struct StreamFacts {
    /// Physical lines read.
    pub lines: u64,
    /// Physical lines joined onto the line before them (re-wrapped pastes).
    pub joined_lines: u64,
    /// The first physical line holding a NUL byte: text logs have none, binary files and UTF-16 without a
    /// byte-order mark are full of them.
    pub first_nul: Option<u64>,
    /// The read error that stopped the stream, if one did.
    pub error: Option<std::io::Error>,
}

/// What a stream reader hands out as it goes, in input order.
#[derive(Debug)]
pub enum Read<'a> {
    /// A logical line (prefixes stripped, re-wrapped lines joined) and the physical line it starts on.
    Line(u64, &'a str),
    /// A line longer than the reader keeps: `skipped` bytes of line `line` were dropped.
    CutLine { line: u64, skipped: u64 },
    /// Another file of a paste starts at physical line `line` (see [`super::Framed::FileStarts`]); the lines
    /// handed out after this are the file `name`'s.
    FileStarts { line: u64, name: &'a str },
    /// The lines handed out after this come from another process of a llama-server router (see
    /// [`super::Framed::Process`]): the child `pid`, or the router itself.
    Process { line: u64, pid: Option<&'a str> },
    /// The logical line handed out next, which starts on physical line `line`, ends where a terminal cut a
    /// figure at `width` columns and the rest was not joined on (see [`super::Framed::Cut`]).
    WrapCut { line: u64, width: usize },
    /// A followed stream has no more data for now (its reader said [`Quiet`] between two lines): the line
    /// held back for joining was handed out before this, and whatever is complete can be reported.
    Idle,
}

/// What the consumer of [`read_skimmed_lines`] needs after what it was just handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wants {
    /// Only the lines holding one of the skim's literals: no other line can change the consumer's state.
    Candidates,
    /// The next physical line, whatever it holds (the consumer has something open that any line may
    /// continue or close, such as a GPU capture).
    NextLine,
}

/// Read `reader` to its end, handing every logical line and notice to `on`, in input order.
///
/// A reader that follows a growing stream ([`crate::source::follow`]) returns [`Quiet`] between two whole lines
/// when it has nothing more for now: the framer's held line is flushed (a live log is not re-wrapped, so
/// nothing will join onto it) and `on` gets [`Read::Idle`]; reading then goes on.
pub fn read_logical_lines(reader: impl BufRead, mut on: impl FnMut(Read<'_>)) -> StreamFacts {
    Lines::new(None, move |read| {
        on(read);
        Wants::NextLine
    })
    .read(reader)
}

/// Read `reader` to its end like [`read_logical_lines`], but frame only the lines that hold one of `skim`'s
/// literals, the neighbours framing needs, and every line while `on`'s last answer was [`Wants::NextLine`]
/// (see [`super::skim`]). `on` sees what [`read_logical_lines`] would hand it, except the logical lines that
/// could not change its state.
pub fn read_skimmed_lines(
    reader: impl BufRead,
    skim: &Skim,
    on: impl FnMut(Read<'_>) -> Wants,
) -> StreamFacts {
    Lines::new(Some(skim), on).read(reader)
}

/// Where the line `n` lines before the one starting at `start` in `block` starts (each line of `block` ends
/// with a newline), going back no further than `floor`, a line start.
fn lines_back(block: &[u8], mut start: usize, floor: usize, n: usize) -> usize {
    for _ in 0..n {
        if start <= floor {
            break;
        }
        start = memchr::memrchr(b'\n', &block[floor..start - 1]).map_or(floor, |i| floor + i + 1);
    }
    start
}

/// The next line of a block that holds one of a [`Skim`]'s look-back literals, and where the lines it needs
/// framed before it start: a bounded look-ahead for the candidate lines before it. A table's first line
/// needs its date line, which holds no literal, and other writers' lines between the two may be candidates
/// themselves; the skim would frame such a line and skip the date line above it before the table's first
/// line showed that the date line was needed. Each look-back literal is searched for once per block (its
/// next occurrence remembered until the reading passes it), so a hit costs a compare.
#[derive(Debug, Default)]
struct LookbackAhead {
    /// Per look-back literal: not searched yet (`None`), or its next occurrence (`Some(None)`: none left).
    next: Vec<Option<Option<usize>>>,
    /// The next look-back line: where it ends, and where the lines it needs start.
    line: Option<(usize, usize)>,
}

impl LookbackAhead {
    /// Where the lines needed by the next look-back line at or after `pos` start (`None`: no look-back line
    /// follows in `block`).
    fn window(&mut self, skim: &Skim, block: &[u8], pos: usize) -> Option<usize> {
        if let Some((end, window)) = self.line {
            if end >= pos {
                return Some(window);
            }
        }
        self.next.resize(skim.lookback_literals(), None);
        let mut first = None;
        for (k, next) in self.next.iter_mut().enumerate() {
            if next.is_none() || matches!(next, Some(Some(at)) if *at < pos) {
                *next = Some(skim.find_lookback(k, &block[pos..]).map(|at| pos + at));
            }
            if let Some(Some(at)) = *next {
                first = Some(first.map_or(at, |f: usize| f.min(at)));
            }
        }
        let at = first?;
        let start = memchr::memrchr(b'\n', &block[..at]).map_or(0, |i| i + 1);
        let end = at + memchr::memchr(b'\n', &block[at..]).unwrap_or(block.len() - at);
        let window = lines_back(block, start, 0, skim.lookback_lines());
        self.line = Some((end, window));
        Some(window)
    }
}

/// The reading state of one stream.
struct Lines<'s, F> {
    skim: Option<&'s Skim>,
    on: F,
    framer: Framer,
    facts: StreamFacts,
    /// The number of the last physical line read.
    number: u64,
    /// The consumer's last answer.
    wants: Wants,
    /// A line whose end is not in the buffers read so far: its first [`MAX_LINE_BYTES`], and how many bytes
    /// after those were dropped.
    gathered: Vec<u8>,
    gathered_cut: u64,
    gathering: bool,
}

impl<'s, F: FnMut(Read<'_>) -> Wants> Lines<'s, F> {
    fn new(skim: Option<&'s Skim>, on: F) -> Self {
        Lines {
            skim,
            on,
            framer: Framer::new(),
            facts: StreamFacts::default(),
            number: 0,
            wants: Wants::Candidates,
            gathered: Vec::new(),
            gathered_cut: 0,
            gathering: false,
        }
    }

    fn read(mut self, mut reader: impl BufRead) -> StreamFacts {
        loop {
            let buf = match reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if Quiet::is(&e) => {
                    let on = &mut self.on;
                    let wants = &mut self.wants;
                    self.framer
                        .finish(|n, text| *wants = on(Read::Line(n, text)));
                    self.wants = (self.on)(Read::Idle);
                    continue;
                }
                Err(e) => {
                    self.facts.error = Some(e);
                    break;
                }
            };
            if buf.is_empty() {
                break;
            }
            let window = &buf[..buf.len().min(WINDOW_BYTES)];
            let mut used = 0;
            if self.gathering {
                let Some(end) = memchr::memchr(b'\n', window) else {
                    self.gather(window);
                    let n = window.len();
                    reader.consume(n);
                    continue;
                };
                self.gather(&window[..end]);
                self.finish_gathered();
                used = end + 1;
            }
            let rest = &window[used..];
            match memchr::memrchr(b'\n', rest) {
                Some(last) => {
                    self.block(&rest[..=last]);
                    used += last + 1;
                }
                None if rest.is_empty() => {}
                None => {
                    self.gathering = true;
                    self.gather(rest);
                    used += rest.len();
                }
            }
            reader.consume(used);
        }
        if self.gathering {
            // The last line, without a newline.
            self.finish_gathered();
        }
        let on = &mut self.on;
        self.framer.finish(|n, text| {
            on(Read::Line(n, text));
        });
        self.facts.joined_lines = self.framer.joined_lines;
        self.facts
    }

    /// Add a piece of the line being gathered, keeping at most [`MAX_LINE_BYTES`].
    fn gather(&mut self, piece: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.gathered.len());
        let keep = piece.len().min(room);
        self.gathered.extend_from_slice(&piece[..keep]);
        self.gathered_cut += (piece.len() - keep) as u64;
    }

    /// The gathered line is whole: frame it.
    fn finish_gathered(&mut self) {
        let mut line = std::mem::take(&mut self.gathered);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let cut = std::mem::take(&mut self.gathered_cut);
        self.frame(&line, cut);
        line.clear();
        self.gathered = line;
        self.gathering = false;
    }

    /// Frame the whole lines of `block` (each ends with a newline) that can matter, and count the others.
    fn block(&mut self, block: &[u8]) {
        let Some(skim) = self.skim else {
            return self.frame_lines(block);
        };
        // The last look-back's worth of lines are always framed: a look-back never needs a line of a buffer
        // already gone.
        let lookback = skim.lookback_lines();
        let mut tail = lines_back(block, block.len(), 0, lookback);
        // A look-back literal in those lines needs the lines before it framed too (the search below only
        // looks back from the lines before the tail), and so on for the lines taken in: a table header last
        // but one in a buffer keeps its date line wherever the buffer happens to end (a UTF-16 log is
        // decoded in 4 KiB buffers).
        let mut taken_in = block.len();
        while tail > 0 && skim.needs_lookback(&block[tail..taken_in]) {
            taken_in = tail;
            tail = lines_back(block, tail, 0, lookback);
        }
        let mut literals = skim.filter().block(&block[..tail]);
        let mut ahead = LookbackAhead::default();
        let mut pos = 0;
        while pos < tail {
            if !self.is_quiet() {
                let end = pos + memchr::memchr(b'\n', &block[pos..]).unwrap_or(block.len() - pos);
                self.frame_raw(&block[pos..end]);
                pos = end + 1;
                continue;
            }
            let Some(hit) = literals.next_from(pos) else {
                self.skip(&block[pos..tail]);
                pos = tail;
                break;
            };
            let mut start = memchr::memrchr(b'\n', &block[pos..hit]).map_or(pos, |i| pos + i + 1);
            let end = hit + memchr::memchr(b'\n', &block[hit..]).unwrap_or(block.len() - hit);
            // The lines a look-back needs (this hit's own, or that of a look-back line a few lines further
            // on, whose window holds this hit and lines above it) are framed from the window's start.
            if let Some(window) = ahead.window(skim, &block[..tail], pos) {
                start = start.min(window.max(pos));
            }
            self.skip(&block[pos..start]);
            self.frame_lines(&block[start..=end]);
            pos = end + 1;
        }
        self.frame_lines(&block[pos.max(tail)..]);
    }

    /// True when a line holding none of the skim's literals would change nothing (see [`super::skim`]).
    fn is_quiet(&self) -> bool {
        self.wants == Wants::Candidates && self.framer.is_quiet()
    }

    /// Count the whole lines of `span` as read, without framing them, except a line as wide as a terminal
    /// ([`super::Framer::holds_for_wrap`]): the framer holds it as the first piece of a possible hard wrap,
    /// whose cut may have split the very literal the skim looks for, so it and the lines after it, while
    /// the framer holds something, are framed.
    fn skip(&mut self, span: &[u8]) {
        let mut pos = 0;
        for end in memchr::memchr_iter(b'\n', span) {
            let line = &span[pos..end];
            pos = end + 1;
            if self.is_quiet() && !Framer::holds_for_wrap(line) {
                self.number += 1;
            } else {
                self.frame_raw(line);
            }
        }
        self.facts.lines = self.number;
    }

    /// Frame every whole line of `lines` (each ends with a newline).
    fn frame_lines(&mut self, lines: &[u8]) {
        let mut pos = 0;
        while pos < lines.len() {
            let end = pos + memchr::memchr(b'\n', &lines[pos..]).unwrap_or(lines.len() - pos);
            self.frame_raw(&lines[pos..end]);
            pos = end + 1;
        }
    }

    /// Frame one whole line as read (a carriage return before its newline is dropped).
    fn frame_raw(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.frame(line, 0);
    }

    /// Frame the next physical line; `cut` bytes were dropped off its end.
    fn frame(&mut self, line: &[u8], cut: u64) {
        self.number += 1;
        let number = self.number;
        self.facts.lines = number;
        if cut > 0 {
            self.wants = (self.on)(Read::CutLine {
                line: number,
                skipped: cut,
            });
        }
        if self.facts.first_nul.is_none() && memchr::memchr(0, line).is_some() {
            self.facts.first_nul = Some(number);
        }
        let on = &mut self.on;
        let wants = &mut self.wants;
        self.framer.feed(number, line, |framed| {
            *wants = match framed {
                Framed::Line(n, text) => on(Read::Line(n, text)),
                Framed::FileStarts { line, name } => on(Read::FileStarts { line, name }),
                Framed::Process { line, pid } => on(Read::Process { line, pid }),
                Framed::Cut { line, width } => on(Read::WrapCut { line, width }),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_framed_and_counted() {
        // corpus 016's journald prefix, a NUL byte, and a re-wrapped record (corpus 015's shape).
        let text = b"Aug 22 17:36:22 amobile ollama[30907]: load_tensors: offloaded 48/49 layers to GPU\nbad\0line\ntime=2025-02-18T02:29:51.627Z level=INFO msg=offload layers.model=81 \n  layers.offload=44\n";
        let mut seen = Vec::new();
        let facts = read_logical_lines(&text[..], |read| {
            if let Read::Line(n, l) = read {
                seen.push((n, l.to_string()))
            }
        });
        assert_eq!(facts.lines, 4);
        assert_eq!(facts.first_nul, Some(2));
        assert_eq!(facts.joined_lines, 1);
        assert_eq!(
            seen[0],
            (1, "load_tensors: offloaded 48/49 layers to GPU".to_string())
        );
        assert!(seen[2].1.ends_with("layers.model=81 layers.offload=44"));
    }

    /// Hands out its pieces in turn; an empty piece is a pause, as `source::follow` makes when a file is drained.
    struct Pausing(std::collections::VecDeque<&'static [u8]>);

    impl std::io::Read for Pausing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.pop_front() {
                None => Ok(0),
                Some([]) => Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, Quiet)),
                Some(piece) => {
                    buf[..piece.len()].copy_from_slice(piece);
                    Ok(piece.len())
                }
            }
        }
    }

    #[test]
    fn a_pause_hands_out_the_held_line_then_says_idle() {
        // corpus 016:2 without its prefix (a record the framer holds back, as more could join it), then the
        // founding log's closing line.
        let offload: &[u8] = b"time=2025-08-22T17:36:22.027-04:00 level=INFO source=server.go:175 msg=offload library=cuda layers.requested=-1 layers.model=49\n";
        let started: &[u8] = b"time=2025-07-20T09:43:48.058+08:00 level=INFO source=server.go:637 msg=\"llama runner started in 21.82 seconds\"\n";
        let reader = Pausing([offload, &[][..], started].into_iter().collect());
        let mut seen = Vec::new();
        read_logical_lines(std::io::BufReader::new(reader), |read| match read {
            Read::Line(n, _) => seen.push(format!("line {n}")),
            Read::Idle => seen.push("idle".to_string()),
            Read::CutLine { .. } => seen.push("cut".to_string()),
            Read::FileStarts { .. } => seen.push("file".to_string()),
            Read::Process { .. } => seen.push("process".to_string()),
            Read::WrapCut { .. } => seen.push("wrap cut".to_string()),
        });
        assert_eq!(seen, ["line 1", "idle", "line 2"]);
    }

    #[test]
    fn a_would_block_of_another_kind_is_a_read_error() {
        struct NonBlocking;
        impl std::io::Read for NonBlocking {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::WouldBlock.into())
            }
        }
        let facts = read_logical_lines(std::io::BufReader::new(NonBlocking), |_| {});
        assert!(facts.error.is_some());
    }
}
