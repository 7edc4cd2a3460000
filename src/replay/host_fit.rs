//! `whatif --max-ctx` for llama.cpp's `--fit` on system memory: a load without a GPU (a CPU build, or no device
//! usable) that llama.cpp fitted to the host's total memory (`docs/log-formats.md` §5.5; the lines are
//! `projected to use U MiB of host memory vs. T MiB of total host memory` and `will leave F >= M MiB of system
//! memory` or `cannot meet free memory target of M MiB`).
//!
//! Why it exists: with no GPU there are no layers to move, so the fit can only shrink the context, and the GPU
//! replay (`llama_server`) has no device to place on. What the fit fills is the host row of its breakdown table,
//! `model + context + compute` (the repacked copy of the weights, `CPU_REPACK`, is its own row and is not
//! counted: `sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log` lines 43–46,
//! host 1635 = 635 + 832 + 168 MiB beside CPU_REPACK 1404),
//! and it keeps `target` free of the host's total: `used ≤ total − target` (the target holding the projector's
//! reserve when there is one: 2693 MiB there, for a 867 MiB projector estimate). Memory in use by the KV cache and the
//! compute buffer grows with the context by the same laws as on a GPU (`llama_server::kv_change`,
//! `levers::ComputeLaw`), so the largest context is a search over them.
//!
//! The host's total is printed in whole MiB truncated, and so is the target: the answer is a range of contexts,
//! one per end of that rounding. llama.cpp's own reduction (`context size reduced from A to B`) interpolates
//! linearly between its `--fit-ctx` and the context asked for; memory that is affine in the context makes that
//! the same largest multiple of 256 this search finds.

use super::figures::Changes;
use super::levers::ComputeLaw;
use super::llama_server::kv_change;
use super::max_ctx::STEP;
use crate::model::{human, BufferKind, KvType, MaxContext, MaxContextRow, Quantity, Reconciled};

/// A load fitted to system memory, and what the fit fills there.
pub struct HostFit<'a> {
    load: &'a Reconciled,
    /// The host's total memory as the fit measured it.
    total: Quantity,
    /// The memory the fit keeps free (`--fit-target`).
    target: Quantity,
    /// Host weights the fit counts: every host model buffer but the repacked copies and the projector's (whose
    /// memory llama-server reserves by raising the target: `[mtmd] estimated worst-case memory usage`, §5.7).
    weights: i64,
    /// The host compute buffers as measured.
    compute: i64,
    /// The repacked copies of the weights: held in host memory too, but outside what the fit counts.
    repacked: i64,
}

impl<'a> HostFit<'a> {
    /// The host fit of `load`: `None` when a GPU holds any buffer or the fit printed no host projection.
    pub fn of(load: &'a Reconciled) -> Option<HostFit<'a>> {
        let fit = load.load.estimate.as_ref()?.fit.as_ref()?;
        let total = fit.host_total?;
        let buffers = &load.load.actual.buffers;
        if buffers.is_empty() || buffers.iter().any(|b| b.device.is_gpu()) {
            return None;
        }
        let target = fit
            .target
            .or(load.load.settings.fit_target)
            .unwrap_or(Quantity::exact(super::fit::DEFAULT_FIT_TARGET));
        let sum = |keep: &dyn Fn(&crate::model::Buffer) -> bool| {
            buffers
                .iter()
                .filter(|b| keep(b))
                .fold(0i64, |s, b| s.saturating_add(b.size.bytes))
        };
        let weights = sum(&|b| {
            matches!(b.kind, BufferKind::Model | BufferKind::Lora)
                && !b.projector
                && !is_repacked(&b.buffer)
        });
        let compute = sum(&|b| b.kind == BufferKind::Compute && !b.projector);
        let repacked = sum(&|b| b.kind == BufferKind::Model && is_repacked(&b.buffer));
        Some(HostFit {
            load,
            total,
            target,
            weights,
            compute,
            repacked,
        })
    }

    /// What the fit would count at `changes` (a context and KV type): weights, KV and recurrent state, compute.
    fn used(&self, changes: &Changes) -> Option<i64> {
        let kv = kv_change(self.load, changes)?.after;
        let compute = match ComputeLaw::of(self.load, changes) {
            Some(law) => law.scale(self.compute),
            None => self.compute,
        };
        Some(self.weights.saturating_add(kv).saturating_add(compute))
    }

    /// `total − target` at the low end of the rounding, as printed, and at the high end.
    fn budgets(&self) -> [i64; 3] {
        [
            self.total.low.saturating_sub(self.target.high),
            self.total.bytes.saturating_sub(self.target.bytes),
            self.total.high.saturating_sub(self.target.low),
        ]
    }

    /// The largest `num_ctx` (per slot, in steps) for `kv_type` whose use fits each budget, up to `cap`.
    fn row(&self, changes: &Changes, kv_type: KvType, cap: i64, slots_in_c: i64) -> MaxContextRow {
        let at = |k: i64| Changes {
            ctx: Some(k * STEP),
            kv_type: Some(kv_type),
            ..changes.clone()
        };
        let used = |k: i64| self.used(&at(k)).unwrap_or(i64::MAX);
        let top = (cap / STEP).max(1);
        let largest = |budget: i64| -> Option<i64> {
            if used(1) > budget {
                return None;
            }
            if used(top) <= budget {
                return Some(top);
            }
            let (mut lo, mut hi) = (1i64, top);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if used(mid) <= budget {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Some(lo)
        };
        let [low, printed, high] = self.budgets().map(largest);
        let range = match (low, high) {
            (Some(l), Some(h)) if l != h => Some([l * STEP, h * STEP]),
            (None, Some(h)) => Some([0, h * STEP]),
            _ => None,
        };
        MaxContextRow {
            kv_type,
            num_ctx: printed.map(|k| k * STEP),
            context: printed.map(|k| k * STEP * slots_in_c),
            at_cap: printed == Some(top),
            margin: printed.map(|k| self.budgets()[1].saturating_sub(used(k))),
            range,
        }
    }

    /// `whatif --max-ctx` on system memory, per KV type (`only`: just that one).
    pub fn max_ctx(&self, changes: &Changes, only: Option<KvType>) -> Option<MaxContext> {
        let base = Changes {
            ctx: None,
            kv_type: None,
            ..changes.clone()
        };
        self.used(&Changes {
            ctx: Some(STEP),
            kv_type: Some(KvType::F16),
            ..base.clone()
        })?;
        let parallel = changes
            .parallel
            .or(self.load.load.settings.parallel)
            .unwrap_or(1)
            .max(1);
        let shared = crate::model::kv_geometry::SlotContext::of(&self.load.load.settings)
            .is_some_and(|s| s.shared);
        let slots_in_c = if shared { 1 } else { parallel };
        let (cap, cap_from) = super::max_ctx::cap(self.load);
        let types: Vec<KvType> = only.map_or_else(|| KvType::ALL.to_vec(), |t| vec![t]);
        let rows = types
            .iter()
            .map(|&t| self.row(&base, t, cap, slots_in_c))
            .collect();
        let [_, budget, _] = self.budgets();
        let mut assumptions = vec![
            format!(
                "fits: the host's total memory ({}, printed in whole MiB) less the --fit target ({}) leaves {} for weights, KV cache and compute buffers; a context range is the rounding of those two figures",
                human(self.total.bytes),
                human(self.target.bytes),
                human(budget)
            ),
            format!(
                "weights: the host model buffers, {}, as llama.cpp's fit counts them{}",
                human(self.weights),
                if self.load.load.actual.buffers.iter().any(|b| b.projector) {
                    " (the projector's memory is in the target)"
                } else {
                    ""
                }
            ),
            "KV cache and compute buffers grown with each context by llama.cpp's laws (src/replay/levers/compute.rs)".to_string(),
            "llama.cpp's own reduction (-c unset) interpolates between --fit-ctx and the context asked for: with memory affine in the context it lands on the same multiple of 256".to_string(),
        ];
        if self.repacked > 0 {
            assumptions.push(format!(
                "the repacked copy of the weights (CPU_REPACK, {}) is held in host memory too, but llama.cpp's fit leaves it out: memory in use at these contexts is that much more than the fit counts",
                human(self.repacked)
            ));
        }
        Some(MaxContext {
            replay: "llama.cpp --fit on system memory (no GPU) with the measured figures"
                .to_string(),
            gpus: Vec::new(),
            on_host: true,
            parallel,
            step: STEP,
            cap,
            cap_from,
            assumptions,
            rows,
        })
    }
}

/// A repacked copy of weights the host also holds as loaded (`CPU_REPACK`, `CPU_AARCH64`).
fn is_repacked(buffer: &str) -> bool {
    buffer.contains("REPACK") || buffer.contains("AARCH64")
}
