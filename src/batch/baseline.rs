//! Baseline compare: match this run's loads to a previous run's `loads.parquet` by model × settings × GPUs and
//! say what changed — the estimate, the VRAM actually used, the split, the estimate's error per component, the
//! findings — flagging regressions (a build that uses more memory, estimates worse, or raises new warnings).

use std::fmt::Write;

use polars::prelude::*;

use super::rows::COMPONENTS;
use super::summary::{cell, float};
use super::tables::int_at;
use crate::model::{human, FindingCode};
use crate::report::md_escape;

/// One matched load's changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub key: String,
    /// `file:line` of this run's load.
    pub at: String,
    pub changes: Vec<String>,
    pub regressions: Vec<String>,
}

/// The first load of each key (in file, load order), with the columns compared.
fn firsts(df: DataFrame) -> LazyFrame {
    let mut aggs = vec![
        col("file").first(),
        col("first_line").first(),
        col("est_gpu_total").first(),
        col("act_gpu_total").first(),
        col("layers_split").first(),
        col("findings").first(),
        col("max_severity").first(),
    ];
    aggs.extend(
        COMPONENTS
            .iter()
            .map(|c| col(format!("ratio_{}", c.as_str())).first()),
    );
    df.lazy()
        .sort(["file", "load"], SortMultipleOptions::default())
        .group_by_stable([col("key")])
        .agg(aggs)
}

/// Compare `current` with `baseline` (both `loads` tables).
pub fn compare(current: &DataFrame, baseline: DataFrame) -> PolarsResult<Vec<Change>> {
    let joined = firsts(current.clone())
        .join(
            firsts(baseline),
            [col("key")],
            [col("key")],
            JoinArgs::new(JoinType::Inner).with_suffix(Some("_base".into())),
        )
        .sort(["key"], SortMultipleOptions::default())
        .collect()?;
    let mut out = Vec::new();
    for row in 0..joined.height() {
        let mut change = Change {
            key: cell(&joined, "key", row),
            at: format!(
                "{}:{}",
                cell(&joined, "file", row),
                cell(&joined, "first_line", row)
            ),
            changes: Vec::new(),
            regressions: Vec::new(),
        };
        for (column, what) in [
            ("est_gpu_total", "estimate on GPUs"),
            ("act_gpu_total", "allocated on GPUs"),
        ] {
            if let (Some(now), Some(then)) = (
                int_at(&joined, column, row),
                int_at(&joined, &format!("{column}_base"), row),
            ) {
                if now != then {
                    change
                        .changes
                        .push(format!("{what} {} → {}", human(then), human(now)));
                    // More VRAM actually used: beyond 5 % and 256 MiB.
                    if column == "act_gpu_total" && now - then > (then / 20).max(256 << 20) {
                        change.regressions.push(format!(
                            "uses more VRAM: {} → {}",
                            human(then),
                            human(now)
                        ));
                    }
                }
            }
        }
        let (split, split_base) = (
            cell(&joined, "layers_split", row),
            cell(&joined, "layers_split_base", row),
        );
        if split != split_base {
            change.changes.push(format!("split {split_base} → {split}"));
            if split.matches(',').count() > split_base.matches(',').count() {
                change
                    .regressions
                    .push(format!("split over more GPUs: {split_base} → {split}"));
            }
        }
        for c in COMPONENTS {
            let column = format!("ratio_{}", c.as_str());
            if let (Some(now), Some(then)) = (
                float(&joined, &column, row),
                float(&joined, &format!("{column}_base"), row),
            ) {
                if (now - then).abs() >= 0.005 {
                    change.changes.push(format!(
                        "{} actual/estimated {then:.3} → {now:.3}",
                        c.as_str()
                    ));
                }
                // The estimate's error grew by more than 5 points.
                if (now - 1.0).abs() - (then - 1.0).abs() > 0.05 {
                    change.regressions.push(format!(
                        "{} estimate error grew: actual/estimated {then:.3} → {now:.3}",
                        c.as_str()
                    ));
                }
            }
        }
        let (findings, findings_base) = (
            cell(&joined, "findings", row),
            cell(&joined, "findings_base", row),
        );
        let before: Vec<&str> = findings_base.split(',').filter(|s| !s.is_empty()).collect();
        let mut new: Vec<&str> = findings
            .split(',')
            .filter(|s| {
                !s.is_empty()
                    && !before.contains(s)
                    && !FindingCode::parse(s).is_some_and(FindingCode::is_information)
            })
            .collect();
        new.dedup();
        if !new.is_empty() {
            change
                .regressions
                .push(format!("new findings: {}", new.join(", ")));
        }
        if !change.changes.is_empty() || !change.regressions.is_empty() {
            out.push(change);
        }
    }
    Ok(out)
}

/// The comparison as Markdown.
pub fn render(changes: &[Change]) -> String {
    let regressions = changes.iter().filter(|c| !c.regressions.is_empty()).count();
    let mut out = format!(
        "## Compared with the baseline\n\n{} loads changed, {regressions} with a regression.\n\n",
        changes.len()
    );
    for c in changes {
        let _ = writeln!(
            out,
            "- {}`{}` (`{}`): {}",
            if c.regressions.is_empty() {
                ""
            } else {
                "**REGRESSION** "
            },
            c.key.replace('`', "'"),
            c.at.replace('`', "'"),
            md_escape(
                &c.regressions
                    .iter()
                    .chain(&c.changes)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        );
    }
    out.push('\n');
    out
}
