//! The scorecard of the pairs of loads (issue 53, `crate::pairs`): every pair a file holds — two loads of one
//! model and runtime whose settings differ — as rows of runtime and version, the settings changed, the
//! component, what the replay of the first load predicted at the second's settings, what the second measured,
//! and the error; then the error summed up by runtime, setting and component. A model CI that reloads with
//! other settings sees at once when a runtime's allocator no longer does what the levers say, and
//! `--max-error prediction=PCT` (`super::gate`) fails the run on it.

use std::fmt::Write as _;

use crate::model::{Concluded, LoadPair, PairVerdict, Quantity, SettingChange};
use crate::pairs::RunEnds;

use super::ingest::FileResult;
use crate::report::md_escape;

/// One figure (every device's) of one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRow {
    /// The file of the second load.
    pub file: String,
    /// The file of the first load: `file` itself, or an earlier file of the batch (a pair across files).
    pub first_file: String,
    /// The loads' numbers, each in its own file.
    pub first: usize,
    pub second: usize,
    /// The second load's first line.
    pub first_line: u64,
    pub runtime: String,
    pub version: Option<String>,
    /// The settings changed, `ctx 4096 → 8192, flash attention on → off`.
    pub setting: String,
    /// The names of the settings changed, without their values (`ctx, batch`): what the summary groups by.
    pub settings: String,
    pub component: String,
    /// The device, for a component no figure sums over every device (its devices' figures are each a row).
    pub device: Option<String>,
    pub predicted: Option<Quantity>,
    pub measured: Option<Quantity>,
    pub error: Option<i64>,
    pub verdict: PairVerdict,
    /// The prediction rests on a lever no real pair has checked yet.
    pub unverified: bool,
}

impl PairRow {
    /// The error as a share of the measurement, in percent, when it is one beyond the rounding.
    pub fn error_percent(&self) -> Option<f64> {
        match self.verdict {
            PairVerdict::Over | PairVerdict::Under => {}
            PairVerdict::WithinRounding | PairVerdict::NotModelled | PairVerdict::NotMeasured => {
                return None
            }
        }
        let (e, m) = (self.error?, self.measured?.bytes);
        (m > 0).then(|| e as f64 * 100.0 / m as f64)
    }

    /// The loads in words: `1 → 2` in one file, `a.log #1 → 2` across two.
    pub fn loads(&self) -> String {
        if self.first_file == self.file {
            format!("{} → {}", self.first, self.second)
        } else {
            format!("{} #{} → {}", self.first_file, self.first, self.second)
        }
    }
}

/// The rows of the pairs among one file's loads.
pub fn rows(path: &str, loads: &[Concluded]) -> Vec<PairRow> {
    crate::pairs::find(loads)
        .iter()
        .flat_map(|pair| {
            let first_line = loads
                .get(pair.second.saturating_sub(1))
                .map_or(0, |l| l.reconciled.load.source.first_line);
            pair_rows(pair, path, path, first_line)
        })
        .collect()
}

/// The rows of the pairs across the batch's files (`crate::pairs::across_runs`): `files[i]` and `ends[i]` are
/// the batch's i-th file and the first and last load of each model in it.
pub fn cross_file_rows(files: &[&str], ends: &[Vec<RunEnds>]) -> Vec<PairRow> {
    crate::pairs::across_runs(ends)
        .iter()
        .flat_map(|c| {
            pair_rows(
                &c.pair,
                files[c.first_run],
                files[c.second_run],
                c.second_line,
            )
        })
        .collect()
}

/// Every pair row of the batch: each file's own pairs and the pairs across files, in the order of the second
/// loads (files by path, as `super::ingest` sorts them, then loads).
pub fn all_rows(results: &[FileResult]) -> Vec<PairRow> {
    let files: Vec<&str> = results.iter().map(|r| r.summary.path.as_str()).collect();
    let ends: Vec<Vec<RunEnds>> = results.iter().map(|r| r.ends.clone()).collect();
    let mut out: Vec<PairRow> = results.iter().flat_map(|r| r.pairs.clone()).collect();
    out.extend(cross_file_rows(&files, &ends));
    let position = |file: &str| files.iter().position(|f| *f == file);
    out.sort_by_key(|r| (position(&r.file), r.second));
    out
}

/// One row per figure of `pair`: every device's (the one without a device), else each device's of a component
/// that has no such figure (a CPU-only load's compute buffer; `sample-logs/1256-…`'s, whose second table lost
/// its host row).
fn pair_rows(pair: &LoadPair, first_file: &str, file: &str, first_line: u64) -> Vec<PairRow> {
    let joined = |f: &dyn Fn(&SettingChange) -> String| {
        if pair.changed.is_empty() {
            "not in the log".to_string()
        } else {
            pair.changed.iter().map(f).collect::<Vec<_>>().join(", ")
        }
    };
    let setting = joined(&|c| format!("{} {} → {}", c.setting, c.before, c.after));
    let settings = joined(&|c| c.setting.clone());
    let every = pair.figures.iter().filter(|f| {
        f.device.is_none()
            || !pair
                .figures
                .iter()
                .any(|g| g.device.is_none() && g.component == f.component)
    });
    every
        .map(|f| PairRow {
            file: file.to_string(),
            first_file: first_file.to_string(),
            first: pair.first,
            second: pair.second,
            first_line,
            runtime: pair.runtime.clone(),
            version: pair.version.clone(),
            setting: setting.clone(),
            settings: settings.clone(),
            component: f.component.clone(),
            device: f.device.as_ref().map(|d| d.to_string()),
            predicted: f.predicted,
            measured: f.measured,
            error: f.error,
            verdict: f.verdict,
            unverified: f.unverified,
        })
        .collect()
}

fn size(component: &str, v: Option<i64>) -> String {
    match v {
        None => "–".to_string(),
        Some(v) if component == "layers" => v.to_string(),
        Some(v) => crate::model::human(v),
    }
}

fn signed(component: &str, v: Option<i64>) -> String {
    match v {
        None => "–".to_string(),
        Some(v) if component == "layers" => format!("{v:+}"),
        Some(v) if v > 0 => format!("+{}", crate::model::human(v)),
        Some(v) => crate::model::human(v),
    }
}

/// The scorecard as Markdown: the table, then the summary by runtime, setting and component; empty without a
/// pair.
pub fn render(rows: &[PairRow]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    out.push_str(
        "## Pairs of loads: predicted against measured\n\nTwo loads of one model and runtime whose settings \
         differ: the first replayed with the second's settings, beside what the second measured (every \
         device's figure).\n\n| file | loads | runtime | setting changed | component | predicted | measured | \
         error | verdict |\n| :--- | :--- | :--- | :--- | :--- | ---: | ---: | ---: | :--- |\n",
    );
    for r in rows {
        let runtime = match &r.version {
            Some(v) => format!("{} {v}", r.runtime),
            None => r.runtime.clone(),
        };
        let error = match r.error_percent() {
            Some(p) => format!("{} ({p:+.1} %)", signed(&r.component, r.error)),
            None => signed(&r.component, r.error),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.file.replace('`', "'"),
            md_escape(&r.loads()),
            md_escape(&runtime),
            md_escape(&r.setting),
            match &r.device {
                Some(d) => format!("{} ({})", r.component, md_escape(d)),
                None => r.component.clone(),
            },
            size(&r.component, r.predicted.map(|q| q.bytes)),
            size(&r.component, r.measured.map(|q| q.bytes)),
            error,
            if r.unverified {
                format!("{} (unverified lever)", r.verdict.as_str())
            } else {
                r.verdict.as_str().to_string()
            }
        );
    }
    out.push_str(
        "\n### Prediction error by runtime, setting and component\n\n`within` counts the predictions inside \
         the rounding of both loads; `worst` is the largest error beyond it, as a share of the measurement.\n\n\
         | runtime | setting changed | component | figures | predicted | within | worst |\n\
         | :--- | :--- | :--- | ---: | ---: | ---: | ---: |\n",
    );
    let mut groups: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r.runtime.clone(), r.settings.clone(), r.component.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    for (runtime, setting, component) in groups {
        let of: Vec<&PairRow> = rows
            .iter()
            .filter(|r| r.runtime == runtime && r.settings == setting && r.component == component)
            .collect();
        let predicted = of.iter().filter(|r| r.predicted.is_some()).count();
        let within = of
            .iter()
            .filter(|r| r.verdict == PairVerdict::WithinRounding)
            .count();
        let worst = of
            .iter()
            .filter_map(|r| r.error_percent())
            .max_by(|a, b| a.abs().total_cmp(&b.abs()));
        let _ = writeln!(
            out,
            "| {} | {} | {component} | {} | {predicted} | {within} | {} |",
            md_escape(&runtime),
            md_escape(&setting),
            of.len(),
            worst.map_or("–".to_string(), |w| format!("{w:+.1} %"))
        );
    }
    out.push('\n');
    out
}
