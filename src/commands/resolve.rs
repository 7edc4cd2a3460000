//! The command line, resolved: clap's types (as the user typed them, [`crate::cli`]) turned once, here, into
//! the clap-free options each command runs with — the pipeline's [`Options`], the report format, the
//! `--fail-on` severity, the files to read, the what-if changes, the follow's live observations, the batch's
//! options. Nothing past this module sees a clap type, so the stages never depend on the command line.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::checks::CheckConfig;
use crate::cli::{
    Args, CaptureArg, ColorArg, Command, FamilyArg, InputArgs, InspectFormatArg, KvTypeArg,
    ReportArgs, SchedulerArg, SeverityArg, ShellArg, WhatifArgs,
};
use crate::live::capture::Tool;
use crate::load::model_file::ModelFiles;
use crate::model::{KvType, Severity};
use crate::pipeline::Options;
use crate::replay::{Asked, Changes, Family, Scheduler};
use crate::report::Format;

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
    /// Paint the text report for a terminal (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`).
    pub color: bool,
    /// `-q`: no messages unless the command fails.
    pub quiet: bool,
}

/// `vramdiff doctor`'s options.
#[derive(Debug, Clone)]
pub struct Doctor {
    /// The log given, instead of looking for one.
    pub log: Option<String>,
    pub issue: bool,
    /// The GPU monitors to try now, in order (empty: none).
    pub capture: Vec<Tool>,
    /// The Ollama server to ask now.
    pub ollama: Option<String>,
    pub fail_on: Option<Severity>,
    /// Why doctor runs when the user did not ask for it (no file on a terminal), said on stderr.
    pub implicit: bool,
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
    pub model: PathBuf,
    pub mmproj: Option<PathBuf>,
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
    /// No progress bar.
    pub quiet: bool,
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

/// The command the arguments name, resolved.
pub fn resolve(args: &Args) -> Request {
    match &args.command {
        None if args.report.follow => Request::Follow(follow(&args.report)),
        // No file, and standard input is a terminal (nothing piped in): rather than wait for input no one will
        // type, look for the log where the server writes it.
        None if args.report.input.files.is_empty() && std::io::stdin().is_terminal() => {
            Request::Doctor(Doctor {
                log: None,
                issue: false,
                capture: vec![Tool::NvidiaSmi, Tool::RocmSmi],
                ollama: Some(ollama_host()),
                fail_on: severity(args.report.fail_on),
                implicit: true,
            })
        }
        None => Request::Report(report(&args.report)),
        Some(Command::Whatif(w)) => Request::Whatif(whatif(w)),
        Some(Command::Inspect(i)) => Request::Inspect(Inspect {
            model: i.model.clone(),
            mmproj: i.mmproj.clone(),
            format: match i.format {
                InspectFormatArg::Text => Format::Text,
                InspectFormatArg::Json => Format::Json,
                InspectFormatArg::Markdown => Format::Markdown,
            },
            tensors: i.tensors,
        }),
        #[cfg(feature = "batch")]
        Some(Command::Batch(b)) => Request::Batch(Batch {
            options: crate::batch::BatchOptions {
                paths: files(&b.input),
                out: b.out.clone(),
                baseline: b.baseline.clone(),
                jsonl: b.jsonl,
                threads: b.threads,
                fail_on: severity(b.fail_on),
                max_errors: b.max_error.clone(),
                fail_on_regression: b.fail_on_regression,
                analysis: options(&b.input, false),
                shard: b.shard,
                partition_by: b.partition_by.clone(),
                junit: b.junit.clone(),
                html: b.html.clone(),
            },
            quiet: b.quiet,
            summary: b.summary,
        }),
        Some(Command::Diff(d)) => Request::Diff(Diff {
            old: d.old.clone(),
            new: d.new.clone(),
            options: Options {
                grammar_dir: d.grammar_dir.clone(),
                ..Options::default()
            },
            format: d.format.format(),
            fail_on_regression: d.fail_on_regression,
            summary: d.summary,
        }),
        Some(Command::Completions(c)) => Request::Completions(match c.shell {
            ShellArg::Bash => clap_complete::Shell::Bash,
            ShellArg::Zsh => clap_complete::Shell::Zsh,
            ShellArg::Fish => clap_complete::Shell::Fish,
            ShellArg::Powershell => clap_complete::Shell::PowerShell,
        }),
        Some(Command::Man) => Request::Man,
        Some(Command::Doctor(d)) => Request::Doctor(Doctor {
            log: d.log.clone(),
            issue: d.issue,
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
            fail_on: severity(d.fail_on),
            implicit: false,
        }),
    }
}

fn report(args: &ReportArgs) -> Report {
    Report {
        files: files(&args.input),
        options: options(&args.input, args.show_unrecognized),
        format: args.format.format(),
        show_unrecognized: args.show_unrecognized,
        chart: args.chart.clone(),
        fail_on: severity(args.fail_on),
        summary: args.summary,
        color: color(args.color),
        quiet: args.quiet,
    }
}

/// Whether to colour, as clig.dev describes: `always`/`never` decide; `auto` colours a terminal unless
/// `NO_COLOR` is set to anything, and `CLICOLOR_FORCE` (not `0`) colours even a pipe.
fn color(arg: ColorArg) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            if set("CLICOLOR_FORCE") && std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0")
            {
                true
            } else if set("NO_COLOR") {
                false
            } else {
                std::io::stdout().is_terminal()
            }
        }
    }
}

fn follow(args: &ReportArgs) -> Follow {
    Follow {
        files: files(&args.input),
        options: options(&args.input, false),
        live: crate::live::Settings {
            format: args.format.format(),
            fail_on: severity(args.fail_on),
            capture: match args.capture {
                CaptureArg::NvidiaSmi => Some(Tool::NvidiaSmi),
                CaptureArg::RocmSmi => Some(Tool::RocmSmi),
                CaptureArg::None => None,
            },
            ollama: args.ollama.clone(),
            serve: args.serve.clone(),
        },
    }
}

fn whatif(args: &WhatifArgs) -> Whatif {
    Whatif {
        files: files(&args.input),
        options: Options {
            whatif: Some(Asked {
                changes: whatif_changes(args),
                max_ctx: args.max_ctx,
                explain: args.explain,
            }),
            ..options(&args.input, false)
        },
        format: args.format.format(),
        fail_on: severity(args.fail_on),
        summary: args.summary,
    }
}

/// The changes `vramdiff whatif` replays with.
fn whatif_changes(args: &WhatifArgs) -> Changes {
    Changes {
        gpus: args.gpus.clone(),
        gpu_count: args.gpu_count,
        ctx: args.ctx,
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
    }
}

/// The pipeline's options from the command line's input flags.
fn options(input: &InputArgs, keep_unrecognized: bool) -> Options {
    Options {
        grammar_dir: input.grammar_dir.clone(),
        keep_unrecognized,
        checks: CheckConfig {
            over_percent: input.over_percent,
            over_bytes: input.over_min,
            unattributed_bytes: input.unattributed_min,
        },
        smi: input.smi.clone(),
        smi_fields: input.smi_fields.clone(),
        model_files: ModelFiles::from_environment(
            input.gguf.clone(),
            !input.no_model_search && std::env::var_os("VRAMDIFF_NO_MODEL_SEARCH").is_none(),
        ),
        whatif: None,
    }
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
