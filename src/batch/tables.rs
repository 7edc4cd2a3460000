//! The batch tables as polars DataFrames — `loads` (one row per load) and `components` (one row per load ×
//! component and load × device) — and writing them as Parquet, CSV and JSON lines. Column names are stable:
//! they are what users' notebooks and dashboards read.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use super::rows::{ComponentRecord, LoadRow, COMPONENTS};

/// A named column from a vector (the element type picks the polars type).
macro_rules! column {
    ($name:expr, $values:expr $(,)?) => {
        Column::new(PlSmallStr::from($name), $values)
    };
}

/// The `loads` table.
pub fn loads_frame(rows: &[LoadRow]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&LoadRow) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let os = |f: &dyn Fn(&LoadRow) -> Option<String>| {
        rows.iter().map(f).collect::<Vec<Option<String>>>()
    };
    let i = |f: &dyn Fn(&LoadRow) -> Option<i64>| rows.iter().map(f).collect::<Vec<Option<i64>>>();
    let b = |f: &dyn Fn(&LoadRow) -> bool| rows.iter().map(f).collect::<Vec<bool>>();
    let mut columns = vec![
        column!("file", s(&|r| r.file.clone())),
        column!("load", rows.iter().map(|r| r.load).collect::<Vec<i64>>()),
        column!(
            "first_line",
            rows.iter().map(|r| r.first_line).collect::<Vec<i64>>()
        ),
        column!(
            "last_line",
            rows.iter().map(|r| r.last_line).collect::<Vec<i64>>()
        ),
        column!("key", s(&|r| r.key.clone())),
        column!("partial", b(&|r| r.partial)),
        column!("failed", b(&|r| r.failed)),
        column!("model", os(&|r| r.model.clone())),
        column!("blob", os(&|r| r.blob.clone())),
        column!("engine", s(&|r| r.engine.clone())),
        column!("ollama_version", os(&|r| r.ollama_version.clone())),
        column!("era", s(&|r| r.era.clone())),
        column!("runtime", s(&|r| r.runtime.clone())),
        column!("runtime_version", os(&|r| r.runtime_version.clone())),
        column!("library", os(&|r| r.library.clone())),
        column!(
            "gpu_count",
            rows.iter().map(|r| r.gpu_count).collect::<Vec<i64>>()
        ),
        column!("gpu_names", s(&|r| r.gpu_names.clone())),
        column!("compute", s(&|r| r.compute.clone())),
        column!("ctx", i(&|r| r.ctx)),
        column!("batch", i(&|r| r.batch)),
        column!("parallel", i(&|r| r.parallel)),
        column!("gpu_layers", i(&|r| r.gpu_layers)),
        column!("kv_cache_type", os(&|r| r.kv_cache_type.clone())),
        column!(
            "flash_attention",
            rows.iter()
                .map(|r| r.flash_attention)
                .collect::<Vec<Option<bool>>>(),
        ),
        column!("estimate_form", os(&|r| r.estimate_form.clone())),
        column!("layers_model", i(&|r| r.layers_model)),
        column!("layers_offload", i(&|r| r.layers_offload)),
        column!("layers_split", os(&|r| r.layers_split.clone())),
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
        let fig = |r: &LoadRow| r.components.get(k).cloned().unwrap_or_default();
        columns.push(column!(format!("est_{name}"), i(&|r| fig(r).estimated)));
        columns.push(column!(format!("act_{name}"), i(&|r| fig(r).actual)));
        columns.push(column!(format!("delta_{name}"), i(&|r| fig(r).delta)));
        columns.push(column!(format!("verdict_{name}"), s(&|r| fig(r).verdict)));
        columns.push(column!(
            format!("ratio_{name}"),
            rows.iter()
                .map(|r| fig(r).ratio)
                .collect::<Vec<Option<f64>>>(),
        ));
    }
    columns.extend([
        column!("observed_used", i(&|r| r.observed_used)),
        column!("observed_unattributed", i(&|r| r.observed_unattributed)),
        column!("replay_gpus", i(&|r| r.replay_gpus)),
        column!("replay_margin", i(&|r| r.replay_margin)),
        column!("findings", s(&|r| r.findings.clone())),
        column!("max_severity", os(&|r| r.max_severity.clone())),
    ]);
    DataFrame::new(rows.len(), columns)
}

/// The `components` table (long form).
pub fn components_frame(rows: &[ComponentRecord]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&ComponentRecord) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let i = |f: &dyn Fn(&ComponentRecord) -> Option<i64>| {
        rows.iter().map(f).collect::<Vec<Option<i64>>>()
    };
    DataFrame::new(
        rows.len(),
        vec![
            column!("file", s(&|r| r.file.clone())),
            column!("load", rows.iter().map(|r| r.load).collect::<Vec<i64>>()),
            column!(
                "first_line",
                rows.iter().map(|r| r.first_line).collect::<Vec<i64>>()
            ),
            column!("kind", s(&|r| r.kind.to_string())),
            column!("name", s(&|r| r.name.clone())),
            column!("estimated", i(&|r| r.estimated)),
            column!("estimated_low", i(&|r| r.estimated_low)),
            column!("estimated_high", i(&|r| r.estimated_high)),
            column!("actual", i(&|r| r.actual)),
            column!("actual_low", i(&|r| r.actual_low)),
            column!("actual_high", i(&|r| r.actual_high)),
            column!("delta", i(&|r| r.delta)),
            column!("verdict", s(&|r| r.verdict.clone())),
            column!(
                "ratio",
                rows.iter().map(|r| r.ratio).collect::<Vec<Option<f64>>>()
            ),
            column!(
                "model",
                rows.iter()
                    .map(|r| r.model.clone())
                    .collect::<Vec<Option<String>>>()
            ),
            column!("engine", s(&|r| r.engine.clone())),
            column!("era", s(&|r| r.era.clone())),
            column!("runtime", s(&|r| r.runtime.clone())),
            column!("gpu_name", s(&|r| r.gpu_name.clone())),
            column!("compute", s(&|r| r.compute.clone())),
        ],
    )
}

/// Which files to write.
#[derive(Debug, Clone, Copy, Default)]
pub struct Formats {
    pub jsonl: bool,
}

/// Write `name.parquet` and `name.csv` (and `name.jsonl` on request) into `dir`; returns the paths written.
pub fn write(
    dir: &Path,
    name: &str,
    df: &mut DataFrame,
    formats: Formats,
) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    let parquet = dir.join(format!("{name}.parquet"));
    ParquetWriter::new(File::create(&parquet)?)
        .with_statistics(StatisticsOptions::full())
        .finish(df)?;
    written.push(parquet.display().to_string());
    let csv = dir.join(format!("{name}.csv"));
    CsvWriter::new(File::create(&csv)?)
        .include_header(true)
        .finish(df)?;
    written.push(csv.display().to_string());
    if formats.jsonl {
        let jsonl = dir.join(format!("{name}.jsonl"));
        JsonWriter::new(File::create(&jsonl)?)
            .with_json_format(JsonFormat::JsonLines)
            .finish(df)?;
        written.push(jsonl.display().to_string());
    }
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

/// An integer cell of a table read back (`None`: null, missing, or not an integer).
pub fn int_at(df: &DataFrame, column: &str, row: usize) -> Option<i64> {
    match df.column(column).ok()?.get(row).ok()? {
        AnyValue::Int64(v) => Some(v),
        AnyValue::Int32(v) => Some(v as i64),
        _ => None,
    }
}
