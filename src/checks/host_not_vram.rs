//! `host-not-vram` (info): host buffers (`CPU_Mapped`, `CUDA_Host`, `CPU`) that a naive sum of buffer lines
//! would count as VRAM.

use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, Quantity, Severity};

pub const DEF: CheckDef = CheckDef {
    code: "host-not-vram",
    summary: "host buffers that a naive sum of the buffer lines would count as VRAM",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let host: Vec<_> = cx
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.host && b.size.bytes > 0)
        .collect();
    let Some(total) = Quantity::sum(host.iter().map(|b| b.size)) else {
        return;
    };
    let mut names: Vec<&str> = host.iter().map(|b| b.buffer.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    out.push(finding(
        DEF.code,
        Severity::Info,
        format!(
            "{} of the buffers are in host memory ({}), not VRAM; they are not counted on any GPU",
            size(total),
            names.join(", ")
        ),
        "adding every \"buffer size\" line overstates VRAM; only CUDAn/ROCmn/Vulkann/Metal buffers are on the GPU",
        host.iter().map(|b| b.line).collect(),
        None,
        None,
    ));
}
