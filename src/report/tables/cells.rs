//! One cell's text: sizes, monitor figures, deltas with their range, verdicts, line lists, a finding's
//! references, a load's model name. Every table and heading formats figures through these.

use crate::model::{human, Concluded, Quantity, Verdict};

/// A quantity as a human size, `–` when absent.
pub fn q(q: Option<Quantity>) -> String {
    q.map(|q| human(q.bytes)).unwrap_or_else(|| "–".to_string())
}

/// A monitor's figure as the monitor prints it (`617 MiB`) when it is whole MiB, else a human size.
pub fn smi(q: Option<Quantity>) -> String {
    match q {
        Some(q) if q.bytes % crate::model::MIB == 0 => {
            format!("{} MiB", q.bytes / crate::model::MIB)
        }
        other => self::q(other),
    }
}

/// A delta with its range: `-10.5 MiB (-61.2 MiB … +40.1 MiB)`.
pub fn delta(d: Option<Quantity>) -> String {
    match d {
        None => "–".to_string(),
        Some(d) => format!(
            "{} ({} … {})",
            signed(d.bytes),
            signed(d.low),
            signed(d.high)
        ),
    }
}

/// A size with an explicit sign for positive values.
pub fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{}", human(v))
    } else {
        human(v)
    }
}

pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Match => "match (within rounding)",
        Verdict::Over => "over (estimate larger)",
        Verdict::Under => "UNDER (estimate smaller)",
        Verdict::Unknown => "unknown",
    }
}

/// Line numbers, at most eight of them.
pub fn lines(lines: &[u64]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = lines.iter().take(8).map(|l| l.to_string()).collect();
    let more = if lines.len() > 8 {
        format!(" +{}", lines.len() - 8)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(","))
}

/// What a finding points at, as one text: `CUDA0, graph, lines 9,32` (empty when it points at nothing).
pub fn finding_refs(f: &crate::model::Finding) -> String {
    let mut refs: Vec<String> = f
        .device
        .iter()
        .map(|d| d.to_string())
        .chain(f.component.iter().map(|c| c.as_str().to_string()))
        .collect();
    if !f.lines.is_empty() {
        refs.push(format!("lines {}", lines(&f.lines)));
    }
    refs.join(", ")
}

/// The model's name for a title: its architecture, else the start of its blob hash, else its GGUF file's name
/// (a llama.cpp command line's `-m …/model.gguf`).
pub fn model_name(load: &Concluded) -> String {
    let model = &load.reconciled.load.model;
    model
        .architecture
        .clone()
        .or_else(|| model.blob.as_ref().map(|b| b.chars().take(19).collect()))
        .or_else(|| model.file_name().map(str::to_string))
        .unwrap_or_else(|| "model unknown".to_string())
}
