//! The words a log line (or a grammar rule's `set`) uses for a typed choice: a buffer's kind, a side
//! estimate, a summary's part and phase. Each reader is the one place its words are spelt, so an event's
//! builder (which reads the word from a line) and its spec (which checks a rule's `set` word when the parser
//! is built) cannot disagree.

use super::event::{SideEstimate, SummaryPart, SummaryPhase};
use crate::model::BufferKind;

/// The buffer kind a llama.cpp buffer line names (`KV`, `RS`, `compute` …; none for weights).
pub fn buffer_kind(word: &str) -> Option<BufferKind> {
    Some(match word {
        "" | "model" => BufferKind::Model,
        "KV" => BufferKind::Kv,
        "RS" => BufferKind::Rs,
        "output" => BufferKind::Output,
        "compute" => BufferKind::Compute,
        "LoRA" => BufferKind::Lora,
        _ => return None,
    })
}

/// Which side estimate an `[mtmd]`/`[spec]` line gives.
pub fn side_estimate(word: &str) -> Option<SideEstimate> {
    match word {
        "projector" => Some(SideEstimate::Projector),
        "draft" => Some(SideEstimate::Draft),
        _ => None,
    }
}

/// Which part of memory an Ollama engine summary line (`msg="model weights" device=…`) reports.
pub fn summary_part(word: &str) -> Option<SummaryPart> {
    match word {
        "model weights" => Some(SummaryPart::Weights),
        "kv cache" => Some(SummaryPart::Kv),
        "compute graph" => Some(SummaryPart::Graph),
        _ => None,
    }
}

/// The side a summary line's `phase` names; without one (or with another word) the line's position decides.
pub fn summary_phase(word: Option<&str>) -> SummaryPhase {
    match word {
        Some("estimate") => SummaryPhase::Estimate,
        Some("actual") => SummaryPhase::Actual,
        _ => SummaryPhase::ByPosition,
    }
}
