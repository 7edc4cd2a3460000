//! The default command: every input through the pipeline ([`crate::pipeline::analyze`]), every load's report
//! in the chosen format, charts when asked, exit 1 at `--fail-on`.

use super::resolve::Report;
use super::step_summary::step_summary;
use super::Outcome;
use std::io::Write;

use crate::model::{Concluded, InputSummary};
use crate::pipeline::{analyze, analyze_streamed, LoadSink};
use crate::report::streamed::Streamed;
use crate::report::{self, chart, Format, ReportOptions};

/// Name every input that could not be read; true when there was one (exit code 2).
pub(super) fn input_errors(inputs: &[InputSummary], messages: &mut Vec<String>) -> bool {
    let errors: Vec<String> = inputs.iter().filter_map(|i| i.error.clone()).collect();
    let failed = !errors.is_empty();
    messages.extend(errors);
    failed
}

/// `vramdiff [FILES]`: written to `stdout` load by load when the format allows (`report::streamed`: text,
/// Markdown, JSON, JSONL, without `--chart` or `--summary`), so memory does not grow with the loads; else
/// the whole analysis is rendered at the end and left in the [`Outcome`]. `paint`: the text written here is
/// painted for a terminal (what `commands::run` does to an Outcome's text).
pub fn report(request: &Report, stdout: &mut dyn Write, paint: bool) -> Outcome {
    if request.chart.is_none() && !request.summary {
        if let Some(streamed) =
            Streamed::new(request.format, request.show_unrecognized, paint, stdout)
        {
            return streamed_report(request, streamed);
        }
    }
    let analysis = match analyze(&request.files, &request.options) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let mut messages = Vec::new();
    let charts = match &request.chart {
        Some(dir) => match chart::files::write_charts(dir, &analysis) {
            Ok((links, written)) => {
                messages.extend(written.into_iter().map(|p| format!("wrote {p}")));
                links
            }
            Err(e) => return Outcome::error(e),
        },
        None => Vec::new(),
    };
    // The HTML report quotes the lines each finding rests on; the other formats name them by number.
    let evidence = match request.format {
        Format::Html => report::read_evidence(&analysis),
        Format::Text | Format::Json | Format::Markdown | Format::JsonLines | Format::Junit => {
            report::Evidence::new()
        }
    };
    let options = ReportOptions {
        show_unrecognized: request.show_unrecognized,
        charts,
        fail_on: request.fail_on,
        evidence,
    };
    if request.summary {
        let markdown = report::reporter(Format::Markdown, options.clone()).render(&analysis);
        step_summary(&markdown, &mut messages);
    }
    let stdout = report::reporter(request.format, options).render(&analysis);
    let code = if input_errors(&analysis.inputs, &mut messages) {
        2
    } else if request.fail_on.is_some_and(|t| {
        analysis
            .loads
            .iter()
            .flat_map(|l| &l.findings)
            .any(|f| f.severity >= t)
    }) {
        1
    } else {
        0
    };
    Outcome {
        stdout,
        messages,
        code,
    }
}

/// The pipeline's sink for a report written load by load.
struct Writing<'s, 'w>(&'s mut Streamed<'w>);

impl LoadSink for Writing<'_, '_> {
    fn concluded(&mut self, load: Concluded) {
        self.0.load(&load);
    }
}

/// The report written as the loads come: the same bytes, the same exit code and messages as the whole
/// report's path above.
fn streamed_report(request: &Report, mut streamed: Streamed<'_>) -> Outcome {
    let inputs = match analyze_streamed(
        &request.files,
        &request.options,
        &mut Writing(&mut streamed),
    ) {
        Ok(inputs) => inputs,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let worst = streamed.worst();
    if let Err(e) = streamed.finish(&inputs) {
        // A closed pipe ends quietly, as the binary does when it writes the report itself.
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Outcome::default();
        }
        return Outcome::error(format!("cannot write the report: {e}"));
    }
    let mut messages = Vec::new();
    let code = if input_errors(&inputs, &mut messages) {
        2
    } else if request
        .fail_on
        .is_some_and(|t| worst.is_some_and(|w| w >= t))
    {
        1
    } else {
        0
    };
    Outcome {
        stdout: Vec::new(),
        messages,
        code,
    }
}
