//! `vramdiff whatif`'s flags: the changes to replay with, and their value parsers.

use clap::{Args as ClapArgs, ValueEnum};

use super::{parse_size_arg, FormatArg, InputArgs, SeverityArg};

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
    /// tries each single GPU then all, `ollama37` the fewest GPUs first.
    #[arg(long, value_enum)]
    pub scheduler: Option<SchedulerArg>,

    /// The KV cache type to replay with (OLLAMA_KV_CACHE_TYPE); with --max-ctx, the only type searched.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub kv_type: Option<KvTypeArg>,

    /// The largest num_ctx (per slot, in steps of 256) that keeps every layer on the GPUs (those chosen with
    /// --gpus/--gpu-count), for each KV cache type (or --kv-type).
    #[arg(long, conflicts_with = "ctx")]
    pub max_ctx: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// With --format junit: a failure per finding of this severity or above.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Error)]
    pub fail_on: SeverityArg,

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
