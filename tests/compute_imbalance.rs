//! `compute-imbalance` with more than two GPUs (issue 35): four cards of one model, which read the same total
//! and free memory before the load, are four memories and are compared; a second heavy compute buffer does not
//! hide the first; devices that the exit table shows as one pool are never compared.
//!
//! No corpus log has four GPUs with their compute buffers (`docs/findings.md`, `compute-imbalance`), so the
//! four-GPU load is built from the shapes of real lines: the device, fit and table lines of
//! `sample-logs/708-llama-server-cuda-rtx3090-qwen36-27b-fit-no-change-blog.log` (lines 1–2, 11–18; the same RTX
//! 3090 of 24159 MiB with 23257 MiB free, four times), the per-device projection lines of
//! `sample-logs/founding-today-3090-4060-gemma4-31b.log` (lines 37–40) and llama.cpp's buffer lines of the same
//! (lines 85, 93–95). The figures are made up and consistent: each table row adds up (total = free + self +
//! unaccounted), the projection's used and free are the row's self and free − self, and the buffers are the
//! plan's columns. The pooled case is the real exit table of
//! `sample-logs/717-llama-completion-metal-4-virtual-devices-breakdown.log` with one compute figure raised.

use crate::util::{analyze, root, scratch};
use vramdiff::model::{Concluded, Finding, Severity};

/// Compute buffers per GPU (MiB), weights and KV as in the module doc.
fn four_gpus(compute: [i64; 4]) -> String {
    let weights = [5800, 5800, 5800, 5700];
    let kv = 400;
    let (total, free) = (24159, 23257);
    let mut log = String::from("ggml_cuda_init: found 4 CUDA devices (Total VRAM: 96636 MiB):\n");
    for i in 0..4 {
        log.push_str(&format!(
            "  Device {i}: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24159 MiB\n"
        ));
    }
    log.push_str("common_init_result: fitting params to device memory, for bugs during this step try to reproduce them with -fit off, or provide --verbose logs if the bug only occurs with -fit on\n");
    log.push_str("common_params_fit_impl: getting device memory data for initial parameters:\n");
    log.push_str("common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |\n");
    for i in 0..4 {
        let self_ = weights[i] + kv + compute[i];
        log.push_str(&format!(
            "common_memory_breakdown_print: |   - CUDA{i} (RTX 3090)   | {total} = {free} + ({self_:5} = {:5} + {kv:7} + {:7}) + {:12} |\n",
            weights[i],
            compute[i],
            total - free - self_
        ));
    }
    log.push_str("common_memory_breakdown_print: |   - Host               |                   1214 =   682 +       0 +     532                |\n");
    log.push_str("common_params_fit_impl: projected memory use with initial parameters [MiB]:\n");
    for i in 0..4 {
        let self_ = weights[i] + kv + compute[i];
        log.push_str(&format!(
            "common_params_fit_impl:   - CUDA{i} (NVIDIA GeForce RTX 3090): {total} total, {self_:6} used, {:6} free vs. target of   1024\n",
            free - self_
        ));
    }
    log.push_str("common_params_fit_impl: targets for free memory can be met on all devices, no changes needed\n");
    log.push_str("common_fit_params: successfully fit params to free device memory\n");
    log.push_str("load_tensors: offloaded 65/65 layers to GPU\n");
    log.push_str("load_tensors:   CPU_Mapped model buffer size =   682.00 MiB\n");
    for (i, w) in weights.iter().enumerate() {
        log.push_str(&format!(
            "load_tensors:        CUDA{i} model buffer size = {w:8}.00 MiB\n"
        ));
    }
    for i in 0..4 {
        log.push_str(&format!(
            "llama_kv_cache:      CUDA{i} KV buffer size = {kv:8}.00 MiB\n"
        ));
    }
    log.push_str("sched_reserve: reserving ...\n");
    for (i, c) in compute.iter().enumerate() {
        log.push_str(&format!(
            "sched_reserve:      CUDA{i} compute buffer size = {c:8}.03 MiB\n"
        ));
    }
    log.push_str("sched_reserve:  CUDA_Host compute buffer size =   532.00 MiB\n");
    log
}

fn load_of_text(tag: &str, log: &str) -> Concluded {
    let path = scratch(tag).join("log.txt");
    std::fs::write(&path, log).unwrap();
    let mut a = analyze(&[&path]);
    assert_eq!(a.loads.len(), 1, "{tag}");
    a.loads.remove(0)
}

fn imbalance(load: &Concluded) -> Vec<&Finding> {
    load.findings
        .iter()
        .filter(|f| f.code.as_str() == "compute-imbalance")
        .collect()
}

#[test]
fn four_cards_of_one_model_are_four_memories_and_the_heavy_one_is_named() {
    let load = load_of_text("imbalance-4", &four_gpus([300, 300, 300, 2100]));
    // Four cards of one model read the same total and free before the load: no evidence of one pool, so the
    // load stage does not make one (and writes no "one memory pool" note), and the finding stands.
    assert!(load.reconciled.load.shared_pools.is_empty());
    assert!(!load
        .reconciled
        .load
        .notes
        .iter()
        .any(|n| n.contains("one memory pool")));
    let f = imbalance(&load);
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.message.starts_with("CUDA3's compute buffer (2.05 GiB) is 7× the others' (CUDA0 300.0 MiB, CUDA1 300.0 MiB, CUDA2 300.0 MiB), by compute buffers"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .ends_with("so CUDA3 has 1.76 GiB less room for layers"),
        "{}",
        f.message
    );
    assert_eq!(
        f.device.as_ref().map(|d| d.to_string()).as_deref(),
        Some("CUDA3")
    );
    // llama.cpp's own flag, halving the default micro-batch of 512.
    assert!(f.hint.contains("-ub 256"), "{}", f.hint);
    assert!(!f.hint.contains("OLLAMA"), "{}", f.hint);
}

#[test]
fn a_second_heavy_buffer_does_not_hide_the_first() {
    // CUDA0 and CUDA3 several times CUDA1 and CUDA2: against "the others' largest" alone, CUDA3's 2100 MiB
    // would be compared with CUDA0's 1800 MiB and nothing said.
    let load = load_of_text("imbalance-2-of-4", &four_gpus([1800, 300, 300, 2100]));
    let f = imbalance(&load);
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    assert!(
        f.message.starts_with("CUDA3's compute buffer (2.05 GiB) and CUDA0's compute buffer (1.76 GiB) are 7× and 6× the others' (CUDA1 300.0 MiB, CUDA2 300.0 MiB)"),
        "{}",
        f.message
    );
    assert!(
        f.message.ends_with(
            "so CUDA3 has 1.76 GiB less room for layers, CUDA0 has 1.46 GiB less room for layers"
        ),
        "{}",
        f.message
    );
    assert!(f.hint.contains("-ub 256"), "{}", f.hint);
}

#[test]
fn buffers_within_a_few_times_of_each_other_and_one_small_gpu_are_no_imbalance() {
    // Three alike and one small: the small one is the odd one out, not the three heavy.
    let load = load_of_text("imbalance-one-small", &four_gpus([1800, 1800, 1800, 300]));
    assert!(imbalance(&load).is_empty(), "{:?}", load.findings);
    // Twice the others': no imbalance.
    let load = load_of_text("imbalance-twice", &four_gpus([300, 300, 300, 600]));
    assert!(imbalance(&load).is_empty(), "{:?}", load.findings);
}

#[test]
fn virtual_devices_of_one_pool_in_the_exit_table_are_never_compared() {
    // sample-logs/717-…: MTL0–MTL3 report the same total and free at exit while their self differs, one pool.
    // MTL3's compute raised from 300 to 1300 MiB (its self and unaccounted with it, the row still adds up)
    // would be 11× MTL0's 112 MiB: still no finding, the four share one memory.
    let path = root()
        .join("sample-logs")
        .join("717-llama-completion-metal-4-virtual-devices-breakdown.log");
    let real = std::fs::read_to_string(path).unwrap();
    let row = "|   - MTL3 (Apple M2 Ultra) | 165150 = 158091 + (2205 =  1137 +     768 +     300) +        4853 |";
    assert!(real.contains(row));
    let raised = real.replace(
        row,
        "|   - MTL3 (Apple M2 Ultra) | 165150 = 158091 + (3205 =  1137 +     768 +    1300) +        3853 |",
    );
    let load = load_of_text("imbalance-717", &raised);
    assert_eq!(load.reconciled.load.shared_pools.len(), 1);
    assert!(imbalance(&load).is_empty(), "{:?}", load.findings);
}
