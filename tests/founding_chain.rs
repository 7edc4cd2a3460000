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
    assert_eq!(s.ps_table[0].size.bytes, 22_000_000_000);
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

#[test]
fn a_pasted_ollama_ps_table_far_above_the_buffers_is_a_ps_mismatch() {
    // The chain's log with the `ollama ps` row at about twice the buffers, as ollama#16637 published (mmap
    // counted twice): built from the row's shape in `docs/log-formats.md` §5.6 item 8.
    let log = std::fs::read_to_string(root().join(LOG)).unwrap();
    assert!(log.contains("    22 GB    100% GPU"));
    let doubled = log.replace("    22 GB    100% GPU", "    40 GB    100% GPU");
    let out = run(&["-"], doubled.as_bytes());
    let text = String::from_utf8(out.stdout).unwrap();
    let finding = text
        .lines()
        .find(|l| l.contains("ps-mismatch"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        finding
            .contains("Ollama's `ollama ps` (line 143, 100% GPU) says gemma4:31b holds 37.25 GiB"),
        "{finding}"
    );
    // The figure as pasted (22 GB, 20.49 GiB on GPUs) is within the margin of the 18.45 GiB of buffers: no alarm.
    let text = String::from_utf8(run(&[LOG], b"").stdout).unwrap();
    assert!(!text.contains("ps-mismatch"));
}

#[test]
fn knobs_that_do_not_reach_the_fit_are_named_with_the_one_that_does() {
    // The chain's log with OLLAMA_GPU_OVERHEAD set and llama.cpp's overwrite warning (shapes of
    // `docs/log-formats.md` §5.6 items 5 and 6).
    let log = std::fs::read_to_string(root().join(LOG)).unwrap();
    let edited = log
        .replace("OLLAMA_GPU_OVERHEAD:0 ", "OLLAMA_GPU_OVERHEAD:1073741824 ")
        .replace(
            "srv  llama_server: loading model\n",
            "srv  llama_server: loading model\nwarn: LLAMA_ARG_CTX_SIZE environment variable is set, but will be overwritten by command line argument -c\n",
        );
    assert_ne!(edited, log);
    let text = String::from_utf8(run(&["-"], edited.as_bytes()).stdout).unwrap();
    let ignored: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("knob-ignored"))
        .collect();
    assert_eq!(ignored.len(), 2, "{text}");
    assert!(ignored[0].contains("OLLAMA_GPU_OVERHEAD=1073741824 is set in the server's environment (server config, line 1) but does not reach the placement"));
    assert!(ignored[1].contains(
        "LLAMA_ARG_CTX_SIZE is set, but llama.cpp says the command line's -c overwrites it"
    ));
    let hints: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("knob-ignored"))
        .filter(|l| l.trim_start().starts_with("hint:"))
        .take(2)
        .collect();
    assert!(
        hints[0].contains("what does: LLAMA_ARG_FIT_TARGET"),
        "{hints:?}"
    );
    assert!(
        hints[1].contains("set num_ctx instead, which Ollama passes as -c"),
        "{hints:?}"
    );
    // The original log sets nothing of the kind.
    let text = String::from_utf8(run(&[LOG], b"").stdout).unwrap();
    assert!(!text.contains("knob-ignored"));
}

/// A load that fails, Ollama's one retry with a smaller automatic context, and the retry that loads (lines
/// built from the shapes of `docs/log-formats.md` §5.6 items 2, 6 and 7; the cmd as in corpus 505).
const RETRIED: &str = r#"time=2026-06-20T10:07:00.100Z level=INFO source=server.go:109 msg="using llama-server for model" model=/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0
time=2026-06-20T10:07:00.101Z level=INFO source=llama_server.go:425 msg="starting llama-server" cmd="/usr/lib/ollama/llama-server --model /root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0 --port 36103 -c 32768 -np 1 --flash-attn auto -b 512 -ub 512"
time=2026-06-20T10:07:00.102Z level=INFO source=llama_server.go:960 msg="loading model via llama-server" model=/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6144.00 MiB on device 0: cudaMalloc failed: out of memory
time=2026-06-20T10:07:02.550Z level=WARN source=sched.go:702 msg="llama-server load failed; reducing automatic context and retrying once" model=/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0 old_num_ctx=32768 effective_num_ctx=32768 new_num_ctx=8192 old_num_batch=512 new_num_batch=512 error="llama-server process has terminated: exit status 1"
time=2026-06-20T10:07:02.560Z level=INFO source=llama_server.go:425 msg="starting llama-server" cmd="/usr/lib/ollama/llama-server --model /root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0 --port 36104 -c 8192 -np 1 --flash-attn auto -b 512 -ub 512"
time=2026-06-20T10:07:02.561Z level=INFO source=llama_server.go:960 msg="loading model via llama-server" model=/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0
time=2026-06-20T10:07:05.700Z level=INFO source=llama_server.go:1362 msg="llama-server started in 3.14 seconds"
"#;

#[test]
fn ollamas_retry_with_a_smaller_context_is_named_on_both_loads() {
    let text = String::from_utf8(run(&["-"], RETRIED.as_bytes()).stdout).unwrap();
    let failed = text
        .lines()
        .find(|l| l.contains("load-failed"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        failed
            .contains("Ollama then retried once with the context cut from 32768 to 8192 (line 5)"),
        "{failed}"
    );
    let reduced = text
        .lines()
        .find(|l| l.contains("context-reduced"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        reduced.contains("Ollama's retry cut the context from 32768 to 8192 (line 5): llama-server failed to start at 32768 (llama-server process has terminated: exit status 1)"),
        "{reduced}"
    );
    assert!(
        text.contains("retries: Ollama retried once with num_ctx cut from 32768 to 8192 (line 5)")
    );
    assert!(text.contains("choose the context yourself with num_ctx"));
}
