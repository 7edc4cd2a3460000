//! `runtime-growth`: the table llama.cpp prints at exit (memory in use) against what the same load had at load
//! time (`docs/log-formats.md` §5.7). Two things grow while a server runs: llama.cpp's compute buffers (its
//! `compute` column, against the compute buffers the load allocated, `… compute buffer size = N MiB`, else the
//! plan's column), and memory outside llama.cpp's accounting (the exit table's `unaccounted`: a backend's pool,
//! another process), against what was in use before the load (`total − free` of the fit's own reading, the fit's
//! dry run allocating nothing, else of the load's own reading of free memory: llama.cpp's `using device … MiB
//! free` or `device_info`, Ollama's `gpu memory`). So an excerpt that lacks the fit still has a baseline when it
//! shows the load's buffers or its free memory; `unaccounted` alone never is one (it holds the backend's context
//! and whatever was there before the load), nor is the table's own `total − free` (what is in use now, from
//! whenever). Every figure carries its rounding (tables print whole MiB truncated, buffer lines two decimals,
//! Ollama one decimal of GiB), a difference inside it is never called growth, and only growth of at least
//! [`FLOOR`] on a GPU is reported. Devices of one memory pool are never judged on `unaccounted` (each counts the
//! others' buffers there). The levers: a smaller micro-batch for the compute buffers, a larger `--fit` margin for
//! memory outside llama.cpp, in the runtime's own knobs.

use super::{finding, CheckDef, Context};
use crate::model::knobs::{self, Knob};
use crate::model::{
    human, BreakdownRow, Device, Finding, FindingCode, Load, Part, Severity, TablePhase, MIB,
};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::RuntimeGrowth,
    summary: "the exit table shows more memory in use than the load-time plan: compute growth, or memory outside llama.cpp's accounting",
    run: check,
};

/// Growth below this on a GPU is not reported (a few MiB of pool growth is how a server runs).
pub const FLOOR: i64 = 64 * MIB;

/// Rounding of a difference of two whole-MiB truncated figures.
const TWO_FIGURES: i64 = MIB;
/// Rounding of `unaccounted` at exit against `total − free` (three figures, each truncated).
const THREE_FIGURES: i64 = 3 * MIB;

/// Where a baseline comes from, as the message names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Baseline {
    /// The fit's plan, or its own reading of free memory.
    Plan,
    /// The compute buffers the load allocated.
    Buffers,
    /// The load's own reading of free memory (no fit in the log).
    Reading,
}

impl Baseline {
    fn words(self) -> &'static str {
        match self {
            Baseline::Plan => "the load-time plan",
            Baseline::Buffers => "the compute buffers allocated at load",
            Baseline::Reading => "the free memory read before the load",
        }
    }
}

/// A figure at load and at exit, the rounding of their difference, and where the first comes from.
#[derive(Clone, Copy)]
struct Pair {
    at_load: i64,
    at_exit: i64,
    rounding: i64,
    from: Baseline,
    line: Option<u64>,
}

impl Pair {
    /// What grew, 0 when the difference is inside the figures' rounding.
    fn growth(&self) -> i64 {
        Some(self.at_exit - self.at_load)
            .filter(|&g| g > self.rounding)
            .unwrap_or(0)
    }
}

/// One GPU's growth from load time to the exit table.
struct Growth {
    device: Device,
    compute: Option<Pair>,
    outside: Option<Pair>,
    exit_free: Option<i64>,
    line: u64,
}

impl Growth {
    fn compute_growth(&self) -> i64 {
        self.compute.map_or(0, |p| p.growth())
    }

    fn outside_growth(&self) -> i64 {
        self.outside.map_or(0, |p| p.growth())
    }
}

/// The compute buffers at load of an exit row's GPU: the buffers the load allocated (two decimals each),
/// else the plan's compute column (whole MiB, truncated like the exit table's).
fn compute_at_load(cx: &Context, r: &BreakdownRow, has_plan: bool) -> Option<Pair> {
    if let Some(c) = cx.gpu_buffers(&r.device, Part::Graph) {
        return Some(Pair {
            at_load: c.size.bytes,
            at_exit: r.compute.low,
            rounding: r.compute.spread() + c.size.spread(),
            from: Baseline::Buffers,
            line: c.lines.iter().copied().max(),
        });
    }
    let e = cx
        .load
        .load
        .estimate
        .as_ref()
        .filter(|e| e.from_llama_cpp())?;
    let plan = e
        .per_device
        .iter()
        .find(|d| d.device == r.device)
        .and_then(|d| d.graph)
        .filter(|_| has_plan || e.fit.is_some())?;
    Some(Pair {
        at_load: plan.low,
        at_exit: r.compute.low,
        rounding: TWO_FIGURES,
        from: Baseline::Plan,
        line: None,
    })
}

/// What was in use on an exit row's GPU before the load, against its `unaccounted` at exit: `total − free` of
/// the fit's reading, else of the load's own (joined by position and, when both print one, by name).
fn outside_at_load(load: &Load, r: &BreakdownRow) -> Option<Pair> {
    let total = r.total?;
    let unaccounted = r.unaccounted.filter(|u| *u >= 0)?;
    // One pool: each device's unaccounted holds the others' buffers (sample-logs/717-…).
    if load.shared_pools.iter().any(|p| p.contains(&r.device)) {
        return None;
    }
    let fit = load
        .estimate
        .as_ref()
        .filter(|e| e.from_llama_cpp())
        .and_then(|e| e.fit.as_ref());
    if let Some(free) = fit.and_then(|f| f.free.iter().find(|d| d.device == r.device)) {
        return Some(Pair {
            at_load: total.low - free.free.low,
            at_exit: unaccounted,
            rounding: THREE_FIGURES,
            from: Baseline::Plan,
            line: Some(free.line),
        });
    }
    if fit.is_some_and(|f| !f.free.is_empty()) {
        return None;
    }
    let gpu = r.device.position().and_then(|i| load.gpus.get(i))?;
    let same_name = match (gpu.name.as_deref(), r.name.as_deref()) {
        (Some(a), Some(b)) => a.contains(b) || b.contains(a),
        _ => true,
    };
    let free = gpu.free.filter(|_| same_name)?;
    Some(Pair {
        at_load: total.low - free.bytes,
        at_exit: unaccounted,
        // Three figures: the exit table's total and unaccounted (truncated) and the reading of free memory.
        rounding: total.spread() + free.spread() + MIB,
        from: Baseline::Reading,
        line: Some(gpu.line),
    })
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    // Only llama.cpp prints an exit table of its own allocations.
    if !load.runtime.llama_cpp_places_layers() {
        return;
    }
    let has_plan = load
        .lifecycle
        .tables
        .iter()
        .any(|t| t.phase == TablePhase::Plan);
    let fit = load
        .estimate
        .as_ref()
        .filter(|e| e.from_llama_cpp())
        .and_then(|e| e.fit.as_ref());
    let exit_line = load
        .lifecycle
        .tables
        .iter()
        .filter(|t| t.phase == TablePhase::Exit)
        .map(|t| t.line)
        .max();
    let Some(exit_line) = exit_line else {
        return;
    };
    let growths: Vec<Growth> = load
        .actual
        .breakdown
        .iter()
        .filter(|r| r.device.is_gpu())
        .map(|r| Growth {
            device: r.device.clone(),
            compute: compute_at_load(cx, r, has_plan),
            outside: outside_at_load(load, r),
            exit_free: r.free.map(|f| f.low),
            line: r.line,
        })
        .filter(|g| g.compute_growth() + g.outside_growth() >= FLOOR)
        .collect();
    if growths.is_empty() {
        return;
    }
    let mut lines: Vec<u64> = growths.iter().map(|g| g.line).collect();
    lines.push(exit_line);
    let used: Vec<Pair> = growths
        .iter()
        .flat_map(|g| {
            [
                g.compute.filter(|_| g.compute_growth() > 0),
                g.outside.filter(|_| g.outside_growth() > 0),
            ]
        })
        .flatten()
        .collect();
    lines.extend(used.iter().filter_map(|p| p.line));
    if used.iter().any(|p| p.from == Baseline::Plan) {
        lines.extend(fit.map(|f| f.lines.clone()).unwrap_or_default());
        lines.extend(
            load.lifecycle
                .tables
                .iter()
                .filter(|t| t.phase == TablePhase::Plan)
                .map(|t| t.line),
        );
    }
    lines.sort_unstable();
    lines.dedup();
    let mut against: Vec<&str> = Vec::new();
    for p in &used {
        if !against.contains(&p.from.words()) {
            against.push(p.from.words());
        }
    }
    let target = fit.and_then(|f| f.target).map(|t| t.low);
    let below_margin = growths
        .iter()
        .any(|g| matches!((g.exit_free, target), (Some(free), Some(t)) if free < t));
    let parts: Vec<String> = growths
        .iter()
        .map(|g| {
            let mut what = Vec::new();
            if let (Some(p), true) = (g.compute, g.compute_growth() > 0) {
                what.push(format!(
                    "compute {} at load → {} at exit (+{})",
                    human(p.at_load),
                    human(p.at_exit),
                    human(p.growth())
                ));
            }
            if let (Some(p), true) = (g.outside, g.outside_growth() > 0) {
                what.push(format!(
                    "{} outside llama.cpp's accounting (unaccounted {} at exit, {} in use before the load as {})",
                    human(p.growth()),
                    human(p.at_exit),
                    human(p.at_load),
                    match p.from {
                        Baseline::Plan | Baseline::Buffers => "the fit saw it",
                        Baseline::Reading => "the load read it",
                    }
                ));
            }
            format!(
                "{}: {}{}",
                g.device,
                what.join("; "),
                g.exit_free
                    .map(|f| format!(", {} free at exit", human(f)))
                    .unwrap_or_default()
            )
        })
        .collect();
    let compute = growths
        .iter()
        .map(Growth::compute_growth)
        .max()
        .unwrap_or(0);
    let outside = growths
        .iter()
        .map(Growth::outside_growth)
        .max()
        .unwrap_or(0);
    out.push(finding(
        DEF.code,
        if below_margin {
            Severity::Warning
        } else {
            Severity::Info
        },
        format!(
            "memory grew after the load, by the exit table against {}: {}{}",
            against.join(" and "),
            parts.join("; "),
            if below_margin {
                format!(
                    "; below the {} the fit meant to keep free",
                    human(target.unwrap_or(0))
                )
            } else {
                String::new()
            }
        ),
        &levers(cx, compute, outside, target),
        lines,
        (growths.len() == 1).then(|| &growths[0].device),
        None,
    ));
}

/// The knobs that make room for the growth, computed from it.
fn levers(cx: &Context, compute: i64, outside: i64, target: Option<i64>) -> String {
    let load = &cx.load.load;
    let runtime = load.runtime;
    let mut out = Vec::new();
    if compute > 0 {
        let ubatch = load.settings.ubatch_size.unwrap_or(512);
        match knobs::reaching(runtime, Knob::Ubatch) {
            Some(ub) if ubatch >= 128 => out.push(format!(
                "{} (the compute buffers scale with the micro-batch, {ubatch} now: about half as large, and so their {} growth)",
                ub.setting(ubatch / 2),
                human(compute)
            )),
            Some(_) | None => {}
        }
    }
    let room = compute + outside;
    if let (Some(t), Some(margin)) = (target, knobs::reaching(runtime, Knob::FitMargin)) {
        let raised = (t + room + 64 * MIB - 1) / (64 * MIB) * (64 * MIB);
        out.push(format!(
            "{} (--fit keeps {} free instead of {}, room for the {} that grew)",
            margin.setting(raised / MIB),
            human(raised),
            human(t),
            human(room)
        ));
    }
    if out.is_empty() {
        "leave room for what grows while serving: a smaller context or batch, or more memory kept free at load".to_string()
    } else {
        format!(
            "leave room for what grows while serving: {}",
            out.join(", or ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Baseline, Pair, MIB, THREE_FIGURES, TWO_FIGURES};
    use crate::model::GIB;

    fn pair(at_load: i64, at_exit: i64, rounding: i64) -> Pair {
        Pair {
            at_load,
            at_exit,
            rounding,
            from: Baseline::Plan,
            line: None,
        }
    }

    #[test]
    fn a_difference_inside_the_rounding_is_no_growth() {
        // Two truncated whole-MiB figures: 1 MiB apart is rounding, 2 MiB is growth.
        assert_eq!(pair(836 * MIB, 837 * MIB, TWO_FIGURES).growth(), 0);
        assert_eq!(pair(836 * MIB, 838 * MIB, TWO_FIGURES).growth(), 2 * MIB);
        // Three truncated figures: up to 3 MiB.
        assert_eq!(pair(990 * MIB, 993 * MIB, THREE_FIGURES).growth(), 0);
        // Shrinking is no growth.
        assert_eq!(pair(990 * MIB, 900 * MIB, THREE_FIGURES).growth(), 0);
        // A reading of free memory to one decimal of GiB (±51.2 MiB) widens the rounding with it.
        let ollama = 2 * MIB + GIB / 10;
        assert_eq!(pair(990 * MIB, 1090 * MIB, ollama).growth(), 0);
        assert_eq!(pair(990 * MIB, 1100 * MIB, ollama).growth(), 110 * MIB);
    }
}
