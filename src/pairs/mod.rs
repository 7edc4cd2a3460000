//! Advice checked against the next load (issue 53): two loads of one model on one runtime whose settings
//! differ are a measured `whatif`. The first is replayed with exactly the second's settings (the levers of
//! `src/replay/levers/`), and the prediction is set beside what the second load measured, per component and
//! per device, with the rounding of both ([`compare`]); a changed setting no lever models is named, never
//! ignored ([`settings`]); a suggestion of the first load that is the change the user made is said to have
//! delivered or not ([`suggestions`]).
//!
//! A load is paired with the previous load of the same model ([`identity`]) and runtime in the report's order:
//! a log's loads, the files of one run given together, two runs pasted one after the other, the two runs of
//! `vramdiff diff` ([`across`]), and the files of a `batch` in its order ([`across_runs`]). [`Pairer`] keeps
//! only the last load of each model, so the report written load by load (`report::streamed`) finds the same
//! pairs as the report of the whole analysis.

pub mod compare;
pub mod identity;
pub mod settings;
pub mod suggestions;

use crate::model::{Concluded, LoadPair, ModelIdentity, Runtime};

/// The pairs of a stream of loads, fed one at a time.
#[derive(Default)]
pub struct Pairer {
    /// The last load of each model and runtime, with its number.
    last: Vec<((Runtime, ModelIdentity), usize, Concluded)>,
    loads: usize,
    pairs: Vec<LoadPair>,
}

impl Pairer {
    /// The next load of the report (numbered from 1 in the order fed).
    pub fn push(&mut self, load: &Concluded) {
        self.loads += 1;
        let number = self.loads;
        let Some(key) = identity::identity(load) else {
            return;
        };
        match self.last.iter_mut().find(|(k, _, _)| *k == key) {
            Some(entry) => {
                if let Some(pair) = pair(&entry.2, entry.1, load, number, &key.1) {
                    self.pairs.push(pair);
                }
                entry.1 = number;
                entry.2 = load.clone();
            }
            None => self.last.push((key, number, load.clone())),
        }
    }

    /// The pairs found, in the order of their second loads.
    pub fn finish(self) -> Vec<LoadPair> {
        self.pairs
    }
}

/// The pairs among `loads`, in the report's order.
pub fn find(loads: &[Concluded]) -> Vec<LoadPair> {
    let mut pairer = Pairer::default();
    for load in loads {
        pairer.push(load);
    }
    pairer.finish()
}

/// The pairs of two runs (`vramdiff diff OLD NEW`): each load of `new` with the last load of `old` of one
/// model before it — the old run's last such load for the first, the new run's previous one after that — and
/// only pairs that cross from `old` to `new`. `first` numbers the old run's load, `second` the new run's.
pub fn across(old: &[Concluded], new: &[Concluded]) -> Vec<LoadPair> {
    let mut pairer = Pairer::default();
    for load in old.iter().chain(new) {
        pairer.push(load);
    }
    pairer
        .finish()
        .into_iter()
        .filter(|p| p.first <= old.len() && p.second > old.len())
        .map(|mut p| {
            p.second -= old.len();
            p
        })
        .collect()
}

/// The first and the last load of one model in one file: what pairs that file with the files before it (its
/// first load, with the last such load of an earlier file) and after it (its last load). `batch` keeps these
/// two per model of a file, never every load, so its memory still grows with the rows, not the logs.
#[derive(Debug, Clone)]
pub struct RunEnds {
    key: (Runtime, ModelIdentity),
    /// The first load of the model in the file, with its number there (from 1).
    first: (usize, Concluded),
    /// The last one (the same load when the file has one).
    last: (usize, Concluded),
}

/// The [`RunEnds`] of each model among one file's `loads`, in the order the models first load.
pub fn run_ends(loads: &[Concluded]) -> Vec<RunEnds> {
    let mut out: Vec<RunEnds> = Vec::new();
    for (i, load) in loads.iter().enumerate() {
        let Some(key) = identity::identity(load) else {
            continue;
        };
        match out.iter_mut().find(|e| e.key == key) {
            Some(e) => e.last = (i + 1, load.clone()),
            None => out.push(RunEnds {
                key,
                first: (i + 1, load.clone()),
                last: (i + 1, load.clone()),
            }),
        }
    }
    out
}

/// A pair whose loads sit in two files: `first_run` and `second_run` index the runs given to [`across_runs`].
#[derive(Debug, Clone)]
pub struct CrossPair {
    pub first_run: usize,
    pub second_run: usize,
    /// The second load's first line in its file.
    pub second_line: u64,
    pub pair: LoadPair,
}

/// The pairs across files (`vramdiff batch`: the files of one run, or of many, in the batch's order): a file's
/// first load of a model with the last load of that model and runtime in the latest file before it that
/// loaded it, as [`find`] pairs the loads of all the files read one after the other; the pairs inside a
/// file are [`find`]'s. Loads are numbered in their own files.
pub fn across_runs(runs: &[Vec<RunEnds>]) -> Vec<CrossPair> {
    let mut out = Vec::new();
    for (second_run, ends) in runs.iter().enumerate() {
        for end in ends {
            let earlier = runs[..second_run]
                .iter()
                .enumerate()
                .rev()
                .find_map(|(run, e)| e.iter().find(|x| x.key == end.key).map(|x| (run, x)));
            let Some((first_run, before)) = earlier else {
                continue;
            };
            let (first, from) = &before.last;
            let (second, to) = &end.first;
            if let Some(pair) = pair(from, *first, to, *second, &end.key.1) {
                out.push(CrossPair {
                    first_run,
                    second_run,
                    second_line: to.reconciled.load.source.first_line,
                    pair,
                });
            }
        }
    }
    out
}

/// The pair `from` → `to`; `None` when the two logged the same settings (a reload, not a change).
fn pair(
    from: &Concluded,
    first: usize,
    to: &Concluded,
    second: usize,
    model: &ModelIdentity,
) -> Option<LoadPair> {
    let diff = settings::diff(from, to, first);
    if diff.changed.is_empty() && !diff.none_logged {
        return None;
    }
    let runtime = to.reconciled.load.runtime;
    let note = diff.none_logged.then(|| {
        "neither load's settings are in the log: nothing to replay, the figures are set side by side".to_string()
    });
    let figures = compare::figures(from, to, &diff);
    let suggestions = suggestions::outcomes(from, &diff, &figures);
    let l = &to.reconciled.load;
    Some(LoadPair {
        first,
        second,
        runtime: runtime.name().to_string(),
        version: l
            .llama_cpp_build
            .clone()
            .or_else(|| l.ollama_version.clone()),
        model: model.clone(),
        changed: diff.changed,
        figures,
        suggestions,
        note,
    })
}
