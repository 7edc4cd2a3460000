//! `vramdiff batch`'s flags (the value parsers of `--max-error`, `--shard` and `--partition-by` are the
//! batch stage's `FromStr`).

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::{InputArgs, MannersArgs, SeverityArg};

/// `vramdiff batch`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Exit status: 0 ok (unreadable files are listed and skipped), 1 the gate failed (--fail-on, --max-error, --fail-on-regression), 2 error (no input could be read, bad usage, the output folder cannot be written)."
)]
pub struct BatchArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Write loads.parquet/.csv, components.parquet/.csv, calibration, summary.md and charts here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// A previous run's loads.parquet: report what changed per model × settings, flag regressions.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Also write the tables as JSON lines.
    #[arg(long)]
    pub jsonl: bool,

    /// Worker threads (0: every core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    #[command(flatten)]
    pub manners: MannersArgs,

    /// Exit 1 when a finding of this severity or above is present in any load [default: the config file's
    /// `fail-on`, else never]
    #[arg(long, value_enum, value_name = "SEVERITY", env = "VRAMDIFF_FAIL_ON")]
    pub fail_on: Option<SeverityArg>,

    /// Exit 1 when a component's actual/estimated is off by more than PCT % in any load (repeatable), e.g.
    /// graph=25.
    #[arg(long, value_name = "COMPONENT=PCT")]
    pub max_error: Vec<crate::batch::gate::MaxError>,

    /// Exit 1 when the baseline compare finds a regression.
    #[arg(long, requires = "baseline")]
    pub fail_on_regression: bool,

    /// Also write the run as JUnit XML to FILE: a suite per log, a case per load, a failure per finding at or
    /// above --fail-on.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write the summary as one self-contained HTML page to FILE (styles inline, the charts embedded, no
    /// script, nothing fetched).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Append the summary (Markdown) to $GITHUB_STEP_SUMMARY when it is set.
    #[arg(long)]
    pub summary: bool,

    /// Read only the K-th of N shares of the inputs (1 <= K <= N), chosen by a hash of each file's path below
    /// its folder or glob, the same on every machine; files written get -K-of-N in their names.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::batch::shard::Shard>,

    /// Write loads and components as a Hive-partitioned Parquet dataset, DIR/loads/era=…/engine=…/part-K-of-N.parquet,
    /// partitioned by these columns (comma-separated: era, engine, model, compute).
    #[arg(
        long,
        value_name = "COLUMNS",
        requires = "out",
        conflicts_with = "jsonl"
    )]
    pub partition_by: Option<crate::batch::dataset::PartitionBy>,
}
