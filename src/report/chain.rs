//! The chain of decisions of one Ollama ≥ 0.30 load, as steps in order (`docs/log-formats.md` §5.6): what Ollama
//! predicted, which GPUs it handed to llama-server and why (the single-GPU rule), the projector gate and the
//! `--fit` margin, what `--fit` did, the buffers allocated, and the retries — each step with its lines. Built
//! from the stages' values; the formats only lay it out ([`super::document::Block::Steps`]).

use super::document::{Step, Steps};
use crate::model::scheduler::{GpuChoice, PredictionSource, Scheduler, SingleGpuTest};
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
    if let Some(step) = projector(s, l) {
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

fn projector(s: &Scheduler, l: &crate::model::Load) -> Option<Step> {
    let gate = s.projector.as_ref()?;
    let size = gate
        .size
        .map(|q| format!(" ({})", human(q.bytes)))
        .unwrap_or_default();
    let target = gate
        .fit_target
        .or(l.settings.fit_target)
        .or(l.estimate.as_ref().and_then(|e| e.fit.as_ref()?.target))
        .unwrap_or(Quantity::exact(crate::model::GIB));
    let text = if gate.offloaded {
        match (gate.fit_target_set_by_user, gate.size) {
            (false, Some(p)) => format!(
                "projector{size} offloaded to a GPU; --fit margin raised to ⌈projector + 1 GiB⌉ = {} per GPU ({} of it for the projector)",
                human(target.bytes),
                human(target.bytes.saturating_sub(crate::model::GIB).max(p.bytes))
            ),
            (true, _) => format!(
                "projector{size} offloaded to a GPU; --fit margin as LLAMA_ARG_FIT_TARGET sets it"
            ),
            (false, None) => format!("projector offloaded to a GPU; --fit margin {}", human(target.bytes)),
        }
    } else {
        format!(
            "projector{size} kept on the CPU{}; --fit margin {} per device",
            gate.reason
                .as_ref()
                .map(|r| format!(" (reason={r})"))
                .unwrap_or_default(),
            human(target.bytes)
        )
    };
    Some(Step {
        label: "projector gate and fit target".to_string(),
        text,
        lines: gate.lines.clone(),
    })
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
    lines.extend(s.runtime_oom_lines.iter().copied());
    Step {
        label: "retries".to_string(),
        text: parts.join("; "),
        lines,
    }
}
