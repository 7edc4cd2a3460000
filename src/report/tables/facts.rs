//! The facts under a load's title: GPUs, settings, the estimate and what the runner allocated, `--fit`'s
//! decision, the failure.

use super::cells::{lines, q};
use crate::model::{
    human, Attempt, Concluded, Eviction, FitDecision, FitProbe, FitProbeDecision, FitProbeTried,
};

/// The facts under a load's title, as (label, text) pairs: GPUs, settings, estimate, actual, failure.
pub fn facts(load: &Concluded) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = load
        .reconciled
        .load
        .source
        .partial_reasons
        .iter()
        .map(|r| ("partial".to_string(), r.to_string()))
        .collect();
    if !load.reconciled.load.gpus.is_empty() {
        let gpus: Vec<String> = load
            .reconciled
            .load
            .gpus
            .iter()
            .map(|g| {
                let mut parts = vec![g.name.clone().unwrap_or_else(|| g.id.clone())];
                if let Some(c) = &g.compute {
                    parts.push(format!("compute {c}"));
                }
                if let Some(t) = g.total {
                    parts.push(format!("{} total", human(t.bytes)));
                }
                // Ollama's `available` (free − minimum − overhead) and the measured free memory are two
                // figures; never show one as the other.
                if let Some(a) = g.available {
                    parts.push(format!("{} available", human(a.bytes)));
                }
                if let Some(f) = g.free {
                    parts.push(format!("{} free", human(f.bytes)));
                }
                parts.join(", ")
            })
            .collect();
        out.push(("GPUs".to_string(), gpus.join("; ")));
    } else if let Some(free) = fit_free(load) {
        // No GPU line, but llama.cpp's `--fit` printed the free memory it measured on each device.
        out.push(("GPUs".to_string(), free));
    }
    for a in &load.reconciled.load.attempts {
        match a {
            Attempt::Eviction(e) => out.push(("attempt".to_string(), eviction_words(e))),
            // Shown after the fit's own summary, below.
            Attempt::FitProbe(_) => {}
        }
    }
    let st = &load.reconciled.load.settings;
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "–".to_string());
    out.push((
        "settings".to_string(),
        format!(
            "ctx {}, batch {}, parallel {}, gpu layers {}, kv cache {}, flash attention {}",
            opt(st.ctx_size),
            opt(st.batch_size),
            opt(st.parallel),
            opt(st.gpu_layers),
            st.kv_cache_type.as_deref().unwrap_or("–"),
            st.flash_attention
                .map(|f| if f { "on" } else { "off" })
                .unwrap_or("–")
        ) + &match (st.projector_offload, &st.projector_offload_reason) {
            (Some(false), Some(reason)) => format!(", projector on the CPU ({reason})"),
            (Some(false), None) => ", projector on the CPU".to_string(),
            _ => String::new(),
        },
    ));
    for r in &load.reconciled.load.rejected_gpus {
        out.push((
            "rejected GPU".to_string(),
            format!("{}: {} (line {})", r.name, r.reason, r.line),
        ));
    }
    if let Some(e) = load.reconciled.load.estimate.as_ref() {
        if let Some(f) = e.fit.as_ref() {
            out.push(("--fit".to_string(), fit_words(f, e)));
        }
    }
    for a in &load.reconciled.load.attempts {
        match a {
            Attempt::FitProbe(p) => out.push(("--fit round".to_string(), fit_round_words(p))),
            Attempt::Eviction(_) => {}
        }
    }
    match &load.reconciled.load.estimate {
        Some(e) => {
            let layers = match (e.layers.offload, e.layers.model) {
                (Some(o), Some(m)) => format!("{o}/{m} layers on GPU"),
                _ => "layers not stated".to_string(),
            };
            let split = if e.layers.split.is_empty() {
                String::new()
            } else {
                let split: Vec<String> = e.layers.split.iter().map(|n| n.to_string()).collect();
                format!(", split {}", split.join(","))
            };
            out.push((
                format!("estimate ({}, line {})", e.form, lines(&e.lines)),
                format!(
                    "{layers}{split}, required {} (VRAM {})",
                    q(e.required_full),
                    q(e.required_partial)
                ),
            ));
        }
        None => out.push((
            "estimate".to_string(),
            "none in the log for this load".to_string(),
        )),
    }
    let a = &load.reconciled.load.actual;
    if let (Some(done), Some(total)) = (a.offloaded_layers, a.total_layers) {
        let from = if a.sources.is_empty() {
            String::new()
        } else {
            format!(", from {}", a.sources.join(", "))
        };
        out.push((
            "actual".to_string(),
            format!("{done}/{total} layers on GPU{from}"),
        ));
    } else if !a.sources.is_empty() {
        out.push((
            "actual".to_string(),
            format!("from {}", a.sources.join(", ")),
        ));
    }
    if let Some(f) = &a.failure {
        out.push(("FAILED".to_string(), f.clone()));
    }
    out
}

/// Why the fit stopped, in words (line included).
fn stop_words(s: &crate::model::FitStop) -> String {
    let what = s.reason();
    format!("{what} (line {})", s.line)
}

/// What llama.cpp's `--fit` did, in words.
fn fit_words(f: &crate::model::FitSummary, e: &crate::model::Estimate) -> String {
    let mut parts = vec![match f.outcome {
        FitDecision::NoChange => {
            "no changes needed: every device kept its margin with the user's settings".to_string()
        }
        FitDecision::Changed => {
            "moved layers or the context to keep every device's margin".to_string()
        }
        FitDecision::Aborted => format!(
            "aborted: {}; the load went on unfitted",
            f.stopped
                .as_ref()
                .map_or("a setting was set by the user".to_string(), |s| {
                    stop_words(s)
                })
        ),
        FitDecision::Failed => "failed with an error; the load went on unfitted".to_string(),
        FitDecision::Unknown => "the log stops before the fit's result".to_string(),
    }];
    if let Some(n) = f.overflowing.filter(|n| *n > 0) {
        parts.push(format!("{n} layer(s) overflowing into host memory"));
    }
    if let Some(t) = f.target {
        // llama-server adds the projector's and the draft's estimates to the user's target (1024 MiB by
        // default): a margin that equals the default plus them is those estimates, not memory kept idle.
        let added: Vec<(&str, i64)> = [
            ("the projector's", e.projector_total),
            ("the draft's", e.draft_total),
        ]
        .into_iter()
        .filter_map(|(what, q)| Some((what, q?.low)))
        .collect();
        let base = t.low - added.iter().map(|(_, b)| b).sum::<i64>();
        let explained =
            !added.is_empty() && (base - 1024 * crate::model::MIB).abs() <= 2 * crate::model::MIB;
        if explained {
            let parts_added: Vec<String> = added
                .iter()
                .map(|(what, b)| format!("{what} {} estimate", human(*b)))
                .collect();
            parts.push(format!(
                "margin {} per device (the default {} + {})",
                human(t.bytes),
                human(1024 * crate::model::MIB),
                parts_added.join(" + ")
            ));
        } else {
            parts.push(format!("margin {} per device", human(t.bytes)));
        }
    }
    if let Some(r) = f.reduce_by {
        parts.push(format!("had to shed {}", human(r.bytes)));
    }
    if let (Some(c), Some(by_user)) = (f.context, f.context_by_user) {
        parts.push(if by_user {
            format!("context {c} kept (set by the user)")
        } else {
            format!("context reduced to {c}")
        });
    }
    parts.push(format!(
        "{} probe table{}",
        f.probes,
        if f.probes == 1 { "" } else { "s" }
    ));
    if let Some(s) = f.seconds {
        parts.push(format!("took {s:.2} s"));
    }
    parts.join(", ")
}

/// A `--fit` round: what it tried, what each device was projected to use against its free memory and budget,
/// and what the fit decided next. llama.cpp prints whole MiB, so the figures stay in MiB.
fn fit_round_words(p: &FitProbe) -> String {
    let mib = |q: crate::model::Quantity| format!("{} MiB", q.bytes / crate::model::MIB);
    let tried = match p.tried {
        FitProbeTried::UserSettings => "the user's settings".to_string(),
        FitProbeTried::Probe => "a probe".to_string(),
    };
    let context = p
        .context
        .map_or(String::new(), |c| format!(" at context {c}"));
    let devices: Vec<String> = p
        .devices
        .iter()
        .map(|d| {
            let name = match (&d.device, d.id) {
                (Some(device), _) => device.to_string(),
                (None, Some(id)) => format!("device {id}"),
                (None, None) => "the GPUs together".to_string(),
            };
            let mut words = name;
            if let Some(l) = d.layers {
                words.push_str(&format!(" {l} layers"));
                if let Some(part) = d.partial_layers.filter(|p| *p > 0) {
                    words.push_str(&format!(" ({part} partial)"));
                }
            }
            if let Some(u) = d.projected {
                words.push_str(&format!(" {}", mib(u)));
            }
            let mut against = Vec::new();
            if let Some(f) = d.free {
                against.push(format!("{} free", mib(f)));
            }
            if let Some(b) = d.budget {
                against.push(format!("budget {}", mib(b)));
            }
            if !against.is_empty() {
                words.push_str(&format!(" of {}", against.join(", ")));
            }
            words
        })
        .collect();
    let decision = match p.decision {
        FitProbeDecision::NoChange => "every device keeps its margin: no change".to_string(),
        FitProbeDecision::Reduce => match p.reduce_by {
            Some(r) => format!("a device misses its margin: shed {}", mib(r)),
            None => "a device misses its margin: shed memory".to_string(),
        },
        FitProbeDecision::ContextReduced => match p.context_to {
            Some(c) => format!("context cut to {c}"),
            None => "context cut".to_string(),
        },
        FitProbeDecision::Kept => "fits: kept, more layers tried".to_string(),
        FitProbeDecision::TooLarge => "too large: rejected".to_string(),
        FitProbeDecision::Plan => "the fit's result: the load's split".to_string(),
        FitProbeDecision::Measured => "measured (no decision printed)".to_string(),
    };
    let buffers = if p.buffer_lines.is_empty() {
        String::new()
    } else {
        // The test allocation's own buffer lines: the round's, not the load's.
        let lines: Vec<String> = p.buffer_lines.iter().map(u64::to_string).collect();
        format!("; its test buffers on lines {}", lines.join(", "))
    };
    format!(
        "{}: {tried}{context}: {} -> {decision} (line {}{buffers})",
        p.round,
        if devices.is_empty() {
            "no figures".to_string()
        } else {
            devices.join("; ")
        },
        p.line
    )
}

/// A scheduler's attempt before the load: what it asked, what it had, what it evicted.
fn eviction_words(a: &Eviction) -> String {
    let asked = match (a.layers_fit, a.layers) {
        (Some(fit), Some(all)) => format!("{fit} of {all} layers fit"),
        (Some(fit), None) => format!("{fit} layers fit"),
        (None, _) => "not every layer fit".to_string(),
    };
    let had: Vec<String> = a
        .gpus
        .iter()
        .map(|g| {
            let name = g.library.as_deref().or(g.id.as_deref()).unwrap_or("GPU");
            match g.available {
                Some(q) => format!("{} available on {name} (line {})", human(q.bytes), g.line),
                None => format!("{name} (line {})", g.line),
            }
        })
        .collect();
    format!(
        "{asked} in {}; evicted {} and laid the load out again (line {})",
        if had.is_empty() {
            "the memory the log does not show".to_string()
        } else {
            had.join(", ")
        },
        a.evicted,
        a.line
    )
}

/// The free memory `--fit` measured per device (its table, its per-device lines, or the one device's `vs. F MiB
/// of free device memory`), when the load has no GPU line of its own.
fn fit_free(load: &Concluded) -> Option<String> {
    let fit = load.reconciled.load.estimate.as_ref()?.fit.as_ref()?;
    let parts: Vec<String> = fit
        .free
        .iter()
        .map(|d| {
            let name = d
                .name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!(
                "{}{name}, {} free (--fit, line {})",
                d.device,
                human(d.free.bytes),
                d.line
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}
