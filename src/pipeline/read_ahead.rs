//! Reading an input on a thread of its own: the read buffers, the skim and the framing on one core, the
//! parsing, the loads and the report on another, where a machine has two.
//!
//! Skimming and framing are about half of a run's CPU time on a long log (`docs/performance.md`), and they need
//! nothing from the stages after them but one answer: whether the next line must be framed whatever it holds,
//! because a GPU capture pasted in the log is open (`Wants`). That answer comes from the capture
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

use super::line_batch::{read_in_batches, Batch, Mirror};
use crate::frame::read::{read_skimmed_lines, Read, StreamFacts};
use crate::frame::skim::Skim;
use crate::prefilter::{Hits, LineFilter};

/// Batches framed but not yet read by the consumer; the framing thread waits when this many are queued.
const IN_FLIGHT: usize = 4;

/// The reading thread scans the lines of its next batch itself when at least this many batches wait for the
/// parser (the one just sent among them): the parser is the slower of the two.
const BACKLOG: usize = 2;

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
            return read_in_batches(reader, skim, scan, on);
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
    if !batch.is_empty() {
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
        let here_facts = read_in_batches(log.as_bytes(), skim, &scan, |read, hits| {
            assert_eq!(hits.is_some(), matches!(read, Read::Line(..)));
            here.push(format!("{read:?}"))
        });
        assert_eq!(ahead, here);
        assert_eq!(format!("{ahead_facts:?}"), format!("{here_facts:?}"));
        let table_lines = table.lines().count();
        assert!(here.len() > table_lines, "{} items", here.len());
        assert!(here.iter().any(|read| read.contains("NVIDIA-SMI")));
    }
}
