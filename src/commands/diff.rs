//! `vramdiff diff OLD NEW`: two runs (two logs, or two `batch --out` folders) compared by the `diff` stage,
//! rendered by `report::diff`, gated on regressions.

use super::resolve::Diff;
use super::step_summary::step_summary;
use super::Outcome;
use crate::diff::{self, facts::from_concluded, LoadFacts};
use crate::model::Concluded;
use crate::pipeline::{analyze, Options};
use crate::report::diff as render;

/// One side of a diff: a log's loads, or a `batch --out` folder's rows (true). A log's warnings (empty,
/// binary, cut lines) go to `messages`. A log's concluded loads are kept too, for the pairs of loads.
fn read_side(
    path: &str,
    options: &Options,
    messages: &mut Vec<String>,
) -> Result<(bool, Vec<LoadFacts>, Vec<Concluded>), String> {
    let dir = std::path::Path::new(path);
    if dir.is_dir() {
        #[cfg(feature = "batch")]
        return crate::batch::diff_tables::read_folder(dir)
            .map(|loads| (true, loads, Vec::new()))
            .map_err(|e| e.to_string());
        #[cfg(not(feature = "batch"))]
        return Err(format!(
            "{path}: a batch folder, but this vramdiff was built without the `batch` feature"
        ));
    }
    let analysis = analyze(&[path.to_string()], options).map_err(|e| e.to_string())?;
    if let Some(e) = analysis.inputs.iter().find_map(|i| i.error.clone()) {
        return Err(e);
    }
    for input in &analysis.inputs {
        messages.extend(input.warnings.iter().map(|w| match w.line {
            Some(line) => format!("warning: {}:{line}: {}", input.path, w.message),
            None => format!("warning: {}: {}", input.path, w.message),
        }));
    }
    let facts = analysis.loads.iter().map(from_concluded).collect();
    Ok((false, facts, analysis.loads))
}

/// `vramdiff diff OLD NEW`.
pub fn diff(request: &Diff) -> Outcome {
    let mut messages = Vec::new();
    let (old_folder, old, old_loads) =
        match read_side(&request.old, &request.options, &mut messages) {
            Ok(side) => side,
            Err(e) => return Outcome::error(e),
        };
    let (new_folder, new, new_loads) =
        match read_side(&request.new, &request.options, &mut messages) {
            Ok(side) => side,
            Err(e) => return Outcome::error(e),
        };
    if old_folder != new_folder {
        return Outcome::error(
            "compare a log with a log, or a batch folder with a batch folder (a table keeps finding codes only)"
                .to_string(),
        );
    }
    let mut result = diff::diff(&request.old, &request.new, &old, &new);
    result.pairs = crate::pairs::across(&old_loads, &new_loads);
    if request.summary {
        step_summary(&render::markdown(&result), &mut messages);
    }
    // A diff is one document: JSON lines are the JSON report.
    let stdout = match crate::report::render(crate::report::What::Diff(&result), request.format) {
        Ok(bytes) => bytes,
        Err(e) => return Outcome::error(e.to_string()),
    };
    Outcome {
        stdout,
        messages,
        code: u8::from(request.fail_on_regression && result.has_regression()),
    }
}
