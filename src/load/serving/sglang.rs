//! SGLang's lines in the serving ledger: per rank the memory available before the weights, after them (and
//! what they took), the KV pool (`#tokens`, K and V), what is left after the pool and after the graphs, and
//! the engine's `max_total_num_tokens` (`docs/log-formats.md` §8). SGLang's static pool is the memory
//! available before the weights × `--mem-fraction-static`, which [`ServingLedger::sglang_budgets`] computes.
//! Why a file of its own: see `vllm.rs` beside it (one engine's ledger per file).

use super::{figure, scale, set, ServingLedger};
use crate::model::{Count, Quantity, RankFigures, StartFailure};
use crate::parse::serving::SglangStage;

impl ServingLedger {
    /// `server_args.mem_fraction_static F` (a debug print of 2026 builds).
    pub(super) fn sglang_mem_fraction(&mut self, fraction: f64, line: u64) {
        self.sglang = true;
        if self.args.mem_fraction.is_none() {
            self.args.mem_fraction = Some(fraction);
            self.args_line = line;
        }
    }

    /// One stage of a rank's start: `Load weight begin/end`, `Memory pool end`, `Capture cuda graph begin/end`.
    pub(super) fn sglang_stage(
        &mut self,
        rank: Option<&str>,
        stage: SglangStage,
        avail: Option<Quantity>,
        usage: Option<Quantity>,
        line: u64,
    ) {
        self.sglang = true;
        let r = self.rank(rank, line);
        match stage {
            SglangStage::DistributedEnd => set(&mut r.non_torch, usage, line),
            SglangStage::WeightsBegin => set(&mut r.free_at_start, avail, line),
            SglangStage::WeightsEnd => {
                set(&mut r.avail_after_weights, avail, line);
                set(&mut r.weights_loaded, usage, line);
            }
            SglangStage::PoolEnd => set(&mut r.avail_after_pool, avail, line),
            SglangStage::GraphBegin => {
                r.capture_began.get_or_insert(line);
                // What the capture starts with is what the pool left, when no `Memory pool end` said so.
                if r.avail_after_pool.is_none() {
                    set(&mut r.avail_after_pool, avail, line);
                }
            }
            SglangStage::Workspace => set(&mut r.workspace, usage, line),
            SglangStage::GraphEnd => {
                set(&mut r.avail_after_graphs, avail, line);
                set(&mut r.graph_actual, usage, line);
            }
        }
    }

    /// `KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB`.
    pub(super) fn sglang_pool(&mut self, rank: Option<&str>, tokens: i64, kv: Quantity, line: u64) {
        self.sglang = true;
        let r = self.rank(rank, line);
        set(&mut r.kv, Some(kv), line);
        r.kv_tokens = Some(Count {
            value: tokens,
            line,
        });
    }

    /// `max_total_num_tokens=N, … context_len=C`: the engine's pool in tokens and its context.
    pub(super) fn sglang_tokens(&mut self, tokens: i64, context: Option<i64>, line: u64) {
        self.sglang = true;
        Self::engine_count(&mut self.kv_tokens, &mut self.repeated, tokens, line);
        if let Some(c) = context {
            self.max_len = Some(Count { value: c, line });
        }
    }

    /// `max_total_tokens=N is larger than the profiled value P`: a profiled pool of P tokens (none when ≤ 0).
    pub(super) fn sglang_profiled(&mut self, rank: Option<&str>, profiled: i64, line: u64) {
        self.sglang = true;
        let r = self.rank(rank, line);
        r.kv_tokens = Some(Count {
            value: profiled,
            line,
        });
        if profiled <= 0 {
            self.fail(StartFailure::NoKvMemory, line);
        }
    }

    /// SGLang's static pool per rank: the memory available before the weights × `--mem-fraction-static`.
    pub(super) fn sglang_budgets(&self, ranks: &mut [RankFigures]) {
        let Some(f) = self.args.mem_fraction else {
            return;
        };
        for r in ranks {
            if let Some(free) = r.free_at_start {
                let budget = scale(free.size, f);
                r.budget = figure(budget, free.line.max(self.args_line));
            }
        }
    }
}
