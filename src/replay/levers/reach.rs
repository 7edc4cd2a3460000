//! Whether a `whatif` lever reaches the load's runtime. A lever that does nothing there would replay a change
//! the user cannot make (`docs/findings.md` calls a knob that does nothing a wrong answer), so `whatif` refuses
//! it instead, by the same table the suggestions name their settings from (`src/model/knobs.rs`): `--ubatch` is
//! llama.cpp's `-ub` (Ollama ≥ 0.30's `num_batch`, which it passes as `-b` and `-ub`; its estimator passes no
//! micro-batch); `--ngl` is `-ngl`, Ollama's `num_gpu`.

use super::super::figures::Changes;
use crate::model::knobs::{reaching, table, Reach};
use crate::model::{Knob, Reconciled};

/// The one-line error for the first lever in `changes` that does not reach `load`'s runtime (`load` is its
/// number in the input, from 1), or `None` when every lever asked for reaches it.
pub fn refusal(load: &Reconciled, number: usize, changes: &Changes) -> Option<String> {
    let runtime = load.load.runtime;
    let asked = [
        ("--ubatch", changes.ubatch.is_some(), Knob::Ubatch),
        ("--ngl", changes.gpu_layers.is_some(), Knob::GpuLayers),
    ];
    let (flag, _, knob) = asked
        .into_iter()
        .find(|&(_, set, knob)| set && reaching(runtime, knob).is_none())?;
    let why = table(runtime)
        .iter()
        .find(|e| e.knob == knob)
        .and_then(|e| match e.reach {
            Reach::Ignored(why) => Some(why.to_string()),
            Reach::Placer(_) => None,
        })
        .unwrap_or_else(|| match (knob, runtime.name()) {
            (Knob::Ubatch, name) if name.starts_with("Ollama") => {
                "Ollama's estimator passes no micro-batch (-ub) to its runner".to_string()
            }
            (_, name) => format!("{name} has no such setting"),
        });
    let s = &load.load.source;
    Some(format!(
        "whatif {flag} ({}) does not reach the placement of load {number} ({}:{}, {}): {why}; drop {flag}",
        knob.purpose(),
        s.path,
        s.first_line,
        runtime.name()
    ))
}
