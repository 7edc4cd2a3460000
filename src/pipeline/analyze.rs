//! Many inputs through one [`Pipeline`]: every log named, in order, and the `--smi` capture files, which
//! apply to the last input's last load and are listed after the logs. What the report, `whatif` and `diff`
//! commands, the benches and the tests read; `batch` and `--follow` drive the pipeline themselves.

use crate::model::{Analysis, InputSummary};
use crate::smi::file::read_capture_file;
use crate::source;

use super::{no_load_for_capture, Collect, LoadSink, Options, Pipeline, SetupError};

/// Read every input and carry every load through every stage. `--smi` capture files apply to the last input's
/// last load; they are listed after the logs.
pub fn analyze(paths: &[String], options: &Options) -> Result<Analysis, SetupError> {
    let mut loads = Collect::default();
    let inputs = analyze_streamed(paths, options, &mut loads)?;
    Ok(Analysis {
        inputs,
        loads: loads.0,
    })
}

/// [`analyze`] handing each load to `sink` as soon as it completes, in the same order, instead of keeping
/// them (the report written load by load: `report::streamed`). Returns the inputs' summaries.
pub fn analyze_streamed(
    paths: &[String],
    options: &Options,
    sink: &mut dyn LoadSink,
) -> Result<Vec<InputSummary>, SetupError> {
    let mut pipeline = Pipeline::new(options)?;
    // A second core frames the next lines while this one parses (same output, less wall time).
    if std::thread::available_parallelism().is_ok_and(|n| n.get() > 1) {
        pipeline.read_ahead();
    }
    let mut capture_files: Vec<InputSummary> = options
        .smi
        .iter()
        .map(|p| read_capture_file(p, options.smi_fields.as_deref()))
        .collect();
    let mut inputs = Vec::new();
    let mut applied = false;
    for (i, path) in paths.iter().enumerate() {
        // A pasted diff of two runs is read as its two sides (`source::diff_sides`).
        let opened = source::open(path)
            .map_err(|e| e.to_string())
            .and_then(|input| source::diff_sides::sides(input).map_err(|e| format!("{path}: {e}")));
        match opened {
            Ok(sides) => {
                let count = sides.len();
                for (k, input) in sides.into_iter().enumerate() {
                    let last = i + 1 == paths.len() && k + 1 == count;
                    let files: &mut [InputSummary] =
                        if last { &mut capture_files } else { &mut [] };
                    inputs.push(pipeline.stream(&input.name, input.reader, files, sink));
                    applied |= last;
                }
            }
            Err(e) => inputs.push(InputSummary {
                path: path.clone(),
                error: Some(e),
                ..InputSummary::default()
            }),
        }
    }
    if !applied {
        for file in capture_files.iter_mut().filter(|f| !f.captures.is_empty()) {
            no_load_for_capture(file);
        }
    }
    inputs.extend(capture_files);
    Ok(inputs)
}
