//! `host-not-vram` (info): host buffers (`CPU_Mapped`, `CUDA_Host`, `CPU`) that a naive sum of buffer lines
//! would count as VRAM.

use super::{finding, size, CheckDef, Context};
use crate::model::{Device, Finding, FindingCode, Part, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::HostNotVram,
    summary: "host buffers that a naive sum of the buffer lines would count as VRAM",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(total) = cx.load.grid.on(&Device::Host, &Part::ALL) else {
        return;
    };
    if total.size.bytes <= 0 {
        return;
    }
    let host = cx
        .load
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.host && b.size.bytes > 0);
    let mut names: Vec<&str> = host.map(|b| b.buffer.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    out.push(finding(
        DEF.code,
        Severity::Info,
        format!(
            "{} of the buffers are in host memory ({}), not VRAM; they are not counted on any GPU",
            size(total.size),
            names.join(", ")
        ),
        "adding every \"buffer size\" line overstates VRAM; only CUDAn/ROCmn/Vulkann/Metal buffers are on the GPU",
        total.lines,
        None,
        None,
    ));
}
