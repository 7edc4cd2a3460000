//! The `estimate` event kind: Ollama's single-line memory estimate in every era (E1–E8) and its
//! `estimate.`-prefixed eviction copy (`grammars/05-ollama-estimate.toml`), read by canonical key.

use super::event::{EstimateLine, EventKind};
use super::fields::{BuildError, Fields};
use super::kind::{EventSpec, Words};
use super::values::{parse_int_list, parse_size_list};
use crate::model::OffloadShape;

pub const SPECS: &[EventSpec] = &[EventSpec {
    kind: "estimate",
    // None: a line must carry some memory figure, which the builder checks.
    required: &[],
    optional: &[
        "library",
        "form",
        "layers.requested",
        "layers.model",
        "layers.offload",
        "layers.split",
        "memory.available",
        "memory.gpu_overhead",
        "memory.required.full",
        "memory.required.partial",
        "memory.required.kv",
        "memory.required.allocations",
        "memory.weights.total",
        "memory.weights.repeating",
        "memory.weights.nonrepeating",
        "memory.graph.full",
        "memory.graph.partial",
        "projector.weights",
        "projector.graph",
        "source",
        "time",
    ],
    settable: &[("form", Words::Check(|w| OffloadShape::named(w).is_some()))],
    build: |f| Ok(EventKind::Estimate(Box::new(estimate(f)?))),
}];

fn estimate(f: &Fields) -> Result<EstimateLine, BuildError> {
    let list = |name: &str| f.get(name).and_then(parse_size_list).unwrap_or_default();
    let e = EstimateLine {
        form: match f.get("form") {
            None => OffloadShape::Unnamed,
            Some(word) => OffloadShape::named(word)
                .ok_or_else(|| format!("unknown estimate form '{word}'"))?,
        },
        library: f.opt_text("library"),
        requested: f.opt_int("layers.requested"),
        model_layers: f.opt_int("layers.model"),
        offload: f.opt_int("layers.offload"),
        split: f
            .get("layers.split")
            .and_then(parse_int_list)
            .unwrap_or_default(),
        available: list("memory.available"),
        gpu_overhead: f.opt_size("memory.gpu_overhead"),
        required_full: f.opt_size("memory.required.full"),
        required_partial: f.opt_size("memory.required.partial"),
        kv: f.opt_size("memory.required.kv"),
        allocations: list("memory.required.allocations"),
        weights_total: f.opt_size("memory.weights.total"),
        weights_repeating: f.opt_size("memory.weights.repeating"),
        weights_nonrepeating: f.opt_size("memory.weights.nonrepeating"),
        graph_full: f.opt_size("memory.graph.full"),
        graph_partial: f.opt_size("memory.graph.partial"),
        projector_weights: f.opt_size("projector.weights"),
        projector_graph: f.opt_size("projector.graph"),
        truncated: false,
        source_position: f.opt_text("source"),
        logged_on: f
            .get("time")
            .and_then(|t| t.get(..10))
            .filter(|d| d.len() == 10 && d.as_bytes()[4] == b'-' && d.as_bytes()[7] == b'-')
            .map(str::to_string),
    };
    if e.required_full.is_none()
        && e.kv.is_none()
        && e.weights_total.is_none()
        && e.graph_full.is_none()
        && e.projector_weights.is_none()
        && e.available.is_empty()
    {
        return Err("estimate line carries no memory figure".to_string());
    }
    // A complete line ends with memory.graph.partial (E2–E6) or projector.graph (E7+ vision models).
    let truncated = e.graph_partial.is_none()
        || (f.get("projector.weights").is_some() && e.projector_graph.is_none());
    Ok(EstimateLine { truncated, ..e })
}
