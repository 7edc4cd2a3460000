//! `graph-charged-per-gpu`: the estimator adds the whole compute graph to every GPU that holds a layer, while
//! the runner's compute buffer on a lightly loaded GPU is a fraction of it.

use super::{finding, size, CheckDef, Context};
use crate::model::{Cell, Component, Device, Finding, FindingCode, Part, Quantity, Severity};
use crate::reconcile::terms::is_single_line;

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::GraphChargedPerGpu,
    summary: "the graph estimate is charged to every GPU holding a layer; a lightly loaded GPU allocates far less",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = load.load.estimate.as_ref().filter(|e| is_single_line(e)) else {
        return;
    };
    let Some(graph) = e.graph_full.or(e.graph_partial) else {
        return;
    };
    if e.layers.split.iter().filter(|&&n| n > 0).count() < 2 {
        return;
    }
    let library = e.library.as_deref().unwrap_or("cuda");
    for (i, &layers) in e.layers.split.iter().enumerate() {
        if layers == 0 {
            continue;
        }
        let device = Device::for_library(library, i);
        let Some(&Cell {
            size: actual,
            ref lines,
        }) = cx.gpu_buffers(&device, Part::Graph)
        else {
            continue;
        };
        // The graph the estimator build named by the replay charged this GPU (the ollama37 fork of 2025-10-29
        // charges every GPU but the last a fixed 190 MiB), else the logged one.
        let charged = cx
            .whatif
            .and_then(|w| w.charges.as_ref())
            .and_then(|c| c.graph.iter().find(|(d, _)| *d == device))
            .map(|(_, g)| *g);
        let graph = match charged {
            Some(g) if g != graph.bytes => Quantity::exact(g),
            _ => graph,
        };
        // Half the charged graph, and beyond the threshold: the charge is clearly not what this GPU needs.
        if actual.high * 2 > graph.low || graph.low - actual.high <= cx.config.over_bytes {
            continue;
        }
        let mut all_lines = cx.estimate_lines();
        all_lines.extend(lines.iter().copied());
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "the compute graph estimate ({}) is charged to {device}, which holds {layers} layer{} and allocated {} of compute buffers",
                size(graph),
                if layers == 1 { "" } else { "s" },
                size(actual)
            ),
            "the estimator pays the full graph on every GPU used; pinning the model to one GPU (CUDA_VISIBLE_DEVICES) avoids paying it twice",
            all_lines,
            Some(&device),
            Some(Component::Graph),
        ));
    }
}
