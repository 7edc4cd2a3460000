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
use crate::model::{Analysis, InputSummary, InputWarning, UnrecognizedLine};
use crate::parse::{LineOutcome, Parser};
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
    pub checks: CheckConfig,
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
    for load in &mut analysis.loads {
        conclude(load, &options.checks);
    }
    Ok(analysis)
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
    let mut on_load = |mut load: crate::model::Load| {
        reconcile(&mut load);
        loads.push(load);
    };
    let mut handle = |number: u64,
                      text: &str,
                      summary: &mut InputSummary,
                      dropped: &mut u64,
                      assembler: &mut Assembler| {
        match parser.parse_line(number, text) {
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
