//! Orchestration: run the stages over a set of inputs and collect an [`Analysis`].
//!
//! Each input is streamed: bytes → physical lines → logical lines → events → loads. Only completed loads and
//! per-input counters are kept, so memory grows with the number of loads, not with the size of the logs.
//! A problem with one input (unreadable, cut lines, a malformed line) is recorded on that input and the
//! others are still read.

use std::path::PathBuf;

use crate::frame::Framer;
use crate::grammar;
use crate::load::Assembler;
use crate::model::{Analysis, InputSummary, InputWarning, UnrecognizedLine};
use crate::parse::{LineOutcome, Parser};
use crate::prefilter::{Groups, LineFilter, LineFilterBuilder};
use crate::reconcile::reconcile;
use crate::source::{self, LineReader, PhysicalLine, MAX_LINE_BYTES};

/// At most this many unrecognised lines are kept per input for `--show-unrecognized`.
pub const MAX_KEPT_UNRECOGNIZED: usize = 10_000;
/// At most this many warnings are kept per input; the rest are counted.
const MAX_WARNINGS: usize = 1_000;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub grammar_dir: Option<PathBuf>,
    pub keep_unrecognized: bool,
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
    Ok(analysis)
}

/// Line consumers, one bit each in the per-line literal prefilter ([`line_filter`]). The parser has two: a
/// rule anchor may occur in the line, or (only) a memory word.
///
/// Every logical line goes through `handle` in [`analyze_stream`], and one SIMD scan tells which consumers
/// could use it; a line no consumer can use costs nothing more. To feed another consumer (say, a scanner for
/// pasted `nvidia-smi` output): give it a bit here, add its literals (`NVIDIA-SMI`, `NVSMI LOG`,
/// `nvidia_smi_log`, `memory.used`, `used_gpu_memory`, `GPU[`, …) in [`line_filter`], and in `handle`, before
/// the early return for lines the parser cannot use, call it when `hits.possible & ITS_BIT != 0` *or* when it says
/// it is in the middle of a block and needs every line. Lines keep their numbers either way.
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
    let mut lines = LineReader::new(reader);
    let mut physical = PhysicalLine::default();
    let mut framer = Framer::new();
    let mut assembler = Assembler::new(name);
    let mut dropped_warnings = 0u64;
    let filter = line_filter(parser);
    let mut on_load = |mut load: crate::model::Load| {
        reconcile(&mut load);
        loads.push(load);
    };
    let mut handle = |number: u64,
                      text: &str,
                      summary: &mut InputSummary,
                      dropped: &mut u64,
                      assembler: &mut Assembler| {
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
    loop {
        match lines.next_line(&mut physical) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                summary.error = Some(format!("read error after line {}: {e}", summary.lines));
                break;
            }
        }
        summary.lines = physical.number;
        if physical.cut_bytes > 0 {
            warn(
                &mut summary,
                &mut dropped_warnings,
                Some(physical.number),
                format!(
                    "line longer than {} MiB: kept the first {} MiB, skipped {} bytes",
                    MAX_LINE_BYTES >> 20,
                    MAX_LINE_BYTES >> 20,
                    physical.cut_bytes
                ),
            );
        }
        let (s, d, a) = (&mut summary, &mut dropped_warnings, &mut assembler);
        framer.push(physical.number, &physical.bytes, |n, text| {
            handle(n, text, s, d, a)
        });
    }
    let (s, d, a) = (&mut summary, &mut dropped_warnings, &mut assembler);
    framer.finish(|n, text| handle(n, text, s, d, a));
    summary.joined_lines = framer.joined_lines;
    summary.discovered_gpus = assembler.discovered().to_vec();
    assembler.finish(&mut on_load);
    if dropped_warnings > 0 {
        summary.warnings.push(InputWarning {
            line: None,
            message: format!("{dropped_warnings} more warnings not listed"),
        });
    }
    summary
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
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
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
