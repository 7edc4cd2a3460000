//! vLLM and SGLang: every real log of `sample-logs/8NN-*` (provenance in `sample-logs/README.md`) read through the
//! library, its facts (per rank, per engine start) and the diagnosis a maintainer would give held on its real
//! lines; a TP=2 load joined to an nvidia-smi capture built from its own figures (`tests/data/README.md`).

use crate::util::{analyze, root, run, stdout};
use vramdiff::model::{
    Concluded, Device, FindingCode, Runtime, ServingFigures, Severity, StartFailure, GIB,
};

pub(crate) fn loads(prefix: &str) -> Vec<Concluded> {
    let dir = root().join("sample-logs");
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .find(|n| n.starts_with(prefix) && n.ends_with(".log"))
        .unwrap_or_else(|| panic!("no sample {prefix}"));
    analyze(&[&dir.join(name)]).loads
}

pub(crate) fn serving(l: &Concluded) -> &ServingFigures {
    l.reconciled.load.serving.as_ref().expect("serving figures")
}

/// A GiB figure printed with two decimals, in bytes (as the parser reads it).
pub(crate) fn gib(x: f64) -> i64 {
    (x * GIB as f64).round() as i64
}

pub(crate) fn codes(l: &Concluded) -> Vec<FindingCode> {
    l.findings.iter().map(|f| f.code).collect()
}

fn finding(l: &Concluded, code: FindingCode) -> &vramdiff::model::Finding {
    l.findings
        .iter()
        .find(|f| f.code == code)
        .unwrap_or_else(|| panic!("no {code}: {:?}", codes(l)))
}

#[test]
fn the_801_profile_block_of_two_runs_is_two_loads() {
    let l = loads("801");
    assert_eq!(l.len(), 2);
    let tp1 = &serving(&l[0]).ranks[0];
    assert_eq!(tp1.budget.unwrap().size.bytes, gib(71.29));
    assert_eq!(tp1.weights.unwrap().size.bytes, gib(14.96));
    assert_eq!(tp1.kv.unwrap().size.bytes, gib(53.29));
    assert_eq!(l[0].reconciled.load.runtime, Runtime::Vllm);
    // The budget is the sum of its parts, inside the printed rounding.
    assert_eq!(
        l[0].reconciled.devices[0].comparison.verdict,
        vramdiff::model::Verdict::Match
    );
    // TP2: weights halved, non-torch doubled; the KV line was cut by the excerpt: not shown, never zero.
    let tp2 = &serving(&l[1]).ranks[0];
    assert_eq!(tp2.weights.unwrap().size.bytes, gib(7.48));
    assert_eq!(tp2.non_torch.unwrap().size.bytes, gib(3.58));
    assert!(tp2.kv.is_none());
}

#[test]
fn the_802_v0_start_is_healthy_with_its_graphs_outside_the_budget() {
    let l = &loads("802")[0];
    let s = serving(l);
    assert!(s.v0);
    assert_eq!(s.version.as_deref(), Some("0.7.2"));
    assert_eq!(s.gpu_blocks.unwrap().value, 36332);
    assert_eq!(s.concurrency.unwrap().value, 141.92);
    let r = &s.ranks[0];
    assert_eq!(r.device, Device::named("CUDA0"));
    assert_eq!(r.graph_actual.unwrap().size.bytes, gib(0.18));
    // Healthy: the only finding is information (the graphs over the budget, within the GPU's room).
    assert!(
        l.findings.iter().all(|f| f.severity == Severity::Info),
        "{:?}",
        codes(l)
    );
    assert!(finding(l, FindingCode::BudgetExceeded)
        .hint
        .contains("--enforce-eager"));
}

/// vLLM prints its KV capacity in blocks before V1 (`# CUDA blocks: 36332`, `sample-logs/802-…:17`) and in
/// tokens from V1 (`GPU KV cache size: 973,760 tokens`, `sample-logs/804-…:115`): one quantity, the load's
/// `kv_tokens`, however the release printed it. The V0 blocks become tokens through the block size their own
/// `Maximum concurrency for 4096 tokens per request: 141.92x` (`:18`) gives back: 36332 × 16 / 4096 = 141.92.
#[test]
fn v0_blocks_and_v1_tokens_are_one_kv_capacity() {
    let (v0, v1) = (loads("802"), loads("804"));
    let (v0, v1) = (serving(&v0[0]), serving(&v1[0]));
    assert!(v0.v0 && !v1.v0);
    assert_eq!(v0.gpu_blocks.map(|c| c.value), Some(36332));
    assert_eq!(
        v0.kv_tokens.map(|c| (c.value, c.line)),
        Some((36332 * 16, 17))
    );
    assert_eq!(v1.kv_tokens.map(|c| c.value), Some(973_760));
    // The V0 start of `sample-logs/810-…` prints its blocks without a concurrency line (vLLM 0.5): its block
    // size is not printed, so no token count is made up.
    let v0_bare = loads("810");
    let v0_bare = serving(&v0_bare[0]);
    assert_eq!(v0_bare.gpu_blocks.map(|c| c.value), Some(22982));
    assert!(v0_bare.kv_tokens.is_none());
}

#[test]
fn the_803_max_length_does_not_fit_the_kv_cache() {
    let l = &loads("803")[0];
    let s = serving(l);
    assert_eq!(
        s.failure,
        Some(StartFailure::MaxLenOverKv {
            len: 131072,
            tokens: 81536,
            needed: None,
            available: None,
        })
    );
    // The worker's weights (13.9476 GiB, its prefix names a V0 worker process) on the second GPU.
    assert_eq!(s.ranks.len(), 1);
    assert_eq!(s.ranks[0].rank, "pid1786");
    let k = finding(l, FindingCode::KvTooSmall);
    assert_eq!(k.severity, Severity::Error);
    assert!(k.message.contains("the largest length that fits is 81536"));
    assert!(k.hint.contains("--max-model-len 81536"));
    assert!(k.hint.contains("do not add tokens"));
}

#[test]
fn the_804_tp2_ranks_are_two_gpus_with_the_advisory_figures() {
    let l = &loads("804")[0];
    let s = serving(l);
    assert_eq!(s.version.as_deref(), Some("0.10.2"));
    assert_eq!(s.kv_tokens.unwrap().value, 973_760);
    assert_eq!(s.ranks.len(), 2);
    for r in &s.ranks {
        assert_eq!(r.budget.unwrap().size.bytes, gib(125.83));
        assert_eq!(r.weights.unwrap().size.bytes, gib(74.28));
        assert_eq!(r.kv.unwrap().size.bytes, gib(44.59));
        assert_eq!(r.graph_actual.unwrap().size.bytes, gib(2.37));
        assert_eq!(r.kv_to_fit_budget.unwrap().size.bytes, 45_175_492_096);
        assert_eq!(r.kv_to_fill_gpu.unwrap().size.bytes, 59_540_753_920);
    }
    let devices: Vec<String> = l
        .reconciled
        .devices
        .iter()
        .map(|d| d.device.to_string())
        .collect();
    assert_eq!(devices, ["CUDA0", "CUDA1"]);
    // The KV size and concurrency lines printed twice are counted once.
    assert!(l
        .reconciled
        .load
        .notes
        .iter()
        .any(|n| n.contains("counted once")));
    // 2.37 GiB over the 0.9 budget on each rank (128.2 GiB), with vLLM's own --kv-cache-memory figures.
    let over: Vec<_> = l
        .findings
        .iter()
        .filter(|f| f.code == FindingCode::BudgetExceeded)
        .collect();
    assert_eq!(over.len(), 2);
    assert!(over[0].message.contains("128.20 GiB") && over[0].message.contains("2.37 GiB over"));
    assert!(over[0].hint.contains("--kv-cache-memory 45175492096"));
    assert!(over[0].hint.contains("--kv-cache-memory 59540753920"));
    assert!(!codes(l).contains(&FindingCode::Underestimate));
}

#[test]
fn the_805_negative_kv_is_a_failed_start_without_kv_memory() {
    let l = &loads("805")[0];
    let s = serving(l);
    assert_eq!(s.failure, Some(StartFailure::NoKvMemory));
    assert_eq!(
        s.ranks[0].weights_loaded.unwrap().size.bytes,
        (65.9651 * GIB as f64).round() as i64
    );
    let f = finding(l, FindingCode::LoadFailed);
    assert!(f.hint.contains("--gpu-memory-utilization 0.95"));
    assert!(f.hint.contains("--max-num-batched-tokens") && f.hint.contains("--max-num-seqs"));
}

#[test]
fn the_806_refusal_names_the_other_process_and_the_utilization_that_fits() {
    let l = &loads("806")[0];
    assert_eq!(l.reconciled.load.runtime, Runtime::Vllm);
    let f = finding(l, FindingCode::ForeignMemory);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.message.contains("another process held 15.94 GiB"),
        "{}",
        f.message
    );
    assert!(f.hint.contains("--gpu-memory-utilization 0.66"));
}

#[test]
fn the_807_graph_estimate_equals_the_pool_and_nothing_is_said() {
    let l = &loads("807")[0];
    let s = serving(l);
    let r = &s.ranks[0];
    assert_eq!(r.graph_estimate.unwrap().size.bytes, gib(0.47));
    assert_eq!(r.graph_actual.unwrap().size.bytes, gib(0.47));
    assert_eq!(r.kv.unwrap().size.bytes, gib(66.93));
    assert_eq!(s.kv_tokens.unwrap().value, 1_754_352);
    assert_eq!(s.max_len.unwrap().value, 262_144);
    assert_eq!(r.utilization_keeping_kv.unwrap().value, 0.8539);
    assert!(l.findings.is_empty(), "{:?}", codes(l));
}

#[test]
fn the_808_ranks_carry_the_graph_estimate_and_the_utilization_advisory() {
    let l = &loads("808")[0];
    let s = serving(l);
    let ranks: Vec<&str> = s.ranks.iter().map(|r| r.rank.as_str()).collect();
    assert_eq!(ranks, ["TP0", "TP1"]);
    assert!(s
        .ranks
        .iter()
        .all(|r| r.graph_estimate.unwrap().size.bytes == gib(0.36)));
    assert_eq!(s.ranks[0].kv.unwrap().size.bytes, gib(6.87));
    assert!(s.ranks[1].kv.is_none());
    assert_eq!(s.ranks[0].utilization_without_graphs.unwrap().value, 0.8048);
    assert_eq!(s.ranks[0].utilization_keeping_kv.unwrap().value, 0.8352);
}

#[test]
fn the_809_graph_estimate_left_no_kv_memory() {
    let l = &loads("809")[0];
    let f = finding(l, FindingCode::GraphEstimateOff);
    assert!(f.message.contains("118.65 GiB") && f.message.contains("never captured"));
    assert!(f
        .hint
        .contains("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"));
    // The rank DP1 × TP1 with EP3 is the fourth GPU.
    assert_eq!(
        f.device.as_ref().map(|d| d.to_string()).as_deref(),
        Some("GPU3")
    );
    assert!(finding(l, FindingCode::LoadFailed)
        .hint
        .contains("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"));
}

#[test]
fn the_810_v0_tp8_ranks_are_the_driver_and_its_workers() {
    let l = &loads("810")[0];
    let s = serving(l);
    assert_eq!(s.ranks.len(), 7);
    assert!(s
        .ranks
        .iter()
        .all(|r| r.weights_loaded.unwrap().size.bytes == (2.3463 * GIB as f64).round() as i64));
    assert_eq!(s.gpu_blocks.unwrap().value, 22982);
    assert_eq!(l.reconciled.devices.len(), 7);
    // Cut as the graph capture begins: incomplete, not a failure the log shows.
    assert_eq!(codes(l), [FindingCode::IncompleteLoad]);
}

#[test]
fn the_811_sglang_tp4_pool_is_smaller_than_the_context() {
    let l = &loads("811")[0];
    assert_eq!(l.reconciled.load.runtime, Runtime::Sglang);
    let s = serving(l);
    assert_eq!(s.ranks.len(), 4);
    assert_eq!(s.utilization.unwrap().value, 0.85);
    assert_eq!(s.tensor_parallel.unwrap().value, 4);
    for r in &s.ranks {
        assert_eq!(r.weights_loaded.unwrap().size.bytes, gib(15.54));
        assert_eq!(r.kv.unwrap().size.bytes, gib(1.42) * 2);
        assert_eq!(r.kv_tokens.unwrap().value, 46611);
        assert_eq!(r.graph_actual.unwrap().size.bytes, gib(0.93));
        assert_eq!(r.avail_after_graphs.unwrap().size.bytes, gib(0.53));
    }
    let k = finding(l, FindingCode::KvTooSmall);
    assert_eq!(k.severity, Severity::Warning);
    assert!(k.hint.contains("--context-length 46611"));
    // One device row per rank; TP1's capture line followed a tqdm redraw on the same line and is still read.
    assert_eq!(l.reconciled.devices.len(), 4);
    assert!(s.ranks[1].lines.contains(&63));
}

#[test]
fn the_812_negative_profiled_pool_is_out_of_memory_at_startup() {
    let l = &loads("812")[0];
    let s = serving(l);
    assert_eq!(s.failure, Some(StartFailure::NoKvMemory));
    assert_eq!(s.ranks.len(), 8);
    assert!(s
        .ranks
        .iter()
        .all(|r| r.kv_tokens.unwrap().value == -561_981));
    let f = finding(l, FindingCode::LoadFailed);
    assert!(f.hint.contains("out of memory at startup") && f.hint.contains("--cuda-graph-max-bs"));
}

#[test]
fn the_813_pool_and_weights_of_a_2026_sglang() {
    let l = &loads("813")[0];
    let r = &serving(l).ranks[0];
    assert_eq!(r.weights_loaded.unwrap().size.bytes, gib(56.98));
    assert_eq!(r.kv.unwrap().size.bytes, gib(76.44) * 2);
    assert_eq!(r.kv_tokens.unwrap().value, 1_669_816);
    assert_eq!(l.reconciled.load.runtime, Runtime::Sglang);
}

#[test]
fn the_814_crash_during_capture_is_not_blamed_on_memory() {
    let l = &loads("814")[0];
    assert_eq!(serving(l).failure, Some(StartFailure::Crashed));
    let f = finding(l, FindingCode::LoadFailed);
    assert!(f.hint.starts_with("not a memory failure"));
    assert!(f.hint.contains("8.38 GiB"));
    assert!(f.hint.contains("--disable-cuda-graph"));
}

/// A TP=2 load joined to a capture (built from the log's own figures, `tests/data/README.md`): one device row and
/// one observed row per rank, and the driver's figure over the budget.
#[test]
fn a_tp2_load_joins_a_capture_rank_by_rank() {
    let out = run(
        &[
            "--format",
            "json",
            "--fail-on",
            "never",
            "sample-logs/804-vllm-0102-2xh200-tp2-qwen3-next-80b-advisory-bytes-dup-lines.log",
            "--smi",
            "tests/data/serving/804-tp2-built.nvidia-smi.txt",
        ],
        b"",
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let load = &json["loads"][0];
    assert_eq!(load["era"], "vllm");
    assert_eq!(load["serving"]["version"], "0.10.2");
    let observed = load["observed"].as_array().unwrap();
    assert_eq!(observed.len(), 2);
    for (i, o) in observed.iter().enumerate() {
        assert_eq!(o["device"], format!("CUDA{i}"));
        assert_eq!(o["used"]["bytes"], 131_891_i64 * 1024 * 1024);
    }
    let over: Vec<&serde_json::Value> = load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "budget-exceeded")
        .collect();
    assert_eq!(over.len(), 2);
    assert!(over[0]["message"]
        .as_str()
        .unwrap()
        .contains("the driver's capture shows"));
}

/// The suggestions of a load: `(setting, effect, because)`.
fn suggested(l: &Concluded) -> Vec<(String, String, Vec<FindingCode>)> {
    l.suggestions
        .iter()
        .map(|s| (s.setting.clone(), s.effect.clone(), s.because.clone()))
        .collect()
}

/// The suggestion whose setting is `setting`.
fn suggestion<'a>(l: &'a Concluded, setting: &str) -> &'a vramdiff::model::Suggestion {
    l.suggestions
        .iter()
        .find(|s| s.setting == setting)
        .unwrap_or_else(|| panic!("no {setting}: {:?}", suggested(l)))
}

/// `vllm-NOTES.md`'s advice for every log that has some, as suggestions in the engine's own knobs with their
/// computed effect; the logs it calls healthy or fine get none.
#[test]
fn each_logs_advice_is_a_suggestion_in_the_engines_own_knobs() {
    // 801 (nothing to fix) and 807 (healthy; the estimate costs 0.39 points, under one) get none.
    assert!(loads("801").iter().all(|l| l.suggestions.is_empty()));
    assert!(loads("807")[0].suggestions.is_empty());

    // 802: V0's graphs lie outside the budget; lower the utilization by them (or run eager).
    let l = &loads("802")[0];
    let s = suggestion(l, "--gpu-memory-utilization 0.89");
    assert!(
        s.effect.contains("19.63 GiB instead of 19.85 GiB"),
        "{}",
        s.effect
    );
    assert_eq!(s.because, [FindingCode::BudgetExceeded]);
    assert!(suggestion(l, "--enforce-eager")
        .effect
        .contains("184.3 MiB"));

    // 803: the largest length that fits, or 8-bit KV for the 131k asked.
    let l = &loads("803")[0];
    let s = suggestion(l, "--max-model-len 81536");
    assert_eq!(
        s.because,
        [FindingCode::KvTooSmall, FindingCode::LoadFailed]
    );
    assert!(suggestion(l, "--kv-cache-dtype fp8")
        .effect
        .contains("163072 tokens, enough for the 131072 asked"));

    // 804: vLLM's own --kv-cache-memory figures, shared (inside 0.9) or dedicated (+24 % KV).
    let l = &loads("804")[0];
    assert!(suggestion(l, "--kv-cache-memory 45175492096")
        .effect
        .contains("inside its budget 125.83 GiB"));
    assert!(suggestion(l, "--kv-cache-memory 59540753920")
        .effect
        .contains("+24% over the 44.59 GiB in use"));
    assert_eq!(l.suggestions.len(), 2, "one per setting, not per rank");

    // 805: more of the GPU, or a smaller activation peak.
    let l = &loads("805")[0];
    assert!(suggestion(l, "--gpu-memory-utilization 0.95")
        .effect
        .contains("the profile left -2.14 GiB"));
    suggestion(l, "--max-num-batched-tokens 2048");
    suggestion(l, "--max-num-seqs 256");

    // 806: the utilization that fits beside the other process.
    let l = &loads("806")[0];
    let s = suggestion(l, "--gpu-memory-utilization 0.66");
    assert!(s.effect.contains("31.27 GiB") && s.effect.contains("15.94 GiB"));
    assert_eq!(
        s.because,
        [FindingCode::ForeignMemory, FindingCode::LoadFailed]
    );

    // 808: vLLM's own advisory, the utilization that keeps the old KV size (1.5 points).
    let l = &loads("808")[0];
    let s = suggestion(l, "--gpu-memory-utilization 0.8352");
    assert!(s.effect.contains("1.5 points of 0.82"), "{}", s.effect);

    // 809: leave the implausible estimate out of the budget.
    let l = &loads("809")[0];
    let s = suggestion(l, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0");
    assert!(s.effect.contains("118.65 GiB"));
    assert_eq!(
        s.because,
        [FindingCode::GraphEstimateOff, FindingCode::LoadFailed]
    );

    // 810: cut during V0's capture (outside the budget): eager, 0.85, fewer sequences.
    let l = &loads("810")[0];
    assert!(serving(l).v0);
    for setting in [
        "--enforce-eager",
        "--gpu-memory-utilization 0.85",
        "--max-num-seqs 128",
    ] {
        assert_eq!(
            suggestion(l, setting).because,
            [FindingCode::IncompleteLoad]
        );
    }

    // 811: what the pool holds, fp8_e5m2 (SGLang's word), and only a slightly larger fraction.
    let l = &loads("811")[0];
    suggestion(l, "--context-length 46611");
    assert!(suggestion(l, "--kv-cache-dtype fp8_e5m2")
        .effect
        .contains("still short of the 131072 asked"));
    assert!(suggestion(l, "--mem-fraction-static 0.86")
        .effect
        .contains("a small gain"));

    // 812: smaller buffers beside the pool (the log does not print their values: N).
    let l = &loads("812")[0];
    assert!(suggestion(l, "--cuda-graph-max-bs N")
        .effect
        .contains("-561981 tokens"));
    suggestion(l, "--chunked-prefill-size N");

    // 813: ~22 GiB left for the capture after the pool and AITER's workspace.
    let l = &loads("813")[0];
    let s = suggestion(l, "--cuda-graph-max-bs N");
    assert!(
        s.effect.contains("22.26 GiB left") && s.effect.contains("51.75 GiB attention workspace")
    );

    // 814: not memory: skip the capture, leave the memory flags alone.
    let l = &loads("814")[0];
    assert_eq!(suggested(l).len(), 1);
    assert!(suggestion(l, "--disable-cuda-graph")
        .effect
        .contains("not a memory failure"));
}

/// 813's AITER prints: the workspace is read (a buffer of the rank), the fraction is the pool's, the two
/// pool-sizing prints are known; nothing memory-like is left unread.
#[test]
fn the_813_aiter_prints_are_read_or_known() {
    let dir = root().join("sample-logs");
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .find(|n| n.starts_with("813") && n.ends_with(".log"))
        .unwrap();
    let out = run(
        &[
            "--show-unrecognized",
            "--fail-on",
            "never",
            &format!("sample-logs/{name}"),
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(
        text.contains("7 lines read, 7 recognised, 0 memory-like lines not understood"),
        "{text}"
    );
    let l = &loads("813")[0];
    let s = serving(l);
    assert_eq!(s.utilization.unwrap().value, 0.911);
    let r = &s.ranks[0];
    assert_eq!(r.workspace.unwrap().size.bytes, gib(51.75));
    assert_eq!(r.left_for_graphs().unwrap().bytes, gib(74.01) - gib(51.75));
    // Weights, KV and workspace: 0.911 of the ~287 GiB GPU.
    let actual = l.reconciled.devices[0].comparison.actual.unwrap().bytes;
    assert_eq!(actual, gib(56.98) + gib(76.44) * 2 + gib(51.75));
}
