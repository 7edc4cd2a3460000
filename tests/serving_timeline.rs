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

/// A real start from `sample-logs/` followed by the first `n` lines vLLM or SGLang printed with its own logging
/// code (`tests/data/serving-printed/`, provenance and the exact call in `tests/data/README.md`): no log of the
/// corpus prints a vLLM line while serving, so the start and the serving lines are composed.
fn serving_after(sample: &str, printed: &str, n: usize) -> vramdiff::model::Concluded {
    let root = crate::util::root();
    let start = std::fs::read_to_string(root.join("sample-logs").join(sample)).unwrap();
    let lines =
        std::fs::read_to_string(root.join("tests/data/serving-printed").join(printed)).unwrap();
    let dir = crate::util::scratch(&format!("kv-full-{printed}-{n}"));
    let path = dir.join("serving.log");
    let mut text = start;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    for line in lines.lines().take(n) {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let mut loads = crate::util::analyze(&[&path]).loads;
    assert_eq!(loads.len(), 1);
    loads.remove(0)
}

const S804: &str = "804-vllm-0102-2xh200-tp2-qwen3-next-80b-advisory-bytes-dup-lines.log";
const S802: &str = "802-vllm-072-v0-22gib-qwen25-math-15b-cuda-blocks-ok.log";
const S811: &str = "811-sglang-043-4xl4-tp4-qwq-32b-full-start-graph-end-mem-usage.log";

/// The findings of `full` other than `kv-cache-full` are those of `calm`: the start's.
fn only_kv_cache_full_added(calm: &vramdiff::model::Concluded, full: &vramdiff::model::Concluded) {
    let before = codes(calm);
    let after = codes(full);
    assert!(!before.contains(&FindingCode::KvCacheFull), "{before:?}");
    assert!(after.contains(&FindingCode::KvCacheFull), "{after:?}");
    assert_eq!(
        after
            .iter()
            .filter(|c| **c != FindingCode::KvCacheFull)
            .collect::<Vec<_>>(),
        before.iter().collect::<Vec<_>>()
    );
}

#[test]
fn a_kv_cache_that_runs_full_and_queues_is_kv_cache_full_not_kv_too_small() {
    // vLLM 0.10.2's own V1 stats logger behind its API server's prefix, after 804's real start (vLLM 0.10.2).
    let printed = "vllm-0.10.2-v1-stats-804.log";
    let calm = serving_after(S804, printed, 1);
    let t = calm.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.peaks.kv_percent.map(|r| r.value), Some(12.5));
    let full = serving_after(S804, printed, 4);
    only_kv_cache_full_added(&calm, &full);
    let t = full.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.peaks.kv_percent.map(|r| r.value), Some(100.0));
    assert!(
        t.preemptions.is_none(),
        "vLLM V1 prints no preemption count"
    );
    let f = finding(&full, FindingCode::KvCacheFull);
    assert!(
        f.message
            .contains("17 request(s) waiting while the KV cache was 99.2% full and 48 ran"),
        "{}",
        f.message
    );
    assert!(f.hint.contains("--max-num-seqs") && f.hint.contains("--gpu-memory-utilization"));
}

#[test]
fn a_v0_preemption_is_kv_cache_full() {
    // vLLM 0.7.2's own V0 stats logger and scheduler warning (the 51st preemption), after 802's real start.
    let printed = "vllm-0.7.2-v0-stats-preempted-802.log";
    let full = serving_after(S802, printed, 4);
    let t = full.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.preemptions.map(|p| p.value), Some(51));
    assert_eq!(t.peaks.kv_percent.map(|r| r.value), Some(99.6));
    let f = finding(&full, FindingCode::KvCacheFull);
    assert!(
        f.message.contains("51 request(s) preempted"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("4 request(s) waiting while the KV cache was 97.8% full and 140 ran"),
        "{}",
        f.message
    );
}

#[test]
fn sglang_decode_at_98_percent_with_a_queue_and_a_retraction_is_kv_cache_full() {
    // SGLang 0.4.0's own prefill/decode stats and retraction, after 811's real start (SGLang 0.4.3, TP=4).
    let calm = serving_after(S811, "sglang-0.4.0-stats.log", 0);
    let full = serving_after(S811, "sglang-0.4.0-stats.log", 2);
    only_kv_cache_full_added(&calm, &full);
    let t = full.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.peaks.kv_percent.map(|r| r.value), Some(98.0));
    let f = finding(&full, FindingCode::KvCacheFull);
    assert!(
        f.message
            .contains("23 request(s) waiting while the KV cache was 98.0% full and 64 ran"),
        "{}",
        f.message
    );
    let retracted = serving_after(S811, "sglang-0.4.0-retract.log", 1);
    let t = retracted.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.preemptions.map(|p| p.value), Some(1));
    assert!(codes(&retracted).contains(&FindingCode::KvCacheFull));
}

/// The setting and effect of the load's suggestion that answers `code` and starts with `prefix`.
fn suggestion<'a>(
    l: &'a vramdiff::model::Concluded,
    code: FindingCode,
    prefix: &str,
) -> &'a vramdiff::model::Suggestion {
    l.suggestions
        .iter()
        .find(|s| s.because.contains(&code) && s.setting.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} for {code:?}: {:?}", l.suggestions))
}

#[test]
fn a_kv_cache_full_gets_the_tokens_a_larger_share_adds_and_the_requests_that_fit() {
    // 804 (vLLM 0.10.2): 973760 tokens in 47878147932 bytes of KV cache on a GPU of 150119844413 bytes
    // (lines 114, 115, 126), utilization 0.9 (line 124): 0.05 × total ÷ 49168.5 bytes per token = 152659 tokens.
    let full = serving_after(S804, "vllm-0.10.2-v1-stats-804.log", 4);
    let u = suggestion(&full, FindingCode::KvCacheFull, "--gpu-memory-utilization");
    assert_eq!(u.setting, "--gpu-memory-utilization 0.95");
    assert!(
        u.effect
            .contains("about 152659 more tokens, from 973760 to 1126419 tokens"),
        "{}",
        u.effect
    );
    // 48 requests at 99.2 %: 48 × 90 ÷ 99.2 = 43.5, so 43.
    let n = suggestion(&full, FindingCode::KvCacheFull, "--max-num-seqs");
    assert_eq!(n.setting, "--max-num-seqs 43");
    // 802 (vLLM 0.7.2, V0): 581312 tokens in 16664473108 bytes on 23686744637 (lines 15–17): 41313 tokens.
    let v0 = serving_after(S802, "vllm-0.7.2-v0-stats-preempted-802.log", 4);
    let u = suggestion(&v0, FindingCode::KvCacheFull, "--gpu-memory-utilization");
    assert!(u.effect.contains("about 41313 more tokens"), "{}", u.effect);
    let n = suggestion(&v0, FindingCode::KvCacheFull, "--max-num-seqs");
    assert_eq!(n.setting, "--max-num-seqs 128");
    // A calm load is told nothing of it.
    let calm = serving_after(S804, "vllm-0.10.2-v1-stats-804.log", 1);
    assert!(calm
        .suggestions
        .iter()
        .all(|s| !s.because.contains(&FindingCode::KvCacheFull)));
}

#[test]
fn sglang_gets_its_own_flags_and_says_what_its_log_does_not_give() {
    // 811 (SGLang 0.4.3) prints no GPU total: the tokens --mem-fraction-static adds are not computed.
    let full = serving_after(S811, "sglang-0.4.0-stats.log", 2);
    let f = suggestion(&full, FindingCode::KvCacheFull, "--mem-fraction-static");
    assert_eq!(f.setting, "--mem-fraction-static 0.90");
    assert!(
        f.effect
            .contains("not computed: the GPU's total memory missing"),
        "{}",
        f.effect
    );
    // 64 requests at 98 %: 58 keep it near 90 %, in SGLang's flag, never vLLM's.
    let n = suggestion(&full, FindingCode::KvCacheFull, "--max-running-requests");
    assert_eq!(n.setting, "--max-running-requests 58");
    assert!(full
        .suggestions
        .iter()
        .all(|s| !s.setting.contains("--max-num-seqs")
            && !s.setting.contains("--gpu-memory-utilization")));
}

#[test]
fn the_kv_cache_full_suggestions_are_in_every_format() {
    let root = crate::util::root();
    let dir = crate::util::scratch("kv-full-formats");
    let path = dir.join("804-serving.log");
    let mut text = std::fs::read_to_string(root.join("sample-logs").join(S804)).unwrap();
    text.push_str(
        &std::fs::read_to_string(
            root.join("tests/data/serving-printed/vllm-0.10.2-v1-stats-804.log"),
        )
        .unwrap(),
    );
    std::fs::write(&path, text).unwrap();
    for format in ["text", "json", "markdown", "jsonl", "html"] {
        let out = crate::util::run(&["--format", format, path.to_str().unwrap()], b"");
        let shown = crate::util::stdout(&out);
        assert!(
            shown.contains("--gpu-memory-utilization 0.95") && shown.contains("152659"),
            "{format}"
        );
        assert!(shown.contains("--max-num-seqs 43"), "{format}");
    }
}

/// The host's free memory at load against the worst case the printed limits allow, on real lines only, composed:
/// the `system memory` line of an Ollama ≥ 0.30 start (`sample-logs/501-…` line 2, free 7.0 GiB; or
/// `sample-logs/505-…` line 4, free 29.4 GiB), then the real llama-server b11549 start with four slots of the
/// oracle (`tests/data/oracle/b11549/logs/gemma3--np4-split.log`: `n_slots = 4`, `context checkpoints enabled,
/// max = 32`), then LM Studio's llama-server serving lines of `sample-logs/1202-…` (limit 703.155 MiB,
/// checkpoints of 149.626 MiB). No log of the corpus prints all three.
fn host_free_then_four_slots(free_from: &str) -> vramdiff::model::Concluded {
    let root = crate::util::root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let sample = |prefix: &str| {
        let name = crate::util::sample_names()
            .into_iter()
            .find(|n| n.starts_with(prefix) && n.ends_with(".log"))
            .unwrap();
        read(&format!("sample-logs/{name}"))
    };
    let system_memory = sample(free_from)
        .lines()
        .find(|l| l.contains("msg=\"system memory\""))
        .unwrap()
        .to_string();
    let text = format!(
        "{system_memory}\n{}{}",
        read("tests/data/oracle/b11549/logs/gemma3--np4-split.log"),
        sample("1202-")
    );
    let dir = crate::util::scratch(&format!("host-free-{free_from}"));
    let path = dir.join("composed.log");
    std::fs::write(&path, text).unwrap();
    let mut loads = crate::util::analyze(&[&path]).loads;
    assert_eq!(loads.len(), 1);
    loads.remove(0)
}

#[test]
fn a_worst_case_above_the_hosts_free_memory_is_serving_host_memory_with_the_slots_that_fit() {
    let l = host_free_then_four_slots("501-");
    assert_eq!(l.reconciled.load.settings.parallel, Some(4));
    let t = l.reconciled.load.timeline.as_ref().unwrap();
    assert_eq!(t.limits.host_free.map(|f| f.line), Some(1));
    // 703.155 MiB + 4 slots × 32 × 149.626 MiB = 19855.3 MiB, above 7.0 GiB (± 51 MiB).
    let f = finding(&l, FindingCode::ServingHostMemory);
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.message.contains("may keep 19.39 GiB in host RAM")
            && f.message
                .contains("above the 7.00 GiB free at load (line 1)"),
        "{}",
        f.message
    );
    // One slot: 703.155 + 32 × 149.626 = 5491.2 MiB, within 7.0 GiB; two would be 10279 MiB.
    let np = suggestion(&l, FindingCode::ServingHostMemory, "-np");
    // The composed log names no launcher (the oracle's llama-server has no command line; Ollama's `system
    // memory` line alone names no placer), so the knob comes in both launchers' spellings.
    assert_eq!(
        np.setting,
        "-np 1 (if Ollama ≥ 0.30 started llama-server: OLLAMA_NUM_PARALLEL=1)"
    );
    assert!(np.effect.contains("4.68 GiB per slot"), "{}", np.effect);
    // The checkpoints of four slots alone (18.7 GiB) are above the free memory: no cache limit fits.
    assert!(!l
        .suggestions
        .iter()
        .any(|s| s.setting.starts_with("--cache-ram")
            && s.because.contains(&FindingCode::ServingHostMemory)));
}

#[test]
fn a_worst_case_within_the_hosts_free_memory_is_no_finding() {
    // 19855.3 MiB within 29.4 GiB free.
    let l = host_free_then_four_slots("505-");
    assert!(l
        .reconciled
        .load
        .timeline
        .as_ref()
        .unwrap()
        .limits
        .host_free
        .is_some());
    assert!(
        !codes(&l).contains(&FindingCode::ServingHostMemory),
        "{:?}",
        codes(&l)
    );
}
