//! The event kinds of Ollama's scheduler in the llama-server era (Ollama 0.30–0.34,
//! `grammars/08-ollama-scheduler.toml`; `docs/log-formats.md` §5.6): the decisions Ollama takes *before*
//! llama.cpp sees the model — the environment in force, the default context, which GPUs llama-server gets (the
//! single-GPU rule), eviction, mmap and projector choices, its retries — and the evidence beside them that
//! users paste (`ollama ps`, `Available devices:`). One kind, `scheduler`, whose rule says which decision a
//! line is (`decision = …`), so each shape is one rule and one arm here; and `file_size`, llama.cpp's `file
//! size` line, which is the first term of Ollama's prediction.

use super::event::{EventKind, PsTableRow, RetryKind, SchedulerLine};
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
use crate::model::Quantity;

/// Every decision word a rule may set, with the line shape it names.
const DECISIONS: &[&str] = &[
    "server-config",
    "default-context",
    "using-llama-server",
    "single-gpu",
    "main-gpu-passed-through",
    "backend",
    "evicting",
    "fits-alongside",
    "make-space",
    "mmap-disabled",
    "invalid-fit-target",
    "retry-context",
    "retry-evict",
    "retry-projector-cpu",
    "runtime-oom",
    "predicted-exceeds",
    "no-buffer-sizes",
    "env-overwritten",
    "ps-header",
    "ps-row",
];

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "scheduler",
        required: &["decision"],
        optional: &[
            "env",
            "total_vram",
            "default_num_ctx",
            "requested_main_gpu",
            "main_gpu",
            "id",
            "name",
            "description",
            "predicted",
            "available",
            "library",
            "gpu_count",
            "available_gpu_count",
            "predicted_num_ctx",
            "gpu_free",
            "system_free",
            "reason",
            "pressure",
            "value",
            "old_num_ctx",
            "new_num_ctx",
            "error",
            "gpu",
            "totalMemory",
            "variable",
            "flag",
            "size",
            "processor",
            "context",
            "loaded layers",
        ],
        settable: &[("decision", Words::List(DECISIONS))],
        build: |f| Ok(EventKind::Scheduler(Box::new(scheduler_line(f)?))),
    },
    EventSpec {
        kind: "file_size",
        required: &["size"],
        optional: &[],
        settable: &[],
        build: |f| Ok(EventKind::FileSize(f.size("size")?)),
    },
];

fn scheduler_line(f: &Fields) -> Result<SchedulerLine, BuildError> {
    Ok(match f.need("decision")? {
        "server-config" => SchedulerLine::ServerConfig(go_map(f.need("env")?)),
        "default-context" => SchedulerLine::DefaultContext {
            total_vram: f.opt_size("total_vram"),
            num_ctx: f.opt_int("default_num_ctx"),
        },
        "using-llama-server" => SchedulerLine::UsingLlamaServer,
        "single-gpu" => SchedulerLine::SingleGpu {
            requested: f.opt_int("requested_main_gpu"),
            main_gpu: f.opt_int("main_gpu"),
            id: f.opt_text("id"),
            name: f.opt_text("name"),
            description: f.opt_text("description"),
            predicted: f.opt_size("predicted"),
            available: f.opt_size("available"),
        },
        "main-gpu-passed-through" => SchedulerLine::MainGpuPassedThrough,
        "backend" => SchedulerLine::Backend {
            library: f.opt_text("library"),
            gpu_count: f.opt_int("gpu_count"),
            available_gpu_count: f.opt_int("available_gpu_count"),
        },
        decision @ ("evicting" | "fits-alongside") => SchedulerLine::Eviction {
            evicting: decision == "evicting",
            predicted: f.opt_size("predicted"),
            predicted_num_ctx: f.opt_int("predicted_num_ctx"),
            available: f.opt_size("available"),
            gpu_free: f.opt_size("gpu_free"),
            system_free: f.opt_size("system_free"),
        },
        "make-space" => SchedulerLine::MakeSpace {
            loaded_layers: f.opt_int("loaded layers"),
        },
        "mmap-disabled" => SchedulerLine::MmapDisabled {
            reason: f.opt_text("reason").or_else(|| f.opt_text("pressure")),
        },
        "invalid-fit-target" => SchedulerLine::InvalidFitTarget {
            value: f.opt_text("value"),
        },
        decision @ ("retry-context" | "retry-evict" | "retry-projector-cpu") => {
            SchedulerLine::Retry {
                kind: match decision {
                    "retry-context" => RetryKind::ReduceContext,
                    "retry-evict" => RetryKind::EvictOthers,
                    _ => RetryKind::ProjectorOnCpu,
                },
                old_num_ctx: f.opt_int("old_num_ctx"),
                new_num_ctx: f.opt_int("new_num_ctx"),
                error: f.opt_text("error"),
            }
        }
        "runtime-oom" => SchedulerLine::RuntimeOom,
        "predicted-exceeds" => SchedulerLine::PredictedExceeds {
            gpu: f.opt_text("gpu"),
            total: f.opt_size("totalMemory"),
            predicted: f.opt_size("predicted"),
        },
        "no-buffer-sizes" => SchedulerLine::NoBufferSizes,
        "env-overwritten" => SchedulerLine::EnvOverwritten {
            variable: f.need("variable")?.to_string(),
            flag: f.need("flag")?.to_string(),
        },
        "ps-header" => SchedulerLine::PsHeader,
        "ps-row" => SchedulerLine::PsRow(ps_row(f)?),
        other => return Err(format!("unknown scheduler decision '{other}'")),
    })
}

/// A pasted `ollama ps` row: SIZE is Ollama's decimal `HumanBytes` (`12 GB`, `7.5 GB`, `980 MB`).
fn ps_row(f: &Fields) -> Result<PsTableRow, BuildError> {
    let size_text = f.need("size")?;
    let size = decimal_size(size_text).ok_or_else(|| format!("not a size: '{size_text}'"))?;
    let processor = f.need("processor")?.trim().to_string();
    Ok(PsTableRow {
        name: f.need("name")?.to_string(),
        size,
        gpu_percent: gpu_percent(&processor),
        processor,
        context: f.opt_int("context"),
    })
}

/// The GPU share of a PROCESSOR cell: `100% GPU` → 100, `48%/52% CPU/GPU` → 52, `100% CPU` → 0.
fn gpu_percent(processor: &str) -> Option<i64> {
    let (figures, places) = processor.split_once(' ')?;
    let percents: Vec<i64> = figures
        .split('/')
        .map(|p| p.trim_end_matches('%').parse().ok())
        .collect::<Option<_>>()?;
    let places: Vec<&str> = places.trim().split('/').collect();
    match (percents.as_slice(), places.as_slice()) {
        ([p], ["GPU"]) => Some(*p),
        ([p], ["CPU"]) => Some(100i64.saturating_sub(*p)),
        ([_, g], ["CPU", "GPU"]) => Some(*g),
        _ => None,
    }
}

/// A size in decimal units as Ollama's CLI prints it (`12 GB`, `7.5 GB`, `980 MB`), with bounds of half the last
/// printed digit.
fn decimal_size(text: &str) -> Option<Quantity> {
    let (number, unit) = text.trim().split_once(' ')?;
    let scale: i64 = match unit.trim() {
        "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let mantissa: u128 = format!("{whole}{fraction}").parse().ok()?;
    Quantity::from_decimal(mantissa, u32::try_from(fraction.len()).ok()?, scale)
}

/// Go's `%v` of a `map[string]string` (`map[A: B:x C:[a b]]`): each `KEY:value`, values may be empty or hold
/// bracketed lists with spaces. Keys are upper-case identifiers as Ollama's variables are (`http_proxy` too).
pub fn go_map(text: &str) -> Vec<(String, String)> {
    let inner = text
        .trim()
        .strip_prefix("map[")
        .map(|t| t.strip_suffix(']').unwrap_or(t))
        .unwrap_or(text);
    let mut out: Vec<(String, String)> = Vec::new();
    let mut depth = 0usize;
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut Vec<(String, String)>| {
        if token.is_empty() {
            return;
        }
        let starts_key = token
            .split_once(':')
            .filter(|(k, _)| {
                !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
            .map(|(k, v)| (k.to_string(), v.to_string()));
        match (starts_key, out.last_mut()) {
            (Some(pair), _) => out.push(pair),
            (None, Some((_, value))) => {
                value.push(' ');
                value.push_str(token);
            }
            (None, None) => {}
        }
        token.clear();
    };
    for c in inner.chars() {
        match c {
            '[' => {
                depth = depth.saturating_add(1);
                token.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                token.push(c);
            }
            ' ' if depth == 0 => flush(&mut token, &mut out),
            _ => token.push(c),
        }
    }
    flush(&mut token, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_go_map_keeps_empty_values_and_bracketed_lists() {
        let map = go_map("map[CUDA_VISIBLE_DEVICES: LLAMA_ARG_FIT_TARGET: OLLAMA_CONTEXT_LENGTH:0 OLLAMA_ORIGINS:[http://localhost https://localhost] OLLAMA_SCHED_SPREAD:false http_proxy:]");
        assert_eq!(
            map,
            vec![
                ("CUDA_VISIBLE_DEVICES".to_string(), String::new()),
                ("LLAMA_ARG_FIT_TARGET".to_string(), String::new()),
                ("OLLAMA_CONTEXT_LENGTH".to_string(), "0".to_string()),
                (
                    "OLLAMA_ORIGINS".to_string(),
                    "[http://localhost https://localhost]".to_string()
                ),
                ("OLLAMA_SCHED_SPREAD".to_string(), "false".to_string()),
                ("http_proxy".to_string(), String::new()),
            ]
        );
        assert!(go_map("").is_empty());
        assert!(go_map("map[").is_empty());
    }

    #[test]
    fn ps_sizes_are_decimal_with_half_a_digit_of_bounds() {
        let q = decimal_size("12 GB").unwrap();
        assert_eq!(
            (q.bytes, q.low, q.high),
            (12_000_000_000, 11_500_000_000, 12_500_000_000)
        );
        let q = decimal_size("7.5 GB").unwrap();
        assert_eq!((q.low, q.high), (7_450_000_000, 7_550_000_000));
        assert_eq!(decimal_size("12 GiB"), None);
        assert_eq!(decimal_size("x GB"), None);
        assert_eq!(decimal_size("99999999999999999999 GB"), None);
        assert_eq!(gpu_percent("100% GPU"), Some(100));
        assert_eq!(gpu_percent("48%/52% CPU/GPU"), Some(52));
        assert_eq!(gpu_percent("100% CPU"), Some(0));
        assert_eq!(gpu_percent("GPU"), None);
    }
}
