//! Framed lines handed on in batches, each batch's lines scanned for the parser's literals in one search
//! (`LineFilter::scan_lines`) rather than one search a line: a searcher's set-up is paid once a hit instead of
//! once a line, and the framed lines of a server log are short (`docs/performance.md`, Speed II).
//!
//! A batch is framed before any of its lines reaches the consumer, so the consumer's answer after each line
//! ([`Wants`]) is known without it: [`Mirror`] keeps a capture scanner of its own, fed the same lines. The
//! reading thread of `super::read_ahead` fills batches this way on a core of its own; [`read_in_batches`]
//! does it on the calling thread (one core, `batch`'s threads, `--follow`). A batch is handed on when full,
//! when the input pauses ([`Read::Idle`]: a followed log reports what it has at once) and at the end.

use std::io::BufRead;

use crate::frame::read::{read_skimmed_lines, Read, StreamFacts, Wants};
use crate::frame::skim::Skim;
use crate::prefilter::{Hits, LineFilter};
use crate::smi::SmiScanner;

/// Read `reader` like [`read_skimmed_lines`], on the calling thread, handing `on` the same items in the same
/// order, each line with what `scan` finds in it: a batch of lines is framed, scanned in one search and then
/// handed on (see the module doc).
pub fn read_in_batches(
    reader: impl BufRead,
    skim: &Skim,
    scan: &LineFilter,
    mut on: impl FnMut(Read<'_>, Option<Hits>),
) -> StreamFacts {
    let mut mirror = Mirror::new();
    let mut batch = Batch::default();
    let mut hand_on = |batch: &mut Batch| {
        if batch.is_empty() {
            return;
        }
        batch.scan(scan);
        batch.replay(&mut on);
        batch.clear();
    };
    let facts = read_skimmed_lines(reader, skim, |read| {
        let wants = mirror.wants_after(&read);
        let idle = matches!(read, Read::Idle);
        batch.push(&read);
        if idle || batch.is_full() {
            hand_on(&mut batch);
        }
        wants
    });
    hand_on(&mut batch);
    facts
}

/// A batch is handed over once it holds this much line text (or [`BATCH_ITEMS`] items): large enough that the
/// hand-over costs nothing beside the lines, small enough to stay in cache.
const BATCH_BYTES: usize = 64 * 1024;

/// A batch is handed over once it holds this many items.
const BATCH_ITEMS: usize = 1024;

/// A batch whose text grew past this (one very long line) is not kept for reuse: memory goes back to what
/// ordinary batches need.
const KEPT_CAPACITY: usize = 4 * BATCH_BYTES;

/// One thing the reader handed out, its text (if any) as a range of the batch's text.
#[derive(Debug, Clone, Copy)]
enum Item {
    Line {
        number: u64,
        text: (usize, usize),
    },
    CutLine {
        line: u64,
        skipped: u64,
    },
    FileStarts {
        line: u64,
        name: (usize, usize),
    },
    Process {
        line: u64,
        pid: Option<(usize, usize)>,
    },
    WrapCut {
        line: u64,
        width: usize,
    },
    Idle,
}

/// Items in input order, with the text they hold, and what the parser's literal scan finds in their lines.
#[derive(Debug, Default)]
pub(super) struct Batch {
    text: String,
    items: Vec<Item>,
    /// The text of each line item, in order.
    lines: Vec<(usize, usize)>,
    /// What the scan found in each of `lines`, once [`Batch::scan`] ran.
    hits: Vec<Hits>,
    /// The lines were scanned (by `super::read_ahead`'s reading thread when the parser had a backlog).
    pub(super) scanned: bool,
}

impl Batch {
    /// Keep `read`, copying its text.
    pub(super) fn push(&mut self, read: &Read<'_>) {
        let item = match *read {
            Read::Line(number, text) => {
                let text = self.keep(text);
                self.lines.push(text);
                Item::Line { number, text }
            }
            Read::CutLine { line, skipped } => Item::CutLine { line, skipped },
            Read::FileStarts { line, name } => Item::FileStarts {
                line,
                name: self.keep(name),
            },
            Read::Process { line, pid } => Item::Process {
                line,
                pid: pid.map(|pid| self.keep(pid)),
            },
            Read::WrapCut { line, width } => Item::WrapCut { line, width },
            Read::Idle => Item::Idle,
        };
        self.items.push(item);
    }

    fn keep(&mut self, text: &str) -> (usize, usize) {
        let start = self.text.len();
        self.text.push_str(text);
        (start, self.text.len())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(super) fn is_full(&self) -> bool {
        self.text.len() >= BATCH_BYTES || self.items.len() >= BATCH_ITEMS
    }

    /// Find what `scan` finds in every line of the batch, all lines in one search.
    pub(super) fn scan(&mut self, scan: &LineFilter) {
        scan.scan_lines(self.text.as_bytes(), &self.lines, &mut self.hits);
        self.scanned = true;
    }

    /// Hand every item to `on`, in order, each line with what the scan found in it if [`Batch::scan`] ran.
    pub(super) fn replay(&self, on: &mut impl FnMut(Read<'_>, Option<Hits>)) {
        let text = |(start, end): (usize, usize)| &self.text[start..end];
        let mut hits = self.hits.iter().copied();
        for item in &self.items {
            let (read, hits) = match *item {
                Item::Line {
                    number,
                    text: range,
                } => (Read::Line(number, text(range)), hits.next()),
                Item::CutLine { line, skipped } => (Read::CutLine { line, skipped }, None),
                Item::FileStarts { line, name } => (
                    Read::FileStarts {
                        line,
                        name: text(name),
                    },
                    None,
                ),
                Item::Process { line, pid } => (
                    Read::Process {
                        line,
                        pid: pid.map(text),
                    },
                    None,
                ),
                Item::WrapCut { line, width } => (Read::WrapCut { line, width }, None),
                Item::Idle => (Read::Idle, None),
            };
            on(read, hits);
        }
    }

    /// Empty, ready for reuse; a text that grew past [`KEPT_CAPACITY`] (one very long line) is let go, so
    /// memory goes back to what ordinary batches need.
    pub(super) fn clear(&mut self) {
        if self.text.capacity() > KEPT_CAPACITY {
            self.text = String::new();
        }
        self.text.clear();
        self.items.clear();
        self.lines.clear();
        self.hits.clear();
        self.scanned = false;
    }

    /// Empty, ready for reuse (`None` when it grew too large to keep).
    pub(super) fn recycled(mut self) -> Option<Batch> {
        if self.text.capacity() > KEPT_CAPACITY {
            return None;
        }
        self.clear();
        Some(self)
    }
}

/// What the consumer of [`read_skimmed_lines`] would answer after each item, known without it: the pipeline's
/// answer is its capture scanner's (`Pipeline::stream` feeds that scanner every line, and asks for the next
/// line whatever it holds while a capture is open), and a scanner fed the same lines is in the same state.
/// What this one finds is the pipeline's to report, not this one's.
pub(super) struct Mirror {
    scanner: SmiScanner,
}

impl Mirror {
    pub(super) fn new() -> Mirror {
        Mirror {
            scanner: SmiScanner::in_log(),
        }
    }

    pub(super) fn wants_after(&mut self, read: &Read<'_>) -> Wants {
        if let Read::Line(number, text) = *read {
            self.scanner.feed(number, text, &mut |_| {});
        }
        if self.scanner.is_quiet() {
            Wants::Candidates
        } else {
            Wants::NextLine
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefilter::LineFilterBuilder;

    /// What a batch hands back: every item as kept, in order, each line with what the scan finds in it
    /// alone once the batch was scanned (on either thread), nothing before.
    #[test]
    fn a_batch_hands_back_what_it_kept_with_the_hits_of_each_line() {
        let scan = LineFilterBuilder::new()
            .add(1, ["buffer size =", "MiB"])
            .add(2, ["offload"])
            .build();
        let line = "load_tensors: CUDA0 model buffer size =  4403.49 MiB";
        let reads = [
            Read::Line(3, line),
            Read::CutLine {
                line: 4,
                skipped: 10,
            },
            Read::FileStarts {
                line: 5,
                name: "a.log",
            },
            Read::Process {
                line: 6,
                pid: Some("34353"),
            },
            Read::Process { line: 7, pid: None },
            Read::Line(8, "plain buffer size"),
            // A key across two lines' texts, which abut in the batch, is in neither line.
            Read::Line(9, "a GPU off"),
            Read::Line(10, "load of 3 Mi"),
            Read::Line(11, "B"),
            Read::Line(12, "msg=\"offload to gpu\""),
            Read::Idle,
        ];
        for scanned in [false, true] {
            let mut batch = Batch::default();
            for read in &reads {
                batch.push(read);
            }
            if scanned {
                batch.scan(&scan);
            }
            let mut seen = Vec::new();
            batch.replay(&mut |read, hits| seen.push((format!("{read:?}"), hits)));
            let expected: Vec<(String, Option<Hits>)> = reads
                .iter()
                .map(|read| {
                    let hits = match read {
                        Read::Line(_, text) if scanned => Some(scan.scan(text.as_bytes())),
                        _ => None,
                    };
                    (format!("{read:?}"), hits)
                })
                .collect();
            assert_eq!(seen, expected, "scanned: {scanned}");
            let possible: Vec<u32> = seen
                .iter()
                .filter_map(|(_, h)| Some(h.as_ref()?.possible))
                .collect();
            let want: &[u32] = if scanned { &[1, 0, 0, 0, 0, 2] } else { &[] };
            assert_eq!(possible, want);
        }
    }
}
