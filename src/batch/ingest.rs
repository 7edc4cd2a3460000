//! Find the batch's input files (folders walked recursively, globs expanded, files as given) and analyse them
//! in parallel, one file per task, keeping only each load's table rows. The result does not depend on the
//! thread count or scheduling: files are sorted and results are put back in that order.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use super::rows::{rows, ComponentRecord, LoadRow};
use super::shard;
use crate::model::{Finding, InputSummary};
use crate::pipeline::{Options, Pipeline};
use crate::source;

/// What one file gave.
#[derive(Debug, Clone, Default)]
pub struct FileResult {
    pub summary: InputSummary,
    pub loads: Vec<LoadRow>,
    pub components: Vec<ComponentRecord>,
    /// Every finding of every load, with the load's number (1-based within the file).
    pub findings: Vec<(i64, Finding)>,
    /// The pairs of loads among the file's loads (`super::scorecard`), one row per figure.
    pub pairs: Vec<super::scorecard::PairRow>,
    /// The first and last load of each model in the file, for the pairs across files
    /// (`crate::pairs::across_runs`).
    pub ends: Vec<crate::pairs::RunEnds>,
}

/// A file to read, with its shard key (see [`super::shard`]: its path relative to the folder or glob it came
/// from).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputFile {
    pub path: String,
    pub shard_key: String,
}

/// Expand the command line's paths into a sorted (by path), de-duplicated list of files; unusable arguments are
/// returned as messages (a glob that matches nothing, a path that does not exist).
pub fn expand(paths: &[String]) -> (Vec<InputFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        let path = PathBuf::from(p);
        if path.is_dir() {
            for entry in walkdir::WalkDir::new(&path)
                .follow_links(false)
                .sort_by_file_name()
            {
                match entry {
                    // `<file>.expect.toml` is vramdiff's own test convention (the answers for a sample log, beside
                    // it in sample-logs/), never a log: a folder walk skips it, so `vramdiff batch sample-logs/`
                    // counts only the samples. Named explicitly or by a glob, it is read like any file.
                    Ok(e)
                        if e.file_type().is_file()
                            && e.file_name().to_string_lossy().ends_with(".expect.toml") => {}
                    Ok(e) if e.file_type().is_file() => files.push(InputFile {
                        path: e.path().display().to_string(),
                        shard_key: shard::key_below(e.path(), &path),
                    }),
                    Ok(_) => {}
                    Err(e) => problems.push(format!("{p}: {e}")),
                }
            }
        } else if p.contains(['*', '?', '[']) && !path.exists() {
            match glob::glob(p) {
                Ok(matches) => {
                    let root = shard::glob_root(p);
                    let before = files.len();
                    for m in matches {
                        match m {
                            Ok(m) if m.is_file() => files.push(InputFile {
                                path: m.display().to_string(),
                                shard_key: shard::key_below(&m, &root),
                            }),
                            Ok(_) => {}
                            Err(e) => problems.push(format!("{p}: {e}")),
                        }
                    }
                    if files.len() == before {
                        problems.push(format!("{p}: the pattern matches no file"));
                    }
                }
                Err(e) => problems.push(format!("{p}: not a valid pattern: {e}")),
            }
        } else {
            // Given explicitly: read it even if it is missing, so the error names it.
            files.push(InputFile {
                path: p.clone(),
                shard_key: shard::name_key(&path),
            });
        }
    }
    // By path, then key: a file reached twice (a folder and a glob) keeps the same key on every machine given
    // the same arguments.
    files.sort();
    files.dedup_by(|a, b| a.path == b.path);
    (files, problems)
}

/// Analyse one file to rows.
fn analyze_file(path: &str, pipeline: &mut Pipeline) -> FileResult {
    // A pasted diff of two runs is read as its two sides (`source::diff_sides`), one file's loads and summary.
    let opened = source::open(path)
        .map_err(|e| e.to_string())
        .and_then(|input| source::diff_sides::sides(input).map_err(|e| format!("{path}: {e}")));
    let (summary, loads) = match opened {
        Ok(sides) => {
            let mut summary: Option<InputSummary> = None;
            let mut loads = Vec::new();
            for input in sides {
                let report = pipeline.run(&input.name, input.reader, &mut []);
                loads.extend(report.loads);
                match &mut summary {
                    Some(s) => s.absorb_other_side(report.summary),
                    None => summary = Some(report.summary),
                }
            }
            let mut summary = summary.unwrap_or_default();
            summary.path = path.to_string();
            (summary, loads)
        }
        Err(e) => (
            InputSummary {
                path: path.to_string(),
                error: Some(e),
                ..InputSummary::default()
            },
            Vec::new(),
        ),
    };
    let mut result = FileResult {
        summary,
        pairs: super::scorecard::rows(path, &loads),
        ends: crate::pairs::run_ends(&loads),
        ..FileResult::default()
    };
    for (i, load) in loads.into_iter().enumerate() {
        let (row, long) = rows(path, i + 1, &load);
        result.loads.push(row);
        result.components.extend(long);
        result
            .findings
            .extend(load.findings.into_iter().map(|f| (i as i64 + 1, f)));
    }
    // Per-file summaries keep their counts; the lines themselves are not kept in a batch.
    result.summary.unrecognized.clear();
    result
}

/// Analyse every file on `threads` threads (0: all cores), calling `progress` after each file.
pub fn analyze_all(
    files: &[String],
    options: &Options,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Vec<FileResult>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    // The grammar is compiled once and cloned per worker thread, each clone used by its thread alone (the lock
    // is never contended). The files are handed out one at a time: a thread that finishes early takes the
    // next file, rather than waiting for another thread's share of the list.
    let mut pipeline = Pipeline::new(options)?;
    // Fewer files than threads (one long journald dump): each file is read on a thread of its own beside its
    // parser, so the cores a file per thread would leave idle are used (the same results).
    if files.len() < pool.current_num_threads() {
        pipeline.read_ahead();
    }
    let pipelines: Vec<Mutex<Pipeline>> = (0..pool.current_num_threads())
        .map(|_| Mutex::new(pipeline.clone()))
        .collect();
    let done = AtomicU64::new(0);
    let results = pool.install(|| {
        files
            .par_iter()
            .with_max_len(1)
            .map(|path| {
                let thread = rayon::current_thread_index().unwrap_or(0);
                let mut pipeline = pipelines[thread % pipelines.len()]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let r = analyze_file(path, &mut pipeline);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                r
            })
            .collect()
    });
    Ok(results)
}
