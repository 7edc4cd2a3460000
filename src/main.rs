//! The `vramdiff` binary: parse the arguments, run the command in the library, print what it leaves (the report
//! on stdout, messages on stderr), and exit 0 (ok), 1 (a finding or gate at or above the threshold) or 2 (an
//! error). A closed stdout ends quietly.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use vramdiff::cli::{Args, Command};
use vramdiff::commands::report as app;

#[cfg(feature = "batch")]
fn batch(b: &vramdiff::cli::BatchArgs) -> app::Outcome {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::io::IsTerminal;
    let bar = if !b.quiet && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} files  {per_sec}  {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut outcome =
        vramdiff::batch::command(b, &|done| bar.set_position(done), &|n| bar.set_length(n));
    bar.finish_and_clear();
    if b.summary && outcome.code != 2 {
        // The batch's stdout is its summary, in Markdown.
        vramdiff::commands::diff::step_summary(&outcome.stdout, &mut outcome.messages);
    }
    outcome
}

fn main() -> ExitCode {
    let args = Args::parse();
    let outcome = match &args.command {
        Some(Command::Whatif(w)) => app::whatif(w),
        Some(Command::Inspect(i)) => app::inspect(i),
        #[cfg(feature = "batch")]
        Some(Command::Batch(b)) => batch(b),
        None if args.report.follow => {
            let mut stdout = std::io::stdout().lock();
            let code = vramdiff::live::follow(
                &args.report,
                vramdiff::live::Terminal {
                    stdout: &mut stdout,
                    message: &mut |m| eprintln!("vramdiff: {m}"),
                },
            );
            return ExitCode::from(code);
        }
        Some(Command::Diff(d)) => vramdiff::commands::diff::diff(d),
        Some(Command::Completions(c)) => vramdiff::commands::diff::completions(c),
        Some(Command::Man) => vramdiff::commands::diff::man(),
        None => app::report(&args.report),
    };
    // The report first, as a pipe reader expects it; then what went wrong or was written.
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(&outcome.stdout)
        .and_then(|_| stdout.flush())
    {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vramdiff: cannot write the report: {e}");
            return ExitCode::from(2);
        }
    }
    for message in &outcome.messages {
        eprintln!("vramdiff: {message}");
    }
    ExitCode::from(outcome.code)
}
