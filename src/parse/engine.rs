//! The event kinds of the Ollama engine's memory lines (`grammars/30-ollama-engine.toml`): its buffers
//! (v0.6–v0.11.4) and the v0.11.5+ per-device memory summary.

use super::event::EventKind;
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
use super::words::{summary_part, summary_phase};
use crate::model::{BufferKind, Device};

/// The `phase` a summary rule may set: which side of the comparison its lines belong to.
const PHASE: Words = Words::List(&["estimate", "actual"]);

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "engine_weights",
        required: &["buffer", "size"],
        optional: &[],
        settable: &[],
        build: |f| engine_buffer(f, BufferKind::Model),
    },
    EventSpec {
        kind: "engine_graph",
        required: &["buffer", "size"],
        optional: &[],
        settable: &[],
        build: |f| engine_buffer(f, BufferKind::Compute),
    },
    EventSpec {
        kind: "memory_summary",
        required: &["part", "device", "size"],
        optional: &["phase"],
        settable: &[("phase", PHASE)],
        build: |f| {
            Ok(EventKind::MemorySummary {
                part: {
                    let word = f.need("part")?;
                    summary_part(word).ok_or_else(|| format!("unknown summary part '{word}'"))?
                },
                device: Device::named(f.need("device")?.trim()),
                size: f.size("size")?,
                phase: summary_phase(f.get("phase")),
            })
        },
    },
    EventSpec {
        kind: "memory_total",
        required: &["size"],
        optional: &["phase"],
        settable: &[("phase", PHASE)],
        build: |f| {
            Ok(EventKind::MemoryTotal {
                size: f.size("size")?,
                phase: summary_phase(f.get("phase")),
            })
        },
    },
];

fn engine_buffer(f: &Fields, kind: BufferKind) -> Result<EventKind, BuildError> {
    Ok(EventKind::EngineBuffer {
        buffer: f.need("buffer")?.to_string(),
        kind,
        size: f.size("size")?,
    })
}
