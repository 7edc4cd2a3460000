//! Where clip (the vision projector of llama.cpp's engine and of llama-server) runs, from the lines of one load
//! that say so. clip's size lines (`load_hparams: model size:`, `params backend buffer size`, `compute
//! allocated memory`) name no device: without one of the lines below, a paste cannot know it, and those
//! buffers stay on [`Device::Unknown`] rather than on a guessed GPU (issue 52: a fragment may know less, never
//! something else).
//!
//! What names it (`docs/log-formats.md` §5.1):
//! 1. `CLIP using <X> backend`: `CPU` is the host, `CUDA0` that GPU; clip.cpp up to Ollama 0.6.5 printed the
//!    backend without an index (`CLIP using CUDA backend`) and always took its device 0.
//! 2. clip's own compute buffer (`alloc_compute_meta:` / `reserve_compute_meta: <BUF> compute buffer size`),
//!    reserved on clip's backend and, for what that backend cannot run, on the CPU: a GPU's line names the
//!    GPU, CPU lines alone the host.
//! 3. The projector's offload switched off, by Ollama (`disabling multimodal projector offload`) or on the
//!    command line (`--no-mmproj-offload`): the host.
//! 4. No GPU at all: Ollama's discovery lists the CPU as its inference compute (`inference compute id=cpu
//!    library=cpu`) only when it found no GPU it can use, and the runner named no device: the host.
//!
//! No rule takes "the load's first GPU": llama-server's mtmd opens the machine's first GPU whatever `--device`
//! gives the text model, and Ollama ≥ 0.30 keeps the projector on the host when VRAM is short, so the text
//! model's GPU buffers say nothing of clip's device.

use crate::model::{Buffer, BufferKind, Device};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The device clip runs on, from this load's lines; `None` when none of them says (see the module doc).
    pub(super) fn clip_device<'a>(
        &self,
        buffers: impl IntoIterator<Item = &'a Buffer>,
    ) -> Option<Device> {
        if let Some((named, _)) = &self.projector_backend {
            return match named {
                Device::Other(stem) => match Device::named(&format!("{stem}0")) {
                    gpu @ Device::Gpu { .. } => Some(gpu),
                    _ => None,
                },
                Device::Unknown => None,
                Device::Gpu { .. } | Device::Metal | Device::Host => Some(named.clone()),
            };
        }
        let compute: Vec<&Device> = buffers
            .into_iter()
            .filter(|b| b.projector && b.kind == BufferKind::Compute && b.device.is_known())
            .map(|b| &b.device)
            .collect();
        if let Some(gpu) = compute.iter().filter(|d| d.is_gpu()).min() {
            return Some((*gpu).clone());
        }
        if !compute.is_empty() {
            return Some(Device::Host);
        }
        let offload_off = self.projector_offload_disabled.is_some()
            || self
                .command()
                .is_some_and(|(c, _)| c.projector_offload == Some(false));
        let no_gpu = self.devices.is_empty()
            && !self.inventory.is_empty()
            && self
                .inventory
                .iter()
                .all(|(g, _)| g.library.as_deref() == Some("cpu"));
        (offload_off || no_gpu).then_some(Device::Host)
    }
}
