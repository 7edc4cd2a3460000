//! What the monitor saw on each of a load's GPUs, beside what the estimate charged and the buffers the runner
//! reported. The gap between "used" and the buffers is memory no log line accounts for: the CUDA context,
//! cuBLAS workspaces, staging buffers, or other processes. These rows make that gap explicit per GPU.

use serde::Serialize;

use super::device::Device;

use super::quantity::Quantity;
use super::snapshot::SmiFormat;

/// How a load's device was matched to a GPU in a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuJoin {
    /// The log's `GPU-…` id equals the capture's UUID.
    Uuid,
    /// The log's `pci_id` equals the capture's bus id.
    Bus,
    /// Only the position matched (the runner's `CUDA1` to the capture's GPU 1): trustworthy on identical
    /// cards, a guess on mixed ones, because nvidia-smi orders by PCI bus and CUDA fastest-first.
    Index,
}

impl GpuJoin {
    pub fn as_str(self) -> &'static str {
        match self {
            GpuJoin::Uuid => "uuid",
            GpuJoin::Bus => "bus",
            GpuJoin::Index => "index",
        }
    }
}

/// Which capture a row comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaptureRef {
    /// The input the capture was read from (the log itself when it was pasted into it).
    pub path: String,
    pub line: u64,
    pub format: SmiFormat,
    pub timestamp: Option<String>,
}

/// One of a load's GPUs as the monitor saw it.
#[derive(Debug, Clone, Serialize)]
pub struct ObservedRow {
    /// The load's device (`CUDA0`).
    pub device: Device,
    /// The GPU's UUID when either side printed it.
    pub gpu_id: Option<String>,
    pub join: GpuJoin,
    /// Product name as the capture printed it.
    pub name: Option<String>,
    /// Memory in use on the whole GPU (every process, plus the driver).
    pub used: Option<Quantity>,
    pub total: Option<Quantity>,
    /// Memory in use on this GPU in an earlier capture taken while the runner was not loaded (idle baseline).
    pub baseline: Option<Quantity>,
    /// The estimate's allocation for this device (as in the device row).
    pub estimated: Option<Quantity>,
    /// The runner's reported buffers on this device (as in the device row).
    pub buffers: Option<Quantity>,
    /// Memory the process table attributes to the runner (`ollama_llama_server`, `ollama runner`,
    /// `llama-server`); `null` without a usable process table.
    pub runner_process: Option<Quantity>,
    /// Memory the process table attributes to every other process on this GPU.
    pub other_processes: Option<Quantity>,
    /// Memory no log line accounts for: runner process − buffers when the process table names the runner,
    /// else used − baseline − buffers.
    pub unattributed: Option<Quantity>,
    /// How `unattributed` was computed, in words.
    pub unattributed_from: String,
    pub capture: CaptureRef,
    /// Capture lines the row rests on (the GPU's memory row, the runner's process rows).
    pub lines: Vec<u64>,
}
