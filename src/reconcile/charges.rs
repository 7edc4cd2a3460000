//! A second look at a load once the placement replay has named the estimator build that printed it: some
//! builds (the ollama37 fork of 2025-10-29) charge every GPU but the last a fixed 190 MiB graph instead of the
//! logged one, so the graph row and each device's graph part are re-read with what that build charged.
//! Called by the pipeline after the replay, with the replay's charges (`model::EstimatorCharges`).

use crate::model::{
    human, Comparison, Component, EstimatePart, EstimatorCharges, Quantity, Reconciled,
};

/// Re-read the graph row and the device rows' graph parts with the graph each GPU was really charged, and move
/// the last-layer bucket's weights to the GPU the runner ran the output on.
pub fn apply_estimator_charges(load: &mut Reconciled, charges: &EstimatorCharges) {
    regraph(load, charges);
    move_bucket(load, charges);
}

/// The estimator booked its last-layer bucket (output, and the Ollama engine's projector weights and graph) on
/// one GPU; the runner, reading the split as shares from blk.0, ran the output and the vision tensors on
/// another. The bucket's weights (output + projector weights) move to the runner's GPU so each device row
/// compares the estimate of what it ran with what it allocated; the projector's graph stays where it was booked
/// (the runner's compute buffers hold no separate vision graph).
fn move_bucket(load: &mut Reconciled, charges: &EstimatorCharges) {
    let (Some(m), Some(e)) = (&charges.bucket_moved, load.load.estimate.as_ref()) else {
        return;
    };
    let Some(output) = e.weights_nonrepeating else {
        return;
    };
    let mut moved = output;
    let mut words = "the output".to_string();
    if load.load.engine == crate::model::Engine::Ollama {
        if let Some(p) = e.projector_weights.filter(|p| p.bytes > 0) {
            moved = moved.plus(p);
            words = "the output and the projector weights".to_string();
        }
    }
    for row in &mut load.devices {
        let (estimated, note, sign) = if row.device == m.booked_on {
            let Some(est) = row.comparison.estimated else {
                continue;
            };
            (
                est.minus(moved),
                format!(
                    " − {} ({words}, booked here by the estimator's last-layer bucket; the runner ran them on {})",
                    human(moved.bytes),
                    m.runs_on
                ),
                -1,
            )
        } else if row.device == m.runs_on {
            let Some(est) = row.comparison.estimated else {
                continue;
            };
            (
                est.plus(moved),
                format!(
                    " + {} ({words}: the runner reads the split from blk.0 and runs them here; the estimator booked them on {})",
                    human(moved.bytes),
                    m.booked_on
                ),
                1,
            )
        } else {
            continue;
        };
        let c = &row.comparison;
        row.comparison = Comparison::new(
            (Some(estimated), format!("{}{note}", c.estimated_from)),
            (c.actual, c.actual_from.clone()),
            c.lines.clone(),
        );
        for (part, bytes) in &mut row.estimated_parts {
            if *part == EstimatePart::Layers {
                *bytes = bytes.saturating_add(sign * moved.bytes).max(0);
            }
        }
    }
    // The observed rows carry the device row's estimate ("as in the device row"): the same figure there.
    for obs in &mut load.observed {
        if let Some(row) = load.devices.iter().find(|r| r.device == obs.device) {
            obs.estimated = row.comparison.estimated;
        }
    }
}

fn regraph(load: &mut Reconciled, charges: &EstimatorCharges) {
    let Some(e) = load.load.estimate.as_ref() else {
        return;
    };
    let fully = match (e.layers.offload, e.layers.model) {
        (Some(o), Some(m)) => o >= m,
        _ => true,
    };
    let (logged, name) = if fully {
        (e.graph_full, "memory.graph.full")
    } else {
        (e.graph_partial, "memory.graph.partial")
    };
    let Some(logged) = logged else { return };
    if charges.graph.iter().all(|(_, g)| *g == logged.bytes) {
        return;
    }
    let mut value = Quantity::exact(0);
    let mut words = Vec::new();
    for (device, g) in &charges.graph {
        if *g == logged.bytes {
            value = value.plus(logged);
            words.push(format!("{name} on {device}"));
        } else {
            value = value.plus(Quantity::exact(*g));
            words.push(format!("{} on {device}", human(*g)));
        }
    }
    let mut from = format!(
        "{} (as {} charges the graph)",
        words.join(" + "),
        charges.family
    );
    if load.load.engine == crate::model::Engine::Ollama && fully {
        if let Some(p) = e.projector_graph {
            value = value.plus(p);
            from.push_str(" + projector.graph (charged with the output layer)");
        }
    }
    if let Some(row) = load
        .components
        .iter_mut()
        .find(|r| r.component == Component::Graph)
    {
        let c = &row.comparison;
        row.comparison = Comparison::new(
            (Some(value), from),
            (c.actual, c.actual_from.clone()),
            c.lines.clone(),
        );
    }
    for row in &mut load.devices {
        let Some(charged) = charges
            .graph
            .iter()
            .find(|(d, _)| *d == row.device)
            .map(|(_, g)| *g)
        else {
            continue;
        };
        let old = row
            .estimated_parts
            .iter()
            .find(|(p, _)| *p == EstimatePart::Graph)
            .map(|(_, b)| *b);
        let Some(old) = old else { continue };
        let moved = old - charged;
        for (part, bytes) in &mut row.estimated_parts {
            match part {
                EstimatePart::Graph => *bytes = charged,
                EstimatePart::Layers => *bytes = bytes.saturating_add(moved),
                EstimatePart::Weights | EstimatePart::Kv | EstimatePart::Floor => {}
            }
        }
    }
}
