//! Four views of the memory of one GPU side by side (Ollama ≥ 0.30): Ollama's prediction, llama.cpp's `--fit`
//! plan, the buffers allocated, and the driver's capture — with `ollama ps` as a fifth where the log or `/api/ps`
//! gives it — and what the driver saw that no buffer explains. Part of the JSON contract as
//! `loads[].gpu_views` (an addition of schema_version 1).

use serde::Serialize;

use super::device::Device;
use super::quantity::Quantity;

/// One GPU's row (or, with `device` absent, the row of every GPU together).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuView {
    /// The GPU; none for the row of all GPUs together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Ollama's prediction: on the GPU it chose alone, or for all GPUs together (it predicts the whole model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_prediction: Option<Quantity>,
    /// llama.cpp's `--fit` plan for the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llama_cpp_plan: Option<Quantity>,
    /// The buffers allocated on the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffers: Option<Quantity>,
    /// Memory in use as the driver's capture saw it (nvidia-smi, rocm-smi).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<Quantity>,
    /// How the GPU was joined to the capture (`uuid`, `bus`, `index`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_join: Option<&'static str>,
    /// `ollama ps` (a pasted table or `/api/ps`): its share on GPUs, for all GPUs together, and on the row of the
    /// one GPU holding the load's GPU buffers when only one does (`ollama ps` never splits GPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_ps: Option<Quantity>,
    /// What the driver saw that the buffers do not explain (the capture's reading, see `observed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unattributed: Option<Quantity>,
    /// An integrated GPU (`type=iGPU`): its memory is the system's, so the row of all GPUs leaves it out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub integrated: bool,
}
