//! What the server held while it served, in short (`loads[].timeline`, `src/model/timeline.rs`): each series'
//! peak against the limit the log printed, with the lines, and how serving ended. The HTML report and
//! `--chart` draw the samples themselves (`report::chart::timeline`).

use super::{Explanation, Section};
use crate::model::{human, Concluded, Figure, Quantity};
use crate::report::table::{Align, Table};

fn at(f: &Figure) -> String {
    format!("{} (line {})", human(f.size.bytes), f.line)
}

fn size_at(q: Quantity, line: u64) -> String {
    at(&Figure { size: q, line })
}

/// The section, or nothing when the load has no timeline.
pub fn section(load: &Concluded) -> Option<Section> {
    let t = load.reconciled.load.timeline.as_ref()?;
    let mut table = Table::new(&[
        ("while serving", Align::Left),
        ("peak", Align::Right),
        ("limit", Align::Left),
    ]);
    let none = || "–".to_string();
    let limits = &t.limits;
    if let Some(peak) = &t.peaks.prompt_cache {
        table.push(vec![
            "prompt cache (host RAM)".to_string(),
            at(peak),
            match (&limits.prompt_cache, limits.prompt_cache_unlimited) {
                (_, true) => "no limit (--cache-ram -1)".to_string(),
                (Some(l), false) if l.size.bytes == 0 => "no limit printed (0)".to_string(),
                (Some(l), false) => at(l),
                (None, false) => "not printed".to_string(),
            },
        ]);
    }
    if let Some(peak) = &t.peaks.checkpoints {
        table.push(vec![
            "context checkpoints (host RAM)".to_string(),
            at(peak),
            match (&limits.checkpoints_per_slot, &t.peaks.checkpoint_size) {
                (Some(max), Some(one)) => format!(
                    "{} per slot × {} = {} per slot (line {})",
                    max.value,
                    human(one.size.bytes),
                    human(one.size.times(max.value).bytes),
                    max.line
                ),
                (Some(max), None) => format!("{} per slot (line {})", max.value, max.line),
                (None, _) => none(),
            },
        ]);
    }
    if let Some(entry) = &t.peaks.entry {
        table.push(vec![
            "largest cache entry".to_string(),
            size_at(entry.size, entry.line),
            format!("{} tokens, {} checkpoints", entry.tokens, entry.checkpoints),
        ]);
    }
    if let Some(kv) = &t.peaks.kv_percent {
        table.push(vec![
            "KV cache fill".to_string(),
            format!("{:.1}% (line {})", kv.value, kv.line),
            "100%".to_string(),
        ]);
    }
    for (name, peak) in [
        ("requests running", &t.peaks.running),
        ("requests waiting", &t.peaks.waiting),
    ] {
        if let Some(c) = peak {
            table.push(vec![
                name.to_string(),
                format!("{} (line {})", c.value, c.line),
                none(),
            ]);
        }
    }
    if let Some(p) = &t.preemptions {
        table.push(vec![
            "requests preempted or retracted".to_string(),
            format!("{} (by line {})", p.value, p.line),
            none(),
        ]);
    }
    let mut parts = Vec::new();
    if let Some(free) = &limits.host_free {
        parts.push(("host free at load", at(free)));
    }
    if let Some(over) = &t.over_limit {
        parts.push(("over its limit", at(over)));
    }
    if let Some(line) = t.strict_limit_line {
        parts.push((
            "strict limit",
            format!("line {line}: entries over the limit are skipped"),
        ));
    }
    if let Some(line) = t.alloc_failed_line {
        parts.push((
            "refused",
            format!("line {line}: the host refused a cache entry"),
        ));
    }
    if let Some(r) = &t.slowest_prefill {
        parts.push((
            "slowest prefill",
            format!("{:.2} tokens/s (line {})", r.value, r.line),
        ));
    }
    if let Some(f) = &t.request_failed {
        parts.push((
            "request failed",
            format!("line {}: status {} after {}", f.line, f.status, f.elapsed),
        ));
    }
    if let Some(line) = t.cancelled_line {
        parts.push((
            "task cancelled",
            format!("line {line}: its client went away"),
        ));
    }
    parts.push((
        "ended",
        match &t.killed {
            Some(k) => format!("line {}: {}", k.line, k.message),
            None => "no failure while serving in the log".to_string(),
        },
    ));
    if table.rows.is_empty() && t.killed.is_none() {
        return None;
    }
    Some(Section {
        title: "While serving",
        table,
        explanations: vec![Explanation {
            subject: match t.samples.len() {
                1 => "1 sample".to_string(),
                n => format!("{n} samples"),
            },
            parts,
        }],
    })
}
