//! The command line as the user typed it: clap's types, their flags and help text, one file per command's
//! arguments, and the value parsers; no logic. `commands::resolve` turns them, once, into the
//! clap-free options the commands and the stages receive, so nothing below the command layer sees clap.

use clap::{Parser, Subcommand, ValueEnum};

use crate::report::Format;

#[cfg(feature = "batch")]
mod batch;
mod completions;
mod diff;
mod doctor;
mod fetch;
mod input;
mod inspect;
mod manners;
mod report;
mod whatif;

#[cfg(feature = "batch")]
pub use batch::BatchArgs;
pub use completions::{CompletionsArgs, ShellArg};
pub use diff::DiffArgs;
pub use doctor::{DoctorArgs, DoctorFormatArg};
pub use fetch::FetchArgs;
pub use input::{parse_size_arg, InputArgs};
pub use inspect::{InspectArgs, InspectFormatArg};
pub use manners::{ColorArg, MannersArgs};
pub use report::{CaptureArg, ReportArgs};
pub use whatif::{FamilyArg, KvTypeArg, SchedulerArg, WhatifArgs};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned tables for a terminal.
    Text,
    /// The versioned JSON contract (schema_version 1).
    Json,
    /// GitHub-flavoured Markdown, for issues and `$GITHUB_STEP_SUMMARY`.
    Markdown,
    /// One JSON object per line and per load (a `loads[]` element plus `input`), for --follow and pipes.
    Jsonl,
    /// JUnit XML for CI servers: a test suite per input, a test case per load, a failure per finding at or
    /// above --fail-on.
    Junit,
    /// One self-contained HTML file (styles inline, charts embedded, no script, nothing fetched), to attach or
    /// keep as a CI artefact.
    Html,
}

impl FormatArg {
    /// The report format this `--format` value names (beside the value, so a new format is one variant here).
    pub fn format(self) -> Format {
        match self {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Jsonl => Format::JsonLines,
            FormatArg::Junit => Format::Junit,
            FormatArg::Html => Format::Html,
        }
    }
}

/// Finding severity for `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Info,
    Warning,
    Error,
    /// Never exit 1 because of findings.
    Never,
}

/// Reconcile Ollama's GPU memory estimate with what llama.cpp actually allocated, per component and per GPU.
#[derive(Debug, Parser)]
#[command(
    name = "vramdiff",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  journalctl -u ollama --no-pager | vramdiff\n  vramdiff server.log\n  vramdiff --format json server.log > report.json\n  vramdiff whatif server.log --gpu-count 1\n  journalctl -fu ollama -o cat | vramdiff -f --capture nvidia-smi --ollama --fail-on never\n\nExit status: 0 ok, 1 a finding at or above --fail-on (default: error), 2 error (bad usage, an input that could not be read, a bad config file).",
    after_long_help = concat!(
        "Examples:\n  journalctl -u ollama --no-pager | vramdiff\n  vramdiff server.log\n  vramdiff --format json server.log > report.json\n  vramdiff whatif server.log --gpu-count 1\n  journalctl -fu ollama -o cat | vramdiff -f --capture nvidia-smi --ollama --fail-on never\n\n",
        "Configuration: an optional TOML file, $VRAMDIFF_CONFIG if set, else $XDG_CONFIG_HOME/vramdiff/config.toml, else ~/.config/vramdiff/config.toml, sets the defaults of fail-on, over-percent, over-min, unattributed-min, color and format (the keys are the flags' names), for every command that has the flag. A flag beats its environment variable (VRAMDIFF_FAIL_ON, VRAMDIFF_OVER_PERCENT, VRAMDIFF_OVER_MIN, VRAMDIFF_UNATTRIBUTED_MIN, VRAMDIFF_FORMAT; for colour NO_COLOR and CLICOLOR_FORCE), which beats the file. An unknown key or a bad value is an error naming the file, the line and the key (exit 2).\n\n",
        "Exit status: 0 ok, 1 a finding at or above --fail-on (default: error), 2 error (bad usage, an input that could not be read, a bad config file)."
    )
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// The subcommands besides the default report.
// Parsed once per run and never moved around: the size of the largest variant (whatif's flags, the largest
// when `batch` is not built) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay Ollama's layer placement with the estimate's and with the measured figures, optionally changed.
    Whatif(WhatifArgs),
    /// What a GGUF model file holds: weights per layer (experts apart), the projector, KV cache per token.
    Inspect(InspectArgs),
    /// Many logs in (folders, globs, files; .gz and .zst too), tables, a summary, calibration and a CI gate out.
    #[cfg(feature = "batch")]
    Batch(BatchArgs),
    /// Compare two runs (two logs, or two `batch --out` folders): what changed per component, GPU, placement
    /// and finding.
    Diff(DiffArgs),
    /// Find this machine's Ollama log (journald, ~/.ollama/logs, %LOCALAPPDATA%, docker, $OLLAMA_LOGS), take
    /// its last load, observe the GPUs and /api/ps now, and report; --issue writes a redacted issue block.
    Doctor(DoctorArgs),
    /// Serve the Model Context Protocol on stdin/stdout for coding agents: tools analyze_log, whatif,
    /// inspect_model and doctor, each answering with this CLI's JSON report (docs/guide/mcp.md).
    #[cfg(feature = "mcp")]
    Mcp,
    /// Print a shell completion script (bash, zsh, fish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout: `vramdiff man > vramdiff.1`.
    Man,
}
