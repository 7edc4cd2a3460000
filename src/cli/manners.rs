//! The flags every command shares for how it talks to the terminal: `--color` and `-q/--quiet`.

use clap::{Args as ClapArgs, ValueEnum};

/// When the terminal's report is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// On a terminal, unless NO_COLOR is set (CLICOLOR_FORCE forces it).
    Auto,
    Always,
    Never,
}

/// `--color` and `-q`, flattened into every command that writes a report.
#[derive(Debug, Clone, ClapArgs)]
pub struct MannersArgs {
    /// Colour the severities and verdicts of the text report: auto (on a terminal; NO_COLOR turns it off,
    /// CLICOLOR_FORCE on), always, never [default: the config file's `color`, else auto]
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<ColorArg>,

    /// Only what a script needs: the report on stdout, and errors when the command fails; no notes on stderr
    /// (what was read or written, warnings, timeouts, the progress bar).
    #[arg(long, short)]
    pub quiet: bool,
}
