//! The `--fit` phase of one load (llama-server era, `docs/log-formats.md` §5.4): which breakdown tables are
//! probes, which one is the plan, and the per-device estimate that plan gives.
//!
//! llama.cpp sizes a load by test allocations: it prints a breakdown table for the user's settings, then one
//! per probe, each followed by `id=K, n_layer=L, … mem=M MiB` lines, and finally one result line per device
//! (`- CUDA0 (…): L layers, U MiB used, F MiB free`). None of these tables is memory in use. The plan is the
//! probe whose per-device figures equal the result lines, or the first table when the fit said "no changes
//! needed". Every figure is whole MiB, truncated.
//!
//! The lines themselves are held once, as the fit's rounds ([`super::fit_rounds`]); this module reads them as
//! tables for the estimate.

use crate::model::kv_geometry::{kv_sizes, CacheGeometry};
use crate::model::ModelLayout;
use crate::model::{
    Device, DeviceEstimate, DeviceFree, Estimate, EstimateForm, FitDecision, FitSummary, Layers,
    Quantity, WeightsSemantics,
};
use crate::parse::event::{BreakdownLine, FitLine};

use super::fit_rounds::{ContextLine, DecisionLine, FitRounds, InitialLine, ProjectionLine};

/// Probe tables the estimate considers per load: the first (the user's settings) and the latest ones.
const MAX_TABLES: usize = 16;

/// One breakdown table printed while fitting, with the probe lines that followed it: a view of the rounds.
#[derive(Debug, Clone, Default)]
struct ProbeTable<'a> {
    rows: &'a [(BreakdownLine, u64)],
    /// `id=K, n_layer=L` per device of this probe, with the line.
    layers: Vec<(i64, i64, u64)>,
    /// The table began with its header. A table whose first rows are the first of a pasted window may have
    /// lost rows above them (a device, the host): it says what each of its rows says, but is no plan.
    headed: bool,
}

impl ProbeTable<'_> {
    /// The GPU rows in device order (`id=K` is the K-th).
    fn gpu_rows(&self) -> impl Iterator<Item = &(BreakdownLine, u64)> {
        self.rows.iter().filter(|(r, _)| r.device.is_gpu())
    }

    fn row(&self, device: &Device) -> Option<&BreakdownLine> {
        self.rows
            .iter()
            .map(|(r, _)| r)
            .find(|r| r.device == *device)
    }

    fn layers_of(&self, id: usize) -> Option<i64> {
        self.layers
            .iter()
            .rev()
            .find(|(k, _, _)| *k == id as i64)
            .map(|(_, l, _)| *l)
    }

    fn first_line(&self) -> u64 {
        self.rows.first().map(|(_, l)| *l).unwrap_or(0)
    }
}

/// The tables of the fit as the estimate reads them, and how many were left out of the middle.
struct Tables<'a> {
    kept: Vec<ProbeTable<'a>>,
    dropped: u32,
}

/// Everything the fit printed for one load, read for the estimate: which table is the plan. The lines are
/// held once, cut into rounds ([`FitRounds`]); this reads them back as tables and the fit's last word.
#[derive(Debug, Default, Clone)]
pub struct FitLedger {
    rounds: FitRounds,
}

/// What the builder knows beside the fit that the estimate needs.
#[derive(Debug, Clone, Default)]
pub struct FitContext {
    /// Repeating layers of the model (`n_layer`), when printed.
    pub blocks: Option<i64>,
    /// The user's `-ngl`, when given.
    pub gpu_layers: Option<i64>,
    /// llama-server's projector estimate and the device it is charged to (the host when not offloaded).
    pub projector: Option<(Quantity, Device, u64)>,
    /// The speculative draft's estimate.
    pub draft: Option<(Quantity, u64)>,
    /// The GPU the draft's own context allocated on, when its buffers were seen: the fit charged the draft
    /// there (it raised that device's target by the draft's estimate).
    pub draft_device: Option<Device>,
    /// Free memory per device from llama.cpp's inventory, for when no table printed it.
    pub inventory: Vec<DeviceFree>,
    /// The GPUs the load's buffers are on: the one device a projection without a device name measured, when
    /// the load allocated on a single GPU and nothing else names it.
    pub buffer_gpus: Vec<Device>,
    /// The model's layers and the load's cache settings, when the log gives both: how the KV cache grows
    /// with the context (a sliding-window cache does not).
    pub kv: Option<(ModelLayout, CacheGeometry)>,
}

/// A KV figure measured at context `from`, scaled to context `to`: by the model's cache geometry when known
/// (full-attention caches grow with the context, sliding-window and recurrent ones do not), else in
/// proportion (every cache full attention).
fn scale_kv(
    kv: Quantity,
    from: i64,
    to: i64,
    geometry: Option<&(ModelLayout, CacheGeometry)>,
) -> Quantity {
    let bytes_at = |context: i64| {
        geometry.and_then(|(layout, g)| {
            let g = CacheGeometry {
                context: u64::try_from(context).ok()?,
                ..*g
            };
            i64::try_from(kv_sizes(layout, &g).total()).ok()
        })
    };
    match (bytes_at(from), bytes_at(to)) {
        (Some(a), Some(b)) if a > 0 => kv.scale(b, a),
        _ => kv.scale(to, from),
    }
}

impl FitLedger {
    /// Every round of the fit as an attempt of the load (`load::fit_rounds`).
    pub fn attempts(&self) -> Vec<crate::model::Attempt> {
        self.rounds.attempts()
    }

    /// Record a fit line.
    pub fn push(&mut self, line: FitLine, number: u64) {
        self.rounds.push(line, number);
    }

    /// A new breakdown table (a probe, or the user's settings), begun by its header or not.
    pub fn start_table(&mut self, headed: bool) {
        self.rounds.start_table(headed);
    }

    /// Add a row of the breakdown table printed last (a table cut before its header starts one of its own).
    pub fn add_row(&mut self, row: BreakdownLine, number: u64) {
        self.rounds.add_row(row, number);
    }

    /// The last projection line (`projected to use …`).
    fn projection(&self) -> Option<ProjectionLine> {
        self.rounds.read_back().rev().find_map(|r| r.projection)
    }

    /// The last decision line (`no changes needed` / `need to reduce …`).
    fn decision(&self) -> Option<DecisionLine> {
        self.rounds.read_back().rev().find_map(|r| r.decision)
    }

    /// The last context line.
    fn context(&self) -> Option<ContextLine> {
        self.rounds.read_back().rev().find_map(|r| r.context)
    }

    /// The user's settings per device: the last line of each device, in the order they were last printed.
    fn initial(&self) -> Vec<&InitialLine> {
        let mut out: Vec<&InitialLine> = Vec::new();
        for i in self.rounds.read_back().flat_map(|r| &r.initial) {
            out.retain(|o| o.device != i.device);
            out.push(i);
        }
        out
    }

    /// The last probe the search accepted: `set ngl_per_device[K].n_layer=L` as (K, L).
    fn last_accepted(&self) -> Option<(i64, i64)> {
        self.rounds
            .read_back()
            .rev()
            .flat_map(|r| r.sets.iter().rev())
            .find(|s| !s.high)
            .map(|s| (s.id, s.layers))
    }

    /// The breakdown tables in the order printed, each with the probe lines printed after it and before the
    /// next table: the first and the latest [`MAX_TABLES`] − 1.
    fn tables(&self) -> Tables<'_> {
        let mut kept: Vec<ProbeTable> = Vec::new();
        let mut measured = false;
        for round in self.rounds.read_back() {
            for table in &round.tables {
                if kept.is_empty() && measured {
                    // The table of the user's settings comes before the fit's projection: this one is a probe,
                    // and the first table is outside the log (a paste that starts after it). It stays an empty
                    // place, so that no probe stands for the user's settings.
                    kept.push(ProbeTable::default());
                }
                kept.push(ProbeTable {
                    rows: &table.rows,
                    layers: Vec::new(),
                    headed: table.headed,
                });
            }
            // A round's probe lines follow its tables: they belong to the table printed last.
            if let Some(t) = kept.last_mut() {
                t.layers
                    .extend(round.probes.iter().map(|p| (p.id, p.layers, p.line)));
            }
            measured |= round.projection.is_some() || round.decision.is_some();
        }
        let mut dropped = self.rounds.dropped_tables;
        if kept.len() > MAX_TABLES {
            // Keep the first table (the user's settings): leave out the oldest probes after it.
            let excess = kept.len() - MAX_TABLES;
            kept.drain(1..1 + excess);
            dropped += excess as u32;
        }
        Tables { kept, dropped }
    }

    /// True once any fit line or probe table was seen.
    pub fn is_empty(&self) -> bool {
        !self.rounds.started
            && !self
                .rounds
                .rounds
                .iter()
                .any(|r| !r.tables.is_empty() || r.projection.is_some() || r.decision.is_some())
            && self.rounds.results.is_empty()
            && self.rounds.stopped.is_none()
    }

    /// The fit has started (its start line, or any of its lines) and not yet printed its end: every table and
    /// buffer line now is a test allocation.
    pub fn in_progress(&self) -> bool {
        let begun = self.rounds.started
            || self
                .rounds
                .read_back()
                .any(|r| r.projection.is_some() || r.decision.is_some());
        begun && !self.over()
    }

    /// The fit printed its end (done, stopped) or its result.
    pub fn over(&self) -> bool {
        self.rounds.done_line.is_some()
            || self.rounds.stopped.is_some()
            || !self.rounds.results.is_empty()
    }

    /// The rows of the first table (the user's settings), for what they say of the devices.
    pub fn first_rows(&self) -> impl Iterator<Item = &BreakdownLine> {
        let first = self.tables().kept.into_iter().next();
        first.map_or(&[][..], |t| t.rows).iter().map(|(r, _)| r)
    }

    /// The fit's start line, else its first projection line.
    pub fn start_line(&self) -> Option<u64> {
        self.rounds.start_line.or(self.projection().map(|p| p.line))
    }

    /// The first line of the fit's result (decision, result, stop or end), for the lifecycle.
    pub fn result_line(&self) -> Option<u64> {
        [
            self.decision().map(|d| d.line),
            self.rounds.results.iter().map(|r| r.line).min(),
            self.rounds.stopped.map(|s| s.2),
            self.rounds.done_line,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The first line of each table the fit holds (each a test allocation), and the plan's.
    pub fn table_lines(&self, cx: &FitContext) -> (Vec<u64>, Option<u64>) {
        let lines = self
            .tables()
            .kept
            .iter()
            .filter(|t| !t.rows.is_empty())
            .map(ProbeTable::first_line)
            .collect();
        let plan = self
            .estimate(cx)
            .and_then(|e| e.fit)
            .and_then(|f| f.plan_line);
        (lines, plan)
    }

    /// Every line the fit printed that the estimate rests on.
    fn lines(&self, plan: Option<&ProbeTable>) -> Vec<u64> {
        let mut lines: Vec<u64> = plan
            .map(|t| t.rows.iter().map(|(_, l)| *l).collect())
            .unwrap_or_default();
        lines.extend(self.projection().map(|p| p.line));
        lines.extend(self.decision().map(|d| d.line));
        lines.extend(self.initial().iter().map(|i| i.line));
        lines.extend(self.rounds.results.iter().map(|r| r.line));
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// The table whose GPU rows equal the result lines (self = used, and the probe's layers = the result's).
    fn table_matching_results<'t, 'a>(&self, tables: &'t Tables<'a>) -> Option<&'t ProbeTable<'a>> {
        tables.kept.iter().rev().filter(|t| t.headed).find(|t| {
            self.rounds.results.iter().all(|r| {
                let Some(row) = t.row(&r.device) else {
                    return false;
                };
                let position = t.gpu_rows().position(|(g, _)| g.device == r.device);
                let layers_agree = match (position.and_then(|p| t.layers_of(p)), r.layers) {
                    (Some(probe), Some(result)) => probe == result,
                    _ => true,
                };
                row.self_.bytes == r.used.bytes && layers_agree
            })
        })
    }

    /// The last probe the search accepted (`set ngl_per_device[K].n_layer=L`) when the log stops before the
    /// result.
    fn accepted_probe<'t, 'a>(&self, tables: &'t Tables<'a>) -> Option<&'t ProbeTable<'a>> {
        let (id, layers) = self.last_accepted()?;
        tables
            .kept
            .iter()
            .rev()
            .filter(|t| t.headed)
            .find(|t| t.layers_of(id as usize) == Some(layers))
    }

    fn summary(&self, plan: Option<&ProbeTable>, tables: &Tables, cx: &FitContext) -> FitSummary {
        let decision = self.decision();
        let context = self.context();
        let initial = self.initial();
        let projection = self.projection();
        let results = &self.rounds.results;
        let outcome = match (self.rounds.stopped, decision.map(|d| d.change)) {
            (Some((cause, ..)), _) if cause.is_abort() => FitDecision::Aborted,
            (Some(_), _) => FitDecision::Failed,
            (None, change) => match change {
                Some(false) => FitDecision::NoChange,
                Some(true) if !results.is_empty() => FitDecision::Changed,
                _ if context.is_some_and(|c| !c.by_user) => FitDecision::Changed,
                _ => FitDecision::Unknown,
            },
        };
        // `id=K, target=T` is free − margin, not the margin: only the decision and initial lines say it.
        let target = decision
            .and_then(|d| d.target)
            .or_else(|| initial.iter().find_map(|i| i.target));
        let first = tables.kept.first();
        let mut free: Vec<DeviceFree> = first
            .map(|t| {
                t.gpu_rows()
                    .filter_map(|(r, line)| {
                        Some(DeviceFree {
                            device: r.device.clone(),
                            name: r.name.clone(),
                            total: r.total,
                            free: r.free?,
                            line: *line,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        if free.is_empty() {
            // Without a table, the free memory the fit measured is in its own projection lines: per device
            // (`… T total, U used, F free vs. target of M`), or the one device's `vs. F MiB of free device
            // memory`. Readings printed later (`using device … MiB free`) are not what the fit saw.
            free = initial
                .iter()
                .map(|i| DeviceFree {
                    device: i.device.clone(),
                    name: i.name.clone(),
                    total: i.total,
                    free: i.free,
                    line: i.line,
                })
                .collect();
        }
        if free.is_empty() {
            if let Some(ProjectionLine {
                free: projected_free,
                host: false,
                line,
                ..
            }) = projection
            {
                let device = results
                    .first()
                    .map(|r| r.device.clone())
                    .or_else(|| {
                        cx.inventory
                            .iter()
                            .find(|d| d.device.is_gpu())
                            .map(|d| d.device.clone())
                    })
                    .or_else(|| match cx.buffer_gpus.as_slice() {
                        [only] => Some(only.clone()),
                        _ => None,
                    })
                    // An excerpt of the fit's lines alone: the line is the one-device form, so its free
                    // memory is a GPU's, one the log does not name.
                    .or_else(|| {
                        cx.buffer_gpus
                            .is_empty()
                            .then(|| crate::model::Device::gpu(crate::model::Backend::Unknown, 0))
                    });
                if let Some(device) = device {
                    let name = cx
                        .inventory
                        .iter()
                        .find(|d| d.device == device)
                        .and_then(|d| d.name.clone());
                    free.push(DeviceFree {
                        device,
                        name,
                        total: None,
                        free: projected_free,
                        line,
                    });
                }
            }
        }
        if free.is_empty() {
            free = cx
                .inventory
                .iter()
                .filter(|d| d.device.is_gpu())
                .cloned()
                .collect();
        }
        let mut lines = self.lines(plan);
        lines.extend(context.map(|c| c.line));
        lines.extend(self.rounds.done_line);
        lines.extend(self.rounds.stopped.map(|s| s.2));
        lines.extend(self.rounds.targets.iter().map(|t| t.2));
        lines.sort_unstable();
        lines.dedup();
        FitSummary {
            outcome,
            target,
            reduce_by: decision.filter(|d| d.change).and_then(|d| d.amount),
            context: context.map(|c| c.to),
            context_by_user: context.map(|c| c.by_user),
            context_scaled_from: self.scaled_context(plan, tables).map(|(from, _)| from),
            // A header whose rows were cut off is not a table.
            probes: tables.kept.iter().filter(|t| !t.rows.is_empty()).count() as u32
                + tables.dropped,
            plan_line: plan.map(ProbeTable::first_line),
            seconds: self.rounds.seconds,
            free,
            lines,
            stopped: self
                .rounds
                .stopped
                .map(|(cause, value, line)| crate::model::FitStop { cause, value, line }),
            projected: projection.filter(|p| !p.host).map(|p| p.used),
            host_total: projection.filter(|p| p.host).map(|p| p.free),
            overflowing: results
                .iter()
                .filter_map(|r| r.overflowing)
                .reduce(|a, b| a.saturating_add(b)),
        }
    }

    /// The one GPU of the load, when exactly one is known: llama.cpp's inventory lists a single GPU, or (no
    /// inventory printed) the load's buffers are on a single GPU.
    fn sole_gpu(&self, cx: &FitContext) -> Option<Device> {
        let listed: Vec<&Device> = cx
            .inventory
            .iter()
            .map(|d| &d.device)
            .filter(|d| d.is_gpu())
            .collect();
        match (listed.as_slice(), cx.buffer_gpus.as_slice()) {
            ([only], _) => Some((*only).clone()),
            ([], [only]) => Some(only.clone()),
            _ => None,
        }
    }

    /// The context the plan's table was measured at and the one the fit reduced it to, when the plan is the
    /// first table (measured with the user's settings) and the fit then reduced the context
    /// (`context size reduced from A to B`): the table's KV figures are for A, the load allocates for B.
    fn scaled_context(&self, plan: Option<&ProbeTable>, tables: &Tables) -> Option<(i64, i64)> {
        let ContextLine {
            to, by_user, from, ..
        } = self.context()?;
        let from = from?;
        let first = tables.kept.first()?;
        let is_first = plan.is_some_and(|p| std::ptr::eq(p, first));
        (is_first && !by_user && from > to && to > 0).then_some((from, to))
    }

    /// The estimate the fit gives, or `None` when it printed nothing to estimate from.
    pub fn estimate(&self, cx: &FitContext) -> Option<Estimate> {
        if self.is_empty() {
            return None;
        }
        let tables = self.tables();
        let results = &self.rounds.results;
        let projection = self.projection();
        let (form, plan) = if !results.is_empty() {
            match self.table_matching_results(&tables) {
                Some(t) => (EstimateForm::FitPlan, Some(t)),
                None => (EstimateForm::FitResult, None),
            }
        } else if let Some(t) = tables
            .kept
            .first()
            .filter(|t| t.headed && self.decision().is_some_and(|d| !d.change))
        {
            (EstimateForm::FitPlan, Some(t))
        } else if let Some(t) = self.accepted_probe(&tables) {
            (EstimateForm::FitProbe, Some(t))
        } else if let Some(t) = tables.kept.first().filter(|t| t.headed) {
            (EstimateForm::BreakdownProjection, Some(t))
        } else if projection.is_some() || self.rounds.stopped.is_some() {
            // A stopped fit with nothing else printed still says why it stopped.
            (EstimateForm::FitProjection, None)
        } else {
            return None;
        };
        let mut per_device: Vec<DeviceEstimate> = Vec::new();
        let mut host = DeviceEstimate::new(Device::Host);
        let mut has_host = false;
        let add = |a: Option<Quantity>, b: Quantity| Some(a.map_or(b, |a| a.plus(b)));
        if let Some(t) = plan {
            for (position, (r, _)) in t.gpu_rows().enumerate() {
                let layers = results
                    .iter()
                    .find(|x| x.device == r.device)
                    .and_then(|x| x.layers)
                    .or_else(|| t.layers_of(position));
                per_device.push(DeviceEstimate {
                    device: r.device.clone(),
                    weights: Some(r.model),
                    kv: Some(r.context),
                    graph: Some(r.compute),
                    total: Some(r.self_),
                    layers,
                });
            }
            for (r, _) in t.rows.iter().filter(|(r, _)| r.device.is_host()) {
                has_host = true;
                host.weights = add(host.weights, r.model);
                host.kv = add(host.kv, r.context);
                host.graph = add(host.graph, r.compute);
                host.total = add(host.total, r.self_);
            }
            if let Some((from, to)) = self.scaled_context(plan, &tables) {
                // The table was measured at the user's context and the fit then reduced it: its context
                // column (the KV cache) is scaled to the context the load got. The device's total takes the
                // fit's own saving when one device holds the context (the compute buffer shrinks too), else
                // moves with the KV cache alone.
                let less = self.context().and_then(|c| c.less);
                let one_holds = per_device
                    .iter()
                    .chain(std::iter::once(&host))
                    .filter(|d| d.kv.is_some_and(|kv| kv.bytes > 0))
                    .count()
                    == 1;
                for d in per_device.iter_mut().chain(std::iter::once(&mut host)) {
                    let Some(kv) = d.kv.filter(|kv| kv.bytes > 0) else {
                        continue;
                    };
                    let scaled = scale_kv(kv, from, to, cx.kv.as_ref());
                    d.kv = Some(scaled);
                    match (less, one_holds, d.total) {
                        (Some(less), true, Some(total)) => {
                            let after = total.minus(less);
                            d.total = Some(after);
                            d.graph = d.weights.map(|w| after.minus(w).minus(scaled));
                        }
                        (_, _, total) => d.total = total.map(|t| t.minus(kv).plus(scaled)),
                    }
                }
            }
        } else {
            for r in results {
                per_device.push(DeviceEstimate {
                    total: Some(r.used),
                    layers: r.layers,
                    ..DeviceEstimate::new(r.device.clone())
                });
            }
            // `projected to use N MiB of device memory` names no device: it is the sum over the GPUs the fit
            // measured, so it is one GPU's estimate only when the load has exactly one GPU.
            if let (
                true,
                Some(ProjectionLine {
                    used, host: false, ..
                }),
                Some(gpu),
            ) = (results.is_empty(), projection, self.sole_gpu(cx))
            {
                per_device.push(DeviceEstimate {
                    total: Some(used),
                    ..DeviceEstimate::new(gpu)
                });
            }
        }
        // The projector's estimate is charged to the device clip runs on; where that is not known (or is no row
        // of the table) it still counts in the total, on no device's.
        let mut projector_placed = false;
        if let Some((size, device, _)) = &cx.projector {
            match per_device.iter_mut().find(|d| &d.device == device) {
                Some(d) => {
                    d.total = add(d.total, *size);
                    projector_placed = true;
                }
                None if device.is_host() => {
                    has_host = true;
                    host.total = add(host.total, *size);
                    projector_placed = true;
                }
                None => {}
            }
        }
        let mut draft_placed = false;
        if let (Some((size, _)), Some(device)) = (cx.draft, &cx.draft_device) {
            if let Some(d) = per_device.iter_mut().find(|d| &d.device == device) {
                d.total = add(d.total, size);
                draft_placed = true;
            }
        }
        if has_host {
            per_device.push(host);
        }
        let gpu_total = Quantity::sum(
            per_device
                .iter()
                .filter(|d| d.device.is_gpu())
                .filter_map(|d| d.total),
        );
        let all_total = Quantity::sum(per_device.iter().filter_map(|d| d.total))
            .map(|t| match cx.draft {
                Some((d, _)) if !draft_placed => t.plus(d),
                _ => t,
            })
            .map(|t| match &cx.projector {
                Some((p, _, _)) if !projector_placed => t.plus(*p),
                _ => t,
            });
        let split: Vec<i64> = per_device
            .iter()
            .filter(|d| d.device.is_gpu())
            .map(|d| d.layers)
            .collect::<Option<Vec<i64>>>()
            .unwrap_or_default();
        let model = cx.blocks.map(|b| b + 1);
        let gpu_rows = per_device.iter().any(|d| d.device.is_gpu());
        let offload = if plan.is_some() && !gpu_rows {
            // A host-only plan (no GPU, or none usable): nothing offloaded.
            Some(0)
        } else if !split.is_empty() {
            Some(split.iter().sum())
        } else if form == EstimateForm::FitPlan {
            // No change needed: the user's settings are the plan, every layer unless `-ngl` says fewer.
            match (model, cx.gpu_layers) {
                (Some(m), Some(n)) if n >= 0 => Some(n.min(m)),
                (m, _) => m,
            }
        } else {
            None
        };
        let mut lines = self.lines(plan);
        lines.extend(cx.projector.as_ref().map(|p| p.2));
        lines.extend(cx.draft.map(|d| d.1));
        lines.sort_unstable();
        lines.dedup();
        let sum = |f: fn(&DeviceEstimate) -> Option<Quantity>| {
            Quantity::sum(per_device.iter().filter_map(f))
        };
        let (projection_used, projection_free) = match projection {
            Some(ProjectionLine { used, free, .. }) if plan.is_none() && results.is_empty() => {
                (Some(used), vec![free])
            }
            _ => (None, Vec::new()),
        };
        Some(Estimate {
            layers: Layers {
                requested: cx.gpu_layers,
                model,
                offload,
                split: if split.len() > 1 { split } else { Vec::new() },
            },
            available: projection_free,
            required_full: all_total.or(projection_used),
            required_partial: gpu_total
                .or(projection_used)
                .or((plan.is_some() && !gpu_rows).then_some(Quantity::exact(0))),
            kv: sum(|d| d.kv),
            weights_total: sum(|d| d.weights),
            graph_full: Quantity::sum(
                per_device
                    .iter()
                    .filter(|d| d.device.is_gpu())
                    .filter_map(|d| d.graph),
            ),
            projector_total: cx.projector.as_ref().map(|p| p.0),
            projector_device: cx.projector.as_ref().map(|p| p.1.clone()),
            draft_total: cx.draft.map(|d| d.0),
            draft_line: cx.draft.map(|d| d.1),
            fit: Some(self.summary(plan, &tables, cx)),
            per_device,
            form,
            weights_semantics: WeightsSemantics::PerDevice,
            lines,
            ..Estimate::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn mib(v: i64) -> Quantity {
        Quantity::from_truncated(v, MIB).unwrap()
    }

    fn row(
        device: &str,
        total: i64,
        free: i64,
        model: i64,
        context: i64,
        compute: i64,
    ) -> BreakdownLine {
        BreakdownLine {
            device: Device::named(device),
            name: None,
            total: Some(mib(total)),
            free: Some(mib(free)),
            self_: mib(model + context + compute),
            model: mib(model),
            context: mib(context),
            compute: mib(compute),
            unaccounted: None,
            unaccounted_suspect: true,
        }
    }

    #[test]
    fn the_probe_matching_the_result_is_the_plan() {
        // corpus 043: the first table (42 dense-only layers, 5658 MiB) is the result; the conversion's
        // second table (24770 MiB) is a rejected probe.
        let mut f = FitLedger::default();
        f.push(FitLine::Start, 1);
        f.start_table(true);
        f.add_row(row("CUDA0", 7807, 7627, 2542, 2622, 494), 2);
        f.push(
            FitLine::Probe {
                id: 0,
                layers: 42,
                partial: Some(41),
                mem: mib(5658),
            },
            5,
        );
        f.push(
            FitLine::Result {
                device: Device::named("CUDA0"),
                name: None,
                layers: Some(42),
                used: mib(5658),
                free: Some(mib(1968)),
                overflowing: None,
            },
            7,
        );
        f.start_table(true);
        f.add_row(row("CUDA0", 7807, 7627, 21654, 2622, 494), 10);
        let e = f.estimate(&FitContext::default()).unwrap();
        assert_eq!(e.form, EstimateForm::FitPlan);
        assert_eq!(e.per_device[0].weights.unwrap().bytes, 2542 * MIB);
        assert_eq!(e.per_device[0].layers, Some(42));
        assert_eq!(e.fit.as_ref().unwrap().plan_line, Some(2));
        assert_eq!(e.fit.as_ref().unwrap().probes, 2);
    }

    #[test]
    fn no_change_needed_makes_the_first_table_the_plan() {
        let mut f = FitLedger::default();
        f.push(FitLine::Start, 1);
        f.start_table(true);
        f.add_row(row("CUDA0", 24575, 23347, 11750, 816, 612), 3);
        f.add_row(row("CUDA1", 8187, 7065, 4352, 289, 1071), 4);
        f.push(
            FitLine::Decision {
                change: false,
                target: None,
                amount: None,
            },
            8,
        );
        let cx = FitContext {
            blocks: Some(60),
            ..FitContext::default()
        };
        let e = f.estimate(&cx).unwrap();
        assert_eq!(e.form, EstimateForm::FitPlan);
        assert_eq!((e.layers.model, e.layers.offload), (Some(61), Some(61)));
        assert_eq!(e.fit.as_ref().unwrap().outcome, FitDecision::NoChange);
        assert_eq!(e.fit.as_ref().unwrap().free.len(), 2);
        let vram = e.required_partial.unwrap();
        assert_eq!(vram.low, (11750 + 816 + 612 + 4352 + 289 + 1071) * MIB);
    }

    #[test]
    fn lines_of_rounds_past_the_bound_still_make_the_estimate() {
        // A fit of 101 rounds (only a fuzzed log prints that many): the attempts are the first and the latest
        // 63 rounds, but the context cut printed in round 2 and the user's table still make the estimate.
        let mut f = FitLedger::default();
        f.push(FitLine::Start, 1);
        f.start_table(true);
        f.add_row(row("CUDA0", 24575, 23347, 11750, 816, 612), 2);
        let projection = FitLine::Projection {
            used: mib(13178),
            free: mib(23347),
            host: false,
        };
        f.push(projection, 3);
        let decision = FitLine::Decision {
            change: true,
            target: None,
            amount: Some(mib(77)),
        };
        f.push(decision, 4);
        for k in 0..100 {
            let line = 5 + 2 * k as u64;
            let probe = FitLine::Probe {
                id: 0,
                layers: k,
                partial: None,
                mem: mib(100 + k),
            };
            f.push(probe, line);
            if k == 0 {
                let cut = FitLine::Context {
                    from: Some(8192),
                    less: None,
                    to: 4096,
                    by_user: false,
                };
                f.push(cut, line + 1);
            }
        }
        let rounds: Vec<u32> = f
            .attempts()
            .iter()
            .map(|a| match a {
                crate::model::Attempt::FitProbe(p) => p.round,
                crate::model::Attempt::Eviction(e) => panic!("not a fit round: {e:?}"),
            })
            .collect();
        assert_eq!(rounds.len(), 64);
        assert_eq!((rounds[0], rounds[1], rounds[63]), (1, 39, 101));
        let e = f.estimate(&FitContext::default()).unwrap();
        assert_eq!(e.form, EstimateForm::BreakdownProjection);
        assert_eq!(e.per_device[0].weights.unwrap().bytes, 11750 * MIB);
        let fit = e.fit.unwrap();
        assert_eq!(
            (fit.context, fit.context_by_user),
            (Some(4096), Some(false))
        );
        assert_eq!(fit.outcome, FitDecision::Changed);
        assert_eq!(fit.context_scaled_from, Some(8192));
    }

    #[test]
    fn an_accepted_probe_stands_in_when_the_log_stops_before_the_result() {
        // corpus 042: the 16-layer probe on CUDA1 was accepted, the next probe's outcome is not in the log.
        let mut f = FitLedger::default();
        f.start_table(true);
        f.add_row(row("CUDA0", 32606, 30991, 0, 0, 4205), 2);
        f.add_row(row("CUDA1", 24575, 23332, 1177, 15360, 1292), 3);
        f.push(
            FitLine::Probe {
                id: 0,
                layers: 0,
                partial: Some(0),
                mem: mib(4205),
            },
            6,
        );
        f.push(
            FitLine::Probe {
                id: 1,
                layers: 16,
                partial: Some(0),
                mem: mib(17829),
            },
            7,
        );
        f.push(
            FitLine::Set {
                id: 1,
                layers: 16,
                high: false,
            },
            8,
        );
        f.add_row(row("CUDA0", 32606, 30991, 0, 0, 4205), 10);
        f.add_row(row("CUDA1", 24575, 23332, 1346, 18432, 1292), 11);
        let e = f.estimate(&FitContext::default()).unwrap();
        assert_eq!(e.form, EstimateForm::FitProbe);
        assert_eq!(e.layers.split, vec![0, 16]);
        assert_eq!(e.per_device[1].weights.unwrap().bytes, 1177 * MIB);
    }
}
