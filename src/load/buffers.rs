//! The buffer ledger of one load: which allocation lines count and which a later line replaced.
//!
//! llama.cpp can print the same buffer more than once in one load, for three different reasons, and each
//! needs its own rule:
//! - **fit probes** (llama-server `--fit`, Ollama's fit/alloc/commit): the whole sequence model → KV →
//!   compute is printed again. A model-weights line that follows other kinds of lines opens a new *round*,
//!   and a buffer printed in a later round replaces the one from an earlier round (Ollama's own rule: the
//!   last value per component, buffer and kind wins; peer vectors 302, 303). A buffer printed only in an
//!   earlier round (the output buffer in 303) stays.
//! - **several buffers of one kind** inside a round (two KV caches for sliding-window models, peer vectors
//!   314 and 317; weights split over two host buffers, corpus 025) are all real allocations: they add up.
//! - **re-reservation** of a compute or output buffer inside a round (peer vector 316) replaces the earlier
//!   size; the earlier sizes are kept as the buffer's bounds, since which one is live cannot be known.

use crate::model::{Buffer, BufferKind, Device, Quantity};

#[derive(Debug, Clone)]
struct Entry {
    buffer: Buffer,
    round: u32,
}

/// All buffers of one load, with the replacement rules applied as lines arrive.
#[derive(Debug, Default, Clone)]
pub struct BufferLedger {
    entries: Vec<Entry>,
    round: u32,
    non_model_seen_in_round: bool,
    /// Buffers allocated twice in one round (both counted), for the load's notes.
    pub duplicates: Vec<DuplicateBuffer>,
}

/// A second buffer of the same component, kind and device in one round: a separate allocation, counted.
#[derive(Debug, Clone)]
pub struct DuplicateBuffer {
    pub line: u64,
    pub component: String,
    pub kind: BufferKind,
    pub buffer: String,
}

impl std::fmt::Display for DuplicateBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: a second {} {} buffer on {} in the same round; both are counted (separate allocations)",
            self.line,
            self.component,
            self.kind.as_str(),
            self.buffer
        )
    }
}

/// One allocation line, as the parser saw it.
pub struct BufferLine<'a> {
    pub component: &'a str,
    pub buffer: &'a str,
    /// The device, when the line names it apart from the buffer (clip's size lines name none: `Device::Unknown`
    /// until a line of the load says where clip runs); `None` derives it from the buffer name.
    pub device: Option<Device>,
    pub kind: BufferKind,
    pub size: Quantity,
    pub line: u64,
    pub projector: bool,
}

fn same_key(b: &Buffer, line: &BufferLine<'_>) -> bool {
    b.component == line.component && b.buffer == line.buffer && b.kind == line.kind
}

fn new_buffer(line: &BufferLine<'_>) -> Buffer {
    let device = line
        .device
        .clone()
        .unwrap_or_else(|| Device::of_buffer(line.buffer));
    Buffer {
        host: device.is_host(),
        device,
        buffer: line.buffer.to_string(),
        kind: line.kind,
        size: line.size,
        line: line.line,
        component: line.component.to_string(),
        projector: line.projector,
        superseded: Vec::new(),
    }
}

impl BufferLedger {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The buffers that count so far.
    pub fn buffers(&self) -> impl Iterator<Item = &Buffer> {
        self.entries.iter().map(|e| &e.buffer)
    }

    /// Record one allocation line.
    pub fn add(&mut self, line: BufferLine<'_>) {
        if line.kind == BufferKind::Model {
            if self.non_model_seen_in_round {
                self.round += 1;
                self.non_model_seen_in_round = false;
            }
        } else {
            self.non_model_seen_in_round = true;
        }
        let round = self.round;
        // A later round replaces every earlier-round buffer of the same key.
        self.entries
            .retain(|e| !(e.round < round && same_key(&e.buffer, &line)));
        let adds_up = matches!(
            line.kind,
            BufferKind::Model | BufferKind::Kv | BufferKind::Rs | BufferKind::Lora
        );
        if !adds_up {
            if let Some(existing) = self
                .entries
                .iter_mut()
                .find(|e| e.round == round && same_key(&e.buffer, &line))
            {
                let previous = existing.buffer.size;
                existing.buffer.superseded.push(previous);
                let all = existing
                    .buffer
                    .superseded
                    .iter()
                    .copied()
                    .chain([line.size]);
                let low = all.clone().map(|q| q.low).min().unwrap_or(line.size.low);
                let high = all.map(|q| q.high).max().unwrap_or(line.size.high);
                existing.buffer.size = Quantity::with_bounds(line.size.bytes, low, high);
                existing.buffer.line = line.line;
                return;
            }
        } else if self
            .entries
            .iter()
            .any(|e| e.round == round && same_key(&e.buffer, &line))
        {
            self.duplicates.push(DuplicateBuffer {
                line: line.line,
                component: line.component.to_string(),
                kind: line.kind,
                buffer: line.buffer.to_string(),
            });
        }
        self.entries.push(Entry {
            buffer: new_buffer(&line),
            round,
        });
    }

    /// Replace-by-key for sources that print one line per buffer and may repeat it whole (the Ollama
    /// engine's `model weights`/`compute graph` lines, the memory summary): the last value wins.
    pub fn set_last(&mut self, line: BufferLine<'_>) {
        self.entries.retain(|e| !same_key(&e.buffer, &line));
        self.entries.push(Entry {
            buffer: new_buffer(&line),
            round: self.round,
        });
    }

    /// The buffers that count, in the order they were first printed. An earlier round's buffer that the last
    /// round did not reprint counts only when the last round got past its stage (model → KV, recurrent state
    /// and output → compute): when the log (or the pasted window) stops inside the last round, the earlier
    /// round's buffers of the stage it stopped in and of those still to come are a probe's, which the rest of
    /// the round would replace.
    pub fn into_buffers(self) -> Vec<Buffer> {
        let last = self.round;
        let reached = self
            .entries
            .iter()
            .filter(|e| e.round == last)
            .map(|e| stage(e.buffer.kind))
            .max();
        let mut entries = self.entries;
        if let Some(reached) = reached.filter(|_| last > 0) {
            entries.retain(|e| e.round == last || stage(e.buffer.kind) < reached);
        }
        entries.sort_by_key(|e| e.buffer.line);
        entries.into_iter().map(|e| e.buffer).collect()
    }
}

/// The stage of a round a buffer kind is printed in: the compute reservation comes last.
fn stage(kind: BufferKind) -> u8 {
    match kind {
        BufferKind::Model | BufferKind::Lora => 0,
        BufferKind::Kv | BufferKind::Rs | BufferKind::Output => 1,
        BufferKind::Compute => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn mib(x: f64) -> Quantity {
        let hundredths = (x * 100.0).round() as u128;
        Quantity::from_decimal(hundredths, 2, MIB).unwrap()
    }

    fn add(
        l: &mut BufferLedger,
        component: &str,
        buffer: &str,
        kind: BufferKind,
        size: f64,
        line: u64,
    ) {
        l.add(BufferLine {
            component,
            buffer,
            device: None,
            kind,
            size: mib(size),
            line,
            projector: false,
        });
    }

    /// Peer vector 302, lines 5–6: the real round's weights and KV cache after the probe's.
    fn second_round_of_302(l: &mut BufferLedger) {
        add(l, "load_tensors", "CUDA0", BufferKind::Model, 1100.0, 5);
        add(l, "llama_kv_cache", "CUDA0", BufferKind::Kv, 2200.0, 6);
    }

    #[test]
    fn a_second_round_replaces_the_probe() {
        // peer vector 302 (first five lines).
        let mut l = BufferLedger::default();
        add(
            &mut l,
            "load_tensors",
            "CUDA0",
            BufferKind::Model,
            1000.0,
            1,
        );
        add(&mut l, "llama_kv_cache", "CUDA0", BufferKind::Kv, 2000.0, 2);
        second_round_of_302(&mut l);
        let b = l.into_buffers();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].size, mib(1100.0));
        assert_eq!(b[1].size, mib(2200.0));
    }

    #[test]
    fn a_probe_rounds_compute_does_not_count_when_the_paste_stops_before_the_next_rounds() {
        // peer vector 302, lines 3–6 as a paste: the probe's compute reservation, then the real round's model
        // and KV; the real compute (lines 7–8) is past the window's end.
        let mut l = BufferLedger::default();
        add(
            &mut l,
            "sched_reserve",
            "CUDA0",
            BufferKind::Compute,
            300.0,
            3,
        );
        add(
            &mut l,
            "sched_reserve",
            "CUDA_Host",
            BufferKind::Compute,
            400.0,
            4,
        );
        second_round_of_302(&mut l);
        let lines: Vec<u64> = l.into_buffers().iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![5, 6]);
        // The whole of 303: the last round reached its compute, so the probe's output buffer (printed once)
        // still counts.
        let mut l = BufferLedger::default();
        // (component, buffer, kind, MiB, line) of 303's lines 2, 4, 9, 13 and 19.
        for (component, buffer, kind, size, line) in [
            ("load_tensors", "CUDA0", BufferKind::Model, 0.0, 2),
            ("llama_context", "CUDA_Host", BufferKind::Output, 0.95, 4),
            ("sched_reserve", "CUDA0", BufferKind::Compute, 9952.25, 9),
            ("load_tensors", "CUDA0", BufferKind::Model, 8171.01, 13),
            ("sched_reserve", "CUDA0", BufferKind::Compute, 9952.25, 19),
        ] {
            add(&mut l, component, buffer, kind, size, line);
        }
        let lines: Vec<u64> = l.into_buffers().iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![4, 13, 19]);
    }

    #[test]
    fn two_kv_caches_in_one_round_add_up() {
        // peer vector 314: non-SWA and SWA caches on the CPU.
        let mut l = BufferLedger::default();
        add(&mut l, "llama_kv_cache", "CPU", BufferKind::Kv, 13824.0, 3);
        add(&mut l, "llama_kv_cache", "CPU", BufferKind::Kv, 40.5, 6);
        let total = Quantity::sum(l.into_buffers().iter().map(|b| b.size)).unwrap();
        assert_eq!(total, mib(13824.0).plus(mib(40.5)));
    }

    #[test]
    fn re_reserved_compute_keeps_the_last_with_bounds() {
        // peer vector 316: Meta() compute 384.95 then 324.02 MiB.
        let mut l = BufferLedger::default();
        add(
            &mut l,
            "sched_reserve",
            "Meta()",
            BufferKind::Compute,
            384.95,
            5,
        );
        add(
            &mut l,
            "sched_reserve",
            "Meta()",
            BufferKind::Compute,
            324.02,
            9,
        );
        let b = l.into_buffers();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].size.bytes, mib(324.02).bytes);
        assert_eq!(b[0].size.high, mib(384.95).high);
        assert_eq!(b[0].superseded, vec![mib(384.95)]);
    }
}
