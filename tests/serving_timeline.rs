//! After the load (issue 54): the memory a server takes while it serves, read from the real logs
//! `sample-logs/1201`–`1206` (provenance in `sample-logs/README.md`, figures as the corpus notes give them
//! as a maintainer read them): the prompt cache's host RAM, context checkpoints, the limits printed, the entry
//! kept over its limit and the host's OOM kill that ends serving.

use crate::serving::loads;
use vramdiff::model::{FindingCode, Quantity, ServingTimeline, Severity, MIB};

fn timeline(prefix: &str) -> ServingTimeline {
    let loads = loads(prefix);
    assert_eq!(loads.len(), 1, "{prefix}");
    loads[0]
        .reconciled
        .load
        .timeline
        .clone()
        .expect("a serving timeline")
}

/// A `%.3f MiB` figure as llama-server prints it, in bytes.
fn mib3(x: f64) -> i64 {
    (x * MIB as f64).round() as i64
}

fn near(q: Quantity, mib: f64) -> bool {
    (q.bytes - mib3(mib)).abs() <= MIB / 100
}

#[test]
fn checkpoints_grow_per_slot_and_travel_into_the_cache_entry() {
    let t = timeline("1201-");
    // `of 32`, and 10 checkpoints of 170.013 MiB held by slot 0 at line 34.
    assert_eq!(t.limits.checkpoints_per_slot.map(|c| c.value), Some(32));
    let peak = t.peaks.checkpoints.expect("checkpoint peak");
    assert!(near(peak.size, 1700.13), "{peak:?}");
    assert_eq!(peak.line, 34);
    // The saved prompt is its 523.390 MiB state plus the 10 checkpoints: the 2223.517 MiB entry.
    let entry = t.peaks.entry.expect("entry");
    assert!(near(entry.size, 2223.517));
    assert_eq!(
        (entry.tokens, entry.checkpoints, entry.line),
        (42513, 10, 60)
    );
    let cache = t.peaks.prompt_cache.expect("cache peak");
    assert!(near(cache.size, 2223.52), "{cache:?}");
    assert!(near(t.limits.prompt_cache.expect("limit").size, 8192.0));
    assert_eq!(t.limits.prompt_cache_tokens.map(|c| c.value), Some(262144));
    assert!(t.over_limit.is_none() && t.killed.is_none());
    // Five erased after the restore, then the sixth created: 6 × 170.013 MiB at the end.
    let last = t.samples.last().expect("samples");
    assert_eq!(last.line, 81);
    assert!(near(last.checkpoints.expect("checkpoints"), 6.0 * 170.013));
}

#[test]
fn one_entry_kept_over_the_cap_is_read_as_over_limit() {
    let t = timeline("1202-");
    assert!(near(t.limits.prompt_cache.expect("limit").size, 703.155));
    let over = t.over_limit.expect("over the limit");
    assert!(near(over.size, 704.894));
    assert_eq!(over.line, 21);
    let t = timeline("1205-");
    let over = t.over_limit.expect("⚠ exceeds limit");
    assert!(near(over.size, 2460.007));
    assert!(near(t.limits.prompt_cache.expect("limit").size, 1200.0));
    let entry = t.peaks.entry.expect("entry without an address");
    assert_eq!((entry.tokens, entry.checkpoints), (10177, 0));
}

#[test]
fn a_cache_far_below_its_limit_is_not_over_it() {
    let t = timeline("1203-");
    assert!(t.over_limit.is_none());
    assert_eq!(t.limits.slot_context.map(|c| c.value), Some(4096));
    // 1387.245 MiB held, then a 52.599 MiB save on top before the next state (1151.397 MiB).
    let peak = t.peaks.prompt_cache.expect("peak");
    assert!(near(peak.size, 1387.245 + 52.599), "{peak:?}");
    let states: Vec<f64> = t
        .samples
        .iter()
        .filter_map(|s| s.prompt_cache)
        .map(|q| q.bytes as f64 / MIB as f64)
        .collect();
    assert!(
        states.iter().any(|&m| (m - 1151.397).abs() < 0.01),
        "{states:?}"
    );
}

#[test]
fn the_oom_kill_after_a_save_ends_serving() {
    let t = timeline("1206-");
    let save = t.peaks.prompt_cache.expect("the save");
    assert!(near(save.size, 3462.850));
    assert_eq!(save.line, 4);
    let killed = t.killed.expect("killed");
    assert_eq!(killed.line, 6);
    assert!(killed.message.contains("OOM killer"));
}

fn concluded(prefix: &str) -> vramdiff::model::Concluded {
    loads(prefix).remove(0)
}

fn codes(l: &vramdiff::model::Concluded) -> Vec<FindingCode> {
    l.findings.iter().map(|f| f.code).collect()
}

fn finding(l: &vramdiff::model::Concluded, code: FindingCode) -> &vramdiff::model::Finding {
    l.findings
        .iter()
        .find(|f| f.code == code)
        .unwrap_or_else(|| panic!("no {code}: {:?}", codes(l)))
}

fn settings(l: &vramdiff::model::Concluded) -> Vec<String> {
    l.suggestions.iter().map(|s| s.setting.clone()).collect()
}

#[test]
fn growth_within_its_limits_is_no_finding() {
    // 1203's cache (1387 MiB of 8192) is within its limit too: its only other finding is the client timeout.
    let l = concluded("1201-");
    assert_eq!(codes(&l), vec![FindingCode::IncompleteLoad]);
    assert_eq!(l.findings[0].severity, Severity::Info);
    assert!(l.suggestions.is_empty());
}

#[test]
fn an_entry_with_checkpoints_over_the_cap_gets_fewer_checkpoints() {
    // 1202: 704.894 MiB kept against 703.155 MiB: 1.7 MiB over, information; the entry is 405.642 MiB of
    // state plus 2 checkpoints of 149.626 MiB, so one checkpoint per slot gives 555.268 MiB.
    let l = concluded("1202-");
    let f = finding(&l, FindingCode::PromptCacheOverLimit);
    assert_eq!(f.severity, Severity::Info);
    assert!(f.hint.contains("--ctx-checkpoints"), "{}", f.hint);
    assert!(!f.hint.contains("--cache-ram 0"), "{}", f.hint);
    assert_eq!(settings(&l), vec!["--ctx-checkpoints 1 (if Ollama ≥ 0.30 started llama-server: LLAMA_ARG_CTX_CHECKPOINTS=1)".to_string()]);
    assert!(l.suggestions[0].effect.contains("555.3 MiB"));
}

#[test]
fn a_state_alone_over_the_cap_gets_no_prompt_cache_never_checkpoints() {
    // 1205: one 2460.007 MiB entry with 0 checkpoints against 1200 MiB (`⚠ exceeds limit`).
    let l = concluded("1205-");
    let f = finding(&l, FindingCode::PromptCacheOverLimit);
    assert_eq!(f.severity, Severity::Warning);
    assert!(!f.hint.contains("--ctx-checkpoints"), "{}", f.hint);
    assert_eq!(settings(&l), vec!["--cache-ram 0".to_string()]);
}

#[test]
fn a_kill_after_the_cache_grew_is_host_memory_not_a_failed_load() {
    let l = concluded("1206-");
    assert_eq!(
        codes(&l),
        vec![FindingCode::ServingHostMemory, FindingCode::IncompleteLoad]
    );
    let f = &l.findings[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.lines, vec![4, 6]);
    assert!(f.message.contains("3.38 GiB"), "{}", f.message);
    assert_eq!(
        settings(&l),
        vec![
            "--cache-ram 0 (if Ollama ≥ 0.30 started llama-server: LLAMA_ARG_CACHE_RAM=0)"
                .to_string()
        ]
    );
}

#[test]
fn a_500_after_a_slow_prefill_is_a_client_timeout_not_memory() {
    // 1203: `[GIN] … | 500 | 1m0s |` (line 130), `srv stop: cancel task` (line 131), the prompt processed at
    // 29.02 then 26.43 tokens per second (lines 111, 115); the prompt cache is far below its limit.
    let l = concluded("1203-");
    assert_eq!(
        codes(&l),
        vec![FindingCode::ClientTimeout, FindingCode::IncompleteLoad]
    );
    let f = &l.findings[0];
    assert_eq!(f.lines, vec![115, 130, 131]);
    assert!(
        f.message.contains("26.43 tokens per second"),
        "{}",
        f.message
    );
    assert!(f.message.contains("not a failure of memory"));
    assert!(l.suggestions.is_empty());
    let t = l.reconciled.load.timeline.as_ref().unwrap();
    let failed = t.request_failed.as_ref().unwrap();
    assert_eq!((failed.status, failed.elapsed.as_str()), (500, "1m0s"));
}

/// The real start of sample 804 (vLLM 0.10.2, TP=2) followed by stats lines in vLLM's own format
/// (`vllm/v1/metrics/loggers.py` of 0.34: `Running: %d reqs, Waiting: %d reqs, [Preemptions: %d, ]%s KV cache
/// usage: %.1f%%, Prefix cache hit rate: %.1f%%`; figures illustrative: no log of the corpus prints them).
fn vllm_serving(stats: &[&str]) -> vramdiff::model::Concluded {
    let start =
        std::fs::read_to_string(crate::util::root().join(
            "sample-logs/804-vllm-0102-2xh200-tp2-qwen3-next-80b-advisory-bytes-dup-lines.log",
        ))
        .unwrap();
    let dir = crate::util::scratch(&format!("kv-full-{}", stats.len()));
    let path = dir.join("vllm.log");
    let mut text = start;
    for s in stats {
        text.push_str("(APIServer pid=1804347) INFO 10-23 15:20:00 [loggers.py:330] Engine 000: ");
        text.push_str(s);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let mut loads = crate::util::analyze(&[&path]).loads;
    assert_eq!(loads.len(), 1);
    loads.remove(0)
}

#[test]
fn a_kv_cache_that_runs_full_and_queues_is_kv_cache_full_not_kv_too_small() {
    let calm = vllm_serving(&[
        "Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: 80.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 0.0%",
    ]);
    assert!(
        !codes(&calm).contains(&FindingCode::KvCacheFull),
        "{:?}",
        codes(&calm)
    );
    let t = calm.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.peaks.kv_percent.map(|r| r.value), Some(12.5));
    let full = vllm_serving(&[
        "Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: 80.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 0.0%",
        "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 95.1 tokens/s, Running: 64 reqs, Waiting: 3 reqs, Preemptions: 5, GPU KV cache usage: 100.0%, Prefix cache hit rate: 41.0%",
    ]);
    let before = codes(&calm);
    let after = codes(&full);
    assert!(after.contains(&FindingCode::KvCacheFull), "{after:?}");
    // Nothing else changes: the start's findings are the start's.
    assert_eq!(
        after
            .iter()
            .filter(|c| **c != FindingCode::KvCacheFull)
            .collect::<Vec<_>>(),
        before.iter().collect::<Vec<_>>()
    );
    let f = finding(&full, FindingCode::KvCacheFull);
    assert!(
        f.message.contains("5 request(s) preempted"),
        "{}",
        f.message
    );
    assert!(f
        .message
        .contains("3 request(s) waiting while the KV cache was 100.0% full"));
    assert!(f.hint.contains("--max-num-seqs") && f.hint.contains("--gpu-memory-utilization"));
}
