//! What a vLLM or SGLang start printed of its memory, per rank: the figures `load::serving` read, each with
//! its line. The JSON shows them as the load's `serving` object (a documented contract addition); the checks
//! of these runtimes (`graph-estimate-off`, `kv-too-small`, `foreign-memory`, `rank-imbalance`,
//! `budget-exceeded`) and their suggestions read them.

use serde::Serialize;

use super::device::Device;
use super::quantity::Quantity;

/// A figure and the line that printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Figure {
    #[serde(flatten)]
    pub size: Quantity,
    pub line: u64,
}

/// A count (tokens, blocks) and the line that printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Count {
    pub value: i64,
    pub line: u64,
}

/// A ratio (a utilization, a memory fraction) and the line that printed it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub value: f64,
    pub line: u64,
}

/// Why the start failed, as the engine said it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "cause")]
pub enum StartFailure {
    /// vLLM: the profile left nothing for the KV cache (`No available memory for the cache blocks`, or a
    /// negative `Available KV cache memory`); SGLang: a negative profiled pool.
    NoKvMemory,
    /// The KV cache holds fewer tokens than one request of the max length (`tokens`: the most it holds, the
    /// engine's own estimated maximum length in the newer wording).
    MaxLenOverKv {
        len: i64,
        tokens: i64,
        /// The KV cache one request of the max length needs, and the KV memory there was (newer wording).
        #[serde(skip_serializing_if = "Option::is_none")]
        needed: Option<Quantity>,
        #[serde(skip_serializing_if = "Option::is_none")]
        available: Option<Quantity>,
    },
    /// The free memory at startup was below total × utilization.
    FreeBelowBudget,
    /// An allocation failed (PyTorch's `CUDA out of memory`), with the figures its message gave.
    OutOfMemory {
        /// What the failed allocation asked for.
        #[serde(skip_serializing_if = "Option::is_none")]
        tried: Option<Quantity>,
        /// The GPU's capacity and what was free then.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<Quantity>,
        #[serde(skip_serializing_if = "Option::is_none")]
        free: Option<Quantity>,
        /// What PyTorch had allocated, and held reserved but unallocated.
        #[serde(skip_serializing_if = "Option::is_none")]
        allocated: Option<Quantity>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reserved: Option<Quantity>,
        /// The rank was capturing CUDA graphs when it failed (it began and never finished).
        during_capture: bool,
        /// What torch's message says other processes held on the GPU (`Process P has X memory in use`,
        /// less the entry that is this process: see `src/load/serving/failure.rs`).
        #[serde(skip_serializing_if = "Option::is_none")]
        others: Option<Quantity>,
    },
    /// A rank crashed with a traceback (not a memory message).
    Crashed,
    /// The engine said it failed to start and nothing before said why.
    EngineFailed,
}

/// One rank's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RankFigures {
    /// The rank as its prefix named it (`TP1`, `DP1_TP1_EP3`, `rank1`, `pid13105`), `0` for lines without
    /// one (the driver, the engine core of one GPU, an unranked SGLang).
    pub rank: String,
    /// The GPU the rank ran on, as a device of the load.
    pub device: Device,
    /// Total memory of the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<Figure>,
    /// Free memory at startup (vLLM's advisory or refusal; SGLang's `avail mem` before the weights).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_at_start: Option<Figure>,
    /// vLLM: total × `--gpu-memory-utilization`; SGLang: the static pool's share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Figure>,
    /// The profile's (or the advisory's) weights; else the weights loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Figure>,
    /// What loading the weights took (`Model loading took`, SGLang's `mem usage` after the weights).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights_loaded: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_torch: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation: Option<Figure>,
    /// The CUDA-graph pool vLLM ≥ 0.21 estimated and reserved inside the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_estimate: Option<Figure>,
    /// What the graphs took when captured (the pool's actual size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_actual: Option<Figure>,
    /// The KV cache planned (vLLM: what the budget left; SGLang: K + V).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv: Option<Figure>,
    /// vLLM's advisory: the KV in use, and the KV to pin to fit the budget or to fill the GPU (bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_in_use: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_to_fit_budget: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_to_fill_gpu: Option<Figure>,
    /// SGLang: the pool in tokens on this rank (negative: profiled capacity below zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_tokens: Option<Count>,
    /// An attention backend's workspace allocated beside the pool (SGLang with AITER).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Figure>,
    /// The line where the rank began capturing CUDA graphs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_began: Option<u64>,
    /// SGLang: memory left after the weights, and after the graphs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avail_after_weights: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avail_after_pool: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avail_after_graphs: Option<Figure>,
    /// vLLM ≥ 0.21: the utilization the graph estimate is worth, and the one keeping the old KV size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization_without_graphs: Option<Ratio>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization_keeping_kv: Option<Ratio>,
    /// Every line this rank's figures come from.
    pub lines: Vec<u64>,
}

impl RankFigures {
    /// A rank with nothing read yet.
    pub fn new(rank: String, device: Device) -> RankFigures {
        RankFigures {
            rank,
            device,
            total: None,
            free_at_start: None,
            budget: None,
            weights: None,
            weights_loaded: None,
            non_torch: None,
            activation: None,
            graph_estimate: None,
            graph_actual: None,
            kv: None,
            kv_in_use: None,
            kv_to_fit_budget: None,
            kv_to_fill_gpu: None,
            kv_tokens: None,
            workspace: None,
            capture_began: None,
            avail_after_weights: None,
            avail_after_pool: None,
            avail_after_graphs: None,
            utilization_without_graphs: None,
            utilization_keeping_kv: None,
            lines: Vec::new(),
        }
    }

    /// Whether the rank's lines gave any memory figure or count of its own (not only where its graph
    /// capture began).
    pub fn has_figures(&self) -> bool {
        [
            self.total,
            self.free_at_start,
            self.budget,
            self.weights,
            self.weights_loaded,
            self.non_torch,
            self.activation,
            self.graph_estimate,
            self.graph_actual,
            self.kv,
            self.kv_in_use,
            self.kv_to_fit_budget,
            self.kv_to_fill_gpu,
            self.workspace,
            self.avail_after_weights,
            self.avail_after_pool,
            self.avail_after_graphs,
        ]
        .iter()
        .any(Option::is_some)
            || self.kv_tokens.is_some()
            || self.utilization_without_graphs.is_some()
            || self.utilization_keeping_kv.is_some()
    }

    /// What the rank had left for its CUDA graphs: SGLang's memory after the pool, less a workspace allocated
    /// after it.
    pub fn left_for_graphs(&self) -> Option<Quantity> {
        let after_pool = self.avail_after_pool?.size;
        Some(match self.workspace {
            Some(w) => after_pool.minus(w.size),
            None => after_pool,
        })
    }

    /// The weights on this rank: the profile's figure, else what loading took.
    pub fn weights_figure(&self) -> Option<Figure> {
        self.weights.or(self.weights_loaded)
    }
}

/// A vLLM or SGLang start's memory figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServingFigures {
    /// The engine's version, when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The model the engine's arguments name (`meta-llama/Meta-Llama-3-8B`, a local folder), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// vLLM's V0 engine: CUDA graphs are captured outside the budget.
    pub v0: bool,
    /// vLLM's `--gpu-memory-utilization` or SGLang's `--mem-fraction-static`, as set or profiled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<Ratio>,
    /// `--tensor-parallel-size`, when the log gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor_parallel: Option<Count>,
    /// The longest request (vLLM's max model len, SGLang's context length).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_len: Option<Count>,
    /// vLLM's `--max-num-seqs`, when the log gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<Count>,
    /// The tokens of one step (vLLM's `--max-num-batched-tokens`, SGLang's `--chunked-prefill-size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batched_tokens: Option<Count>,
    /// SGLang's `--cuda-graph-max-bs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_max_bs: Option<Count>,
    /// Whether the KV cache's type is an 8-bit float, when the log gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_fp8: Option<bool>,
    /// The KV cache in tokens (the smallest rank's for vLLM ≥ V1; SGLang's `max_total_num_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_tokens: Option<Count>,
    /// V0's `# GPU blocks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_blocks: Option<Count>,
    /// Requests of the max length the KV holds at once (`Maximum concurrency … Cx`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Ratio>,
    /// Why the start failed, with the line that said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<StartFailure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_line: Option<u64>,
    /// Each rank's figures, in device order.
    pub ranks: Vec<RankFigures>,
}

impl ServingFigures {
    /// The rank on `device`, when the log has one there.
    pub fn rank_on(&self, device: &Device) -> Option<&RankFigures> {
        self.ranks.iter().find(|r| r.device == *device)
    }

    /// The rank whose line gave the failure, when that line named one (`src/load/serving/failure.rs` makes
    /// the failure line one of its rank's lines).
    pub fn failed_rank(&self) -> Option<&RankFigures> {
        let line = self.failure_line?;
        self.ranks.iter().find(|r| r.lines.contains(&line))
    }
}
