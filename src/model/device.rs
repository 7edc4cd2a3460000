//! Devices: where memory lives. A GPU of a ggml backend with its index (`CUDA0`, `ROCm1`, `Vulkan0`, `MTL0`),
//! Apple's `Metal`, the host, or a device the log does not name ([`Device::Unknown`], `unknown`). This is the
//! one place that knows device and buffer names; everything else compares [`Device`] values.
//!
//! [`Device::Unknown`] is neither a GPU nor the host: clip's size lines name no device, and a paste without the
//! line that says where clip runs (`CLIP using … backend`, its compute buffer) cannot know it. Every place that
//! sums or matches devices decides it explicitly: it is no device row (its memory is counted in the projector's
//! row only), no GPU and not the host, so no finding rests on where it is.
//!
//! The host rule is Ollama's own (llm/llama_server.go, the memory-parsing writer): `CPU`, `BLAS`, `CPU_*` and
//! `*_Host` are host memory (and the breakdown table's `Host` row); every other backend is a GPU, and the
//! suffixes `_Mapped`, `_REPACK` and `_Private` are stripped to find the device (so `Metal_Mapped` and
//! `MTL0_Mapped` are GPU memory on Apple silicon, where memory is unified).

use std::cmp::Ordering;
use std::fmt;

use serde::{Serialize, Serializer};

/// A GPU backend, as ggml names its devices.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Backend {
    Cuda,
    Rocm,
    Vulkan,
    /// Metal devices numbered `MTL0`, `MTL1` (a single Metal device is [`Device::Metal`]).
    Mtl,
    /// A GPU whose backend the log does not say (a vLLM or SGLang rank before its platform line, `on device 0`
    /// of an allocation failure): `GPU0`. A GPU for certain; only its backend is not known.
    Unknown,
    /// Another backend (`SYCL`, `CANN`), kept by the name it printed.
    Named(String),
}

impl Backend {
    fn name(&self) -> &str {
        match self {
            Backend::Cuda => "CUDA",
            Backend::Rocm => "ROCm",
            Backend::Vulkan => "Vulkan",
            Backend::Mtl => "MTL",
            Backend::Unknown => "GPU",
            Backend::Named(n) => n,
        }
    }

    fn from_stem(stem: &str) -> Backend {
        match stem {
            "CUDA" => Backend::Cuda,
            "ROCm" => Backend::Rocm,
            "Vulkan" => Backend::Vulkan,
            "MTL" => Backend::Mtl,
            "GPU" => Backend::Unknown,
            other => Backend::Named(other.to_string()),
        }
    }
}

/// Where memory lives. Printed (and serialised) exactly as the runner names it: `CUDA0`, `Metal`, `CPU`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Device {
    /// A GPU of a backend, by index.
    Gpu { backend: Backend, index: u32 },
    /// Apple's Metal device (unified memory).
    Metal,
    /// System memory: every host buffer (`CPU`, `CPU_Mapped`, `CUDA_Host`, the breakdown's `Host`).
    Host,
    /// A device name vramdiff does not know (`Meta()`), kept as printed.
    Other(String),
    /// A device the log does not name: clip's size lines (`load_hparams: model size:`) in a paste without the
    /// line that says where clip runs. Printed and serialised as `unknown`; neither a GPU nor the host.
    Unknown,
}

impl Device {
    /// A GPU of `backend` with `index`.
    pub fn gpu(backend: Backend, index: u32) -> Device {
        Device::Gpu { backend, index }
    }

    /// The device a buffer or device name belongs to: host buffers are [`Device::Host`], GPU buffers lose
    /// their `_Mapped`/`_REPACK`/`_Private` suffix (`Metal_Mapped` → `Metal`, `CUDA1` → CUDA GPU 1).
    pub fn of_buffer(name: &str) -> Device {
        let name = name.trim();
        if is_host_name(name) {
            return Device::Host;
        }
        let stem = ["_Mapped", "_REPACK", "_Private"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        Device::named(stem)
    }

    /// A device by its own name (`CUDA0`, `Metal`, `CPU`); unknown names are kept.
    pub fn named(name: &str) -> Device {
        if name == "Metal" {
            return Device::Metal;
        }
        if is_host_name(name) {
            return Device::Host;
        }
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (stem, number) = name.split_at(name.len() - digits);
        // `CUDA00` would not print back the same: keep such names as they are.
        let canonical = !number.is_empty() && (number == "0" || !number.starts_with('0'));
        match number.parse::<u32>() {
            Ok(index)
                if canonical
                    && !stem.is_empty()
                    && stem.chars().all(|c| c.is_ascii_alphabetic()) =>
            {
                Device::gpu(Backend::from_stem(stem), index)
            }
            _ => Device::Other(name.to_string()),
        }
    }

    /// The device Ollama's estimator means by GPU `index` of a library (`cuda` → `CUDA0`, `rocm` → `ROCm0`,
    /// `metal` → `Metal`, `cpu` → the host). `gpu` (the E1–E3 estimate's word) is read as CUDA.
    pub fn for_library(library: &str, index: usize) -> Device {
        let index = index as u32;
        match library.to_ascii_lowercase().as_str() {
            "cuda" | "gpu" => Device::gpu(Backend::Cuda, index),
            "rocm" | "hip" => Device::gpu(Backend::Rocm, index),
            "vulkan" => Device::gpu(Backend::Vulkan, index),
            "metal" if index == 0 => Device::Metal,
            "metal" => Device::gpu(Backend::Mtl, index),
            "cpu" => Device::Host,
            other => Device::gpu(Backend::Named(other.to_string()), index),
        }
    }

    /// True for system memory.
    pub fn is_host(&self) -> bool {
        matches!(self, Device::Host)
    }

    /// True for Apple's Metal device, or one of its virtual devices (`MTL0`…, one GPU's unified memory).
    pub fn is_metal(&self) -> bool {
        matches!(
            self,
            Device::Metal
                | Device::Gpu {
                    backend: Backend::Mtl,
                    ..
                }
        )
    }

    /// True for a GPU whose backend the log did not say (`GPU0`).
    pub fn is_unknown_gpu(&self) -> bool {
        matches!(
            self,
            Device::Gpu {
                backend: Backend::Unknown,
                ..
            }
        )
    }

    /// True for a GPU (Metal included); false for the host and for a device the log does not name.
    pub fn is_gpu(&self) -> bool {
        !matches!(self, Device::Host | Device::Unknown)
    }

    /// False for a device the log does not name ([`Device::Unknown`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Device::Unknown)
    }

    /// The device's position among the load's GPUs: CUDA GPU 1 → 1, `Metal` → 0; `None` for the host.
    pub fn position(&self) -> Option<usize> {
        match self {
            Device::Gpu { index, .. } => Some(*index as usize),
            Device::Metal | Device::Other(_) => Some(0),
            Device::Host | Device::Unknown => None,
        }
    }

    /// The same kind of device at another position (`CUDA0` → `CUDA2`), for the GPUs of one load.
    pub fn at(&self, position: usize) -> Device {
        match self {
            Device::Gpu { backend, .. } => Device::gpu(backend.clone(), position as u32),
            Device::Metal if position > 0 => Device::gpu(Backend::Mtl, position as u32),
            other => other.clone(),
        }
    }

    /// Display order: GPUs by backend name and index, then the host, a device the log does not name last.
    fn sort_key(&self) -> (u8, &str, u32) {
        match self {
            Device::Host => (1, "", 0),
            Device::Unknown => (2, "", 0),
            Device::Gpu { backend, index } => (0, backend.name(), *index),
            Device::Metal => (0, "Metal", 0),
            Device::Other(name) => (0, name, 0),
        }
    }
}

/// Ollama's host rule (see the module doc), on a buffer or device name.
fn is_host_name(name: &str) -> bool {
    name == "CPU"
        || name == "BLAS"
        || name == "Host"
        || name.starts_with("CPU_")
        || name.ends_with("_Host")
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Gpu { backend, index } => write!(f, "{}{index}", backend.name()),
            Device::Metal => f.write_str("Metal"),
            Device::Host => f.write_str("CPU"),
            Device::Other(name) => f.write_str(name),
            Device::Unknown => f.write_str("unknown"),
        }
    }
}

impl Serialize for Device {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Ord for Device {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key()
            .cmp(&other.sort_key())
            .then_with(|| self.to_string().cmp(&other.to_string()))
    }
}

impl PartialOrd for Device {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_rule() {
        for host in [
            "CPU",
            "CPU_Mapped",
            "CPU_REPACK",
            "CUDA_Host",
            "ROCm_Host",
            "Vulkan_Host",
            "BLAS",
            "Host",
        ] {
            assert!(Device::of_buffer(host).is_host(), "{host}");
        }
        for gpu in [
            "CUDA0",
            "ROCm1",
            "Metal",
            "Metal_Mapped",
            "MTL0_Mapped",
            "Vulkan0",
            "Meta()",
        ] {
            assert!(Device::of_buffer(gpu).is_gpu(), "{gpu}");
        }
    }

    #[test]
    fn names_print_back_as_the_runner_printed_them() {
        for name in [
            "CUDA0", "CUDA12", "ROCm1", "Vulkan0", "MTL1", "Metal", "CPU", "Meta()", "SYCL0",
            "GPU0", "CUDA00",
        ] {
            assert_eq!(Device::named(name).to_string(), name);
        }
        assert_eq!(Device::of_buffer("Metal_Mapped"), Device::Metal);
        assert_eq!(Device::of_buffer("Metal_Private"), Device::Metal);
        assert_eq!(Device::of_buffer("CUDA_Host"), Device::Host);
        assert_eq!(Device::for_library("cuda", 1).to_string(), "CUDA1");
        assert_eq!(Device::for_library("metal", 0), Device::Metal);
        assert_eq!(Device::for_library("cpu", 0), Device::Host);
    }

    #[test]
    fn sort_puts_host_last_and_indices_numerically() {
        let mut v: Vec<Device> = ["CPU", "CUDA10", "CUDA2", "CUDA0"]
            .map(Device::named)
            .to_vec();
        v.sort();
        let names: Vec<String> = v.iter().map(Device::to_string).collect();
        assert_eq!(names, ["CUDA0", "CUDA2", "CUDA10", "CPU"]);
    }

    #[test]
    fn a_device_the_log_does_not_name_is_neither_a_gpu_nor_the_host() {
        let unknown = Device::Unknown;
        assert!(!unknown.is_gpu() && !unknown.is_host() && !unknown.is_known());
        assert_eq!(unknown.to_string(), "unknown");
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "\"unknown\"");
        assert_eq!(unknown.position(), None);
        assert_eq!(unknown.at(1), Device::Unknown);
        let mut v = vec![Device::Unknown, Device::Host, Device::named("CUDA0")];
        v.sort();
        assert_eq!(v, [Device::named("CUDA0"), Device::Host, Device::Unknown]);
        // A GPU of unnamed backend (a rank's `GPU0`) stays a GPU.
        assert!(Device::named("GPU0").is_gpu() && Device::named("GPU0").is_known());
    }

    #[test]
    fn positions() {
        assert_eq!(Device::named("CUDA1").position(), Some(1));
        assert_eq!(Device::Metal.position(), Some(0));
        assert_eq!(Device::Host.position(), None);
        assert_eq!(Device::named("CUDA0").at(2).to_string(), "CUDA2");
    }
}
