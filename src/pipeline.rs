//! The whole pipeline for one input: source → frame → parse (and smi) → load → reconcile → replay → checks,
//! in one function that the command line, `batch`, the fuzz targets and the property tests all call. Each
//! stage hands the next its own type (`Load` → `Reconciled` → `Concluded`), so the order is the compiler's.
//!
//! An input is streamed: bytes → logical lines → events → loads. Only completed loads and per-input counters
//! are kept, so memory grows with the number of loads, not with the size of the log. A problem with the input
//! (unreadable, cut lines, a malformed line) is recorded on its summary.

use std::io::BufRead;
use std::path::PathBuf;

use crate::checks::{self, suggest, CheckConfig};
use crate::frame::read::{read_logical_lines, Read};
use crate::grammar;
use crate::load::model_file::{self, ModelFiles};
use crate::load::Assembler;
use crate::model::{Concluded, InputRole, InputSummary, Reconciled, UnrecognizedLine};
use crate::parse::clock::Clock;
use crate::parse::{LineOutcome, Parser};
use crate::reconcile::observed::{attach_capture_file, attach_in_log};
use crate::reconcile::reconcile;
use crate::replay::{replay, Changes};
use crate::smi::file::{cut_line_warning, file_item};
use crate::smi::SmiScanner;

/// At most this many unrecognised lines are kept per input for `--show-unrecognized`.
pub const MAX_KEPT_UNRECOGNIZED: usize = 10_000;

/// What the pipeline is asked to do, whatever the command.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub grammar_dir: Option<PathBuf>,
    pub keep_unrecognized: bool,
    pub checks: CheckConfig,
    /// nvidia-smi / rocm-smi capture files (`--smi`), applied to the last load read.
    pub smi: Vec<String>,
    /// The `--query-gpu=` field list for headerless CSV captures.
    pub smi_fields: Option<String>,
    /// `--gguf`, and whether to look for the model blob a load names on this machine.
    pub model_files: ModelFiles,
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

/// One input, read through every stage.
#[derive(Debug, Default)]
pub struct InputReport {
    pub summary: InputSummary,
    pub loads: Vec<Concluded>,
}

/// The last stages for a reconciled load: the placement replay, the findings, the suggestions.
pub fn conclude(load: Reconciled, config: &CheckConfig) -> Concluded {
    let whatif = replay(&load, &Changes::default());
    let findings = checks::run(&load, whatif.as_ref(), config);
    let suggestions = suggest::suggest(&suggest::Evidence {
        load: &load,
        whatif: whatif.as_ref(),
        findings: &findings,
    });
    Concluded {
        reconciled: load,
        findings,
        whatif,
        suggestions,
    }
}

/// Runs inputs through every stage with one compiled grammar (clone it per worker thread).
#[derive(Clone)]
pub struct Pipeline {
    parser: Parser,
    config: CheckConfig,
    keep_unrecognized: bool,
    model_files: ModelFiles,
}

impl Pipeline {
    /// A pipeline for these options (the grammar is compiled here).
    pub fn new(options: &Options) -> Result<Pipeline, SetupError> {
        Ok(Pipeline {
            parser: parser(options)?,
            config: options.checks,
            keep_unrecognized: options.keep_unrecognized,
            model_files: options.model_files.clone(),
        })
    }

    /// Read one input to its end and carry every load in it through every stage. `capture_files` are the
    /// `--smi` files to apply to this input's last load (each one that finds no load says so on its own
    /// summary); captures pasted into the input apply to the loads around them.
    pub fn run(
        &mut self,
        name: &str,
        reader: impl BufRead,
        capture_files: &mut [InputSummary],
    ) -> InputReport {
        let mut summary = InputSummary::new(name, InputRole::Log);
        let mut loads: Vec<Reconciled> = Vec::new();
        let mut assembler = Assembler::new(name);
        let mut scanner = SmiScanner::in_log();
        let mut clock = Clock::new();
        let parser = &mut self.parser;
        let keep_unrecognized = self.keep_unrecognized;
        let model_files = &self.model_files;
        let mut model_warnings: Vec<(u64, String)> = Vec::new();
        let mut on_load = |mut load: crate::model::Load| {
            let warning = model_file::attach(&mut load, model_files, |path| {
                crate::gguf::read_layout(path).map_err(|e| e.to_string())
            });
            if let Some(w) = warning {
                model_warnings.push((load.source.first_line, w));
            }
            loads.push(reconcile(load))
        };
        let facts = read_logical_lines(reader, |read| {
            let (number, text) = match read {
                Read::Line(number, text) => (number, text),
                Read::CutLine { line, skipped } => {
                    return cut_line_warning(&mut summary, line, skipped);
                }
            };
            if clock.jumps_back(text) {
                assembler.another_log(&mut on_load);
            }
            // A pasted nvidia-smi capture: its lines are the scanner's, not the grammar's. While no capture is
            // open the scanner looks at the first byte only.
            if scanner.feed(number, text, &mut |item| file_item(&mut summary, item)) {
                summary.recognized_lines += 1;
                return;
            }
            let keep = |summary: &mut InputSummary| {
                if keep_unrecognized && summary.unrecognized.len() < MAX_KEPT_UNRECOGNIZED {
                    summary.unrecognized.push(UnrecognizedLine {
                        line: number,
                        text: text.to_string(),
                    });
                }
            };
            match parser.read_line(number, text) {
                LineOutcome::Event(event) => {
                    summary.recognized_lines += 1;
                    assembler.push(*event, &mut on_load);
                }
                LineOutcome::Unrecognized { memory_like } => {
                    if memory_like {
                        summary.unrecognized_memory_lines += 1;
                        keep(&mut summary);
                    }
                }
                LineOutcome::Malformed { rule, reason } => {
                    summary.unrecognized_memory_lines += 1;
                    summary.warn(
                        Some(number),
                        format!("rule '{rule}' matched but {reason}; line skipped"),
                    );
                    keep(&mut summary);
                }
            }
        });
        summary.discovered_gpus = assembler.discovered().to_vec();
        assembler.finish(&mut on_load);
        scanner.finish(&mut |item| file_item(&mut summary, item));
        summary.lines = facts.lines;
        summary.joined_lines = facts.joined_lines;
        if let Some(e) = facts.error {
            summary.error = Some(format!(
                "{name}: read error after line {}: {e}",
                facts.lines
            ));
        }
        for (line, warning) in model_warnings {
            summary.warn(Some(line), warning);
        }
        attach_in_log(&mut loads, &summary.captures, name);
        for file in capture_files.iter_mut() {
            if !file.captures.is_empty()
                && attach_capture_file(&mut loads, &file.captures, &file.path).is_none()
            {
                file.warn(
                    None,
                    "no model load was read to compare this capture with; its GPUs are listed under captures"
                        .to_string(),
                );
            }
        }
        not_a_log(&mut summary, facts.first_nul);
        summary.close_warnings();
        let loads = loads
            .into_iter()
            .map(|l| conclude(l, &self.config))
            .collect();
        InputReport { summary, loads }
    }
}

/// Say so when an input read without error gave nothing to work with: it was empty, or it was binary data.
fn not_a_log(summary: &mut InputSummary, first_nul: Option<u64>) {
    if summary.error.is_some() || summary.recognized_lines > 0 {
        return;
    }
    if summary.lines == 0 {
        summary.warn(None, "empty input: no lines to read".to_string());
    } else if let Some(line) = first_nul {
        summary.warn(
            Some(line),
            "binary data (NUL bytes), not a text log: nothing in it was recognised (UTF-16 without a \
             byte-order mark? re-save it as UTF-8)"
                .to_string(),
        );
    }
}
