//! What the fit decided: where each layer went, why the fit ended where it did, and each device's use.

use serde::Serialize;

/// Where one layer ends up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Home {
    /// System memory (llama.cpp's CPU buffers), experts included.
    Cpu,
    /// Device `index` (a position in [`super::FitInput::devices`]). `dense_only`: a MoE layer whose expert weights
    /// stay in system memory (llama.cpp's "partial" layer, counted in `n_part`).
    Device { index: usize, dense_only: bool },
}

impl Home {
    /// The device index, `None` on the CPU.
    pub fn device(self) -> Option<usize> {
        match self {
            Home::Cpu => None,
            Home::Device { index, .. } => Some(index),
        }
    }
}

/// Why the outcome is what it is: which step of §5.5 ended the fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitReason {
    /// Step 2: with the default split every device keeps its margin, so nothing changes (`no changes needed`).
    /// With several devices this is how a model one GPU could hold ends up split (ollama#16599).
    NoChangeNeeded,
    /// Step 3: reducing the context (not set by the user) was enough on the one device; layers keep the default
    /// split. With several devices llama.cpp moves layers after the cut ([`FitReason::Filled`]).
    ContextReduced,
    /// Step 4: `-ngl` or a tensor split was given, so the fit could not move layers; the default split stays
    /// even where a device is over its margin (see [`DeviceFit::over_target`]).
    Forced,
    /// Steps 5–6: layers were filled back to front (MoE: dense-only first, then experts converted).
    Filled,
}

impl FitReason {
    /// The reason in words, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            FitReason::NoChangeNeeded => {
                "every device keeps its margin with the default split: no changes needed"
            }
            FitReason::ContextReduced => "the context was reduced; layers keep the default split",
            FitReason::Forced => "-ngl or a tensor split was given: the fit could not move layers",
            FitReason::Filled => "layers were filled back to front, last device first",
        }
    }
}

/// One device's share of a placement, with the figures llama.cpp prints per device
/// (`- CUDA0 (…): L layers, U MiB used, F MiB free`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceFit {
    /// [`super::FitDevice::name`].
    pub name: String,
    /// Layers held, counted as llama.cpp counts them (the output layer included).
    pub layers: usize,
    /// Of these, MoE layers whose experts stay in system memory (llama.cpp's `n_part`).
    pub dense_only: usize,
    /// Index of the first layer held (the output layer is index `n_layer`); `None` without layers.
    pub first: Option<usize>,
    /// Index of the last layer held; a device's layers are always the contiguous range `first..=last`.
    pub last: Option<usize>,
    /// Whether the output layer is here (always the last device holding layers, unless it is on the CPU).
    pub holds_output: bool,
    /// Layers (dense, experts on the device, KV at the outcome's context), output, compute if any layer.
    pub used: i64,
    /// Free memory before the load ([`super::FitDevice::free`]).
    pub free: i64,
    /// `free − used`: what llama.cpp prints as `F MiB free`.
    pub free_left: i64,
    /// The margin the device had to keep ([`super::FitDevice::target`]).
    pub target: i64,
    /// `free_left < target`: the device does not keep its margin. A device whose free memory is already below
    /// its target is flagged even when it holds nothing, as llama.cpp's first check counts it.
    pub over_target: bool,
}

/// The fit's result: where every layer goes, what each device then uses, at which context, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitOutcome {
    /// Which step ended the fit.
    pub reason: FitReason,
    /// Per device, in the input's order.
    pub devices: Vec<DeviceFit>,
    /// Per layer (`n_layer + 1` entries, the output last).
    pub layers: Vec<Home>,
    /// Layers left in system memory (the output layer included when it is there).
    pub cpu_layers: usize,
    /// The context the outcome's KV figures are for.
    pub context: i64,
    /// `Some(configured)` when the fit reduced the context (`context size reduced from A to B`).
    pub context_reduced_from: Option<i64>,
    /// The projection with the user's settings (default split, configured context): llama.cpp's step 1,
    /// `projected to use U MiB of device memory vs. F MiB of free device memory`.
    pub initial: Vec<DeviceFit>,
    /// MoE models that were filled: the devices after the dense-only fill, before experts are converted.
    /// These are the `- CUDA0 (…): L layers, U MiB used, F MiB free` lines llama.cpp prints for a MoE model.
    pub dense_fill: Option<Vec<DeviceFit>>,
}

impl FitOutcome {
    /// Layers on devices (the `L` of `offloaded L/M layers to GPU`; `M` is `layers.len()`).
    pub fn offloaded(&self) -> usize {
        self.layers.len() - self.cpu_layers
    }

    /// Devices holding at least one layer.
    pub fn used_devices(&self) -> usize {
        self.devices.iter().filter(|d| d.layers > 0).count()
    }
}
