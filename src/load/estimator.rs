//! The lifecycle of Ollama's estimator (`llm/memory.go` in Ollama ≤ 0.2x; its line shapes are in
//! `docs/log-formats.md` §2): before it starts the runner, the scheduler prints the estimate it placed the
//! layers by (`msg=offload`, in one of the shapes `OffloadShape` names). It may print it again for the same load
//! (a retry with other GPUs): the later one is the placement used. The eviction check prints the same figures
//! for a model that would be loaded (`OffloadShape::Eviction`); that line never replaces an estimate already
//! read. A line cut by the log collector keeps what came before the cut.
//!
//! One [`EstimatorLedger`] per load; [`EstimatorLedger::push`] takes each estimate line as it is read and says
//! what the reader should know about it.

use crate::model::OffloadShape;
use crate::parse::event::EstimateLine;

/// The estimate lines of one load.
#[derive(Debug, Default, Clone)]
pub struct EstimatorLedger {
    estimate: Option<(EstimateLine, u64)>,
}

/// What a reader of the load should know about an estimate line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimateNote {
    /// The estimate was printed again: the later one is used.
    Reprinted { line: u64 },
    /// The line is cut short: figures after the cut are missing.
    Cut { line: u64 },
}

impl std::fmt::Display for EstimateNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EstimateNote::Reprinted { line } => {
                write!(
                    f,
                    "line {line}: the estimate was printed again; the later one is used"
                )
            }
            EstimateNote::Cut { line } => write!(
                f,
                "line {line}: the estimate line is cut short; figures after the cut are missing"
            ),
        }
    }
}

impl EstimatorLedger {
    /// Record an estimate line read at `line`; the notes it gives, in order.
    pub fn push(&mut self, estimate: EstimateLine, line: u64) -> Vec<EstimateNote> {
        let mut notes = Vec::new();
        let eviction = estimate.form == OffloadShape::Eviction;
        if self
            .estimate
            .as_ref()
            .is_some_and(|(old, _)| old.form != OffloadShape::Eviction)
            && !eviction
        {
            notes.push(EstimateNote::Reprinted { line });
        }
        if estimate.truncated {
            notes.push(EstimateNote::Cut { line });
        }
        if !(eviction && self.estimate.is_some()) {
            self.estimate = Some((estimate, line));
        }
        notes
    }

    /// The estimate the load was placed by, with its line.
    pub fn estimate(&self) -> Option<&(EstimateLine, u64)> {
        self.estimate.as_ref()
    }

    /// No estimate line was read.
    pub fn is_empty(&self) -> bool {
        self.estimate.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::{EstimateNote, EstimatorLedger};
    use crate::load::event_of;
    use crate::parse::event::{EstimateLine, EventKind};

    /// `sample-logs/founding-k80-gemma3-12b.log:9`: the founding case's estimate (split 1,48 over two K80 dies).
    const OFFLOAD_FOUNDING: &str = r#"time=2025-07-20T09:43:26.111+08:00 level=INFO source=server.go:175 msg=offload library=cuda layers.requested=-1 layers.model=49 layers.offload=49 layers.split=1,48 memory.available="[11.1 GiB 11.1 GiB]" memory.gpu_overhead="0 B" memory.required.full="11.9 GiB" memory.required.partial="11.9 GiB" memory.required.kv="736.0 MiB" memory.required.allocations="[3.3 GiB 8.6 GiB]" memory.weights.total="6.8 GiB" memory.weights.repeating="6.0 GiB" memory.weights.nonrepeating="787.5 MiB" memory.graph.full="1.3 GiB" memory.graph.partial="1.3 GiB" projector.weights="795.9 MiB" projector.graph="1.0 GiB""#;

    /// The estimate line as the grammar reads it.
    fn parsed(line: &str) -> EstimateLine {
        match event_of(line) {
            EventKind::Estimate(e) => *e,
            other => panic!("not an estimate: {other:?}"),
        }
    }

    #[test]
    fn a_reprinted_estimate_replaces_the_first_and_an_eviction_line_never_does() {
        let first = parsed(OFFLOAD_FOUNDING);
        let mut ledger = EstimatorLedger::default();
        assert!(ledger.is_empty());
        assert_eq!(ledger.push(first.clone(), 10), vec![]);
        assert_eq!(
            ledger.push(first.clone(), 20),
            vec![EstimateNote::Reprinted { line: 20 }]
        );
        assert_eq!(ledger.estimate().map(|(_, l)| *l), Some(20));
        let mut eviction = first;
        eviction.form = crate::model::OffloadShape::Eviction;
        assert_eq!(ledger.push(eviction, 30), vec![]);
        assert_eq!(ledger.estimate().map(|(_, l)| *l), Some(20));
        assert_eq!(
            EstimateNote::Cut { line: 7 }.to_string(),
            "line 7: the estimate line is cut short; figures after the cut are missing"
        );
    }
}
