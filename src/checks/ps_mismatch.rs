//! `ps-mismatch`: Ollama's own figure of the model's VRAM (`/api/ps` `size_vram`, read when the load
//! completed, `--ollama`) disagrees with what the card holds for it (nvidia-smi's memory of the runner
//! process, else the runner's GPU buffers) beyond the figures' rounding and the overestimate margin. Ollama's
//! scheduler decides what to unload by that figure (ollama#10359: 59 GB reported, 26694 MiB on the cards).
//! Without `/api/ps`, a pasted `ollama ps` table after the load is the same evidence: its SIZE (decimal GB, with
//! their rounding) times its GPU share (`docs/log-formats.md` §5.6 item 8).

use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Launcher, Placer, Quantity, Runtime, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::PsMismatch,
    summary: "Ollama's /api/ps size_vram disagrees with the card (nvidia-smi's runner process, else the buffers), by how much",
    run: check,
};

/// What Ollama said of the model's VRAM: `/api/ps`, else a pasted `ollama ps` row (its SIZE × its GPU share).
fn ollama_says(cx: &Context) -> Option<(Quantity, String, String)> {
    if let Some(ps) = &cx.load.ollama_ps {
        return Some((ps.size_vram, ps.name.clone(), "/api/ps".to_string()));
    }
    let row = cx.load.load.scheduler.as_ref()?.ps_table.last()?;
    let percent = row.gpu_percent?;
    Some((
        row.size.scale(percent, 100),
        row.name.clone(),
        format!("`ollama ps` (line {}, {})", row.line, row.processor),
    ))
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let Some((said, name, source)) = ollama_says(cx) else {
        return;
    };
    let Some(card) = cx.load.card_figure() else {
        return;
    };
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
            "Ollama's {source} says {} holds {} of VRAM, {} than the card shows ({}: {}): {} {word} ({percent:+.0} %)",
            name,
            size(said),
            word,
            card.from,
            size(card.value),
            size(crate::model::Quantity::exact(gap)),
        ),
        hint(cx.load.load.runtime),
        card.lines,
        None,
        None,
    ));
}

/// What the gap means for the runtime that placed the load.
fn hint(runtime: Runtime) -> &'static str {
    match runtime.placer() {
        Placer::LlamaFit(Launcher::Ollama) => "Ollama ≥ 0.30 sums llama-server's buffer lines for `ollama ps` and says \"100% GPU\" when every layer is offloaded, host buffers included; the figure places nothing (llama-server's --fit does): judge VRAM by nvidia-smi or the buffers, and leave OLLAMA_GPU_OVERHEAD alone, it does not reach --fit",
        Placer::OllamaScheduler
        | Placer::LlamaFit(Launcher::User | Launcher::Unknown)
        | Placer::ServingEngine(_)
        | Placer::Unknown => "Ollama schedules and evicts by its own figure: when it says more than the card holds, models are unloaded or split that would fit; compare `ollama ps` with nvidia-smi before tuning OLLAMA_GPU_OVERHEAD or num_gpu",
    }
}
