//! `ps-mismatch`: Ollama's own figure of the model's VRAM (`/api/ps` `size_vram`, read when the load
//! completed, `--ollama`) disagrees with what the card holds for it (nvidia-smi's memory of the runner
//! process, else the runner's GPU buffers) beyond the figures' rounding and the overestimate margin. Ollama's
//! scheduler decides what to unload by that figure (ollama#10359: 59 GB reported, 26694 MiB on the cards).

use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::PsMismatch,
    summary: "Ollama's /api/ps size_vram disagrees with the card (nvidia-smi's runner process, else the buffers), by how much",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some(ps) = &cx.load.ollama_ps else {
        return;
    };
    let Some(card) = cx.load.card_figure() else {
        return;
    };
    let said = ps.size_vram;
    // Beyond rounding: the gap between the intervals, then the same margin `overestimate` uses.
    let (gap, word) = if said.low > card.value.high {
        (said.low.saturating_sub(card.value.high), "more")
    } else if card.value.low > said.high {
        (card.value.low.saturating_sub(said.high), "less")
    } else {
        return;
    };
    let base = card.value.bytes.max(1);
    if !cx.beyond_margin(gap, base) {
        return;
    }
    let percent = (said.bytes as f64 - card.value.bytes as f64) * 100.0 / base as f64;
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "Ollama's /api/ps says {} holds {} of VRAM, {} than the card shows ({}: {}): {} {word} ({percent:+.0} %)",
            ps.name,
            size(said),
            word,
            card.from,
            size(card.value),
            size(crate::model::Quantity::exact(gap)),
        ),
        "Ollama schedules and evicts by its own figure: when it says more than the card holds, models are unloaded or split that would fit; compare `ollama ps` with nvidia-smi before tuning OLLAMA_GPU_OVERHEAD or num_gpu",
        card.lines,
        None,
        None,
    ));
}
