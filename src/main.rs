//! The `vramdiff` binary: parse arguments, run the analysis, write the report, and exit 0 (ok), 1 (a finding
//! at or above `--fail-on`) or 2 (an error).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

#[cfg(feature = "batch")]
use std::io::IsTerminal;
use vramdiff::app::{self, Options};
use vramdiff::checks::CheckConfig;

#[cfg(feature = "batch")]
use indicatif::{ProgressBar, ProgressStyle};

#[cfg(feature = "batch")]
use vramdiff::batch::{self, BatchOptions};
#[cfg(feature = "batch")]
use vramdiff::cli::BatchArgs;
use vramdiff::cli::{Args, Command, FormatArg, InputArgs, SchedulerArg, SeverityArg};
use vramdiff::model::{Analysis, Severity};
use vramdiff::replay::{Changes, Scheduler};
use vramdiff::report::chart;
use vramdiff::report::{self, ChartLink, Format, ReportOptions};

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
    }
}

fn files(input: &InputArgs) -> Vec<String> {
    if input.files.is_empty() {
        vec!["-".to_string()]
    } else {
        input.files.clone()
    }
}

fn format(arg: FormatArg) -> Format {
    match arg {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
    }
}

/// Write the report; `Err` carries the exit code when that fails (a closed pipe is not a failure).
fn write(bytes: &[u8]) -> Result<(), ExitCode> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("vramdiff: cannot write the report: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// 2 when an input could not be read, after naming it on stderr.
fn input_errors(analysis: &Analysis) -> bool {
    let mut failed = false;
    for input in &analysis.inputs {
        if let Some(e) = &input.error {
            eprintln!("vramdiff: {e}");
            failed = true;
        }
    }
    failed
}

/// Render every load's charts into `dir`; returns the paths written, per load, for the report to link.
fn write_charts(
    dir: &std::path::Path,
    analysis: &Analysis,
) -> Result<Vec<Vec<ChartLink>>, ExitCode> {
    let fail = |what: String| {
        eprintln!("vramdiff: {what}");
        ExitCode::from(2)
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        fail(format!(
            "cannot create the chart folder {}: {e}",
            dir.display()
        ))
    })?;
    let mut links = Vec::new();
    for (i, load) in analysis.loads.iter().enumerate() {
        let charts = chart::load_charts(load, i + 1)
            .map_err(|e| fail(format!("chart of load {}: {e}", i + 1)))?;
        let mut written = Vec::new();
        for c in charts {
            // The name is built from [A-Za-z0-9._-] only (chart::stem), so it stays inside `dir`.
            let path = dir.join(&c.file_name);
            std::fs::write(&path, &c.png)
                .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("vramdiff: wrote {}", path.display());
            written.push(ChartLink {
                path: path.display().to_string(),
                title: c.title,
            });
        }
        links.push(written);
    }
    Ok(links)
}

fn analyze(files: &[String], options: &Options) -> Result<Analysis, ExitCode> {
    app::analyze(files, options).map_err(|e| {
        eprintln!("vramdiff: {e}");
        ExitCode::from(2)
    })
}

fn run(args: Args) -> Result<ExitCode, ExitCode> {
    match args.command {
        Some(Command::Whatif(w)) => {
            let mut analysis = analyze(&files(&w.input), &options(&w.input, false))?;
            let changes = Changes {
                gpus: w.gpus.clone(),
                gpu_count: w.gpu_count,
                ctx: w.ctx,
                parallel: w.parallel,
                gpu_overhead: w.gpu_overhead,
                graph_multiplier: w.graph_multiplier,
                scheduler: w.scheduler.map(|s| match s {
                    SchedulerArg::Upstream => Scheduler::Upstream,
                    SchedulerArg::Ollama37 => Scheduler::FewestFirst,
                }),
            };
            for load in &mut analysis.loads {
                load.whatif = vramdiff::replay::replay(load, &changes);
            }
            write(&report::whatif::render(&analysis, format(w.format)))?;
            Ok(if input_errors(&analysis) {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            })
        }
        #[cfg(feature = "batch")]
        Some(Command::Batch(b)) => batch(b),
        None => {
            let r = args.report;
            let analysis = analyze(&files(&r.input), &options(&r.input, r.show_unrecognized))?;
            let charts = match &r.chart {
                Some(dir) => write_charts(dir, &analysis)?,
                None => Vec::new(),
            };
            let bytes = report::reporter(
                format(r.format),
                ReportOptions {
                    show_unrecognized: r.show_unrecognized,
                    charts,
                },
            )
            .render(&analysis);
            write(&bytes)?;
            if input_errors(&analysis) {
                return Ok(ExitCode::from(2));
            }
            let threshold = severity(r.fail_on);
            let gate = threshold.is_some_and(|t| {
                analysis
                    .loads
                    .iter()
                    .flat_map(|l| &l.findings)
                    .any(|f| f.severity >= t)
            });
            Ok(if gate {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn severity(arg: SeverityArg) -> Option<Severity> {
    match arg {
        SeverityArg::Info => Some(Severity::Info),
        SeverityArg::Warning => Some(Severity::Warning),
        SeverityArg::Error => Some(Severity::Error),
        SeverityArg::Never => None,
    }
}

#[cfg(feature = "batch")]
fn batch(b: BatchArgs) -> Result<ExitCode, ExitCode> {
    if !b.input.smi.is_empty() {
        eprintln!("vramdiff: --smi is not used by batch (captures pasted inside the logs are)");
    }
    let options = BatchOptions {
        paths: files(&b.input),
        out: b.out.clone(),
        baseline: b.baseline.clone(),
        jsonl: b.jsonl,
        threads: b.threads,
        fail_on: severity(b.fail_on),
        max_errors: b.max_error.clone(),
        fail_on_regression: b.fail_on_regression,
        analysis: options(&b.input, false),
    };
    let show = !b.quiet && std::io::stderr().is_terminal();
    let bar = if show {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} files  {per_sec}  {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let outcome = batch::run(&options, &|done| bar.set_position(done), &|n| {
        bar.set_length(n)
    });
    bar.finish_and_clear();
    let outcome = outcome.map_err(|e| {
        eprintln!("vramdiff: {e:#}");
        ExitCode::from(2)
    })?;
    write(outcome.summary.as_bytes())?;
    for path in &outcome.written {
        eprintln!("vramdiff: wrote {path}");
    }
    eprintln!(
        "vramdiff: {} files ({} skipped: unreadable), {} loads",
        outcome.files, outcome.failed_files, outcome.loads
    );
    if outcome.files > 0 && outcome.failed_files >= outcome.files {
        eprintln!("vramdiff: no input could be read");
        return Ok(ExitCode::from(2));
    }
    if outcome.files == 0 {
        eprintln!("vramdiff: no input file found");
        return Ok(ExitCode::from(2));
    }
    if !outcome.offenders.is_empty() {
        for o in &outcome.offenders {
            eprintln!("vramdiff: gate: {o}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    run(Args::parse()).unwrap_or_else(|code| code)
}
