//! Ranks as devices, one test per prefix shape a vLLM or SGLang release can print (issue 51; the shapes are
//! listed in `docs/log-formats.md` §8): each log is real lines of `sample-logs/8NN-*` and `1032-*` (provenance
//! in `sample-logs/README.md`) read through the library as the binary reads them, and the ranks must land on the
//! GPUs the engine put them on. Where no log of the corpus has a shape (a pipeline stage, `rank=N`, a bare
//! `Worker_N`, an engine core of a data-parallel start with TP 1, SGLang's `EP`), the payload is a real line and
//! only the process name is the one the engine's source gives (`census/vllm.tsv`, `census/sglang.tsv` come from
//! the same releases: vLLM names its workers `Worker` + `_DP`/`_PP`/`_TP`/`_EP` ranks, its engine cores
//! `EngineCore_DP{rank}`).

use crate::util::{analyze, scratch};
use vramdiff::model::{Concluded, Runtime};

/// The loads of a log made of `lines`.
fn loads(tag: &str, lines: &[&str]) -> Vec<Concluded> {
    let dir = scratch(&format!("ranks-{tag}"));
    let path = dir.join("start.log");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = analyze(&[&path]).loads;
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Each rank of the first serving load: (its label, the GPU it landed on).
fn ranks(loads: &[Concluded]) -> Vec<(String, String)> {
    let s = loads
        .iter()
        .find_map(|l| l.reconciled.load.serving.as_ref())
        .expect("a serving load");
    s.ranks
        .iter()
        .map(|r| (r.rank.clone(), r.device.to_string()))
        .collect()
}

/// One real payload under each process or rank prefix.
fn prefixed(prefixes: &[&str], payload: &str) -> Vec<String> {
    prefixes.iter().map(|p| format!("{p} {payload}")).collect()
}

fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `sample-logs/1032-…:2,3,6` as printed: `(Worker_TP1 pid=…)`, `(Worker_TP0 pid=…)`.
const TP: [&str; 3] = [
    "(Worker_TP1 pid=646936) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.30 GiB total",
    "(Worker_TP0 pid=646817) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.38 GiB total",
    "(Worker_TP0 pid=646817) INFO 03-17 17:07:06 [gpu_worker.py:452] Available KV cache memory: 25.46 GiB",
];

#[test]
fn tensor_parallel_workers_are_their_tp_rank() {
    assert_eq!(
        ranks(&loads("tp", &TP)),
        pairs(&[("TP0", "GPU0"), ("TP1", "GPU1")])
    );
}

#[test]
fn pipeline_stages_are_their_stage_alone_and_stage_times_tp_size_plus_tp() {
    // `sample-logs/1032-…:2,3` with the names of a PP 2 start: `Worker_PP1` (TP 1), then `Worker_PP1_TP1` once
    // `tensor_parallel_size` is known from vLLM's `non-default args` line (`sample-logs/807-…`'s shape).
    let stages = [
        TP[0].replace("Worker_TP1", "Worker_PP1"),
        TP[1].replace("Worker_TP0", "Worker_PP0"),
    ];
    let lines: Vec<&str> = stages.iter().map(String::as_str).collect();
    assert_eq!(
        ranks(&loads("pp", &lines)),
        pairs(&[("PP0", "GPU0"), ("PP1", "GPU1")])
    );
    let with_tp = [
        "(APIServer pid=1) INFO 03-17 17:05:00 [utils.py:233] non-default args: {'model': 'm', 'tensor_parallel_size': 2, 'pipeline_parallel_size': 2}".to_string(),
        TP[0].replace("Worker_TP1", "Worker_PP1_TP1"),
        TP[1].replace("Worker_TP0", "Worker_PP1_TP0"),
    ];
    let lines: Vec<&str> = with_tp.iter().map(String::as_str).collect();
    assert_eq!(
        ranks(&loads("pp-tp", &lines)),
        pairs(&[("PP1_TP0", "GPU2"), ("PP1_TP1", "GPU3")])
    );
}

#[test]
fn data_tensor_and_expert_parallel_workers_are_their_ep_rank() {
    // `sample-logs/809-…:3` (DP4 TP2 EP): EP ranks run over DP × TP, so EP3 is the fourth GPU; the engine
    // core's failure at `:6` (`(EngineCore_DP0 pid=…)`) adds no GPU beside the workers.
    let l = loads(
        "dp-tp-ep",
        &[
            "(Worker_DP1_TP1_EP3 pid=3585771) INFO 08-19 05:56:57 [gpu_model_runner.py:6936] Estimated CUDA graph memory: 118.65 GiB total",
            "(EngineCore_DP0 pid=3584999) ERROR 08-19 05:56:57 [core.py:1346] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See https://docs.vllm.ai/",
        ],
    );
    assert_eq!(ranks(&l), pairs(&[("DP1_TP1_EP3", "GPU3")]));
}

#[test]
fn rank_numbers_are_their_gpu() {
    // `sample-logs/808-…:5` with the names older V1 releases and the Ray executor give: `VllmWorker rank=1`,
    // `Worker_3`, `VllmWorker-2`.
    let named = prefixed(
        &[
            "(VllmWorker rank=1 pid=448)",
            "(Worker_3 pid=449)",
            "(VllmWorker-2 pid=450)",
        ],
        "INFO 08-14 14:07:22 [gpu_worker.py:563] Available KV cache memory: 6.87 GiB",
    );
    let lines: Vec<&str> = named.iter().map(String::as_str).collect();
    assert_eq!(
        ranks(&loads("rank-numbers", &lines)),
        pairs(&[("rank1", "GPU1"), ("rank2", "GPU2"), ("rank3", "GPU3")])
    );
}

#[test]
fn engine_cores_of_a_data_parallel_start_with_tp1_are_one_gpu_each() {
    // `sample-logs/805-…:2,7` (`(EngineCore_0 pid=…)`, vLLM 0.10.1, one GPU) as the four engine cores of a
    // `--data-parallel-size 4` start print them, each with its worker in-process: `EngineCore_DP0` …
    // `EngineCore_DP3` (0.10.2 on), and `EngineCore_2` (0.10.1).
    let mut lines = Vec::new();
    for name in [
        "EngineCore_DP0",
        "EngineCore_DP1",
        "EngineCore_2",
        "EngineCore_DP3",
    ] {
        lines.push(format!("({name} pid=5839) INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 65.9651 GiB and 12.799889 seconds"));
        lines.push(format!("({name} pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: 2.14 GiB"));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let l = loads("engine-cores", &lines);
    assert_eq!(
        ranks(&l),
        pairs(&[
            ("0", "GPU0"),
            ("EngineCore_DP1", "GPU1"),
            ("EngineCore_DP2", "GPU2"),
            ("EngineCore_DP3", "GPU3"),
        ])
    );
    let s = l[0].reconciled.load.serving.as_ref().unwrap();
    assert!(s
        .ranks
        .iter()
        .all(|r| r.weights_loaded.is_some() && r.kv.is_some()));
}

#[test]
fn an_engine_core_beside_tp_workers_adds_no_gpu() {
    // `sample-logs/804-…:102,115` (TP 2): the engine core prints the KV size of the whole engine.
    let l = loads(
        "engine-core-tp",
        &[
            "(Worker_TP0 pid=1806061) INFO 10-23 15:14:28 [gpu_worker.py:298] Available KV cache memory: 44.59 GiB",
            "(Worker_TP1 pid=1806062) INFO 10-23 15:14:28 [gpu_worker.py:298] Available KV cache memory: 44.59 GiB",
            "(EngineCore_DP1 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 973,760 tokens",
        ],
    );
    assert_eq!(ranks(&l), pairs(&[("TP0", "GPU0"), ("TP1", "GPU1")]));
    let s = l[0].reconciled.load.serving.as_ref().unwrap();
    assert_eq!(s.kv_tokens.map(|c| c.value), Some(973_760));
}

#[test]
fn sglang_dp_attention_ranks_are_their_tp_rank() {
    // `sample-logs/812-…:5-8` (DP8 TP8, DP attention inside the TP group): `[… DPn TPn]`.
    let l = loads(
        "sglang-dp-tp",
        &[
            "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
            "[2025-07-02 07:41:59 DP7 TP7] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
            "[2025-07-02 07:41:59 DP6 TP6] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
        ],
    );
    assert_eq!(l[0].reconciled.load.runtime, Runtime::Sglang);
    assert_eq!(
        ranks(&l),
        pairs(&[
            ("DP0_TP0", "GPU0"),
            ("DP6_TP6", "GPU6"),
            ("DP7_TP7", "GPU7")
        ])
    );
}

#[test]
fn sglang_expert_and_pipeline_words_keep_the_tp_rank() {
    // `sample-logs/812-…:5` with the rank words SGLang's `configure_logger` prints from 0.5.10 (`census/
    // sglang.tsv`'s releases): `PP`, `TP`, `EP` in that order.
    let named = prefixed(
        &[
            "[2026-07-02 07:41:59 PP0 TP1 EP1]",
            "[2026-07-02 07:41:59 PP0 TP0 EP0]",
        ],
        "max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
    );
    let lines: Vec<&str> = named.iter().map(String::as_str).collect();
    assert_eq!(
        ranks(&loads("sglang-ep", &lines)),
        pairs(&[("PP0_TP0_EP0", "GPU0"), ("PP0_TP1_EP1", "GPU1")])
    );
}
