//! The default command: every input through the pipeline ([`crate::pipeline::analyze`]), every load's report
//! in the chosen format, charts when asked, exit 1 at `--fail-on`.

use super::resolve::Report;
use super::step_summary::step_summary;
use super::Outcome;
use crate::model::Analysis;
use crate::pipeline::analyze;
use crate::report::{self, chart, Format, ReportOptions};

/// Name every input that could not be read; true when there was one (exit code 2).
pub(super) fn input_errors(analysis: &Analysis, messages: &mut Vec<String>) -> bool {
    let errors: Vec<String> = analysis
        .inputs
        .iter()
        .filter_map(|i| i.error.clone())
        .collect();
    let failed = !errors.is_empty();
    messages.extend(errors);
    failed
}

/// `vramdiff [FILES]`.
pub fn report(request: &Report) -> Outcome {
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
    let code = if input_errors(&analysis, &mut messages) {
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
