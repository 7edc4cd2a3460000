//! The default command's flags (the report, `--follow` and its live observations).

use std::path::PathBuf;

use clap::{Args as ClapArgs, ValueEnum};

use super::{FormatArg, InputArgs, MannersArgs, SeverityArg};

/// The GPU monitor `--capture` runs when a load completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaptureArg {
    #[value(name = "nvidia-smi")]
    NvidiaSmi,
    #[value(name = "rocm-smi")]
    RocmSmi,
    None,
}

/// The default command: the report.
#[derive(Debug, Clone, ClapArgs)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format [default: the config file's `format`, else text]
    #[arg(long, value_enum, env = "VRAMDIFF_FORMAT")]
    pub format: Option<FormatArg>,

    /// List the lines that look like memory lines but that no grammar rule understood.
    #[arg(long)]
    pub show_unrecognized: bool,

    /// Write PNG charts of every load into this folder (created if missing) and print their paths on stderr.
    #[arg(long, value_name = "DIR")]
    pub chart: Option<PathBuf>,

    /// Exit 1 when a finding of this severity or above is present (for CI). With --follow: at the first such
    /// finding, after that load's report [default: the config file's `fail-on`, else error]
    #[arg(long, value_enum, value_name = "SEVERITY", env = "VRAMDIFF_FAIL_ON")]
    pub fail_on: Option<SeverityArg>,

    #[command(flatten)]
    pub manners: MannersArgs,

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

    /// With --follow: answer GET /metrics (OpenMetrics: per model and device the estimated, planned, actual,
    /// driver-observed and unattributed bytes, layers on GPU and CPU, findings by code and severity) and GET
    /// /loads (the last 20 loads as JSON lines) on ADDR [default: 127.0.0.1:9464; a port alone is loopback]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:9464", requires = "follow")]
    pub serve: Option<String>,
    /// Also append the Markdown report to the file named by $GITHUB_STEP_SUMMARY (nothing when it is unset).
    #[arg(long)]
    pub summary: bool,
}
