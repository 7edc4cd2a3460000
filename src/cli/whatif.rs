//! `vramdiff whatif`'s flags: the changes to replay with, and their value parsers.

use clap::{Args as ClapArgs, ValueEnum};

use super::{parse_size_arg, FormatArg, InputArgs, MannersArgs, SeverityArg};

/// `vramdiff whatif`.
#[derive(Debug, Clone, ClapArgs)]
pub struct WhatifArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Use only these GPUs (positions in the estimate's list, as CUDA numbers them for the runner: 0,1).
    #[arg(long, value_delimiter = ',', conflicts_with = "gpu_count")]
    pub gpus: Option<Vec<usize>>,

    /// Use only the N GPUs with the most free memory.
    #[arg(long, value_name = "N")]
    pub gpu_count: Option<usize>,

    /// Context per slot (num_ctx).
    #[arg(long, value_name = "N")]
    pub ctx: Option<i64>,

    /// Parallel slots (OLLAMA_NUM_PARALLEL).
    #[arg(long, value_name = "N")]
    pub parallel: Option<i64>,

    /// OLLAMA_GPU_OVERHEAD (e.g. 512MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub gpu_overhead: Option<i64>,

    /// Multiply the estimate's graph by X (ollama37's OLLAMA_GRAPH_SAFETY_MULTIPLIER, relative to the log).
    #[arg(long, value_name = "X", value_parser = parse_multiplier)]
    pub graph_multiplier: Option<f64>,

    /// Let a scheduler pick the GPUs for the estimate replay, instead of the GPUs the log used: `upstream`
    /// tries each single GPU then all, `ollama37` the fewest GPUs first, `family` the scheduler of the
    /// estimator family replayed (each alone then all up to 0.11.4, the fewest GPUs first from 0.11.5).
    #[arg(long, value_enum)]
    pub scheduler: Option<SchedulerArg>,

    /// Replay Ollama's estimator by this build family's rules instead of the one the log's evidence picks:
    /// upstream-0.5, upstream-0.6.1, upstream-0.6.3, upstream-0.7.0, upstream-0.7.1, upstream-0.11.5,
    /// ollama37-241a0340, ollama37-6d87524e, ollama37-fabe2c5c, ollama37-safety.
    #[arg(long, value_enum, value_name = "NAME")]
    pub family: Option<FamilyArg>,

    /// Explain the estimator's placement decision by decision: the families tried, the scheduler's tries,
    /// the entry filter, the blocks per GPU, the last layer and its margin, the graph charges.
    #[arg(long)]
    pub explain: bool,

    /// The KV cache type to replay with (OLLAMA_KV_CACHE_TYPE); with --max-ctx, the only type searched.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub kv_type: Option<KvTypeArg>,

    /// The micro-batch (llama.cpp's -ub): the compute buffers scale with it, relative to the load's n_ubatch
    /// (llama.cpp's default 512 when the log does not print it). llama.cpp on its own only: Ollama passes no
    /// -ub to its runner, so an Ollama load is refused.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
    pub ubatch: Option<i64>,

    /// The layers on the GPUs (-ngl; Ollama's num_gpu), fixed: llama.cpp's --fit moves none, and the replay says
    /// whether they fit in the free memory; Ollama's estimator places at most N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(0..))]
    pub ngl: Option<i64>,

    /// The largest num_ctx (per slot, in steps of 256) that keeps every layer on the GPUs (those chosen with
    /// --gpus/--gpu-count), for each KV cache type (or --kv-type).
    #[arg(long, conflicts_with_all = ["ctx", "ngl"])]
    pub max_ctx: bool,

    /// Output format [default: the config file's `format`, else text]
    #[arg(long, value_enum, env = "VRAMDIFF_FORMAT")]
    pub format: Option<FormatArg>,

    /// With --format junit: a failure per finding of this severity or above [default: the config file's
    /// `fail-on`, else error]
    #[arg(long, value_enum, value_name = "SEVERITY", env = "VRAMDIFF_FAIL_ON")]
    pub fail_on: Option<SeverityArg>,

    #[command(flatten)]
    pub manners: MannersArgs,

    /// Also append the Markdown report to the file named by $GITHUB_STEP_SUMMARY (nothing when it is unset).
    #[arg(long)]
    pub summary: bool,
}

/// `--kv-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KvTypeArg {
    F16,
    #[value(name = "q8_0")]
    Q8_0,
    #[value(name = "q4_0")]
    Q4_0,
}

/// `--scheduler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchedulerArg {
    Upstream,
    Ollama37,
    Family,
}

/// `--family`: the estimator build families (`docs/log-formats.md` §2.4a).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FamilyArg {
    #[value(name = "upstream-0.5")]
    Upstream05,
    #[value(name = "upstream-0.6.1")]
    Upstream061,
    #[value(name = "upstream-0.6.3")]
    Upstream063,
    #[value(name = "upstream-0.7.0")]
    Upstream070,
    #[value(name = "upstream-0.7.1")]
    Upstream071,
    #[value(name = "upstream-0.11.5")]
    Upstream0115,
    #[value(name = "ollama37-241a0340")]
    Ollama37Last,
    #[value(name = "ollama37-6d87524e")]
    Ollama37Scaled,
    #[value(name = "ollama37-fabe2c5c")]
    Ollama37Revert,
    #[value(name = "ollama37-safety")]
    Ollama37Safety,
}

fn parse_multiplier(text: &str) -> Result<f64, String> {
    let m: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if m.is_finite() && m > 0.0 && m <= 100.0 {
        Ok(m)
    } else {
        Err("the multiplier must be a number above 0 and at most 100".into())
    }
}
