//! `vramdiff doctor`'s flags.

use clap::{Args as ClapArgs, ValueEnum};

use super::{CaptureArg, MannersArgs, SeverityArg};

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

    /// Output format: text (the last load's report), or json (that load as one JSON line, the element
    /// `--format jsonl` writes, with the same redactions as --issue: for agents and scripts, `vramdiff mcp`).
    #[arg(long, value_enum, default_value_t = DoctorFormatArg::Text, conflicts_with = "issue")]
    pub format: DoctorFormatArg,

    /// The GPU monitor run now [default: nvidia-smi, then rocm-smi; none: no capture].
    #[arg(long, value_enum, value_name = "TOOL")]
    pub capture: Option<CaptureArg>,

    /// The Ollama server whose GET /api/ps is read now [default: $OLLAMA_HOST, else http://127.0.0.1:11434].
    #[arg(long, value_name = "URL")]
    pub ollama: Option<String>,

    /// Do not ask Ollama's /api/ps.
    #[arg(long, conflicts_with = "ollama")]
    pub no_ollama: bool,

    /// Exit 1 when a finding of this severity or above is present [default: the config file's `fail-on`,
    /// else never]
    #[arg(long, value_enum, value_name = "SEVERITY", env = "VRAMDIFF_FAIL_ON")]
    pub fail_on: Option<SeverityArg>,

    /// How long each command doctor runs (journalctl, docker, nvidia-smi, rocm-smi) and the /api/ps request
    /// may take before it is stopped and doctor goes on without it, in seconds (decimals allowed; the request
    /// counts whole seconds) [default: 10]
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,

    #[command(flatten)]
    pub manners: MannersArgs,
}

/// `doctor --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorFormatArg {
    Text,
    Json,
}

/// A bound in seconds: a positive number, at most a day.
pub fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => {
            Ok(std::time::Duration::from_secs_f64(s))
        }
        _ => Err(format!(
            "'{text}' is not a number of seconds above 0 (at most 86400)"
        )),
    }
}
