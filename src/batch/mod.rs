//! `vramdiff batch`: many logs in (folders, globs, files; plain, gzip or zstd), one table out. Files are read in
//! parallel and reduced to table rows as they finish, so memory grows with the number of loads, not the bytes
//! of logs. Writes `loads`, `components` and `pairs` as Parquet and CSV (JSON lines on request), a Markdown summary
//! with calibration factors, charts, and compares with a baseline; the gate turns findings and estimate errors
//! into an exit code for CI.

pub mod baseline;
pub mod calibration;
pub mod charts;
pub mod dataset;
pub mod diff_tables;
pub mod gate;
pub mod ingest;
pub mod junit;
pub mod rows;
pub mod scorecard;
pub mod shard;
pub mod summary;
pub mod tables;

use std::path::PathBuf;

use crate::model::Severity;
use crate::pipeline::Options;
use gate::MaxError;
use ingest::FileResult;
use rows::{ComponentRecord, LoadRow};

/// What the command line asked for, resolved (`commands::resolve`).
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    pub paths: Vec<String>,
    /// Folder for the tables, summary and charts; nothing is written without it.
    pub out: Option<PathBuf>,
    /// A previous run's `loads.parquet`.
    pub baseline: Option<PathBuf>,
    pub jsonl: bool,
    /// 0: every core.
    pub threads: usize,
    pub fail_on: Option<Severity>,
    pub max_errors: Vec<MaxError>,
    pub fail_on_regression: bool,
    pub analysis: Options,
    /// Read only this share of the inputs; every file written carries it in its name.
    pub shard: Option<shard::Shard>,
    /// Write `loads` and `components` as a Hive-partitioned dataset instead of single files.
    pub partition_by: Option<dataset::PartitionBy>,
    /// Also write the run as JUnit XML here.
    pub junit: Option<PathBuf>,
    /// Write the summary as one HTML page here, the charts embedded.
    pub html: Option<PathBuf>,
}

/// What a batch run produced.
#[derive(Debug, Clone, Default)]
pub struct BatchOutcome {
    /// The summary (Markdown), as written to `summary.md` and printed.
    pub summary: String,
    /// Files written into `--out`.
    pub written: Vec<String>,
    pub files: usize,
    pub failed_files: usize,
    pub loads: usize,
    /// Why the gate fails (empty: it passes).
    pub offenders: Vec<String>,
    pub regressions: Vec<String>,
}

/// Run a batch; `progress` is called with the number of files done.
///
/// The files are analysed on `options.threads` threads; what follows (the tables, the charts, the summary)
/// runs on polars' pool, its parts beside each other where they do not depend on each other, so a second
/// thread also shortens the part of the run after the last file.
pub fn run(
    options: &BatchOptions,
    progress: &(dyn Fn(u64) + Sync),
    files_found: &dyn Fn(u64),
) -> anyhow::Result<BatchOutcome> {
    let (files, problems) = ingest::expand(&options.paths);
    let files: Vec<String> = files
        .into_iter()
        .filter(|f| options.shard.is_none_or(|s| s.takes(&f.shard_key)))
        .map(|f| f.path)
        .collect();
    files_found(files.len() as u64);
    let results: Vec<FileResult> =
        ingest::analyze_all(&files, &options.analysis, options.threads, progress)?;
    // Polars runs its operations in parallel only on its own pool's threads (on any other thread, one after
    // the other): the tables are written and summarised there, which `--threads` bounds too (`main.rs`).
    let outcome =
        polars_core::runtime::THREAD_POOL.install(|| conclude(options, &results, &problems));
    // Every row, finding and summary of every file, freed one small allocation at a time (~20 ms for 2,000
    // logs, `docs/performance.md`): on a thread of its own, so that the caller does not wait for it.
    std::thread::spawn(move || drop(results));
    outcome
}

/// Everything after the files are analysed: tables, summary, gate, and the files written.
fn conclude(
    options: &BatchOptions,
    results: &[FileResult],
    problems: &[String],
) -> anyhow::Result<BatchOutcome> {
    let load_rows: Vec<&LoadRow> = results.iter().flat_map(|r| &r.loads).collect();
    let component_rows: Vec<&ComponentRecord> =
        results.iter().flat_map(|r| &r.components).collect();
    let rated_rows: Vec<&ComponentRecord> = component_rows
        .iter()
        .copied()
        .filter(|r| summary::is_rated(r))
        .collect();
    let (loads, (components, rated)) = rayon::join(
        || tables::loads_frame(&load_rows),
        || {
            rayon::join(
                || tables::components_frame(&component_rows),
                || tables::components_frame(&rated_rows),
            )
        },
    );
    let (loads, components, rated) = (loads?, components?, rated?);
    let pairs = scorecard::all_rows(results);
    let out_dir = match &options.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
            Some(dir.as_path())
        }
        None => None,
    };
    // `-K-of-N` in every name a sharded run writes: shards sharing a folder never overwrite each other.
    let suffix = options.shard.map(|s| s.suffix()).unwrap_or_default();
    let named = |name: &str| format!("{name}{suffix}");
    // The charts and the two big tables are written beside the summary, each on a thread of its own when
    // there is one; every result is taken in the same order whatever the threads did first.
    let mut charts = None;
    let mut loads_written = None;
    let mut components_written = None;
    let summarised = rayon::scope(|s| {
        if options.html.is_some() || out_dir.is_some() {
            s.spawn(|_| charts = Some(charts::all(results)));
        }
        if let Some(dir) = out_dir {
            // Polars frames share their columns: these clones copy no cell.
            let (loads, components) = (loads.clone(), components.clone());
            s.spawn(|_| loads_written = Some(write_table(dir, "loads", loads, options)));
            s.spawn(|_| {
                components_written = Some(write_table(dir, "components", components, options))
            });
        }
        summarise(options, results, problems, &loads, &rated, &pairs)
    });
    let Summarised {
        summary,
        mut calibration,
        regressions,
        offenders,
    } = summarised?;
    let charts = charts.transpose()?.unwrap_or_default();
    let mut written = Vec::new();
    if let Some(path) = &options.junit {
        let xml = crate::report::junit::write(&junit::suites(results, options.fail_on));
        std::fs::write(path, xml)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    if let Some(path) = &options.html {
        let page = crate::report::html_page::summary_page(&summary, &charts);
        std::fs::write(path, page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    if let Some(dir) = out_dir {
        written.extend(loads_written.expect("spawned with the folder")?);
        written.extend(components_written.expect("spawned with the folder")?);
        written.extend(tables::write(
            dir,
            &named("calibration"),
            &mut calibration,
            tables::Formats::default(),
        )?);
        written.extend(tables::write(
            dir,
            &named("pairs"),
            &mut tables::pairs_frame(&pairs)?,
            tables::Formats {
                jsonl: options.jsonl,
            },
        )?);
        for chart in &charts {
            // Fixed names (charts.rs), never from log text.
            let file_name = match chart.file_name.rsplit_once('.') {
                Some((stem, ext)) => format!("{}.{ext}", named(stem)),
                None => named(&chart.file_name),
            };
            let path = dir.join(file_name);
            std::fs::write(&path, &chart.png)?;
            written.push(path.display().to_string());
        }
        let path = dir.join(format!("{}.md", named("summary")));
        std::fs::write(&path, &summary)?;
        written.push(path.display().to_string());
    }
    Ok(BatchOutcome {
        summary,
        written,
        files: results.len(),
        failed_files: results.iter().filter(|r| r.summary.error.is_some()).count() + problems.len(),
        loads: load_rows.len(),
        offenders,
        regressions,
    })
}

/// The summary (with calibration, baseline and gate sections), the calibration table, and why the gate
/// fails.
struct Summarised {
    summary: String,
    calibration: polars::prelude::DataFrame,
    regressions: Vec<String>,
    offenders: Vec<String>,
}

fn summarise(
    options: &BatchOptions,
    results: &[FileResult],
    problems: &[String],
    loads: &polars::prelude::DataFrame,
    rated: &polars::prelude::DataFrame,
    pairs: &[scorecard::PairRow],
) -> anyhow::Result<Summarised> {
    let (summary, calibration) = rayon::join(
        || summary::render(results, rated, problems),
        || calibration::table(rated),
    );
    let (mut summary, calibration) = (summary?, calibration?);
    summary.push_str(&calibration::render(&calibration));
    let mut regressions = Vec::new();
    if let Some(path) = &options.baseline {
        let base = tables::read_parquet(path)
            .map_err(|e| anyhow::anyhow!("cannot read the baseline {}: {e}", path.display()))?;
        let changes = baseline::compare(loads, base)?;
        summary.push_str(&baseline::render(&changes));
        for c in changes.iter().filter(|c| !c.regressions.is_empty()) {
            regressions.push(format!("{}: {}: {}", c.at, c.key, c.regressions.join("; ")));
        }
    }
    summary.push_str(&scorecard::render(pairs));
    let mut offenders = gate::offenders(results, pairs, options.fail_on, &options.max_errors);
    if options.fail_on_regression {
        offenders.extend(regressions.iter().map(|r| format!("regression: {r}")));
    }
    if !offenders.is_empty() {
        summary.push_str("## CI gate: failed\n\n");
        for o in &offenders {
            summary.push_str(&format!("- {}\n", crate::report::md_escape(o)));
        }
        summary.push('\n');
    }
    Ok(Summarised {
        summary,
        calibration,
        regressions,
        offenders,
    })
}

/// Write the big table `table` (`loads`, `components`) into `dir`: a Hive-partitioned dataset named after
/// it with `--partition-by` (the shard is in its files' names), else single files in the formats asked for,
/// named after it and the shard.
fn write_table(
    dir: &std::path::Path,
    table: &str,
    mut frame: polars::prelude::DataFrame,
    options: &BatchOptions,
) -> anyhow::Result<Vec<String>> {
    match &options.partition_by {
        Some(by) => dataset::write(dir, table, &frame, by, options.shard),
        None => {
            let suffix = options.shard.map(|s| s.suffix()).unwrap_or_default();
            let formats = tables::Formats {
                jsonl: options.jsonl,
            };
            tables::write(dir, &format!("{table}{suffix}"), &mut frame, formats)
        }
    }
}
