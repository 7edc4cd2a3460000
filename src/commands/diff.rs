//! The commands that serve CI: `diff` (two runs compared, gated on regressions), `completions` and `man`
//! (from the clap definition), and `--summary` (the Markdown report appended to `$GITHUB_STEP_SUMMARY`). Like
//! [`crate::app`], each returns an [`Outcome`]; only [`step_summary`] touches a file, the one GitHub names.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Args, FormatArg};
use crate::cli::{CompletionsArgs, DiffArgs, ShellArg};
use crate::commands::report::{self as app, Outcome};
use crate::diff::{self, facts::from_concluded, LoadFacts};
use crate::report::diff as render;

/// The variable GitHub Actions sets to the step summary file.
pub const STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// `--summary`: append `markdown` to the file `$GITHUB_STEP_SUMMARY` names. Unset or empty: nothing, no
/// message. A file that cannot be written is a warning in `messages`, never a failure of the command.
pub fn step_summary(markdown: &[u8], messages: &mut Vec<String>) {
    let Some(path) = std::env::var_os(STEP_SUMMARY).filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown).and_then(|_| f.write_all(b"\n")));
    if let Err(e) = written {
        messages.push(format!(
            "warning: cannot append the summary to ${STEP_SUMMARY} ({}): {e}",
            std::path::Path::new(&path).display()
        ));
    }
}

/// One side of a diff: a log's loads, or a `batch --out` folder's rows (true). A log's warnings (empty,
/// binary, cut lines) go to `messages`.
fn read_side(
    path: &str,
    options: &app::Options,
    messages: &mut Vec<String>,
) -> Result<(bool, Vec<LoadFacts>), String> {
    let dir = std::path::Path::new(path);
    if dir.is_dir() {
        #[cfg(feature = "batch")]
        return crate::batch::diff_tables::read_folder(dir)
            .map(|loads| (true, loads))
            .map_err(|e| e.to_string());
        #[cfg(not(feature = "batch"))]
        return Err(format!(
            "{path}: a batch folder, but this vramdiff was built without the `batch` feature"
        ));
    }
    let analysis = app::analyze(&[path.to_string()], options).map_err(|e| e.to_string())?;
    if let Some(e) = analysis.inputs.iter().find_map(|i| i.error.clone()) {
        return Err(e);
    }
    for input in &analysis.inputs {
        messages.extend(input.warnings.iter().map(|w| match w.line {
            Some(line) => format!("warning: {}:{line}: {}", input.path, w.message),
            None => format!("warning: {}: {}", input.path, w.message),
        }));
    }
    Ok((false, analysis.loads.iter().map(from_concluded).collect()))
}

/// `vramdiff diff OLD NEW`.
pub fn diff(args: &DiffArgs) -> Outcome {
    let options = app::Options {
        grammar_dir: args.grammar_dir.clone(),
        ..app::Options::default()
    };
    let mut messages = Vec::new();
    let (old_folder, old) = match read_side(&args.old, &options, &mut messages) {
        Ok(side) => side,
        Err(e) => return Outcome::error(e),
    };
    let (new_folder, new) = match read_side(&args.new, &options, &mut messages) {
        Ok(side) => side,
        Err(e) => return Outcome::error(e),
    };
    if old_folder != new_folder {
        return Outcome::error(
            "compare a log with a log, or a batch folder with a batch folder (a table keeps finding codes only)"
                .to_string(),
        );
    }
    let result = diff::diff(&args.old, &args.new, &old, &new);
    if args.summary {
        step_summary(&render::markdown(&result), &mut messages);
    }
    let stdout = match args.format {
        FormatArg::Text => render::text(&result),
        FormatArg::Markdown => render::markdown(&result),
        // A diff is one document: JSON lines are the JSON report.
        FormatArg::Json | FormatArg::Jsonl => render::json(&result),
        FormatArg::Junit => crate::report::junit::diff(&result),
    };
    Outcome {
        stdout,
        messages,
        code: u8::from(args.fail_on_regression && result.has_regression()),
    }
}

/// `vramdiff completions SHELL`.
pub fn completions(args: &CompletionsArgs) -> Outcome {
    use clap_complete::{generate, Shell};
    let shell = match args.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
        ShellArg::Powershell => Shell::PowerShell,
    };
    let mut stdout = Vec::new();
    generate(shell, &mut Args::command(), "vramdiff", &mut stdout);
    Outcome {
        stdout,
        ..Outcome::default()
    }
}

/// `vramdiff man`: the man page in roff.
pub fn man() -> Outcome {
    let mut stdout = Vec::new();
    match clap_mangen::Man::new(Args::command()).render(&mut stdout) {
        Ok(()) => Outcome {
            stdout,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(format!("cannot render the man page: {e}")),
    }
}
