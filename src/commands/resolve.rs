//! The command line, resolved: clap's types (as the user typed them, [`crate::cli`]) turned once, here, into
//! the clap-free options each command runs with — the pipeline's [`Options`], the report format, the
//! `--fail-on` severity, the files to read, the what-if changes, the follow's live observations, the batch's
//! options. Nothing past this module sees a clap type, so the stages never depend on the command line.
//!
//! Each default the user may set is decided here in one order: the flag, else its environment variable (clap
//! reads both into the same `Option`), else the config file ([`super::config`]), else the built-in default.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use super::config::{self, Config};
use crate::checks::CheckConfig;
use crate::cli::{
    Args, CaptureArg, ColorArg, Command, DoctorFormatArg, FamilyArg, FetchArgs, FormatArg,
    InputArgs, InspectFormatArg, KvTypeArg, MannersArgs, ReportArgs, SchedulerArg, SeverityArg,
    ShellArg, WhatifArgs,
};
use crate::live::capture::Tool;
use crate::load::model_file::ModelFiles;
use crate::model::{KvType, Severity};
use crate::pipeline::Options;
use crate::replay::{Asked, Changes, Family, Scheduler};
use crate::report::Format;

/// A command resolved, and how it talks to the terminal.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub request: Request,
    pub manners: Manners,
}

/// How a command talks to the terminal (`--color`, `-q`), the same for every command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Manners {
    /// Paint the text report (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`, the config file, a terminal on stdout).
    pub color: bool,
    /// `-q`: no notes on stderr unless the command fails.
    pub quiet: bool,
}

/// A command, with everything it needs resolved.
#[derive(Debug, Clone)]
pub enum Request {
    /// The default command: every load's report.
    Report(Report),
    /// `--follow`: the report of each load as it completes.
    Follow(Follow),
    Whatif(Whatif),
    Inspect(Inspect),
    #[cfg(feature = "batch")]
    Batch(Batch),
    Diff(Diff),
    Doctor(Doctor),
    /// `completions SHELL`.
    Completions(clap_complete::Shell),
    Man,
    /// `mcp`: the MCP server on stdio.
    #[cfg(feature = "mcp")]
    Mcp,
}

impl Request {
    /// Whether the command's stdout is the terminal's text layout, the one `--color` paints (`--follow`
    /// paints each load itself as it writes it).
    pub fn writes_text(&self) -> bool {
        match self {
            Request::Report(r) => r.format == Format::Text,
            Request::Whatif(w) => w.format == Format::Text,
            Request::Inspect(i) => i.format == Format::Text,
            Request::Diff(d) => d.format == Format::Text,
            Request::Doctor(d) => !d.issue && !d.json,
            Request::Follow(_) | Request::Completions(_) | Request::Man => false,
            #[cfg(feature = "mcp")]
            Request::Mcp => false,
            #[cfg(feature = "batch")]
            Request::Batch(_) => false,
        }
    }
}

/// The default command's options.
#[derive(Debug, Clone)]
pub struct Report {
    /// The inputs to read (`-`: standard input).
    pub files: Vec<String>,
    pub options: Options,
    pub format: Format,
    pub show_unrecognized: bool,
    /// `--chart`: the folder for the PNG charts.
    pub chart: Option<PathBuf>,
    pub fail_on: Option<Severity>,
    /// `--summary`: also append the Markdown report to `$GITHUB_STEP_SUMMARY`.
    pub summary: bool,
}

/// `vramdiff doctor`'s options.
#[derive(Debug, Clone)]
pub struct Doctor {
    /// The log given, instead of looking for one.
    pub log: Option<String>,
    pub issue: bool,
    /// `--format json`: the last load as one redacted JSON line instead of its text report.
    pub json: bool,
    /// The GPU monitors to try now, in order (empty: none).
    pub capture: Vec<Tool>,
    /// The Ollama server to ask now.
    pub ollama: Option<String>,
    pub fail_on: Option<Severity>,
    /// Why doctor runs when the user did not ask for it (no file on a terminal), said on stderr.
    pub implicit: bool,
    /// How long each command doctor runs, and the `/api/ps` request, may take.
    pub timeout: Duration,
}

/// `--follow`'s options.
#[derive(Debug, Clone)]
pub struct Follow {
    /// The inputs named (the follow takes one).
    pub files: Vec<String>,
    pub options: Options,
    /// The format, `--fail-on` and what to observe when a load completes.
    pub live: crate::live::Settings,
}

/// `vramdiff whatif`'s options.
#[derive(Debug, Clone)]
pub struct Whatif {
    pub files: Vec<String>,
    /// With the replay asked for (`options.whatif`).
    pub options: Options,
    pub format: Format,
    /// With JUnit: a failure per finding at or above it.
    pub fail_on: Option<Severity>,
    pub summary: bool,
}

/// `vramdiff inspect`'s options.
#[derive(Debug, Clone)]
pub struct Inspect {
    /// A path, or a URL (`crate::fetch::is_remote`).
    pub model: String,
    pub mmproj: Option<String>,
    /// How a URL is fetched.
    pub fetch: crate::fetch::FetchOptions,
    /// Text, JSON or Markdown.
    pub format: Format,
    /// `--tensors`: every tensor and metadata value too.
    pub tensors: bool,
}

/// `vramdiff batch`'s options.
#[cfg(feature = "batch")]
#[derive(Debug, Clone)]
pub struct Batch {
    pub options: crate::batch::BatchOptions,
    pub summary: bool,
}

/// `vramdiff diff`'s options.
#[derive(Debug, Clone)]
pub struct Diff {
    pub old: String,
    pub new: String,
    pub options: Options,
    pub format: Format,
    pub fail_on_regression: bool,
    pub summary: bool,
}

/// The command the arguments name, resolved; `Err` when the config file cannot be read or holds a mistake.
pub fn resolve(args: &Args) -> Result<Resolved, String> {
    // What only prints clap's definition reads no config file: a broken one must not stop its repair.
    let config = match &args.command {
        Some(Command::Completions(_) | Command::Man) => Config::default(),
        // The server reads none: each call's command reads it, and says what is wrong with it in its error.
        #[cfg(feature = "mcp")]
        Some(Command::Mcp) => Config::default(),
        _ => config::load()?,
    };
    let none = MannersArgs {
        color: None,
        quiet: false,
    };
    let (request, manners) = match &args.command {
        None if args.report.follow => (
            Request::Follow(follow(&args.report, &config)),
            &args.report.manners,
        ),
        // No file, and standard input is a terminal (nothing piped in): rather than wait for input no one will
        // type, look for the log where the server writes it.
        None if args.report.input.files.is_empty() && std::io::stdin().is_terminal() => (
            Request::Doctor(Doctor {
                log: None,
                issue: false,
                json: false,
                capture: vec![Tool::NvidiaSmi, Tool::RocmSmi],
                ollama: Some(ollama_host()),
                fail_on: fail_on(args.report.fail_on, &config, SeverityArg::Never),
                implicit: true,
                timeout: super::doctor::TIMEOUT,
            }),
            &args.report.manners,
        ),
        None => (
            Request::Report(report(&args.report, &config)),
            &args.report.manners,
        ),
        Some(Command::Whatif(w)) => (Request::Whatif(whatif(w, &config)), &w.manners),
        Some(Command::Inspect(i)) => (
            Request::Inspect(Inspect {
                model: i.model.clone(),
                mmproj: i.mmproj.clone(),
                format: match i.format {
                    InspectFormatArg::Text => Format::Text,
                    InspectFormatArg::Json => Format::Json,
                    InspectFormatArg::Markdown => Format::Markdown,
                },
                tensors: i.tensors,
                fetch: fetch(&i.fetch),
            }),
            &i.manners,
        ),
        #[cfg(feature = "batch")]
        Some(Command::Batch(b)) => (
            Request::Batch(Batch {
                options: crate::batch::BatchOptions {
                    paths: files(&b.input),
                    out: b.out.clone(),
                    baseline: b.baseline.clone(),
                    jsonl: b.jsonl,
                    threads: b.threads,
                    fail_on: fail_on(b.fail_on, &config, SeverityArg::Never),
                    max_errors: b.max_error.clone(),
                    fail_on_regression: b.fail_on_regression,
                    analysis: options(&b.input, &config, false),
                    shard: b.shard,
                    partition_by: b.partition_by.clone(),
                    junit: b.junit.clone(),
                    html: b.html.clone(),
                },
                summary: b.summary,
            }),
            &b.manners,
        ),
        Some(Command::Diff(d)) => (
            Request::Diff(Diff {
                old: d.old.clone(),
                new: d.new.clone(),
                options: Options {
                    grammar_dir: d.grammar_dir.clone(),
                    ..Options::default()
                },
                format: format(d.format, &config),
                fail_on_regression: d.fail_on_regression,
                summary: d.summary,
            }),
            &d.manners,
        ),
        Some(Command::Doctor(d)) => (
            Request::Doctor(Doctor {
                log: d.log.clone(),
                issue: d.issue,
                json: match d.format {
                    DoctorFormatArg::Text => false,
                    DoctorFormatArg::Json => true,
                },
                capture: match d.capture {
                    None => vec![Tool::NvidiaSmi, Tool::RocmSmi],
                    Some(CaptureArg::NvidiaSmi) => vec![Tool::NvidiaSmi],
                    Some(CaptureArg::RocmSmi) => vec![Tool::RocmSmi],
                    Some(CaptureArg::None) => Vec::new(),
                },
                ollama: if d.no_ollama {
                    None
                } else {
                    Some(d.ollama.clone().unwrap_or_else(ollama_host))
                },
                fail_on: fail_on(d.fail_on, &config, SeverityArg::Never),
                implicit: false,
                timeout: d.timeout.unwrap_or(super::doctor::TIMEOUT),
            }),
            &d.manners,
        ),
        Some(Command::Completions(c)) => (
            Request::Completions(match c.shell {
                ShellArg::Bash => clap_complete::Shell::Bash,
                ShellArg::Zsh => clap_complete::Shell::Zsh,
                ShellArg::Fish => clap_complete::Shell::Fish,
                ShellArg::Powershell => clap_complete::Shell::PowerShell,
            }),
            &none,
        ),
        Some(Command::Man) => (Request::Man, &none),
        #[cfg(feature = "mcp")]
        Some(Command::Mcp) => (Request::Mcp, &none),
    };
    Ok(Resolved {
        request,
        manners: Manners {
            color: color(manners.color, config.color),
            quiet: manners.quiet,
        },
    })
}

fn report(args: &ReportArgs, config: &Config) -> Report {
    Report {
        files: files(&args.input),
        // Kept whatever the flag: the JSON report lists them (the text report only with the flag).
        options: options(&args.input, config, true),
        format: format(args.format, config),
        show_unrecognized: args.show_unrecognized,
        chart: args.chart.clone(),
        fail_on: fail_on(args.fail_on, config, SeverityArg::Error),
        summary: args.summary,
    }
}

/// The format: the flag or `VRAMDIFF_FORMAT`, else the config file's, else text.
fn format(arg: Option<FormatArg>, config: &Config) -> Format {
    arg.or(config.format).unwrap_or(FormatArg::Text).format()
}

/// The `--fail-on` severity: the flag or `VRAMDIFF_FAIL_ON`, else the config file's, else the command's own
/// default.
fn fail_on(arg: Option<SeverityArg>, config: &Config, default: SeverityArg) -> Option<Severity> {
    severity(arg.or(config.fail_on).unwrap_or(default))
}

/// Whether to colour, as clig.dev describes: `always`/`never` decide; `auto` colours a terminal unless
/// `NO_COLOR` is set to anything, and `CLICOLOR_FORCE` (not `0`) colours even a pipe. Without the flag the
/// environment decides first, then the config file's `color`, then whether stdout is a terminal.
fn color(flag: Option<ColorArg>, file: Option<ColorArg>) -> bool {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let environment = if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        Some(true)
    } else if set("NO_COLOR").is_some() {
        Some(false)
    } else {
        None
    };
    let decided = |arg: Option<ColorArg>| match arg {
        Some(ColorArg::Always) => Some(true),
        Some(ColorArg::Never) => Some(false),
        Some(ColorArg::Auto) | None => None,
    };
    match flag {
        Some(ColorArg::Always) => true,
        Some(ColorArg::Never) => false,
        Some(ColorArg::Auto) => environment.unwrap_or_else(|| std::io::stdout().is_terminal()),
        None => environment
            .or_else(|| decided(file))
            .unwrap_or_else(|| std::io::stdout().is_terminal()),
    }
}

fn follow(args: &ReportArgs, config: &Config) -> Follow {
    Follow {
        files: files(&args.input),
        options: options(&args.input, config, false),
        live: crate::live::Settings {
            format: format(args.format, config),
            fail_on: fail_on(args.fail_on, config, SeverityArg::Error),
            capture: match args.capture {
                CaptureArg::NvidiaSmi => Some(Tool::NvidiaSmi),
                CaptureArg::RocmSmi => Some(Tool::RocmSmi),
                CaptureArg::None => None,
            },
            ollama: args.ollama.clone(),
            serve: args.serve.clone(),
            color: color(args.manners.color, config.color),
        },
    }
}

fn whatif(args: &WhatifArgs, config: &Config) -> Whatif {
    Whatif {
        files: files(&args.input),
        options: Options {
            whatif: Some(Asked {
                changes: whatif_changes(args),
                max_ctx: args.max_ctx,
                explain: args.explain,
            }),
            ..options(&args.input, config, false)
        },
        format: format(args.format, config),
        fail_on: fail_on(args.fail_on, config, SeverityArg::Error),
        summary: args.summary,
    }
}

/// The changes `vramdiff whatif` replays with.
fn whatif_changes(args: &WhatifArgs) -> Changes {
    Changes {
        gpus: args.gpus.clone(),
        gpu_count: args.gpu_count,
        ctx: args.ctx,
        context_scale: None,
        parallel: args.parallel,
        gpu_overhead: args.gpu_overhead,
        graph_multiplier: args.graph_multiplier,
        scheduler: args.scheduler.map(|s| match s {
            SchedulerArg::Upstream => Scheduler::Upstream,
            SchedulerArg::Ollama37 => Scheduler::FewestFirst,
            SchedulerArg::Family => Scheduler::OfFamily,
        }),
        family: args.family.map(|f| match f {
            FamilyArg::Upstream05 => Family::Upstream05,
            FamilyArg::Upstream061 => Family::Upstream061,
            FamilyArg::Upstream063 => Family::Upstream063,
            FamilyArg::Upstream070 => Family::Upstream070,
            FamilyArg::Upstream071 => Family::Upstream071,
            FamilyArg::Upstream0115 => Family::Upstream0115,
            FamilyArg::Ollama37Last => Family::Ollama37Last,
            FamilyArg::Ollama37Scaled => Family::Ollama37Scaled,
            FamilyArg::Ollama37Revert => Family::Ollama37Revert,
            FamilyArg::Ollama37Safety => Family::Ollama37Safety,
        }),
        kv_type: args.kv_type.map(|t| match t {
            KvTypeArg::F16 => KvType::F16,
            KvTypeArg::Q8_0 => KvType::Q8_0,
            KvTypeArg::Q4_0 => KvType::Q4_0,
        }),
        ubatch: args.ubatch,
        gpu_layers: args.ngl,
        flash_attention: None,
    }
}

/// The pipeline's options from the command line's input flags, the thresholds after the config file's.
fn options(input: &InputArgs, config: &Config, keep_unrecognized: bool) -> Options {
    let defaults = CheckConfig::default();
    Options {
        grammar_dir: input.grammar_dir.clone(),
        keep_unrecognized,
        checks: CheckConfig {
            over_percent: input
                .over_percent
                .or(config.over_percent)
                .unwrap_or(defaults.over_percent),
            over_bytes: input
                .over_min
                .or(config.over_min)
                .unwrap_or(defaults.over_bytes),
            unattributed_bytes: input
                .unattributed_min
                .or(config.unattributed_min)
                .unwrap_or(defaults.unattributed_bytes),
        },
        smi: input.smi.clone(),
        smi_fields: input.smi_fields.clone(),
        model_files: match &input.gguf {
            Some(address) if crate::fetch::is_remote(address) => {
                ModelFiles::remote(address.clone(), fetch(&input.fetch))
            }
            gguf => ModelFiles::from_environment(
                gguf.as_ref().map(PathBuf::from),
                !input.no_model_search && std::env::var_os("VRAMDIFF_NO_MODEL_SEARCH").is_none(),
            ),
        },
        whatif: None,
    }
}

/// How a URL's header is fetched: the flags, the token (`$HF_TOKEN`), the cache folder and the endpoints from
/// the environment.
fn fetch(args: &FetchArgs) -> crate::fetch::FetchOptions {
    crate::fetch::FetchOptions::from_environment(
        args.timeout.unwrap_or(crate::fetch::DEFAULT_TIMEOUT),
        args.allow_full_download,
        !args.no_cache,
    )
}

/// Ollama's address from `$OLLAMA_HOST` (`host`, `host:port` or a URL), else the default.
pub fn ollama_host() -> String {
    match std::env::var("OLLAMA_HOST") {
        Ok(h) if !h.trim().is_empty() => {
            let h = h.trim();
            let with_scheme = if h.contains("://") {
                h.to_string()
            } else {
                format!("http://{h}")
            };
            let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
            if after_scheme.contains(':') {
                with_scheme
            } else {
                format!("{with_scheme}:11434")
            }
        }
        _ => "http://127.0.0.1:11434".to_string(),
    }
}

/// The inputs to read: the files named, or standard input.
fn files(input: &InputArgs) -> Vec<String> {
    if input.files.is_empty() {
        vec!["-".to_string()]
    } else {
        input.files.clone()
    }
}

/// The severity a `--fail-on` value names (`never`: none).
fn severity(arg: SeverityArg) -> Option<Severity> {
    match arg {
        SeverityArg::Info => Some(Severity::Info),
        SeverityArg::Warning => Some(Severity::Warning),
        SeverityArg::Error => Some(Severity::Error),
        SeverityArg::Never => None,
    }
}
