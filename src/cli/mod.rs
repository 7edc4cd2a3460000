//! The command line: flags and help text, no logic.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

pub mod diff;

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
}

/// The GPU monitor `--capture` runs when a load completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaptureArg {
    #[value(name = "nvidia-smi")]
    NvidiaSmi,
    #[value(name = "rocm-smi")]
    RocmSmi,
    None,
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
    after_help = "Examples:\n  journalctl -u ollama --no-pager | vramdiff\n  vramdiff server.log\n  vramdiff --format json server.log > report.json\n  vramdiff whatif server.log --gpu-count 1\n  journalctl -fu ollama -o cat | vramdiff -f --capture nvidia-smi --ollama --fail-on never\n\nExit status: 0 ok, 1 a finding at or above --fail-on (default: error), 2 error (bad usage, an input that could not be read)."
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// The subcommands besides the default report.
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
    Diff(diff::DiffArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell).
    Completions(diff::CompletionsArgs),
    /// Print the man page (roff) on stdout: `vramdiff man > vramdiff.1`.
    Man,
}

/// `vramdiff batch`.
#[cfg(feature = "batch")]
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

    /// No progress bar (it is only drawn on a terminal anyway).
    #[arg(long, short)]
    pub quiet: bool,

    /// Exit 1 when a finding of this severity or above is present in any load.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Never)]
    pub fail_on: SeverityArg,

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

/// What every analysis reads and how it judges.
#[derive(Debug, Clone, ClapArgs)]
pub struct InputArgs {
    /// Log files to read; '-' or nothing reads standard input.
    pub files: Vec<String>,

    /// A folder of grammar files (*.toml) that add to or replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub grammar_dir: Option<PathBuf>,

    /// An nvidia-smi or rocm-smi capture taken while the model was loaded (table, -q, -q -x, --query-gpu or
    /// --query-compute-apps CSV, rocm-smi); repeatable. Applied to the last load read.
    #[arg(long, value_name = "FILE")]
    pub smi: Vec<String>,

    /// The --query-gpu= field list of a headerless (noheader) CSV capture, e.g. index,memory.used,memory.total.
    #[arg(long, value_name = "FIELDS")]
    pub smi_fields: Option<String>,

    /// A GGUF model file whose header gives exact per-layer sizes for the replay and --max-ctx (by default the
    /// blob the log names is used when it exists on this machine: $OLLAMA_MODELS, ~/.ollama/models).
    #[arg(long, value_name = "FILE")]
    pub gguf: Option<PathBuf>,

    /// Do not look for the model blob the log names on this machine (also: VRAMDIFF_NO_MODEL_SEARCH=1), so the
    /// report depends on the log alone.
    #[arg(long, conflicts_with = "gguf")]
    pub no_model_search: bool,

    /// `overestimate` fires when the estimate exceeds reality by more than this percentage …
    #[arg(long, value_name = "PCT", default_value_t = 10)]
    pub over_percent: i64,

    /// … and by more than this size (e.g. 256MiB, 1.5GiB, or bytes).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size_arg)]
    pub over_min: i64,

    /// `unattributed-memory` fires when nvidia-smi shows at least this much beyond a GPU's buffers.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size_arg)]
    pub unattributed_min: i64,
}

/// The default command: the report.
#[derive(Debug, Clone, ClapArgs)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// List the lines that look like memory lines but that no grammar rule understood.
    #[arg(long)]
    pub show_unrecognized: bool,

    /// Write PNG charts of every load into this folder (created if missing) and print their paths on stderr.
    #[arg(long, value_name = "DIR")]
    pub chart: Option<PathBuf>,

    /// Exit 1 when a finding of this severity or above is present (for CI). With --follow: at the first such
    /// finding, after that load's report.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Error)]
    pub fail_on: SeverityArg,

    /// Follow one file by name across rotation and truncation (as `tail -F`), or an endless standard input,
    /// and print each load's report as soon as the load completes. Ctrl-C ends it.
    #[arg(long, short = 'f', conflicts_with_all = ["smi", "chart", "summary"])]
    pub follow: bool,

    /// With --follow: when a load completes, run this GPU monitor (5 s timeout) and compare its capture with
    /// the load, as --smi does.
    #[arg(long, value_enum, value_name = "TOOL", default_value_t = CaptureArg::None, requires = "follow")]
    pub capture: CaptureArg,

    /// With --follow: when a load completes, read Ollama's GET /api/ps (3 s timeout) and show its size_vram
    /// beside the buffers and nvidia-smi [default URL: http://127.0.0.1:11434]
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "http://127.0.0.1:11434", requires = "follow")]
    pub ollama: Option<String>,
    /// Also append the Markdown report to the file named by $GITHUB_STEP_SUMMARY (nothing when it is unset).
    #[arg(long)]
    pub summary: bool,
}

/// `vramdiff whatif`.
#[derive(Debug, Clone, ClapArgs)]
pub struct WhatifArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Use only these GPUs (positions in the estimate's list, as CUDA numbers them for the runner: 0,1).
    #[arg(long, value_delimiter = ',', conflicts_with = "gpu_count")]
    pub gpus: Option<Vec<usize>>,

    /// Use only the N GPUs with the most free memory.
    #[arg(long, value_name = "N")]
    pub gpu_count: Option<usize>,

    /// Context per slot (num_ctx).
    #[arg(long, value_name = "N")]
    pub ctx: Option<i64>,

    /// Parallel slots (OLLAMA_NUM_PARALLEL).
    #[arg(long, value_name = "N")]
    pub parallel: Option<i64>,

    /// OLLAMA_GPU_OVERHEAD (e.g. 512MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub gpu_overhead: Option<i64>,

    /// Multiply the estimate's graph by X (ollama37's OLLAMA_GRAPH_SAFETY_MULTIPLIER, relative to the log).
    #[arg(long, value_name = "X", value_parser = parse_multiplier)]
    pub graph_multiplier: Option<f64>,

    /// Let a scheduler pick the GPUs for the estimate replay, instead of the GPUs the log used: `upstream`
    /// tries each single GPU then all, `ollama37` the fewest GPUs first.
    #[arg(long, value_enum)]
    pub scheduler: Option<SchedulerArg>,

    /// The KV cache type to replay with (OLLAMA_KV_CACHE_TYPE); with --max-ctx, the only type searched.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub kv_type: Option<KvTypeArg>,

    /// The largest num_ctx (per slot, in steps of 256) that keeps every layer on the GPUs (those chosen with
    /// --gpus/--gpu-count), for each KV cache type (or --kv-type).
    #[arg(long, conflicts_with = "ctx")]
    pub max_ctx: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// With --format junit: a failure per finding of this severity or above.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Error)]
    pub fail_on: SeverityArg,

    /// Also append the Markdown report to the file named by $GITHUB_STEP_SUMMARY (nothing when it is unset).
    #[arg(long)]
    pub summary: bool,
}

/// `vramdiff inspect`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Reads the header only (metadata and tensor infos), never the weights.\n\nExit status: 0 ok, 2 the file could not be read or is not a valid GGUF file."
)]
pub struct InspectArgs {
    /// The GGUF model file (an Ollama blob `sha256-…` is one).
    pub model: PathBuf,

    /// The vision projector when it is a separate file (llama-server's `--mmproj`).
    #[arg(long, value_name = "FILE")]
    pub mmproj: Option<PathBuf>,

    /// Output format (Markdown is the text in a code block).
    #[arg(long, value_enum, default_value_t = InspectFormatArg::Text)]
    pub format: InspectFormatArg,

    /// Also list every tensor (name, type, shape, offset, bytes) and every metadata value.
    #[arg(long)]
    pub tensors: bool,
}

/// `inspect`'s output formats: a model file has no findings, so no JUnit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InspectFormatArg {
    Text,
    Json,
    Markdown,
}

/// `--kv-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KvTypeArg {
    F16,
    #[value(name = "q8_0")]
    Q8_0,
    #[value(name = "q4_0")]
    Q4_0,
}

/// `--scheduler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchedulerArg {
    Upstream,
    Ollama37,
}

/// `512MiB`, `1.5 GiB`, `2G`, or a byte count.
pub fn parse_size_arg(text: &str) -> Result<i64, String> {
    crate::parse::values::parse_typed_size(text)
}

fn parse_multiplier(text: &str) -> Result<f64, String> {
    let m: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if m.is_finite() && m > 0.0 && m <= 100.0 {
        Ok(m)
    } else {
        Err("the multiplier must be a number above 0 and at most 100".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_users_type_them() {
        assert_eq!(parse_size_arg("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size_arg("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size_arg("2G"), Ok(2 << 30));
        assert_eq!(parse_size_arg("1048576"), Ok(1 << 20));
        assert!(parse_size_arg("-5").is_err());
        assert!(parse_size_arg("12 parsecs").is_err());
        assert!(parse_size_arg("1e400GiB").is_err());
        assert!(parse_size_arg("99999999999999TiB").is_err());
    }
}
