//! Splitting a stream of events into model loads.
//!
//! A load opens at its first start line (the estimate, `starting llama server`/`starting runner`, `loading
//! model`) and ends at `llama runner started in …`, a failure, a server restart, the next load's start, or where
//! the stream moves on to another log (its clock jumps back).
//! Lines of a load whose start the log does not show open a *partial* load. The server's GPU inventory
//! (`inference compute`) and version are kept across loads until the server restarts. The tokenizer's
//! vocab-only model load is not a load. Loads are handed out as soon as they are complete, so memory is
//! bounded by one load, not by the log.

mod buffers;
mod builder;
mod engine;
mod estimate;
mod fit;
mod gpus;
mod settings;

use crate::model::{Backend, BufferKind, Device, Load, OffloadShape, RejectedGpu};
use crate::parse::event::{Event, EventKind, GpuInfo, RunnerDevice, SideEstimate, SummaryPhase};

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
        SummaryPhase::ByPosition => load.seen_offloaded || load.seen_commit,
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
    /// GPUs discovery rejected, until the server restarts.
    rejected: Vec<RejectedGpu>,
    current: Option<LoadBuilder>,
    /// Every GPU `inference compute` lines described, in order.
    discovered: Vec<crate::model::Gpu>,
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
            rejected: Vec::new(),
            current: None,
            discovered: Vec::new(),
        }
    }

    fn open(&mut self, line: u64, clean: bool, done: &mut impl FnMut(Load)) -> &mut LoadBuilder {
        if let Some(previous) = self.current.take() {
            done(previous.finish("the next load started"));
        }
        let mut b = LoadBuilder::new(&self.path, line, clean);
        b.version = self.version.clone();
        b.inventory = self.inventory.clone();
        b.rejected = self.rejected.clone();
        b.devices = std::mem::take(&mut self.pending_devices);
        b.runner_devices = std::mem::take(&mut self.pending_runner_devices);
        b.projector_offload_disabled = self.pending_projector_offload.take();
        if let Some((_, l)) = b.projector_offload_disabled {
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
    pub fn another_log(&mut self, mut done: impl FnMut(Load)) {
        if let Some(previous) = self.current.take() {
            done(previous.finish("the log's clock jumps back here: another log follows"));
        }
        self.forget_server();
    }

    /// What a server restart makes stale: its version, GPUs and anything pending for a next load.
    fn forget_server(&mut self) {
        self.version = None;
        self.inventory.clear();
        self.rejected.clear();
        self.pending_devices.clear();
        self.pending_runner_devices.clear();
        self.pending_projector_offload = None;
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
        let done = &mut done;
        match event.kind {
            EventKind::ServerStart { version } => {
                if let Some(previous) = self.current.take() {
                    done(previous.finish("the server restarted"));
                }
                self.forget_server();
                self.version = version;
                return;
            }
            EventKind::GpuRejected { name, reason } => {
                let gpu = RejectedGpu { name, reason, line };
                if !self.rejected.iter().any(|r| r.name == gpu.name) {
                    if let Some(b) = self.current.as_mut() {
                        b.rejected.push(gpu.clone());
                    }
                    self.rejected.push(gpu);
                }
                return;
            }
            EventKind::RunnerDevice(device) => {
                match self.open_load() {
                    Some(b) => {
                        b.touch(line);
                        b.runner_devices.retain(|(d, _)| d.device != device.device);
                        b.runner_devices.push((*device, line));
                    }
                    None => {
                        self.pending_runner_devices
                            .retain(|(d, _)| d.device != device.device);
                        self.pending_runner_devices.push((*device, line));
                    }
                }
                return;
            }
            EventKind::ProjectorOffloadDisabled { reason } => {
                match self
                    .current
                    .as_mut()
                    .filter(|b| b.phase < Phase::RunnerStarted)
                {
                    Some(b) => {
                        b.touch(line);
                        b.projector_offload_disabled = Some((reason, line));
                    }
                    None => self.pending_projector_offload = Some((reason, line)),
                }
                return;
            }
            EventKind::ModelParam { key, value } => {
                // Never opens a load: the server's vocab-only model load prints the same block.
                if let Some(b) = self.open_load() {
                    b.touch(line);
                    b.model_params.retain(|(k, _)| *k != key);
                    b.model_params.push((key, value));
                }
                return;
            }
            EventKind::ModelLoader => {
                if let Some(b) = self.open_load() {
                    b.model_loader_seen = true;
                }
                return;
            }
            EventKind::InferenceCompute(gpu) => {
                self.discovered.push(gpus::gpu_from_info(&gpu, line));
                self.inventory
                    .retain(|(g, _)| g.id.is_none() || g.id != gpu.id);
                self.inventory.push((gpu, line));
                return;
            }
            EventKind::Known | EventKind::VocabOnly => return,
            EventKind::CudaDevice(gpu) => {
                match &mut self.current {
                    Some(b) if b.phase < Phase::Ended => {
                        if b.devices.iter().any(|(d, _)| d.index == gpu.index) {
                            b.devices.clear();
                        }
                        b.devices.push((gpu, line));
                        b.touch(line);
                    }
                    _ => {
                        if self
                            .pending_devices
                            .iter()
                            .any(|(d, _)| d.index == gpu.index)
                        {
                            self.pending_devices.clear();
                        }
                        self.pending_devices.push((gpu, line));
                    }
                }
                return;
            }
            _ => {}
        }
        match event.kind {
            EventKind::Estimate(e) => {
                // v0.11.5+ prints the estimate after `starting runner`; earlier eras print it before. Either
                // way it belongs to the open load until the runner has printed its own output.
                let replace = matches!(&self.current, Some(b) if b.phase < Phase::RunnerOutput
                    && (b.estimate.is_none() || b.phase < Phase::RunnerStarted));
                let b = if replace {
                    self.current.as_mut().expect("checked")
                } else {
                    self.open(line, true, done)
                };
                b.touch(line);
                if b.estimate
                    .as_ref()
                    .is_some_and(|(old, _)| old.form != OffloadShape::Eviction)
                    && e.form != OffloadShape::Eviction
                {
                    b.notes.push(format!(
                        "line {line}: the estimate was printed again; the later one is used"
                    ));
                }
                if e.truncated {
                    b.notes.push(format!(
                        "line {line}: the estimate line is cut short; figures after the cut are missing"
                    ));
                }
                if !(e.form == OffloadShape::Eviction && b.estimate.is_some()) {
                    b.estimate = Some((*e, line));
                }
                b.advance(Phase::Estimated);
            }
            EventKind::RunnerStart(cmd) if cmd.is_discovery() => {
                // A runner started without a model (GPU discovery, Ollama >= 0.12): not a load.
            }
            EventKind::RunnerStart(cmd) => {
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::RunnerStarted);
                let b = if attach {
                    self.current.as_mut().expect("checked")
                } else {
                    self.open(line, true, done)
                };
                b.touch(line);
                if cmd.llama_server {
                    b.llama_engine_hint = true;
                }
                b.runner = Some((*cmd, line));
                b.started_cleanly = true;
                b.advance(Phase::RunnerStarted);
            }
            EventKind::LoadingModel {
                layers,
                requested,
                model,
            } => {
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::Ended && b.loading_model.is_none() && b.phase <= Phase::RunnerStarted);
                let b = if attach {
                    self.current.as_mut().expect("checked")
                } else {
                    self.open(line, true, done)
                };
                b.touch(line);
                b.loading_model = Some((layers, requested, line));
                if model.is_some() {
                    b.model_path = model;
                    b.llama_engine_hint = true;
                }
                b.started_cleanly = true;
                b.advance(Phase::RunnerStarted);
            }
            EventKind::GpuMemory(gpu) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.gpu_memory.retain(|(g, _)| g.id != gpu.id);
                b.gpu_memory.push((gpu, line));
            }
            EventKind::LoadRequest(request) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.seen_commit |= request.commit;
                b.load_requests.push(*request);
                b.advance(Phase::RunnerOutput);
            }
            EventKind::EngineStart { ollama } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                if ollama {
                    b.ollama_engine_hint = true;
                } else {
                    b.llama_engine_hint = true;
                }
                b.advance(Phase::RunnerOutput);
            }
            EventKind::Offloaded { done: d, total } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.offloaded = Some((d, total));
                b.seen_offloaded = true;
                b.advance(Phase::RunnerOutput);
            }
            EventKind::Buffer {
                component,
                buffer,
                kind,
                size,
                projector,
            } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.ledger.add(BufferLine {
                    component: &component,
                    buffer: &buffer,
                    device: None,
                    kind,
                    size,
                    line,
                    projector,
                });
                b.llama_engine_hint = true;
                b.mark_source("llama.cpp");
                b.advance(Phase::RunnerOutput);
            }
            EventKind::EngineBuffer { buffer, kind, size } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.ledger.set_last(BufferLine {
                    component: "ollama-engine",
                    buffer: &buffer,
                    device: None,
                    kind,
                    size,
                    line,
                    projector: false,
                });
                b.ollama_engine_hint = true;
                b.mark_source("ollama-engine");
                b.advance(Phase::RunnerOutput);
            }
            EventKind::MemorySummary {
                part,
                device,
                size,
                phase,
            } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                let actual = is_actual(phase, b);
                if actual {
                    b.add_summary_actual(part, &device, size, line);
                    b.ollama_engine_hint = true;
                    b.advance(Phase::RunnerOutput);
                } else {
                    b.add_summary_estimate(part, &device, size, line);
                    b.advance(Phase::Estimated);
                }
            }
            EventKind::MemoryTotal { size, phase } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                let actual = is_actual(phase, b);
                if actual {
                    b.summary_actual_total = Some((size, line));
                } else {
                    b.summary_estimate_total = Some((size, line));
                }
            }
            EventKind::BreakdownHeader => {
                // A header opens no load: the rows that follow do (a table cut before its header starts
                // one of its own).
                if let Some(b) = self.current.as_mut() {
                    b.breakdown_header();
                }
            }
            EventKind::Breakdown(row) => {
                // After the load, an addable table is the one llama-server prints at exit (an actual); a
                // table whose free + self exceeds the total is a fit probe of the next load.
                let exit = !row.unaccounted_suspect
                    && self.current.as_ref().is_some_and(|b| b.allocated());
                let b = match self.current.as_mut() {
                    Some(b) if exit => b,
                    _ => self.ongoing(line, done),
                };
                b.touch(line);
                b.add_breakdown(*row, line);
                b.llama_engine_hint = true;
                b.advance(Phase::RunnerOutput);
            }
            EventKind::Fit(fit) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.fit.push(*fit, line);
                b.llama_engine_hint = true;
                b.advance(Phase::RunnerOutput);
            }
            EventKind::SideEstimate { what, size } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                match what {
                    SideEstimate::Projector => b.projector_estimate = Some((size, line)),
                    SideEstimate::Draft => b.draft_estimate = Some((size, line)),
                }
            }
            EventKind::ProjectorBackend { device } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.projector_backend = Some((device, line));
            }
            EventKind::KvSize(kv) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.kv_caches.push((*kv, line));
            }
            EventKind::Recovered { message } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.notes.push(format!(
                    "line {line}: {message} (recovered: llama.cpp used an ordinary host buffer instead; not a failure)"
                ));
            }
            EventKind::KvParams { cells, type_k } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.kv_cells = cells.or(b.kv_cells);
                b.kv_type = type_k.or(b.kv_type.take());
            }
            EventKind::ContextParam(param) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.context.read(param);
            }
            EventKind::ProjectorSize { graph, size } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                let kind = if graph {
                    BufferKind::Compute
                } else {
                    BufferKind::Model
                };
                // clip's size lines name no device: a GPU the log does not name, until `CLIP using … backend`
                // (or the load's first GPU) says which.
                b.ledger.set_last(BufferLine {
                    component: "clip",
                    buffer: "projector",
                    device: Some(Device::gpu(Backend::Unknown, 0)),
                    kind,
                    size,
                    line,
                    projector: true,
                });
            }
            EventKind::ModelHeader { architecture } => {
                if let Some(b) = self.current.as_mut().filter(|b| b.phase < Phase::Ended) {
                    b.touch(line);
                    b.architecture = architecture;
                }
            }
            EventKind::RunnerStarted => {
                if let Some(b) = self.current.as_mut() {
                    b.touch(line);
                    b.advance(Phase::Ended);
                }
            }
            EventKind::LoadFailed {
                message,
                out_of_memory,
            } => match self.current.as_mut() {
                Some(b) if b.phase == Phase::Ended => {
                    b.notes
                        .push(format!("line {line}: after the load completed: {message}"));
                }
                Some(b) => {
                    b.touch(line);
                    // The first failure, unless a later line is the out-of-memory that explains it.
                    if b.failure.is_none() || out_of_memory && !b.failure_oom {
                        b.failure = Some((message, line));
                        b.failure_oom = out_of_memory;
                    }
                }
                None => {
                    let b = self.open(line, false, done);
                    b.failure = Some((message, line));
                    b.failure_oom = out_of_memory;
                }
            },
            EventKind::ServerStart { .. }
            | EventKind::InferenceCompute(_)
            | EventKind::CudaDevice(_)
            | EventKind::GpuRejected { .. }
            | EventKind::RunnerDevice(_)
            | EventKind::ProjectorOffloadDisabled { .. }
            | EventKind::ModelParam { .. }
            | EventKind::ModelLoader
            | EventKind::Known
            | EventKind::VocabOnly => unreachable!("handled above"),
        }
    }

    /// The GPUs the server discovered (`inference compute`), across the whole input.
    pub fn discovered(&self) -> &[crate::model::Gpu] {
        &self.discovered
    }

    /// End of input: hand out the last load.
    pub fn finish(&mut self, mut done: impl FnMut(Load)) {
        if let Some(b) = self.current.take() {
            done(b.finish("the log ends first"));
        }
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
