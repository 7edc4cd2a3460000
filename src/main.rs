//! The `vramdiff` binary: parse arguments, run the analysis, write the report, exit 0 or 2.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use vramdiff::app::{self, Options};
use vramdiff::cli::{Args, FormatArg};
use vramdiff::report::{self, Format, ReportOptions};

fn main() -> ExitCode {
    let args = Args::parse();
    let files = if args.files.is_empty() {
        vec!["-".to_string()]
    } else {
        args.files.clone()
    };
    let options = Options {
        grammar_dir: args.grammar_dir.clone(),
        keep_unrecognized: args.show_unrecognized,
    };
    let analysis = match app::analyze(&files, &options) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("vramdiff: {e}");
            return ExitCode::from(2);
        }
    };
    let format = match args.format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    };
    let bytes = report::reporter(
        format,
        ReportOptions {
            show_unrecognized: args.show_unrecognized,
        },
    )
    .render(&analysis);
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(&bytes).and_then(|_| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        eprintln!("vramdiff: cannot write the report: {e}");
        return ExitCode::from(2);
    }
    let mut failed = false;
    for input in &analysis.inputs {
        if let Some(e) = &input.error {
            eprintln!("vramdiff: {e}");
            failed = true;
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
