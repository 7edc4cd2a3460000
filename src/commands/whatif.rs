//! `vramdiff whatif`: every input through the pipeline with the replay asked for in its options (the pipeline
//! replays each load with the user's changes, findings still drawn from the load as logged), rendered by
//! `report::whatif`.

use super::report::input_errors;
use super::resolve::Whatif;
use super::step_summary::step_summary;
use super::Outcome;
use crate::pipeline::analyze;
use crate::report::{self, Format};

/// `vramdiff whatif [FILES]`.
pub fn whatif(request: &Whatif) -> Outcome {
    let analysis = match analyze(&request.files, &request.options) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let mut messages = Vec::new();
    if request.summary {
        let markdown = report::whatif::markdown(&analysis);
        step_summary(&markdown, &mut messages);
    }
    let code = if input_errors(&analysis, &mut messages) {
        2
    } else {
        0
    };
    let stdout = match request.format {
        Format::Junit => report::whatif::junit(&analysis, request.fail_on),
        format @ (Format::Text | Format::Json | Format::Markdown | Format::JsonLines) => {
            report::whatif::render(&analysis, format)
        }
    };
    Outcome {
        stdout,
        messages,
        code,
    }
}
