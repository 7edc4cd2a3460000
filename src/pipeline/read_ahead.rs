//! Reading an input on a thread of its own: the read buffers, the skim and the framing on one core, the
//! parsing, the loads and the report on another, where a machine has two.
//!
//! Skimming and framing are about half of a run's CPU time on a long log (`docs/performance.md`), and they need
//! nothing from the stages after them but one answer: whether the next line must be framed whatever it holds,
//! because a GPU capture pasted in the log is open ([`Wants`]). That answer comes from the capture
//! scanner alone (`Pipeline::stream`), and the scanner's state depends only on the lines it is fed, so the
//! framing thread keeps a scanner of its own fed the same lines ([`Mirror`]), and knows the answer without
//! waiting for the parser. The lines go over in batches, in order, through a channel of a few batches: the consumer sees what
//! [`read_skimmed_lines`] would hand it, the same lines in the same order, so the output is the same bytes
//! (tests/skim.rs compares the two on every sample log), and memory stays bounded however long the input.
//!
//! The parser's literal scan of each framed line (`Parser::read_scanned_line`) runs on whichever thread has
//! time for it, decided batch by batch: on the reading thread while the parser has batches waiting (a log of
//! many loads, where parsing and reporting are the larger half), else on the parser's (a long log of few
//! loads, where the skim is). The scan's answer is the same on either thread. Either way a batch's lines are
//! scanned together (`LineFilter::scan_lines`), each searcher over the batch's text once.

use std::io::BufRead;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The reading thread scans the lines of its next batch itself when at least this many batches wait for the
/// parser (the one just sent among them): the parser is the slower of the two.
const BACKLOG: usize = 2;

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
    Idle,
}

/// Items in input order, with the text they hold, and what the parser's literal scan finds in their lines.
#[derive(Debug, Default)]
struct Batch {
    text: String,
    items: Vec<Item>,
    /// The text of each line item, in order.
    lines: Vec<(usize, usize)>,
    /// What the scan found in each of `lines`, once [`Batch::scan`] ran.
    hits: Vec<Hits>,
    /// The lines were scanned (on the reading thread, when the parser had a backlog: see the module doc).
    scanned: bool,
}

impl Batch {
    /// Keep `read`, copying its text.
    fn push(&mut self, read: &Read<'_>) {
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

    /// Find what `scan` finds in every line of the batch, all lines in one search.
    fn scan(&mut self, scan: &LineFilter) {
        scan.scan_lines(self.text.as_bytes(), &self.lines, &mut self.hits);
        self.scanned = true;
    }

    /// Hand every item to `on`, in order, each line with what the scan found in it if [`Batch::scan`] ran.
    fn replay(&self, on: &mut impl FnMut(Read<'_>, Option<Hits>)) {
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
        self.lines.clear();
        self.hits.clear();
        self.scanned = false;
        Some(self)
    }
}

/// Read `reader` like [`read_skimmed_lines`], on a thread of its own, handing `on` the same items in the same
/// order on the calling thread, a line with what `scan` finds in it if the reading thread had the time to scan
/// it (see the module doc). `on` needs no answer: the reading thread answers for it with a capture scanner of
/// its own ([`Mirror`]). A panic on the reading thread is raised again on the calling one. Where no thread can
/// be started (a process limit), the input is read on the calling thread, the same way.
pub fn read_skimmed_lines_ahead<R: BufRead + Send>(
    reader: R,
    skim: &Skim,
    scan: &LineFilter,
    mut on: impl FnMut(Read<'_>, Option<Hits>),
) -> StreamFacts {
    let (full, framed) = sync_channel::<Batch>(IN_FLIGHT);
    let (recycle, recycled) = sync_channel::<Batch>(IN_FLIGHT + 2);
    // The reader goes to the thread once it has started, so that it is still here if it cannot start.
    let (hand_over, handed) = sync_channel::<R>(1);
    let waiting = AtomicUsize::new(0);
    let sending = Sending {
        full,
        waiting: &waiting,
    };
    std::thread::scope(|scope| {
        let started = std::thread::Builder::new()
            .name("vramdiff-read".to_string())
            .spawn_scoped(scope, move || {
                let reader = handed.recv().ok()?;
                Some(frame_in_batches(reader, skim, scan, &sending, &recycled))
            });
        let Ok(reading) = started else {
            return read_on_this_thread(reader, skim, on);
        };
        // The thread is waiting for it: the channel has room for it.
        let _ = hand_over.send(reader);
        for mut batch in framed {
            waiting.fetch_sub(1, Ordering::Relaxed);
            if !batch.scanned {
                batch.scan(scan);
            }
            batch.replay(&mut on);
            if let Some(batch) = batch.recycled() {
                // The reading thread may be gone already, or have enough batches: this one is dropped.
                let _ = recycle.try_send(batch);
            }
        }
        match reading.join() {
            Ok(facts) => facts.unwrap_or_default(),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Read `reader` on the calling thread, answering for `on` as the reading thread would (where no thread can be
/// started).
fn read_on_this_thread(
    reader: impl BufRead,
    skim: &Skim,
    mut on: impl FnMut(Read<'_>, Option<Hits>),
) -> StreamFacts {
    let mut mirror = Mirror::new();
    read_skimmed_lines(reader, skim, |read| {
        let wants = mirror.wants_after(&read);
        on(read, None);
        wants
    })
}

/// What the consumer of [`read_skimmed_lines`] would answer after each item, known without it: the pipeline's
/// answer is its capture scanner's (`Pipeline::stream` feeds that scanner every line, and asks for the next
/// line whatever it holds while a capture is open), and a scanner fed the same lines is in the same state.
/// What this one finds is the pipeline's to report, not this one's.
struct Mirror {
    scanner: SmiScanner,
}

impl Mirror {
    fn new() -> Mirror {
        Mirror {
            scanner: SmiScanner::in_log(),
        }
    }

    fn wants_after(&mut self, read: &Read<'_>) -> Wants {
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

/// The sending end of the channel of batches, counting the batches sent and not yet taken.
struct Sending<'a> {
    full: SyncSender<Batch>,
    waiting: &'a AtomicUsize,
}

impl Sending<'_> {
    /// Send `batch`; true when the parser has a backlog ([`BACKLOG`]) with it.
    fn send(&self, batch: Batch) -> bool {
        let waiting = self.waiting.fetch_add(1, Ordering::Relaxed) + 1;
        // The consumer is gone only when it panicked; its panic is the one reported.
        let _ = self.full.send(batch);
        waiting >= BACKLOG
    }
}

/// The reading thread: frame `reader` into batches and send each one full, then the last one.
fn frame_in_batches(
    reader: impl BufRead,
    skim: &Skim,
    scan: &LineFilter,
    sending: &Sending<'_>,
    recycled: &Receiver<Batch>,
) -> StreamFacts {
    let mut mirror = Mirror::new();
    let mut batch = Batch::default();
    // Whether the parser had a backlog when the last batch went: then this thread scans the next one.
    let mut backlog = false;
    let facts = read_skimmed_lines(reader, skim, |read| {
        let wants = mirror.wants_after(&read);
        batch.push(&read);
        if batch.is_full() {
            if backlog {
                batch.scan(scan);
            }
            let next = recycled.try_recv().unwrap_or_default();
            backlog = sending.send(std::mem::replace(&mut batch, next));
        }
        wants
    });
    if !batch.items.is_empty() {
        if backlog {
            batch.scan(scan);
        }
        sending.send(batch);
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Options, Pipeline};
    use crate::prefilter::LineFilterBuilder;

    /// Where no thread can be started, the input is read on the calling thread and hands out the same items
    /// in the same order as the reading thread: here on a log with an nvidia-smi table pasted between noise
    /// (while the table is open every line is handed out, which only the mirrored scanner knows).
    #[test]
    fn reading_on_this_thread_hands_out_what_the_reading_thread_does() {
        let sample = |name: &str| {
            let path = format!("{}/sample-logs/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(path).unwrap()
        };
        let table = sample("038-nvidia-smi-table-2gpu-rtx3060-a2000.nvidia-smi.txt");
        let noise = "Nov 30 06:05:00 gpuhost kernel: noise line\n".repeat(3000);
        let log = format!(
            "{noise}{}{noise}Mon Nov 30 06:05:00 2025\n{table}{noise}",
            sample("founding-k80-gemma3-12b.log")
        );
        let pipeline = Pipeline::new(&Options::default()).unwrap();
        let skim = pipeline.skim.as_ref().unwrap();
        let scan = pipeline.parser.line_filter();
        let mut ahead = Vec::new();
        let ahead_facts = read_skimmed_lines_ahead(log.as_bytes(), skim, &scan, |read, _| {
            ahead.push(format!("{read:?}"))
        });
        let mut here = Vec::new();
        let here_facts = read_on_this_thread(log.as_bytes(), skim, |read, hits| {
            assert!(hits.is_none());
            here.push(format!("{read:?}"))
        });
        assert_eq!(ahead, here);
        assert_eq!(format!("{ahead_facts:?}"), format!("{here_facts:?}"));
        let table_lines = table.lines().count();
        assert!(here.len() > table_lines, "{} items", here.len());
        assert!(here.iter().any(|read| read.contains("NVIDIA-SMI")));
    }

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
