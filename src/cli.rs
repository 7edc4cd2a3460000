//! The command line: flags and help text, no logic.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned tables for a terminal.
    Text,
    /// The versioned JSON contract (schema_version 1).
    Json,
}

/// Reconcile Ollama's GPU memory estimate with what llama.cpp actually allocated, per component and per GPU.
#[derive(Debug, Parser)]
#[command(
    name = "vramdiff",
    version,
    after_help = "Examples:\n  journalctl -u ollama --no-pager | vramdiff\n  vramdiff server.log\n  vramdiff --format json server.log > report.json\n\nExit status: 0 ok, 2 error (bad usage, an input that could not be read)."
)]
pub struct Args {
    /// Log files to read; '-' or nothing reads standard input.
    pub files: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// A folder of grammar files (*.toml) that add to or replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub grammar_dir: Option<PathBuf>,

    /// List the lines that look like memory lines but that no grammar rule understood.
    #[arg(long)]
    pub show_unrecognized: bool,
}
