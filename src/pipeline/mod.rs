//! The whole pipeline for one input: source → frame → parse (and smi) → load → reconcile → replay → checks,
//! in one function that the command line, `batch`, the fuzz targets and the property tests all call. Each
//! stage hands the next its own type (`Load` → `Reconciled` → `Concluded`), so the order is the compiler's.
//!
//! An input is streamed: bytes → logical lines → events → loads, and each load is handed to a [`LoadSink`] as
//! soon as it completes ([`Pipeline::stream`], which `--follow` uses as it is); [`Pipeline::run`] is the same
//! path with a sink that keeps the loads. Only per-input counters stay, so streaming memory does not grow with
//! the log. A problem with the input (unreadable, cut lines, a malformed line) is recorded on its summary.
//!
//! What was observed of a load beside its log (the captures pasted around it, the `--smi` files, what the sink
//! sees as it completes: [`LoadSink::observe`]) and the replay `whatif` asks for ([`Options::whatif`]) are
//! inputs of the stages, gathered before each is built: a `Reconciled` or a `Concluded` is never patched
//! afterwards.

mod analyze;
mod completed;
mod line_batch;
mod read_ahead;

use std::io::BufRead;
use std::path::PathBuf;

use crate::checks::{self, suggest, CheckConfig};
use crate::frame::read::{read_logical_lines, Read, Wants};
use crate::frame::skim::Skim;
use crate::grammar;
use crate::load::model_file::{LastRead, ModelFiles};
use crate::load::Assembler;
use crate::model::{
    Concluded, CutByWrap, InputRole, InputSummary, InputWarning, Load, Reconciled, UnrecognizedLine,
};
use crate::parse::clock::Clock;
use crate::parse::{LineOutcome, Parser};
use crate::prefilter::Hits;
use crate::reconcile::observations::Moment;
use crate::replay::{replay, replay_asked, Asked, Changes};
use crate::smi::file::{cut_line_warning, file_item};
use crate::smi::{self, SmiScanner};

pub use analyze::{analyze, analyze_streamed};
use completed::Completed;
use line_batch::read_in_batches;
use read_ahead::read_skimmed_lines_ahead;

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
    /// `vramdiff whatif`: the replay to print with each load. `None`: the default replay, the one the findings
    /// are always drawn from.
    pub whatif: Option<Asked>,
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

/// The last stages for a reconciled load: the placement replay, the findings, the suggestions. The findings and
/// suggestions are drawn from the replay of the load as logged; `asked` (`vramdiff whatif`) is the replay the
/// load carries for the report instead, with the user's changes.
pub fn conclude(mut load: Reconciled, config: &CheckConfig, asked: Option<&Asked>) -> Concluded {
    let logged = replay(&load, &Changes::default());
    // The estimator build the replay named may have charged the graph differently from the logged figure.
    if let Some(charges) = logged.as_ref().and_then(|w| w.charges.as_ref()) {
        crate::reconcile::apply_estimator_charges(&mut load, charges);
    }
    let findings = checks::run(&load, logged.as_ref(), config);
    let suggestions = suggest::suggest(&suggest::Evidence {
        load: &load,
        whatif: logged.as_ref(),
        findings: &findings,
    });
    let whatif = match asked {
        Some(asked) => replay_asked(&load, asked),
        None => logged,
    };
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
    whatif: Option<Asked>,
    keep_unrecognized: bool,
    model_files: ModelFiles,
    /// The model file read last (its header is read once for the loads that name it).
    model_file_read: LastRead,
    /// The literals that pick the lines worth framing out of each read buffer; `None` frames every line.
    skim: Option<Skim>,
    /// Skim and frame each input on a thread of its own ([`Pipeline::read_ahead`]).
    read_ahead: bool,
}

/// Where the streaming run hands each load, as soon as it completes.
pub trait LoadSink {
    /// The load has just completed and is about to be reconciled: what can be observed of it at this moment (a
    /// live GPU capture, Ollama's `/api/ps`), asked once per load and handed to the reconcile stage with the
    /// captures pasted in the log and the `--smi` files, which the pipeline gathers itself.
    fn observe(&mut self, _load: &Load) -> Moment {
        Moment::default()
    }

    /// The load, through every stage.
    fn concluded(&mut self, load: Concluded);

    /// Warnings about the input (a malformed line, a cut line, a model file not usable) added since the last
    /// call, whenever a followed input pauses and once at its end. The summary keeps them all the same; a sink
    /// that reports while the input is still being read (`--follow`) says them as they come.
    fn warned(&mut self, _input: &str, _warnings: &[InputWarning]) {}
}

/// The sink of [`Pipeline::run`]: every load, kept in order.
#[derive(Default)]
struct Collect(Vec<Concluded>);

impl LoadSink for Collect {
    fn concluded(&mut self, load: Concluded) {
        self.0.push(load);
    }
}

/// Say on a capture file's summary that no load was read to compare it with.
pub fn no_load_for_capture(file: &mut InputSummary) {
    file.warn(
        None,
        "no model load was read to compare this capture with; its GPUs are listed under captures"
            .to_string(),
    );
}

impl Pipeline {
    /// A pipeline for these options (the grammar is compiled here).
    pub fn new(options: &Options) -> Result<Pipeline, SetupError> {
        let parser = parser(options)?;
        // Every grammar anchor and memory word (a line without one matches no rule and is not memory-like) and
        // every capture start: a line holding none of them is counted, never framed (see `frame::skim`).
        let skim = Skim::new(
            parser
                .anchors()
                .chain(parser.memory_words().iter().copied())
                .chain(smi::START_LITERALS),
            smi::TABLE_START_LITERALS,
            smi::TABLE_LOOKBACK_LINES,
        );
        Ok(Pipeline {
            skim: Some(skim),
            read_ahead: false,
            parser,
            config: options.checks,
            whatif: options.whatif.clone(),
            keep_unrecognized: options.keep_unrecognized,
            model_files: options.model_files.clone(),
            model_file_read: LastRead::default(),
        })
    }

    /// Frame every line of the inputs, not only the lines the skim picks out of each read buffer: slower, and
    /// the same result (the tests compare the two on every sample log).
    pub fn frame_every_line(&mut self) {
        self.skim = None;
    }

    /// Skim and frame each input on a thread of its own, beside the parsing and the later stages (see
    /// `src/pipeline/read_ahead.rs`): the same result in less wall time where a second core is free. Not for a followed
    /// input, whose lines are reported as they come, nor for `batch`, whose threads each read files already.
    pub fn read_ahead(&mut self) {
        self.read_ahead = true;
    }

    /// Read one input to its end and carry every load in it through every stage. `capture_files` are the
    /// `--smi` files to apply to this input's last load (each one that finds no load says so on its own
    /// summary); captures pasted into the input apply to the loads around them. Collects what
    /// [`Pipeline::stream`] hands out.
    pub fn run(
        &mut self,
        name: &str,
        reader: impl BufRead + Send,
        capture_files: &mut [InputSummary],
    ) -> InputReport {
        let mut loads = Collect::default();
        let summary = self.stream(name, reader, capture_files, &mut loads);
        InputReport {
            summary,
            loads: loads.0,
        }
    }

    /// Read one input to its end and hand every load to `sink` as soon as it completes: at its closing line or
    /// failure when the reader pauses (a followed input, see [`Read::Idle`]), else when the next load
    /// completes or the input ends. No load is kept, so memory does not grow with the input. Returns the
    /// input's summary.
    pub fn stream<S: LoadSink + ?Sized>(
        &mut self,
        name: &str,
        reader: impl BufRead + Send,
        capture_files: &mut [InputSummary],
        sink: &mut S,
    ) -> InputSummary {
        let mut summary = InputSummary::new(name, InputRole::Log);
        let mut loads = Completed {
            held: None,
            model_files: &self.model_files,
            model_file_read: &mut self.model_file_read,
            model_warnings: Vec::new(),
            seen: 0,
            config: self.config,
            whatif: self.whatif.as_ref(),
            sink,
        };
        let mut assembler = Assembler::new(name);
        let mut warned = 0;
        let mut scanner = SmiScanner::in_log();
        let mut clock = Clock::new();
        let parser = &mut self.parser;
        let keep_unrecognized = self.keep_unrecognized;
        let line_filter = parser.line_filter();
        // The line the framer said a terminal cut inside a figure (`Read::WrapCut`), and the width.
        let mut wrap_cut: Option<(u64, usize)> = None;
        // `hits`: what the parser's literal scan found in a line, when a reading thread scanned it already.
        let mut on_read = |read: Read<'_>, hits: Option<Hits>| {
            'line: {
                let (number, text) = match read {
                    Read::Line(number, text) => (number, text),
                    Read::WrapCut { line, width } => {
                        wrap_cut = Some((line, width));
                        break 'line;
                    }
                    Read::CutLine { line, skipped } => {
                        cut_line_warning(&mut summary, line, skipped);
                        break 'line;
                    }
                    Read::FileStarts { .. } => {
                        // Another file of a paste: another log, with a clock of its own.
                        clock = Clock::new();
                        let captures = &summary.captures;
                        assembler.another_file(|l| loads.push(l, captures, name));
                        break 'line;
                    }
                    Read::Process { pid, .. } => {
                        // A router's child (or the router): its loads are assembled apart.
                        assembler.switch_process(pid);
                        break 'line;
                    }
                    Read::Idle => {
                        let captures = &summary.captures;
                        assembler.hand_out_concluded(|l| loads.push(l, captures, name));
                        loads.flush(captures, name, &mut []);
                        for (line, warning) in loads.model_warnings.drain(..) {
                            summary.warn(Some(line), warning);
                        }
                        loads.sink.warned(name, &summary.warnings[warned..]);
                        warned = summary.warnings.len();
                        break 'line;
                    }
                };
                // Said just before the line it is about.
                let cut_at = wrap_cut
                    .take()
                    .and_then(|(line, width)| (line == number).then_some(width));
                if clock.jumps_back(text) {
                    let captures = &summary.captures;
                    assembler.another_log(|l| loads.push(l, captures, name));
                }
                // A pasted nvidia-smi capture: its lines are the scanner's, not the grammar's. While no capture is
                // open the scanner looks at the first byte only.
                if scanner.feed(number, text, &mut |item| file_item(&mut summary, item)) {
                    summary.recognized_lines += 1;
                    break 'line;
                }
                let keep = |summary: &mut InputSummary| {
                    if keep_unrecognized && summary.unrecognized.len() < MAX_KEPT_UNRECOGNIZED {
                        summary.unrecognized.push(UnrecognizedLine {
                            line: number,
                            text: text.to_string(),
                            figures: crate::parse::figures::size_figures(text),
                        });
                    }
                };
                let outcome = match hits {
                    Some(hits) => parser.read_scanned_line(number, text, hits),
                    None => parser.read_line(number, text),
                };
                if let Some(width) = cut_at {
                    // A line a rule would have read, or a memory line, cut inside a figure: read, it could give
                    // another number than the server printed, so it is listed instead.
                    let read = match &outcome {
                        LineOutcome::Event(_) | LineOutcome::Malformed { .. } => true,
                        LineOutcome::Unrecognized { memory_like } => *memory_like,
                    };
                    if read {
                        if summary.cut_by_wrap.len() < MAX_KEPT_UNRECOGNIZED {
                            summary
                                .cut_by_wrap
                                .push(CutByWrap::new(number, text, width));
                        }
                        break 'line;
                    }
                }
                match outcome {
                    LineOutcome::Event(event) => {
                        summary.recognized_lines += 1;
                        let captures = &summary.captures;
                        assembler.push(*event, |l| loads.push(l, captures, name));
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
            }
            // A line holding no literal the grammar or a capture start needs cannot change what is read
            // unless a capture is open (see `frame::skim`).
            if scanner.is_quiet() {
                Wants::Candidates
            } else {
                Wants::NextLine
            }
        };
        let facts = match &self.skim {
            Some(skim) if self.read_ahead => {
                read_skimmed_lines_ahead(reader, skim, &line_filter, |read, hits| {
                    on_read(read, hits);
                })
            }
            Some(skim) => read_in_batches(reader, skim, &line_filter, |read, hits| {
                on_read(read, hits);
            }),
            None => read_logical_lines(reader, |read| {
                on_read(read, None);
            }),
        };
        summary.discovered_gpus = assembler.discovered().to_vec();
        {
            let captures = &summary.captures;
            assembler.finish(|l| loads.push(l, captures, name));
        }
        scanner.finish(&mut |item| file_item(&mut summary, item));
        let concluded_any = loads.seen > 0;
        loads.flush(&summary.captures, name, capture_files);
        if !concluded_any {
            for file in capture_files.iter_mut().filter(|f| !f.captures.is_empty()) {
                no_load_for_capture(file);
            }
        }
        summary.lines = facts.lines;
        summary.joined_lines = facts.joined_lines;
        if let Some(e) = facts.error {
            summary.error = Some(format!(
                "{name}: read error after line {}: {e}",
                facts.lines
            ));
        }
        for (line, warning) in loads.model_warnings.drain(..) {
            summary.warn(Some(line), warning);
        }
        not_a_log(&mut summary, facts.first_nul);
        summary.close_warnings();
        loads.sink.warned(name, &summary.warnings[warned..]);
        summary
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in grammar's skim is Teddy's: a search that fell back to the scalar automaton (no Teddy for
    /// its keys) would make every read several times slower.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_skim_of_the_built_in_grammar_is_vectorised() {
        let pipeline = Pipeline::new(&Options::default()).unwrap();
        if std::arch::is_x86_feature_detected!("ssse3") {
            assert!(pipeline.skim.as_ref().unwrap().is_vectorised());
        }
    }
}
