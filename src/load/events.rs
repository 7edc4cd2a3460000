//! Events of one load: its start lines (the estimate, the runner, `loading model`), the runner's reports
//! (buffers, memory summaries, breakdown tables, the `--fit` phase, KV and context lines) and its end
//! (`llama runner started`, a failure). Each opens, feeds or ends the load being assembled.

use super::builder::Phase;
use super::{is_actual, Assembler, BufferLine};
use crate::model::{BufferKind, Device, Load};
use crate::parse::event::{EventKind, SideEstimate};

impl Assembler {
    /// The open load when `attach` (the caller checked it is open), else a new clean one.
    fn attach_or_open(
        &mut self,
        attach: bool,
        line: u64,
        done: &mut impl FnMut(Load),
    ) -> &mut super::builder::LoadBuilder {
        if !attach || self.current.is_none() {
            return self.open(line, true, done);
        }
        self.current.get_or_insert_with(Default::default)
    }

    /// Feed an event of the open load (or of a new partial one).
    pub(super) fn load_event(&mut self, kind: EventKind, line: u64, done: &mut impl FnMut(Load)) {
        match kind {
            EventKind::Serving(e) => self.serving_event(*e, line, done),
            EventKind::ServingMemory(e) => self.serving_memory(*e, line, done),
            EventKind::Estimate(e) => {
                // v0.11.5+ prints the estimate after `starting runner`; earlier eras print it before. Either
                // way it belongs to the open load until the runner has printed its own output.
                let replace = matches!(&self.current, Some(b) if b.phase < Phase::RunnerOutput
                    && (b.estimator.is_empty() || b.phase < Phase::RunnerStarted));
                let b = self.attach_or_open(replace, line, done);
                b.touch(line);
                let notes = b.estimator.push(*e, line);
                b.notes.extend(notes.iter().map(|n| n.to_string()));
                b.advance(Phase::Estimated);
            }
            EventKind::RunnerStart(cmd) if cmd.is_discovery() => {
                // A runner started without a model (GPU discovery, Ollama >= 0.12): not a load.
            }
            EventKind::RunnerStart(cmd) => {
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::RunnerStarted);
                let b = self.attach_or_open(attach, line, done);
                b.touch(line);
                if cmd.llama_server {
                    b.llama_engine_hint = true;
                }
                b.runner = Some((*cmd, line));
                b.started_cleanly = true;
                b.advance(Phase::RunnerStarted);
            }
            EventKind::CommandLine(cmd) if cmd.model.is_none() => {
                // `llama-server --help`, `--version`, `--list-devices`: no model, so no load.
            }
            EventKind::CommandLine(cmd) => {
                // A new command starts a new run, unless the open load has printed nothing of its own yet.
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::RunnerOutput && b.command().is_none());
                let b = self.attach_or_open(attach, line, done);
                b.touch(line);
                b.llama_engine_hint = true;
                b.command_line = Some((*cmd, line));
                b.started_cleanly = true;
                b.advance(Phase::RunnerStarted);
            }
            EventKind::LlamaServerStart(start) => {
                // Attach to a load llama-server has not started in yet (Ollama's `starting llama-server`
                // opened it), or whose start lines are still being printed; otherwise a new run begins.
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::Ended
                    && b.failure.is_none()
                    && (b.phase < Phase::RunnerOutput || b.llama_server.is_none()));
                let b = self.attach_or_open(attach, line, done);
                b.touch(line);
                b.llama_engine_hint = true;
                b.started_cleanly = true;
                b.llama_server_start(*start, line);
                b.advance(Phase::RunnerStarted);
            }
            EventKind::LoadingModel {
                layers,
                requested,
                model,
            } => {
                let attach = matches!(&self.current, Some(b) if b.phase < Phase::Ended && b.loading_model.is_none() && b.phase <= Phase::RunnerStarted);
                let b = self.attach_or_open(attach, line, done);
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
                b.requests.push(*request, line);
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
                b.offloaded_line = b.offloaded_line.or(Some(line));
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
                // After `creating … draft context`, the buffers are the draft's own context.
                let component = if b.draft_context_line.is_some() {
                    "draft".to_string()
                } else {
                    component
                };
                let device = Device::of_buffer(&buffer);
                if device.is_gpu()
                    && size.bytes == 0
                    && matches!(kind, BufferKind::Model | BufferKind::Kv)
                {
                    b.no_alloc_print_line = b.no_alloc_print_line.or(Some(line));
                }
                b.note_remote(&device, None, line);
                if kind == BufferKind::Kv {
                    b.first_kv_line.get_or_insert(line);
                }
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
                match self.current.as_mut() {
                    Some(b) if b.phase != Phase::Ended => b.breakdown_header(),
                    _ => self.pending_header = true,
                }
            }
            EventKind::Breakdown(row) => {
                // After the load, an addable table is the one llama-server prints at exit (an actual); a
                // table whose free + self exceeds the total is a fit probe of the next load.
                let exit = !row.unaccounted_suspect
                    && self.current.as_ref().is_some_and(|b| b.allocated());
                let header = std::mem::take(&mut self.pending_header);
                let b = match self.current.as_mut() {
                    Some(b) if exit => b,
                    _ => self.ongoing(line, done),
                };
                if header {
                    b.breakdown_header();
                }
                b.touch(line);
                b.note_remote(&row.device, row.name.as_deref(), line);
                b.add_breakdown(*row, line);
                b.llama_engine_hint = true;
                b.advance(Phase::RunnerOutput);
            }
            EventKind::Fit(fit) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.fit_line_arrived();
                if let crate::parse::event::FitLine::Initial { device, name, .. }
                | crate::parse::event::FitLine::Result { device, name, .. } = &*fit
                {
                    b.note_remote(device, name.as_deref(), line);
                }
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
                // Only llama-server's `load_model` estimates the projector and the draft apart (`[mtmd]`,
                // `[spec]`, `docs/log-formats.md` §0.1): a sign of llama-server as its table's rows are, its
                // launcher unknown.
                b.signs.push(crate::parse::event::RuntimeSign {
                    runtime: crate::parse::event::SignedRuntime::LlamaServer,
                    engine: crate::model::Engine::Llama,
                });
            }
            EventKind::MetalWorkingSet {
                budget,
                allocated,
                exceeded,
            } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                let ws = b
                    .working_set
                    .get_or_insert_with(crate::model::WorkingSet::default);
                if let Some(budget) = budget {
                    ws.budget = Some(budget);
                    ws.budget_line = Some(line);
                }
                if let Some(a) =
                    allocated.filter(|a| ws.peak.is_none_or(|(p, _)| a.bytes > p.bytes))
                {
                    ws.peak = Some((a, line));
                }
                if exceeded {
                    ws.exceeded_lines.push(line);
                }
            }
            EventKind::DraftContext => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.draft_context_line = b.draft_context_line.or(Some(line));
            }
            EventKind::ProjectorBackend { device } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.projector_backend = Some((device, line));
            }
            EventKind::KvSize(kv) => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.first_kv_line.get_or_insert(line);
                let mut kv = *kv;
                kv.swa = b.kv_cache_swa.take();
                b.kv_caches.push((kv, line));
            }
            EventKind::Recovered { message } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.notes.push(format!(
                    "line {line}: {message} (recovered: llama.cpp used an ordinary host buffer instead; not a failure)"
                ));
            }
            EventKind::KvCacheCreated { swa } => {
                let b = self.ongoing(line, done);
                b.touch(line);
                b.first_kv_line.get_or_insert(line);
                b.kv_cache_swa = Some(swa);
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
                // clip's size lines name no device: not known until a line of the load says where clip runs
                // (`LoadBuilder::clip_device`).
                b.ledger.set_last(BufferLine {
                    component: "clip",
                    buffer: "projector",
                    device: Some(Device::Unknown),
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
                    b.serving_line = b.serving_line.or(Some(line));
                    b.advance(Phase::Ended);
                }
            }
            EventKind::LoadFailed(failure) => {
                let part = crate::model::FailedPart::named_in(&failure.message);
                self.failure_event(*failure, part, line, done)
            }
            EventKind::LayoutBackoff { backoff } => {
                if let Some(b) = self.current.as_mut().filter(|b| b.phase < Phase::Ended) {
                    b.touch(line);
                    b.recover(backoff, line);
                }
            }
            EventKind::ServerStart { .. }
            | EventKind::InferenceCompute(_)
            | EventKind::CudaDevice(_)
            | EventKind::GpuRejected { .. }
            | EventKind::RunnerDevice(_)
            | EventKind::ProjectorOffloadDisabled { .. }
            | EventKind::ModelParam { .. }
            | EventKind::ModelLoader
            | EventKind::Known
            | EventKind::OllamaLlamaServer
            | EventKind::RuntimeSign(_)
            | EventKind::Scheduler(_)
            | EventKind::FileSize(_)
            | EventKind::VocabOnly => unreachable!("handled above"),
        }
    }

    /// A failure line: the load's failure (the first, unless a later line explains it better: the
    /// out-of-memory after a crash, the allocation limit after an out-of-memory), the part it names (the first
    /// line that names one), its cause merged with the others', and the allocation it names.
    fn failure_event(
        &mut self,
        failure: crate::parse::FailureLine,
        part: Option<crate::model::FailedPart>,
        line: u64,
        done: &mut impl FnMut(Load),
    ) {
        let b = match self.current.as_mut() {
            Some(b) if b.phase == Phase::Ended => {
                b.notes.push(format!(
                    "line {line}: after the load completed: {}",
                    failure.message
                ));
                // The host killed the server while it served: the end of its timeline.
                if part == Some(crate::model::FailedPart::HostKilled)
                    || failure.cause == crate::model::FailureCause::HostMemory
                {
                    b.touch(line);
                    b.timeline.killed(failure.message, line);
                }
                return;
            }
            Some(b) => {
                b.touch(line);
                b
            }
            None => self.open(line, false, done),
        };
        // After `creating … draft context against the target model` the main context is complete: what fails
        // now is the draft's (its KV or compute buffers), whatever the line names; the host's OOM killer stays.
        let part = match (b.draft_context_line, part) {
            (Some(_), Some(crate::model::FailedPart::HostKilled)) => part,
            (Some(_), _) => Some(crate::model::FailedPart::DraftContext),
            (None, _) => part,
        };
        // The first line that names a part, unless it named only a host buffer and a later line says what that
        // buffer was (`failed to allocate buffer for kv cache` after the CPU buffer's failure).
        match (b.failed_part, part) {
            (None, Some(p)) => b.failed_part = Some((p, line)),
            (Some((crate::model::FailedPart::HostBuffer, _)), Some(p)) if p.is_a_use() => {
                b.failed_part = Some((p, line));
            }
            (Some(_), _) | (None, None) => {}
        }
        b.failed_model_store = b
            .failed_model_store
            .or(super::runtime::launcher_of_model_path(&failure.message));
        let limit = failure.cause == crate::model::FailureCause::AllocationLimit;
        let was_limit = b.failure_cause == Some(crate::model::FailureCause::AllocationLimit);
        if b.failure.is_none() || failure.out_of_memory && !b.failure_oom || limit && !was_limit {
            b.failure = Some((failure.message.clone(), line));
            b.failure_oom = failure.out_of_memory;
        }
        b.failure_cause = Some(match b.failure_cause {
            Some(c) => c.merge(failure.cause),
            None => failure.cause,
        });
        b.llama_cpp_tool |= failure.standalone;
        match (&mut b.failed_allocation, failure.size) {
            (None, Some(size)) => {
                b.failed_allocation = Some(crate::model::FailedAllocation {
                    device: failure.device,
                    size,
                    line,
                });
            }
            // A later line of the same allocation names its device (`ggml_gallocr_reserve_n: failed to allocate
            // Vulkan0 buffer of size N` after the driver's `allocation of size N failed`).
            (Some(a), size)
                if a.device.is_none() && size.is_none_or(|s| s.bytes == a.size.bytes) =>
            {
                a.device = failure.device;
            }
            (Some(_), _) | (None, None) => {}
        }
    }
}
