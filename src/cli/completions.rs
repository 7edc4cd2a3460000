//! `vramdiff completions`'s argument: the shell.

use clap::{Args as ClapArgs, ValueEnum};

/// `vramdiff completions`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: ShellArg,
}

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
    Powershell,
}
