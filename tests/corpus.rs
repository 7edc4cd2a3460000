//! Every corpus copy in sample-logs/ (a byte-for-byte copy of a file of the shared corpus, named by its corpus id
//! `NNN-…`; provenance in sample-logs/README.md) is read without error, with the number of loads its expect file
//! `sample-logs/<file>.expect.toml` gives (checked by eye against the log), and the figures of representative
//! loads pinned.

use crate::util::{analyze, expect, mib, root, run, sample_names, stdout};
use vramdiff::model::{Component, Engine, Verdict, GIB};

/// The corpus copies in sample-logs/: the samples whose name starts with a three-digit corpus id.
fn corpus_copies() -> Vec<String> {
    sample_names()
        .into_iter()
        .filter(|n| {
            n.len() > 4 && n.as_bytes()[..3].iter().all(u8::is_ascii_digit) && &n[3..4] == "-"
        })
        .collect()
}

fn corpus_file(prefix: &str) -> std::path::PathBuf {
    let name = corpus_copies()
        .into_iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no corpus copy {prefix} in sample-logs/"));
    root().join("sample-logs").join(name)
}

/// Through the library (the findings walker runs the binary): no read error, and the loads its expect file counts.
#[test]
fn every_corpus_file_reads_without_error_with_the_loads_counted_by_eye() {
    let copies = corpus_copies();
    for name in &copies {
        let path = root().join("sample-logs").join(name);
        let a = analyze(&[&path]);
        assert!(
            a.inputs[0].error.is_none(),
            "{name}: {:?}",
            a.inputs[0].error
        );
        let want = expect(&format!("sample-logs/{name}")).loads;
        assert_eq!(a.loads.len(), want, "{name}");
    }
    // The corpus's raw/ and exact/ files with ids 001–106, 201, 501–511, 703, 706–709, 715, 717, 719, 722 and
    // 801–814 (see sample-logs/README.md).
    assert_eq!(copies.len(), 66);
}

/// Every sample has a section in sample-logs/README.md (where it came from, what it exercises), every section
/// names a sample, and every corpus copy's section gives its corpus id and source.
/// Every log of the llama-server era (5NN) and the founding case of today: every memory-like line understood,
/// and the era known: each shows the runner or a line only llama-server prints (507's and 509's chunks of
/// buffer lines hold one, started by whom they do not say).
#[test]
fn llama_server_era_logs_have_no_memory_line_left_unread() {
    use vramdiff::model::Era;
    let names: Vec<String> = sample_names()
        .into_iter()
        .filter(|n| n.starts_with('5') || n.starts_with("founding-today"))
        .collect();
    assert_eq!(names.len(), 10);
    for name in names {
        let a = analyze(&[&root().join("sample-logs").join(&name)]);
        assert_eq!(a.inputs[0].unrecognized_memory_lines, 0, "{name}");
        let want = Era::LlamaServer;
        assert!(
            a.loads
                .iter()
                .all(|l| l.reconciled.load.runtime.era() == want),
            "{name}"
        );
    }
}

#[test]
fn every_sample_has_its_provenance_in_the_readme() {
    let readme = std::fs::read_to_string(root().join("sample-logs/README.md")).unwrap();
    let sections: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("### `")?.strip_suffix('`'))
        .collect();
    let mut sorted = sections.clone();
    sorted.sort();
    assert_eq!(sorted, sample_names(), "one README section per sample");
    for name in corpus_copies() {
        let section = readme.split(&format!("### `{name}`")).nth(1).unwrap();
        let section = section.split("\n### ").next().unwrap();
        let id = &name[..3];
        assert!(
            section.contains(&format!(
                "* **Corpus id:** {id} — unedited byte-for-byte copy of `/work/shared/corpus/"
            )),
            "{name}"
        );
        assert!(section.contains("* **Source:** "), "{name}");
    }
}

#[test]
fn llama_engine_full_offload_t4_001() {
    let a = analyze(&[&corpus_file("001")]);
    let load = &a.loads[0];
    assert_eq!(load.reconciled.load.engine, Engine::Llama);
    let graph = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::Graph)
        .unwrap();
    // memory.graph.full="560.0 MiB" against CUDA0 compute buffer 560.00 MiB.
    assert_eq!(graph.actual.unwrap().bytes, mib(560.0));
    assert_eq!(graph.verdict, Verdict::Match);
    let kv = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::Kv)
        .unwrap();
    assert_eq!(kv.actual.unwrap().bytes, mib(1024.0));
    assert_eq!(kv.verdict, Verdict::Match);
    // v0.3.x weights semantics: blocks = weights.total − kv.
    assert_eq!(
        load.reconciled
            .load
            .estimate
            .as_ref()
            .unwrap()
            .weights_semantics
            .as_str(),
        "blocks+kv"
    );
    assert_eq!(load.reconciled.load.settings.ctx_size, Some(8192));
}

#[test]
fn metal_partial_offload_008() {
    let a = analyze(&[&corpus_file("008")]);
    let load = &a.loads[0];
    assert_eq!(load.reconciled.load.actual.offloaded_layers, Some(20));
    let kv = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::Kv)
        .unwrap();
    // Metal 10000 + CPU 8000 MiB against memory.required.kv 17.6 GiB.
    assert_eq!(kv.actual.unwrap().bytes, mib(18000.0));
    assert_eq!(kv.verdict, Verdict::Match);
    assert_eq!(load.reconciled.load.settings.ctx_size, Some(128000));
}

#[test]
fn e8_estimate_after_starting_runner_stays_in_one_load_012() {
    let a = analyze(&[&corpus_file("012")]);
    assert_eq!(a.loads.len(), 1);
    let load = &a.loads[0];
    assert!(!load.reconciled.load.source.partial);
    assert_eq!(
        load.reconciled.load.estimate.as_ref().unwrap().layers.split,
        vec![37]
    );
    let w = load
        .reconciled
        .components
        .iter()
        .find(|c| c.component == Component::WeightsGpu)
        .unwrap();
    assert_eq!(w.verdict, Verdict::Match); // 58.6 + 1.1 GiB estimated, 59.8 GiB actual
    let rocm = load
        .reconciled
        .devices
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("ROCm0"))
        .unwrap();
    assert_eq!(rocm.verdict, Verdict::Over); // 62.4 GiB estimated, 60.4 GiB actual
}

#[test]
fn memory_summary_after_commit_is_the_actual_009() {
    let a = analyze(&[&corpus_file("009")]);
    let load = &a.loads[0];
    assert!(load.reconciled.load.estimate.is_none());
    assert_eq!(load.reconciled.load.engine, Engine::Ollama);
    assert_eq!(load.reconciled.load.settings.ctx_size, Some(32768));
    assert_eq!(load.reconciled.load.settings.flash_attention, Some(true));
    assert_eq!(
        load.reconciled.load.actual.reported_total.unwrap().bytes,
        (51.9 * GIB as f64).round() as i64
    );
    let cuda = load
        .reconciled
        .devices
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("CUDA0"))
        .unwrap();
    // 19.9 GiB weights + 1.1 GiB KV + 884.1 MiB graph
    let want = (19.9 * GIB as f64).round() as i64 + (1.1 * GIB as f64).round() as i64 + mib(884.1);
    assert_eq!(cuda.actual.unwrap().bytes, want);
}

#[test]
fn duplicate_weight_buffers_are_both_counted_and_noted_025() {
    let a = analyze(&[&corpus_file("025")]);
    let load = &a.loads[0];
    let cuda: i64 = load
        .reconciled
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.device == vramdiff::model::Device::named("CUDA0"))
        .map(|b| b.size.bytes)
        .sum();
    assert_eq!(cuda, mib(2845.92) + mib(2920.17));
    assert!(load
        .reconciled
        .load
        .notes
        .iter()
        .any(|n| n.contains("second") && n.contains("CUDA0")));
    assert!(load.reconciled.load.source.partial);
}

#[test]
fn llama_server_fit_probe_tables_are_projections_042_043() {
    // 042: both tables are fit probes (test allocations). The log stops before the fit's result; the probe
    // the search accepted (`set ngl_per_device[1].n_layer=16`) stands in for the plan.
    let a = analyze(&[&corpus_file("042")]);
    let load = &a.loads[0];
    assert!(load.reconciled.load.actual.breakdown.is_empty());
    let e = load.reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(e.form.as_str(), "fit-probe");
    assert_eq!(e.layers.split, vec![0, 16]);
    let cuda1 = e
        .per_device
        .iter()
        .find(|d| d.device == vramdiff::model::Device::named("CUDA1"))
        .unwrap();
    assert_eq!(cuda1.total.unwrap().bytes, mib(17829.0));
    assert_eq!(cuda1.kv.unwrap().bytes, mib(15360.0));
    assert_eq!(e.fit.as_ref().unwrap().probes, 2);
    // 043: the first table (42 dense-only layers) equals the fit's result line: it is the plan; the second
    // (24770 MiB on a 7807 MiB card) is a rejected probe, never an underestimate.
    let a = analyze(&[&corpus_file("043")]);
    let load = &a.loads[0];
    assert!(load.reconciled.load.actual.breakdown.is_empty());
    assert_eq!(
        load.reconciled
            .load
            .estimate
            .as_ref()
            .unwrap()
            .form
            .as_str(),
        "fit-plan"
    );
    assert_eq!(
        load.reconciled.load.estimate.as_ref().unwrap().per_device[0]
            .total
            .unwrap()
            .bytes,
        mib(5658.0)
    );
    assert!(load
        .reconciled
        .devices
        .iter()
        .all(|d| d.verdict != Verdict::Under));
}

#[test]
fn catalan_journald_and_two_gpu_fit_request_032() {
    let a = analyze(&[&corpus_file("032")]);
    let load = &a.loads[0];
    assert_eq!(load.reconciled.load.gpus.len(), 2);
    assert_eq!(
        load.reconciled.load.gpus[0].id,
        "GPU-d5703024-26e4-303b-8104-7d33cce0eeb1"
    );
    assert_eq!(load.reconciled.load.settings.gpu_layers, Some(37));
}

#[test]
fn rewrapped_four_gpu_estimate_015() {
    let a = analyze(&[&corpus_file("015")]);
    let e = a.loads[0].reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(e.layers.split, vec![11, 11, 11, 11]);
    assert_eq!(e.available.len(), 4);
    assert_eq!(
        a.loads[0].reconciled.load.settings.flash_attention,
        Some(true)
    );
}

#[test]
fn projector_first_in_e6_and_cut_line_030() {
    let a = analyze(&[&corpus_file("030")]);
    let e = a.loads[0].reconciled.load.estimate.as_ref().unwrap();
    assert_eq!(
        e.projector_weights.unwrap().bytes,
        (1.8 * GIB as f64).round() as i64
    );
    assert!(e.available.is_empty(), "memory.available was cut mid-key");
    assert!(a.loads[0]
        .reconciled
        .load
        .notes
        .iter()
        .any(|n| n.contains("cut short")));
}

/// The actual of `component` in `load`, in bytes.
fn actual_of(load: &vramdiff::model::Concluded, component: Component) -> i64 {
    load.reconciled
        .components
        .iter()
        .find(|c| c.component == component)
        .and_then(|c| c.actual)
        .unwrap_or_else(|| panic!("no actual {component:?}"))
        .bytes
}

#[test]
fn three_files_in_one_paste_are_three_loads_703() {
    // Each Markdown block headed by its file's name is its own load (ctx 2048, 4096, 8192): the KV scales with
    // the context, the weights are the same each time, and no load adds another's host buffers.
    let a = analyze(&[&corpus_file("703")]);
    assert_eq!(a.loads.len(), 3);
    let kv: Vec<i64> = a
        .loads
        .iter()
        .map(|l| actual_of(l, Component::Kv))
        .collect();
    assert_eq!(kv, [mib(540.0), mib(1080.0), mib(2160.0)]);
    let graph: Vec<i64> = a
        .loads
        .iter()
        .map(|l| actual_of(l, Component::Graph))
        .collect();
    assert_eq!(graph, [mib(104.27), mib(188.27), mib(340.27)]);
    for (load, host) in a
        .loads
        .iter()
        .zip(["CUDA_Host", "CPU_Mapped", "CPU_Mapped"])
    {
        assert_eq!(actual_of(load, Component::WeightsGpu), mib(11160.99));
        assert_eq!(actual_of(load, Component::WeightsHost), mib(137.5));
        let weights: Vec<&str> = load
            .reconciled
            .load
            .actual
            .buffers
            .iter()
            .filter(|b| b.host && b.kind == vramdiff::model::BufferKind::Model)
            .map(|b| b.buffer.as_str())
            .collect();
        assert_eq!(weights, [host]);
    }
    let lines: Vec<(u64, u64)> = a
        .loads
        .iter()
        .map(|l| {
            (
                l.reconciled.load.source.first_line,
                l.reconciled.load.source.last_line,
            )
        })
        .collect();
    assert_eq!(lines, [(3, 8), (13, 18), (23, 28)]);
}

#[test]
fn grep_output_over_three_files_is_three_loads_703() {
    // 703's lines as `grep -n 'buffer size' raw-log-ctx*.txt` prints them (each file's name and line number
    // before its lines), read from standard input: a new file name starts a new load.
    let text = std::fs::read_to_string(corpus_file("703")).unwrap();
    let mut grep = String::new();
    let mut file = "";
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            continue;
        }
        if let Some(name) = line.strip_prefix('`').and_then(|l| l.strip_suffix('`')) {
            file = name;
        } else if line.contains("buffer size") {
            grep.push_str(&format!("{file}:{}:{line}\n", i + 1));
        }
    }
    let out = run(
        &["--format", "json", "--fail-on", "never", "-"],
        grep.as_bytes(),
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let loads = report["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 3);
    let kv: Vec<f64> = loads
        .iter()
        .map(|l| {
            let kv = l["components"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["component"] == "kv")
                .unwrap();
            kv["actual"]["bytes"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(kv, [540.0, 1080.0, 2160.0].map(|m| mib(m) as f64));
    assert_eq!(report["inputs"][0]["recognized_lines"], 18);
}

#[test]
fn bare_level_letters_of_standalone_llama_cpp_707() {
    // Every line starts with `I `: all 13 are read (2 were before framing stripped the letter).
    let a = analyze(&[&corpus_file("707")]);
    assert_eq!(a.inputs[0].recognized_lines, 13);
    assert_eq!(a.inputs[0].unrecognized_memory_lines, 0);
    let load = &a.loads[0];
    assert_eq!(load.reconciled.load.actual.offloaded_layers, Some(43));
    assert_eq!(actual_of(load, Component::WeightsGpu), mib(2883.51));
    // Gemma 4's per-layer embeddings in CPU_Mapped, with every layer on the GPU.
    assert_eq!(actual_of(load, Component::WeightsHost), mib(2208.0));
    // Two KV caches (full and sliding-window attention) on Vulkan0.
    assert_eq!(actual_of(load, Component::Kv), mib(544.0) + mib(21.25));
    assert_eq!(actual_of(load, Component::Graph), mib(186.30));
    assert_eq!(
        load.reconciled.load.settings.kv_cache_type.as_deref(),
        Some("q8_0")
    );
}
