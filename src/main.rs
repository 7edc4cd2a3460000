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
    bound_polars_threads(&args);
    // Not locked for the whole run: `vramdiff mcp` writes its answers to stdout from another thread.
    let mut stdout = std::io::stdout();
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

/// `batch --threads N` bounds every thread pool of the run, polars' own included: polars sizes its pool (for
/// writing and summarising the tables) from `POLARS_MAX_THREADS` when it first starts, else from the cores,
/// so without this `--threads 1` would still write the tables on every core. Set here, before any thread
/// exists (setting the environment while another thread reads it is not safe); a value the user set is kept.
fn bound_polars_threads(args: &Args) {
    #[cfg(feature = "batch")]
    if let Some(vramdiff::cli::Command::Batch(batch)) = &args.command {
        if batch.threads > 0 && std::env::var_os("POLARS_MAX_THREADS").is_none() {
            std::env::set_var("POLARS_MAX_THREADS", batch.threads.to_string());
        }
    }
    #[cfg(not(feature = "batch"))]
    let _ = args;
}
