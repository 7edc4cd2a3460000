//! The batch tables as polars DataFrames — `loads` (one row per load), `components` (one row per load ×
//! component and load × device) and `pairs` (one row per figure of a pair of loads) — and writing them as Parquet, CSV and JSON lines. Column names are stable:
//! they are what users' notebooks and dashboards read.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use super::rows::{ComponentFigures, ComponentRecord, LoadRow, COMPONENTS};
use super::scorecard::PairRow;

/// A named column from a vector (the element type picks the polars type).
macro_rules! column {
    ($name:expr, $values:expr $(,)?) => {
        Column::new(PlSmallStr::from($name), $values)
    };
}

/// The `loads` table, from the rows of every file in order (borrowed: polars copies the text into its own
/// buffers, so no cell is cloned on the way).
pub fn loads_frame(rows: &[&LoadRow]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&LoadRow) -> &str| rows.iter().map(|r| f(r)).collect::<Vec<&str>>();
    let os = |f: &dyn Fn(&LoadRow) -> Option<&str>| {
        rows.iter().map(|r| f(r)).collect::<Vec<Option<&str>>>()
    };
    let i = |f: &dyn Fn(&LoadRow) -> Option<i64>| {
        rows.iter().map(|r| f(r)).collect::<Vec<Option<i64>>>()
    };
    let n = |f: &dyn Fn(&LoadRow) -> i64| rows.iter().map(|r| f(r)).collect::<Vec<i64>>();
    let b = |f: &dyn Fn(&LoadRow) -> bool| rows.iter().map(|r| f(r)).collect::<Vec<bool>>();
    let mut columns = vec![
        column!("file", s(&|r| &r.file)),
        column!("load", n(&|r| r.load)),
        column!("first_line", n(&|r| r.first_line)),
        column!("last_line", n(&|r| r.last_line)),
        column!("key", s(&|r| &r.key)),
        column!("partial", b(&|r| r.partial)),
        column!("failed", b(&|r| r.failed)),
        column!("model", os(&|r| r.model.as_deref())),
        column!("blob", os(&|r| r.blob.as_deref())),
        column!("engine", s(&|r| &r.engine)),
        column!("ollama_version", os(&|r| r.ollama_version.as_deref())),
        column!("era", s(&|r| &r.era)),
        column!("runtime", s(&|r| &r.runtime)),
        column!("runtime_version", os(&|r| r.runtime_version.as_deref())),
        column!("library", os(&|r| r.library.as_deref())),
        column!("gpu_count", n(&|r| r.gpu_count)),
        column!("gpu_names", s(&|r| &r.gpu_names)),
        column!("compute", s(&|r| &r.compute)),
        column!("ctx", i(&|r| r.ctx)),
        column!("batch", i(&|r| r.batch)),
        column!("parallel", i(&|r| r.parallel)),
        column!("gpu_layers", i(&|r| r.gpu_layers)),
        column!("kv_cache_type", os(&|r| r.kv_cache_type.as_deref())),
        column!(
            "flash_attention",
            rows.iter()
                .map(|r| r.flash_attention)
                .collect::<Vec<Option<bool>>>(),
        ),
        column!("estimate_form", os(&|r| r.estimate_form.as_deref())),
        column!("layers_model", i(&|r| r.layers_model)),
        column!("layers_offload", i(&|r| r.layers_offload)),
        column!("layers_split", os(&|r| r.layers_split.as_deref())),
        column!("memory_required_full", i(&|r| r.est_required_full)),
        column!("memory_required_partial", i(&|r| r.est_required_partial)),
        column!("memory_required_kv", i(&|r| r.est_kv)),
        column!("memory_graph_full", i(&|r| r.est_graph_full)),
        column!("memory_graph_partial", i(&|r| r.est_graph_partial)),
        column!("memory_weights_repeating", i(&|r| r.est_weights_repeating)),
        column!(
            "memory_weights_nonrepeating",
            i(&|r| r.est_weights_nonrepeating)
        ),
        column!("projector_weights", i(&|r| r.est_projector_weights)),
        column!("projector_graph", i(&|r| r.est_projector_graph)),
        column!("est_gpu_total", i(&|r| r.est_gpu_total)),
        column!("act_gpu_total", i(&|r| r.act_gpu_total)),
    ];
    for (k, c) in COMPONENTS.iter().enumerate() {
        let name = c.as_str();
        columns.push(column!(
            format!("est_{name}"),
            rows.iter()
                .map(|r| figures(r, k).estimated)
                .collect::<Vec<_>>()
        ));
        columns.push(column!(
            format!("act_{name}"),
            rows.iter()
                .map(|r| figures(r, k).actual)
                .collect::<Vec<_>>()
        ));
        columns.push(column!(
            format!("delta_{name}"),
            rows.iter().map(|r| figures(r, k).delta).collect::<Vec<_>>()
        ));
        columns.push(column!(
            format!("verdict_{name}"),
            rows.iter()
                .map(|r| figures(r, k).verdict.as_str())
                .collect::<Vec<&str>>()
        ));
        columns.push(column!(
            format!("ratio_{name}"),
            rows.iter().map(|r| figures(r, k).ratio).collect::<Vec<_>>()
        ));
    }
    columns.extend([
        column!("observed_used", i(&|r| r.observed_used)),
        column!("observed_unattributed", i(&|r| r.observed_unattributed)),
        column!("replay_gpus", i(&|r| r.replay_gpus)),
        column!("replay_margin", i(&|r| r.replay_margin)),
        column!("findings", s(&|r| &r.findings)),
        column!("max_severity", os(&|r| r.max_severity.as_deref())),
        column!(
            "serving_prompt_cache_peak",
            i(&|r| r.serving_prompt_cache_peak)
        ),
        column!(
            "serving_checkpoints_peak",
            i(&|r| r.serving_checkpoints_peak)
        ),
        column!(
            "serving_kv_percent_peak",
            rows.iter()
                .map(|r| r.serving_kv_percent_peak)
                .collect::<Vec<Option<f64>>>(),
        ),
        column!(
            "serving_prompt_cache_limit",
            i(&|r| r.serving_prompt_cache_limit)
        ),
    ]);
    DataFrame::new(rows.len(), columns)
}

/// Load `r`'s figures of component `k` (of [`COMPONENTS`]); a row without them reads as the empty figures (no
/// values, no verdict).
fn figures(r: &LoadRow, k: usize) -> &ComponentFigures {
    static NONE: ComponentFigures = ComponentFigures {
        estimated: None,
        actual: None,
        delta: None,
        verdict: String::new(),
        ratio: None,
    };
    r.components.get(k).unwrap_or(&NONE)
}

/// The `components` table (long form), from the records of every file in order (borrowed, as for
/// [`loads_frame`]).
pub fn components_frame(rows: &[&ComponentRecord]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&ComponentRecord) -> &str| rows.iter().map(|r| f(r)).collect::<Vec<&str>>();
    let i = |f: &dyn Fn(&ComponentRecord) -> Option<i64>| {
        rows.iter().map(|r| f(r)).collect::<Vec<Option<i64>>>()
    };
    let n = |f: &dyn Fn(&ComponentRecord) -> i64| rows.iter().map(|r| f(r)).collect::<Vec<i64>>();
    DataFrame::new(
        rows.len(),
        vec![
            column!("file", s(&|r| &r.file)),
            column!("load", n(&|r| r.load)),
            column!("first_line", n(&|r| r.first_line)),
            column!("kind", s(&|r| r.kind)),
            column!("name", s(&|r| &r.name)),
            column!("estimated", i(&|r| r.estimated)),
            column!("estimated_low", i(&|r| r.estimated_low)),
            column!("estimated_high", i(&|r| r.estimated_high)),
            column!("actual", i(&|r| r.actual)),
            column!("actual_low", i(&|r| r.actual_low)),
            column!("actual_high", i(&|r| r.actual_high)),
            column!("delta", i(&|r| r.delta)),
            column!("verdict", s(&|r| &r.verdict)),
            column!(
                "ratio",
                rows.iter().map(|r| r.ratio).collect::<Vec<Option<f64>>>()
            ),
            column!(
                "model",
                rows.iter()
                    .map(|r| r.model.as_deref())
                    .collect::<Vec<Option<&str>>>()
            ),
            column!("engine", s(&|r| &r.engine)),
            column!("era", s(&|r| &r.era)),
            column!("runtime", s(&|r| &r.runtime)),
            column!("gpu_name", s(&|r| &r.gpu_name)),
            column!("compute", s(&|r| &r.compute)),
        ],
    )
}

/// The `pairs` table (`super::scorecard`): one row per figure of a pair of loads — the files and numbers of
/// both loads, the runtime, the settings changed, the component, the prediction and the measurement with
/// their ranges (bytes; layers count), the error and the verdict (`within rounding`, `over`, `under`, `not
/// modelled`, `not measured`).
pub fn pairs_frame(rows: &[PairRow]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&PairRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let n = |f: &dyn Fn(&PairRow) -> i64| rows.iter().map(f).collect::<Vec<i64>>();
    let i = |f: &dyn Fn(&PairRow) -> Option<i64>| rows.iter().map(f).collect::<Vec<Option<i64>>>();
    let count = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
    DataFrame::new(
        rows.len(),
        vec![
            column!("file_first", s(&|r| &r.first_file)),
            column!("load_first", n(&|r| count(r.first))),
            column!("file", s(&|r| &r.file)),
            column!("load", n(&|r| count(r.second))),
            column!(
                "first_line",
                n(&|r| i64::try_from(r.first_line).unwrap_or(i64::MAX))
            ),
            column!("runtime", s(&|r| &r.runtime)),
            column!(
                "runtime_version",
                rows.iter()
                    .map(|r| r.version.as_deref())
                    .collect::<Vec<Option<&str>>>()
            ),
            column!("setting", s(&|r| &r.setting)),
            column!("settings", s(&|r| &r.settings)),
            column!("component", s(&|r| &r.component)),
            column!(
                "device",
                rows.iter()
                    .map(|r| r.device.as_deref())
                    .collect::<Vec<Option<&str>>>()
            ),
            column!("predicted", i(&|r| r.predicted.map(|q| q.bytes))),
            column!("predicted_low", i(&|r| r.predicted.map(|q| q.low))),
            column!("predicted_high", i(&|r| r.predicted.map(|q| q.high))),
            column!("measured", i(&|r| r.measured.map(|q| q.bytes))),
            column!("measured_low", i(&|r| r.measured.map(|q| q.low))),
            column!("measured_high", i(&|r| r.measured.map(|q| q.high))),
            column!("error", i(&|r| r.error)),
            column!(
                "error_percent",
                rows.iter()
                    .map(PairRow::error_percent)
                    .collect::<Vec<Option<f64>>>()
            ),
            column!("verdict", s(&|r| r.verdict.as_str())),
            column!(
                "unverified",
                rows.iter().map(|r| r.unverified).collect::<Vec<bool>>()
            ),
        ],
    )
}

/// Which files to write.
#[derive(Debug, Clone, Copy, Default)]
pub struct Formats {
    pub jsonl: bool,
}

/// Write `name.parquet` and `name.csv` (and `name.jsonl` on request) into `dir`, each file on a thread of the
/// calling rayon pool when it has one free; returns the paths written, in that order.
///
/// The Parquet file carries each column chunk's minimum, maximum and null count (what readers prune row
/// groups with), not its distinct count, which would cost a hash of every value.
pub fn write(
    dir: &Path,
    name: &str,
    df: &mut DataFrame,
    formats: Formats,
) -> anyhow::Result<Vec<String>> {
    let parquet = dir.join(format!("{name}.parquet"));
    let csv = dir.join(format!("{name}.csv"));
    let jsonl = formats.jsonl.then(|| dir.join(format!("{name}.jsonl")));
    // Frames share their columns: the clones copy no cell.
    let (mut for_parquet, mut for_jsonl) = (df.clone(), df.clone());
    let ((wrote_parquet, wrote_csv), wrote_jsonl) = rayon::join(
        || {
            rayon::join(
                || -> anyhow::Result<()> {
                    ParquetWriter::new(File::create(&parquet)?)
                        .with_statistics(StatisticsOptions::default())
                        .finish(&mut for_parquet)?;
                    Ok(())
                },
                || -> anyhow::Result<()> {
                    CsvWriter::new(File::create(&csv)?)
                        .include_header(true)
                        .finish(df)?;
                    Ok(())
                },
            )
        },
        || -> anyhow::Result<()> {
            if let Some(jsonl) = &jsonl {
                JsonWriter::new(File::create(jsonl)?)
                    .with_json_format(JsonFormat::JsonLines)
                    .finish(&mut for_jsonl)?;
            }
            Ok(())
        },
    );
    wrote_parquet?;
    wrote_csv?;
    wrote_jsonl?;
    let mut written = vec![parquet.display().to_string(), csv.display().to_string()];
    written.extend(jsonl.map(|p| p.display().to_string()));
    Ok(written)
}

/// Read a `loads.parquet` written by an earlier run (for `--baseline`).
pub fn read_parquet(path: &Path) -> anyhow::Result<DataFrame> {
    Ok(ParquetReader::new(File::open(path)?).finish()?)
}

/// A text cell of a table read back (`None`: null, missing, or not text).
pub fn text_at(df: &DataFrame, column: &str, row: usize) -> Option<String> {
    match df.column(column).ok()?.get(row).ok()? {
        AnyValue::String(s) => Some(s.to_string()),
        AnyValue::StringOwned(s) => Some(s.to_string()),
        _ => None,
    }
}

/// A float cell of a table read back (`None`: null, missing, or not a float).
pub fn float_at(df: &DataFrame, column: &str, row: usize) -> Option<f64> {
    match df.column(column).ok()?.get(row).ok()? {
        AnyValue::Float64(v) => Some(v),
        AnyValue::Float32(v) => Some(v as f64),
        _ => None,
    }
}

/// An integer cell of a table read back (`None`: null, missing, or not an integer).
pub fn int_at(df: &DataFrame, column: &str, row: usize) -> Option<i64> {
    match df.column(column).ok()?.get(row).ok()? {
        AnyValue::Int64(v) => Some(v),
        AnyValue::Int32(v) => Some(v as i64),
        _ => None,
    }
}
