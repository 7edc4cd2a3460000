//! The memory a server takes while it serves (`parse::serving_memory` events) folded into the load's
//! timeline ([`crate::model::ServingTimeline`]).
//!
//! Protocol, from llama.cpp's `tools/server/server-task.cpp` and `server-context.cpp` (b11549; the format
//! strings are the rules of `grammars/38-llama-server-serving.toml`): a slot's context checkpoints are counted by
//! `created context checkpoint N of M` (N is how many the slot then holds) less each one erased; each costs
//! its `size`. When a slot's prompt is saved (`saving prompt with length …, total state size = X`) the entry
//! is allocated before the cache evicts anything, so until the next `cache state` the cache holds what it held
//! plus X; evictions subtract; `cache state: N prompts, X MiB` is the cache exactly. vLLM's and SGLang's stats
//! lines give the KV fill and the requests running and waiting. The lines attach to the open load, even one
//! that has ended (a server serves after its load); none open one unless no load is open.

use super::builder::Phase;
use super::Assembler;
use crate::model::{
    CacheEntry, Count, Figure, Load, Quantity, Ratio, ServingTimeline, TimelineSample,
};
use crate::parse::serving_memory::ServingMemoryLine;

/// The most samples a timeline keeps (a followed server's, over days); the peaks are over every sample.
const MAX_SAMPLES: usize = 4096;

/// The timeline of one load being read.
#[derive(Debug, Default, Clone)]
pub struct TimelineLedger {
    timeline: ServingTimeline,
    /// Checkpoints each slot holds now: (slot, count, size of one).
    slots: Vec<(Option<i64>, i64, Quantity)>,
    /// The prompt cache now, when the log has said.
    cache: Option<Quantity>,
    kv_percent: Option<f64>,
    running: Option<i64>,
    waiting: Option<i64>,
    /// Lines of memory read (not the host's memory, not how a request went): a timeline needs one.
    memory_lines: usize,
}

impl TimelineLedger {
    /// Whether no line of memory while serving was read (the host's memory, or how a request went, alone is not
    /// a timeline).
    pub fn is_empty(&self) -> bool {
        self.memory_lines == 0
    }

    /// The host's memory at load (read before the load's own lines: see [`Assembler::serving_memory`]).
    pub fn host(&mut self, total: Option<Quantity>, free: Quantity, line: u64) {
        let limits = &mut self.timeline.limits;
        limits.host_total = total.map(|size| Figure { size, line });
        limits.host_free = Some(Figure { size: free, line });
        self.timeline.lines.push(line);
    }

    /// The host killed the server while it served (the kernel's or systemd's OOM kill, a cgroup limit).
    pub fn killed(&mut self, message: String, line: u64) {
        self.memory_lines += 1;
        self.timeline.lines.push(line);
        self.timeline
            .killed
            .get_or_insert(crate::model::TimelineEnd { message, line });
    }

    /// Read one line.
    pub fn push(&mut self, event: ServingMemoryLine, line: u64) {
        if self.timeline.lines.len() >= MAX_SAMPLES {
            self.timeline.lines.drain(..MAX_SAMPLES / 4);
        }
        self.timeline.lines.push(line);
        if !matches!(
            event,
            ServingMemoryLine::PrefillRate { .. }
                | ServingMemoryLine::RequestFailed { .. }
                | ServingMemoryLine::TaskCancelled
                | ServingMemoryLine::HostMemory { .. }
        ) {
            self.memory_lines += 1;
        }
        let limits = &mut self.timeline.limits;
        match event {
            ServingMemoryLine::CacheLimit { limit } => match limit {
                Some(size) => limits.prompt_cache = Some(Figure { size, line }),
                None => limits.prompt_cache_unlimited = true,
            },
            ServingMemoryLine::CacheState {
                prompts: _,
                size,
                limit,
                tokens,
                exceeds,
            } => {
                limits.prompt_cache = Some(Figure { size: limit, line });
                if let Some(value) = tokens {
                    limits.prompt_cache_tokens = Some(Count { value, line });
                }
                // A limit of 0 is no limit (`--cache-ram -1` prints `limits: 0.000 MiB`).
                let over = limit.bytes > 0 && size.low > limit.high;
                if (over || exceeds) && self.timeline.over_limit.is_none() {
                    self.timeline.over_limit = Some(Figure { size, line });
                }
                self.cache = Some(size);
                self.sample(line);
            }
            ServingMemoryLine::CacheEntry {
                tokens,
                checkpoints,
                size,
            } => {
                let peaks = &mut self.timeline.peaks;
                if peaks.entry.is_none_or(|e| size.bytes > e.size.bytes) {
                    peaks.entry = Some(CacheEntry {
                        size,
                        tokens,
                        checkpoints,
                        line,
                    });
                }
            }
            ServingMemoryLine::PromptSave { tokens: _, size } => {
                // Allocated before anything is evicted: the cache holds what it held and this, and the entry
                // carries the slot's checkpoints (known when one slot holds them all).
                let entry = match self.slots.as_slice() {
                    [(_, n, one)] => size.plus(one.times(*n)),
                    _ => size,
                };
                self.cache = Some(match self.cache {
                    Some(held) => held.plus(entry),
                    None => entry,
                });
                self.sample(line);
            }
            ServingMemoryLine::CacheEvict { size } => {
                if let Some(held) = self.cache {
                    self.cache = Some(held.minus(size));
                    self.sample(line);
                }
            }
            ServingMemoryLine::CacheSkip { size: _, limit } => {
                limits.prompt_cache = Some(Figure { size: limit, line });
                self.timeline.strict_limit_line.get_or_insert(line);
            }
            ServingMemoryLine::CacheAllocFailed => {
                self.timeline.alloc_failed_line.get_or_insert(line);
            }
            ServingMemoryLine::CheckpointsMax { max } => {
                limits.checkpoints_per_slot = Some(Count { value: max, line });
            }
            ServingMemoryLine::CheckpointCreated {
                slot,
                index,
                max,
                size,
            } => {
                if limits.checkpoints_per_slot.is_none() {
                    limits.checkpoints_per_slot = Some(Count { value: max, line });
                }
                let peaks = &mut self.timeline.peaks;
                if peaks
                    .checkpoint_size
                    .is_none_or(|p| size.bytes > p.size.bytes)
                {
                    peaks.checkpoint_size = Some(Figure { size, line });
                }
                match self.slots.iter_mut().find(|(s, _, _)| *s == slot) {
                    Some(held) => *held = (slot, index, size),
                    None => self.slots.push((slot, index, size)),
                }
                self.sample(line);
            }
            ServingMemoryLine::CheckpointErased { slot, size } => {
                match self.slots.iter_mut().find(|(s, _, _)| *s == slot) {
                    Some(held) => held.1 = (held.1 - 1).max(0),
                    // Erased before any was created in this excerpt: the count is unknown.
                    None => return,
                }
                let _ = size;
                self.sample(line);
            }
            ServingMemoryLine::CheckpointRestored { .. } => {}
            ServingMemoryLine::SlotContext { tokens } => {
                limits.slot_context = Some(Count {
                    value: tokens,
                    line,
                });
            }
            ServingMemoryLine::EngineStats {
                running,
                waiting,
                kv_percent,
                swa_percent,
                preemptions,
            } => {
                self.kv_percent = Some(swa_percent.map_or(kv_percent, |s| s.max(kv_percent)));
                self.running = Some(running);
                self.waiting = waiting;
                if let Some(value) = preemptions.filter(|&n| n > 0) {
                    // vLLM counts the preemptions of each logging interval (`loggers.py`'s reset).
                    self.preempted(value, line);
                }
                self.sample(line);
            }
            ServingMemoryLine::Preempted { count, retract } => {
                let before = self.timeline.preemptions.map_or(0, |c| c.value);
                let more = match (count, retract) {
                    // V0's warning counts since the start, every 50th preemption.
                    (Some(total), false) => (total - before).max(0),
                    // SGLang's retraction names the requests of this retraction.
                    (Some(n), true) => n,
                    (None, _) => 1,
                };
                self.preempted(more, line);
            }
            ServingMemoryLine::HostMemory { total, free } => {
                self.timeline.lines.pop();
                self.host(total, free, line);
            }
            ServingMemoryLine::PrefillRate { tokens_per_second } => {
                let slowest = &mut self.timeline.slowest_prefill;
                if slowest.is_none_or(|r| tokens_per_second < r.value) {
                    *slowest = Some(Ratio {
                        value: tokens_per_second,
                        line,
                    });
                }
            }
            ServingMemoryLine::RequestFailed { status, elapsed } => {
                self.timeline
                    .request_failed
                    .get_or_insert(crate::model::FailedRequest {
                        status,
                        elapsed,
                        line,
                    });
            }
            ServingMemoryLine::TaskCancelled => {
                self.timeline.cancelled_line.get_or_insert(line);
            }
        }
    }

    /// `more` requests preempted (or retracted) at `line`.
    fn preempted(&mut self, more: i64, line: u64) {
        let before = self.timeline.preemptions.map_or(0, |c| c.value);
        self.timeline.preemptions = Some(Count {
            value: before + more,
            line,
        });
    }

    /// Host RAM the slots' checkpoints hold now, when any was created.
    fn checkpoints(&self) -> Option<Quantity> {
        Quantity::sum(self.slots.iter().map(|(_, n, size)| size.times(*n)))
    }

    fn sample(&mut self, line: u64) {
        let sample = TimelineSample {
            line,
            prompt_cache: self.cache,
            checkpoints: self.checkpoints(),
            kv_percent: self.kv_percent,
            running: self.running,
            waiting: self.waiting,
        };
        let peaks = &mut self.timeline.peaks;
        raise(&mut peaks.prompt_cache, sample.prompt_cache, line);
        raise(&mut peaks.checkpoints, sample.checkpoints, line);
        if let Some(value) = sample.kv_percent {
            if peaks.kv_percent.is_none_or(|p| value > p.value) {
                peaks.kv_percent = Some(Ratio { value, line });
            }
        }
        for (peak, value) in [
            (&mut peaks.running, sample.running),
            (&mut peaks.waiting, sample.waiting),
        ] {
            if let Some(value) = value {
                if peak.is_none_or(|p| value > p.value) {
                    *peak = Some(Count { value, line });
                }
            }
        }
        let same = self
            .timeline
            .samples
            .last()
            .is_some_and(|last| TimelineSample { line, ..*last } == sample);
        if !same {
            self.timeline.samples.push(sample);
        }
    }

    /// The timeline, when any line was read.
    pub fn finish(self) -> Option<ServingTimeline> {
        (!self.is_empty()).then_some(self.timeline)
    }
}

fn raise(peak: &mut Option<Figure>, value: Option<Quantity>, line: u64) {
    if let Some(size) = value {
        if peak.is_none_or(|p| size.bytes > p.size.bytes) {
            *peak = Some(Figure { size, line });
        }
    }
}

impl Assembler {
    /// A `serving_memory` line: the open load's, even one that has ended (the server serves after its load);
    /// a new partial load only when none is open. The host's memory at load (Ollama's `system memory`, printed
    /// before the runner starts) waits for the load it precedes when the open one has started already.
    pub(super) fn serving_memory(
        &mut self,
        event: ServingMemoryLine,
        line: u64,
        done: &mut impl FnMut(Load),
    ) {
        if let ServingMemoryLine::HostMemory { total, free } = event {
            match self
                .current
                .as_mut()
                .filter(|b| b.phase < Phase::RunnerStarted)
            {
                Some(b) => b.timeline.host(total, free, line),
                None => self.pending_host_memory = Some((total, free, line)),
            }
            return;
        }
        // How a request went says nothing of memory by itself: it never opens a load.
        let request = matches!(
            event,
            ServingMemoryLine::PrefillRate { .. }
                | ServingMemoryLine::RequestFailed { .. }
                | ServingMemoryLine::TaskCancelled
        );
        if request && self.current.is_none() {
            return;
        }
        let fresh = self.current.is_none();
        let carried = if fresh {
            self.serving_carry.take()
        } else {
            None
        };
        let b = match fresh {
            false => self.current.as_mut().expect("checked above"),
            true => self.ongoing(line, done),
        };
        if let Some(timeline) = carried {
            // A followed server goes on serving after its load was reported: its timeline goes on too.
            b.timeline = timeline;
        }
        // A load's lines end where it is seen serving: the timeline's later lines are the timeline's, so a
        // followed log (which reports the load then) and the whole file give the load the same range. A load of
        // serving lines alone (an excerpt with no buffer) is those lines.
        if b.phase < Phase::Ended || b.ledger.is_empty() {
            b.touch(line);
        }
        // A request being served means the load finished; the limits llama-server prints while it loads
        // (`prompt cache is enabled`, `context checkpoints enabled`) and the engines' stats (printed between
        // SGLang's warm-up and its ready line) do not say so.
        let serves = match &event {
            ServingMemoryLine::CacheState { .. }
            | ServingMemoryLine::CacheEntry { .. }
            | ServingMemoryLine::PromptSave { .. }
            | ServingMemoryLine::CacheEvict { .. }
            | ServingMemoryLine::CacheSkip { .. }
            | ServingMemoryLine::CacheAllocFailed
            | ServingMemoryLine::CheckpointCreated { .. }
            | ServingMemoryLine::CheckpointErased { .. }
            | ServingMemoryLine::CheckpointRestored { .. }
            | ServingMemoryLine::SlotContext { .. } => true,
            // A serving engine's stats say so only outside its start (SGLang prints one between its warm-up
            // and its ready line): in a load of serving lines alone.
            ServingMemoryLine::EngineStats { .. } | ServingMemoryLine::Preempted { .. } => {
                b.serving.is_empty()
            }
            ServingMemoryLine::PrefillRate { .. }
            | ServingMemoryLine::RequestFailed { .. }
            | ServingMemoryLine::TaskCancelled => false,
            ServingMemoryLine::CacheLimit { .. }
            | ServingMemoryLine::CheckpointsMax { .. }
            | ServingMemoryLine::HostMemory { .. } => false,
        };
        if serves && b.failure.is_none() {
            b.advance(Phase::Ended);
        }
        b.timeline.push(event, line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::event_of;
    use crate::parse::event::EventKind;

    fn line(text: &str) -> ServingMemoryLine {
        match event_of(text) {
            EventKind::ServingMemory(e) => *e,
            other => panic!("not a serving_memory line: {other:?}"),
        }
    }

    /// V0's warning counts since the start (printed every 50th time); SGLang's retraction counts its own requests
    /// (the lines are the grammar's examples: `grammars/35-vllm.toml`, `36-sglang.toml`).
    #[test]
    fn preemptions_add_up_as_each_engine_counts_them() {
        let v0 = "WARNING 12-07 06:00:11 scheduler.py:1835] Sequence group 417 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51";
        let mut ledger = TimelineLedger::default();
        ledger.push(line(v0), 10);
        ledger.push(line(&v0.replace("=51", "=101")), 20);
        let t = ledger.finish().expect("a timeline");
        assert_eq!(t.preemptions.map(|c| (c.value, c.line)), Some((101, 20)));
        let retract = "[rank=TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_tokens_gained: 4096, #new_token_ratio: 0.7000 -> 0.8500";
        let mut ledger = TimelineLedger::default();
        ledger.push(line(retract), 5);
        ledger.push(
            line(&retract.replace("#retracted_reqs: 2", "#retracted_reqs: 1")),
            6,
        );
        assert_eq!(
            ledger.finish().and_then(|t| t.preemptions).map(|c| c.value),
            Some(3)
        );
    }

    /// A save is allocated before anything is evicted, and carries the one slot's checkpoints: corpus 1201's
    /// lines 34 (checkpoint 10 of 32), 57 (the save) and 59 (the cache state after it).
    #[test]
    fn a_save_holds_the_cache_plus_the_entry_until_the_next_state() {
        let mut ledger = TimelineLedger::default();
        ledger.push(line("slot create_check: id  0 | task 2648 | created context checkpoint 10 of 32 (pos_min = 40827, pos_max = 42362, n_tokens = 42363, size = 170.013 MiB)"), 34);
        ledger.push(line("srv   prompt_save:  - saving prompt with length 42513, total state size = 523.390 MiB (draft: 0.000 MiB)"), 57);
        ledger.push(line("srv        update:  - cache state: 1 prompts, 2223.517 MiB (limits: 8192.000 MiB, 262144 tokens, 262144 est)"), 59);
        let t = ledger.finish().expect("a timeline");
        let mib = |q: Quantity| q.bytes as f64 / crate::model::MIB as f64;
        let saved = t.samples.iter().find(|s| s.line == 57).expect("the save");
        assert!((mib(saved.prompt_cache.unwrap()) - (523.390 + 10.0 * 170.013)).abs() < 0.01);
        let state = t.samples.last().unwrap();
        assert_eq!(state.line, 59);
        assert!((mib(state.prompt_cache.unwrap()) - 2223.517).abs() < 0.001);
        assert!((mib(state.checkpoints.unwrap()) - 1700.13).abs() < 0.01);
        assert!(t.over_limit.is_none());
    }
}
