//! `vramdiff diff`'s flags.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::{FormatArg, MannersArgs};

/// `vramdiff diff`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Loads are matched by model, context, parallel slots and GPU set; within a key seen several times, the same model blob first, else in order of appearance. Loads left over pair on model and GPU set, with the changed context or parallel named. A change inside the printed rounding is not a change.\n\nExit status: 0 ok, 1 a regression with --fail-on-regression (more VRAM used beyond rounding, a layer left the GPU, a finding of warning or above appeared), 2 error (an input could not be read, bad usage)."
)]
pub struct DiffArgs {
    /// The old run: a log ('-' for stdin), or a `batch --out` folder (loads.parquet and components.parquet).
    pub old: String,

    /// The new run, of the same kind as the old.
    pub new: String,

    /// A folder of grammar files (*.toml) that add to or replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub grammar_dir: Option<PathBuf>,

    /// Output format [default: the config file's `format`, else text]
    #[arg(long, value_enum, env = "VRAMDIFF_FORMAT")]
    pub format: Option<FormatArg>,

    /// Exit 1 when the new run regressed: more VRAM used, a layer left the GPU, or a finding appeared.
    #[arg(long)]
    pub fail_on_regression: bool,

    /// Also append the Markdown comparison to the file named by $GITHUB_STEP_SUMMARY (nothing when unset).
    #[arg(long)]
    pub summary: bool,

    #[command(flatten)]
    pub manners: MannersArgs,
}
