//! The chain of decisions of one Ollama ≥ 0.30 load, as steps in order (`docs/log-formats.md` §5.6): what Ollama
//! predicted, which GPUs it handed to llama-server and why (the single-GPU rule), the projector gate and the
//! `--fit` margin, what `--fit` did, the buffers allocated, and the retries — each step with its lines. Built
//! from the stages' values; the formats only lay it out ([`super::document::Block::Steps`]).

use super::document::{Step, Steps};
use crate::model::scheduler::{
    GpuChoice, PaddingEvidence, PredictionSource, Scheduler, SingleGpuTest,
};
use crate::model::{human, Concluded, FitDecision, Quantity};

/// The chain of a load Ollama's scheduler placed through llama-server; none for other runtimes.
pub fn chain(load: &Concluded) -> Option<Steps> {
    let l = &load.reconciled.load;
    let s = l.scheduler.as_ref()?;
    let mut items = Vec::new();
    if let Some(step) = environment(s) {
        items.push(step);
    }
    items.push(prediction(s, l.settings.kv_cache_type.as_deref()));
    items.push(gpus(s, !l.gpus.is_empty()));
    if let Some(step) = integrated(l) {
        items.push(step);
    }
    if let Some(step) = eviction(s) {
        items.push(step);
    }
    if let Some(step) = projector(s, l, load.whatif.as_ref()) {
        items.push(step);
    }
    if let Some(step) = fit(load) {
        items.push(step);
    }
    if let Some(step) = buffers(load) {
        items.push(step);
    }
    items.push(outcome(s, l));
    Some(Steps {
        title: "Ollama's chain of decisions".to_string(),
        items,
    })
}

fn environment(s: &Scheduler) -> Option<Step> {
    let set: Vec<String> = s
        .environment
        .iter()
        // Unset, or set to its default: not a choice the user made.
        .filter(|e| !matches!(e.value.as_str(), "" | "0" | "false"))
        .map(|e| format!("{}={}", e.name, e.value))
        .collect();
    let mut text = match (&s.environment_line, set.is_empty()) {
        (None, _) => return default_context_only(s),
        (Some(_), true) => "no placement variable set".to_string(),
        (Some(_), false) => set.join(", "),
    };
    let mut lines: Vec<u64> = s.environment_line.into_iter().collect();
    if let Some(d) = &s.default_context {
        text.push_str(&default_context_words(d));
        lines.push(d.line);
    }
    Some(Step {
        label: "environment".to_string(),
        text,
        lines,
    })
}

fn default_context_only(s: &Scheduler) -> Option<Step> {
    let d = s.default_context.as_ref()?;
    Some(Step {
        label: "environment".to_string(),
        text: default_context_words(d)
            .trim_start_matches("; ")
            .to_string(),
        lines: vec![d.line],
    })
}

fn default_context_words(d: &crate::model::scheduler::DefaultContext) -> String {
    match (d.num_ctx, d.total_vram) {
        (Some(n), Some(v)) => format!("; default num_ctx {n} for {} of VRAM", human(v.bytes)),
        (Some(n), None) => format!("; default num_ctx {n}"),
        (None, _) => String::new(),
    }
}

fn prediction(s: &Scheduler, kv_type: Option<&str>) -> Step {
    let Some(p) = &s.prediction else {
        return Step {
            label: "Ollama's prediction".to_string(),
            text:
                "not in the log (no predicted= line, and no file size or model shape to compute it)"
                    .to_string(),
            lines: vec![],
        };
    };
    let text = match (p.source, p.file_size, p.kv_f16, p.context) {
        (PredictionSource::Computed, Some(file), Some(kv), Some(ctx)) => {
            let kv_note = match kv_type {
                Some(t) if t != "f16" => format!(", counted at f16 although the cache is {t}"),
                Some(_) | None => String::new(),
            };
            format!(
                "{} = file size {} + KV {} for {ctx} tokens (computed as Ollama does: KV at f16, no sliding window{kv_note})",
                human(p.total.bytes),
                human(file.bytes),
                human(kv.bytes)
            )
        }
        _ => format!("{} (as the scheduler printed it)", human(p.total.bytes)),
    };
    Step {
        label: "Ollama's prediction".to_string(),
        text,
        lines: p.lines.iter().take(2).copied().collect(),
    }
}

/// Integrated GPUs (`inference compute … type=iGPU`): their "free" memory is the system's, and their buffers
/// are system memory (`docs/log-formats.md` §5.6 item 1; ollama#16462).
fn integrated(l: &crate::model::Load) -> Option<Step> {
    let igpus: Vec<&crate::model::Gpu> = l.gpus.iter().filter(|g| g.integrated).collect();
    if igpus.is_empty() {
        return None;
    }
    let names: Vec<String> = igpus
        .iter()
        .map(|g| g.name.clone().unwrap_or_else(|| format!("GPU {}", g.id)))
        .collect();
    Some(Step {
        label: "integrated GPU".to_string(),
        text: format!(
            "{} {} integrated (type=iGPU): {} free memory is the system's available memory, shared with the CPU, so the four views never count {} buffers as VRAM",
            names.join(", "),
            if igpus.len() == 1 { "is" } else { "are" },
            if igpus.len() == 1 { "its" } else { "their" },
            if igpus.len() == 1 { "its" } else { "their" },
        ),
        lines: igpus.iter().map(|g| g.line).collect(),
    })
}

/// The eviction check: the same prediction against the free memory of every GPU together.
fn eviction(s: &Scheduler) -> Option<Step> {
    let e = s.eviction.as_ref()?;
    let figures = match (e.predicted, e.available) {
        (Some(p), Some(a)) => format!(
            " (prediction {} against {} available)",
            human(p.bytes),
            human(a.bytes)
        ),
        (Some(p), None) => format!(" (prediction {})", human(p.bytes)),
        (None, _) => String::new(),
    };
    let text = if e.evicting {
        format!(
            "the prediction exceeded the memory available{figures}: Ollama unloaded other models before this load, so the free memory llama-server measured includes what they held, and they reload on their next request"
        )
    } else {
        format!("the prediction fits beside the models already loaded{figures}: none was unloaded; their memory is not free for this load")
    };
    Some(Step {
        label: "eviction".to_string(),
        text,
        lines: vec![e.line],
    })
}

fn rule_words(t: &SingleGpuTest) -> String {
    let gpu = gpu_label(t);
    match &t.misses_by {
        Some(miss) => format!(
            "{gpu}: bar {} (80 % of {} available), missed by {}",
            human(t.bar.bytes),
            human(t.available.bytes),
            human(miss.bytes)
        ),
        None => format!(
            "{gpu}: bar {} (80 % of {} available), within it",
            human(t.bar.bytes),
            human(t.available.bytes)
        ),
    }
}

fn gpu_label(t: &SingleGpuTest) -> String {
    match &t.name {
        Some(name) => name.clone(),
        None => format!("GPU {}", t.gpu),
    }
}

fn gpus(s: &Scheduler, has_gpus: bool) -> Step {
    let rule: Vec<String> = s.single_gpu_rule.iter().map(rule_words).collect();
    let mut lines: Vec<u64> = s.single_gpu_rule.iter().map(|t| t.line).collect();
    let text = match &s.gpu_choice {
        GpuChoice::SingleGpu {
            name,
            id,
            requested,
            line,
            ..
        } => {
            lines.push(*line);
            let which = name.clone().or(id.clone()).unwrap_or_default();
            match requested {
                Some(r) => format!("one GPU, {which}: the client asked for main_gpu {r}"),
                None => format!(
                    "one GPU, {which}: the prediction is within 80 % of its available memory"
                ),
            }
        }
        GpuChoice::MainGpu { main_gpu, line } => {
            lines.push(*line);
            format!("one GPU: main_gpu {main_gpu} (--split-mode none --main-gpu {main_gpu})")
        }
        GpuChoice::Backend {
            library,
            gpu_count,
            line,
        } => {
            lines.push(*line);
            format!(
                "the {} GPUs ({} of them)",
                library.as_deref().unwrap_or("chosen library's"),
                gpu_count.map_or("?".to_string(), |n| n.to_string())
            )
        }
        GpuChoice::AllGpus { since_line } if !has_gpus => {
            lines.extend(since_line);
            "none: the log shows no GPU, llama-server runs on the CPU".to_string()
        }
        GpuChoice::AllGpus { since_line } => {
            lines.extend(since_line);
            let mut text = "every GPU: no `selecting single GPU` line".to_string();
            if !rule.is_empty() {
                text.push_str(&format!(
                    "; the prediction missed the 80 % single-GPU bar on {}: {}",
                    if s.single_gpu_rule.iter().all(|t| !t.passes) {
                        "every GPU"
                    } else {
                        "some GPUs"
                    },
                    rule.join("; ")
                ));
            }
            if let Some(t) = s.footprint_fits_but_rule_missed() {
                text.push_str(&format!(
                    "; yet the buffers allocated fit {} alone ({} to spare above the --fit margin)",
                    gpu_label(t),
                    t.footprint_spare
                        .map_or("?".to_string(), |q| human(q.bytes))
                ));
            }
            text
        }
        GpuChoice::NotShown => "not shown by the log".to_string(),
    };
    lines.sort_unstable();
    lines.dedup();
    Step {
        label: "GPUs handed to llama-server".to_string(),
        text,
        lines,
    }
}

fn projector(
    s: &Scheduler,
    l: &crate::model::Load,
    whatif: Option<&crate::model::WhatIf>,
) -> Option<Step> {
    let gate = s.projector.as_ref()?;
    let size = gate
        .size
        .map(|q| format!(" ({})", human(q.bytes)))
        .unwrap_or_default();
    let logged = l.estimate.as_ref().and_then(|e| e.fit.as_ref()?.target);
    let target = gate
        .fit_target
        .or(l.settings.fit_target)
        .or(logged)
        .unwrap_or(Quantity::exact(crate::model::GIB));
    let mut lines = gate.lines.clone();
    let mut text = if gate.offloaded {
        match (gate.fit_target_set_by_user, gate.size, gate.padding) {
            (true, _, _) => format!(
                "projector{size} offloaded to a GPU; --fit margin as LLAMA_ARG_FIT_TARGET sets it (Ollama does not pad a target the user set)"
            ),
            (false, Some(_), Some(evidence)) => format!(
                "projector{size} offloaded to a GPU; Ollama raised the --fit margin to ⌈projector + 1 GiB⌉ = {} MiB ({}) per GPU, {} above llama.cpp's 1 GiB ({})",
                target.bytes / crate::model::MIB,
                human(target.bytes),
                human(target.bytes.saturating_sub(crate::model::GIB)),
                match evidence {
                    PaddingEvidence::Version => format!(
                        "Ollama {} pads it",
                        l.ollama_version.as_deref().unwrap_or("≥ 0.31.2")
                    ),
                    PaddingEvidence::LoggedTarget => "the fit's printed target shows it".to_string(),
                    PaddingEvidence::Assumed =>
                        "if this Ollama is 0.31.2 or later: the log gives neither the version nor the fit's target"
                            .to_string(),
                }
            ),
            (false, _, _) => format!(
                "projector{size} offloaded to a GPU; --fit margin {} per GPU (Ollama pads it only from 0.31.2, by a projector size the log gives)",
                human(target.bytes)
            ),
        }
    } else {
        let mut text = format!(
            "projector{size} kept on the CPU{}",
            gate.reason
                .as_ref()
                .map(|r| format!(" (reason={r})"))
                .unwrap_or_default(),
        );
        if let Some(r) = &gate.rule {
            lines.push(r.line);
            text.push_str(&projector_rule_words(r));
        }
        text.push_str(&format!(
            "; --fit margin {} per device",
            human(target.bytes)
        ));
        text
    };
    if let (Some(t), true) = (logged, gate.offloaded && gate.padding.is_some()) {
        if t.bytes > target.bytes {
            text.push_str(&format!(
                "; the fit printed {} (llama-server adds its own reserve for the projector)",
                human(t.bytes)
            ));
        }
    }
    match whatif.and_then(|w| w.projector_padding.as_ref()) {
        Some(p) if p.cost_nothing() => text.push_str(&format!(
            "; the padding cost nothing: by the fit replayed with the measured sizes {} of {} layers are on the GPUs at either margin",
            p.layers_padded, p.total_layers
        )),
        Some(p) => text.push_str(&format!(
            "; the padding cost {} by the fit replayed with the measured sizes ({} of {} layers on {} GPU{} at {}, {} on {} at {})",
            match (p.layers_lost(), p.gpus_added()) {
                (0, g) => format!("{g} GPU{}", if g == 1 { "" } else { "s" }),
                (n, _) => format!("{n} layer{}", if n == 1 { "" } else { "s" }),
            },
            p.layers_padded,
            p.total_layers,
            p.gpus_padded,
            if p.gpus_padded == 1 { "" } else { "s" },
            human(p.padded_target.bytes),
            p.layers_plain,
            p.gpus_plain,
            human(p.plain_target.bytes)
        )),
        None if gate.offloaded && gate.padding.is_some() => text.push_str(
            "; its cost in layers is not computed: the log has no buffers to replay the fit with",
        ),
        None => {}
    }
    lines.sort_unstable();
    lines.dedup();
    Some(Step {
        label: "projector gate and fit target".to_string(),
        text,
        lines,
    })
}

/// Which of Ollama's rules kept the projector on the CPU, with the GPU's room.
fn projector_rule_words(r: &crate::model::scheduler::ProjectorRule) -> String {
    use crate::model::scheduler::{ProjectorRuleKind, RuleEvidence};
    let by = match r.by {
        RuleEvidence::Version => "",
        RuleEvidence::Figures => ", by the figures: the log gives no version",
    };
    match r.kind {
        ProjectorRuleKind::Floor10Gib => format!(
            ": Ollama 0.30's flat 10 GiB floor, {} had {} available{by}",
            r.gpu,
            human(r.available.bytes)
        ),
        ProjectorRuleKind::ProjectorPlus1Gib => format!(
            ": Ollama ≥ 0.31's rule, {} had {} free, under the projector + 1 GiB{}{by}",
            r.gpu,
            human(r.free.unwrap_or(r.available).bytes),
            r.bar
                .map(|b| format!(" ({})", human(b.bytes)))
                .unwrap_or_default()
        ),
    }
}

fn fit(load: &Concluded) -> Option<Step> {
    let f = load.reconciled.load.estimate.as_ref()?.fit.as_ref()?;
    let mut text = match f.outcome {
        FitDecision::NoChange => "no changes needed: every device kept its margin".to_string(),
        FitDecision::Changed => match f.reduce_by {
            Some(q) => format!(
                "layers moved to meet the margins (needed {} less)",
                human(q.bytes)
            ),
            None => "layers moved to meet the margins".to_string(),
        },
        FitDecision::Aborted => {
            "aborted: a setting the fit may not change was set, so the layers were placed as asked, unfitted"
                .to_string()
        }
        FitDecision::Failed => "failed: the layers were placed as asked, unfitted".to_string(),
        FitDecision::Unknown => "the log stops before the fit decided".to_string(),
    };
    if let Some(sec) = f.seconds {
        text.push_str(&format!(", took {sec:.2} s"));
    }
    Some(Step {
        label: "--fit".to_string(),
        text,
        lines: f.plan_line.into_iter().collect(),
    })
}

fn buffers(load: &Concluded) -> Option<Step> {
    let gpus: Vec<&crate::model::DeviceRow> = load
        .reconciled
        .devices
        .iter()
        .filter(|d| !d.host && d.actual.is_some())
        .collect();
    if gpus.is_empty() {
        return None;
    }
    let words: Vec<String> = gpus
        .iter()
        .filter_map(|d| d.actual.map(|a| format!("{} {}", d.device, human(a.bytes))))
        .collect();
    let mut lines: Vec<u64> = gpus.iter().flat_map(|d| d.lines.iter().copied()).collect();
    lines.sort_unstable();
    lines.dedup();
    lines.truncate(1);
    Some(Step {
        label: "buffers".to_string(),
        text: words.join(", "),
        lines,
    })
}

fn outcome(s: &Scheduler, l: &crate::model::Load) -> Step {
    let mut parts: Vec<String> = s
        .retries
        .iter()
        .map(|r| match (r.kind, r.old_num_ctx, r.new_num_ctx) {
            (crate::model::RetryKind::ReduceContext, Some(a), Some(b)) => {
                format!(
                    "Ollama retried once with num_ctx cut from {a} to {b} (line {})",
                    r.line
                )
            }
            (kind, _, _) => format!("Ollama retried once ({}, line {})", kind.as_str(), r.line),
        })
        .collect();
    let mut lines: Vec<u64> = s.retries.iter().map(|r| r.line).collect();
    match (&l.actual.failure, l.actual.failed) {
        (Some(f), true) => parts.push(format!("failed: {f}")),
        _ if s.retries.is_empty() => parts.push("no retry".to_string()),
        _ => {}
    }
    if let Some(first) = s.runtime_oom_lines.first() {
        parts.push(format!(
            "a runtime out-of-memory made Ollama expire its loaded models to clear memory (line {first}): the next request reloads them"
        ));
    }
    lines.extend(s.runtime_oom_lines.iter().copied());
    Step {
        label: "retries".to_string(),
        text: parts.join("; "),
        lines,
    }
}
