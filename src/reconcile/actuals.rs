//! What the runner actually allocated, per component and per device, from buffer lines or, where a
//! llama-server load printed no buffer lines, from its memory breakdown table.

use crate::model::{Actual, Buffer, BufferKind, Device, Quantity};

/// An actual figure and the words that say what was summed.
#[derive(Debug, Clone)]
pub struct Sum {
    pub value: Option<Quantity>,
    pub from: String,
    pub lines: Vec<u64>,
}

fn describe(buffers: &[&Buffer]) -> String {
    let mut parts: Vec<String> = buffers
        .iter()
        .map(|b| format!("{} {}", b.buffer, crate::model::human(b.size.bytes)))
        .collect();
    if parts.len() > 6 {
        let more = parts.len() - 5;
        parts.truncate(5);
        parts.push(format!("… {more} more"));
    }
    parts.join(" + ")
}

/// Sum the buffers that satisfy `keep`; the description names each buffer.
pub fn sum_buffers(actual: &Actual, what: &str, keep: impl Fn(&Buffer) -> bool) -> Sum {
    let picked: Vec<&Buffer> = actual.buffers.iter().filter(|b| keep(b)).collect();
    if picked.is_empty() {
        return Sum {
            value: None,
            from: format!("no {what} lines in the log"),
            lines: Vec::new(),
        };
    }
    Sum {
        value: Quantity::sum(picked.iter().map(|b| b.size)),
        from: format!("{what}: {}", describe(&picked)),
        lines: picked.iter().map(|b| b.line).collect(),
    }
}

/// Sum a column of the breakdown table over the rows that satisfy `keep`.
pub fn sum_breakdown(
    actual: &Actual,
    what: &str,
    column: impl Fn(&crate::model::BreakdownRow) -> Quantity,
    keep: impl Fn(&crate::model::BreakdownRow) -> bool,
) -> Sum {
    let rows: Vec<_> = actual.breakdown.iter().filter(|r| keep(r)).collect();
    if rows.is_empty() {
        return Sum {
            value: None,
            from: format!("no {what} in the memory breakdown"),
            lines: Vec::new(),
        };
    }
    Sum {
        value: Quantity::sum(rows.iter().map(|r| column(r))),
        from: format!(
            "{what} from the memory breakdown table ({})",
            rows.iter()
                .map(|r| r.device.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        lines: rows.iter().map(|r| r.line).collect(),
    }
}

/// The weights counted twice when the model file is mapped (mmap on) and llama.cpp repacks some of its tensors
/// for the CPU: the `CPU_REPACK` buffer is a copy of tensors whose bytes the mapped file (`CPU_Mapped`) holds
/// as well, and llama.cpp reads only the copy after the load. The two are one set of weights: the `--fit` plan
/// counts them once (the host's model column without the repacked tensors, plus `CPU_REPACK`), while the
/// buffers and the table at exit count the mapped file whole. Measured with the real llama.cpp (b11549,
/// `tests/data/oracle/README.md`): a 55.32 MiB Q4_K model maps 55.32 MiB and repacks 34.88 MiB with mmap on,
/// and allocates 20.45 + 34.88 MiB with it off. The bytes to take out and the words that say why; `None`
/// without both kinds of buffer.
fn repacked_view(actual: &Actual) -> Option<(Quantity, String)> {
    let host_weights = |suffix: &str| -> Vec<&Buffer> {
        actual
            .buffers
            .iter()
            .filter(|b| {
                b.kind == BufferKind::Model
                    && b.host
                    && !b.projector
                    && !is_draft(b)
                    && b.buffer.ends_with(suffix)
            })
            .collect()
    };
    let (mapped, repacked) = (host_weights("_Mapped"), host_weights("_REPACK"));
    let mapped_sum = Quantity::sum(mapped.iter().map(|b| b.size))?;
    let repacked_sum = Quantity::sum(repacked.iter().map(|b| b.size))?;
    let view = if repacked_sum.bytes <= mapped_sum.bytes {
        repacked_sum
    } else {
        mapped_sum
    };
    let why = format!(
        "{} counted once: a repacked copy of weights the mapped file ({}) holds too",
        describe(&repacked),
        describe(&mapped)
    );
    Some((view, why))
}

/// Take the mapped file's view of the repacked tensors ([`repacked_view`]) out of a sum of host buffers that
/// holds both.
pub fn without_repacked_view(mut sum: Sum, actual: &Actual) -> Sum {
    if let (Some(value), Some((view, why))) = (sum.value, repacked_view(actual)) {
        sum.value = Some(value.minus(view));
        sum.from.push_str(&format!("; {why}"));
    }
    sum
}

/// True when the load has buffer lines (then the breakdown table is only a cross-check).
pub fn has_buffers(actual: &Actual) -> bool {
    !actual.buffers.is_empty()
}

/// A buffer of a speculative draft's own context (after `creating … draft context`, `load::events`).
pub fn is_draft(b: &Buffer) -> bool {
    b.component == "draft"
}

pub fn is_kv(b: &Buffer) -> bool {
    matches!(b.kind, BufferKind::Kv | BufferKind::Rs)
}

/// Every device that holds an actual allocation, GPUs first. A buffer on a device the log does not name
/// (clip's, `load::clip_device`) makes no row: it is no GPU's and not the host's, so no per-device sum, delta or
/// capture is set against it; the projector's component row counts it.
pub fn devices(actual: &Actual) -> Vec<Device> {
    let mut devices: Vec<Device> = actual
        .buffers
        .iter()
        .map(|b| b.device.clone())
        .filter(Device::is_known)
        .collect();
    if actual.buffers.is_empty() {
        devices.extend(actual.breakdown.iter().map(|r| r.device.clone()));
    }
    devices.sort();
    devices.dedup();
    devices
}

/// All memory on one device. With `without_output`, output (logits) buffers are left out and named: the
/// `--fit` tables count model + context + compute only, so a like-for-like comparison leaves them out. With
/// `without_draft`, so are a speculative draft's buffers: the `--fit` figures leave the draft out (llama-server
/// adds its `[spec]` estimate to the target instead), and a log without that estimate line has nothing to set
/// beside them.
pub fn device_total(
    actual: &Actual,
    device: &Device,
    without_output: bool,
    without_draft: bool,
) -> Sum {
    if has_buffers(actual) {
        let mut sum = sum_buffers(actual, "buffers", |b| {
            b.device == *device
                && !(without_output && b.kind == BufferKind::Output)
                && !(without_draft && is_draft(b))
        });
        let draft_out = Quantity::sum(
            actual
                .buffers
                .iter()
                .filter(|b| without_draft && b.device == *device && is_draft(b))
                .map(|b| b.size),
        );
        if let Some(q) = draft_out {
            sum.from.push_str(&format!(
                "; draft buffers ({}) not counted: the --fit figures leave the draft out and no [spec] estimate of it is in the log",
                crate::model::human(q.bytes)
            ));
        }
        let left_out = Quantity::sum(
            actual
                .buffers
                .iter()
                .filter(|b| without_output && b.device == *device && b.kind == BufferKind::Output)
                .map(|b| b.size),
        );
        if let Some(q) = left_out {
            sum.from.push_str(&format!(
                "; output buffers ({}) not counted: the --fit table leaves them out",
                crate::model::human(q.bytes)
            ));
        }
        if device.is_host() {
            without_repacked_view(sum, actual)
        } else {
            sum
        }
    } else {
        sum_breakdown(
            actual,
            "self (model + context + compute)",
            |r| r.self_,
            |r| r.device == *device,
        )
    }
}
