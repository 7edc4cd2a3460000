//! `projector-double-counted`: the estimate charges the vision projector (its graph, its weights) on top of
//! buffers that already contain it, or on a GPU where it does not run.

use super::{finding, size, CheckDef, Context};
use crate::model::{Component, Device, Engine, Finding, FindingCode, Part, Quantity, Severity};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::ProjectorDoubleCounted,
    summary:
        "the estimate charges the vision projector where reality shows it inside other buffers",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    ollama_engine_graph(cx, out);
    llama_engine_weights_on_host(cx, out);
}

/// The llama engine charges the projector's weights to the first GPU; the clip buffers say where they went.
fn llama_engine_weights_on_host(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = &load.load.estimate else { return };
    let Some(weights) = e.projector_weights.filter(|w| w.bytes > 0) else {
        return;
    };
    // Every clip buffer in host memory: none on a GPU.
    let Some(on_host) = load.grid.on(&Device::Host, &[Part::Projector]) else {
        return;
    };
    if load.load.engine != Engine::Llama || load.grid.gpus_total(&[Part::Projector]).is_some() {
        return;
    }
    let mut lines = cx.estimate_lines();
    lines.extend(on_host.lines);
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "the estimate charges the projector's weights ({}) to the first GPU, but the runner loaded the projector in host memory ({})",
            size(weights),
            size(on_host.size)
        ),
        "the projector ran on the CPU: its GPU charge only took room from layers",
        lines,
        None,
        Some(Component::Projector),
    ));
}

fn ollama_engine_graph(cx: &Context, out: &mut Vec<Finding>) {
    let load = cx.load;
    let Some(e) = &load.load.estimate else { return };
    let Some(projector_graph) = e.projector_graph.filter(|g| g.bytes > 0) else {
        return;
    };
    // The Ollama engine runs the vision graph inside its compute buffers (no separate clip buffers).
    let separate = cx
        .component(Component::Projector)
        .is_some_and(|r| r.actual.is_some());
    if load.load.engine != Engine::Ollama || separate {
        return;
    }
    let Some(graph) = cx.component(Component::Graph) else {
        return;
    };
    let (Some(estimated), Some(actual)) = (graph.estimated, graph.actual) else {
        return;
    };
    let without_projector = estimated.minus(projector_graph);
    // Reality fits inside the estimate's text-model graph alone: the projector's graph was extra.
    if actual.high > without_projector.low {
        return;
    }
    let gpus = e.layers.split.iter().filter(|&&n| n > 0).count().max(1);
    let per_gpu = e.graph_full.unwrap_or(Quantity::exact(0));
    // The graph as the estimator build named by the replay charged it, GPU by GPU, when that is not the logged
    // figure on every GPU.
    let charged = cx
        .whatif
        .and_then(|w| w.charges.as_ref())
        .filter(|c| c.graph.iter().any(|(_, g)| *g != per_gpu.bytes));
    let compute = match charged {
        Some(c) => c
            .graph
            .iter()
            .map(|(d, g)| format!("{} on {d}", crate::model::human(*g)))
            .collect::<Vec<_>>()
            .join(" + "),
        None => format!(
            "{} × {gpus} GPU{}",
            size(per_gpu),
            if gpus == 1 { "" } else { "s" }
        ),
    };
    out.push(finding(
        DEF.code,
        Severity::Warning,
        format!(
            "the estimate adds the vision projector's graph ({}) on top of the compute graph ({compute}), but all compute buffers together are {}: the projector runs inside them",
            size(projector_graph),
            size(actual)
        ),
        "the Ollama engine's vision graph shares the compute buffers; the estimate counts it twice (upstream estimator, llm/memory.go \"last layer\")",
        graph.lines.clone(),
        None,
        Some(Component::Projector),
    ));
}
