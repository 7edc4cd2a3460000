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

/// Every device that holds an actual allocation, GPUs first.
pub fn devices(actual: &Actual) -> Vec<Device> {
    let mut devices: Vec<Device> = actual.buffers.iter().map(|b| b.device.clone()).collect();
    if actual.buffers.is_empty() {
        devices.extend(actual.breakdown.iter().map(|r| r.device.clone()));
    }
    devices.sort();
    devices.dedup();
    devices
}

/// All memory on one device. With `without_output`, output (logits) buffers are left out and named: the
/// `--fit` tables count model + context + compute only, so a like-for-like comparison leaves them out.
pub fn device_total(actual: &Actual, device: &Device, without_output: bool) -> Sum {
    if has_buffers(actual) {
        let mut sum = sum_buffers(actual, "buffers", |b| {
            b.device == *device && !(without_output && b.kind == BufferKind::Output)
        });
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
        sum
    } else {
        sum_breakdown(
            actual,
            "self (model + context + compute)",
            |r| r.self_,
            |r| r.device == *device,
        )
    }
}
