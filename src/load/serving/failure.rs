//! How a vLLM or SGLang start failed: the failure lines of both engines and torch (`docs/log-formats.md` §8)
//! as a [`StartFailure`] of the ledger, the most specific one kept, and the words `load-failed` gives it.
//! Why a file of its own: both engines fail through the same lines (torch's out-of-memory, a Python traceback)
//! and the same causes, and the words must not differ between them.

use super::{set, ServingLedger};
use crate::model::{Quantity, StartFailure};
use crate::parse::serving::{FailureWording, ServingFailure, TorchOom};

impl ServingLedger {
    /// A failure line: the engine it names (torch's messages and a traceback name none), its figures on the
    /// rank it names, and the cause it gives.
    pub(super) fn failure_line(
        &mut self,
        rank: Option<&str>,
        failure: ServingFailure,
        wording: Option<FailureWording>,
        line: u64,
    ) {
        // A line in an engine's own words names it; torch's messages and a traceback do not.
        match wording {
            Some(FailureWording::Vllm) => self.vllm = true,
            Some(FailureWording::Sglang) => self.sglang = true,
            None => {}
        }
        let cause = match failure {
            ServingFailure::NoCacheMemory => StartFailure::NoKvMemory,
            ServingFailure::MaxLenOverKv {
                len,
                tokens,
                needed,
                available,
            } => {
                // The KV memory the failure names is the rank's KV cache, when no line gave it before.
                if available.is_some() {
                    let r = self.rank(rank, line);
                    if r.kv.is_none() {
                        set(&mut r.kv, available, line);
                    }
                }
                StartFailure::MaxLenOverKv {
                    len,
                    tokens,
                    needed,
                    available,
                }
            }
            ServingFailure::FreeBelowBudget {
                free,
                total,
                utilization,
                budget,
            } => {
                if self.args.utilization.is_none() {
                    self.args.utilization = Some(utilization);
                    self.args_line = line;
                }
                let r = self.rank(rank, line);
                set(&mut r.free_at_start, Some(free), line);
                set(&mut r.total, Some(total), line);
                set(&mut r.budget, Some(budget), line);
                StartFailure::FreeBelowBudget
            }
            ServingFailure::OutOfMemory(oom) => {
                let during_capture = match self.known_rank(rank, line) {
                    Some(r) => {
                        if r.total.is_none() {
                            set(&mut r.total, oom.total, line);
                        }
                        r.capture_began.is_some() && r.graph_actual.is_none()
                    }
                    None => false,
                };
                StartFailure::OutOfMemory {
                    tried: oom.tried,
                    total: oom.total,
                    free: oom.free,
                    allocated: oom.allocated,
                    reserved: oom.reserved,
                    during_capture,
                    others: other_processes(&oom),
                }
            }
            ServingFailure::EngineFailed => StartFailure::EngineFailed,
            ServingFailure::Crashed => {
                // The rank that crashed is a rank of the load (its traceback line is one of its lines).
                if rank.is_some() {
                    self.rank(rank, line);
                }
                StartFailure::Crashed
            }
        };
        self.fail(cause, line);
        if self.failure.is_some_and(|(_, at)| at == line) {
            self.failure_rank = rank.map(str::to_string);
        }
    }

    pub(super) fn fail(&mut self, cause: StartFailure, line: u64) {
        // The specific cause stays: a traceback only says a rank crashed (its last line may say why), and
        // `EngineCore failed to start` only that the engine gave up.
        let weight = |c: &StartFailure| match c {
            StartFailure::EngineFailed => 0,
            StartFailure::Crashed => 1,
            StartFailure::NoKvMemory
            | StartFailure::MaxLenOverKv { .. }
            | StartFailure::FreeBelowBudget
            | StartFailure::OutOfMemory { .. } => 2,
        };
        match &self.failure {
            Some((c, _)) if weight(c) >= weight(&cause) => {}
            _ => self.failure = Some((cause, line)),
        }
    }

    /// Whether the start's failure says why (anything but `EngineCore failed to start` alone).
    pub fn failure_says_why(&self) -> bool {
        !matches!(self.failure, Some((StartFailure::EngineFailed, _)))
    }

    /// The failure the start ended with, in words, and whether it is an allocation failure.
    pub fn failure_message(&self) -> Option<(String, bool, u64)> {
        let (cause, line) = self.failure?;
        let words = match cause {
            StartFailure::NoKvMemory => {
                "no memory left for the KV cache after the weights and the profiled peaks".to_string()
            }
            StartFailure::MaxLenOverKv {
                len,
                tokens,
                needed: Some(needed),
                available: Some(available),
            } => format!(
                "one request of the max model length ({len} tokens) needs {} of KV cache, more than the {} available; the engine's estimated maximum model length is {tokens}",
                crate::model::human(needed.bytes),
                crate::model::human(available.bytes)
            ),
            StartFailure::MaxLenOverKv { len, tokens, .. } => format!(
                "the max model length ({len} tokens) is larger than the KV cache holds ({tokens} tokens)"
            ),
            StartFailure::FreeBelowBudget => {
                "free memory at startup is below total × utilization (another process holds memory)"
                    .to_string()
            }
            StartFailure::OutOfMemory {
                tried,
                total,
                free,
                allocated,
                reserved,
                during_capture,
                others,
            } => {
                let gib = |q: Quantity| crate::model::human(q.bytes);
                let mut words = "out of memory".to_string();
                if during_capture {
                    words.push_str(" while capturing CUDA graphs");
                }
                if let Some(t) = tried {
                    words.push_str(&format!(": tried to allocate {}", gib(t)));
                }
                if let (Some(f), Some(t)) = (free, total) {
                    words.push_str(&format!(" with {} free of {}", gib(f), gib(t)));
                }
                if let (Some(a), Some(r)) = (allocated, reserved) {
                    words.push_str(&format!(
                        " (PyTorch: {} allocated, {} reserved but unallocated",
                        gib(a),
                        gib(r)
                    ));
                    match (total, free) {
                        (Some(t), Some(f)) => {
                            let outside = t.minus(f).minus(a).minus(r);
                            words.push_str(&format!(
                                "; {} outside this process's allocator)",
                                gib(outside)
                            ));
                        }
                        _ => words.push(')'),
                    }
                }
                if let Some(o) = others {
                    words.push_str(&format!(
                        "; other processes held {} of the GPU",
                        gib(o)
                    ));
                }
                words
            }
            StartFailure::Crashed => match &self.failure_rank {
                Some(rank) => format!("rank {rank} crashed (Python traceback)"),
                None => "a rank crashed (Python traceback)".to_string(),
            },
            StartFailure::EngineFailed => "the engine failed to start".to_string(),
        };
        let oom = matches!(
            cause,
            StartFailure::NoKvMemory
                | StartFailure::OutOfMemory { .. }
                | StartFailure::FreeBelowBudget
        );
        Some((words, oom, line))
    }
}

/// The memory torch's message gives other processes. torch names this process `this process` when NVML's
/// pid is its own; in a container NVML gives host pids, so this process is one of the `Process P` entries:
/// the largest that holds at least what PyTorch itself allocated and reserved is taken for it, and an entry
/// smaller than that cannot be it. Without PyTorch's own figures nothing is claimed.
fn other_processes(oom: &TorchOom) -> Option<Quantity> {
    let p = oom.processes;
    let sum = p.sum?;
    let others = if oom.this_process.is_some() {
        sum
    } else {
        let own = oom.allocated?.plus(oom.reserved?);
        match p.largest {
            Some(largest) if largest.high >= own.low => sum.minus(largest),
            Some(_) | None => sum,
        }
    };
    (others.bytes > 0).then_some(others)
}
