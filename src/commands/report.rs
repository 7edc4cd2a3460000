//! The commands, from parsed arguments to what the terminal gets: bytes for stdout, messages for stderr and an
//! exit code. The report and `whatif` run the pipeline ([`crate::pipeline`]) over every input and hand the
//! result to a reporter; `batch` lives in [`crate::batch`]. Nothing here prints.

use crate::cli::{
    FormatArg, InputArgs, InspectArgs, InspectFormatArg, KvTypeArg, ReportArgs, SchedulerArg,
    SeverityArg, WhatifArgs,
};
use crate::model::{Analysis, InputSummary, KvType, Severity};
use crate::pipeline::Pipeline;
pub use crate::pipeline::{parser, Options, SetupError, MAX_KEPT_UNRECOGNIZED};
use crate::replay::max_ctx::max_ctx;
use crate::replay::{replay, Changes, Scheduler};
use crate::report::{self, chart, Format, ReportOptions};
use crate::smi::file::read_capture_file;
use crate::source;

/// What a command leaves for the terminal.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The report, for stdout.
    pub stdout: Vec<u8>,
    /// Messages for stderr, one per line (the binary prefixes them with `vramdiff: `).
    pub messages: Vec<String>,
    /// 0 ok, 1 a finding or a gate at or above the threshold, 2 an error.
    pub code: u8,
}

impl Outcome {
    /// A command that could not run at all.
    pub fn error(message: String) -> Outcome {
        Outcome {
            messages: vec![message],
            code: 2,
            ..Outcome::default()
        }
    }
}

/// The pipeline's options from the command line's input flags.
pub fn options(input: &InputArgs, keep_unrecognized: bool) -> Options {
    Options {
        grammar_dir: input.grammar_dir.clone(),
        keep_unrecognized,
        checks: crate::checks::CheckConfig {
            over_percent: input.over_percent,
            over_bytes: input.over_min,
            unattributed_bytes: input.unattributed_min,
        },
        smi: input.smi.clone(),
        smi_fields: input.smi_fields.clone(),
        model_files: crate::load::model_file::ModelFiles::from_environment(
            input.gguf.clone(),
            !input.no_model_search && std::env::var_os("VRAMDIFF_NO_MODEL_SEARCH").is_none(),
        ),
    }
}

/// The inputs to read: the files named, or standard input.
pub fn files(input: &InputArgs) -> Vec<String> {
    if input.files.is_empty() {
        vec!["-".to_string()]
    } else {
        input.files.clone()
    }
}

/// The severity a `--fail-on` value names (`never`: none).
pub fn severity(arg: SeverityArg) -> Option<Severity> {
    match arg {
        SeverityArg::Info => Some(Severity::Info),
        SeverityArg::Warning => Some(Severity::Warning),
        SeverityArg::Error => Some(Severity::Error),
        SeverityArg::Never => None,
    }
}

/// The report format a `--format` value names.
pub fn format(arg: FormatArg) -> Format {
    match arg {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Jsonl => Format::JsonLines,
        FormatArg::Junit => Format::Junit,
    }
}

/// Read every input and carry every load through every stage. `--smi` capture files apply to the last input's
/// last load; they are listed after the logs.
pub fn analyze(paths: &[String], options: &Options) -> Result<Analysis, SetupError> {
    let mut pipeline = Pipeline::new(options)?;
    let mut capture_files: Vec<InputSummary> = options
        .smi
        .iter()
        .map(|p| read_capture_file(p, options.smi_fields.as_deref()))
        .collect();
    let mut analysis = Analysis::default();
    let mut applied = false;
    for (i, path) in paths.iter().enumerate() {
        match source::open(path) {
            Ok(input) => {
                let last = i + 1 == paths.len();
                let files: &mut [InputSummary] = if last { &mut capture_files } else { &mut [] };
                let report = pipeline.run(&input.name, input.reader, files);
                applied |= last;
                analysis.inputs.push(report.summary);
                analysis.loads.extend(report.loads);
            }
            Err(e) => analysis.inputs.push(InputSummary {
                path: path.clone(),
                error: Some(e.to_string()),
                ..InputSummary::default()
            }),
        }
    }
    if !applied {
        for file in capture_files.iter_mut().filter(|f| !f.captures.is_empty()) {
            crate::pipeline::no_load_for_capture(file);
        }
    }
    analysis.inputs.extend(capture_files);
    Ok(analysis)
}

/// Name every input that could not be read; true when there was one (exit code 2).
fn input_errors(analysis: &Analysis, messages: &mut Vec<String>) -> bool {
    let errors: Vec<String> = analysis
        .inputs
        .iter()
        .filter_map(|i| i.error.clone())
        .collect();
    let failed = !errors.is_empty();
    messages.extend(errors);
    failed
}

/// The main command: every load's report in the chosen format, charts when asked, exit 1 at `--fail-on`.
pub fn report(args: &ReportArgs) -> Outcome {
    let analysis = match analyze(
        &files(&args.input),
        &options(&args.input, args.show_unrecognized),
    ) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let mut messages = Vec::new();
    let charts = match &args.chart {
        Some(dir) => match chart::files::write_charts(dir, &analysis) {
            Ok((links, written)) => {
                messages.extend(written.into_iter().map(|p| format!("wrote {p}")));
                links
            }
            Err(e) => return Outcome::error(e),
        },
        None => Vec::new(),
    };
    let options = ReportOptions {
        show_unrecognized: args.show_unrecognized,
        charts,
        fail_on: severity(args.fail_on),
    };
    if args.summary {
        let markdown = report::reporter(Format::Markdown, options.clone()).render(&analysis);
        crate::commands::diff::step_summary(&markdown, &mut messages);
    }
    let stdout = report::reporter(format(args.format), options).render(&analysis);
    let code = if input_errors(&analysis, &mut messages) {
        2
    } else if severity(args.fail_on).is_some_and(|t| {
        analysis
            .loads
            .iter()
            .flat_map(|l| &l.findings)
            .any(|f| f.severity >= t)
    }) {
        1
    } else {
        0
    };
    Outcome {
        stdout,
        messages,
        code,
    }
}

/// `vramdiff whatif`: every load replayed with the changes asked for.
pub fn whatif(args: &WhatifArgs) -> Outcome {
    let mut analysis = match analyze(&files(&args.input), &options(&args.input, false)) {
        Ok(a) => a,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let changes = Changes {
        gpus: args.gpus.clone(),
        gpu_count: args.gpu_count,
        ctx: args.ctx,
        parallel: args.parallel,
        gpu_overhead: args.gpu_overhead,
        graph_multiplier: args.graph_multiplier,
        scheduler: args.scheduler.map(|s| match s {
            SchedulerArg::Upstream => Scheduler::Upstream,
            SchedulerArg::Ollama37 => Scheduler::FewestFirst,
        }),
        kv_type: args.kv_type.map(|t| match t {
            KvTypeArg::F16 => KvType::F16,
            KvTypeArg::Q8_0 => KvType::Q8_0,
            KvTypeArg::Q4_0 => KvType::Q4_0,
        }),
    };
    for load in &mut analysis.loads {
        load.whatif = replay(&load.reconciled, &changes);
        if args.max_ctx {
            let max = max_ctx(&load.reconciled, &changes, changes.kv_type);
            if let Some(w) = &mut load.whatif {
                w.max_ctx = max;
            }
        }
    }
    let mut messages = Vec::new();
    if args.summary {
        let markdown = report::whatif::markdown(&analysis);
        crate::commands::diff::step_summary(&markdown, &mut messages);
    }
    let code = if input_errors(&analysis, &mut messages) {
        2
    } else {
        0
    };
    let stdout = match args.format {
        FormatArg::Junit => report::whatif::junit(&analysis, severity(args.fail_on)),
        other => report::whatif::render(&analysis, format(other)),
    };
    Outcome {
        stdout,
        messages,
        code,
    }
}

/// `vramdiff inspect`: a GGUF file's header, as weights per layer and KV cache per token.
pub fn inspect(args: &InspectArgs) -> Outcome {
    // Only `--tensors` prints the metadata values; otherwise string arrays (the vocabulary) are not kept.
    let detail = if args.tensors {
        crate::gguf::Detail::Everything
    } else {
        crate::gguf::Detail::Sizes
    };
    let read = |path: &std::path::Path| {
        crate::gguf::read_header_to(path, detail).map_err(|e| e.to_string())
    };
    let result = read(&args.model).and_then(|header| {
        let mmproj = args.mmproj.as_deref().map(read).transpose()?;
        let layout =
            crate::gguf::layout::build(&header, mmproj.as_ref()).map_err(|e| e.to_string())?;
        Ok(report::inspect::render(
            &header,
            &layout,
            mmproj.as_ref(),
            match args.format {
                InspectFormatArg::Text => Format::Text,
                InspectFormatArg::Json => Format::Json,
                InspectFormatArg::Markdown => Format::Markdown,
            },
            report::inspect::InspectOptions {
                tensors: args.tensors,
            },
        ))
    });
    match result {
        Ok(stdout) => Outcome {
            stdout,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(e),
    }
}
