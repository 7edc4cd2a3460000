//! Events about the server rather than one load: its start (version), its GPU discovery and rejections, the
//! runner's device list and the projector decision printed before a load opens, model hyperparameters (which
//! the vocab-only load prints too, so they never open a load). They are kept until the load they concern.

use super::builder::Phase;
use super::scheduler::SchedulerLedger;
use super::Assembler;
use crate::model::{Load, LoadEnd, RejectedGpu};
use crate::parse::event::EventKind;
use crate::parse::event::SchedulerLine;

impl Assembler {
    /// Take a server event; any other event is handed back for the open load.
    pub(super) fn server_event(
        &mut self,
        kind: EventKind,
        line: u64,
        done: &mut impl FnMut(Load),
    ) -> Option<EventKind> {
        match kind {
            EventKind::ServerStart { version } => {
                if let Some(previous) = self.current.take() {
                    done(previous.finish(LoadEnd::ServerRestarted));
                }
                self.forget_server();
                self.version = version;
                None
            }
            EventKind::GpuRejected {
                name,
                reason,
                cause,
            } => {
                let gpu = RejectedGpu {
                    name,
                    reason,
                    cause,
                    line,
                };
                if !self.rejected.iter().any(|r| r.name == gpu.name) {
                    if let Some(b) = self.current.as_mut() {
                        b.rejected.push(gpu.clone());
                    }
                    self.rejected.push(gpu);
                }
                None
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
                None
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
                None
            }
            EventKind::ModelParam { key, value } => {
                // Never opens a load: the server's vocab-only model load prints the same block.
                if let Some(b) = self.open_load() {
                    b.touch(line);
                    b.model_params.retain(|(k, _, _)| *k != key);
                    b.model_params.push((key, value, line));
                }
                None
            }
            EventKind::ModelLoader => {
                if let Some(b) = self.open_load() {
                    b.model_loader_seen = true;
                }
                None
            }
            EventKind::InferenceCompute(gpu) => {
                // A GPU discovered again (every server restart prints it anew) replaces its entry, so the
                // list stays as long as the machine's GPUs however long a followed log runs.
                let found = super::gpus::gpu_from_info(&gpu, line);
                match self.discovered.iter_mut().find(|g| {
                    g.id == found.id && g.library == found.library && g.name == found.name
                }) {
                    Some(known) => *known = found,
                    None => self.discovered.push(found),
                }
                self.inventory
                    .retain(|(g, _)| g.id.is_none() || g.id != gpu.id);
                self.inventory.push((gpu, line));
                None
            }
            EventKind::Known | EventKind::VocabOnly => None,
            EventKind::RuntimeSign(sign) => {
                // A sign, never a line of the load's figures: it neither opens nor extends a load. One read
                // while no load is open is the next load's (a grep that begins before the load's start).
                match self.current.as_mut().filter(|b| b.phase < Phase::Ended) {
                    Some(b) => b.signs.push(sign),
                    None => self.pending_signs.push(sign),
                }
                None
            }
            EventKind::OllamaLlamaServer => {
                // A sign for the open load only: it neither opens nor extends one.
                if let Some(b) = self.current.as_mut().filter(|b| b.phase < Phase::Ended) {
                    b.ollama_llama_server = true;
                }
                None
            }
            EventKind::Scheduler(decision) => {
                self.scheduler_line(*decision, line);
                None
            }
            EventKind::FileSize(size) => {
                // Never opens a load: the server's vocab-only model load prints it too.
                if let Some(b) = self.open_load() {
                    b.touch(line);
                    b.scheduler.file_size(size, line);
                }
                None
            }
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
                None
            }
            other => Some(other),
        }
    }

    /// A scheduler line: server-wide ones are kept for every load; those printed before llama-server starts
    /// go to the load not yet started (or wait for it); a retry closes the failed load and opens the next;
    /// the rest (overwritten variables, `ollama ps` rows, runtime OOM) belong to the load read last.
    fn scheduler_line(&mut self, decision: SchedulerLine, line: u64) {
        let Some(decision) = self.server_scheduler.push(decision, line) else {
            return;
        };
        if let SchedulerLine::MakeSpace { loaded_layers } = decision {
            // The layout being read could not place every layer: an attempt of the open load, which the next
            // `loading model` lays out again (`load::attempts`).
            if let Some(b) = self
                .current
                .as_mut()
                .filter(|b| b.phase < Phase::RunnerOutput)
            {
                b.touch(line);
                b.make_space(loaded_layers, line);
            }
            return;
        }
        if SchedulerLedger::before_start(&decision) {
            match self
                .current
                .as_mut()
                .filter(|b| b.phase < Phase::RunnerStarted)
            {
                Some(b) => {
                    b.touch(line);
                    b.scheduler.push(decision, line);
                }
                None => self.pending_scheduler.push(decision, line),
            }
            return;
        }
        if matches!(decision, SchedulerLine::Retry { .. }) {
            self.pending_scheduler.push(decision.clone(), line);
        }
        if let Some(b) = self.current.as_mut() {
            b.touch(line);
            b.scheduler.push(decision, line);
        }
    }
}
