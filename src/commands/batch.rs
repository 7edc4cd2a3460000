//! `vramdiff batch`: the `batch` stage run over many logs (with a progress bar on a terminal), its result
//! turned into messages and an exit code, and `--summary` appended to the step summary.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use super::resolve::Batch;
use super::step_summary::step_summary;
use super::Outcome;

/// `vramdiff batch PATHS`.
pub fn batch(request: &Batch, manners: super::resolve::Manners) -> Outcome {
    let bar = if !manners.quiet && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} files  {per_sec}  {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut outcome = run(&request.options, &|done| bar.set_position(done), &|n| {
        bar.set_length(n)
    });
    bar.finish_and_clear();
    if request.summary && outcome.code != 2 {
        // The batch's stdout is its summary, in Markdown.
        step_summary(&outcome.stdout, &mut outcome.messages);
    }
    outcome
}

/// Run the batch and decide the exit code. `progress` gets the number of files done, `files_found` their total
/// once known.
fn run(
    options: &crate::batch::BatchOptions,
    progress: &(dyn Fn(u64) + Sync),
    files_found: &dyn Fn(u64),
) -> Outcome {
    let mut messages = Vec::new();
    if !options.analysis.smi.is_empty() {
        messages
            .push("--smi is not used by batch (captures pasted inside the logs are)".to_string());
    }
    let outcome = match crate::batch::run(options, progress, files_found) {
        Ok(o) => o,
        Err(e) => {
            messages.push(format!("{e:#}"));
            return Outcome {
                messages,
                code: 2,
                ..Outcome::default()
            };
        }
    };
    messages.extend(outcome.written.iter().map(|p| format!("wrote {p}")));
    messages.push(format!(
        "{} files ({} skipped: unreadable), {} loads",
        outcome.files, outcome.failed_files, outcome.loads
    ));
    let code = if outcome.files == 0 {
        messages.push("no input file found".to_string());
        2
    } else if outcome.failed_files >= outcome.files {
        messages.push("no input could be read".to_string());
        2
    } else if !outcome.offenders.is_empty() {
        messages.extend(outcome.offenders.iter().map(|o| format!("gate: {o}")));
        1
    } else {
        0
    };
    Outcome {
        stdout: outcome.summary.into_bytes(),
        messages,
        code,
    }
}
