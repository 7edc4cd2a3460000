//! `runtime-growth`: the table llama.cpp prints at exit (memory in use) against the load-time plan of the same
//! load (`docs/log-formats.md` §5.7). Two things grow while a server runs: llama.cpp's compute buffers (its
//! `compute` column, against the plan's), and memory outside llama.cpp's accounting (the exit table's
//! `unaccounted`: a backend's pool, another process), against what was in use before the load as the fit saw it
//! (`total − free` of the fit's own reading; the fit's dry run allocates nothing). Both tables print whole MiB,
//! truncated, so a difference inside the figures' rounding is never called growth, and only growth of at least
//! [`FLOOR`] on a GPU is reported. The levers: a smaller micro-batch for the compute buffers, a larger `--fit`
//! margin for memory outside llama.cpp, in the runtime's own knobs.

use super::{finding, CheckDef, Context};
use crate::model::knobs::{self, Knob};
use crate::model::{human, Device, Finding, FindingCode, Severity, TablePhase, MIB};

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

/// One GPU's growth from the plan to the exit table.
struct Growth {
    device: Device,
    compute: Option<(i64, i64)>,
    outside: Option<(i64, i64)>,
    exit_free: Option<i64>,
    line: u64,
}

impl Growth {
    fn compute_growth(&self) -> i64 {
        self.compute
            .map(|(plan, exit)| exit - plan)
            .filter(|&g| g > TWO_FIGURES)
            .unwrap_or(0)
    }

    fn outside_growth(&self) -> i64 {
        self.outside
            .map(|(before, exit)| exit - before)
            .filter(|&g| g > THREE_FIGURES)
            .unwrap_or(0)
    }
}

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    // Only llama.cpp prints a plan and an exit table of the same load.
    if !load.runtime.llama_cpp_places_layers() {
        return;
    }
    let has_plan = load
        .lifecycle
        .tables
        .iter()
        .any(|t| t.phase == TablePhase::Plan);
    let Some(e) = load.estimate.as_ref().filter(|e| e.from_llama_cpp()) else {
        return;
    };
    let fit = e.fit.as_ref();
    if !has_plan && fit.is_none_or(|f| f.free.is_empty()) {
        return;
    }
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
        .map(|r| {
            let plan = e.per_device.iter().find(|d| d.device == r.device);
            let before = fit
                .and_then(|f| f.free.iter().find(|d| d.device == r.device))
                .zip(r.total)
                .map(|(free, total)| total.low - free.free.low);
            Growth {
                device: r.device.clone(),
                compute: plan.and_then(|p| p.graph).map(|g| (g.low, r.compute.low)),
                outside: before.zip(r.unaccounted.filter(|u| *u >= 0)),
                exit_free: r.free.map(|f| f.low),
                line: r.line,
            }
        })
        .filter(|g| g.compute_growth() + g.outside_growth() >= FLOOR)
        .collect();
    if growths.is_empty() {
        return;
    }
    let mut lines: Vec<u64> = growths.iter().map(|g| g.line).collect();
    lines.push(exit_line);
    lines.extend(fit.map(|f| f.lines.clone()).unwrap_or_default());
    lines.extend(
        load.lifecycle
            .tables
            .iter()
            .filter(|t| t.phase == TablePhase::Plan)
            .map(|t| t.line),
    );
    let target = fit.and_then(|f| f.target).map(|t| t.low);
    let below_margin = growths
        .iter()
        .any(|g| matches!((g.exit_free, target), (Some(free), Some(t)) if free < t));
    let parts: Vec<String> = growths
        .iter()
        .map(|g| {
            let mut what = Vec::new();
            if let (Some((plan, exit)), true) = (g.compute, g.compute_growth() > 0) {
                what.push(format!(
                    "compute {} at load → {} at exit (+{})",
                    human(plan),
                    human(exit),
                    human(exit - plan)
                ));
            }
            if let (Some((before, exit)), true) = (g.outside, g.outside_growth() > 0) {
                what.push(format!(
                    "{} outside llama.cpp's accounting (unaccounted {} at exit, {} in use before the load as the fit saw it)",
                    human(exit - before),
                    human(exit),
                    human(before)
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
            "memory grew after the load, by the exit table against the load-time plan: {}{}",
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
