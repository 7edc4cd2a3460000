//! The rounds of llama.cpp's `--fit` as attempts of the load (issue 52 part 3, `docs/log-formats.md` §5.4).
//!
//! [`super::fit`] reads the fit for the estimate: which table is the plan. A user also asks *why* the load got
//! its split and its context, and the answer is the sequence of test allocations the fit printed: the user's
//! settings measured first (`getting device memory data for initial parameters:`, a table or the projection
//! lines, then the decision), then each probe of the search — a breakdown table at high verbosity, and at any
//! verbosity a block of `id=K, n_layer=L, n_part=P, overflow_type=…, mem=M MiB` lines, one per device — each
//! followed by what the fit made of it (`set ngl_per_device[K].n_layer=L`, `context size reduced from A to B`).
//! This module cuts those lines into rounds and says, per round, what was tried, what each device was
//! projected to use against its free memory and budget, and what the fit decided next. Only what the lines say:
//! a round's context is given only where a context line names it, a device only where a table row or a device
//! line of the fit names it.
//!
//! The rounds are the one record of the fit's lines: [`super::fit::FitLedger`] feeds them and reads its tables
//! and the fit's last word back from them, so each line is held once.

use crate::model::{
    Attempt, Device, FitProbe, FitProbeDecision, FitProbeDevice, FitProbeTried, FitStopCause,
    Quantity,
};
use crate::parse::event::{BreakdownLine, FitLine};

/// Rounds kept per load: the first (the user's settings) and the latest ones. A fit prints a few dozen at
/// most; the bound keeps a fuzzed log from growing a load without limit.
const MAX_ROUNDS: usize = 64;

/// One `id=K, n_layer=L, …, mem=M MiB` line.
#[derive(Debug, Clone, Copy)]
pub(super) struct ProbeLine {
    pub(super) id: i64,
    pub(super) layers: i64,
    pub(super) partial: Option<i64>,
    pub(super) mem: Quantity,
    pub(super) line: u64,
}

/// `set ngl_per_device[K].n_layer=L` (`high: false`, a probe that fits) or `ngl_per_device_high[K]` (`true`).
#[derive(Debug, Clone, Copy)]
pub(super) struct SetLine {
    pub(super) id: i64,
    pub(super) layers: i64,
    pub(super) high: bool,
}

/// One breakdown table as printed: begun by its header or not, and its rows.
#[derive(Debug, Clone, Default)]
pub(super) struct Table {
    /// A table whose first rows are the first of a pasted window may have lost rows above them (a device,
    /// the host): it says what each of its rows says, but is no plan.
    pub(super) headed: bool,
    pub(super) rows: Vec<(BreakdownLine, u64)>,
}

/// `projected to use U MiB … vs. F MiB of free …` (`host`: of total host memory).
#[derive(Debug, Clone, Copy)]
pub(super) struct ProjectionLine {
    pub(super) used: Quantity,
    pub(super) free: Quantity,
    pub(super) host: bool,
    pub(super) line: u64,
}

/// `- CUDA0 (NAME): T total, U used, F free vs. target of M`: one device with the user's settings.
#[derive(Debug, Clone)]
pub(super) struct InitialLine {
    pub(super) device: Device,
    pub(super) name: Option<String>,
    pub(super) total: Option<Quantity>,
    pub(super) used: Quantity,
    pub(super) free: Quantity,
    /// The margin the fit aims to leave free.
    pub(super) target: Option<Quantity>,
    pub(super) line: u64,
}

/// `no changes needed` (`change: false`) or `need to reduce … by D` (`change: true`, `amount` D).
#[derive(Debug, Clone, Copy)]
pub(super) struct DecisionLine {
    pub(super) change: bool,
    pub(super) target: Option<Quantity>,
    pub(super) amount: Option<Quantity>,
    pub(super) line: u64,
}

/// `context size reduced from A to B -> need N MiB less memory in total` / `set by user to N -> no change`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ContextLine {
    /// The context before the reduction.
    pub(super) from: Option<i64>,
    /// What the reduction saves over all devices.
    pub(super) less: Option<Quantity>,
    pub(super) to: i64,
    pub(super) by_user: bool,
    pub(super) line: u64,
}

/// A per-device result line of the fit.
#[derive(Debug, Clone)]
pub(super) struct ResultLine {
    pub(super) device: Device,
    pub(super) layers: Option<i64>,
    pub(super) used: Quantity,
    pub(super) overflowing: Option<i64>,
    pub(super) line: u64,
}

/// One round as printed: the lines from one test allocation's start to the next one's.
#[derive(Debug, Clone, Default)]
pub(super) struct Round {
    /// The round measures the user's settings (the fit's first measurement).
    pub(super) user_settings: bool,
    /// The breakdown tables begun in this round: at most one with rows (a header cut off before its rows
    /// leaves an empty one before it).
    pub(super) tables: Vec<Table>,
    pub(super) probes: Vec<ProbeLine>,
    pub(super) sets: Vec<SetLine>,
    pub(super) projection: Option<ProjectionLine>,
    /// The user's settings per device, the last line of each device.
    pub(super) initial: Vec<InitialLine>,
    pub(super) decision: Option<DecisionLine>,
    pub(super) context: Option<ContextLine>,
    lines: Vec<u64>,
}

impl Round {
    fn first_line(&self) -> u64 {
        self.lines.iter().copied().min().unwrap_or(0)
    }

    /// The rows of the round's tables.
    pub(super) fn rows(&self) -> impl Iterator<Item = &(BreakdownLine, u64)> {
        self.tables.iter().flat_map(|t| &t.rows)
    }
}

/// Every line the fit printed for one load, cut into rounds: the one record that [`super::fit::FitLedger`]
/// (the estimate) and [`FitRounds::attempts`] (the rounds as attempts) both read.
///
/// Bounded: at most [`MAX_ROUNDS`] rounds (the first and the latest); the per-load lines keep the last
/// result per device and one stop and one end. Rows, probe lines and `id=K, target=T` lines are kept as
/// printed within the kept rounds and the load.
#[derive(Debug, Clone, Default)]
pub struct FitRounds {
    /// The fit's start (`fitting params to device memory ...`) was seen: the first round is the user's settings.
    pub(super) started: bool,
    pub(super) start_line: Option<u64>,
    pub(super) rounds: Vec<Round>,
    /// Rounds dropped from the middle when more than [`MAX_ROUNDS`] were printed.
    dropped: u32,
    /// Tables begun in the rounds dropped and not carried.
    pub(super) dropped_tables: u32,
    /// What the rounds dropped said that the estimate still reads ([`FitRounds::read_back`]).
    carried: Round,
    /// `id=K, target=T MiB`: the budget per device, with the line.
    pub(super) targets: Vec<(i64, Quantity, u64)>,
    /// The fit's result per device, in the order printed (a later result for a device replaces the first).
    pub(super) results: Vec<ResultLine>,
    pub(super) seconds: Option<f64>,
    pub(super) done_line: Option<u64>,
    pub(super) stopped: Option<(FitStopCause, Option<i64>, u64)>,
}

impl FitRounds {
    fn open(&mut self, user_settings: bool) -> &mut Round {
        if self.rounds.len() == MAX_ROUNDS {
            let dropped = self.rounds.remove(1);
            self.dropped += 1;
            self.carry(dropped);
        }
        self.rounds.push(Round {
            user_settings,
            ..Round::default()
        });
        self.rounds.last_mut().expect("a round was just pushed")
    }

    /// Keep what a dropped round said that the estimate reads: its last projection, decision and context,
    /// each device's line of the user's settings, the probes it accepted, and its table when no earlier one
    /// is kept (the first table is the user's settings). Bounded: one of each, one line per device.
    fn carry(&mut self, dropped: Round) {
        let measured = |r: &Round| r.projection.is_some() || r.decision.is_some();
        // Measured before the table but in a round no longer kept: the place of the user's table that
        // `FitLedger` keeps empty.
        let placeholder = measured(&self.carried) && !measured(&self.rounds[0]);
        let carried = &mut self.carried;
        carried.projection = dropped.projection.or(carried.projection);
        carried.decision = dropped.decision.or(carried.decision);
        carried.context = dropped.context.or(carried.context);
        for i in dropped.initial {
            carried.initial.retain(|c| c.device != i.device);
            carried.initial.push(i);
        }
        if let Some(set) = dropped.sets.into_iter().rev().find(|s| !s.high) {
            carried.sets = vec![set];
        }
        let first_table = self.rounds[0].tables.is_empty() && carried.tables.is_empty();
        if first_table && !dropped.tables.is_empty() {
            if placeholder {
                carried.tables.push(Table::default());
            }
            carried.tables.extend(dropped.tables);
            carried.probes = dropped.probes;
        } else {
            self.dropped_tables += dropped.tables.len() as u32;
        }
    }

    /// The rounds in the order printed for the estimate's reading: the first, what the rounds dropped after
    /// it said, the latest.
    pub(super) fn read_back(&self) -> impl DoubleEndedIterator<Item = &Round> {
        let (first, latest) = self.rounds.split_at(self.rounds.len().min(1));
        first
            .iter()
            .chain(std::iter::once(&self.carried))
            .chain(latest)
    }

    /// The round the user's settings lines belong to: the first one while it holds only a table (the table
    /// llama.cpp prints for the user's settings comes before the projection), else the current one.
    fn user_round(&mut self) -> &mut Round {
        if self.rounds.is_empty() {
            return self.open(true);
        }
        let first_open = self.rounds.len() == 1
            && self.rounds[0].probes.is_empty()
            && self.rounds[0].decision.is_none();
        if first_open {
            self.rounds[0].user_settings = true;
        }
        self.current()
    }

    fn current(&mut self) -> &mut Round {
        if self.rounds.is_empty() {
            let user_settings = self.started;
            return self.open(user_settings);
        }
        self.rounds.last_mut().expect("not empty")
    }

    /// A breakdown table begins, with its header (`headed`) or the window's cut.
    pub fn start_table(&mut self, headed: bool) {
        // Any line already in the last round (its own table, its probe lines, the projection that follows the
        // user's table) means this table is the next round's.
        if self.rounds.last().is_none_or(|r| !r.lines.is_empty()) {
            let user_settings = self.rounds.is_empty() && self.started;
            self.open(user_settings);
        }
        self.current().tables.push(Table {
            headed,
            rows: Vec::new(),
        });
    }

    /// A row of the table printed last (a table cut before its header starts one of its own).
    pub fn add_row(&mut self, row: BreakdownLine, line: u64) {
        let any_table = self.read_back().any(|r| !r.tables.is_empty());
        let after_probes = self.rounds.last().is_some_and(|r| !r.probes.is_empty());
        if !any_table || after_probes {
            // After a probe's lines: the next probe's table, whose header the probe lines stand for; before
            // any table: the window's cut.
            self.start_table(any_table);
        }
        let round = self.current();
        round.lines.push(line);
        match round.tables.last_mut() {
            Some(table) => table.rows.push((row, line)),
            None => round.tables.push(Table {
                headed: false,
                rows: vec![(row, line)],
            }),
        }
    }

    /// A fit line.
    pub fn push(&mut self, fit: FitLine, line: u64) {
        match fit {
            FitLine::Start => {
                self.started = true;
                self.start_line = self.start_line.or(Some(line));
            }
            FitLine::Projection { used, free, host } => {
                let round = self.user_round();
                round.projection = Some(ProjectionLine {
                    used,
                    free,
                    host,
                    line,
                });
                round.lines.push(line);
            }
            FitLine::Initial {
                device,
                name,
                total,
                used,
                free,
                target,
            } => {
                let round = self.user_round();
                round.initial.retain(|i| i.device != device);
                round.initial.push(InitialLine {
                    device,
                    name,
                    total,
                    used,
                    free,
                    target,
                    line,
                });
                round.lines.push(line);
            }
            FitLine::Decision {
                change,
                target,
                amount,
            } => {
                let round = self.user_round();
                round.decision = Some(DecisionLine {
                    change,
                    target,
                    amount,
                    line,
                });
                round.lines.push(line);
            }
            FitLine::Context {
                from,
                less,
                to,
                by_user,
            } => {
                let round = self.current();
                round.context = Some(ContextLine {
                    from,
                    less,
                    to,
                    by_user,
                    line,
                });
                round.lines.push(line);
            }
            FitLine::Target { id, target } => {
                self.targets.push((id, target, line));
                self.current().lines.push(line);
            }
            FitLine::Probe {
                id,
                layers,
                partial,
                mem,
            } => {
                // The user's settings print no probe lines; a device already probed in this round means the
                // next block of test allocations.
                let new_block = self
                    .rounds
                    .last()
                    .is_none_or(|r| r.user_settings || r.probes.iter().any(|p| p.id >= id));
                if new_block {
                    self.open(false);
                }
                let round = self.current();
                round.probes.push(ProbeLine {
                    id,
                    layers,
                    partial,
                    mem,
                    line,
                });
                round.lines.push(line);
            }
            FitLine::Set { id, layers, high } => {
                let round = self.current();
                round.sets.push(SetLine { id, layers, high });
                round.lines.push(line);
            }
            FitLine::Result {
                device,
                layers,
                used,
                overflowing,
                ..
            } => {
                self.results.retain(|r| r.device != device);
                self.results.push(ResultLine {
                    device,
                    layers,
                    used,
                    overflowing,
                    line,
                });
            }
            FitLine::Stopped { cause, value } => self.stopped = Some((cause, value, line)),
            FitLine::Done { seconds } => {
                self.seconds = seconds.or(self.seconds);
                self.done_line = Some(line);
            }
        }
    }

    /// The device the fit calls `id=K`: the K-th GPU row of a table, of the user's-settings device lines, or of
    /// the result lines — whichever the log printed.
    fn device_of(&self, id: i64) -> Option<Device> {
        let k = usize::try_from(id).ok()?;
        let table = self
            .rounds
            .iter()
            .find(|r| r.rows().next().is_some())
            .map(|r| {
                r.rows()
                    .map(|(row, _)| row.device.clone())
                    .filter(Device::is_gpu)
                    .collect::<Vec<_>>()
            });
        let initial = self.rounds.iter().find(|r| !r.initial.is_empty()).map(|r| {
            r.initial
                .iter()
                .map(|i| i.device.clone())
                .collect::<Vec<_>>()
        });
        let results = Some(
            self.results
                .iter()
                .map(|r| r.device.clone())
                .collect::<Vec<_>>(),
        );
        [table, initial, results]
            .into_iter()
            .flatten()
            .find_map(|devices| devices.get(k).cloned())
    }

    /// Free memory per device as the fit measured it: the tables' `free` column, the per-device projection.
    fn free_of(&self, device: &Device) -> Option<Quantity> {
        let from_rows = self.rounds.iter().find_map(|r| {
            r.rows()
                .find(|(row, _)| &row.device == device)
                .and_then(|(row, _)| row.free)
        });
        from_rows.or_else(|| {
            self.rounds.iter().find_map(|r| {
                r.initial
                    .iter()
                    .find(|i| &i.device == device)
                    .map(|i| i.free)
            })
        })
    }

    /// The one device's free memory from `vs. F MiB of free device memory`, when the fit measured one GPU.
    fn sole_free(&self) -> Option<Quantity> {
        let ProjectionLine { free, host, .. } = self.rounds.iter().find_map(|r| r.projection)?;
        let ids_beyond_first = self
            .rounds
            .iter()
            .flat_map(|r| &r.probes)
            .any(|p| p.id != 0);
        (!host && !ids_beyond_first && self.results.len() <= 1).then_some(free)
    }

    fn budget_of(&self, id: i64) -> Option<Quantity> {
        self.targets
            .iter()
            .rev()
            .find(|(k, _, _)| *k == id)
            .map(|(_, t, _)| *t)
    }

    /// The devices of one round.
    fn devices(&self, round: &Round) -> Vec<FitProbeDevice> {
        let mut out: Vec<FitProbeDevice> = Vec::new();
        let gpu_rows: Vec<&(BreakdownLine, u64)> =
            round.rows().filter(|(r, _)| r.device.is_gpu()).collect();
        for (position, (row, line)) in gpu_rows.iter().enumerate() {
            let probe = round.probes.iter().find(|p| p.id == position as i64);
            out.push(FitProbeDevice {
                device: Some(row.device.clone()),
                id: probe.map(|p| p.id),
                layers: probe.map(|p| p.layers),
                partial_layers: probe.and_then(|p| p.partial),
                projected: Some(row.self_),
                free: row.free,
                budget: probe.and_then(|p| self.budget_of(p.id)),
                line: *line,
            });
        }
        if gpu_rows.is_empty() {
            // A fit without a GPU measures the host (its `Host` row; `CPU_REPACK` is its own row).
            for (row, line) in round.rows().filter(|(r, _)| r.device.is_host()).take(1) {
                out.push(FitProbeDevice {
                    device: Some(row.device.clone()),
                    id: None,
                    layers: None,
                    partial_layers: None,
                    projected: Some(row.self_),
                    // The host fit compares with the host's *total* memory (`vs. T MiB of total host
                    // memory`), not its free memory: not shown as free.
                    free: None,
                    budget: None,
                    line: *line,
                });
            }
        }
        for p in round
            .probes
            .iter()
            .filter(|p| p.id < 0 || p.id as usize >= gpu_rows.len())
        {
            let device = self.device_of(p.id);
            let free = match &device {
                Some(d) => self.free_of(d),
                None => None,
            }
            .or_else(|| self.sole_free());
            out.push(FitProbeDevice {
                device,
                id: Some(p.id),
                layers: Some(p.layers),
                partial_layers: p.partial,
                projected: Some(p.mem),
                free,
                budget: self.budget_of(p.id),
                line: p.line,
            });
        }
        if out.is_empty() {
            for i in &round.initial {
                out.push(FitProbeDevice {
                    device: Some(i.device.clone()),
                    id: None,
                    layers: None,
                    partial_layers: None,
                    projected: Some(i.used),
                    free: Some(i.free),
                    budget: None,
                    line: i.line,
                });
            }
        }
        if out.is_empty() {
            if let Some(ProjectionLine {
                used, free, host, ..
            }) = round.projection
            {
                // `projected to use U MiB of device memory` names no device: the sum over the GPUs measured.
                let device = if host {
                    Some(Device::Host)
                } else {
                    self.sole_free().and_then(|_| self.device_of(0))
                };
                out.push(FitProbeDevice {
                    device,
                    id: None,
                    layers: None,
                    partial_layers: None,
                    projected: Some(used),
                    free: (!host).then_some(free),
                    budget: None,
                    line: round.first_line(),
                });
            }
        }
        out
    }

    /// The round's figures equal the fit's result on every device: it is the split the load got.
    fn is_plan(&self, devices: &[FitProbeDevice]) -> bool {
        !self.results.is_empty()
            && self.results.iter().enumerate().all(|(k, result)| {
                devices
                    .iter()
                    .find(|d| d.device.as_ref() == Some(&result.device) || d.id == Some(k as i64))
                    .is_some_and(|d| {
                        d.projected.is_some_and(|p| p.bytes == result.used.bytes)
                            && match (d.layers, result.layers) {
                                (Some(a), Some(b)) => a == b,
                                _ => true,
                            }
                    })
            })
    }

    fn decision(&self, round: &Round, devices: &[FitProbeDevice], plan: bool) -> FitProbeDecision {
        let over_budget = devices.iter().any(|d| match (d.projected, d.budget) {
            (Some(p), Some(b)) => p.bytes > b.bytes,
            _ => false,
        });
        if plan {
            FitProbeDecision::Plan
        } else if round.context.is_some_and(|c| !c.by_user) {
            FitProbeDecision::ContextReduced
        } else if round.sets.iter().any(|s| !s.high) {
            FitProbeDecision::Kept
        } else if round.sets.iter().any(|s| s.high) || over_budget {
            FitProbeDecision::TooLarge
        } else {
            match round.decision.map(|d| d.change) {
                Some(false) => FitProbeDecision::NoChange,
                Some(true) => FitProbeDecision::Reduce,
                None => FitProbeDecision::Measured,
            }
        }
    }

    /// Every round as an attempt of the load, in the order printed.
    pub fn attempts(&self) -> Vec<Attempt> {
        // The context each round was measured at: the user's (`from`, or the one kept `by user`) until the
        // fit cut it, the cut one after. A probe between the user's settings and the cut (llama.cpp's probe at
        // the minimum context) prints no context: left unknown.
        let by_user = self
            .rounds
            .iter()
            .find_map(|r| r.context.filter(|c| c.by_user).map(|c| c.to));
        let cut = self
            .rounds
            .iter()
            .position(|r| r.context.is_some_and(|c| !c.by_user));
        let last_plan = self
            .rounds
            .iter()
            .rposition(|r| self.is_plan(&self.devices(r)));
        self.rounds
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.lines.is_empty())
            .map(|(index, r)| {
                let devices = self.devices(r);
                let plan = last_plan == Some(index);
                let context = by_user.or_else(|| {
                    let (from, to) =
                        cut.and_then(|c| self.rounds[c].context.map(|x| (x.from, x.to)))?;
                    match cut {
                        Some(c) if index > c => Some(to),
                        _ if r.user_settings => from,
                        _ => None,
                    }
                });
                let mut lines = r.lines.clone();
                lines.sort_unstable();
                lines.dedup();
                Attempt::FitProbe(FitProbe {
                    round: index as u32 + 1 + if index > 0 { self.dropped } else { 0 },
                    tried: if r.user_settings {
                        FitProbeTried::UserSettings
                    } else {
                        FitProbeTried::Probe
                    },
                    context,
                    decision: self.decision(r, &devices, plan),
                    devices,
                    reduce_by: r.decision.filter(|d| d.change).and_then(|d| d.amount),
                    context_to: r.context.filter(|c| !c.by_user).map(|c| c.to),
                    buffer_lines: Vec::new(),
                    line: r.first_line(),
                    lines,
                })
            })
            .collect()
    }
}

/// Give each `--fit` round the dry-run buffer lines printed while it was measured: llama.cpp prints a test
/// allocation's buffers before the table or figures that sum them, so a buffer line belongs to the first round
/// that starts after it. Lines after the last round's start belong to a round the log does not show: left out.
pub fn attach_dry_run_buffers(attempts: &mut [Attempt], dry_run_lines: &[u64]) {
    for &line in dry_run_lines {
        let round = attempts.iter_mut().find_map(|a| match a {
            Attempt::FitProbe(p) if p.line > line => Some(p),
            Attempt::FitProbe(_) | Attempt::Eviction(_) => None,
        });
        if let Some(p) = round {
            p.buffer_lines.push(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{Attempt, Device, FitProbe, FitProbeDecision, FitProbeTried, MIB};

    fn rounds(lines: &[&str]) -> Vec<FitProbe> {
        let loads = loads_of(lines);
        assert_eq!(loads.len(), 1, "{loads:#?}");
        loads[0]
            .attempts
            .iter()
            .map(|a| match a {
                Attempt::FitProbe(p) => p.clone(),
                Attempt::Eviction(e) => panic!("not a fit round: {e:?}"),
            })
            .collect()
    }

    fn mib(q: Option<crate::model::Quantity>) -> i64 {
        q.expect("a figure").bytes / MIB
    }

    #[test]
    fn each_round_of_a_fit_that_moved_layers_is_an_attempt_with_its_decision() {
        // `sample-logs/706-…` lines 5–19 but 6 and 14 (corpus raw/706; those two are read by no rule): the user's settings 77 MiB short of the margin, the
        // fit's zero-layer base, the 65-layer probe that is the result.
        let r = rounds(&[
            "0.00.787.936 I cmn  common_init_: fitting params to device memory ...",
            "0.00.787.941 I common_params_fit_impl: getting device memory data for initial parameters:",
            "0.01.496.916 I common_params_fit_impl: projected to use 20619 MiB of device memory vs. 21728 MiB of free device memory",
            "0.01.496.921 I common_params_fit_impl: cannot meet free memory target of 1186 MiB, need to reduce device memory by 77 MiB",
            "0.01.496.921 I common_params_fit_impl: context size set by user to 8192 -> no change",
            "0.01.496.922 I common_params_fit_impl: id=0, target=20542 MiB",
            "0.03.033.206 I common_params_fit_impl: memory for test allocation by device:",
            "0.03.033.212 I common_params_fit_impl: id=0, n_layer= 0, n_part= 0, overflow_type=4, mem=   232 MiB",
            "0.03.765.562 I common_params_fit_impl: memory for test allocation by device:",
            "0.03.765.569 I common_params_fit_impl: id=0, n_layer=65, n_part= 0, overflow_type=4, mem= 20358 MiB",
            "0.03.765.571 I common_params_fit_impl: set ngl_per_device[0].n_layer=65",
            "0.03.765.572 I common_params_fit_impl:   - Vulkan0 (NVIDIA GeForce RTX 3090): 65 layers,  20358 MiB used,   1370 MiB free",
            "0.03.765.574 I common_fit_params: successfully fit params to free device memory",
        ]);
        assert_eq!(r.len(), 3, "{r:#?}");
        let decisions: Vec<_> = r.iter().map(|p| p.decision).collect();
        assert_eq!(
            decisions,
            [
                FitProbeDecision::Reduce,
                FitProbeDecision::Measured,
                FitProbeDecision::Plan
            ]
        );
        assert_eq!(r[0].tried, FitProbeTried::UserSettings);
        assert_eq!(mib(r[0].reduce_by), 77);
        assert_eq!(
            (mib(r[0].devices[0].projected), mib(r[0].devices[0].free)),
            (20619, 21728)
        );
        assert!(r.iter().all(|p| p.context == Some(8192)));
        let plan = &r[2].devices[0];
        assert_eq!(plan.device, Some(Device::named("Vulkan0")));
        assert_eq!((plan.id, plan.layers), (Some(0), Some(65)));
        assert_eq!((mib(plan.projected), mib(plan.budget)), (20358, 20542));
        assert_eq!((r[1].line, r[2].line), (8, 10));
        assert_eq!(r[2].lines, [10, 11]);
    }

    #[test]
    fn a_host_fit_that_cut_the_context_says_which_round_cut_it() {
        // `tests/data/oracle/b11549/logs/llama-gqa--fit-reduce.log` lines 13–24 (b11549, run by the oracle).
        let r = rounds(&[
            "0.00.004.086 I cmn  common_init_: fitting params to device memory ...",
            "0.00.004.105 I common_params_fit_impl: getting device memory data for initial parameters:",
            "0.00.006.179 I common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   compute    unaccounted |",
            "0.00.006.179 I common_memory_breakdown_print: |   - Host               |                   19 =     0 +       8 +      11                |",
            "0.00.006.179 I common_memory_breakdown_print: |   - CPU_REPACK         |                    0 =     0 +       0 +       0                |",
            "0.00.006.367 I common_params_fit_impl: projected to use 19 MiB of host memory vs. 24105 MiB of total host memory",
            "0.00.006.368 I common_params_fit_impl: cannot meet free memory target of 24089 MiB, need to reduce device memory by 2 MiB",
            "0.00.007.807 I common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   compute    unaccounted |",
            "0.00.007.830 I common_memory_breakdown_print: |   - Host               |                    5 =     0 +       1 +       4                |",
            "0.00.007.844 I common_memory_breakdown_print: |   - CPU_REPACK         |                    0 =     0 +       0 +       0                |",
            "0.00.007.885 I common_params_fit_impl: context size reduced from 8192 to 6656 -> need 3 MiB less memory in total",
            "0.00.007.912 I common_fit_params: successfully fit params to free device memory",
        ]);
        assert_eq!(r.len(), 2, "{r:#?}");
        assert_eq!(
            (r[0].tried, r[0].decision, r[0].context),
            (
                FitProbeTried::UserSettings,
                FitProbeDecision::Reduce,
                Some(8192)
            )
        );
        // The probe at the minimum context prints no context: left unknown, never guessed.
        assert_eq!(
            (r[1].tried, r[1].decision, r[1].context, r[1].context_to),
            (
                FitProbeTried::Probe,
                FitProbeDecision::ContextReduced,
                None,
                Some(6656)
            )
        );
        assert_eq!(r[1].devices[0].device, Some(Device::Host));
        assert_eq!(mib(r[1].devices[0].projected), 5);
        // The host fit measures against total memory, not free: no free figure is made up.
        assert_eq!(r[0].devices[0].free, None);
    }

    #[test]
    fn a_probe_over_its_budget_is_too_large_and_an_accepted_one_is_kept() {
        // `sample-logs/042-…` lines 1–8 (corpus raw/042), with the fit's budgets of a two-GPU search: the
        // 16-layer probe on CUDA1 is accepted (`set ngl_per_device[1].n_layer=16`).
        let r = rounds(&[
            "common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |",
            "common_memory_breakdown_print: |   - CUDA0 (RTX 5090)   | 32606 = 30991 + ( 4205 =     0 +       0 +    4205) +       -2590 |",
            "common_memory_breakdown_print: |   - CUDA1 (RTX 3090)   | 24575 = 23332 + (17829 =  1177 +   15360 +    1292) +      -16586 |",
            "common_memory_breakdown_print: |   - Host               |                  25094 =  1502 +   21504 +    2088                |",
            "common_params_fit_impl: memory for test allocation by device:",
            "common_params_fit_impl: id=0, n_layer= 0, n_part= 0, overflow_type=4, mem=  4205 MiB",
            "common_params_fit_impl: id=1, n_layer=16, n_part= 0, overflow_type=4, mem= 17829 MiB",
            "common_params_fit_impl: set ngl_per_device[1].n_layer=16",
        ]);
        assert_eq!(r.len(), 1, "{r:#?}");
        assert_eq!(r[0].decision, FitProbeDecision::Kept);
        // The window starts at a table: whether it measured the user's settings is not known.
        assert_eq!(r[0].tried, FitProbeTried::Probe);
        let layers: Vec<_> = r[0].devices.iter().map(|d| d.layers).collect();
        assert_eq!(layers, [Some(0), Some(16)]);
        assert_eq!(mib(r[0].devices[1].free), 23332);
    }
    #[test]
    fn the_test_allocation_printed_before_a_round_is_the_rounds() {
        // `sample-logs/709-…` lines 7, 8, 9, 12, 13, 18, 19, 24–26, 28, 29 (corpus raw/709): Metal's no-alloc
        // measurement of the user's settings (a 0.00 MiB KV buffer beside the sized cache), its table, the
        // projection and "no changes needed". The `-lv 4` prefix (`0.00.228.843 I `) is removed as the framer
        // removes it (`docs/log-formats.md` §6.2).
        let raw = [
            "0.00.228.843 I llama_context:        CPU  output buffer size =     0.95 MiB",
            "0.00.229.440 I llama_kv_cache:       MTL0 KV buffer size =     0.00 MiB",
            "0.00.229.443 I llama_kv_cache: size = 2176.00 MiB (131072 cells,   8 layers,  1/1 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB",
            "0.00.261.992 I llama_memory_recurrent:       MTL0 RS buffer size =   351.75 MiB",
            "0.00.262.003 I llama_memory_recurrent: size =  351.75 MiB (     1 cells,  33 layers,  1 seqs  6 rs_seq), R (f32):   15.75 MiB, S (f32):  336.00 MiB",
            "0.00.271.444 I sched_reserve:       MTL0 compute buffer size =   501.00 MiB",
            "0.00.271.446 I sched_reserve:        CPU compute buffer size =   272.29 MiB",
            "0.00.271.560 I common_memory_breakdown_print: | memory breakdown [MiB]  | total    free    self   model   context   compute    unaccounted |",
            "0.00.271.562 I common_memory_breakdown_print: |   - MTL0 (Apple M4 Pro) | 16384 = 16031 + (8323 =  5294 +    2527 +     501) +       -7971 |",
            "0.00.271.562 I common_memory_breakdown_print: |   - Host                |                  1090 =   545 +       0 +     544                |",
            "0.00.296.090 I common_params_fit_impl: projected to use 8323 MiB of device memory vs. 16031 MiB of free device memory",
            "0.00.296.092 I common_params_fit_impl: will leave 7708 >= 1024 MiB of free device memory, no changes needed",
        ];
        let framed: Vec<&str> = raw
            .iter()
            .map(|l| l.splitn(3, ' ').nth(2).expect("a prefixed line"))
            .collect();
        let loads = loads_of(&framed);
        assert_eq!(loads.len(), 1, "{loads:#?}");
        let Some(Attempt::FitProbe(p)) = loads[0].attempts.first() else {
            panic!("no fit round: {:#?}", loads[0].attempts);
        };
        assert_eq!(p.decision, FitProbeDecision::NoChange);
        assert_eq!(p.buffer_lines, [1, 2, 4, 6, 7]);
        assert!(
            loads[0].actual.buffers.is_empty(),
            "{:#?}",
            loads[0].actual.buffers
        );
    }
}
