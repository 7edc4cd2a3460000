//! The batch summary: how far actual is from estimated, per component, overall and by model, GPU, compute
//! capability, engine and Ollama era (polars lazy group-bys over the `components` table), the most frequent
//! findings, and the loads with the largest gaps. Rendered as Markdown (`summary.md`, also printed).

use std::collections::BTreeMap;
use std::fmt::Write;

use polars::prelude::*;
use rayon::prelude::*;

use super::ingest::FileResult;
use super::rows::ComponentRecord;
use crate::model::human;
use crate::report::md_escape;

/// True for the rows of the `components` table that the ratio statistics read: components (not devices) with
/// a ratio. The frame of these rows ([`super::tables::components_frame`] of them) is built once for all of
/// [`ratio_stats`]'s groupings.
pub fn is_rated(row: &ComponentRecord) -> bool {
    row.kind == "component" && row.ratio.is_some()
}

/// Ratio statistics of the [rated](is_rated) rows grouped by `by` (plus the component name), sorted by the keys.
pub fn ratio_stats(rated: &DataFrame, by: &[&str]) -> PolarsResult<DataFrame> {
    let mut keys: Vec<Expr> = vec![col("name")];
    keys.extend(by.iter().map(|k| col(*k)));
    let mut sort_keys: Vec<PlSmallStr> = vec!["name".into()];
    sort_keys.extend(by.iter().map(|k| PlSmallStr::from(*k)));
    rated
        .clone()
        .lazy()
        .group_by(keys)
        .agg([
            col("ratio").count().alias("loads"),
            col("ratio").median().alias("median"),
            col("ratio")
                .quantile(lit(0.1), QuantileMethod::Linear)
                .alias("p10"),
            col("ratio")
                .quantile(lit(0.9), QuantileMethod::Linear)
                .alias("p90"),
            col("ratio").min().alias("min"),
            col("ratio").max().alias("max"),
        ])
        .sort(sort_keys, SortMultipleOptions::default())
        .collect()
}

/// A cell as text: numbers with 3 decimals, strings as they are, nulls as `–`.
pub fn cell(df: &DataFrame, column: &str, row: usize) -> String {
    match df.column(column).and_then(|c| c.get(row)) {
        Ok(AnyValue::Null) | Err(_) => "–".to_string(),
        Ok(AnyValue::Float64(v)) => format!("{v:.3}"),
        Ok(AnyValue::Float32(v)) => format!("{v:.3}"),
        Ok(AnyValue::String(s)) => s.to_string(),
        Ok(AnyValue::StringOwned(s)) => s.to_string(),
        Ok(v) => v.to_string(),
    }
}

pub fn float(df: &DataFrame, column: &str, row: usize) -> Option<f64> {
    match df.column(column).and_then(|c| c.get(row)) {
        Ok(AnyValue::Float64(v)) => Some(v),
        Ok(AnyValue::Float32(v)) => Some(v as f64),
        _ => None,
    }
}

/// The ratio farthest from 1 among min and max.
fn worst(df: &DataFrame, row: usize) -> String {
    match (float(df, "min", row), float(df, "max", row)) {
        (Some(lo), Some(hi)) => {
            let w = if (1.0 - lo).abs() > (hi - 1.0).abs() {
                lo
            } else {
                hi
            };
            format!("{w:.3}")
        }
        _ => "–".to_string(),
    }
}

/// A Markdown table of ratio statistics.
pub fn stats_table(out: &mut String, df: &DataFrame, by: &[&str]) {
    let mut header = vec!["component"];
    header.extend(by.iter().map(|b| match *b {
        "gpu_name" => "GPU",
        "compute" => "compute capability",
        other => other,
    }));
    header.extend(["loads", "median", "p10", "p90", "worst"]);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if i <= by.len() { " :--- |" } else { " ---: |" })
            .collect::<String>()
    );
    for row in 0..df.height() {
        let mut cells = vec![md_escape(&cell(df, "name", row))];
        cells.extend(by.iter().map(|b| {
            let value = cell(df, b, row);
            if value.is_empty() || value == "–" {
                "(not in the log)".to_string()
            } else {
                md_escape(&value)
            }
        }));
        cells.extend([
            cell(df, "loads", row),
            cell(df, "median", row),
            cell(df, "p10", row),
            cell(df, "p90", row),
            worst(df, row),
        ]);
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// The groupings of the summary's ratio tables after the overall one, with their titles.
const GROUPINGS: [(&str, &str); 5] = [
    ("model", "by model family"),
    ("gpu_name", "by GPU"),
    ("compute", "by compute capability"),
    ("engine", "by engine"),
    ("era", "by Ollama era"),
];

/// The whole summary, from the files' results and the [rated](is_rated) component rows. The ratio tables are
/// computed in parallel (on the calling rayon pool's threads), each independent of the others.
pub fn render(
    results: &[FileResult],
    rated: &DataFrame,
    problems: &[String],
) -> PolarsResult<String> {
    let groupings: Vec<&[&str]> = std::iter::once(&[][..])
        .chain(GROUPINGS.iter().map(|(by, _)| std::slice::from_ref(by)))
        .collect();
    let stats = groupings
        .par_iter()
        .map(|by| ratio_stats(rated, by))
        .collect::<PolarsResult<Vec<DataFrame>>>()?;
    let mut out = String::from("# vramdiff batch summary\n\n");
    let files = results.len();
    let failed: Vec<&FileResult> = results
        .iter()
        .filter(|r| r.summary.error.is_some())
        .collect();
    let loads: usize = results.iter().map(|r| r.loads.len()).sum();
    let _ = writeln!(
        out,
        "{files} files read ({} with an error, skipped), {loads} loads.\n",
        failed.len()
    );
    for r in &failed {
        let _ = writeln!(
            out,
            "- error: `{}`: {}",
            r.summary.path.replace('`', "'"),
            md_escape(r.summary.error.as_deref().unwrap_or(""))
        );
    }
    for p in problems {
        let _ = writeln!(out, "- error: {}", md_escape(p));
    }
    if !failed.is_empty() || !problems.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "## Actual / estimated, per component\n\nA ratio below 1 means the estimate was too high. `worst` is the ratio farthest from 1.\n"
    );
    stats_table(&mut out, &stats[0], &[]);
    for ((by, title), stats) in GROUPINGS.iter().zip(&stats[1..]) {
        let _ = writeln!(out, "### {title}\n");
        stats_table(&mut out, stats, &[by]);
    }
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for r in results {
        for (_, f) in &r.findings {
            *counts
                .entry((f.code.as_str(), f.severity.as_str()))
                .or_insert(0) += 1;
        }
    }
    let mut by_count: Vec<_> = counts.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let _ = writeln!(
        out,
        "## Most frequent findings\n\n| finding | severity | loads |\n| :--- | :--- | ---: |"
    );
    for ((code, severity), n) in &by_count {
        let _ = writeln!(out, "| `{code}` | {severity} | {n} |");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "## Largest gaps\n\n| load | component | estimated | actual | delta |\n| :--- | :--- | ---: | ---: | ---: |"
    );
    for r in largest_gaps(results, 10) {
        let _ = writeln!(
            out,
            "| `{}:{}` | {} | {} | {} | {} |",
            r.file.replace('`', "'"),
            r.first_line,
            md_escape(&r.name),
            r.estimated.map(human).unwrap_or_default(),
            r.actual.map(human).unwrap_or_default(),
            r.delta.map(human).unwrap_or_default()
        );
    }
    out.push('\n');
    Ok(out)
}

/// Component rows (not devices) with the largest absolute delta, file:line order on ties.
pub fn largest_gaps(results: &[FileResult], n: usize) -> Vec<&ComponentRecord> {
    let mut all: Vec<&ComponentRecord> = results
        .iter()
        .flat_map(|r| &r.components)
        .filter(|c| c.kind == "component" && c.delta.is_some())
        .collect();
    all.sort_by(|a, b| {
        let d = |c: &ComponentRecord| c.delta.map(|d| d.unsigned_abs()).unwrap_or(0);
        d(b).cmp(&d(a))
            .then(a.file.cmp(&b.file))
            .then(a.first_line.cmp(&b.first_line))
            .then(a.name.cmp(&b.name))
    });
    all.truncate(n);
    all
}
