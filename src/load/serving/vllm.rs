//! vLLM's lines in the serving ledger: its version line, each rank's `Model loading took`, its memory
//! profile (budget, weights, non-torch memory, activation peak, CUDA-graph estimate, the KV cache left), the
//! engine's block and token counts, the graphs each rank captured and the two advisories that print what it
//! measured (`docs/log-formats.md` §8). Why a file of its own: vLLM's lines and SGLang's fill different slots of
//! a rank, and each engine's wording changes with its releases, so each engine's ledger is read in one place.

use super::{set, ServingLedger};
use crate::model::{Count, Quantity, Ratio};
use crate::parse::serving::{KvAdvisory, ProfileFigures};

impl ServingLedger {
    /// `Initializing a V1 LLM engine (v0.10.1) …` / `vLLM API server version …`.
    pub(super) fn vllm_version(
        &mut self,
        version: String,
        v0: bool,
        max_len: Option<i64>,
        line: u64,
    ) {
        self.vllm = true;
        self.version = Some((version, v0, line));
        if let Some(n) = max_len {
            self.max_len = Some(Count { value: n, line });
        }
    }

    /// `Model loading took X GiB` (V0: `Loading model weights took X GB`, GiB despite the label).
    pub(super) fn vllm_weights_loaded(&mut self, rank: Option<&str>, size: Quantity, line: u64) {
        self.vllm = true;
        let r = self.rank(rank, line);
        set(&mut r.weights_loaded, Some(size), line);
    }

    /// One line (or block) of a rank's memory profile.
    pub(super) fn vllm_profile(&mut self, rank: Option<&str>, p: ProfileFigures, line: u64) {
        self.vllm = true;
        if let Some(u) = p.utilization {
            self.args.utilization = Some(u);
            self.args_line = line;
        }
        let r = self.rank(rank, line);
        set(&mut r.total, p.total, line);
        set(&mut r.budget, p.budget, line);
        set(&mut r.weights, p.weights, line);
        set(&mut r.non_torch, p.non_torch, line);
        set(&mut r.activation, p.activation, line);
        set(&mut r.graph_estimate, p.graph_estimate, line);
        set(&mut r.kv, p.kv, line);
        if p.kv.is_some_and(|kv| kv.high < 0) {
            self.fail(crate::model::StartFailure::NoKvMemory, line);
        }
    }

    /// `# GPU blocks: N` (V0; `# CUDA blocks` from 0.7): an engine-level count.
    pub(super) fn vllm_blocks(&mut self, gpu: i64, line: u64) {
        self.vllm = true;
        Self::engine_count(&mut self.gpu_blocks, &mut self.repeated, gpu, line);
    }

    /// The KV capacity in tokens of a start that printed it in blocks (`# GPU blocks: N`, V0 and the first V1
    /// releases): blocks × block size, the quantity V1's `GPU KV cache size: N tokens` prints. vLLM prints no
    /// block size; its `Maximum concurrency for L tokens per request: X` is blocks × block size / L
    /// (`executor_base.py`, census `census/vllm.tsv`), so the block size is the power of two that gives back
    /// the printed X (two decimals); none fits, none is assumed.
    pub(super) fn kv_tokens_of_blocks(&self) -> Option<Count> {
        let blocks = self.gpu_blocks?;
        let times = self.concurrency?.value;
        let len = self.concurrency_len?;
        if blocks.value <= 0 || len <= 0 {
            return None;
        }
        (0..=8)
            .map(|p| 1i64 << p)
            .find(|bs| {
                let x = (blocks.value * bs) as f64 / len as f64;
                (x - times).abs() <= 0.005 + 1e-9
            })
            .map(|bs| Count {
                value: blocks.value * bs,
                line: blocks.line,
            })
    }

    /// `GPU KV cache size: N tokens` (V1): the smallest rank's, printed once.
    pub(super) fn vllm_kv_tokens(&mut self, tokens: i64, line: u64) {
        self.vllm = true;
        Self::engine_count(&mut self.kv_tokens, &mut self.repeated, tokens, line);
    }

    /// `Graph capturing finished in N secs, took X GiB` (V0 and V1 before 0.21): the graphs a rank captured.
    pub(super) fn vllm_graph_captured(&mut self, rank: Option<&str>, size: Quantity, line: u64) {
        self.vllm = true;
        let r = self.rank(rank, line);
        if r.graph_actual.is_none() {
            set(&mut r.graph_actual, Some(size), line);
        }
    }

    /// `CUDA graph pool memory: A (actual), E (estimated)` (0.21 and later).
    pub(super) fn vllm_graph_pool(
        &mut self,
        rank: Option<&str>,
        actual: Quantity,
        estimated: Quantity,
        line: u64,
    ) {
        self.vllm = true;
        let r = self.rank(rank, line);
        set(&mut r.graph_actual, Some(actual), line);
        if r.graph_estimate.is_none() {
            set(&mut r.graph_estimate, Some(estimated), line);
        }
    }

    /// `The current --gpu-memory-utilization=C is equivalent to --gpu-memory-utilization=E without CUDA graph
    /// memory profiling … increase … to S`.
    pub(super) fn vllm_util_advisory(
        &mut self,
        rank: Option<&str>,
        current: f64,
        equivalent: f64,
        suggested: Option<f64>,
        line: u64,
    ) {
        self.vllm = true;
        if self.args.utilization.is_none() {
            self.args.utilization = Some(current);
            self.args_line = line;
        }
        let r = self.rank(rank, line);
        r.utilization_without_graphs = Some(Ratio {
            value: equivalent,
            line,
        });
        r.utilization_keeping_kv = suggested.map(|value| Ratio { value, line });
    }

    /// The `--kv-cache-memory` advisory: the figures vLLM measured on one rank.
    pub(super) fn vllm_kv_advisory(&mut self, rank: Option<&str>, a: KvAdvisory, line: u64) {
        self.vllm = true;
        if self.args.utilization.is_none() {
            self.args.utilization = Some(a.utilization);
            self.args_line = line;
        }
        let bytes = |n: Option<i64>| n.map(Quantity::exact);
        let r = self.rank(rank, line);
        set(&mut r.free_at_start, Some(a.free), line);
        set(&mut r.total, Some(a.total), line);
        set(&mut r.budget, Some(a.budget), line);
        if r.weights.is_none() {
            set(&mut r.weights, a.weights, line);
        }
        if r.activation.is_none() {
            set(&mut r.activation, a.activation, line);
        }
        if r.non_torch.is_none() {
            set(&mut r.non_torch, a.non_torch, line);
        }
        if r.graph_actual.is_none() {
            set(&mut r.graph_actual, a.graph, line);
        }
        set(&mut r.kv_to_fit_budget, bytes(a.fit_kv), line);
        set(&mut r.kv_to_fill_gpu, bytes(a.full_kv), line);
        set(&mut r.kv_in_use, bytes(a.current_kv), line);
    }

    /// `Capturing CUDA graphs …` / `Capturing the model for CUDA graphs`: a capture began on a rank the load has.
    pub(super) fn vllm_capture_begin(&mut self, rank: Option<&str>, line: u64) {
        self.vllm = true;
        if let Some(r) = self.known_rank(rank, line) {
            r.capture_began.get_or_insert(line);
        }
    }
}
