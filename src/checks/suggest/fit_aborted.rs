//! Suggestions after llama.cpp's `--fit` aborted because the user fixed the layers on the GPUs (`-ngl`; Ollama's
//! `num_gpu`): the fit cannot move layers the user placed, so the first advice is to let it place them, with
//! what its own projection of the user's settings says it would then do (nothing, when they already keep its
//! margin; else move about that much to the host). When the layers do not keep the margin and the log gives
//! the model's layer count, the `-ngl` that does, by the projection's weights per layer; and the context halved,
//! by the projection's context column. Every figure is the fit's first projection (MiB, truncated) against the
//! free memory it measured (`docs/log-formats.md` §5.7).

use super::{knob, Evidence};
use crate::model::{
    human, FindingCode, FitDecision, FitStopCause, Knob, Launcher, Placer, Quantity, Spelling,
    Suggestion,
};
use crate::replay::fit::DEFAULT_FIT_TARGET;

/// Settings to try after the fit aborted at the user's `-ngl`.
pub fn suggest(ev: &Evidence, out: &mut Vec<Suggestion>) {
    let load = ev.load;
    let launcher = match load.load.runtime.placer() {
        Placer::LlamaFit(launcher) => launcher,
        Placer::OllamaScheduler | Placer::ServingEngine(_) | Placer::Unknown => return,
    };
    let Some(fit) = load.load.estimate.as_ref().and_then(|e| e.fit.as_ref()) else {
        return;
    };
    let aborted_at_layers = fit.outcome == FitDecision::Aborted
        && fit
            .stopped
            .as_ref()
            .is_some_and(|s| s.cause == FitStopCause::GpuLayersSetByUser);
    let (true, Some(projected), Some(free), Some(layers_knob)) = (
        aborted_at_layers,
        fit.projected,
        fit.free.first(),
        knob(ev, Knob::GpuLayers),
    ) else {
        return;
    };
    let because = vec![FindingCode::FitAborted];
    let target = fit.target.map_or(DEFAULT_FIT_TARGET, |t| t.bytes);
    let free = free.free;
    // The user's layers against the fit's margin, across the truncation of both figures.
    let over = projected.high + target - free.low;
    let spare = free.low - projected.high;
    // The user's value as the abort line prints it (`already set by user to 99`), else the command line's.
    let user_layers = fit
        .stopped
        .as_ref()
        .and_then(|s| s.value)
        .or(load.load.settings.gpu_layers);
    let setting = match (launcher, user_layers) {
        (Launcher::User, Some(n)) => format!("drop {}", layers_knob.setting(n)),
        (Launcher::User, None) => format!("drop {}", layers_knob.spelled().trim_end_matches(" N")),
        (Launcher::Ollama, _) => format!("unset {}", layers_knob.spelled()),
        // The user's flag is dropped, Ollama's option unset: `drop --n-gpu-layers 99 (if Ollama ≥ 0.30
        // started llama-server: unset num_gpu)`.
        (Launcher::Unknown, value) => match layers_knob.spelling {
            Spelling::EitherLauncher { flag, ollama } => format!(
                "drop {} (if Ollama ≥ 0.30 started llama-server: unset {})",
                match value {
                    Some(n) => flag.replace("{}", &n.to_string()),
                    None => flag.replace(" {}", ""),
                },
                ollama.split('=').next().unwrap_or(ollama)
            ),
            Spelling::Env(_) | Spelling::ModelOption(_) | Spelling::Flag(_) => {
                format!("drop or unset {}", layers_knob.spelled())
            }
        },
    };
    let effect = if over <= 0 {
        format!(
            "--fit places the layers itself; by its own projection of these settings ({} against {} free) every layer already keeps its {} margin, {} to spare: nothing moves now, and --fit keeps the margin when the context or the model changes",
            human(projected.low),
            human(free.low),
            human(target),
            human(spare)
        )
    } else {
        format!(
            "--fit places the layers itself, keeping {} free: by its own projection of these settings ({} against {} free) it moves about {} off the GPU ({}) instead of the load running out of memory",
            human(target),
            human(projected.low),
            human(free.low),
            human(over),
            if fit.context_by_user == Some(true) {
                "layers to the host: the context is the user's"
            } else {
                "layers to the host, or a smaller context if the user did not set one"
            }
        )
    };
    out.push(Suggestion {
        setting,
        effect,
        because: because.clone(),
    });
    if over <= 0 {
        return;
    }
    // The projection's own split of the device's share: model (weights), context (KV), compute.
    let plan = load
        .load
        .estimate
        .as_ref()
        .and_then(|e| e.per_device.iter().find(|d| d.device.is_gpu()));
    let weights = plan.and_then(|d| d.weights);
    let blocks = load.load.model.block_count.filter(|&n| n > 0);
    if let (Some(w), Some(blocks)) = (weights, blocks) {
        let per_layer = (w.bytes / (blocks + 1)).max(1);
        let shed = (over + per_layer - 1) / per_layer;
        let keep = (blocks + 1 - shed).max(0);
        if keep > 0 {
            out.push(Suggestion {
                setting: layers_knob.setting(keep),
                effect: format!(
                    "{shed} layers fewer on the GPU (about {} each: the projection's {} of weights over {} layers), about {} off the projection, which then keeps the {} margin",
                    human(per_layer),
                    human(w.bytes),
                    blocks + 1,
                    human(shed * per_layer),
                    human(target)
                ),
                because: because.clone(),
            });
        }
    }
    let kv = plan.and_then(|d| d.kv);
    if let (Some(kv), Some(context), Some(ctx)) = (
        kv.filter(|k| k.bytes > 0),
        knob(ev, Knob::Context),
        load.load.settings.ctx_size,
    ) {
        let parallel = load.load.settings.parallel.unwrap_or(1).max(1);
        let per_slot = ctx / parallel;
        let half = per_slot / 2 / 256 * 256;
        if half >= 256 {
            let saved = Quantity::exact(kv.bytes).scale(1, 2).bytes;
            let value = match launcher {
                Launcher::Ollama => half,
                Launcher::User | Launcher::Unknown => half * parallel,
            };
            out.push(Suggestion {
                setting: context.setting(value),
                effect: format!(
                    "half the context: the projection's context (the KV cache), {}, about {} smaller{}",
                    human(kv.bytes),
                    human(saved),
                    if saved >= over {
                        format!(", enough for the {} margin with the user's layers", human(target))
                    } else {
                        format!(
                            ", not all of the {} the margin needs: combine it with fewer layers",
                            human(over)
                        )
                    }
                ),
                because,
            });
        }
    }
}
