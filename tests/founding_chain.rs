//! The second founding case of today (reconstructed from ollama#16599 and `docs/log-formats.md` §5.6): the same
//! load as `founding_today.rs` with the scheduler's half of the chain. Ollama's prediction (file size + KV at f16)
//! misses the 80 % single-GPU bar of the RTX 3090, so both GPUs go to llama-server although the buffers fit the
//! 3090 alone.

use crate::util::{analyze, root, run};
use vramdiff::model::scheduler::{GpuChoice, PredictionSource};
use vramdiff::model::{FindingCode, GIB};

const LOG: &str = "sample-logs/founding-today-chain-3090-4060-gemma4-31b.log";

fn gib(bytes: i64) -> f64 {
    (bytes as f64 / GIB as f64 * 100.0).round() / 100.0
}

#[test]
fn the_scheduler_half_of_the_chain_is_read_with_its_lines() {
    let a = analyze(&[&root().join(LOG)]);
    assert_eq!(a.loads.len(), 1);
    let load = &a.loads[0].reconciled.load;
    let s = load.scheduler.as_ref().expect("an Ollama ≥ 0.30 load");
    assert_eq!(s.environment_line, Some(1));
    assert_eq!(s.env("OLLAMA_KV_CACHE_TYPE"), Some("q8_0"));
    assert_eq!(s.env("OLLAMA_CONTEXT_LENGTH"), Some("16384"));
    assert_eq!(
        s.default_context.as_ref().map(|d| (d.num_ctx, d.line)),
        Some((Some(32768), 6))
    );
    // No single-GPU line after `using llama-server for model` (line 8): every GPU was handed over.
    assert_eq!(
        s.gpu_choice,
        GpuChoice::AllGpus {
            since_line: Some(8)
        }
    );
    let p = s.prediction.as_ref().unwrap();
    assert_eq!(p.source, PredictionSource::Computed);
    assert_eq!(
        (
            gib(p.total.bytes),
            gib(p.file_size.unwrap().bytes),
            gib(p.kv_f16.unwrap().bytes)
        ),
        (25.11, 17.61, 7.5)
    );
    let rtx3090 = &s.single_gpu_rule[0];
    assert!(!rtx3090.passes);
    assert_eq!(
        (
            gib(rtx3090.bar.bytes),
            gib(rtx3090.misses_by.unwrap().bytes)
        ),
        (17.84, 7.27)
    );
    assert_eq!(rtx3090.footprint_fits, Some(true));
    assert_eq!(gib(rtx3090.footprint_spare.unwrap().bytes), 3.35);
    assert_eq!(s.single_gpu_rule[1].footprint_fits, Some(false));
    assert_eq!(s.ps_table.len(), 1);
    assert_eq!(s.ps_table[0].size.bytes, 21_000_000_000);
    // The load starts at the scheduler's first line for it.
    assert_eq!(load.source.first_line, 8);
}

#[test]
fn the_report_explains_the_split_by_the_80_percent_rule_and_suggests_pinning() {
    let a = analyze(&[&root().join(LOG)]);
    let load = &a.loads[0];
    let split = load
        .findings
        .iter()
        .find(|f| f.code == FindingCode::NeedlessSplit)
        .expect("needless-split");
    for words in [
        "its prediction, 25.11 GiB",
        "80 %",
        "the bar is 17.84 GiB",
        "NVIDIA GeForce RTX 3090",
    ] {
        assert!(split.message.contains(words), "{words}: {}", split.message);
    }
    let settings: Vec<&str> = load
        .suggestions
        .iter()
        .map(|s| s.setting.as_str())
        .collect();
    assert!(settings
        .iter()
        .any(|s| s.starts_with("CUDA_VISIBLE_DEVICES=")));
    assert!(settings.contains(&"main_gpu=0"));
    let out = run(&[LOG], b"");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("OLLAMA_GPU_OVERHEAD="), "never suggested");
    assert!(text.contains("Ollama's chain of decisions:"));
    assert!(text.contains("2. Ollama's prediction: 25.11 GiB = file size 17.61 GiB + KV 7.50 GiB"));
    assert!(text.contains("yet the buffers allocated fit NVIDIA GeForce RTX 3090 alone"));
    let md = run(&["--format", "markdown", LOG], b"");
    assert!(String::from_utf8(md.stdout)
        .unwrap()
        .contains("### Ollama's chain of decisions"));
}
