//! What a GPU monitor (nvidia-smi, rocm-smi) said the cards held at one moment.
//!
//! The runner's buffers are not all a GPU holds: the CUDA context, cuBLAS workspaces and staging buffers only
//! show up in the monitor's "used" figure. A [`Snapshot`] is one reading of every GPU the capture listed, in
//! whatever format it came (table, CSV, `-q`, XML, rocm-smi), reduced to the fields vramdiff reconciles.
//! Several snapshots in one input (`nvidia-smi -l 5`, a CI log with a capture before and after a load) form a
//! time series in input order.

use serde::Serialize;

use super::quantity::Quantity;

/// The capture format a snapshot was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SmiFormat {
    /// The default `nvidia-smi` table (old ≤ 4xx 79-column or new ≥ 525 89-column layout).
    Table,
    /// `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`.
    QueryGpuCsv,
    /// `nvidia-smi --query-compute-apps=… --format=csv`.
    QueryComputeAppsCsv,
    /// `nvidia-smi -q` (any `-d` subset that includes memory).
    Query,
    /// `nvidia-smi -q -x`.
    QueryXml,
    /// `rocm-smi --showmeminfo vram` (and `--showuse`/`--showproductname` lines around it).
    RocmSmi,
    /// `rocm-smi --showmeminfo vram --json`.
    RocmSmiJson,
}

impl SmiFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SmiFormat::Table => "table",
            SmiFormat::QueryGpuCsv => "query-gpu-csv",
            SmiFormat::QueryComputeAppsCsv => "query-compute-apps-csv",
            SmiFormat::Query => "query",
            SmiFormat::QueryXml => "query-xml",
            SmiFormat::RocmSmi => "rocm-smi",
            SmiFormat::RocmSmiJson => "rocm-smi-json",
        }
    }

    /// The monitor that prints this format, as the user runs it.
    pub fn tool(self) -> &'static str {
        match self {
            SmiFormat::Table
            | SmiFormat::QueryGpuCsv
            | SmiFormat::QueryComputeAppsCsv
            | SmiFormat::Query
            | SmiFormat::QueryXml => "nvidia-smi",
            SmiFormat::RocmSmi | SmiFormat::RocmSmiJson => "rocm-smi",
        }
    }
}

/// One GPU in a snapshot. Every field is optional because every format prints a different subset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SmiGpu {
    /// The monitor's index (nvidia-smi: PCI bus order unless `CUDA_DEVICE_ORDER` says otherwise).
    pub index: Option<u32>,
    /// Product name as printed; may be cut with `...` by the table layout.
    pub name: Option<String>,
    /// `GPU-xxxxxxxx-…` as printed (case kept).
    pub uuid: Option<String>,
    /// PCI bus id normalised to lower case `dddddddd:bb:dd.f` (8-digit domain), so `00000000:04:00.0`,
    /// `0000:04:00.0` and `04:00.0` compare equal.
    pub bus_id: Option<String>,
    /// Frame-buffer memory in use (nvidia-smi MiB are whole numbers, so ±0.5 MiB; rocm-smi bytes are exact).
    pub used: Option<Quantity>,
    pub total: Option<Quantity>,
    /// `-q`/XML `Reserved` (driver-reserved, ≥ 510 drivers), when printed.
    pub reserved: Option<Quantity>,
    pub free: Option<Quantity>,
    /// True for a MIG instance row rather than a whole GPU. Its memory is part of the parent GPU's (listed
    /// separately with `mig: false`), so sum either the whole GPUs or the MIG instances, never both.
    pub mig: bool,
    /// For a MIG instance: its device index within the parent GPU (table `MIG Dev`, `-q`/XML `Index`); the
    /// other identity fields (`index`, `name`, `bus_id`) are the parent's. `None` for a whole GPU.
    pub mig_device: Option<u32>,
    /// Line the GPU's memory figure was read from.
    pub line: u64,
}

/// One process in a snapshot's process table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SmiProcess {
    /// The GPU the process runs on, by whichever key the format printed.
    pub gpu_index: Option<u32>,
    pub gpu_uuid: Option<String>,
    /// Normalised like [`SmiGpu::bus_id`].
    pub gpu_bus_id: Option<String>,
    pub pid: Option<u32>,
    /// Process name as printed (may be a path, may be cut with `...`).
    pub name: String,
    /// `None` when the format printed `N/A` (Windows WDDM) or `[Not Supported]`.
    pub used: Option<Quantity>,
    pub line: u64,
}

/// One reading of the GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub format: SmiFormat,
    /// First line of the capture in its input.
    pub line: u64,
    /// Last line of the capture in its input.
    pub end_line: u64,
    /// The capture's own timestamp, as printed (`Thu Jul 31 08:32:16 2025`, `2025/07/31 08:32:16.123`).
    pub timestamp: Option<String>,
    pub driver_version: Option<String>,
    /// GPUs listed (empty for a process-only capture such as `--query-compute-apps`).
    pub gpus: Vec<SmiGpu>,
    /// `None` when the capture has no process table; `Some(vec![])` for "No running processes found".
    pub processes: Option<Vec<SmiProcess>>,
}

/// Normalise a PCI bus id to lower case `dddddddd:bb:dd.f`. Returns `None` for text that is not a bus id.
pub fn normalize_bus_id(text: &str) -> Option<String> {
    let text = text.trim();
    let (domain, rest) = match text.matches(':').count() {
        2 => text.split_once(':')?,
        1 => ("0", text),
        _ => return None,
    };
    let (bus, devfn) = rest.split_once(':')?;
    let (dev, func) = devfn.split_once('.')?;
    let hex = |s: &str, max_len: usize| {
        (!s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(s, 16).ok())
            .flatten()
    };
    let (domain, bus, dev, func) = (hex(domain, 8)?, hex(bus, 2)?, hex(dev, 2)?, hex(func, 1)?);
    Some(format!("{domain:08x}:{bus:02x}:{dev:02x}.{func:x}"))
}

/// UUIDs compare case-insensitively; ROCm discovery prints a shortened id (`GPU-9abb57639fa80c50`), so a prefix
/// of at least 12 hex digits matches.
pub fn same_uuid(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace('-', "");
    let (a, b) = (norm(a), norm(b));
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.len() >= 15 && long.starts_with(&short)
}

impl SmiProcess {
    /// The one rule joining a process row to a GPU: by UUID when both print one, else by PCI bus id when
    /// both print one, else by index. A process is on at most the GPU its strongest key names.
    pub fn runs_on(&self, g: &SmiGpu) -> bool {
        let p = self;
        let eq = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
        let uuid = match (&p.gpu_uuid, &g.uuid) {
            (Some(a), Some(b)) => Some(same_uuid(a, b)),
            _ => None,
        };
        uuid.or_else(|| {
            (p.gpu_bus_id.is_some() && g.bus_id.is_some()).then(|| eq(&p.gpu_bus_id, &g.bus_id))
        })
        .or_else(|| p.gpu_index.zip(g.index).map(|(a, b)| a == b))
        .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_from_every_format_compare_equal() {
        // Table and -q print 8-digit domains, XML too; CSV `pci.bus_id` the same; sysfs and lspci 4 or none.
        let want = Some("00000000:04:00.0".to_string());
        assert_eq!(normalize_bus_id("00000000:04:00.0"), want);
        assert_eq!(normalize_bus_id("0000:04:00.0"), want);
        assert_eq!(normalize_bus_id("04:00.0"), want);
        assert_eq!(
            normalize_bus_id("00000000:00:1E.0"),
            Some("00000000:00:1e.0".into())
        );
        assert_eq!(normalize_bus_id("GPU-78b84756"), None);
        assert_eq!(normalize_bus_id("0:0"), None);
        assert_eq!(normalize_bus_id(""), None);
    }

    #[test]
    fn a_process_is_on_the_gpu_its_strongest_key_names() {
        // nvidia-smi `--query-compute-apps=gpu_uuid,…` beside a table whose indices follow another order
        // (`CUDA_DEVICE_ORDER`): the UUID decides, the index does not put the process on a second GPU.
        let gpu = |index, uuid: &str| SmiGpu {
            index: Some(index),
            uuid: Some(uuid.to_string()),
            ..SmiGpu::default()
        };
        let (g0, g1) = (
            gpu(0, "GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27"),
            gpu(1, "GPU-1e96b0d4-5c2a-8f31-77e0-a9d1c4b2e608"),
        );
        let p = SmiProcess {
            gpu_index: Some(0),
            gpu_uuid: Some("GPU-1e96b0d4-5c2a-8f31-77e0-a9d1c4b2e608".into()),
            name: "ollama".into(),
            ..SmiProcess::default()
        };
        assert!(p.runs_on(&g1) && !p.runs_on(&g0));
        // Without a UUID on both sides, the index decides.
        let by_index = SmiProcess {
            gpu_index: Some(0),
            ..SmiProcess::default()
        };
        assert!(by_index.runs_on(&SmiGpu {
            index: Some(0),
            ..SmiGpu::default()
        }));
    }

    #[test]
    fn uuid_prefixes_match_only_when_long_enough() {
        assert!(same_uuid(
            "GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27",
            "gpu-7C3A1F52-9e04-2b6d-4a81-d05e3c9b6f27"
        ));
        assert!(same_uuid(
            "GPU-9abb57639fa80c50",
            "GPU-9abb5763-9fa8-0c50-1111-222233334444"
        ));
        assert!(!same_uuid(
            "GPU-7c3a",
            "GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27"
        ));
    }
}
