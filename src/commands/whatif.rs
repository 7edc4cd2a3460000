//! `vramdiff whatif`: every input through the pipeline with the replay asked for in its options (the pipeline
//! replays each load with the user's changes, findings still drawn from the load as logged), rendered by
//! `report::whatif`. A lever that does not reach a load's runtime (`--ubatch` on an Ollama load) is refused
//! with one line and exit 2, never replayed as if it did (`replay::levers::refusal`).

use super::report::input_errors;
use super::resolve::Whatif;
use super::step_summary::step_summary;
use super::Outcome;
use crate::pipeline::analyze;
use crate::report;

/// `vramdiff whatif [FILES]`.
pub fn whatif(request: &Whatif) -> Outcome {
    let analysis = match analyze(&request.files, &request.options) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    if let Some(asked) = &request.options.whatif {
        let refused = analysis.loads.iter().enumerate().find_map(|(i, l)| {
            crate::replay::levers::refusal(&l.reconciled, i + 1, &asked.changes)
        });
        if let Some(message) = refused {
            return Outcome::error(message);
        }
    }
    let mut messages = Vec::new();
    if request.summary {
        let markdown = report::whatif::markdown(&analysis);
        step_summary(&markdown, &mut messages);
    }
    let code = if input_errors(&analysis.inputs, &mut messages) {
        2
    } else {
        0
    };
    let what = report::What::Whatif {
        analysis: &analysis,
        fail_on: request.fail_on,
    };
    let stdout = match report::render(what, request.format) {
        Ok(bytes) => bytes,
        Err(e) => return Outcome::error(e.to_string()),
    };
    Outcome {
        stdout,
        messages,
        code,
    }
}
