//! `fit-aborted`: llama.cpp's `--fit` gave up because a setting it may not change was set by the user (`-ngl`,
//! a tensor split, tensor overrides) or the split mode is not supported (`docs/log-formats.md` §5.7). The load
//! goes on unfitted: when the user's settings were projected beyond free memory, an out-of-memory is coming.

use super::{finding, CheckDef, Context};
use crate::model::{
    human, Finding, FindingCode, FitDecision, FitStopCause, Launcher, Placer, Severity,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::FitAborted,
    summary:
        "llama.cpp's --fit gave up because a setting was set by the user: the load goes on unfitted",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(fit) = load.load.estimate.as_ref().and_then(|e| e.fit.as_ref()) else {
        return;
    };
    let Some(stop) = fit
        .stopped
        .as_ref()
        .filter(|_| fit.outcome == FitDecision::Aborted)
    else {
        return;
    };
    let free = fit.free.first().map(|d| d.free);
    let over = match (fit.projected, free) {
        (Some(used), Some(free)) => Some((used, free, used.low > free.high)),
        _ => None,
    };
    if stop.cause == FitStopCause::Error {
        return;
    }
    let why = stop.reason();
    let projection = over
        .map(|(used, free, beyond)| {
            format!(
                "; the user's settings were projected to use {} against {} free{}",
                human(used.low),
                human(free.low),
                if beyond {
                    ": more than the GPU has, an out-of-memory failure is coming"
                } else {
                    ""
                }
            )
        })
        .unwrap_or_default();
    let severity = if over.is_some_and(|o| o.2) {
        Severity::Error
    } else {
        Severity::Warning
    };
    let hint = match load.load.runtime.placer() {
        Placer::LlamaFit(Launcher::User) => {
            undo_and_lower(stop.cause, "drop --n-gpu-layers (-ngl)", "--ctx-size")
        }
        Placer::LlamaFit(Launcher::Ollama) => {
            "unset num_gpu so llama.cpp's --fit can place the layers, or lower num_ctx".to_string()
        }
        // The user or Ollama ≥ 0.30 set the layers: the one setting each has for them. Only the user's flags
        // set a split, overrides or a split mode (Ollama passes none of them).
        Placer::LlamaFit(Launcher::Unknown) => undo_and_lower(
            stop.cause,
            "drop -ngl (or unset num_gpu, if Ollama ≥ 0.30 started llama-server)",
            "the context",
        ),
        Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => {
            "let the fit place the layers, or lower the context".to_string()
        }
    };
    let mut lines = vec![stop.line];
    lines.extend(fit.lines.iter().copied());
    out.push(finding(
        DEF.code,
        severity,
        format!(
            "--fit aborted at line {}: {why}; the layers were placed as the user asked, unfitted{projection}",
            stop.line
        ),
        &hint,
        lines,
        None,
        None,
    ));
}

/// What llama-server's user changes so the fit can run, for what stopped it (`drop_layers`: the layer
/// setting in the launcher's spelling), and the context to lower in its spelling.
fn undo_and_lower(cause: FitStopCause, drop_layers: &str, context: &str) -> String {
    let undo = match cause {
        FitStopCause::GpuLayersSetByUser => drop_layers,
        FitStopCause::TensorSplitSetByUser => "drop --tensor-split (-ts)",
        FitStopCause::OverridesSetByUser => "drop the tensor overrides (-ot, --n-cpu-moe)",
        FitStopCause::SplitModeTensor | FitStopCause::Error => "use --split-mode layer (or none)",
    };
    format!("{undo} so --fit can place the layers, or lower {context}")
}
