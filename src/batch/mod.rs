//! `vramdiff batch`: many logs in (folders, globs, files; plain, gzip or zstd), one table out. Files are read in
//! parallel and reduced to table rows as they finish, so memory grows with the number of loads, not the bytes
//! of logs. Writes `loads` and `components` as Parquet and CSV (JSON lines on request), a Markdown summary
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
pub mod shard;
pub mod summary;
pub mod tables;

use std::path::PathBuf;

use crate::model::Severity;
use crate::pipeline::Options;
use gate::MaxError;
use ingest::FileResult;

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
    let load_rows: Vec<_> = results
        .iter()
        .flat_map(|r| r.loads.iter().cloned())
        .collect();
    let component_rows: Vec<_> = results
        .iter()
        .flat_map(|r| r.components.iter().cloned())
        .collect();
    let mut loads = tables::loads_frame(&load_rows)?;
    let mut components = tables::components_frame(&component_rows)?;
    let mut summary = summary::render(&results, &components, &problems)?;
    let mut calibration = calibration::table(&components)?;
    summary.push_str(&calibration::render(&calibration));
    let mut regressions = Vec::new();
    if let Some(path) = &options.baseline {
        let base = tables::read_parquet(path)
            .map_err(|e| anyhow::anyhow!("cannot read the baseline {}: {e}", path.display()))?;
        let changes = baseline::compare(&loads, base)?;
        summary.push_str(&baseline::render(&changes));
        for c in changes.iter().filter(|c| !c.regressions.is_empty()) {
            regressions.push(format!("{}: {}: {}", c.at, c.key, c.regressions.join("; ")));
        }
    }
    let mut offenders = gate::offenders(&results, options.fail_on, &options.max_errors);
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
    let mut written = Vec::new();
    if let Some(path) = &options.junit {
        let xml = crate::report::junit::write(&junit::suites(&results, options.fail_on));
        std::fs::write(path, xml)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    if let Some(path) = &options.html {
        let page = crate::report::html_page::summary_page(&summary, &charts::all(&results)?);
        std::fs::write(path, page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    if let Some(dir) = &options.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        let formats = tables::Formats {
            jsonl: options.jsonl,
        };
        // `-K-of-N` in every name a sharded run writes: shards sharing a folder never overwrite each other.
        let suffix = options.shard.map(|s| s.suffix()).unwrap_or_default();
        let named = |name: &str| format!("{name}{suffix}");
        if let Some(by) = &options.partition_by {
            written.extend(dataset::write(dir, "loads", &loads, by, options.shard)?);
            written.extend(dataset::write(
                dir,
                "components",
                &components,
                by,
                options.shard,
            )?);
        } else {
            written.extend(tables::write(dir, &named("loads"), &mut loads, formats)?);
            written.extend(tables::write(
                dir,
                &named("components"),
                &mut components,
                formats,
            )?);
        }
        written.extend(tables::write(
            dir,
            &named("calibration"),
            &mut calibration,
            tables::Formats::default(),
        )?);
        for chart in charts::all(&results)? {
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
