//! Ollama's layer placement (`llm/memory.go` `estimateGPULayers`) as a pure function of the figures and the
//! GPUs' free memory, by upstream 0.7.1's rules unless a family is named (the rules themselves are in
//! `estimator.rs` and `families`), and the scheduler's choice of GPU sets. See `docs/log-formats.md` §2.4.
//!
//! It is deliberately the estimator's algorithm, not a better one: replayed with the estimate's own figures it
//! must reproduce the logged split, and replayed with measured figures it shows what the same rules would
//! have done had the estimate been right.

use super::estimator::{place_bare, Bounded, Point};
use super::families::{Family, Rules, Tries};
use crate::model::{Device, Placement, ReplayFigures};

/// A GPU the placement may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSpace {
    pub device: Device,
    pub free: i64,
}

/// Place every block and the output layer on `gpus` (in the estimator's order) by upstream 0.7.1's rules.
///
/// `max_layers` is `num_gpu` when the user set one (≥ 0); `None` places as many as fit.
pub fn place(gpus: &[GpuSpace], f: &ReplayFigures, max_layers: Option<i64>) -> Placement {
    place_as(Family::Upstream071.rules(), gpus, f, max_layers)
}

/// Place by a family's rules, on figures without rounding.
pub fn place_as(
    rules: &Rules,
    gpus: &[GpuSpace],
    f: &ReplayFigures,
    max_layers: Option<i64>,
) -> Placement {
    place_bare(rules, &Bounded::exact(gpus, f), max_layers, Point::PRINTED).placement
}

/// Which GPU sets the scheduler offers the estimator before it settles for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// Upstream `pickBestFullFitByLibrary`: each single GPU (most free first), then all of them.
    Upstream,
    /// ollama37 and upstream 0.11.5+: the fewest GPUs first (1, 2, … most free first).
    FewestFirst,
    /// The scheduler of the estimator family replayed.
    OfFamily,
}

impl Scheduler {
    pub fn describe(self) -> &'static str {
        match self {
            Scheduler::Upstream => "upstream scheduler: one GPU, else all",
            Scheduler::FewestFirst => "ollama37 scheduler: fewest GPUs first",
            Scheduler::OfFamily => "the estimator family's own scheduler",
        }
    }

    /// The scheduler that tries what `tries` says.
    pub fn of(tries: Tries) -> Scheduler {
        match tries {
            Tries::EachAloneThenAll => Scheduler::Upstream,
            Tries::Prefixes => Scheduler::FewestFirst,
        }
    }
}

/// Place on the first GPU set the scheduler tries that holds every layer, else on all GPUs (partial offload).
pub fn schedule(
    rules: &Rules,
    gpus: &[GpuSpace],
    f: &ReplayFigures,
    max_layers: Option<i64>,
    scheduler: Scheduler,
) -> Placement {
    let mut by_free = gpus.to_vec();
    by_free.sort_by_key(|g| std::cmp::Reverse(g.free));
    let scheduler = match scheduler {
        Scheduler::OfFamily => Scheduler::of(rules.tries),
        other => other,
    };
    let sets: Vec<Vec<GpuSpace>> = match scheduler {
        Scheduler::Upstream | Scheduler::OfFamily => {
            by_free.iter().map(|g| vec![g.clone()]).collect()
        }
        Scheduler::FewestFirst => (1..by_free.len()).map(|k| by_free[..k].to_vec()).collect(),
    };
    for set in sets {
        let p = place_as(rules, &set, f, max_layers);
        if p.fully_offloaded() {
            return p;
        }
    }
    place_as(rules, &by_free, f, max_layers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn figures() -> ReplayFigures {
        ReplayFigures {
            layer_weights: 100 * MIB,
            layer_kv: 10 * MIB,
            blocks: 10,
            output: 200 * MIB,
            first_gpu_extra: 0,
            graph: 300 * MIB,
            graph_partial: 300 * MIB,
            per_gpu_floor: 457 * MIB,
            gpu_overhead: 0,
            layer_buffer: true,
            from: Vec::new(),
            per_layer: Vec::new(),
        }
    }

    fn gpu(device: &str, free_mib: i64) -> GpuSpace {
        GpuSpace {
            device: Device::named(device),
            free: free_mib * MIB,
        }
    }

    #[test]
    fn two_equal_gpus_share_blocks_round_robin_and_both_pay_the_graph() {
        let p = place(&[gpu("CUDA0", 8000), gpu("CUDA1", 8000)], &figures(), None);
        // Blocks 9..0: odd indices to GPU 1, even to GPU 0; output at index 10 % 2 = 0.
        assert_eq!(p.split(), vec![6, 5]);
        assert!(p.fully_offloaded());
        assert_eq!(p.overflow, 0);
        let per_gpu = |layers: i64, output: i64| (457 + 110 + layers * 110 + output + 300) * MIB;
        assert_eq!(p.gpus[0].allocation, per_gpu(5, 200));
        assert_eq!(p.gpus[1].allocation, per_gpu(5, 0));
    }

    #[test]
    fn a_small_gpu_is_dropped_and_layers_overflow_when_nothing_fits() {
        // 457 + 2×110 + 300 = 977 MiB is the filter: a 900 MiB GPU is not used at all.
        let p = place(&[gpu("CUDA0", 2000), gpu("CUDA1", 900)], &figures(), None);
        assert_eq!(p.gpus[1].layers, 0);
        assert_eq!(p.gpus[1].allocation, 0, "a filtered GPU is charged nothing");
        // 2000 − (457 + 110 + 300) = 1133 MiB for layers: 10 blocks of 110 MiB fit, the output does not.
        assert_eq!(p.gpus[0].layers, 10);
        assert_eq!(p.offloaded, 10);
        assert_eq!(p.overflow, 200 * MIB);
    }

    #[test]
    fn schedulers_differ_on_three_gpus_when_two_suffice() {
        let gpus = [gpu("CUDA0", 2000), gpu("CUDA1", 2000), gpu("CUDA2", 2000)];
        // No single GPU holds 10 × 110 + 200 MiB with its floor and graph; two do.
        let rules = Family::Upstream071.rules();
        let upstream = schedule(rules, &gpus, &figures(), None, Scheduler::Upstream);
        assert_eq!(upstream.gpus.len(), 3, "upstream jumps from one GPU to all");
        let fork = schedule(rules, &gpus, &figures(), None, Scheduler::FewestFirst);
        assert_eq!(fork.gpus.len(), 2);
        assert!(fork.fully_offloaded());
    }

    #[test]
    fn num_gpu_caps_the_layers_placed() {
        let p = place(&[gpu("CUDA0", 8000)], &figures(), Some(4));
        assert_eq!(p.offloaded, 4);
        assert_eq!(p.overflow, 6 * 110 * MIB + 200 * MIB);
    }
}
