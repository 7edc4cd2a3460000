//! `vramdiff doctor`'s flags.

use clap::Args as ClapArgs;

use super::{CaptureArg, SeverityArg};

/// `vramdiff doctor`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Where the log is looked for, in order: the LOG given, $OLLAMA_LOGS (a file, or a folder of server*.log), journalctl -u ollama, journalctl --user -u ollama, ~/.ollama/logs/server.log, %LOCALAPPDATA%\\Ollama\\server*.log (the newest), docker logs of a running ollama/ollama container.\n\nExit status: 0 ok, 1 a finding at or above --fail-on, 2 no log found (each place tried is listed) or no load in it."
)]
pub struct DoctorArgs {
    /// The log to read instead of looking for it.
    #[arg(value_name = "LOG")]
    pub log: Option<String>,

    /// Write an issue-ready Markdown block (versions, GPUs, findings, the per-GPU table, ten evidence lines,
    /// the rest folded) with host names, user names in paths, IP addresses and tokens redacted.
    #[arg(long)]
    pub issue: bool,

    /// The GPU monitor run now [default: nvidia-smi, then rocm-smi; none: no capture].
    #[arg(long, value_enum, value_name = "TOOL")]
    pub capture: Option<CaptureArg>,

    /// The Ollama server whose GET /api/ps is read now [default: $OLLAMA_HOST, else http://127.0.0.1:11434].
    #[arg(long, value_name = "URL")]
    pub ollama: Option<String>,

    /// Do not ask Ollama's /api/ps.
    #[arg(long, conflicts_with = "ollama")]
    pub no_ollama: bool,

    /// Exit 1 when a finding of this severity or above is present.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Never)]
    pub fail_on: SeverityArg,
}
