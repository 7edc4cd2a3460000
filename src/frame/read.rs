//! Reading a whole stream as logical lines: the physical lines `source` cuts (at most 1 MiB each), framed one
//! by one, and the facts about the stream a report needs — lines read, lines cut, the first NUL byte, lines
//! joined, a read error. Logs and capture files are both read this way.

use std::io::BufRead;

use super::{Framed, Framer};
use crate::source::follow::Quiet;
use crate::source::{LineReader, PhysicalLine};

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
pub enum Read<'a> {
    /// A logical line (prefixes stripped, re-wrapped lines joined) and the physical line it starts on.
    Line(u64, &'a str),
    /// A line longer than the reader keeps: `skipped` bytes of line `line` were dropped.
    CutLine { line: u64, skipped: u64 },
    /// Another file of a paste starts at physical line `line` (see [`super::Framed::FileStarts`]); the lines
    /// handed out after this are the file `name`'s.
    FileStarts { line: u64, name: &'a str },
    /// A followed stream has no more data for now (its reader said [`Quiet`] between two lines): the line
    /// held back for joining was handed out before this, and whatever is complete can be reported.
    Idle,
}

/// Read `reader` to its end, handing every logical line and notice to `on`, in input order.
///
/// A reader that follows a growing stream ([`crate::source::follow`]) returns [`Quiet`] between two whole lines
/// when it has nothing more for now: the framer's held line is flushed (a live log is not re-wrapped, so
/// nothing will join onto it) and `on` gets [`Read::Idle`]; reading then goes on.
pub fn read_logical_lines(reader: impl BufRead, mut on: impl FnMut(Read<'_>)) -> StreamFacts {
    let mut lines = LineReader::new(reader);
    let mut physical = PhysicalLine::default();
    let mut framer = Framer::new();
    let mut facts = StreamFacts::default();
    loop {
        match lines.next_line(&mut physical) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if Quiet::is(&e) => {
                framer.finish(|n, text| on(Read::Line(n, text)));
                on(Read::Idle);
                continue;
            }
            Err(e) => {
                facts.error = Some(e);
                break;
            }
        }
        facts.lines = physical.number;
        if physical.cut_bytes > 0 {
            on(Read::CutLine {
                line: physical.number,
                skipped: physical.cut_bytes,
            });
        }
        if facts.first_nul.is_none() && memchr::memchr(0, &physical.bytes).is_some() {
            facts.first_nul = Some(physical.number);
        }
        framer.feed(physical.number, &physical.bytes, |framed| match framed {
            Framed::Line(n, text) => on(Read::Line(n, text)),
            Framed::FileStarts { line, name } => on(Read::FileStarts { line, name }),
        });
    }
    framer.finish(|n, text| on(Read::Line(n, text)));
    facts.joined_lines = framer.joined_lines;
    facts
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
