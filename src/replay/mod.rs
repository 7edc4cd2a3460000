//! Placement replay ("what if"): run Ollama's layer placement again, once with the estimate's own figures (does
//! vramdiff understand the estimate? it must reproduce the logged split) and once with the measured figures
//! (what would the same rules have done with the real sizes?), optionally with the user's changes.
//! `fit` replays llama.cpp's `--fit` placement instead (Ollama ≥ 0.30, llama-server), as a pure function.

pub mod estimator;
pub mod families;
pub mod figures;
pub mod fit;
pub mod host_fit;
pub mod levers;
pub mod llama_server;
pub mod max_ctx;
pub mod ollama;
pub mod placement;

use crate::model::{
    human, Device, Launcher, MeasuredReplay, Placement, Placer, Quantity, Reconciled,
    ReplayOutcome, ReplayVerdict, WhatIf,
};
pub use families::Family;
pub use figures::Changes;
use figures::End;
pub use placement::Scheduler;
use placement::{place, GpuSpace};

/// The GPUs the estimate placed on, in its order, with their free memory at that end of the rounding.
fn gpus(load: &Reconciled, changes: &Changes, end: End) -> Vec<GpuSpace> {
    let Some(e) = load.load.estimate.as_ref() else {
        return Vec::new();
    };
    let library = e
        .library
        .clone()
        .or_else(|| load.load.gpus.first().and_then(|g| g.library.clone()))
        .unwrap_or_else(|| "cuda".to_string());
    if library.eq_ignore_ascii_case("cpu") {
        // A CPU-only estimate has no GPU to place layers on: never replay onto a device named CPU.
        return Vec::new();
    }
    let free: Vec<Quantity> = if e.available.is_empty() {
        load.load
            .gpus
            .iter()
            .filter_map(|g| g.available.or(g.total))
            .collect()
    } else {
        e.available.clone()
    };
    let mut all: Vec<(usize, GpuSpace)> = free
        .iter()
        .enumerate()
        .map(|(i, q)| {
            (
                i,
                GpuSpace {
                    device: Device::for_library(&library, i),
                    free: end.of(*q),
                },
            )
        })
        .collect();
    if let Some(keep) = &changes.gpus {
        all.retain(|(i, _)| keep.contains(i));
    }
    if let Some(n) = changes.gpu_count {
        let mut by_free = all.clone();
        by_free.sort_by(|a, b| b.1.free.cmp(&a.1.free).then(a.0.cmp(&b.0)));
        let chosen: Vec<usize> = by_free.iter().take(n).map(|(i, _)| *i).collect();
        all.retain(|(i, _)| chosen.contains(i));
    }
    all.into_iter().map(|(_, g)| g).collect()
}

fn max_layers(load: &Reconciled) -> Option<i64> {
    load.load
        .estimate
        .as_ref()
        .and_then(|e| e.layers.requested)
        .filter(|&n| n >= 0)
}

/// Free memory left on the tightest GPU that holds a layer.
pub fn margin(p: &Placement, overhead: i64) -> i64 {
    p.gpus_with_layers()
        .map(|g| g.free - overhead - g.allocation)
        .min()
        .unwrap_or(0)
}

fn measured_replay(load: &Reconciled, changes: &Changes) -> Option<MeasuredReplay> {
    let f = figures::measured(load, changes)?;
    let mut by_free = gpus(load, changes, End::Nominal);
    if by_free.is_empty() {
        return None;
    }
    by_free.sort_by_key(|g| std::cmp::Reverse(g.free));
    // The fewest GPUs first (what ollama37 does; upstream tries one GPU, then all).
    // With every GPU and layers still on the CPU, the last placement tried is the answer.
    let mut last = None;
    for k in 1..=by_free.len() {
        let p = place(&by_free[..k], &f, changes.gpu_layers);
        if p.fully_offloaded() {
            let m = margin(&p, f.gpu_overhead);
            let verdict =
                ReplayVerdict::fits(&p, k, format!("{} to spare on the tightest", human(m)));
            return Some(MeasuredReplay {
                figures: f,
                placement: p,
                margin: m,
                verdict,
            });
        }
        last = Some(p);
    }
    let p = last?;
    let m = margin(&p, f.gpu_overhead);
    let verdict = ReplayVerdict {
        outcome: ReplayOutcome::CpuOffload {
            layers: p.total - p.offloaded,
        },
        text: match changes.gpu_layers {
            // The cap, not the memory, keeps them there.
            Some(n) if p.offloaded >= n.min(p.total) => format!(
                "{} of {} layers on the CPU: --ngl {n} (num_gpu) places at most {n} ({} left to the CPU)",
                p.total - p.offloaded,
                p.total,
                human(p.overflow)
            ),
            Some(_) | None => format!(
                "needs CPU offload of {} of {} layers even by the measured sizes ({} left to the CPU)",
                p.total - p.offloaded,
                p.total,
                human(p.overflow)
            ),
        },
    };
    Some(MeasuredReplay {
        figures: f,
        placement: p,
        margin: m,
        verdict,
    })
}

/// Replay a load's placement; `None` when the log lacks the estimate figures the placement needs.
pub fn replay(load: &Reconciled, changes: &Changes) -> Option<WhatIf> {
    replay_to(
        load,
        &Asked {
            changes: changes.clone(),
            ..Asked::default()
        },
    )
}

/// [`replay`]'s verdict on one load at many changes, what `whatif --max-ctx`'s search reads ([`max_ctx`]):
/// whether every layer stays on the GPUs, and the memory left on the tightest GPU, by the replay with the
/// measured figures (`measured`) or by the runtime's estimate. The answer is the one read from `replay(load,
/// changes)`, without replaying the other side, the levers' effects and the words, and with the estimator's
/// family chosen once (replaying the log with every candidate family is most of a replay, and the choice
/// reads only the log and `--family`: `ollama::family_for`). The search replays a load a dozen times for each
/// suggestion that names a context (`docs/performance.md`).
pub(crate) struct Verdicts<'a> {
    load: &'a Reconciled,
    measured: bool,
    /// The family chosen for a `--family` (`None`: the log's choice), once asked.
    family: std::cell::OnceCell<(Option<Family>, Option<Family>)>,
}

impl<'a> Verdicts<'a> {
    pub(crate) fn new(load: &'a Reconciled, measured: bool) -> Verdicts<'a> {
        Verdicts {
            load,
            measured,
            family: std::cell::OnceCell::new(),
        }
    }

    /// The verdict with `changes`; `None` where [`replay`] gives none for the side read.
    pub(crate) fn at(&self, changes: &Changes) -> Option<(bool, i64)> {
        let load = self.load;
        let placer = load.load.runtime.placer();
        if self.measured {
            let m = match placer {
                Placer::LlamaFit(_) if *changes != Changes::default() => {
                    llama_server::changed(load, changes)
                }
                Placer::LlamaFit(_) => llama_server::measured(load),
                Placer::ServingEngine(_) => None,
                Placer::OllamaScheduler | Placer::Unknown => measured_replay(load, changes),
            }?;
            return Some((
                matches!(m.verdict.outcome, ReplayOutcome::Fits { .. }),
                m.margin,
            ));
        }
        let (placement, overhead) = match placer {
            Placer::LlamaFit(_) if *changes != Changes::default() => None,
            Placer::LlamaFit(_) => {
                llama_server::estimate(load).map(|e| (e.placement, e.figures.gpu_overhead))
            }
            Placer::ServingEngine(_) => None,
            Placer::OllamaScheduler | Placer::Unknown
                if ollama::keeps_the_logs_placement(changes) =>
            {
                ollama::replay(load, changes)
                    .map(|r| (r.estimate.placement, r.estimate.figures.gpu_overhead))
            }
            Placer::OllamaScheduler | Placer::Unknown => {
                let family = self.family_for(changes)?;
                ollama::changed_placement(load, changes, family)
                    .map(|(placement, figures)| (placement, figures.gpu_overhead))
            }
        }?;
        Some((placement.fully_offloaded(), margin(&placement, overhead)))
    }

    /// `ollama::family_for`, chosen once for the `--family` of the first changes asked about (every later
    /// one with the same `--family` reuses it).
    fn family_for(&self, changes: &Changes) -> Option<Family> {
        let (named, chosen) = *self
            .family
            .get_or_init(|| (changes.family, ollama::family_for(self.load, changes)));
        if named == changes.family {
            chosen
        } else {
            ollama::family_for(self.load, changes)
        }
    }
}

/// What `vramdiff whatif` asks the replay: the user's changes, and `--max-ctx` (the largest context that keeps
/// every layer on the GPUs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    pub changes: Changes,
    pub max_ctx: bool,
    /// `--explain`: keep the estimator's placement trace.
    pub explain: bool,
}

/// The replay `vramdiff whatif` prints: with the changes asked, and the largest context when asked.
pub fn replay_asked(load: &Reconciled, asked: &Asked) -> Option<WhatIf> {
    replay_to(load, asked)
}

fn replay_to(load: &Reconciled, asked: &Asked) -> Option<WhatIf> {
    let changes = &asked.changes;
    let mut replayed = None;
    let (estimate, measured) = match load.load.runtime.placer() {
        Placer::LlamaFit(_) => {
            if *changes != Changes::default() {
                // The plan's figures are the log's; what-if changes replay the fit with the measured ones.
                (None, llama_server::changed(load, changes))
            } else {
                (llama_server::estimate(load), llama_server::measured(load))
            }
        }
        // vLLM and SGLang shard every layer over their ranks: no layer placement to replay (their own
        // figures are judged by the checks, `checks::suggest::serving`).
        Placer::ServingEngine(_) => (None, None),
        // Ollama's scheduler, replayed by its own rules; without a placer named, by the estimate's rules
        // when the log printed an estimate (the replay needs its figures and says nothing otherwise).
        Placer::OllamaScheduler | Placer::Unknown => {
            replayed = ollama::replay(load, changes);
            (
                replayed.as_ref().map(|r| r.estimate.clone()),
                measured_replay(load, changes),
            )
        }
    };
    let effects = levers::effects(load, changes, estimate.as_ref(), measured.as_ref());
    // A load fitted to system memory has no layers to replay, but a largest context.
    let max_ctx = asked
        .max_ctx
        .then(|| max_ctx::max_ctx(load, changes, changes.kv_type))
        .flatten();
    if estimate.is_none() && measured.is_none() && effects.is_empty() && max_ctx.is_none() {
        return None;
    }
    Some(WhatIf {
        changes: changes.describe(),
        estimate,
        measured,
        max_ctx,
        family: replayed.as_ref().map(|r| r.family.name().to_string()),
        hinge: replayed.as_ref().and_then(|r| r.hinge.clone()),
        charges: replayed.as_ref().and_then(|r| r.charges.clone()),
        trace: replayed.filter(|_| asked.explain).map(|r| r.trace),
        projector_padding: match load.load.runtime.placer() {
            // Only Ollama pads the margin, and only the log's own settings say what it cost.
            Placer::LlamaFit(Launcher::Ollama) if *changes == Changes::default() => {
                llama_server::projector_padding(load)
            }
            Placer::LlamaFit(Launcher::Ollama | Launcher::User | Launcher::Unknown)
            | Placer::ServingEngine(_)
            | Placer::OllamaScheduler
            | Placer::Unknown => None,
        },
        effects,
    })
}
