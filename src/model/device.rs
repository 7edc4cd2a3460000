//! Device and buffer naming: which buffer names are VRAM and which are host memory, and what device a
//! buffer belongs to.
//!
//! The rule is Ollama's own (llm/llama_server.go, the memory-parsing writer): `CPU`, `BLAS`, `CPU_*` and
//! `*_Host` are host memory; every other backend is a GPU, and the suffixes `_Mapped`, `_REPACK` and
//! `_Private` are stripped to find the device (so `Metal_Mapped` and `MTL0_Mapped` are GPU memory on Apple
//! silicon, where memory is unified).

/// The name used for the row that collects every host-memory buffer.
pub const HOST_DEVICE: &str = "CPU";

/// True when a buffer with this backend name lives in host memory, not VRAM.
pub fn is_host_buffer(name: &str) -> bool {
    name == "CPU"
        || name == "BLAS"
        || name.starts_with("CPU_")
        || name.ends_with("_Host")
        || name == "Host"
}

/// The device a buffer belongs to: host buffers map to [`HOST_DEVICE`], GPU buffers lose their
/// `_Mapped`/`_REPACK`/`_Private` suffix (`Metal_Mapped` → `Metal`).
pub fn device_of_buffer(name: &str) -> String {
    if is_host_buffer(name) {
        return HOST_DEVICE.to_string();
    }
    for suffix in ["_Mapped", "_REPACK", "_Private"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    name.to_string()
}

/// The backend device name for GPU `index` of a library as Ollama's estimate lists it
/// (`cuda` → `CUDA0`, `rocm` → `ROCm0`, `metal` → `Metal`).
pub fn device_for_library(library: &str, index: usize) -> String {
    match library.to_ascii_lowercase().as_str() {
        "cuda" => format!("CUDA{index}"),
        "rocm" | "hip" => format!("ROCm{index}"),
        "vulkan" => format!("Vulkan{index}"),
        "metal" if index == 0 => "Metal".to_string(),
        "metal" => format!("MTL{index}"),
        "cpu" => HOST_DEVICE.to_string(),
        other => format!("{other}{index}"),
    }
}

/// The position of a runner device among the load's GPUs: `CUDA1` → 1, `Metal` → 0; `None` for the host.
pub fn device_position(device: &str) -> Option<usize> {
    if device == HOST_DEVICE {
        return None;
    }
    let digits = device.trim_start_matches(|c: char| !c.is_ascii_digit());
    if digits.is_empty() {
        return Some(0);
    }
    digits.parse().ok()
}

/// Order devices for display: GPUs by backend and index, the host row last.
pub fn device_sort_key(name: &str) -> (u8, String, u64) {
    if name == HOST_DEVICE {
        return (1, String::new(), 0);
    }
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, num) = name.split_at(name.len() - digits);
    (0, stem.to_string(), num.parse().unwrap_or(0))
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
        ] {
            assert!(is_host_buffer(host), "{host}");
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
            assert!(!is_host_buffer(gpu), "{gpu}");
        }
    }

    #[test]
    fn mapped_suffix_is_stripped() {
        assert_eq!(device_of_buffer("Metal_Mapped"), "Metal");
        assert_eq!(device_of_buffer("Metal_Private"), "Metal");
        assert_eq!(device_of_buffer("CUDA_Host"), "CPU");
    }

    #[test]
    fn sort_puts_host_last_and_indices_numerically() {
        let mut v = vec!["CPU", "CUDA10", "CUDA2", "CUDA0"];
        v.sort_by_key(|d| device_sort_key(d));
        assert_eq!(v, ["CUDA0", "CUDA2", "CUDA10", "CPU"]);
    }
}
