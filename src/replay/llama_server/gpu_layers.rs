//! `whatif --ngl N` on a load llama.cpp places: the user's `-ngl` fixes the layers, so llama.cpp's `--fit` moves
//! none (`src/replay/fit/mod.rs`, step 4) and what is left to say is whether the default split of N layers fits
//! in each GPU's free memory, and by how much it misses. The `--fit` margin is not kept by anyone then, so the
//! verdict is against the free memory itself, with the margin named beside it.

use super::super::fit::FitOutcome;
use crate::model::{human, Placement, ReplayOutcome, ReplayVerdict};

/// The margin (free memory left on the tightest GPU holding layers; negative: over) and the verdict in words.
pub(super) fn verdict(outcome: &FitOutcome, p: &Placement) -> (i64, ReplayVerdict) {
    let holding: Vec<_> = outcome.devices.iter().filter(|d| d.layers > 0).collect();
    let margin = holding.iter().map(|d| d.free_left).min().unwrap_or(0);
    let over: Vec<String> = holding
        .iter()
        .filter(|d| d.free_left < 0)
        .map(|d| {
            format!(
                "{} needs {} of {} free, over by {}",
                d.name,
                human(d.used),
                human(d.free),
                human(d.free_left.saturating_neg())
            )
        })
        .collect();
    let layers = format!("{} of {} layers on the GPUs", p.offloaded, p.total);
    if !over.is_empty() {
        return (
            margin,
            ReplayVerdict {
                outcome: ReplayOutcome::CpuOffload {
                    layers: outcome.cpu_layers as i64,
                },
                text: format!(
                    "does not fit with the layers fixed ({layers}): {}",
                    over.join("; ")
                ),
            },
        );
    }
    let short_of_target: Vec<&str> = holding
        .iter()
        .filter(|d| d.free_left < d.target)
        .map(|d| d.name.as_str())
        .collect();
    let target = holding.iter().map(|d| d.target).max().unwrap_or(0);
    let spare = format!(
        "{} to spare in free memory on the tightest{}",
        human(margin),
        if short_of_target.is_empty() {
            format!(", the {} --fit margin kept", human(target))
        } else {
            format!(
                ", inside the {} --fit margin on {}",
                human(target),
                short_of_target.join(", ")
            )
        }
    );
    if outcome.cpu_layers == 0 {
        let mut v = ReplayVerdict::fits(p, holding.len(), spare);
        v.text = format!("{layers}: {}", v.text);
        (margin, v)
    } else {
        (
            margin,
            ReplayVerdict {
                outcome: ReplayOutcome::CpuOffload {
                    layers: outcome.cpu_layers as i64,
                },
                text: format!(
                    "{layers} fit in the free memory ({}), {} on the CPU; {spare}",
                    holding
                        .iter()
                        .map(|d| format!("{} {} of {}", d.name, human(d.used), human(d.free)))
                        .collect::<Vec<_>>()
                        .join("; "),
                    outcome.cpu_layers
                ),
            },
        )
    }
}
