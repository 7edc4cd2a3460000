//! The event kinds of vLLM's and SGLang's memory lines (`grammars/35-vllm.toml`, `grammars/36-sglang.toml`;
//! `docs/log-formats.md` §8): one kind per line shape, each built into a [`ServingLine`] with the rank the
//! line's prefix named (`[rank=TP1] `, kept by `frame::prefix`).
//!
//! Both engines print GiB with two decimals (vLLM `6.87 GiB`; SGLang `1.42 GB`, which it computes by dividing
//! by 2^30), so every figure is read as GiB ± 0.005 GiB; V0's `Loading model weights took 2.8797 GB` is GiB
//! too, with four decimals. Figures can be negative (`Available KV cache memory: -2.14 GiB`).

use super::event::EventKind;
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
pub use super::serving_line::{
    FailureWording, KvAdvisory, ProcessesInUse, ProfileFigures, ServingArgs, ServingEvent,
    ServingFailure, ServingLine, SglangStage, TorchOom,
};
use crate::model::{Quantity, GIB};

const STAGES: [(SglangStage, &str); 7] = [
    (SglangStage::DistributedEnd, "distributed_end"),
    (SglangStage::WeightsBegin, "weights_begin"),
    (SglangStage::WeightsEnd, "weights_end"),
    (SglangStage::PoolEnd, "pool_end"),
    (SglangStage::GraphBegin, "graph_begin"),
    (SglangStage::GraphEnd, "graph_end"),
    (SglangStage::Workspace, "workspace"),
];

const STAGE_WORDS: &[&str] = &[
    "distributed_end",
    "weights_begin",
    "weights_end",
    "pool_end",
    "graph_begin",
    "graph_end",
    "workspace",
];

const FAILURE_WORDS: &[&str] = &[
    "no_cache_memory",
    "max_len_over_kv",
    "free_below_budget",
    "oom",
    "engine_failed",
    "crashed",
];

/// The value after one of `names` in an argument text, in any of the ways the engines print it: a flag
/// (`--gpu-memory-utilization=0.98`, `-tp 2`), a Python dict (`'max_model_len': 262144`) or a dataclass dump
/// (`mem_fraction_static=0.85`). Dashes and underscores are one.
fn arg_value<'a>(text: &'a str, names: &[&str]) -> Option<&'a str> {
    let normal: String = text
        .chars()
        .map(|c| if c == '-' { '_' } else { c })
        .collect();
    for name in names {
        let mut from = 0;
        while let Some(at) = normal[from..].find(name).map(|i| i + from) {
            from = at + name.len();
            // Part of a longer name (`max_tp_size` for `tp_size`): a letter or digit before it, underscores
            // (a flag's dashes) skipped.
            let before = normal[..at].trim_end_matches('_').chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
                continue;
            }
            let rest = &text[from..];
            let rest = rest
                .strip_prefix("': ")
                .or_else(|| rest.strip_prefix('='))
                .or_else(|| rest.strip_prefix(' '))
                .unwrap_or("");
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            if end > 0 {
                return Some(&rest[..end]);
            }
        }
    }
    None
}

/// The word after `name` in an argument text (`kv_cache_dtype='auto'`, `'kv_cache_dtype': 'fp8_e4m3'`,
/// `--kv-cache-dtype fp8`), quotes dropped; dashes and underscores are one.
fn arg_word(text: &str, name: &str) -> Option<String> {
    let normal: String = text
        .chars()
        .map(|c| if c == '-' { '_' } else { c })
        .collect();
    let at = normal.find(name)?;
    let rest = normal[at + name.len()..].trim_start_matches(['\'', '"', ':', '=', ' ']);
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

fn args(f: &Fields) -> Result<ServingArgs, BuildError> {
    let text = f.need("args")?;
    Ok(ServingArgs {
        sglang: f.get("engine") == Some("sglang"),
        utilization: arg_value(text, &["gpu_memory_utilization"]).and_then(ratio),
        mem_fraction: arg_value(text, &["mem_fraction_static"]).and_then(ratio),
        max_len: arg_value(text, &["max_model_len", "context_length"]).and_then(count),
        tp: arg_value(text, &["tensor_parallel_size", "tp_size", "__tp", "_tp"]).and_then(count),
        max_num_seqs: arg_value(text, &["max_num_seqs"]).and_then(count),
        batched_tokens: arg_value(text, &["max_num_batched_tokens", "chunked_prefill_size"])
            .and_then(count),
        graph_max_bs: arg_value(text, &["cuda_graph_max_bs"]).and_then(count),
        kv_fp8: arg_word(text, "kv_cache_dtype").map(|w| w.contains("fp8")),
    })
}

/// The model an engine's arguments name: `--model X`, `--model-path X` (SGLang), `model='X'`/`model_path='X'`
/// (SGLang's `ServerArgs(…)`, vLLM's `non-default args: {'model': 'X'}`), else `vllm serve`'s positional model
/// — the first word that is not a flag nor a number (a flag's value): `meta-llama/Meta-Llama-3-8B` of `vllm
/// serve meta-llama/Meta-Llama-3-8B -tp 2` (`sample-logs/801-…`), the path last in `vllm serve
/// --trust-remote-code --tensor_parallel_size 2 --gpu_memory_utilization=0.98  /root/…/DeepSeek-R1-Distill-Qwen-14B`
/// (`sample-logs/803-…`). What two loads of one model share (`crate::pairs::identity`).
pub fn model_name(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let clean = |w: &str| {
        w.trim_matches(|c| matches!(c, '\'' | '"' | ',' | '(' | ')' | '{' | '}'))
            .to_string()
    };
    for (i, w) in words.iter().enumerate() {
        for flag in ["--model", "--model-path", "--model_path"] {
            if *w == flag {
                return words.get(i + 1).map(|v| clean(v)).filter(|v| !v.is_empty());
            }
            if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                return Some(clean(v)).filter(|v| !v.is_empty());
            }
        }
    }
    for key in ["model_path=", "model=", "'model': ", "'model_path': "] {
        if let Some(at) = text.find(key) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &text[at + key.len()..];
            let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let value = &rest[1..];
            return value
                .find(quote)
                .map(|end| value[..end].to_string())
                .filter(|v| !v.is_empty());
        }
    }
    words
        .iter()
        .find(|w| {
            !w.starts_with('-')
                && !w.contains('=')
                && w.chars().any(|c| c.is_ascii_alphabetic())
                && w.parse::<f64>().is_err()
                && !matches!(**w, "true" | "false" | "auto")
        })
        .map(|w| clean(w))
        .filter(|w| !w.is_empty())
}

/// A figure in GiB as printed (`6.87`, `-2.14`, `79.22`), ± half its last digit.
pub fn gib(text: &str) -> Option<Quantity> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mantissa: u128 = format!("{whole}{fraction}").parse().ok()?;
    let q = Quantity::from_decimal(mantissa, u32::try_from(fraction.len()).ok()?, GIB)?;
    Some(if negative {
        Quantity::with_bounds(
            q.bytes.checked_neg()?,
            q.high.checked_neg()?,
            q.low.checked_neg()?,
        )
    } else {
        q
    })
}

/// A whole number, thousands separators allowed (`973,760`).
fn count(text: &str) -> Option<i64> {
    let t: String = text.trim().chars().filter(|c| *c != ',').collect();
    t.parse().ok()
}

/// A ratio (`0.90`, `0.8352`).
fn ratio(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|r| r.is_finite())
}

fn opt_gib(f: &Fields, name: &str) -> Option<Quantity> {
    f.get(name).and_then(gib)
}

fn need_gib(f: &Fields, name: &str) -> Result<Quantity, BuildError> {
    let text = f.need(name)?;
    gib(text).ok_or_else(|| format!("field '{name}' is not a GiB figure: '{text}'"))
}

/// A size with its unit, as PyTorch prints it (`20.00 MiB`, `79.15 GiB`).
fn opt_size(f: &Fields, name: &str) -> Option<Quantity> {
    f.get(name).and_then(super::values::parse_size)
}

fn opt_count(f: &Fields, name: &str) -> Option<i64> {
    f.get(name).and_then(count)
}

fn need_count(f: &Fields, name: &str) -> Result<i64, BuildError> {
    let text = f.need(name)?;
    count(text).ok_or_else(|| format!("field '{name}' is not a count: '{text}'"))
}

fn opt_ratio(f: &Fields, name: &str) -> Option<f64> {
    f.get(name).and_then(ratio)
}

fn need_ratio(f: &Fields, name: &str) -> Result<f64, BuildError> {
    let text = f.need(name)?;
    ratio(text).ok_or_else(|| format!("field '{name}' is not a ratio: '{text}'"))
}

/// The event of a line of this family, with the rank its prefix named.
fn serving(f: &Fields, line: ServingLine) -> Result<EventKind, BuildError> {
    Ok(EventKind::Serving(Box::new(ServingEvent {
        rank: f.opt_text("rank"),
        line,
    })))
}

fn failure(f: &Fields) -> Result<ServingFailure, BuildError> {
    Ok(match f.need("cause")? {
        "no_cache_memory" => ServingFailure::NoCacheMemory,
        "max_len_over_kv" => {
            let len = need_count(f, "len")?;
            let (needed, available) = (opt_gib(f, "needed"), opt_gib(f, "available"));
            // vLLM's wording with the KV figures names the longest length that fits ("the estimated maximum
            // model length is M"); a build that prints no M gives the figures it scales by.
            let tokens = match (opt_count(f, "tokens"), needed, available) {
                (Some(t), _, _) => t,
                (None, Some(n), Some(a)) if n.bytes > 0 => {
                    (len as f64 * a.bytes as f64 / n.bytes as f64).floor() as i64
                }
                (None, _, _) => need_count(f, "tokens")?,
            };
            ServingFailure::MaxLenOverKv {
                len,
                tokens,
                needed,
                available,
            }
        }
        "free_below_budget" => ServingFailure::FreeBelowBudget {
            free: need_gib(f, "free")?,
            total: need_gib(f, "total")?,
            utilization: need_ratio(f, "util")?,
            budget: need_gib(f, "budget")?,
        },
        "oom" => {
            let (this_process, processes) = processes_in_use(f.get("processes").unwrap_or(""));
            ServingFailure::OutOfMemory(TorchOom {
                tried: opt_size(f, "size"),
                total: opt_size(f, "total"),
                free: opt_size(f, "free"),
                allocated: opt_size(f, "allocated"),
                reserved: opt_size(f, "reserved"),
                this_process,
                processes,
            })
        }
        "engine_failed" => ServingFailure::EngineFailed,
        "crashed" => ServingFailure::Crashed,
        other => return Err(format!("unknown failure cause '{other}'")),
    })
}

/// torch's per-process memory (`Process 2611 has 77.81 GiB memory in use. Including non-PyTorch memory, this
/// process has … memory in use. `): this process's figure, and the other entries summed.
fn processes_in_use(text: &str) -> (Option<Quantity>, ProcessesInUse) {
    let mut this_process = None;
    let mut others = ProcessesInUse::default();
    for entry in text.split(" memory in use.") {
        let Some((who, size)) = entry.trim().rsplit_once(" has ") else {
            continue;
        };
        let Some(size) = super::values::parse_size(size.trim()) else {
            continue;
        };
        if who.ends_with("this process") {
            this_process = Some(size);
        } else if who.starts_with("Process ") {
            others.count += 1;
            others.sum = Some(others.sum.map_or(size, |s| s.plus(size)));
            if others.largest.is_none_or(|l| size.bytes > l.bytes) {
                others.largest = Some(size);
            }
        }
    }
    (this_process, others)
}

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "serving_version",
        required: &["version"],
        optional: &["rank", "engine", "tokens"],
        settable: &[("engine", Words::List(&["V0", "V1"]))],
        build: |f| {
            let version = f.need("version")?.trim().to_string();
            // Before 0.8 the only engine was V0 (`Initializing an LLM engine (v0.5.4)`).
            let early = version.starts_with("0.")
                && version[2..]
                    .split('.')
                    .next()
                    .and_then(|m| m.parse::<u32>().ok())
                    .is_some_and(|m| m < 8);
            let v0 = match f.get("engine") {
                Some(word) => word == "V0",
                None => early,
            };
            serving(
                f,
                ServingLine::Version {
                    version,
                    v0,
                    max_len: opt_count(f, "tokens"),
                },
            )
        },
    },
    EventSpec {
        kind: "serving_args",
        required: &["args"],
        optional: &["rank", "engine"],
        settable: &[("engine", Words::List(&["vllm", "sglang"]))],
        build: |f| {
            let model = model_name(f.need("args")?);
            serving(f, ServingLine::Args(args(f)?, model))
        },
    },
    EventSpec {
        kind: "serving_ready",
        required: &[],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::Ready),
    },
    EventSpec {
        kind: "serving_platform",
        required: &["platform"],
        optional: &["rank"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::Platform(f.need("platform")?.trim().to_string()),
            )
        },
    },
    EventSpec {
        kind: "serving_max_len",
        required: &["tokens"],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::MaxModelLen(need_count(f, "tokens")?)),
    },
    EventSpec {
        kind: "vllm_weights",
        required: &["size"],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::WeightsLoaded(need_gib(f, "size")?)),
    },
    EventSpec {
        kind: "vllm_profile",
        required: &[],
        optional: &[
            "rank",
            "total",
            "util",
            "budget",
            "weights",
            "non_torch",
            "activation",
            "graph",
            "kv",
        ],
        settable: &[],
        build: |f| {
            let figures = ProfileFigures {
                total: opt_gib(f, "total"),
                utilization: opt_ratio(f, "util"),
                budget: opt_gib(f, "budget"),
                weights: opt_gib(f, "weights"),
                non_torch: opt_gib(f, "non_torch"),
                activation: opt_gib(f, "activation"),
                graph_estimate: opt_gib(f, "graph"),
                kv: opt_gib(f, "kv"),
            };
            if figures == ProfileFigures::default() {
                return Err("no profile figure read".to_string());
            }
            serving(f, ServingLine::Profile(figures))
        },
    },
    EventSpec {
        kind: "vllm_blocks",
        required: &["gpu"],
        optional: &["rank", "cpu"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::Blocks {
                    gpu: need_count(f, "gpu")?,
                    cpu: opt_count(f, "cpu"),
                },
            )
        },
    },
    EventSpec {
        kind: "vllm_kv_tokens",
        required: &["tokens"],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::KvTokens(need_count(f, "tokens")?)),
    },
    EventSpec {
        kind: "vllm_concurrency",
        required: &["len", "times"],
        optional: &["rank"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::Concurrency {
                    len: need_count(f, "len")?,
                    times: need_ratio(f, "times")?,
                },
            )
        },
    },
    EventSpec {
        kind: "vllm_graph_captured",
        required: &["size"],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::GraphCaptured(need_gib(f, "size")?)),
    },
    EventSpec {
        kind: "vllm_graph_pool",
        required: &["actual", "estimated"],
        optional: &["rank"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::GraphPool {
                    actual: need_gib(f, "actual")?,
                    estimated: need_gib(f, "estimated")?,
                },
            )
        },
    },
    EventSpec {
        kind: "vllm_util_advisory",
        required: &["current", "equivalent"],
        optional: &["rank", "suggested"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::UtilAdvisory {
                    current: need_ratio(f, "current")?,
                    equivalent: need_ratio(f, "equivalent")?,
                    suggested: opt_ratio(f, "suggested"),
                },
            )
        },
    },
    EventSpec {
        kind: "vllm_kv_advisory",
        required: &["free", "total", "util", "budget"],
        optional: &[
            "rank",
            "weights",
            "activation",
            "non_torch",
            "graph",
            "fit_kv",
            "full_kv",
            "current_kv",
        ],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::KvAdvisory(KvAdvisory {
                    free: need_gib(f, "free")?,
                    total: need_gib(f, "total")?,
                    utilization: need_ratio(f, "util")?,
                    budget: need_gib(f, "budget")?,
                    weights: opt_gib(f, "weights"),
                    activation: opt_gib(f, "activation"),
                    non_torch: opt_gib(f, "non_torch"),
                    graph: opt_gib(f, "graph"),
                    fit_kv: opt_count(f, "fit_kv"),
                    full_kv: opt_count(f, "full_kv"),
                    current_kv: opt_count(f, "current_kv"),
                }),
            )
        },
    },
    EventSpec {
        kind: "serving_failure",
        required: &["cause"],
        optional: &[
            "rank",
            "len",
            "tokens",
            "needed",
            "available",
            "free",
            "total",
            "util",
            "budget",
            "size",
            "allocated",
            "reserved",
            "processes",
            "wording",
        ],
        settable: &[
            ("cause", Words::List(FAILURE_WORDS)),
            ("wording", Words::List(&["vllm", "sglang"])),
        ],
        build: |f| {
            let wording = match f.get("wording") {
                Some("vllm") => Some(FailureWording::Vllm),
                Some("sglang") => Some(FailureWording::Sglang),
                Some(other) => return Err(format!("unknown wording '{other}'")),
                None => None,
            };
            serving(
                f,
                ServingLine::Failure {
                    failure: failure(f)?,
                    wording,
                },
            )
        },
    },
    EventSpec {
        kind: "serving_capture_begin",
        required: &[],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::CaptureBegin),
    },
    EventSpec {
        kind: "sglang_mem_fraction",
        required: &["fraction"],
        optional: &["rank"],
        settable: &[],
        build: |f| serving(f, ServingLine::MemFraction(need_ratio(f, "fraction")?)),
    },
    EventSpec {
        kind: "sglang_stage",
        required: &["stage"],
        optional: &["rank", "avail", "usage"],
        settable: &[("stage", Words::List(STAGE_WORDS))],
        build: |f| {
            let word = f.need("stage")?;
            let stage = STAGES
                .iter()
                .find(|(_, w)| *w == word)
                .map(|(s, _)| *s)
                .ok_or_else(|| format!("unknown stage '{word}'"))?;
            serving(
                f,
                ServingLine::SglangStage {
                    stage,
                    avail: opt_gib(f, "avail"),
                    usage: opt_gib(f, "usage"),
                },
            )
        },
    },
    EventSpec {
        kind: "sglang_pool",
        required: &["tokens"],
        optional: &["rank", "k", "v", "kv"],
        settable: &[],
        build: |f| {
            // K and V apart (until 0.5.x), or their sum (`KV size: X GB`, census/sglang.tsv)
            let kv = match f.get("kv") {
                Some(_) => need_gib(f, "kv")?,
                None => need_gib(f, "k")?.plus(need_gib(f, "v")?),
            };
            serving(
                f,
                ServingLine::SglangPool {
                    tokens: need_count(f, "tokens")?,
                    kv,
                },
            )
        },
    },
    EventSpec {
        kind: "sglang_tokens",
        required: &["tokens"],
        optional: &["rank", "context"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::SglangTokens {
                    tokens: need_count(f, "tokens")?,
                    context: opt_count(f, "context"),
                },
            )
        },
    },
    EventSpec {
        kind: "sglang_profiled",
        required: &["asked", "profiled"],
        optional: &["rank"],
        settable: &[],
        build: |f| {
            serving(
                f,
                ServingLine::SglangProfiled {
                    asked: need_count(f, "asked")?,
                    profiled: need_count(f, "profiled")?,
                },
            )
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gib_figures_carry_half_the_last_digit() {
        let q = gib("6.87").unwrap();
        assert_eq!(q.bytes, (6.87 * GIB as f64).round() as i64);
        assert!(q.high - q.low <= GIB / 100 + 2);
        let neg = gib("-2.14").unwrap();
        assert!(neg.bytes < 0 && neg.low < neg.bytes && neg.bytes < neg.high);
        assert_eq!(gib("1,2"), None);
        assert_eq!(gib(""), None);
        assert_eq!(count("973,760"), Some(973_760));
    }

    #[test]
    fn arguments_are_read_in_every_spelling() {
        // `sample-logs/803-…:1`, `…/807-…:1` (`non-default args`), `…/801-…:12`, `…/811-…:3` (`ServerArgs`).
        let cli =
            "--trust-remote-code --tensor_parallel_size 2 --gpu_memory_utilization=0.98  /root/x";
        assert_eq!(arg_value(cli, &["gpu_memory_utilization"]), Some("0.98"));
        assert_eq!(arg_value(cli, &["tensor_parallel_size"]), Some("2"));
        let dict = "{'model': 'x', 'max_model_len': 262144, 'gpu_memory_utilization': 0.85}";
        assert_eq!(arg_value(dict, &["max_model_len"]), Some("262144"));
        assert_eq!(arg_value(dict, &["gpu_memory_utilization"]), Some("0.85"));
        assert_eq!(
            arg_value("meta-llama/Meta-Llama-3-8B -tp 2", &["__tp", "_tp"]),
            Some("2")
        );
        let dump = "tp_size=4, mem_fraction_static=0.85, context_length=None";
        assert_eq!(arg_value(dump, &["mem_fraction_static"]), Some("0.85"));
        assert_eq!(arg_value(dump, &["context_length"]), None);
        // A name inside a longer one is not it.
        assert_eq!(arg_value("max_tp_size=3", &["tp_size"]), None);
    }

    #[test]
    fn the_model_an_engine_s_arguments_name() {
        // The command lines of grammars/35-vllm.toml's examples (sample-logs 801, 803, 804) and SGLang's
        // ServerArgs (sample-logs/811-…).
        let cases = [
            ("meta-llama/Meta-Llama-3-8B -tp 2", Some("meta-llama/Meta-Llama-3-8B")),
            (
                "--trust-remote-code --tensor_parallel_size 2 --gpu_memory_utilization=0.98  /root/autodl-tmp/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
                Some("/root/autodl-tmp/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B"),
            ),
            (
                "--model /data/models/Qwen3-Next-80B-A3B-Instruct --host 0.0.0.0 --port 8000 --tensor-parallel-size 2",
                Some("/data/models/Qwen3-Next-80B-A3B-Instruct"),
            ),
            (
                "ServerArgs(model_path='/home/model/Qwen/QwQ-32B', tokenizer_path='/home/model/Qwen/QwQ-32B', tp_size=4)",
                Some("/home/model/Qwen/QwQ-32B"),
            ),
            ("--port 8000 --tp 2", None),
        ];
        for (text, want) in cases {
            assert_eq!(super::model_name(text).as_deref(), want, "{text}");
        }
    }
}
