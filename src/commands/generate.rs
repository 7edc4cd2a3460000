//! `vramdiff completions` and `vramdiff man`: what clap's definition of the command line ([`crate::cli`])
//! generates, a shell completion script and the man page.

use clap::CommandFactory;

use super::Outcome;
use crate::cli::Args;

/// `vramdiff completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut stdout = Vec::new();
    clap_complete::generate(shell, &mut Args::command(), "vramdiff", &mut stdout);
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
