//! Orchestration: run the stages over a set of inputs and collect an [`Analysis`].
//!
//! Each input is streamed: bytes → physical lines → logical lines → events → loads. Only completed loads and
//! per-input counters are kept, so memory grows with the number of loads, not with the size of the logs.
//! A problem with one input (unreadable, cut lines, a malformed line) is recorded on that input and the
//! others are still read.

use std::path::PathBuf;

use crate::checks::CheckConfig;
use crate::frame::Framer;
use crate::grammar;
use crate::load::Assembler;
use crate::model::{Analysis, InputRole, InputSummary, InputWarning, UnrecognizedLine};
use crate::parse::clock::Clock;
use crate::parse::{LineOutcome, Parser};
use crate::prefilter::{Groups, LineFilter, LineFilterBuilder};
use crate::reconcile::observed::{attach_capture_file, attach_in_log};
use crate::reconcile::reconcile;
use crate::smi::{SmiItem, SmiScanner};
use crate::source::{self, LineReader, PhysicalLine, MAX_LINE_BYTES};

/// At most this many unrecognised lines are kept per input for `--show-unrecognized`.
pub const MAX_KEPT_UNRECOGNIZED: usize = 10_000;
/// At most this many captures are kept per input (an `nvidia-smi -l 1` left running for a day has 86,400).
const MAX_CAPTURES: usize = 10_000;
/// At most this many warnings are kept per input; the rest are counted.
const MAX_WARNINGS: usize = 1_000;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub grammar_dir: Option<PathBuf>,
    pub keep_unrecognized: bool,
    pub checks: CheckConfig,
    /// nvidia-smi / rocm-smi capture files (`--smi`), applied to the last load read.
    pub smi: Vec<String>,
    /// The `--query-gpu=` field list for headerless CSV captures.
    pub smi_fields: Option<String>,
}

/// The last stages for a load whose evidence is complete: replay, findings, suggestions.
pub fn conclude(load: &mut crate::model::Load, config: &CheckConfig) {
    load.whatif = crate::replay::replay(load, &crate::replay::Changes::default());
    load.findings = crate::checks::run(load, config);
    load.suggestions = crate::checks::suggest::suggest(load);
}

/// Errors that stop vramdiff before it reads any input.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Grammar(#[from] grammar::GrammarError),
    #[error(transparent)]
    Parser(#[from] crate::parse::ParserError),
}

/// Build the parser from the built-in grammar and any override directory.
pub fn parser(options: &Options) -> Result<Parser, SetupError> {
    let grammar = grammar::load(options.grammar_dir.as_deref())?;
    Ok(Parser::new(grammar)?)
}

/// Read every input and reconcile every load found.
pub fn analyze(paths: &[String], options: &Options) -> Result<Analysis, SetupError> {
    let mut parser = parser(options)?;
    let mut analysis = Analysis::default();
    for path in paths {
        let summary = match source::open(path) {
            Ok(input) => analyze_stream(
                &input.name,
                input.reader,
                &mut parser,
                options,
                &mut analysis.loads,
            ),
            Err(e) => InputSummary {
                path: path.clone(),
                error: Some(e.to_string()),
                ..InputSummary::default()
            },
        };
        analysis.inputs.push(summary);
    }
    for path in &options.smi {
        let mut summary = read_capture_file(path, options.smi_fields.as_deref());
        if !summary.captures.is_empty()
            && attach_capture_file(&mut analysis.loads, &summary.captures, &summary.path).is_none()
        {
            summary.warnings.push(InputWarning {
                line: None,
                message: "no model load was read to compare this capture with; its GPUs are listed under captures".to_string(),
            });
        }
        analysis.inputs.push(summary);
    }
    for load in &mut analysis.loads {
        conclude(load, &options.checks);
    }
    Ok(analysis)
}

/// Read a `--smi` file: every line belongs to a capture.
fn read_capture_file(path: &str, fields: Option<&str>) -> InputSummary {
    let mut summary = InputSummary {
        path: path.to_string(),
        role: InputRole::Capture,
        ..InputSummary::default()
    };
    let input = match source::open(path) {
        Ok(input) => input,
        Err(e) => {
            summary.error = Some(e.to_string());
            return summary;
        }
    };
    summary.path = input.name.clone();
    let mut scanner = SmiScanner::capture_file(fields);
    let mut dropped = 0u64;
    read_logical_lines(
        &input.name,
        input.reader,
        &mut summary,
        &mut dropped,
        |n, text, s, d| {
            if scanner.feed(n, text, &mut |item| take_smi_item(s, d, item)) {
                s.recognized_lines += 1;
            }
        },
    );
    scanner.finish(&mut |item| take_smi_item(&mut summary, &mut dropped, item));
    if summary.captures.is_empty() && summary.error.is_none() {
        warn(
            &mut summary,
            &mut dropped,
            None,
            "no nvidia-smi or rocm-smi capture found in this file".to_string(),
        );
    }
    report_dropped(&mut summary, dropped);
    summary
}

/// File a scanner's output on the input: snapshots as captures, warnings as warnings.
fn take_smi_item(summary: &mut InputSummary, dropped: &mut u64, item: SmiItem) {
    match item {
        SmiItem::Snapshot(s) => {
            if summary.captures.len() < MAX_CAPTURES {
                summary.captures.push(s);
            } else {
                *dropped += 1;
            }
        }
        SmiItem::Warning { line, message } => warn(summary, dropped, Some(line), message),
    }
}

/// Line consumers, one bit each in the per-line literal prefilter ([`line_filter`]). The parser has two: a
/// rule anchor may occur in the line, or (only) a memory word.
///
/// Every logical line goes through `handle` in [`analyze_stream`], and one SIMD scan tells which consumers
/// could use it; a line no consumer can use costs nothing more. The nvidia-smi scanner runs before the scan on
/// every line: while no capture is open it looks at the first byte only, and inside a capture it needs every
/// line. A new consumer with literal anchors gets a bit here and its literals in [`line_filter`].
const ANCHOR: Groups = 1;
/// See [`ANCHOR`]: not a rule, but counted (`unrecognized_memory_lines`).
const MEMORY_WORD: Groups = 2;

/// The prefilter for every line consumer (see [`ANCHOR`]).
fn line_filter(parser: &Parser) -> LineFilter {
    LineFilterBuilder::new()
        .add(ANCHOR, parser.anchors())
        .add(MEMORY_WORD, parser.memory_words())
        .build()
}

fn warn(summary: &mut InputSummary, dropped: &mut u64, line: Option<u64>, message: String) {
    if summary.warnings.len() < MAX_WARNINGS {
        summary.warnings.push(InputWarning { line, message });
    } else {
        *dropped += 1;
    }
}

/// Say so when an input read without error gave nothing to work with: it was empty, or it was binary data.
fn not_a_log(summary: &mut InputSummary, dropped: &mut u64, first_nul: Option<u64>) {
    if summary.error.is_some() || summary.recognized_lines > 0 {
        return;
    }
    if summary.lines == 0 {
        warn(
            summary,
            dropped,
            None,
            "empty input: no lines to read".to_string(),
        );
    } else if let Some(line) = first_nul {
        warn(
            summary,
            dropped,
            Some(line),
            "binary data (NUL bytes), not a text log: nothing in it was recognised (UTF-16 without a \
             byte-order mark? re-save it as UTF-8)"
                .to_string(),
        );
    }
}

/// Read a stream line by line into `summary` (line count, cut lines, read errors) and hand every logical line
/// to `on_line`, framed (prefixes stripped, re-wrapped lines joined). Returns the first physical line holding a
/// NUL byte: text logs have none, binary files and UTF-16 without a byte-order mark are full of them.
fn read_logical_lines(
    name: &str,
    reader: impl std::io::BufRead,
    summary: &mut InputSummary,
    dropped: &mut u64,
    mut on_line: impl FnMut(u64, &str, &mut InputSummary, &mut u64),
) -> Option<u64> {
    let mut lines = LineReader::new(reader);
    let mut physical = PhysicalLine::default();
    let mut framer = Framer::new();
    let mut first_nul = None;
    loop {
        match lines.next_line(&mut physical) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                summary.error = Some(format!(
                    "{name}: read error after line {}: {e}",
                    summary.lines
                ));
                break;
            }
        }
        summary.lines = physical.number;
        if physical.cut_bytes > 0 {
            warn(
                summary,
                dropped,
                Some(physical.number),
                format!(
                    "line longer than {} MiB: kept the first {} MiB, skipped {} bytes",
                    MAX_LINE_BYTES >> 20,
                    MAX_LINE_BYTES >> 20,
                    physical.cut_bytes
                ),
            );
        }
        if first_nul.is_none() && memchr::memchr(0, &physical.bytes).is_some() {
            first_nul = Some(physical.number);
        }
        framer.push(physical.number, &physical.bytes, |n, text| {
            on_line(n, text, summary, dropped)
        });
    }
    framer.finish(|n, text| on_line(n, text, summary, dropped));
    summary.joined_lines = framer.joined_lines;
    first_nul
}

/// Read one stream to its end.
pub fn analyze_stream(
    name: &str,
    reader: impl std::io::BufRead,
    parser: &mut Parser,
    options: &Options,
    loads: &mut Vec<crate::model::Load>,
) -> InputSummary {
    let mut summary = InputSummary {
        path: name.to_string(),
        ..InputSummary::default()
    };
    let mut assembler = Assembler::new(name);
    let mut dropped_warnings = 0u64;
    let mut scanner = SmiScanner::in_log();
    let first_load = loads.len();
    let filter = line_filter(parser);
    let mut clock = Clock::new();
    let mut on_load = |mut load: crate::model::Load| {
        reconcile(&mut load);
        loads.push(load);
    };
    let mut handle = |number: u64,
                      text: &str,
                      summary: &mut InputSummary,
                      dropped: &mut u64,
                      assembler: &mut Assembler| {
        if clock.jumps_back(text) {
            assembler.another_log(&mut on_load);
        }
        // A pasted nvidia-smi capture: its lines are the scanner's, not the grammar's.
        if scanner.feed(number, text, &mut |item| {
            take_smi_item(summary, dropped, item)
        }) {
            summary.recognized_lines += 1;
            return;
        }
        let hits = filter.scan(text.as_bytes());
        if hits.possible & (ANCHOR | MEMORY_WORD) == 0 {
            // No anchor and no memory word: the parser would call it unrecognised and not memory-like.
            return;
        }
        let may_have_anchor = hits.possible & ANCHOR != 0;
        let has_memory_word = hits.certain & MEMORY_WORD != 0;
        match parser.parse_line_prefiltered(number, text, may_have_anchor, has_memory_word) {
            LineOutcome::Event(event) => {
                summary.recognized_lines += 1;
                assembler.push(*event, &mut on_load);
            }
            LineOutcome::Unrecognized { memory_like } => {
                if memory_like {
                    summary.unrecognized_memory_lines += 1;
                    if options.keep_unrecognized
                        && summary.unrecognized.len() < MAX_KEPT_UNRECOGNIZED
                    {
                        summary.unrecognized.push(UnrecognizedLine {
                            line: number,
                            text: text.to_string(),
                        });
                    }
                }
            }
            LineOutcome::Malformed { rule, reason } => {
                summary.unrecognized_memory_lines += 1;
                warn(
                    summary,
                    dropped,
                    Some(number),
                    format!("rule '{rule}' matched but {reason}; line skipped"),
                );
                if options.keep_unrecognized && summary.unrecognized.len() < MAX_KEPT_UNRECOGNIZED {
                    summary.unrecognized.push(UnrecognizedLine {
                        line: number,
                        text: text.to_string(),
                    });
                }
            }
        }
    };
    let first_nul = read_logical_lines(
        name,
        reader,
        &mut summary,
        &mut dropped_warnings,
        |n, text, s, d| handle(n, text, s, d, &mut assembler),
    );
    summary.discovered_gpus = assembler.discovered().to_vec();
    assembler.finish(&mut on_load);
    let (s, d) = (&mut summary, &mut dropped_warnings);
    scanner.finish(&mut |item| take_smi_item(s, d, item));
    attach_in_log(&mut loads[first_load..], &summary.captures, name);
    not_a_log(&mut summary, &mut dropped_warnings, first_nul);
    report_dropped(&mut summary, dropped_warnings);
    summary
}

/// Say how many warnings were not kept.
fn report_dropped(summary: &mut InputSummary, dropped: u64) {
    if dropped > 0 {
        summary.warnings.push(InputWarning {
            line: None,
            message: format!("{dropped} more warnings not listed"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefilter's promise, on every line of every sample log and every grammar example: a line it
    /// passes over is one the parser ignores, and a line without the anchor bit matches no rule.
    #[test]
    fn the_prefilter_only_skips_what_the_parser_ignores() {
        let mut parser = parser(&Options::default()).unwrap();
        let filter = line_filter(&parser);
        let mut lines: Vec<String> = parser
            .grammar()
            .rules
            .iter()
            .flat_map(|r| r.examples.iter().map(|e| e.line.clone()))
            .collect();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-logs");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // The tests' answer files (`<sample>.expect.toml`) are not log lines.
            if path.to_string_lossy().ends_with(".expect.toml") {
                continue;
            }
            let bytes = std::fs::read(path).unwrap();
            let mut framer = Framer::new();
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                lines.push(String::from_utf8_lossy(line).into_owned());
                framer.push(i as u64 + 1, line, |_, text| lines.push(text.to_string()));
            }
            framer.finish(|_, text| lines.push(text.to_string()));
        }
        let (mut skipped, mut memory_only) = (0, 0);
        for line in &lines {
            let hits = filter.scan(line.as_bytes());
            let full = format!("{:?}", parser.parse_line(1, line));
            if hits.possible & (ANCHOR | MEMORY_WORD) == 0 {
                skipped += 1;
                assert_eq!(full, "Unrecognized { memory_like: false }", "{line}");
            } else {
                memory_only += usize::from(hits.possible & ANCHOR == 0);
                let cheap = parser.parse_line_prefiltered(
                    1,
                    line,
                    hits.possible & ANCHOR != 0,
                    hits.certain & MEMORY_WORD != 0,
                );
                assert_eq!(full, format!("{cheap:?}"), "{line}");
            }
        }
        assert!(skipped > 100 && memory_only > 0, "{skipped} {memory_only}");
    }
}
