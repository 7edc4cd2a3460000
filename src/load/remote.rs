//! Devices whose memory is not this machine's own VRAM (`docs/log-formats.md` §5.7), so the report says what
//! their figures are:
//!
//! * **RPC devices**: ggml's RPC backend runs a device on another machine. Buffer lines name it with its host
//!   (`RPC[10.0.2.242:50052]`), the fit's rows and the breakdown table by index with the host as its
//!   description (`RPC0 (mlbox.local:50052)`). Its memory is the remote host's.
//! * **Integrated GPUs** (Vulkan's `uma: 1`): the GPU's memory is the host's RAM, one pool shared with the
//!   host, so its "free" figure is not VRAM and is never added to a GPU's.

use crate::model::{Backend, Device, Gpu};

use super::builder::LoadBuilder;

/// The host an RPC device names: the description of `RPC0 (mlbox.local:50052)`, or what is inside the brackets
/// of a buffer named `RPC[10.0.2.242:50052]`.
pub fn rpc_host(device: &Device, description: Option<&str>) -> Option<String> {
    match device {
        Device::Gpu {
            backend: Backend::Named(stem),
            ..
        } if stem == "RPC" => description
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string),
        Device::Other(name) => name
            .strip_prefix("RPC[")
            .and_then(|rest| rest.strip_suffix(']'))
            .filter(|host| !host.is_empty())
            .map(str::to_string),
        Device::Gpu { .. } | Device::Metal | Device::Host | Device::Unknown => None,
    }
}

impl LoadBuilder {
    /// Remember an RPC device (with the host it names) that a line of this load mentions.
    pub(super) fn note_remote(&mut self, device: &Device, description: Option<&str>, line: u64) {
        let Some(host) = rpc_host(device, description) else {
            return;
        };
        if !self
            .remote
            .iter()
            .any(|(d, h, _)| d == device && *h == host)
        {
            self.remote.push((device.clone(), host, line));
        }
    }

    /// What the report says of devices whose memory is not this machine's VRAM: RPC devices and their
    /// hosts, integrated GPUs sharing the host's memory.
    pub(super) fn device_notes(&self, gpus: &[Gpu]) -> Vec<String> {
        let mut notes: Vec<String> = self
            .remote
            .iter()
            .map(|(device, host, line)| {
                format!(
                    "{device} is a remote device (ggml RPC server {host}, line {line}): its memory is that host's, not this machine's"
                )
            })
            .collect();
        for g in gpus.iter().filter(|g| g.integrated) {
            let device = Device::for_library(
                g.library.as_deref().unwrap_or("gpu"),
                g.id.parse::<usize>().unwrap_or(0),
            );
            notes.push(format!(
                "{device} ({}) is an integrated GPU (line {}): its memory is the host's RAM, one pool shared with the host, not VRAM; its free memory is not added to any GPU's",
                g.name.as_deref().unwrap_or("unnamed"),
                g.line
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::loads_of;

    #[test]
    fn an_rpc_device_has_its_host_in_either_spelling() {
        assert_eq!(
            rpc_host(&Device::named("RPC0"), Some("mlbox.local:50052")).as_deref(),
            Some("mlbox.local:50052")
        );
        assert_eq!(
            rpc_host(&Device::of_buffer("RPC[10.0.2.242:50052]"), None).as_deref(),
            Some("10.0.2.242:50052")
        );
        assert_eq!(rpc_host(&Device::named("CUDA0"), Some("RTX 3090")), None);
        assert_eq!(rpc_host(&Device::of_buffer("RPC[]"), None), None);
    }

    #[test]
    fn rpc_devices_and_an_integrated_gpu_are_said_so() {
        // Lines built from docs/log-formats.md §5.7's shapes (no corpus log shows an RPC device or `uma: 1`):
        // the Vulkan device line, the fit's newer first projection, an RPC buffer.
        let loads = loads_of(&[
            "ggml_vulkan: 0 = AMD Radeon 890M Graphics (RADV GFX1150) (radv) | uma: 1 | fp16: 1 | bf16: 0 | warp size: 64 | shared memory: 65536 | int dot: 1 | matrix cores: KHR_coopmat",
            "common_params_fit_impl:   - RPC0 (mlbox.local:50052) : 48396 total,      0 used,  47817 free vs. target of   1024",
            "load_tensors: offloaded 33/33 layers to GPU",
            "load_tensors: RPC[10.0.2.242:50052] model buffer size =  1234.00 MiB",
            "load_tensors:      Vulkan0 model buffer size =  3169.49 MiB",
        ]);
        let notes = &loads[0].notes;
        assert!(
            notes.iter().any(|n| n.starts_with(
                "RPC0 is a remote device (ggml RPC server mlbox.local:50052, line 2)"
            )),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.starts_with(
            "RPC[10.0.2.242:50052] is a remote device (ggml RPC server 10.0.2.242:50052, line 4)"
        )));
        assert!(loads[0].gpus[0].integrated);
        assert!(notes.iter().any(|n| n.starts_with(
            "Vulkan0 (AMD Radeon 890M Graphics (RADV GFX1150)) is an integrated GPU (line 1): its memory is the host's RAM"
        )));
    }
}
