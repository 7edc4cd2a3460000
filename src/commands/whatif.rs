//! `vramdiff whatif`: every load replayed with the changes asked for, and rendered by `report::whatif`.

use super::report::input_errors;
use super::resolve::Whatif;
use super::step_summary::step_summary;
use super::Outcome;
use crate::pipeline::analyze;
use crate::replay::max_ctx::max_ctx;
use crate::replay::replay;
use crate::report::{self, Format};

/// `vramdiff whatif [FILES]`.
pub fn whatif(request: &Whatif) -> Outcome {
    let mut analysis = match analyze(&request.files, &request.options) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let changes = &request.changes;
    for load in &mut analysis.loads {
        load.whatif = replay(&load.reconciled, changes);
        if request.max_ctx {
            let max = max_ctx(&load.reconciled, changes, changes.kv_type);
            if let Some(w) = &mut load.whatif {
                w.max_ctx = max;
            }
        }
    }
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
