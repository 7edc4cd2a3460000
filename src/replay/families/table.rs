//! The rules of each estimator family, one row per family (`docs/log-formats.md` §2.4a).

use super::{
    BlockOrder, Buffer, Candidate, Family, GraphPerGpu, KvPerBlock, Overflow, Projector, Rules,
    Tries, WeightsMeaning, FORK_SMALL_GRAPH,
};

const UPSTREAM_05: Rules = Rules {
    name: "upstream-0.5",
    builds: "Ollama 0.2.x–0.5.13 and 0.6.0",
    order: BlockOrder::Ascending,
    candidate: Candidate::IndexModJ,
    buffer: Buffer::FirstBlock,
    projector: Projector::FirstGpu,
    graph: GraphPerGpu::Every,
    overflow: Overflow::LastBlockTimesUnplaced,
    tries: Tries::EachAloneThenAll,
    weights: WeightsMeaning::TotalHoldsKv,
    kv: KvPerBlock::Even,
    logged_graph_factor: None,
};

const UPSTREAM_061: Rules = Rules {
    name: "upstream-0.6.1",
    builds: "Ollama 0.6.1–0.6.2",
    weights: WeightsMeaning::Repeating,
    ..UPSTREAM_05
};

const UPSTREAM_063: Rules = Rules {
    name: "upstream-0.6.3",
    builds: "Ollama 0.6.3–0.6.8",
    kv: KvPerBlock::PerLayer,
    ..UPSTREAM_061
};

const UPSTREAM_070: Rules = Rules {
    name: "upstream-0.7.0",
    builds: "Ollama 0.7.0",
    order: BlockOrder::Descending,
    buffer: Buffer::LargestGroup,
    overflow: Overflow::PerBlock,
    ..UPSTREAM_063
};

const UPSTREAM_071: Rules = Rules {
    name: "upstream-0.7.1",
    builds: "Ollama 0.7.1–0.11.4 (and ollama37 until 2025-10-29)",
    buffer: Buffer::FirstBlock,
    projector: Projector::ByEngine,
    ..UPSTREAM_070
};

const UPSTREAM_0115: Rules = Rules {
    name: "upstream-0.11.5",
    builds: "Ollama 0.11.5–0.12.10",
    tries: Tries::Prefixes,
    ..UPSTREAM_071
};

const OLLAMA37_LAST: Rules = Rules {
    name: "ollama37-241a0340",
    builds: "ollama37 241a0340 (2025-10-29) and d002de9a (2025-10-30)",
    candidate: Candidate::LastListed,
    graph: GraphPerGpu::FixedButLast(FORK_SMALL_GRAPH),
    overflow: Overflow::BucketOnly,
    ..UPSTREAM_071
};

const OLLAMA37_SCALED: Rules = Rules {
    name: "ollama37-6d87524e",
    builds: "ollama37 6d87524e (2025-10-30)",
    overflow: Overflow::PerBlock,
    logged_graph_factor: Some((85, 100, "CUDA compute 3.7")),
    ..OLLAMA37_LAST
};

const OLLAMA37_REVERT: Rules = Rules {
    name: "ollama37-fabe2c5c",
    builds: "ollama37 fabe2c5c (2025-10-30 to 2025-11-04)",
    candidate: Candidate::PlacedModJ,
    overflow: Overflow::BucketOnly,
    ..UPSTREAM_071
};

const OLLAMA37_SAFETY: Rules = Rules {
    name: "ollama37-safety",
    builds: "ollama37 from 2025-11-06 (graph safety multiplier 3.5, 2.5 from 2026-06)",
    logged_graph_factor: Some((
        35,
        10,
        "every GPU; 2.5 from 2026-06, OLLAMA_GRAPH_SAFETY_MULTIPLIER overrides it",
    )),
    ..UPSTREAM_0115
};

pub(super) fn rules(family: Family) -> &'static Rules {
    match family {
        Family::Upstream05 => &UPSTREAM_05,
        Family::Upstream061 => &UPSTREAM_061,
        Family::Upstream063 => &UPSTREAM_063,
        Family::Upstream070 => &UPSTREAM_070,
        Family::Upstream071 => &UPSTREAM_071,
        Family::Upstream0115 => &UPSTREAM_0115,
        Family::Ollama37Last => &OLLAMA37_LAST,
        Family::Ollama37Scaled => &OLLAMA37_SCALED,
        Family::Ollama37Revert => &OLLAMA37_REVERT,
        Family::Ollama37Safety => &OLLAMA37_SAFETY,
    }
}
