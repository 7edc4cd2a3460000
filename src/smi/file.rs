//! Captures as inputs: a capture file given with `--smi` (every line belongs to a capture), and how a
//! scanner's output is filed on an input's summary, for captures pasted into a log too.

use super::{SmiItem, SmiScanner};
use crate::frame::read::{read_logical_lines, Read};
use crate::model::{InputRole, InputSummary};
use crate::source::{self, MAX_LINE_BYTES};

/// At most this many captures are kept per input (an `nvidia-smi -l 1` left running for a day has 86,400).
pub const MAX_CAPTURES: usize = 10_000;

/// File a scanner's output on the input: snapshots as captures, warnings as warnings.
pub fn file_item(summary: &mut InputSummary, item: SmiItem) {
    match item {
        SmiItem::Snapshot(s) => {
            if summary.captures.len() < MAX_CAPTURES {
                summary.captures.push(s);
            } else {
                summary.dropped_warnings += 1;
            }
        }
        SmiItem::Warning { line, message } => summary.warn(Some(line), message),
    }
}

/// The warning for a line cut at the reader's limit.
pub fn cut_line_warning(summary: &mut InputSummary, line: u64, skipped: u64) {
    summary.warn(
        Some(line),
        format!(
            "line longer than {} MiB: kept the first {} MiB, skipped {skipped} bytes",
            MAX_LINE_BYTES >> 20,
            MAX_LINE_BYTES >> 20,
        ),
    );
}

/// Read a `--smi` file: every line belongs to a capture. `fields` is the `--query-gpu=` list for headerless
/// CSV. Problems are recorded on the summary; nothing here fails.
pub fn read_capture_file(path: &str, fields: Option<&str>) -> InputSummary {
    let mut summary = InputSummary::new(path, InputRole::Capture);
    let input = match source::open(path) {
        Ok(input) => input,
        Err(e) => {
            summary.error = Some(e.to_string());
            return summary;
        }
    };
    read_capture(&input.name, input.reader, fields)
}

/// Read a capture from any stream (a `--smi` file, or what `--capture` ran printed), named `name` in reports.
pub fn read_capture(
    name: &str,
    reader: impl std::io::BufRead,
    fields: Option<&str>,
) -> InputSummary {
    let mut summary = InputSummary::new(name, InputRole::Capture);
    let mut scanner = SmiScanner::capture_file(fields);
    let facts = read_logical_lines(reader, |read| match read {
        Read::Line(n, text) => {
            if scanner.feed(n, text, &mut |item| file_item(&mut summary, item)) {
                summary.recognized_lines += 1;
            }
        }
        Read::CutLine { line, skipped } => cut_line_warning(&mut summary, line, skipped),
        // A capture's rows are read the same whichever file of a paste they came from.
        Read::FileStarts { .. } | Read::Process { .. } | Read::WrapCut { .. } | Read::Idle => {}
    });
    scanner.finish(&mut |item| file_item(&mut summary, item));
    summary.lines = facts.lines;
    summary.joined_lines = facts.joined_lines;
    if let Some(e) = facts.error {
        summary.error = Some(format!(
            "{name}: read error after line {}: {e}",
            facts.lines
        ));
    }
    if summary.captures.is_empty() && summary.error.is_none() {
        summary.warn(
            None,
            "no nvidia-smi or rocm-smi capture found in this file".to_string(),
        );
    }
    summary.close_warnings();
    summary
}
