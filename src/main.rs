//! The `vramdiff` binary: parse the arguments, run the command in the library ([`vramdiff::commands::run`]),
//! print what it leaves (the report on stdout, messages on stderr), and exit 0 (ok), 1 (a finding or gate at or
//! above the threshold) or 2 (an error). A closed stdout ends quietly.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use vramdiff::cli::Args;
use vramdiff::commands::{self, Terminal};

fn main() -> ExitCode {
    let args = Args::parse();
    let mut stdout = std::io::stdout().lock();
    let outcome = commands::run(
        &args,
        Terminal {
            stdout: &mut stdout,
            message: &mut |m| eprintln!("vramdiff: {m}"),
        },
    );
    // The report first, as a pipe reader expects it; then what went wrong or was written.
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
