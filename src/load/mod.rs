//! Splitting a stream of events into model loads.
//!
//! A load opens at its first start line (the estimate, `starting llama server`/`starting runner`, `loading
//! model`) and ends at `llama runner started in …`, a failure, a server restart, the next load's start, or where
//! the stream moves on to another log (its clock jumps back, or a paste of several files names the next one:
//! `frame::source_file`). A llama-server router's children (`frame::Framed::Process`) are each assembled
//! apart, so one child's lines never join another child's load, however they interleave.
//! Lines of a load whose start the log does not show open a *partial* load. The server's GPU inventory
//! (`inference compute`) and version are kept across loads until the server restarts. The tokenizer's
//! vocab-only model load is not a load. Loads are handed out as soon as they are complete, so memory is
//! bounded by one load, not by the log.

mod attempts;
mod buffers;
mod builder;
mod clip_device;
mod engine;
mod engine_requests;
mod estimate;
mod estimator;
mod events;
mod fit;
mod fit_rounds;
mod gpus;
pub mod hyperparameters;
mod lifecycle;
pub mod model_file;
mod prediction;
mod remote;
mod runtime;
mod scheduler;
mod server;
mod serving;
mod serving_memory;
mod settings;

use crate::model::{Load, LoadEnd, RejectedGpu};
use crate::parse::event::{Event, GpuInfo, RunnerDevice, SummaryPhase};

pub use buffers::{BufferLedger, BufferLine};
use builder::{LoadBuilder, Phase};
pub use engine::parse_version;

/// Whether a memory-summary line is the actual: said by the rule, else by position (after the runner
/// reported `offloaded N/M layers`, or after the `commit` load request, the summary describes what the Ollama
/// engine allocated; the llama engine's estimate is printed before both).
fn is_actual(phase: SummaryPhase, load: &LoadBuilder) -> bool {
    match phase {
        SummaryPhase::Actual => true,
        SummaryPhase::Estimate => false,
        SummaryPhase::ByPosition => load.seen_offloaded || load.requests.committed(),
    }
}

/// Groups events into loads.
pub struct Assembler {
    path: String,
    version: Option<String>,
    inventory: Vec<(GpuInfo, u64)>,
    /// Runner device lines seen while no load was open; they belong to the next load.
    pending_devices: Vec<(GpuInfo, u64)>,
    pending_runner_devices: Vec<(RunnerDevice, u64)>,
    /// `disabling multimodal projector offload` is printed before the load it concerns starts.
    pending_projector_offload: Option<(Option<String>, u64)>,
    /// Runtime signature lines read while no load was open (`docs/log-formats.md` §0.1): the next load's.
    pending_signs: Vec<crate::parse::event::RuntimeSign>,
    /// A breakdown table's header printed while no load was open: the row that follows opens one, and its
    /// table is whole (`load::fit`'s plan needs the header).
    pending_header: bool,
    /// The host's memory read before the load it precedes opened (`serving_memory.rs`).
    pending_host_memory: Option<(Option<crate::model::Quantity>, crate::model::Quantity, u64)>,
    /// A followed server's timeline when its load was handed out while it served: the serving lines that come
    /// later continue it (`serving_memory.rs`), so each report of a follow shows the timeline so far.
    serving_carry: Option<serving_memory::TimelineLedger>,
    /// GPUs discovery rejected, until the server restarts.
    rejected: Vec<RejectedGpu>,
    /// The scheduler's server-wide lines (`server config`, `vram-based default context`), until another log.
    server_scheduler: scheduler::ServerScheduler,
    /// The scheduler's lines printed before the load they concern starts.
    pending_scheduler: scheduler::SchedulerLedger,
    current: Option<LoadBuilder>,
    /// Every GPU `inference compute` lines described, in order.
    discovered: Vec<crate::model::Gpu>,
    /// The process of a llama-server router whose lines are being read: a child by its pid, or `None` (the
    /// router itself, or a log without a router).
    process: Option<String>,
    /// The router's other processes, each with the assembly state it had when its lines stopped: its open
    /// load, its devices, its version. Empty unless the log is a router's.
    parked: Vec<Assembler>,
}

impl Assembler {
    pub fn new(path: &str) -> Self {
        Assembler {
            path: path.to_string(),
            version: None,
            inventory: Vec::new(),
            pending_devices: Vec::new(),
            pending_runner_devices: Vec::new(),
            pending_projector_offload: None,
            pending_signs: Vec::new(),
            pending_header: false,
            pending_host_memory: None,
            serving_carry: None,
            rejected: Vec::new(),
            server_scheduler: scheduler::ServerScheduler::default(),
            pending_scheduler: scheduler::SchedulerLedger::default(),
            current: None,
            discovered: Vec::new(),
            process: None,
            parked: Vec::new(),
        }
    }

    /// The lines from here on come from the router's child `pid` (or the router itself, `None`; see
    /// `frame::Framed::Process`). Each child is a llama-server of its own, with its own devices and load:
    /// the state of the process whose lines stop is parked, and the state of the one whose lines resume is
    /// taken up again (a new one for a process not seen yet), so interleaved children never share a load.
    pub fn switch_process(&mut self, pid: Option<&str>) {
        if self.process.as_deref() == pid {
            return;
        }
        let mut parked = std::mem::take(&mut self.parked);
        let mut next = match parked.iter().position(|a| a.process.as_deref() == pid) {
            Some(i) => parked.remove(i),
            None => {
                let mut fresh = Assembler::new(&self.path);
                fresh.process = pid.map(str::to_string);
                fresh
            }
        };
        std::mem::swap(self, &mut next);
        // `next` is now the process whose lines stopped; the GPUs discovered stay the input's.
        let mut discovered = std::mem::take(&mut next.discovered);
        discovered.append(&mut self.discovered);
        self.discovered = discovered;
        parked.push(next);
        self.parked = parked;
    }

    /// Every process's open load, handed out in the order the loads started (this process's among them),
    /// each ended by `end`.
    fn finish_all(&mut self, end: LoadEnd, done: &mut impl FnMut(Load)) {
        let mut open: Vec<LoadBuilder> = self
            .parked
            .iter_mut()
            .filter_map(|a| a.current.take())
            .chain(self.current.take())
            .collect();
        open.sort_by_key(|b| b.first_line);
        for b in open {
            done(b.finish(end));
        }
    }

    fn open(&mut self, line: u64, clean: bool, done: &mut impl FnMut(Load)) -> &mut LoadBuilder {
        self.serving_carry = None;
        if let Some(previous) = self.current.take() {
            done(previous.finish(LoadEnd::NextLoadStarted));
        }
        let mut b = LoadBuilder::new(&self.path, line, clean);
        b.version = self.version.clone();
        b.inventory = self.inventory.clone();
        b.rejected = self.rejected.clone();
        b.devices = std::mem::take(&mut self.pending_devices);
        b.runner_devices = std::mem::take(&mut self.pending_runner_devices);
        b.projector_offload_disabled = self.pending_projector_offload.take();
        b.signs = std::mem::take(&mut self.pending_signs);
        if let Some((total, free, l)) = self.pending_host_memory.take() {
            b.timeline.host(total, free, l);
        }
        if let Some(pid) = &self.process {
            b.notes.push(format!(
                "the lines of the llama-server router's child process {pid} (`[{pid}] `): a load of its own, never merged with another child's"
            ));
        }
        if let Some((_, l)) = b.projector_offload_disabled {
            b.first_line = b.first_line.min(l);
        }
        b.scheduler = std::mem::take(&mut self.pending_scheduler);
        b.scheduler.set_server(&self.server_scheduler);
        if let Some(l) = b.scheduler.first_line() {
            b.first_line = b.first_line.min(l);
        }
        self.current.insert(b)
    }

    /// The open load, or a new partial one when none is open (or the open one has ended).
    fn ongoing(&mut self, line: u64, done: &mut impl FnMut(Load)) -> &mut LoadBuilder {
        let reopen = match &self.current {
            None => true,
            Some(b) => b.phase == Phase::Ended,
        };
        if reopen {
            return self.open(line, false, done);
        }
        self.current.as_mut().expect("checked above")
    }

    /// The stream has moved on to another log (its clock jumped back, see `parse::clock`): end the open
    /// load and forget the previous server's version and GPUs, as a server restart does.
    pub fn another_log(&mut self, done: impl FnMut(Load)) {
        self.next_log(LoadEnd::ClockJumpsBack, done);
    }

    /// A paste of several files names the next one (a grep prefix or a header, see `frame::source_file`):
    /// each file is its own log, ended as [`Assembler::another_log`] ends one, so however alike the files'
    /// lines are (one log per context size), no load of one file takes buffers of another.
    pub fn another_file(&mut self, done: impl FnMut(Load)) {
        self.next_log(LoadEnd::AnotherFile, done);
    }

    /// End the open load at the boundary between two logs (`end` says which sign showed it), and forget the
    /// previous server's version and GPUs, as a server restart does.
    fn next_log(&mut self, end: LoadEnd, mut done: impl FnMut(Load)) {
        self.finish_all(end, &mut done);
        // Another log: a router's processes were that log's.
        self.parked.clear();
        self.process = None;
        self.forget_server();
        // `server config` comes before the `Listening` line that forgets the rest: only another log clears it.
        self.server_scheduler = scheduler::ServerScheduler::default();
    }

    /// What a server restart makes stale: its version, GPUs and anything pending for a next load.
    fn forget_server(&mut self) {
        self.version = None;
        self.inventory.clear();
        self.rejected.clear();
        self.pending_devices.clear();
        self.pending_runner_devices.clear();
        self.pending_projector_offload = None;
        self.pending_signs.clear();
        self.pending_header = false;
        self.pending_host_memory = None;
        self.serving_carry = None;
        self.pending_scheduler = scheduler::SchedulerLedger::default();
    }

    /// The open load when it has not ended yet.
    fn open_load(&mut self) -> Option<&mut LoadBuilder> {
        self.current
            .as_mut()
            .filter(|b| b.phase < builder::Phase::Ended)
    }

    /// Feed one event; completed loads are passed to `done`.
    pub fn push(&mut self, event: Event, mut done: impl FnMut(Load)) {
        let line = event.line;
        if !matches!(
            event.kind,
            crate::parse::event::EventKind::Breakdown(_)
                | crate::parse::event::EventKind::BreakdownHeader
        ) {
            // A breakdown table's rows follow one another: any other record ends the table. (Physical line
            // numbers cannot say it: a paste wraps a row over two lines or puts other processes' lines
            // between rows, and those are no records.)
            if let Some(b) = self.current.as_mut() {
                b.open_table = None;
            }
        }
        if let Some(kind) = self.server_event(event.kind, line, &mut done) {
            self.load_event(kind, line, &mut done);
        }
    }

    /// The GPUs the server discovered (`inference compute`), across the whole input.
    pub fn discovered(&self) -> &[crate::model::Gpu] {
        &self.discovered
    }

    /// A followed input went quiet: hand out the open load if it has concluded (its closing line or a
    /// failure was read), instead of waiting for the next load's start. Lines that come later and would have
    /// been noted on it (a failure after the load completed) open a load of their own.
    pub fn hand_out_concluded(&mut self, mut done: impl FnMut(Load)) {
        if let Some(b) = self
            .current
            .as_ref()
            .filter(|b| (b.phase == Phase::Ended || b.failure.is_some()) && !b.timeline.is_empty())
        {
            self.serving_carry = Some(b.timeline.clone());
        }
        let concluded = |current: &mut Option<LoadBuilder>| {
            current
                .take_if(|b| b.phase == Phase::Ended || b.failure.is_some())
                .map(|b| b.finish(LoadEnd::Concluded))
        };
        let mut loads: Vec<Load> = self
            .parked
            .iter_mut()
            .filter_map(|a| concluded(&mut a.current))
            .collect();
        loads.extend(concluded(&mut self.current));
        loads.into_iter().for_each(&mut done);
    }

    /// End of input: hand out the last load (of every process of a router, in the order they started).
    pub fn finish(&mut self, mut done: impl FnMut(Load)) {
        self.finish_all(LoadEnd::LogEnds, &mut done);
    }
}

/// The event the built-in grammar reads from one real log line, for the unit tests of each ledger.
#[cfg(test)]
pub(crate) fn event_of(line: &str) -> crate::parse::event::EventKind {
    let grammar = crate::grammar::load(None).expect("built-in grammar");
    let mut parser = crate::parse::Parser::new(grammar).expect("parser");
    match parser.parse_line(1, line) {
        crate::parse::LineOutcome::Event(event) => event.kind,
        other => panic!("not read ({other:?}): {line}"),
    }
}

/// Loads assembled from real log lines (already framed, numbered from 1), for the unit tests of each concern.
#[cfg(test)]
pub(crate) fn loads_of(lines: &[&str]) -> Vec<Load> {
    let grammar = crate::grammar::load(None).expect("built-in grammar");
    let mut parser = crate::parse::Parser::new(grammar).expect("parser");
    let mut assembler = Assembler::new("test.log");
    let mut loads = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match parser.parse_line(i as u64 + 1, line) {
            crate::parse::LineOutcome::Event(event) => assembler.push(*event, |l| loads.push(l)),
            other => panic!("line {} not read ({other:?}): {line}", i + 1),
        }
    }
    assembler.finish(|l| loads.push(l));
    loads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routers_children_are_loads_of_their_own_however_their_lines_interleave() {
        // Two children of a llama-server router (docs/log-formats.md §5.7; no corpus log shows router mode:
        // corpus 707's lines, `sample-logs/707-…`, as two children would print them, framed).
        let grammar = crate::grammar::load(None).expect("built-in grammar");
        let mut parser = crate::parse::Parser::new(grammar).expect("parser");
        let mut assembler = Assembler::new("router.log");
        let mut loads = Vec::new();
        let lines = [
            (Some("34353"), "load_tensors: offloaded 43/43 layers to GPU"),
            (
                Some("34353"),
                "load_tensors:      Vulkan0 model buffer size =  2883.51 MiB",
            ),
            (Some("34360"), "load_tensors: offloaded 33/33 layers to GPU"),
            (
                Some("34360"),
                "load_tensors:      Vulkan0 model buffer size =  1200.00 MiB",
            ),
            (
                Some("34353"),
                "llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB",
            ),
            (
                None,
                "load_tensors:      Vulkan0 model buffer size =   100.00 MiB",
            ),
            (
                Some("34360"),
                "llama_kv_cache:    Vulkan0 KV buffer size =    21.25 MiB",
            ),
        ];
        for (i, (pid, line)) in lines.iter().enumerate() {
            assembler.switch_process(*pid);
            match parser.parse_line(i as u64 + 1, line) {
                crate::parse::LineOutcome::Event(event) => {
                    assembler.push(*event, |l| loads.push(l))
                }
                other => panic!("not read ({other:?}): {line}"),
            }
        }
        assembler.finish(|l| loads.push(l));
        let summary: Vec<(u64, Vec<u64>)> = loads
            .iter()
            .map(|l| {
                (
                    l.source.first_line,
                    l.actual.buffers.iter().map(|b| b.line).collect(),
                )
            })
            .collect();
        // In the order they started: child 34353, child 34360, the router's own line.
        assert_eq!(summary, [(1, vec![2, 5]), (3, vec![4, 7]), (6, vec![6])]);
        assert!(loads[0].notes[0].contains("child process 34353"));
        assert!(loads[1].notes[0].contains("child process 34360"));
    }
}
