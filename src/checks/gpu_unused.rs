//! `gpu-unused`: a GPU the server found was rejected (a driver too old for the build, too little memory) or left
//! idle while the load ran on the CPU. When nothing ran on a GPU at all this is an error, because it is the
//! first thing that user must hear: every other figure is about host memory.

use super::{finding, CheckDef, Context};
use crate::model::{Finding, FindingCode, RejectionCause, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::GpuUnused,
    summary: "a GPU was found but rejected or left idle; an error when nothing ran on a GPU at all",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let a = &load.load.actual;
    let gpu_buffers = a
        .buffers
        .iter()
        .any(|b| b.device.is_gpu() && b.size.bytes > 0);
    let gpu_layers = a.offloaded_layers.is_some_and(|n| n > 0);
    // A buffer on a device the log does not name (clip's, `load::clip_device`) may be on a GPU: then nobody can
    // say that nothing ran on one.
    let device_unknown = a.buffers.iter().any(|b| !b.device.is_known());
    // Whether the log shows where the load ran: buffers, a layer count, or a host-only fit plan.
    let measured = !device_unknown
        && (!a.buffers.is_empty()
            || a.offloaded_layers.is_some()
            || load
                .load
                .estimate
                .as_ref()
                .is_some_and(|e| e.fit.is_some() && e.layers.offload == Some(0)));
    let on_gpu = gpu_buffers || gpu_layers;
    let mut unused: Vec<String> = load
        .load
        .rejected_gpus
        .iter()
        .map(|r| format!("{} was rejected: {}", r.name, r.reason))
        .collect();
    let mut lines: Vec<u64> = load.load.rejected_gpus.iter().map(|r| r.line).collect();
    if measured && !on_gpu {
        for g in load.load.gpus.iter().filter(|g| {
            !g.library
                .as_deref()
                .is_some_and(|l| l.eq_ignore_ascii_case("cpu"))
        }) {
            unused.push(format!(
                "{} was found and left idle",
                g.name.clone().unwrap_or_else(|| g.id.clone())
            ));
            lines.push(g.line);
        }
    }
    if unused.is_empty() {
        return;
    }
    let nothing_on_gpu = measured && !on_gpu;
    let driver = load
        .load
        .rejected_gpus
        .iter()
        .any(|r| r.cause == RejectionCause::DriverTooOld);
    let hint = if driver {
        "update the NVIDIA driver to the version the build requires (or run an Ollama build for your driver): until then the GPU is not used"
    } else {
        "check that the runner sees the GPU (CUDA_VISIBLE_DEVICES, the container's --gpus, the driver) and that it has room for at least one layer"
    };
    let message = if nothing_on_gpu {
        format!(
            "nothing ran on a GPU: {}; the whole load is in host memory",
            unused.join("; ")
        )
    } else {
        unused.join("; ")
    };
    lines.sort_unstable();
    lines.dedup();
    lines.retain(|&l| l > 0);
    out.push(finding(
        DEF.code,
        if nothing_on_gpu {
            Severity::Error
        } else {
            Severity::Warning
        },
        message,
        hint,
        lines,
        None,
        None,
    ));
}
