//! Ollama's estimator (`llm/memory.go`) was not one algorithm: the block order, which GPU a block is offered
//! first, the layer held back, where the projector goes, the graph charged per GPU, the overflow and the
//! scheduler's tries changed between versions, and the ollama37 fork changed them again for a few days in
//! 2025-10. A replay that is to reproduce a logged split must use the rules of the build that printed it.
//! This module holds those rules as data (one [`Rules`] per [`Family`], in `table.rs`) and the choice of
//! candidate families from the evidence a log gives (`choose.rs`). `docs/log-formats.md` §2.4a describes
//! each family.

mod choose;
mod table;

pub use choose::{candidates, Evidence};

use crate::model::MIB;

/// One estimator build family: builds whose placement rules are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Upstream 0.2.x–0.5.13 and 0.6.0.
    Upstream05,
    /// Upstream 0.6.1–0.6.2.
    Upstream061,
    /// Upstream 0.6.3–0.6.8.
    Upstream063,
    /// Upstream 0.7.0 alone.
    Upstream070,
    /// Upstream 0.7.1–0.11.4 (and the ollama37 fork until 2025-10-29).
    Upstream071,
    /// Upstream 0.11.5–0.12.10.
    Upstream0115,
    /// ollama37 `241a0340` (2025-10-29) and `d002de9a` (2025-10-30).
    Ollama37Last,
    /// ollama37 `6d87524e` (2025-10-30): as `241a0340`, graph × 0.85 on compute 3.7 before logging.
    Ollama37Scaled,
    /// ollama37 `fabe2c5c` (2025-10-30): "revert", with the blocks offered by layer count.
    Ollama37Revert,
    /// ollama37 from 2025-11-06: upstream 0.12.10 rules, graph × 3.5 (later 2.5) before logging.
    Ollama37Safety,
}

impl Family {
    /// Every family, oldest first.
    pub const ALL: [Family; 10] = [
        Family::Upstream05,
        Family::Upstream061,
        Family::Upstream063,
        Family::Upstream070,
        Family::Upstream071,
        Family::Upstream0115,
        Family::Ollama37Last,
        Family::Ollama37Scaled,
        Family::Ollama37Revert,
        Family::Ollama37Safety,
    ];

    /// The family's name (the `--family` value and the JSON word).
    pub fn name(self) -> &'static str {
        self.rules().name
    }

    /// The family named `word`.
    pub fn named(word: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == word)
    }

    /// The builds the family covers, in words.
    pub fn builds(self) -> &'static str {
        self.rules().builds
    }
}

/// The order the blocks are offered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOrder {
    /// blk.0 first (≤ 0.6.8).
    Ascending,
    /// The last block first (0.7.0 on).
    Descending,
}

/// Which GPU still in the candidate list a block is offered first (`j` = GPUs still listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Candidate {
    /// `i mod j`, i the block's index: blocks alternate between GPUs until one fills up.
    IndexModJ,
    /// `j − 1`: the last GPU still listed, filled before the next one is offered anything.
    LastListed,
    /// `layerCount mod j`, the layers placed so far.
    PlacedModJ,
}

/// The one layer every GPU holds back (the entry filter charges it twice, the pre-charge once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// blk.0's weights and KV.
    FirstBlock,
    /// The largest tensor group (a block, or the output / token embedding) and blk.0's KV (0.7.0).
    LargestGroup,
}

/// Where the vision projector is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Projector {
    /// Weights and graph on the first qualifying GPU ("GPU-0 overhead"), whatever the engine (≤ 0.7.0).
    FirstGpu,
    /// llama engine (`--mmproj`): weights on the first GPU; Ollama engine: weights and graph with the output
    /// in the last-layer bucket (0.7.1 on).
    ByEngine,
}

/// The graph charged to each GPU while placing and in the final sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphPerGpu {
    /// Every GPU the full graph.
    Every,
    /// Every GPU but the last in the list a fixed amount; the last (or a lone GPU) the full graph.
    FixedButLast(i64),
}

/// What blocks that found no GPU add to `memory.required.full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// (blocks − placed) × the last block's size; the output's only while num_gpu allows it (≤ 0.6.8).
    LastBlockTimesUnplaced,
    /// Each unplaced block its own size; the last-layer bucket even past num_gpu (0.7.0 on).
    PerBlock,
    /// Unplaced blocks add nothing; the last-layer bucket does.
    BucketOnly,
}

/// The GPU sets the scheduler offers the estimator, GPUs sorted by free memory (most first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tries {
    /// Each GPU alone, then all of them (≤ 0.11.4, ollama37 until 2025-11-04).
    EachAloneThenAll,
    /// Prefixes of the sorted list: 1, 2, … N GPUs (0.11.5 on: "fewest GPUs first").
    Prefixes,
}

/// How the log's `memory.weights.*` fields read as the blocks' weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsMeaning {
    /// `weights.total` = Σ (block + KV / N): the blocks are `total − kv` (≤ 0.6.0).
    TotalHoldsKv,
    /// `weights.repeating` = Σ blocks (0.6.1 on).
    Repeating,
}

/// How the KV cache is shared over the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvPerBlock {
    /// KV / N on every block (≤ 0.6.2).
    Even,
    /// Each block its own (sliding-window layers hold less; 0.6.3 on).
    PerLayer,
}

/// One family's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub name: &'static str,
    pub builds: &'static str,
    pub order: BlockOrder,
    pub candidate: Candidate,
    pub buffer: Buffer,
    pub projector: Projector,
    pub graph: GraphPerGpu,
    pub overflow: Overflow,
    pub tries: Tries,
    pub weights: WeightsMeaning,
    pub kv: KvPerBlock,
    /// A factor the build applied to the graph *before* logging it (numerator, denominator), and the GPUs it
    /// applies to, in words: a replay of the log uses the logged graph as it is; a what-if with the real
    /// compute buffer divides by it.
    pub logged_graph_factor: Option<(i64, i64, &'static str)>,
}

impl Family {
    /// The family's rules.
    pub fn rules(self) -> &'static Rules {
        table::rules(self)
    }
}

impl Rules {
    /// The graph charged to GPU `position` of `count` GPUs in the list, `full` being the graph of a lone GPU.
    pub fn graph_on(&self, position: usize, count: usize, full: i64) -> i64 {
        match self.graph {
            GraphPerGpu::Every => full,
            GraphPerGpu::FixedButLast(fixed) => {
                if count > 1 && position + 1 < count {
                    fixed
                } else {
                    full
                }
            }
        }
    }

    /// The rules in words, for the trace.
    pub fn describe(&self) -> Vec<String> {
        let mut out = vec![
            match self.order {
                BlockOrder::Ascending => "blocks blk.0 first".to_string(),
                BlockOrder::Descending => "blocks from the last one down to blk.0".to_string(),
            },
            match self.candidate {
                Candidate::IndexModJ => {
                    "each block offered first to GPU (block index mod GPUs still listed)".to_string()
                }
                Candidate::LastListed => {
                    "each block (and the last layer) offered first to the LAST GPU still listed".to_string()
                }
                Candidate::PlacedModJ => {
                    "each block offered first to GPU (layers placed so far mod GPUs still listed)"
                        .to_string()
                }
            },
            match self.buffer {
                Buffer::FirstBlock => "one layer held back per GPU: blk.0 with its KV".to_string(),
                Buffer::LargestGroup => {
                    "one layer held back per GPU: the largest tensor group (a block or the output) with blk.0's KV"
                        .to_string()
                }
            },
            match self.projector {
                Projector::FirstGpu => {
                    "projector weights and graph on the first qualifying GPU".to_string()
                }
                Projector::ByEngine => {
                    "projector: llama engine weights on the first GPU; Ollama engine weights and graph in the last-layer bucket with the output"
                        .to_string()
                }
            },
            match self.graph {
                GraphPerGpu::Every => "the full graph on every GPU".to_string(),
                GraphPerGpu::FixedButLast(b) => format!(
                    "a fixed {} graph on every GPU but the last in the list, the full graph on the last",
                    crate::model::human(b)
                ),
            },
            match self.overflow {
                Overflow::LastBlockTimesUnplaced => {
                    "overflow: unplaced blocks × the last block's size".to_string()
                }
                Overflow::PerBlock => "overflow: each unplaced block and the last-layer bucket".to_string(),
                Overflow::BucketOnly => {
                    "overflow: the last-layer bucket only (unplaced blocks add nothing)".to_string()
                }
            },
            match self.tries {
                Tries::EachAloneThenAll => "scheduler: each GPU alone, then all".to_string(),
                Tries::Prefixes => "scheduler: the fewest GPUs first (1, 2, … by free memory)".to_string(),
            },
            match self.weights {
                WeightsMeaning::TotalHoldsKv => {
                    "blocks = memory.weights.total − memory.required.kv (total holds the KV)".to_string()
                }
                WeightsMeaning::Repeating => "blocks = memory.weights.repeating".to_string(),
            },
            match self.kv {
                KvPerBlock::Even => "KV shared evenly over the blocks".to_string(),
                KvPerBlock::PerLayer => "KV per block (window layers hold less)".to_string(),
            },
        ];
        if let Some((n, d, on)) = self.logged_graph_factor {
            out.push(format!(
                "logged graph already × {} ({on})",
                n as f64 / d as f64
            ));
        }
        out.push(
            "fits when every block and the last layer are placed (BlockCount + 1)".to_string(),
        );
        out
    }
}

/// ollama37 `241a0340`'s graph on every GPU but the last (199 229 440 B).
pub const FORK_SMALL_GRAPH: i64 = 190 * MIB;
