//! The phase of each breakdown table and run of buffer lines in one llama.cpp load (`docs/log-formats.md`
//! §5.7): a test allocation (the `--fit` dry run) or memory in use (the real load, the table at exit).
//!
//! Each is judged by its position *and* its own signature, so an excerpt without the fit's lines around it is
//! still read right:
//! - a table printed while the fit is under way is a dry run, whatever its figures (a probe with few layers
//!   can add up);
//! - a table whose `unaccounted` is negative (free + self exceeds the total) is a no-alloc dry run;
//! - a table whose `unaccounted` is zero or more is the table llama.cpp prints at exit (an actual) when the
//!   load allocated or the fit is over, or when nothing of a fit surrounds it (a table pasted alone); if the
//!   fit's lines follow it after all, it was a dry run and moves back to the fit;
//! - buffer lines the fit's lines (or a dry-run table) follow before any real load, or with a GPU buffer of
//!   0.00 MiB while the same component is sized elsewhere (`KV buffer size = 0.00 MiB` beside a 2176 MiB KV
//!   cache), are a dry run: kept apart, never counted as memory in use.

use crate::model::{
    BufferKind, DryRunBuffers, DryRunEvidence, Lifecycle, LifecyclePhase, TableEvidence,
    TablePhase, TableRecord,
};
use crate::parse::event::BreakdownLine;

use super::builder::LoadBuilder;
use super::fit::FitContext;

/// The table being read (its rows follow each other: another record closes it, `Assembler::push`).
#[derive(Debug, Clone, Copy)]
pub struct OpenTable {
    pub exit: bool,
}

/// Whether a table is the exit table (`true`) or a dry run, and why: from the fit's state, whether the load
/// allocated, and the first row's `unaccounted`.
pub fn judge_table(
    row: &BreakdownLine,
    fit_in_progress: bool,
    fit_seen: bool,
    fit_over: bool,
    allocated: bool,
) -> (bool, TableEvidence) {
    if fit_in_progress {
        return (false, TableEvidence::InsideFit);
    }
    if row.unaccounted_suspect {
        return (false, TableEvidence::NegativeUnaccounted);
    }
    let adds_up = row.unaccounted.is_some_and(|u| u >= 0);
    if allocated || fit_over {
        return (true, TableEvidence::AddsUpAfterLoad);
    }
    if adds_up && !fit_seen {
        return (true, TableEvidence::AddsUpAlone);
    }
    (false, TableEvidence::InsideFit)
}

impl LoadBuilder {
    /// A memory breakdown table's header: the next row starts a new table.
    pub fn breakdown_header(&mut self) {
        self.header_pending = true;
    }

    /// Add one row of a memory breakdown table, deciding the table's phase at its first row.
    pub fn add_breakdown(&mut self, row: BreakdownLine, line: u64) {
        let continues = self
            .open_table
            .filter(|t| !self.header_pending && !self.table_has(t.exit, &row));
        let exit = match continues {
            Some(t) => t.exit,
            None => {
                let (exit, evidence) = judge_table(
                    &row,
                    self.fit.in_progress(),
                    !self.fit.is_empty(),
                    self.fit.over(),
                    self.allocated(),
                );
                self.tables.push(TableRecord {
                    line,
                    phase: if exit {
                        TablePhase::Exit
                    } else {
                        TablePhase::DryRun
                    },
                    evidence,
                });
                if exit {
                    // Printed again (another exit): the last table is the one that counts.
                    self.exit_table.clear();
                    self.exit_table_headed = self.header_pending;
                } else {
                    self.fit.start_table(self.header_pending);
                    self.demote_dry_run(DryRunEvidence::FitFollows);
                }
                exit
            }
        };
        self.header_pending = false;
        self.open_table = Some(OpenTable { exit });
        if exit {
            self.exit_table.push((row, line));
        } else {
            self.fit.add_row(row, line);
        }
    }

    /// The open table already has a row for this device (a new table printed without its header).
    fn table_has(&self, exit: bool, row: &BreakdownLine) -> bool {
        exit && self
            .exit_table
            .iter()
            .any(|(r, _)| r.device == row.device && r.name == row.name)
    }

    /// A fit line arrived: buffer lines before it were the fit's dry run, and a table pasted alone that the
    /// fit's lines follow was one of its tables.
    pub fn fit_line_arrived(&mut self) {
        self.open_table = None;
        if self.fit.over() {
            return;
        }
        self.demote_dry_run(DryRunEvidence::FitFollows);
        let alone = self
            .tables
            .iter()
            .rposition(|t| t.phase == TablePhase::Exit && t.evidence == TableEvidence::AddsUpAlone);
        if let (Some(i), false) = (alone, self.allocated()) {
            let rows = std::mem::take(&mut self.exit_table);
            self.tables[i].phase = TablePhase::DryRun;
            self.tables[i].evidence = TableEvidence::InsideFit;
            self.fit.start_table(self.exit_table_headed);
            for (row, line) in rows {
                self.fit.add_row(row, line);
            }
        }
    }

    /// A GPU buffer of 0.00 MiB among the buffers: a no-alloc dry run prints the KV buffer that way.
    fn zero_size_gpu_buffer(&self) -> bool {
        self.ledger.buffers().any(|b| {
            b.device.is_gpu()
                && b.size.bytes == 0
                && matches!(b.kind, BufferKind::Kv | BufferKind::Model | BufferKind::Rs)
        })
    }

    /// Take the buffers read so far as a test allocation when nothing says they are real: the fit has not
    /// ended, and the real load's `offloaded L/M layers` was not printed (or a GPU buffer is 0.00 MiB).
    pub(super) fn demote_dry_run(&mut self, evidence: DryRunEvidence) {
        if self.ledger.is_empty() || self.fit.over() {
            return;
        }
        let zero = self.zero_size_gpu_buffer();
        if self.seen_offloaded && !zero {
            return;
        }
        let ledger = std::mem::take(&mut self.ledger);
        let dry = self.dry_run.get_or_insert_with(|| DryRunBuffers {
            lines: Vec::new(),
            evidence: Vec::new(),
        });
        dry.lines
            .extend(ledger.into_buffers().into_iter().map(|b| b.line));
        dry.lines.sort_unstable();
        dry.lines.dedup();
        for e in [
            zero.then_some(DryRunEvidence::ZeroSizeBuffer),
            Some(evidence),
        ]
        .into_iter()
        .flatten()
        {
            if !dry.evidence.contains(&e) {
                dry.evidence.push(e);
            }
        }
        self.actual_sources.retain(|s| *s != "llama.cpp");
    }

    /// At the end of the load: buffer lines with no fit around them are still a dry run when a GPU buffer is
    /// 0.00 MiB while a KV or recurrent-state size line gives the cache a size, or when a GPU's weights or KV
    /// buffer is 0.00 MiB at all: a buffer holding tensors is never empty when allocated, and only the fit's
    /// no-alloc dry run prints one so (in the corpus and the peer vectors only its probes do: 709's
    /// `MTL0 KV buffer size = 0.00 MiB`, peer vector 303's `CUDA1 model buffer size = 0.00 MiB`). A window that
    /// holds such a round without the fit's lines or the next round's reprint must not take it for the load.
    pub(super) fn demote_lone_dry_run(&mut self) {
        let sized = self.kv_caches.iter().any(|(k, _)| k.size.bytes > 0);
        let empty_tensors = self.ledger.buffers().any(|b| {
            b.device.is_gpu()
                && b.size.bytes == 0
                && matches!(b.kind, BufferKind::Kv | BufferKind::Model)
        });
        if self.fit.is_empty()
            && (sized || empty_tensors)
            && !self.seen_offloaded
            && self.zero_size_gpu_buffer()
        {
            self.demote_dry_run(DryRunEvidence::ZeroSizeBuffer);
        }
    }

    /// GPUs that report the same total and free memory in one table: one memory pool (virtual devices of one
    /// GPU, as Metal's `GGML_METAL_DEVICES` makes, or unified memory), whose free memory must not be added up.
    pub(super) fn shared_pools(&self) -> Vec<Vec<crate::model::Device>> {
        let rows: Vec<&BreakdownLine> = if self.exit_table.is_empty() {
            self.fit.first_rows().collect()
        } else {
            self.exit_table.iter().map(|(r, _)| r).collect()
        };
        let mut pools: Vec<(i64, i64, Vec<crate::model::Device>)> = Vec::new();
        for r in rows.iter().filter(|r| r.device.is_gpu()) {
            let (Some(total), Some(free)) = (r.total, r.free) else {
                continue;
            };
            match pools
                .iter_mut()
                .find(|(t, f, _)| *t == total.low && *f == free.low)
            {
                Some((_, _, devices)) => devices.push(r.device.clone()),
                None => pools.push((total.low, free.low, vec![r.device.clone()])),
            }
        }
        // Before the load (the fit's first table), distinct cards of one model read alike: there only devices
        // that share memory by design (Metal's virtual devices) or one card seen by two backends are one pool.
        // In the exit table every device holds its own buffers, so the same free memory is one pool's.
        let before_load = self.exit_table.is_empty();
        pools
            .into_iter()
            .filter(|(_, _, d)| d.len() > 1)
            .map(|(_, _, d)| d)
            .filter(|d| !before_load || one_memory_by_design(d))
            .collect()
    }

    /// The lifecycle of this load: the first line of each phase the log shows, the phase of every table.
    pub(super) fn lifecycle(&self, cx: &FitContext) -> Lifecycle {
        let mut tables = self.tables.clone();
        let (_, plan) = self.fit.table_lines(cx);
        for t in tables.iter_mut() {
            if Some(t.line) == plan {
                t.phase = TablePhase::Plan;
            }
        }
        let discovery = self
            .devices
            .iter()
            .map(|(_, l)| *l)
            .chain(self.runner_devices.iter().map(|(_, l)| *l))
            .min();
        let dry_run = tables
            .iter()
            .filter(|t| t.phase != TablePhase::Exit)
            .map(|t| t.line)
            .chain(self.dry_run.iter().flat_map(|d| d.lines.iter().copied()))
            .min();
        let real = self
            .offloaded_line
            .into_iter()
            .chain(self.ledger.buffers().map(|b| b.line))
            .min();
        let exit = tables
            .iter()
            .filter(|t| t.phase == TablePhase::Exit)
            .map(|t| t.line)
            .max();
        let mut phases: Vec<(LifecyclePhase, u64)> = [
            (LifecyclePhase::DeviceDiscovery, discovery),
            (LifecyclePhase::FitStart, self.fit.start_line()),
            (LifecyclePhase::DryRun, dry_run),
            (LifecyclePhase::FitResult, self.fit.result_line()),
            (LifecyclePhase::RealLoad, real),
            (LifecyclePhase::Serving, self.serving_line),
            (LifecyclePhase::Exit, exit),
        ]
        .into_iter()
        .filter_map(|(p, l)| l.map(|l| (p, l)))
        .collect();
        phases.sort_by_key(|(p, l)| (*l, *p));
        Lifecycle {
            phases,
            tables,
            dry_run_buffers: self.dry_run.clone(),
        }
    }
}

/// Devices that read alike before a load and are one memory whatever the figures: Metal's (virtual devices of one
/// GPU, `GGML_METAL_DEVICES`), or one card named by two backends (`CUDA0` and `Vulkan0`).
fn one_memory_by_design(devices: &[crate::model::Device]) -> bool {
    use crate::model::{Backend, Device};
    let metal = devices.iter().all(Device::is_metal);
    let backends: Vec<Option<&Backend>> = devices
        .iter()
        .map(|d| match d {
            Device::Gpu { backend, .. } => Some(backend),
            Device::Metal | Device::Host | Device::Other(_) | Device::Unknown => None,
        })
        .collect();
    let several_backends = backends.iter().any(|b| b != &backends[0]);
    metal || several_backends
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{DryRunEvidence, FitDecision, TableEvidence, TablePhase};

    #[test]
    fn a_round_with_an_empty_gpu_weights_or_kv_buffer_is_a_dry_run_even_alone() {
        // Peer vector 303 (`tests/data/peer-vectors/303-…`), lines 3–11: a window of the fit's no-alloc round
        // without the fit's lines and without the real round that follows it.
        let loads = loads_of(&[
            "load_tensors:        CUDA1 model buffer size =     0.00 MiB",
            "llama_context:  CUDA_Host  output buffer size =     0.95 MiB",
            "llama_kv_cache:      CUDA0 KV buffer size =     0.00 MiB",
            "llama_kv_cache:      CUDA1 KV buffer size =     0.00 MiB",
            "llama_memory_recurrent:      CUDA0 RS buffer size =    90.40 MiB",
            "llama_memory_recurrent:      CUDA1 RS buffer size =    59.23 MiB",
            "sched_reserve:      CUDA0 compute buffer size =  9952.25 MiB",
            "sched_reserve:      CUDA1 compute buffer size =  6436.28 MiB",
            "sched_reserve:  CUDA_Host compute buffer size =  8272.31 MiB",
        ]);
        assert_eq!(loads.len(), 1, "{loads:#?}");
        let l = &loads[0];
        assert!(l.actual.buffers.is_empty(), "{:#?}", l.actual.buffers);
        let dry = l.lifecycle.dry_run_buffers.as_ref().expect("a dry run");
        assert!(dry.evidence.contains(&DryRunEvidence::ZeroSizeBuffer));
        assert_eq!(dry.lines.len(), 9);
    }

    #[test]
    fn a_zero_compute_reservation_in_an_unfinished_load_is_not_its_figure() {
        // `sample-logs/004-…` lines 28–33: the window stops after the Ollama engine's first reservation, whose
        // CPU graph (0 B) line 35 reprints as 10.5 MiB.
        let lines = [
            r#"time=2025-07-24T18:29:34.425+09:00 level=INFO source=ggml.go:365 msg="offloading output layer to GPU""#,
            r#"time=2025-07-24T18:29:34.425+09:00 level=INFO source=ggml.go:375 msg="offloaded 63/63 layers to GPU""#,
            r#"time=2025-07-24T18:29:34.425+09:00 level=INFO source=ggml.go:377 msg="model weights" buffer=ROCm0 size="16.2 GiB""#,
            r#"time=2025-07-24T18:29:34.425+09:00 level=INFO source=ggml.go:377 msg="model weights" buffer=CPU size="1.1 GiB""#,
            r#"time=2025-07-24T18:29:34.657+09:00 level=INFO source=ggml.go:666 msg="compute graph" backend=ROCm0 buffer_type=ROCm0 size="1.1 GiB""#,
            r#"time=2025-07-24T18:29:34.657+09:00 level=INFO source=ggml.go:666 msg="compute graph" backend=CPU buffer_type=CPU size="0 B""#,
        ];
        let loads = loads_of(&lines);
        let compute: Vec<_> = loads[0]
            .actual
            .buffers
            .iter()
            .filter(|b| b.kind == crate::model::BufferKind::Compute)
            .map(|b| (b.device.to_string(), b.size.bytes))
            .collect();
        assert_eq!(compute, [("ROCm0".to_string(), 1181116006)]);
        // The GPU's graph and both weights are kept: only the empty reservation is left out.
        assert_eq!(loads[0].actual.buffers.len(), 3);
    }

    #[test]
    fn a_lone_exit_table_is_an_actual() {
        // sample-logs/717-…: the table llama-completion prints at exit, pasted alone.
        let loads = loads_of(&[
            "llama_memory_breakdown_print: | memory breakdown [MiB]    |  total     free    self   model   context   compute    unaccounted |",
            "llama_memory_breakdown_print: |   - MTL0 (Apple M2 Ultra) | 165150 = 158091 + (1916 =   780 +    1024 +     112) +        5143 |",
            "llama_memory_breakdown_print: |   - Host                  |                     364 =   296 +       0 +      68                |",
        ]);
        let load = &loads[0];
        assert_eq!(load.actual.breakdown.len(), 2);
        assert!(load.estimate.is_none());
        let t = &load.lifecycle.tables[0];
        assert_eq!(
            (t.line, t.phase, t.evidence),
            (2, TablePhase::Exit, TableEvidence::AddsUpAlone)
        );
    }

    #[test]
    fn a_lone_dry_run_table_is_a_test_allocation() {
        // sample-logs/709-…: the fit's dry run, negative unaccounted, no fit line around it.
        let loads = loads_of(&[
            "common_memory_breakdown_print: | memory breakdown [MiB]  | total    free    self   model   context   compute    unaccounted |",
            "common_memory_breakdown_print: |   - MTL0 (Apple M4 Pro) | 16384 = 16031 + (8323 =  5294 +    2527 +     501) +       -7971 |",
            "common_memory_breakdown_print: |   - Host                |                  1090 =   545 +       0 +     544                |",
        ]);
        let load = &loads[0];
        assert!(load.actual.breakdown.is_empty());
        // A test allocation, and the only estimate there is: the plan.
        let t = &load.lifecycle.tables[0];
        assert_eq!(t.phase, TablePhase::Plan);
        assert_eq!(t.evidence, TableEvidence::NegativeUnaccounted);
        let e = load.estimate.as_ref().unwrap();
        assert_eq!(
            e.per_device[0].weights.unwrap().bytes,
            5294 * crate::model::MIB
        );
    }

    #[test]
    fn buffers_with_a_zero_kv_buffer_before_the_fit_are_its_dry_run() {
        // sample-logs/709-…: the KV buffer is 0.00 MiB, the fit's projection follows.
        let loads = loads_of(&[
            "llama_kv_cache:       MTL0 KV buffer size =     0.00 MiB",
            "llama_kv_cache: size = 2176.00 MiB (131072 cells,   8 layers,  1/1 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB",
            "sched_reserve:       MTL0 compute buffer size =   501.00 MiB",
            "common_params_fit_impl: projected to use 8323 MiB of device memory vs. 16031 MiB of free device memory",
            "common_params_fit_impl: will leave 7708 >= 1024 MiB of free device memory, no changes needed",
        ]);
        let load = &loads[0];
        assert!(load.actual.buffers.is_empty());
        let dry = load.lifecycle.dry_run_buffers.as_ref().unwrap();
        assert_eq!(dry.lines, vec![1, 3]);
        assert!(dry.evidence.contains(&DryRunEvidence::ZeroSizeBuffer));
        assert_eq!(
            load.estimate
                .as_ref()
                .unwrap()
                .fit
                .as_ref()
                .unwrap()
                .outcome,
            FitDecision::NoChange
        );
    }

    #[test]
    fn a_table_inside_the_fit_is_a_dry_run_even_when_it_adds_up() {
        let loads = loads_of(&[
            "common_init_result: fitting params to device memory, for bugs during this step try to reproduce them with -fit off, or provide --verbose logs if the bug only occurs with -fit on",
            // The header: a table whose first rows a paste cut off is no plan (`load::fit`).
            "common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   compute    unaccounted |",
            "common_memory_breakdown_print: |   - CUDA0 (RTX 3090)   | 24159 = 23257 + (  248 =     0 +       0 +     248) +         654 |",
            "common_params_fit_impl: will leave 1868 >= 1024 MiB of free device memory, no changes needed",
        ]);
        let t = &loads[0].lifecycle.tables[0];
        assert_eq!(
            (t.phase, t.evidence),
            (TablePhase::Plan, TableEvidence::InsideFit)
        );
        assert!(loads[0].actual.breakdown.is_empty());
    }

    fn outcome(lines: &[&str]) -> crate::model::FitSummary {
        let loads = loads_of(lines);
        loads[0].estimate.as_ref().unwrap().fit.clone().unwrap()
    }

    const START: &str = "common_init_result: fitting params to device memory, for bugs during this step try to reproduce them with -fit off, or provide --verbose logs if the bug only occurs with -fit on";

    #[test]
    fn each_fit_outcome_is_read_from_its_line() {
        use crate::model::FitStopCause;
        // No change (sample-logs/719-…:3-5).
        let f = outcome(&[
            START,
            "llama_params_fit_impl: projected to use 3287 MiB of device memory vs. 110100 MiB of free device memory",
            "llama_params_fit_impl: will leave 106812 >= 3471 MiB of free device memory, no changes needed",
        ]);
        assert_eq!(f.outcome, FitDecision::NoChange);
        // Context reduced (the fit's own wording, docs/log-formats.md §5.4).
        let f = outcome(&[
            START,
            "common_params_fit_impl: projected to use 6007 MiB of device memory vs. 6898 MiB of free device memory",
            "common_params_fit_impl: cannot meet free memory target of 1024 MiB, need to reduce device memory by 133 MiB",
            "common_params_fit_impl: context size reduced from 262144 to 98304",
        ]);
        assert_eq!(
            (f.outcome, f.context, f.context_by_user),
            (FitDecision::Changed, Some(98304), Some(false))
        );
        // Layers moved (sample-logs/706-…:9-23), then with layers overflowing (§5.7's shape).
        let moved = [
            START,
            "common_params_fit_impl: projected to use 20619 MiB of device memory vs. 21728 MiB of free device memory",
            "common_params_fit_impl: cannot meet free memory target of 1186 MiB, need to reduce device memory by 77 MiB",
            "common_params_fit_impl: context size set by user to 8192 -> no change",
            "common_params_fit_impl:   - Vulkan0 (NVIDIA GeForce RTX 3090): 65 layers,  20358 MiB used,   1370 MiB free",
            "common_fit_params: successfully fit params to free device memory",
        ];
        let f = outcome(&moved);
        assert_eq!((f.outcome, f.overflowing), (FitDecision::Changed, None));
        let f = outcome(&[
            START,
            "common_params_fit_impl: cannot meet free memory target of 1024 MiB, need to reduce device memory by 900 MiB",
            "common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3060): 30 layers ( 1 overflowing),  11180 MiB used,    820 MiB free",
        ]);
        assert_eq!((f.outcome, f.overflowing), (FitDecision::Changed, Some(1)));
        // Aborted: -ngl set by the user (LM Studio's wording, §5.7).
        let f = outcome(&[
            START,
            "common_params_fit_impl: projected to use 9000 MiB of device memory vs. 8000 MiB of free device memory",
            "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 999999, abort",
        ]);
        assert_eq!(f.outcome, FitDecision::Aborted);
        let stop = f.stopped.unwrap();
        assert_eq!(
            (stop.cause, stop.value, stop.line),
            (FitStopCause::GpuLayersSetByUser, Some(999999), 3)
        );
        // Failed: any other reason.
        let f = outcome(&[
            START,
            "common_fit_params: failed to fit params to free device memory: model has no layers",
        ]);
        assert_eq!(f.outcome, FitDecision::Failed);
        assert_eq!(f.stopped.unwrap().cause, FitStopCause::Error);
    }
}
