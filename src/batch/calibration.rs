//! Calibration: from the actual/estimated ratios of many loads, a correction factor per component and GPU
//! architecture (compute capability), with the number of loads behind it and the p10–p90 band — the evidence a
//! fork needs before it hard-codes a factor (ollama37 found its compute-3.7 graph estimate 15–20 % too high by
//! hand).

use std::fmt::Write;

use polars::prelude::*;

use super::summary::{cell, float, ratio_stats};
use crate::report::md_escape;

/// Below this many loads a factor is shown but called indicative.
pub const MIN_LOADS: u32 = 5;

/// The calibration table: component × compute capability → loads, factor (median ratio), p10, p90; from the
/// [rated](super::summary::is_rated) component rows.
pub fn table(rated: &DataFrame) -> PolarsResult<DataFrame> {
    let stats = ratio_stats(rated, &["compute"])?;
    stats
        .lazy()
        .select([
            col("name").alias("component"),
            col("compute"),
            col("loads"),
            col("median").alias("factor"),
            col("p10"),
            col("p90"),
        ])
        .collect()
}

fn loads(df: &DataFrame, row: usize) -> u32 {
    match df.column("loads").and_then(|c| c.get(row)) {
        Ok(AnyValue::UInt32(n)) => n,
        Ok(AnyValue::UInt64(n)) => n as u32,
        Ok(AnyValue::Int64(n)) => n as u32,
        _ => 0,
    }
}

/// The calibration as Markdown.
pub fn render(df: &DataFrame) -> String {
    let mut out = String::from(
        "## Calibration\n\nMultiply the estimator's figure by `factor` (the median actual/estimated ratio) to match \
         what these loads allocated. The band is the p10–p90 range of the ratios.\n\n\
         | component | compute capability | loads | factor | band | reading |\n| :--- | :--- | ---: | ---: | :--- | :--- |\n",
    );
    for row in 0..df.height() {
        let n = loads(df, row);
        let (p10, p90) = (float(df, "p10", row), float(df, "p90", row));
        let reading = match (p10, p90) {
            _ if n < MIN_LOADS => format!("indicative only: fewer than {MIN_LOADS} loads"),
            (Some(lo), Some(hi)) if lo <= 1.0 && 1.0 <= hi => {
                "no correction: 1 is inside the band".to_string()
            }
            (Some(_), Some(hi)) if hi < 1.0 => "the estimate is too high".to_string(),
            (Some(lo), Some(_)) if lo > 1.0 => "the estimate is too low (risk of OOM)".to_string(),
            _ => String::new(),
        };
        let compute = cell(df, "compute", row);
        let _ = writeln!(
            out,
            "| {} | {} | {n} | {} | {}–{} | {reading} |",
            md_escape(&cell(df, "component", row)),
            if compute.is_empty() || compute == "–" {
                "(not in the log)".to_string()
            } else {
                md_escape(&compute)
            },
            cell(df, "factor", row),
            cell(df, "p10", row),
            cell(df, "p90", row),
        );
    }
    out.push('\n');
    out
}
