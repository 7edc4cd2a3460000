//! The memory lines of one vLLM or SGLang start (`docs/log-formats.md` §8), per rank: the ledger that turns
//! them into the load's estimate (the engine's own plan), its actual figures and its [`ServingFigures`].
//!
//! The protocol, as the engines print it:
//! - vLLM: an engine start (`vllm serve …`, `non-default args`, `Initializing a V1 LLM engine (v…)`), each
//!   rank's `Model loading took X GiB`, then its memory profile: budget = total × `--gpu-memory-utilization`,
//!   split into weights, non-torch memory, the activation peak, from 0.21 an *estimated* CUDA-graph pool, and
//!   the KV cache it leaves (`Available KV cache memory`, the older one-line and multi-line forms). The engine
//!   prints the KV in tokens once (the smallest rank's), then each rank captures its graphs (`Graph capturing
//!   finished … took X GiB`, from 0.21 `CUDA graph pool memory: A (actual), E (estimated)`), and 0.10+ prints
//!   the `--kv-cache-memory` advisory with the figures it measured. V0 and vLLM before 0.21 capture the graphs
//!   outside the budget.
//! - SGLang: each rank prints the memory available before the weights, after them (and what they took), the
//!   KV pool (`#tokens`, K and V sizes), what is left after the pool, and the graphs' usage after capture.
//!   Its static pool is `avail before weights × --mem-fraction-static` (weights + KV); graphs and activations
//!   use the rest.
//!
//! A rank is the one its line's prefix named (`[rank=TP1] `, see `frame::prefix`); lines without one are
//! rank 0 (the driver of V0, the engine core of one GPU, SGLang on one GPU); so is the first engine core
//! (`EngineCore_DP0`, which `frame::prefix` tags with no rank), and the others of a data-parallel start with TP 1 are ranks of their own (`DP3` is GPU
//! 3), folded into the engine's lines beside workers. Each rank becomes a GPU of the
//! load: its expert-parallel rank when named (vLLM numbers EP ranks over DP × TP), else its pipeline stage
//! (PP alone, or PP × TP-size + TP), else DP × TP-size + TP when the TP size is known, else its TP rank, else its rank number, else (V0 workers known by pid) the order
//! they appear in after the driver. Engine-level lines printed twice (vLLM 0.10 prints the KV size and the
//! concurrency twice) are counted once.
//!
//! One engine's ledger per file: `vllm.rs` and `sglang.rs` read each engine's own lines, `failure.rs` the
//! failure lines both print, `ranks.rs` which GPU each rank is; this file holds the ledger, sends each line to
//! its reader and turns the ledger into the load's estimate, buffers and figures.

mod failure;
mod ranks;
mod sglang;
mod vllm;

pub(super) use ranks::gpus_of;

use crate::model::{
    Backend, Buffer, BufferKind, Count, Device, DeviceEstimate, Estimate, EstimateForm, Figure,
    Quantity, RankFigures, Ratio, ServingFigures, StartFailure, WeightsSemantics,
};
use crate::parse::serving::{ServingArgs, ServingEvent, ServingLine};

/// Everything one vLLM or SGLang start printed of its memory.
#[derive(Debug, Default, Clone)]
pub struct ServingLedger {
    /// A line only SGLang prints was seen.
    pub sglang: bool,
    /// A line only vLLM prints was seen.
    pub vllm: bool,
    version: Option<(String, bool, u64)>,
    platform: Option<String>,
    args: ServingArgs,
    args_line: u64,
    /// The model the arguments named (`crate::parse::serving::model_name`).
    model: Option<String>,
    max_len: Option<Count>,
    kv_tokens: Option<Count>,
    gpu_blocks: Option<Count>,
    concurrency: Option<Ratio>,
    /// The request length the concurrency was printed for.
    concurrency_len: Option<i64>,
    failure: Option<(StartFailure, u64)>,
    /// The rank whose line gave [`Self::failure`], when the line named one.
    failure_rank: Option<String>,
    /// The start completed (`init engine … took`, SGLang's ready line).
    pub ready: bool,
    /// Figures per rank, by the label its prefix gave (`0` when none), in the order first seen.
    ranks: Vec<(String, RankFigures)>,
    /// Engine-level lines printed again with the same figure.
    pub repeated: u32,
}

fn figure(size: Quantity, line: u64) -> Option<Figure> {
    Some(Figure { size, line })
}

/// The first figure a rank printed stays unless `replace`.
fn set(slot: &mut Option<Figure>, value: Option<Quantity>, line: u64) {
    if let Some(size) = value {
        *slot = figure(size, line);
    }
}

impl ServingLedger {
    /// True once any memory line of these engines was read.
    pub fn is_empty(&self) -> bool {
        !self.sglang && !self.vllm && self.ranks.is_empty() && self.failure.is_none()
    }

    /// True once a rank printed a figure: a later engine start is another load.
    pub fn has_figures(&self) -> bool {
        self.ranks.iter().any(|(_, r)| !r.lines.is_empty())
    }

    /// Whether `event` starts an engine (a command line, an arguments dump, the engine's version line).
    pub fn starts_engine(event: &ServingEvent) -> bool {
        matches!(
            event.line,
            ServingLine::Args(..) | ServingLine::Version { .. }
        )
    }

    /// Whether `event` prints a figure this load's rank already has from its profile: the start of another
    /// profile (a paste of two runs without a start line between them).
    pub fn repeats_profile(&self, event: &ServingEvent) -> bool {
        let ServingLine::Profile(p) = &event.line else {
            return false;
        };
        let label = event.rank.as_deref().unwrap_or("0");
        self.ranks.iter().any(|(l, r)| {
            l == label
                && (p.total.is_some() && r.total.is_some()
                    || p.budget.is_some() && r.budget.is_some())
        })
    }

    fn rank(&mut self, label: Option<&str>, line: u64) -> &mut RankFigures {
        let label = label.unwrap_or("0");
        let at = match self.ranks.iter().position(|(l, _)| l == label) {
            Some(i) => i,
            None => {
                self.ranks.push((
                    label.to_string(),
                    RankFigures::new(label.to_string(), Device::gpu(Backend::Unknown, 0)),
                ));
                self.ranks.len() - 1
            }
        };
        let r = &mut self.ranks[at].1;
        if !r.lines.contains(&line) {
            r.lines.push(line);
        }
        r
    }

    /// The rank a line names, when the load already has it; an unnamed line goes to rank 0 only while the
    /// load has no rank (a line without a prefix in a TP log must not add a GPU).
    fn known_rank(&mut self, label: Option<&str>, line: u64) -> Option<&mut RankFigures> {
        let known = match label {
            Some(l) => self.ranks.iter().any(|(k, _)| k == l),
            None => self.ranks.is_empty() || self.ranks.iter().any(|(k, _)| k == "0"),
        };
        known.then(|| self.rank(label, line))
    }

    /// The rank a line is counted under: an engine core's (`EngineCore_DP3`, `frame::prefix`) is a GPU of its
    /// own only while it runs its worker in-process (TP 1); beside worker ranks, or with a TP size above 1, its
    /// lines are the engine's, as a line without a prefix is. (The first engine core names no rank, so it is
    /// rank `0` with the lines that lost their prefix.)
    fn engine_core_folded<'a>(&self, label: Option<&'a str>) -> Option<&'a str> {
        let engine_core = label.is_some_and(|l| l.starts_with("EngineCore_DP"));
        let workers = self
            .ranks
            .iter()
            .any(|(l, _)| l != "0" && !l.starts_with("EngineCore_DP"));
        if engine_core && (workers || self.args.tp.is_some_and(|tp| tp > 1)) {
            None
        } else {
            label
        }
    }

    /// An engine-level count: the first is kept, a repeat with the same value is counted as one.
    fn engine_count(slot: &mut Option<Count>, repeated: &mut u32, value: i64, line: u64) {
        match slot {
            Some(c) if c.value == value => *repeated += 1,
            _ => *slot = Some(Count { value, line }),
        }
    }

    /// An engine's arguments (a command line, SGLang's `server_args=ServerArgs(…)`, vLLM's `non-default args`):
    /// what a later line gives is merged over what an earlier one gave.
    fn args(&mut self, a: ServingArgs, line: u64) {
        if a.sglang {
            self.sglang = true;
        } else {
            self.vllm = true;
        }
        let old = self.args;
        self.args = ServingArgs {
            sglang: a.sglang || old.sglang,
            utilization: a.utilization.or(old.utilization),
            mem_fraction: a.mem_fraction.or(old.mem_fraction),
            max_len: a.max_len.or(old.max_len),
            tp: a.tp.or(old.tp),
            max_num_seqs: a.max_num_seqs.or(old.max_num_seqs),
            batched_tokens: a.batched_tokens.or(old.batched_tokens),
            graph_max_bs: a.graph_max_bs.or(old.graph_max_bs),
            kv_fp8: a.kv_fp8.or(old.kv_fp8),
        };
        self.args_line = line;
    }

    /// Record one line: each engine's own lines go to its reader (`vllm.rs`, `sglang.rs`), failures to
    /// `failure.rs`.
    pub fn push(&mut self, event: ServingEvent, line: u64) {
        let rank = self.engine_core_folded(event.rank.as_deref());
        match event.line {
            ServingLine::Version {
                version,
                v0,
                max_len,
            } => self.vllm_version(version, v0, max_len, line),
            ServingLine::Args(a, model) => {
                if model.is_some() {
                    self.model = model;
                }
                self.args(a, line)
            }
            ServingLine::Platform(p) => self.platform = Some(p),
            ServingLine::MaxModelLen(n) => self.max_len = Some(Count { value: n, line }),
            ServingLine::WeightsLoaded(q) => self.vllm_weights_loaded(rank, q, line),
            ServingLine::Profile(p) => self.vllm_profile(rank, p, line),
            ServingLine::Blocks { gpu, .. } => {
                // The blocks of every rank, printed by the driver (GPU 0 in V0): a fragment holding only this
                // line still has that device (`known_rank` adds it only while the load has no rank).
                let _ = self.known_rank(rank, line);
                self.vllm_blocks(gpu, line)
            }
            ServingLine::KvTokens(n) => self.vllm_kv_tokens(n, line),
            ServingLine::Concurrency { len, times } => {
                if self.max_len.is_none() {
                    self.max_len = Some(Count { value: len, line });
                }
                if self.concurrency.is_some_and(|c| c.value == times) {
                    self.repeated += 1;
                } else {
                    self.concurrency = Some(Ratio { value: times, line });
                    self.concurrency_len = Some(len);
                }
            }
            ServingLine::GraphCaptured(q) => self.vllm_graph_captured(rank, q, line),
            ServingLine::GraphPool { actual, estimated } => {
                self.vllm_graph_pool(rank, actual, estimated, line)
            }
            ServingLine::UtilAdvisory {
                current,
                equivalent,
                suggested,
            } => self.vllm_util_advisory(rank, current, equivalent, suggested, line),
            ServingLine::KvAdvisory(a) => self.vllm_kv_advisory(rank, a, line),
            ServingLine::CaptureBegin => self.vllm_capture_begin(rank, line),
            ServingLine::MemFraction(f) => self.sglang_mem_fraction(f, line),
            ServingLine::Failure { failure, wording } => {
                self.failure_line(rank, failure, wording, line)
            }
            ServingLine::Ready => self.ready = true,
            ServingLine::SglangStage {
                stage,
                avail,
                usage,
            } => self.sglang_stage(rank, stage, avail, usage, line),
            ServingLine::SglangPool { tokens, kv } => self.sglang_pool(rank, tokens, kv, line),
            ServingLine::SglangTokens { tokens, context } => {
                self.sglang_tokens(tokens, context, line)
            }
            ServingLine::SglangProfiled { profiled, .. } => {
                self.sglang_profiled(rank, profiled, line)
            }
        }
    }

    /// The engine's figures as the load carries them.
    pub fn figures(&self) -> ServingFigures {
        let utilization = self
            .args
            .utilization
            .or(self.args.mem_fraction)
            .map(|value| Ratio {
                value,
                line: self.args_line,
            });
        let max_len = self.max_len.or(self.args.max_len.map(|value| Count {
            value,
            line: self.args_line,
        }));
        let mut ranks = self.ranks();
        if self.sglang {
            self.sglang_budgets(&mut ranks);
        }
        ServingFigures {
            version: self.version.as_ref().map(|(v, _, _)| v.clone()),
            model: self.model.clone(),
            // Without a version line, `# GPU blocks` says V0 (V1 prints `GPU KV cache size` instead).
            v0: match &self.version {
                Some((_, v0, _)) => *v0,
                None => self.gpu_blocks.is_some() && self.kv_tokens.is_none(),
            },
            utilization,
            tensor_parallel: self.args.tp.map(|value| Count {
                value,
                line: self.args_line,
            }),
            max_len,
            max_num_seqs: self.args.max_num_seqs.map(|value| Count {
                value,
                line: self.args_line,
            }),
            batched_tokens: self.args.batched_tokens.map(|value| Count {
                value,
                line: self.args_line,
            }),
            graph_max_bs: self.args.graph_max_bs.map(|value| Count {
                value,
                line: self.args_line,
            }),
            kv_cache_fp8: self.args.kv_fp8,
            kv_tokens: self.kv_tokens.or_else(|| self.kv_tokens_of_blocks()),
            gpu_blocks: self.gpu_blocks,
            concurrency: self.concurrency,
            failure: self.failure.map(|(c, _)| c),
            failure_line: self.failure.map(|(_, l)| l),
            ranks,
        }
    }

    /// The engine's plan per rank as an estimate: the budget, split into weights, KV and the rest
    /// (CUDA-graph estimate, activation peak, non-torch memory), from the lines that printed them.
    pub fn estimate(&self, figures: &ServingFigures) -> Option<Estimate> {
        let mut lines = Vec::new();
        let per_device: Vec<DeviceEstimate> = figures
            .ranks
            .iter()
            .filter_map(|r| {
                let mut d = DeviceEstimate::new(r.device.clone());
                if self.sglang {
                    d.weights = r.weights_loaded.map(|f| f.size);
                    d.kv = r.kv.map(|f| f.size);
                    d.total = r.budget.map(|f| f.size);
                } else {
                    d.weights = r.weights.map(|f| f.size);
                    d.kv = r.kv.map(|f| f.size);
                    let parts = [r.graph_estimate, r.activation, r.non_torch];
                    d.graph = Quantity::sum(parts.iter().flatten().map(|f| f.size));
                    d.total = r.budget.map(|f| f.size);
                }
                let known = d.weights.is_some() || d.kv.is_some() || d.total.is_some();
                if known {
                    lines.extend(
                        [
                            r.weights,
                            r.kv,
                            r.budget,
                            r.graph_estimate,
                            r.activation,
                            r.non_torch,
                        ]
                        .iter()
                        .flatten()
                        .map(|f| f.line),
                    );
                }
                known.then_some(d)
            })
            .collect();
        if per_device.is_empty() {
            return None;
        }
        lines.sort_unstable();
        lines.dedup();
        Some(Estimate {
            kv: Quantity::sum(per_device.iter().filter_map(|d| d.kv)),
            per_device,
            form: if self.sglang {
                EstimateForm::SglangPool
            } else {
                EstimateForm::VllmProfile
            },
            weights_semantics: WeightsSemantics::PerDevice,
            lines,
            ..Estimate::default()
        })
    }

    /// What each rank reports it holds, as buffers of its GPU: the weights loaded, the KV cache, the CUDA
    /// graphs captured, and (vLLM) the activation peak and non-torch memory its profile measured, which the
    /// budget keeps for them.
    pub fn buffers(&self, figures: &ServingFigures) -> Vec<Buffer> {
        let engine = if self.sglang { "sglang" } else { "vllm" };
        let mut out = Vec::new();
        for r in &figures.ranks {
            // A negative KV figure is no allocation.
            let kv = r.kv_in_use.or(r.kv).filter(|f| f.size.bytes > 0);
            let parts = [
                (r.weights_loaded.or(r.weights), BufferKind::Model, "weights"),
                (kv, BufferKind::Kv, "KV cache"),
                (r.graph_actual, BufferKind::Compute, "CUDA graphs"),
                (r.activation, BufferKind::Compute, "activation peak"),
                (r.non_torch, BufferKind::Compute, "non-torch"),
                (r.workspace, BufferKind::Compute, "attention workspace"),
            ];
            for (figure, kind, name) in parts {
                let Some(f) = figure else { continue };
                out.push(Buffer {
                    device: r.device.clone(),
                    buffer: format!("{} {name}", r.device),
                    kind,
                    host: false,
                    size: f.size,
                    line: f.line,
                    component: engine.to_string(),
                    projector: false,
                    superseded: Vec::new(),
                });
            }
        }
        out
    }
}

/// `q × ratio`, bounds scaled alike (a figure times a printed fraction).
fn scale(q: Quantity, ratio: f64) -> Quantity {
    let s = |b: i64| (b as f64 * ratio).round() as i64;
    Quantity::with_bounds(s(q.bytes), s(q.low), s(q.high))
}

impl super::Assembler {
    /// A vLLM or SGLang line: an engine start opens a load (the next one, when this one already has
    /// figures); every other line feeds the open load (see the module doc).
    pub(super) fn serving_event(
        &mut self,
        event: ServingEvent,
        line: u64,
        done: &mut impl FnMut(crate::model::Load),
    ) {
        if let ServingLine::Ready = event.line {
            // A ready line (the engines' own, or the HTTP server's that both start) ends the serving load that
            // is open, even one already ended by an earlier ready line; it never opens one (any Python web
            // server prints `Uvicorn running on`).
            if let Some(b) = self.current.as_mut().filter(|b| !b.serving.is_empty()) {
                b.touch(line);
                b.serving.ready = true;
                b.advance(super::builder::Phase::Ended);
            }
            return;
        }
        let starts = ServingLedger::starts_engine(&event);
        let next = self.current.as_ref().is_some_and(|b| {
            starts && b.serving.has_figures() || b.serving.repeats_profile(&event)
        });
        let b = if next || (starts && self.current.is_none()) {
            self.open(line, starts, done)
        } else {
            self.ongoing(line, done)
        };
        b.touch(line);
        if starts {
            b.started_cleanly = true;
        }
        b.serving.push(event, line);
        if let Some((message, oom, at)) = b.serving.failure_message() {
            // `EngineCore failed to start` says no more than that: a failure line read before it (a GPU fault,
            // a missing compiler: `grammars/40-llama-cpp.toml`, `37-torch.toml`) keeps its own words.
            if b.serving.failure_says_why() || b.failure.is_none() {
                b.failure = Some((message, at));
                b.failure_oom = oom;
            }
        }
        if b.serving.ready {
            b.advance(super::builder::Phase::Ended);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{Runtime, StartFailure, GIB};

    #[test]
    fn a_vllm_v1_rank_prints_its_profile_and_advisory() {
        // `sample-logs/804-…:102`, `:116`, `:126` (framed: the `[rank=TP0] ` tag stands for the prefix).
        let loads = loads_of(&[
            "[rank=TP0] Model loading took 74.2812 GiB and 215.831224 seconds",
            "[rank=TP0] Available KV cache memory: 44.59 GiB",
            "[rank=TP0] Free memory on device (139.21/139.81 GiB) on startup. Desired GPU memory utilization is (0.9, 125.83 GiB). Actual usage is 74.28 GiB for weight, 5.58 GiB for peak activation, 1.38 GiB for non-torch memory, and 2.37 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory=45175492096` to fit into requested memory, or `--kv-cache-memory=59540753920` to fully utilize gpu memory. Current kv cache memory in use is 47878721024 bytes.",
        ]);
        assert_eq!(loads.len(), 1);
        let l = &loads[0];
        assert_eq!(l.runtime, Runtime::Vllm);
        let s = l.serving.as_ref().unwrap();
        let r = &s.ranks[0];
        assert_eq!(r.rank, "TP0");
        assert_eq!(
            r.budget.unwrap().size.bytes,
            (125.83 * GIB as f64).round() as i64
        );
        assert_eq!(r.kv_to_fit_budget.unwrap().size.bytes, 45_175_492_096);
        assert_eq!(r.graph_actual.unwrap().line, 3);
        let e = l.estimate.as_ref().unwrap();
        assert_eq!(e.per_device.len(), 1);
    }

    #[test]
    fn a_negative_kv_is_a_start_without_kv_memory() {
        // `sample-logs/805-…:2`, `:7`, `:8`.
        let loads = loads_of(&[
            "Model loading took 65.9651 GiB and 12.799889 seconds",
            "Available KV cache memory: -2.14 GiB",
            "EngineCore failed to start.",
        ]);
        let s = loads[0].serving.as_ref().unwrap();
        assert_eq!(s.failure, Some(StartFailure::NoKvMemory));
        assert!(loads[0].actual.failed);
        // No KV buffer for a negative figure.
        assert!(loads[0]
            .actual
            .buffers
            .iter()
            .all(|b| b.kind != crate::model::BufferKind::Kv));
    }

    #[test]
    fn ranks_become_gpus_by_their_parallel_ranks() {
        // `sample-logs/812-…:5-6` (DP attention: DPn TPn), `…/809-…:3` (EP3 over DP × TP).
        let loads = loads_of(&[
            "[rank=DP7_TP7] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
            "[rank=DP6_TP6] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
        ]);
        let s = loads[0].serving.as_ref().unwrap();
        let devices: Vec<String> = s.ranks.iter().map(|r| r.device.to_string()).collect();
        assert_eq!(devices, ["GPU6", "GPU7"]);
        assert_eq!(loads[0].runtime, Runtime::Sglang);
        let loads = loads_of(&["[rank=DP1_TP1_EP3] Estimated CUDA graph memory: 118.65 GiB total"]);
        let s = loads[0].serving.as_ref().unwrap();
        assert_eq!(s.ranks[0].device.to_string(), "GPU3");
        // A pipeline stage alone is its GPU (`frame::prefix`'s `(Worker_PP6 pid=…)` test); with TP ranks it
        // is stage × TP size + TP rank, once the TP size is known, else the next free GPU.
        let loads = loads_of(&[
            "[rank=PP6] Estimated CUDA graph memory: 4.30 GiB total",
            "[rank=PP1] Estimated CUDA graph memory: 4.38 GiB total",
        ]);
        let s = loads[0].serving.as_ref().unwrap();
        let devices: Vec<String> = s.ranks.iter().map(|r| r.device.to_string()).collect();
        assert_eq!(devices, ["GPU1", "GPU6"]);
    }

    #[test]
    fn torch_out_of_memory_gives_its_figures_and_the_capture_it_broke() {
        // Built from the shape of torch's message (docs/log-formats.md §8; no capture in the corpus), on a V0
        // start whose capture began (`sample-logs/810-…:5`, `:13`).
        let loads = loads_of(&[
            "Loading model weights took 2.3463 GB",
            "Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static.",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 22.05 GiB of which 301.06 MiB is free. Of the allocated memory 20.70 GiB is allocated by PyTorch, and 412.00 MiB is reserved by PyTorch but unallocated.",
        ]);
        let s = loads[0].serving.as_ref().unwrap();
        let Some(StartFailure::OutOfMemory {
            tried,
            total,
            free,
            during_capture,
            ..
        }) = s.failure
        else {
            panic!("{:?}", s.failure);
        };
        assert_eq!(tried.unwrap().bytes, 512 * crate::model::MIB);
        assert_eq!(total.unwrap().bytes, (22.05 * GIB as f64).round() as i64);
        assert_eq!(
            free.unwrap().bytes,
            (301.06 * crate::model::MIB as f64).round() as i64
        );
        assert!(during_capture);
        assert_eq!(loads[0].runtime, Runtime::Vllm);
        let failure = loads[0].actual.failure.as_deref().unwrap();
        assert!(failure.contains("while capturing CUDA graphs"), "{failure}");
        // 22.05 GiB − 0.29 − 20.70 − 0.40: what lies outside the process's allocator.
        assert!(
            failure.contains("outside this process's allocator"),
            "{failure}"
        );
    }

    #[test]
    fn sglangs_not_enough_memory_is_no_kv_pool_and_names_sglang() {
        // SGLang's model_runner.py wording (no capture in the corpus), after a real weights line
        // (`sample-logs/812-…:3`, framed).
        let loads = loads_of(&[
            "[rank=DP0_TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB.",
            "[rank=DP0_TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        ]);
        let s = loads[0].serving.as_ref().unwrap();
        assert_eq!(s.failure, Some(StartFailure::NoKvMemory));
        assert_eq!(loads[0].runtime, Runtime::Sglang);
        // A torch message alone names no engine.
        let loads = loads_of(&[
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.37 GiB is free.",
        ]);
        assert_eq!(loads[0].runtime, Runtime::Unknown);
        assert!(loads[0].actual.failed);
    }

    #[test]
    fn a_capture_line_without_a_rank_adds_no_gpu_to_a_tp_start() {
        // `sample-logs/804-…:119`: the progress bar without a prefix, after two ranks' lines.
        let loads = loads_of(&[
            "[rank=TP0] Model loading took 74.2812 GiB and 215.831224 seconds",
            "[rank=TP1] Model loading took 74.2812 GiB and 215.831224 seconds",
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%",
        ]);
        assert_eq!(loads[0].serving.as_ref().unwrap().ranks.len(), 2);
    }

    #[test]
    fn a_capture_line_without_a_rank_before_the_ranks_moves_no_rank_off_its_gpu() {
        // `sample-logs/804-…:120,123–126`, framed: a fragment that starts at the progress bar (no prefix),
        // then each rank's graphs and advisory. TP0 is GPU 0 as in the whole log, and the bar adds no GPU.
        let loads = loads_of(&[
            "Capturing CUDA graphs (decode, FULL): 100%",
            "[rank=TP1] Graph capturing finished in 25 secs, took 2.37 GiB",
            "[rank=TP0] Graph capturing finished in 25 secs, took 2.37 GiB",
        ]);
        let ranks = &loads[0].serving.as_ref().unwrap().ranks;
        let placed: Vec<(&str, Option<usize>)> = ranks
            .iter()
            .map(|r| (r.rank.as_str(), r.device.position()))
            .collect();
        assert_eq!(placed, [("TP0", Some(0)), ("TP1", Some(1))]);
    }
}
