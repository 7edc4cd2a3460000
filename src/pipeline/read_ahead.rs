//! Reading an input on a thread of its own: the read buffers, the skim, the framing and the parser's literal
//! scan of each line on one core, the parsing, the loads and the report on another, where a machine has two.
//!
//! Those are about half of a run's CPU time on a long log (`docs/performance.md`), and they need nothing from
//! the stages after them but one answer: whether the next line must be framed whatever it
//! holds, because a GPU capture pasted in the log is open ([`Wants`]). That answer comes from the capture
//! scanner alone (`Pipeline::stream`), and the scanner's state depends only on the lines it is fed, so the
//! framing thread keeps a scanner of its own fed the same lines, and knows the answer without waiting for the
//! parser. The lines go over in batches, in order, through a channel of a few batches: the consumer sees what
//! [`read_skimmed_lines`] would hand it, the same lines in the same order, so the output is the same bytes
//! (tests/skim.rs compares the two on every sample log), and memory stays bounded however long the input.

use std::io::BufRead;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::frame::read::{read_skimmed_lines, Read, StreamFacts, Wants};
use crate::frame::skim::Skim;
use crate::prefilter::{Hits, LineFilter};
use crate::smi::SmiScanner;

/// A batch is handed over once it holds this much line text (or [`BATCH_ITEMS`] items): large enough that the
/// hand-over costs nothing beside the lines, small enough to stay in cache.
const BATCH_BYTES: usize = 64 * 1024;

/// A batch is handed over once it holds this many items.
const BATCH_ITEMS: usize = 1024;

/// Batches framed but not yet read by the consumer; the framing thread waits when this many are queued.
const IN_FLIGHT: usize = 4;

/// A batch whose text grew past this (one very long line) is not kept for reuse: memory goes back to what
/// ordinary batches need.
const KEPT_CAPACITY: usize = 4 * BATCH_BYTES;

/// One thing the reader handed out, its text (if any) as a range of the batch's text; a line with what the
/// parser's literal scan found in it.
#[derive(Debug, Clone, Copy)]
enum Item {
    Line {
        number: u64,
        text: (usize, usize),
        hits: Hits,
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
    Idle,
}

/// Items in input order, with the text they hold.
#[derive(Debug, Default)]
struct Batch {
    text: String,
    items: Vec<Item>,
}

impl Batch {
    /// Keep `read`, copying its text, and what `scan` finds in it if it is a line.
    fn push(&mut self, read: &Read<'_>, scan: &LineFilter) {
        let item = match *read {
            Read::Line(number, text) => Item::Line {
                number,
                text: self.keep(text),
                hits: scan.scan(text.as_bytes()),
            },
            Read::CutLine { line, skipped } => Item::CutLine { line, skipped },
            Read::FileStarts { line, name } => Item::FileStarts {
                line,
                name: self.keep(name),
            },
            Read::Process { line, pid } => Item::Process {
                line,
                pid: pid.map(|pid| self.keep(pid)),
            },
            Read::Idle => Item::Idle,
        };
        self.items.push(item);
    }

    fn keep(&mut self, text: &str) -> (usize, usize) {
        let start = self.text.len();
        self.text.push_str(text);
        (start, self.text.len())
    }

    fn is_full(&self) -> bool {
        self.text.len() >= BATCH_BYTES || self.items.len() >= BATCH_ITEMS
    }

    /// Hand every item to `on`, in order (with the scan's hits for a line, nothing for anything else).
    fn replay(&self, on: &mut impl FnMut(Read<'_>, Option<Hits>)) {
        let text = |(start, end): (usize, usize)| &self.text[start..end];
        for item in &self.items {
            let (read, hits) = match *item {
                Item::Line {
                    number,
                    text: range,
                    hits,
                } => (Read::Line(number, text(range)), Some(hits)),
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
                Item::Idle => (Read::Idle, None),
            };
            on(read, hits);
        }
    }

    /// Empty, ready for reuse (`None` when it grew too large to keep).
    fn recycled(mut self) -> Option<Batch> {
        if self.text.capacity() > KEPT_CAPACITY {
            return None;
        }
        self.text.clear();
        self.items.clear();
        Some(self)
    }
}

/// Read `reader` like [`read_skimmed_lines`], on a thread of its own, handing `on` the same items in the same
/// order on the calling thread, each line with what `scan` finds in it. `on` needs no answer: what it would
/// answer is the answer of a capture scanner fed the same lines, which the reading thread keeps itself (see
/// the module doc). A panic on the reading thread is raised again on the calling one.
pub fn read_skimmed_lines_ahead(
    reader: impl BufRead + Send,
    skim: &Skim,
    scan: &LineFilter,
    mut on: impl FnMut(Read<'_>, Option<Hits>),
) -> StreamFacts {
    let (full, framed) = sync_channel::<Batch>(IN_FLIGHT);
    let (recycle, recycled) = sync_channel::<Batch>(IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let reading = std::thread::Builder::new()
            .name("vramdiff-read".to_string())
            .spawn_scoped(scope, move || {
                frame_in_batches(reader, skim, scan, &full, &recycled)
            })
            .expect("spawning the reading thread");
        for batch in framed {
            batch.replay(&mut on);
            if let Some(batch) = batch.recycled() {
                // The reading thread may be gone already, or have enough batches: this one is dropped.
                let _ = recycle.try_send(batch);
            }
        }
        match reading.join() {
            Ok(facts) => facts,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The reading thread: frame `reader` into batches and send each one full, then the last one.
fn frame_in_batches(
    reader: impl BufRead,
    skim: &Skim,
    scan: &LineFilter,
    full: &SyncSender<Batch>,
    recycled: &Receiver<Batch>,
) -> StreamFacts {
    let mut scanner = SmiScanner::in_log();
    let mut batch = Batch::default();
    let facts = read_skimmed_lines(reader, skim, |read| {
        // The same lines as the pipeline's own scanner (`Pipeline::stream` feeds it every line), so the
        // same state; what it emits is the pipeline's to report.
        if let Read::Line(number, text) = read {
            scanner.feed(number, text, &mut |_| {});
        }
        batch.push(&read, scan);
        if batch.is_full() {
            let next = recycled.try_recv().unwrap_or_default();
            // The consumer is gone only when it panicked; its panic is the one reported.
            let _ = full.send(std::mem::replace(&mut batch, next));
        }
        if scanner.is_quiet() {
            Wants::Candidates
        } else {
            Wants::NextLine
        }
    });
    if !batch.items.is_empty() {
        let _ = full.send(batch);
    }
    facts
}
