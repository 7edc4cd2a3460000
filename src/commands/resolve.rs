//! The command line, resolved: clap's types (as the user typed them, [`crate::cli`]) turned once, here, into
//! the clap-free options each command runs with — the pipeline's [`Options`], the report format, the
//! `--fail-on` severity, the files to read, the what-if changes, the follow's live observations, the batch's
//! options. Nothing past this module sees a clap type, so the stages never depend on the command line.

use std::path::PathBuf;

use crate::checks::CheckConfig;
use crate::cli::{
    Args, CaptureArg, Command, FamilyArg, InputArgs, InspectFormatArg, KvTypeArg, ReportArgs,
    SchedulerArg, SeverityArg, ShellArg, WhatifArgs,
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
