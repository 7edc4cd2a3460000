//! Ollama's layer placement (`llm/memory.go` `estimateGPULayers`, v0.7.1+ form) as a pure function of the
//! figures and the GPUs' free memory. See `docs/log-formats.md` §2.4; the steps below are numbered as there.
//!
//! It is deliberately the estimator's algorithm, not a better one: replayed with the estimate's own figures it
//! must reproduce the logged split, and replayed with measured figures it shows what the same rules would
//! have done had the estimate been right.

use crate::model::{Device, PlacedGpu, Placement, ReplayFigures};

/// A GPU the placement may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSpace {
    pub device: Device,
    pub free: i64,
}

/// Place every block and the output layer on `gpus` (in the estimator's order).
///
/// `max_layers` is `num_gpu` when the user set one (≥ 0); `None` places as many as fit.
pub fn place(gpus: &[GpuSpace], f: &ReplayFigures, max_layers: Option<i64>) -> Placement {
    // The estimator's `layerSize` (the buffer and the filter): block 0's weights and KV.
    let layer_size = f.block_cost(0);
    let graph_max = f.graph.max(f.graph_partial);
    let buffer = if f.layer_buffer { layer_size } else { 0 };
    let mut alloc = vec![0i64; gpus.len()];
    let mut layers = vec![0i64; gpus.len()];
    // 2. GPU filter and starting allocation.
    let mut with_space: Vec<usize> = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let first_extra = if with_space.is_empty() {
            f.first_gpu_extra
        } else {
            0
        };
        let need = f.gpu_overhead + first_extra + graph_max + f.per_gpu_floor + buffer + layer_size;
        if g.free > need {
            alloc[i] = f.per_gpu_floor + buffer + first_extra;
            with_space.push(i);
        }
    }
    let mut overflow = 0i64;
    if with_space.is_empty() {
        overflow += f.first_gpu_extra;
    }
    let mut placed = 0i64;
    let fits = |alloc: i64, free: i64, cost: i64| free > f.gpu_overhead + alloc + graph_max + cost;
    // 3. Blocks from the last down to 0, round-robin by block index over the GPUs that still have space.
    for i in (0..f.blocks).rev() {
        let block = f.block_cost(i);
        if max_layers.is_some_and(|n| placed >= n) {
            overflow += block;
            continue;
        }
        if !try_place(&mut with_space, i, |g| {
            if fits(alloc[g], gpus[g].free, block) {
                alloc[g] += block;
                layers[g] += 1;
                true
            } else {
                false
            }
        }) {
            overflow += block;
        } else {
            placed += 1;
        }
    }
    // 4. The output "layer" (with the Ollama engine's projector), by index `placed % j`.
    let output_allowed = max_layers.is_none_or(|n| placed < n);
    let output_placed = output_allowed
        && try_place(&mut with_space, placed, |g| {
            if fits(alloc[g], gpus[g].free, f.output) {
                alloc[g] += f.output;
                layers[g] += 1;
                true
            } else {
                false
            }
        });
    if output_placed {
        placed += 1;
    } else {
        overflow += f.output;
    }
    let fully = placed > f.blocks;
    // 5. Every GPU holding a layer pays the graph.
    // A kept GPU that received no layer keeps its floor and buffer layer, as in the estimator.
    for (i, a) in alloc.iter_mut().enumerate() {
        if layers[i] > 0 {
            *a += if fully { f.graph } else { f.graph_partial };
        }
    }
    Placement {
        gpus: gpus
            .iter()
            .enumerate()
            .map(|(i, g)| PlacedGpu {
                device: g.device.clone(),
                free: g.free,
                layers: layers[i],
                allocation: alloc[i],
            })
            .collect(),
        offloaded: placed,
        total: f.blocks + 1,
        overflow,
    }
}

/// Which GPU sets the scheduler offers the estimator before it settles for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// Upstream `pickBestFullFitByLibrary`: each single GPU (most free first), then all of them.
    Upstream,
    /// ollama37: the fewest GPUs first (1, 2, … most free first).
    FewestFirst,
}

impl Scheduler {
    pub fn describe(self) -> &'static str {
        match self {
            Scheduler::Upstream => "upstream scheduler: one GPU, else all",
            Scheduler::FewestFirst => "ollama37 scheduler: fewest GPUs first",
        }
    }
}

/// Place on the first GPU set the scheduler tries that holds every layer, else on all GPUs (partial offload).
pub fn schedule(
    gpus: &[GpuSpace],
    f: &ReplayFigures,
    max_layers: Option<i64>,
    scheduler: Scheduler,
) -> Placement {
    let mut by_free = gpus.to_vec();
    by_free.sort_by_key(|g| std::cmp::Reverse(g.free));
    let sets: Vec<Vec<GpuSpace>> = match scheduler {
        Scheduler::Upstream => by_free.iter().map(|g| vec![g.clone()]).collect(),
        Scheduler::FewestFirst => (1..by_free.len()).map(|k| by_free[..k].to_vec()).collect(),
    };
    for set in sets {
        let p = place(&set, f, max_layers);
        if p.fully_offloaded() {
            return p;
        }
    }
    place(&by_free, f, max_layers)
}

/// The estimator's inner loop: try `gpus[index % j]` for j = len … 1, dropping a GPU from the list when the
/// layer does not fit on it.
fn try_place(
    with_space: &mut Vec<usize>,
    index: i64,
    mut place_on: impl FnMut(usize) -> bool,
) -> bool {
    let mut j = with_space.len();
    while j > 0 {
        let k = (index.rem_euclid(j as i64)) as usize;
        if place_on(with_space[k]) {
            return true;
        }
        with_space.remove(k);
        j -= 1;
    }
    false
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
        let upstream = schedule(&gpus, &figures(), None, Scheduler::Upstream);
        assert_eq!(upstream.gpus.len(), 3, "upstream jumps from one GPU to all");
        let fork = schedule(&gpus, &figures(), None, Scheduler::FewestFirst);
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
