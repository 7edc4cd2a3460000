//! `overestimate`: the estimate exceeds reality by more than the threshold (default 10 % and 256 MiB), beyond
//! rounding. Memory reserved for nothing pushes layers to other GPUs or to the CPU.

use super::{finding, size, CheckDef, Context};
use crate::model::{Finding, FindingCode, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::Overestimate,
    summary: "estimated exceeds actual beyond rounding by more than the threshold (default 10 % and 256 MiB)",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    if cx.unfinished() {
        // What the log has not reached yet may hold the rest of the estimate.
        return;
    }
    for c in &cx.load.components {
        let (Some(e), Some(a)) = (c.estimated, c.actual) else {
            continue;
        };
        if !cx.clearly_over(e, a) {
            continue;
        }
        let gap = e.minus(a);
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{}: estimated {} but {} allocated, {} ({}%) reserved for nothing",
                c.component.as_str(),
                size(e),
                size(a),
                size(gap),
                gap.bytes * 100 / e.bytes.max(1)
            ),
            "the estimator's formula for this component is too high for this model/GPU; an oversized estimate splits models or offloads layers needlessly (see the replay)",
            c.lines.clone(),
            None,
            Some(c.component),
        ));
    }
}
