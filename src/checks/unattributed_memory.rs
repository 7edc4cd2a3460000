//! `unattributed-memory`: nvidia-smi shows much more in use on a GPU than the runner's buffers account for
//! (CUDA context, cuBLAS workspaces, staging buffers), per GPU.

use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::UnattributedMemory,
    summary: "nvidia-smi shows much more than the buffers on a GPU (context, runtime), with the per-GPU figure",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let starts_mid_load = load
        .source
        .partial_reasons
        .contains(&crate::model::PartialReason::StartsMidLoad);
    // A runner that logs no KV cache (Ollama's engine before 0.11.5): without an estimate whose KV bounds it
    // (`reconcile`'s `kv_missing`), memory beyond the buffers may be the KV cache itself.
    let kv_unlogged = !load.actual.buffers.is_empty()
        && !load.actual.buffers.iter().any(|b| {
            matches!(
                b.kind,
                crate::model::BufferKind::Kv | crate::model::BufferKind::Rs
            )
        })
        && load.estimate.as_ref().and_then(|e| e.kv).is_none();
    if kv_unlogged {
        return;
    }
    // Buffers on a device the log does not name (clip's, `load::clip_device`) may be on any GPU: what a GPU
    // holds beyond its own buffers may be them, so they come off the low end of every GPU's figure.
    let unplaced = crate::model::Quantity::sum(
        load.actual
            .buffers
            .iter()
            .filter(|b| !b.device.is_known())
            .map(|b| b.size),
    );
    for o in &cx.load.observed {
        let Some(u) = o.unattributed else { continue };
        let u = match unplaced {
            Some(q) => {
                crate::model::Quantity::with_bounds(u.bytes, u.low.saturating_sub(q.high), u.high)
            }
            None => u,
        };
        if u.low < cx.config.unattributed_bytes {
            continue;
        }
        // A log that starts inside the load, with no weights on this device: the runner's buffers before the
        // cut (the weights come first, then the KV cache) are not in it, so what is "beyond" them is unknown.
        let weights_seen = load
            .actual
            .buffers
            .iter()
            .any(|b| b.device == o.device && b.kind == crate::model::BufferKind::Model);
        if starts_mid_load && !weights_seen {
            continue;
        }
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{}: nvidia-smi shows {} beyond the runner's buffers ({})",
                o.device,
                size(u),
                o.unattributed_from
            ),
            "the estimate's per-GPU minimum does not cover this; reserve it with OLLAMA_GPU_OVERHEAD or find the other allocation (KV cache not logged? another process?)",
            o.lines.clone(),
            Some(&o.device),
            None,
        ));
    }
}
