//! The lifecycle of a load under Ollama's Go engine with its own memory management (Ollama 0.11.5 – 0.2x):
//! the scheduler sends the runner `load request`s. A `fit` sizes a layout without allocating it, an `alloc`
//! allocates it (and may fail, after which the scheduler tries a layout with fewer layers on the GPUs), a
//! `commit` loads the weights into the layout that was allocated. The commit is the placement that was used;
//! before it, the memory summary lines are what the engine measured, after it what it allocated. The line is
//! described in `docs/log-formats.md` §3.
//!
//! One [`RequestLedger`] per load; [`RequestLedger::push`] takes each request as it is read.

use crate::parse::event::{LoadRequest, RequestOperation};

/// The load requests of one load, in order.
#[derive(Debug, Default, Clone)]
pub struct RequestLedger {
    requests: Vec<(LoadRequest, u64)>,
}

impl RequestLedger {
    /// Record a request and the line it was read from.
    pub fn push(&mut self, request: LoadRequest, line: u64) {
        self.requests.push((request, line));
    }

    /// No request was seen: the engine did not manage this load's memory (or the log does not show it).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// A `commit` was seen: what follows is what was allocated.
    pub fn committed(&self) -> bool {
        self.requests
            .iter()
            .any(|(r, _)| r.operation == RequestOperation::Commit)
    }

    /// The request whose settings the load ran with: the last commit, else the last request of any kind.
    pub fn decisive(&self) -> Option<&LoadRequest> {
        self.requests
            .iter()
            .rev()
            .find(|(r, _)| r.operation == RequestOperation::Commit)
            .or_else(|| self.requests.last())
            .map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::RequestLedger;
    use crate::load::{event_of, loads_of};
    use crate::parse::event::{EventKind, LoadRequest};

    /// `sample-logs/032-journald-catalan-2x-quadro-newengine-fit.log:7`: a `fit` request, the line cut inside
    /// `GPULayers` by the journal.
    const FIT_032: &str = r#"de des. 03 11:10:07 PC127 ollama[43993]: time=2025-12-03T11:10:07.729+01:00 level=INFO source=runner.go:1271 msg=load request="{Operation:fit LoraPath:[] Parallel:1 BatchSize:512 FlashAttention:true KvSize:4096 KvCacheType: NumThreads:8 GPULayers:37[ID:GPU-d5703024-26e4-303b-8104-7d33cce0eeb1 Layers:20(0..19) ID:"#;

    /// `sample-logs/009-linux-cuda-qwen3-coder-next-partial-kvf16-newengine.log:1` (ollama#15390): a commit.
    const COMMIT_009: &str = r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}""#;

    #[test]
    fn a_commit_is_the_request_the_load_ran_with() {
        let mut ledger = RequestLedger::default();
        assert!(ledger.is_empty() && ledger.decisive().is_none());
        let fit = parsed(FIT_032);
        ledger.push(fit.clone(), 7);
        assert!(!ledger.committed());
        assert_eq!(ledger.decisive(), Some(&fit));
        let commit = parsed(COMMIT_009);
        ledger.push(commit.clone(), 9);
        ledger.push(fit, 10);
        assert!(ledger.committed());
        assert_eq!(ledger.decisive().and_then(|r| r.kv_size), Some(32768));
    }

    /// The request as the grammar reads it from the real line.
    fn parsed(line: &str) -> LoadRequest {
        match event_of(line) {
            EventKind::LoadRequest(r) => *r,
            other => panic!("not a load request: {other:?}"),
        }
    }

    #[test]
    fn the_assembled_load_reads_its_settings_from_the_commit() {
        let loads = loads_of(&[FIT_032, COMMIT_009]);
        assert_eq!(loads[0].settings.batch_size, Some(1024));
    }
}
