//! `runtime-growth` in an excerpt (issue 35): an exit table pasted with the load's buffer lines but without the
//! fit's plan still shows growth, against the compute buffers the load allocated and the free memory the load
//! read; a difference inside the figures' rounding is never growth, and an exit table alone has no baseline.
//!
//! The load is the real excerpt `sample-logs/707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log`
//! (its buffer lines, 1–11; its fit's projection comes after them as pasted, 12–13, and is left out), followed by an exit table in the
//! shape of `sample-logs/717-llama-completion-metal-4-virtual-devices-breakdown.log` lines 5–10 (with 707's bare
//! `I ` prefix). No corpus log has an exit table after its load's buffers, so the table's figures are made up
//! and consistent: total = free + self + unaccounted, self = model + context + compute, model and context the
//! load's Vulkan0 buffers truncated (2883.51 → 2883, 544 + 21.25 → 565). The reading of free memory in
//! `with_reading` is a line in the shape of `sample-logs/706-…` line 21 with the 5150 MiB that 707's fit saw.

use crate::util::{analyze, root, scratch};
use vramdiff::model::{Concluded, Finding, Severity};

fn sample_707() -> String {
    std::fs::read_to_string(
        root()
            .join("sample-logs")
            .join("707-llama-server-vulkan-rtx4050laptop-gemma4-e4b-iswa-cpu-mapped.log"),
    )
    .unwrap()
}

/// The first `n` lines of 707.
fn head(n: usize) -> String {
    sample_707()
        .lines()
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The exit table with Vulkan0's compute and unaccounted (MiB) at exit, of a 6140 MiB device.
fn exit_table(compute: i64, unaccounted: i64) -> String {
    let (model, context, total) = (2883, 565, 6140);
    let self_ = model + context + compute;
    let free = total - self_ - unaccounted;
    format!(
        "I srv    operator(): cleaning up before exit...
I llama_memory_breakdown_print: | memory breakdown [MiB]         | total   free    self   model   context   compute    unaccounted |
I llama_memory_breakdown_print: |   - Vulkan0 (RTX 4050 Laptop GPU) |  {total} = {free:4} + ({self_:4} =  {model} +     {context} +     {compute:3}) +        {unaccounted:4} |
I llama_memory_breakdown_print: |   - Host                         |                  2305 =  2208 +       0 +      97                |
"
    )
}

fn load_of_text(tag: &str, log: &str) -> Concluded {
    let path = scratch(tag).join("log.txt");
    std::fs::write(&path, log).unwrap();
    let mut a = analyze(&[&path]);
    assert_eq!(a.loads.len(), 1, "{tag}");
    a.loads.remove(0)
}

fn growth(load: &Concluded) -> Vec<&Finding> {
    load.findings
        .iter()
        .filter(|f| f.code.as_str() == "runtime-growth")
        .collect()
}

#[test]
fn compute_growth_in_an_excerpt_is_measured_against_the_load_s_compute_buffers() {
    // 707's buffer lines only: no fit, no plan, no reading of free memory.
    let load = load_of_text("growth-excerpt", &(head(11) + &exit_table(698, 300)));
    assert!(load.reconciled.load.estimate.is_none());
    let f = growth(&load);
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    // 698 MiB at exit against the 186.30 MiB buffer of line 10.
    assert!(
        f.message.starts_with("memory grew after the load, by the exit table against the compute buffers allocated at load: Vulkan0: compute 186.3 MiB at load → 698.0 MiB at exit (+511.7 MiB)"),
        "{}",
        f.message
    );
    // Nothing to say of unaccounted: no reading of what was in use before the load.
    assert!(!f.message.contains("outside"), "{}", f.message);
    assert!(f.lines.contains(&10), "{:?}", f.lines);
    // No fit target to fall below: information.
    assert_eq!(f.severity, Severity::Info);
    // llama.cpp's flag, half the default micro-batch.
    assert!(f.hint.contains("-ub 256"), "{}", f.hint);
    assert!(!f.hint.contains("OLLAMA"), "{}", f.hint);
}

#[test]
fn memory_outside_llama_cpp_is_measured_against_the_load_s_reading_of_free_memory() {
    let with_reading = format!(
        "I llama_prepare_model_devices: using device Vulkan0 (NVIDIA GeForce RTX 4050 Laptop GPU) (0000:01:00.0) - 5150 MiB free\n{}{}",
        head(11),
        exit_table(186, 1194)
    );
    let load = load_of_text("growth-reading", &with_reading);
    let f = growth(&load);
    assert_eq!(f.len(), 1, "{:?}", load.findings);
    let f = f[0];
    // 1194 − (6140 − 5150) = 204 MiB; compute did not grow (186 at exit, 186.30 at load).
    assert!(
        f.message.starts_with("memory grew after the load, by the exit table against the free memory read before the load: Vulkan0: 204.0 MiB outside llama.cpp's accounting (unaccounted 1.17 GiB at exit, 990.0 MiB in use before the load as the load read it)"),
        "{}",
        f.message
    );
    assert!(!f.message.contains("compute"), "{}", f.message);
    assert!(f.lines.contains(&1), "{:?}", f.lines);
}

#[test]
fn rounding_and_an_exit_table_alone_are_never_growth() {
    // 187 MiB at exit against 186.30: inside the truncation of the table's figure.
    let load = load_of_text("growth-rounding", &(head(11) + &exit_table(187, 300)));
    assert!(growth(&load).is_empty(), "{:?}", load.findings);
    // The reading of free memory and unaccounted 3 MiB apart: three truncated figures, no growth either.
    let three = format!(
        "I llama_prepare_model_devices: using device Vulkan0 (NVIDIA GeForce RTX 4050 Laptop GPU) (0000:01:00.0) - 5150 MiB free\n{}{}",
        head(11),
        exit_table(186, 993)
    );
    assert!(growth(&load_of_text("growth-three", &three)).is_empty());
    // The exit table with nothing of the load before it: unaccounted is no baseline of its own.
    let load = load_of_text("growth-alone", &exit_table(698, 1194));
    assert!(growth(&load).is_empty(), "{:?}", load.findings);
    // sample-logs/717-…: four virtual devices of one pool, each counting the others' buffers as unaccounted.
    let load = load_of_text(
        "growth-717",
        &std::fs::read_to_string(
            root()
                .join("sample-logs")
                .join("717-llama-completion-metal-4-virtual-devices-breakdown.log"),
        )
        .unwrap(),
    );
    assert!(growth(&load).is_empty(), "{:?}", load.findings);
}
