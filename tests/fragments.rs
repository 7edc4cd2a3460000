//! Fragments as a property (issue 52, part 2): users paste a piece of a log, not the log. For every real log
//! bundled in the repository (the logs of `sample-logs/` and the corpus copies under `tests/data/`) and a
//! contiguous window of it that holds a memory line, the window must give at least one load; every fact a
//! window's load reports must be the whole log's fact for that load (a fragment may know less, never something
//! else); and its findings must be the whole log's plus at most `incomplete-load`.
//!
//! Windows are O(n²) per log, so they are sampled: proptest with a fixed seed per log picks a memory line of it
//! and the window's two ends around that line. CI runs [`CI_WINDOWS_PER_LOG`] windows a log and fails on any
//! violation; `VRAMDIFF_FRAGMENT_CASES=N cargo test
//! --test integration fragment_windows_long_run -- --ignored --nocapture` runs N and prints the violations by
//! class (docs/testing.md has the figures of a long run and what "agrees" means).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;
use vramdiff::model::{Concluded, Engine, FindingCode, Runtime};

use crate::properties::analyze;
use crate::util::root;

/// Windows checked in CI per log: each log's windows come from its own seed (the sampler's seed and the log's
/// name), so adding a log adds its windows and moves no other log's.
const CI_WINDOWS_PER_LOG: u32 = 3;

/// The seed of the window sampler: the same windows in every run.
const SEED: [u8; 32] = *b"vramdiff issue 52 fragment seed!";

/// One real log: its name, its lines, the whole log's loads and the lines that carry a memory figure.
struct RealLog {
    name: String,
    lines: Vec<String>,
    whole: Vec<Concluded>,
    memory_lines: Vec<u64>,
}

/// Every real log bundled in the repository. Not the nvidia-smi captures (no load), nor `tests/fixtures/`
/// (each edited on purpose, see its README).
fn real_logs() -> &'static [RealLog] {
    static LOGS: OnceLock<Vec<RealLog>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let mut paths = Vec::new();
        for (dir, suffix) in [
            ("sample-logs", ".log"),
            ("tests/data/follow", ".log"),
            ("tests/data/oracle/b11549/logs", ".log"),
            ("tests/data/peer-vectors", ".input"),
        ] {
            for entry in std::fs::read_dir(root().join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.to_string_lossy().ends_with(suffix) {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        paths
            .into_iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                let name = path
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let whole = analyze(&name, text.as_bytes()).loads;
                let mut memory_lines: Vec<u64> = whole.iter().flat_map(memory_lines).collect();
                memory_lines.sort_unstable();
                memory_lines.dedup();
                let lines = text.lines().map(str::to_string).collect();
                (!memory_lines.is_empty()).then_some(RealLog {
                    name,
                    lines,
                    whole,
                    memory_lines,
                })
            })
            .collect()
    })
}

/// The lines a load's memory figures were read from: its buffers, breakdown rows, estimate and serving
/// figures.
fn memory_lines(load: &Concluded) -> Vec<u64> {
    let l = &load.reconciled.load;
    let mut lines: Vec<u64> = l.actual.buffers.iter().map(|b| b.line).collect();
    lines.extend(l.actual.breakdown.iter().map(|r| r.line));
    for part in [
        serde_json::to_value(&l.estimate).unwrap(),
        serde_json::to_value(&l.serving).unwrap(),
    ] {
        collect_lines(&part, &mut lines);
    }
    lines
}

fn collect_lines(v: &Value, out: &mut Vec<u64>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("line", Value::Number(n)) => out.extend(n.as_u64()),
                    ("lines", Value::Array(items)) => {
                        out.extend(items.iter().filter_map(Value::as_u64))
                    }
                    _ => collect_lines(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_lines(v, out)),
        _ => {}
    }
}

/// The facts a load reports that a fragment must not contradict, each a path and a value; line numbers are
/// shifted by `offset` into the whole log's numbering.
fn facts(load: &Concluded, offset: u64) -> BTreeMap<String, Value> {
    let l = &load.reconciled.load;
    let mut facts = BTreeMap::new();
    let mut put = |k: String, v: Value| {
        if !v.is_null() {
            facts.insert(k, v);
        }
    };
    if l.engine != Engine::Unknown {
        put("engine".into(), serde_json::to_value(l.engine).unwrap());
    }
    if l.runtime != Runtime::Unknown {
        put("runtime".into(), Value::String(format!("{:?}", l.runtime)));
    }
    put(
        "ollama_version".into(),
        serde_json::to_value(&l.ollama_version).unwrap(),
    );
    put(
        "llama_cpp_build".into(),
        serde_json::to_value(&l.llama_cpp_build).unwrap(),
    );
    if let Value::Object(settings) = serde_json::to_value(&l.settings).unwrap() {
        for (k, v) in settings {
            if !k.ends_with("_line") {
                put(format!("settings.{k}"), v);
            }
        }
    }
    for b in &l.actual.buffers {
        let mut v = serde_json::to_value(b).unwrap();
        v.as_object_mut().unwrap().remove("line");
        // Several buffers can share a line (vLLM's advisory names a rank's KV cache, activation peak and
        // non-torch memory at once): the buffer's name, backend-free, tells them apart.
        put(
            format!("buffer@{}/{}", b.line + offset, generic_gpu(&b.buffer)),
            v,
        );
    }
    put(
        "offloaded_layers".into(),
        serde_json::json!(l.actual.offloaded_layers),
    );
    put(
        "total_layers".into(),
        serde_json::json!(l.actual.total_layers),
    );
    facts
}

/// `window` is `whole` with only a device's backend unknown: a serving engine's rank is `GPU1` until its
/// platform line names `CUDA1`; or a buffer with its device unknown (`"device": "unknown"`, neither a GPU nor
/// the host): clip's size lines where the window holds no line that says where clip runs.
fn knows_less(window: &Value, whole: &Value) -> bool {
    (generic_gpu(&window.to_string()) == generic_gpu(&whole.to_string())
        && window.to_string().contains("GPU"))
        || device_not_known(window, whole)
}

/// `window` is the buffer `whole` with its device unknown, and so not known to be the host.
fn device_not_known(window: &Value, whole: &Value) -> bool {
    let placed = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("device");
            o.remove("host");
        }
        v
    };
    window.get("device").and_then(Value::as_str) == Some("unknown")
        && window.get("host") == Some(&Value::Bool(false))
        && placed(window) == placed(whole)
}

/// The window's runtime is the whole log's with less known: llama-server whose launcher the window does not
/// name, where the whole log names it (Ollama ≥ 0.30 relays llama-server's lines unchanged, so a window of
/// them alone cannot tell); Ollama's scheduler whose figures (its estimator's or its engine's) the window
/// does not name, where the whole log's load requests do. Nothing else: a window that names a launcher or
/// an Ollama placer must name the whole log's.
fn runtime_knows_less(window: &Value, whole: &Value) -> bool {
    let name = |r: Runtime| Value::String(format!("{r:?}"));
    (*window == name(Runtime::LlamaCppLauncherUnknown)
        && (*whole == name(Runtime::OllamaFit) || *whole == name(Runtime::LlamaCpp)))
        || (*window == name(Runtime::OllamaPlacerUnknown)
            && (*whole == name(Runtime::OllamaEstimator) || *whole == name(Runtime::OllamaEngine)))
}

/// `text` with every `CUDA1`, `ROCm1` as `GPU1`.
fn generic_gpu(text: &str) -> String {
    static GPU: OnceLock<regex::Regex> = OnceLock::new();
    let gpu = GPU.get_or_init(|| regex::Regex::new(r"\b(?:CUDA|ROCm|GPU)([0-9]+)\b").unwrap());
    gpu.replace_all(text, "GPU$1").into_owned()
}

/// A buffer the whole log holds too, known as precisely or less: the same allocation (device, buffer, kind,
/// component) whose size range meets the whole log's. A fragment can read it from a coarser line the whole log
/// improves on later (vLLM's `Available KV cache memory: 44.59 GiB`, then the exact bytes of its advisory), or
/// see one of several reservations of a compute buffer, whose live size the whole log itself only bounds
/// (peer vector 316): the window's figure is one the whole log allows. A draft's buffer the window cannot
/// know for the draft's is the same allocation too.
fn same_quantity(window: &Value, whole: &BTreeMap<String, Value>) -> bool {
    // A rank's `GPU1` is the whole log's `CUDA1` (as in `knows_less`).
    let identity = |v: &Value| {
        ["buffer", "device", "kind", "host", "projector"]
            .map(|k| generic_gpu(&v.get(k).map(Value::to_string).unwrap_or_default()))
    };
    // The whole log calls a speculative draft's buffers `draft` because it saw `creating MTP draft context`
    // before them; a window that starts after that line knows only the function that printed them
    // (`llama_kv_cache`, `sched_reserve`): the same allocation, attributed less precisely (706).
    let component_agrees = |w: &Value, e: &Value| {
        w.get("component") == e.get("component")
            || e.get("component").and_then(Value::as_str) == Some("draft")
    };
    let range = |v: &Value| {
        let size = &v["size"];
        (size["low"].as_i64(), size["high"].as_i64())
    };
    let (Some(low), Some(high)) = range(window) else {
        return false;
    };
    whole
        .iter()
        .filter(|(k, _)| k.starts_with("buffer@"))
        .any(|(_, e)| match range(e) {
            (Some(l), Some(h)) => {
                identity(e) == identity(window)
                    && component_agrees(window, e)
                    && low <= h
                    && l <= high
            }
            _ => false,
        })
}

/// `load` alone, as `format` reports it.
fn rendered(load: Concluded, format: vramdiff::report::Format) -> String {
    let analysis = vramdiff::model::Analysis {
        inputs: vec![],
        loads: vec![load],
    };
    let bytes = vramdiff::report::reporter(format, vramdiff::report::ReportOptions::default())
        .render(&analysis);
    String::from_utf8(bytes).unwrap()
}

/// The findings of a load, as codes.
fn codes(load: &Concluded) -> Vec<FindingCode> {
    load.findings.iter().map(|f| f.code).collect()
}

/// What is wrong with the window `[start, end)` (0-based lines) of `log`, each as a class and a detail.
fn violations(log: &RealLog, start: usize, end: usize) -> Vec<(String, String)> {
    let text = log.lines[start..end].join("\n") + "\n";
    let offset = start as u64;
    let window = analyze(&log.name, text.as_bytes()).loads;
    let mut out = Vec::new();
    let held: Vec<u64> = log
        .memory_lines
        .iter()
        .copied()
        .filter(|&l| l > offset && l <= end as u64)
        .collect();
    if window.is_empty() && !held.is_empty() {
        out.push(("no-load".into(), format!("memory lines {held:?}")));
    }
    for w in &window {
        // The whole log's load this one is part of: the one holding most of its memory lines, else its first
        // line.
        let mine: Vec<u64> = memory_lines(w).iter().map(|l| l + offset).collect();
        let first = w.reconciled.load.source.first_line + offset;
        let whole = log
            .whole
            .iter()
            .max_by_key(|h| {
                let theirs = memory_lines(h);
                let src = &h.reconciled.load.source;
                (
                    mine.iter().filter(|l| theirs.contains(l)).count(),
                    src.first_line <= first && first <= src.last_line,
                )
            })
            .expect("the whole log has a load");
        let expected = facts(whole, 0);
        for (k, v) in facts(w, offset) {
            match expected.get(&k) {
                Some(e) if *e == v || knows_less(&v, e) => {}
                Some(e) if k == "runtime" && runtime_knows_less(&v, e) => {}
                _ if k.starts_with("buffer@") && same_quantity(&v, &expected) => {}
                Some(e) => out.push((
                    format!("differs:{}", k.split('@').next().unwrap()),
                    format!("{k}: window {v}, whole {e}"),
                )),
                None if k.starts_with("buffer@") => out.push((
                    format!("extra:{}", k.split('@').next().unwrap()),
                    format!("{k}: {v}"),
                )),
                // A setting the whole log does not know is something else, too.
                None => out.push((format!("extra:{k}"), format!("{v}"))),
            }
        }
        // Not a violation (a fragment may know less), but measured: the engine a window leaves unknown.
        if w.reconciled.load.engine == Engine::Unknown
            && whole.reconciled.load.engine != Engine::Unknown
        {
            out.push((
                "measure:engine-unknown".into(),
                format!("whole {}", whole.reconciled.load.engine.as_str()),
            ));
        }
        let mut allowed = codes(whole);
        // The same fact a window can only state the weaker way: layers on the host because Ollama's estimate
        // had no room (`partial-offload`) is what the whole log says more sharply when its measured sizes show
        // they would have fit (`cpu-offload-with-free-vram`, which replaces it: `checks/partial_offload.rs`).
        if allowed.contains(&FindingCode::CpuOffloadWithFreeVram) {
            allowed.push(FindingCode::PartialOffload);
        }
        for c in codes(w) {
            if c != FindingCode::IncompleteLoad && !allowed.contains(&c) {
                out.push((format!("finding:{c}"), format!("whole has {allowed:?}")));
            }
        }
    }
    out
}

/// `per_log` sampled windows of every log; the violations found, each with its log and window.
fn sample_windows(per_log: u32, measure: bool) -> Vec<(String, usize, usize, String, String)> {
    use proptest::strategy::{Strategy, ValueTree};
    let strategy = (
        proptest::num::u64::ANY,
        proptest::num::u64::ANY,
        proptest::num::u64::ANY,
    );
    let mut found = Vec::new();
    for log in real_logs() {
        // FNV-1a of the log's name, folded into the seed.
        let hash = log.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mut seed = SEED;
        for (s, h) in seed.iter_mut().zip(hash.to_le_bytes()) {
            *s ^= h;
        }
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
        );
        for _ in 0..per_log {
            let (m, a, b) = strategy.new_tree(&mut runner).unwrap().current();
            // A memory line, then the window's ends around it.
            let line = log.memory_lines[(m % log.memory_lines.len() as u64) as usize] as usize - 1;
            let start = (a % (line as u64 + 1)) as usize;
            let end = line + 1 + (b % (log.lines.len() - line) as u64) as usize;
            for (class, detail) in violations(log, start, end)
                .into_iter()
                .filter(|(c, _)| measure || !c.starts_with("measure:"))
            {
                found.push((log.name.clone(), start + 1, end, class, detail));
            }
        }
    }
    found
}

#[test]
fn every_window_with_a_memory_line_gives_a_load_that_agrees_with_the_whole_log() {
    let found = sample_windows(CI_WINDOWS_PER_LOG, false);
    let show = found
        .iter()
        .take(20)
        .map(|(name, a, b, class, detail)| format!("{name} lines {a}–{b}: {class}: {detail}"))
        .collect::<Vec<String>>()
        .join("\n");
    assert!(found.is_empty(), "{} violations:\n{show}", found.len());
}

/// The long run: `VRAMDIFF_FRAGMENT_CASES` windows (default 20 000, spread evenly over the logs), every
/// violation counted by class.
#[test]
#[ignore]
fn fragment_windows_long_run() {
    let cases = std::env::var("VRAMDIFF_FRAGMENT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let started = std::time::Instant::now();
    let per_log = (cases / real_logs().len().max(1) as u32).max(1);
    let cases = per_log as usize * real_logs().len();
    let found = sample_windows(per_log, true);
    let mut by_class: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_log: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _, _, class, _) in &found {
        *by_class.entry(class).or_default() += 1;
        *by_log.entry(name).or_default() += 1;
    }
    let violations: Vec<_> = found
        .iter()
        .filter(|(_, _, _, class, _)| !class.starts_with("measure:"))
        .collect();
    let mut windows: Vec<(&str, usize, usize)> = violations
        .iter()
        .map(|(name, a, b, _, _)| (name.as_str(), *a, *b))
        .collect();
    windows.sort_unstable();
    windows.dedup();
    eprintln!(
        "{cases} windows of {} logs in {:.1} s: {} violations in {} windows",
        real_logs().len(),
        started.elapsed().as_secs_f64(),
        violations.len(),
        windows.len()
    );
    eprintln!("by class: {by_class:#?}\nby log: {by_log:#?}");
    for (name, a, b, class, detail) in violations.iter().take(1000) {
        eprintln!("{name} lines {a}–{b}: {class}: {detail}");
    }
    // `VRAMDIFF_FRAGMENT_MEASURES=1` prints the measured windows too (an engine the window leaves unknown):
    // where to look for a line only one runtime prints that the inference does not read yet.
    if std::env::var_os("VRAMDIFF_FRAGMENT_MEASURES").is_some() {
        for (name, a, b, class, detail) in found.iter().filter(|f| f.3.starts_with("measure:")) {
            eprintln!("{name} lines {a}–{b}: {class}: {detail}");
        }
    }
    assert!(violations.is_empty());
}

/// The sample log whose name starts with `prefix`: its name and its text.
fn sample_log(prefix: &str) -> (String, String) {
    let dir = root().join("sample-logs");
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(prefix) && n.ends_with(".log"))
        .unwrap();
    let text = std::fs::read_to_string(dir.join(&name)).unwrap();
    (name, text)
}

/// Lines `a..=b` (1-based) of a sample log, as a fragment.
fn excerpt(prefix: &str, ranges: &[(usize, usize)]) -> String {
    let (_, text) = sample_log(prefix);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for &(a, b) in ranges {
        for line in &lines[a - 1..b] {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn only_load(text: &str) -> Concluded {
    let mut loads = analyze("fragment.log", text.as_bytes()).loads;
    assert_eq!(loads.len(), 1, "{text}");
    loads.remove(0)
}

#[test]
fn a_fit_projection_alone_keeps_the_free_memory_it_prints() {
    // `sample-logs/707-…`, lines 12–13: `projected to use 3635 MiB … vs. 5150 MiB of free device memory` and the
    // decision, without the device lines before them.
    let l = only_load(&excerpt("707-", &[(12, 13)]));
    let fit = l
        .reconciled
        .load
        .estimate
        .as_ref()
        .unwrap()
        .fit
        .as_ref()
        .unwrap();
    assert_eq!(fit.free.len(), 1);
    assert_eq!(fit.free[0].free.bytes, 5150 * vramdiff::model::MIB);
    assert_eq!(l.reconciled.load.engine, Engine::Llama);
    let text = rendered(l, vramdiff::report::Format::Text);
    assert!(
        text.contains("  GPUs: GPU0, 5.03 GiB free (--fit, line 1)"),
        "{text}"
    );
}

#[test]
fn a_command_line_pasted_above_an_excerpt_gives_its_settings() {
    // `sample-logs/706-…`: the wrapper's `argv: llama-server … --ctx-size 8192 --batch-size 2048 --ubatch-size
    // 512 … --spec-type draft-mtp` (line 1), then only the weight buffers (lines 30–32).
    let l = only_load(&excerpt("706-", &[(1, 1), (30, 32)]));
    let s = &l.reconciled.load.settings;
    assert_eq!(
        (s.ctx_size, s.batch_size, s.ubatch_size),
        (Some(8192), Some(2048), Some(512))
    );
    assert_eq!(s.speculative.as_deref(), Some("draft-mtp"));
    assert_eq!(l.reconciled.load.engine, Engine::Llama);
}

#[test]
fn layers_left_on_the_cpu_by_a_fit_outside_the_paste_are_no_alarm() {
    // `sample-logs/706-…`: the whole log's fit missed its 1186 MiB target by 77 MiB with the user's context and
    // kept 65 of 66 layers (lines 5–18); from its `using device Vulkan0 … 23525 MiB free` line on (19–65) the
    // paste shows the 65/66 layers but neither the fit nor a `-ngl`, so it cannot say the layer had room.
    let codes = |text: &str| codes(&only_load(text));
    let whole = codes(&sample_log("706-").1);
    assert!(whole.contains(&FindingCode::PartialOffload), "{whole:?}");
    assert!(!whole.contains(&FindingCode::CpuOffloadWithFreeVram));
    let window = codes(&excerpt("706-", &[(19, 65)]));
    assert!(
        !window.contains(&FindingCode::CpuOffloadWithFreeVram),
        "{window:?}"
    );
    // With the command line pasted above it (no `-ngl`: the fit chose), still no claim the log cannot back.
    let with_argv = codes(&excerpt("706-", &[(1, 1), (19, 65)]));
    assert!(
        !with_argv.contains(&FindingCode::CpuOffloadWithFreeVram),
        "{with_argv:?}"
    );
}

#[test]
fn a_discovery_list_missing_its_first_gpu_names_no_device_by_position() {
    // `sample-logs/founding-k80-gemma3-12b-ci-with-smi.log`: Ollama's discovery names the two dies by UUID
    // (lines 31–32), the runner lists `Device 0` and `Device 1` (47–48), nvidia-smi's CSV gives each UUID's use
    // (66–68). A paste from line 32 on holds the second die's discovery line only: it is not `Device 0`, and
    // joining it by position gave CUDA0 the second die's 9866 MiB and an `unattributed-memory` of 9.4 GiB.
    let ids = |l: &Concluded| -> Vec<String> {
        l.reconciled
            .load
            .gpus
            .iter()
            .map(|g| g.id.clone())
            .collect()
    };
    let whole = only_load(&sample_log("founding-k80-gemma3-12b-ci-with-smi").1);
    let window = only_load(&excerpt("founding-k80-gemma3-12b-ci-with-smi", &[(32, 68)]));
    let (whole_ids, window_ids) = (ids(&whole), ids(&window));
    assert_eq!(whole_ids.len(), 2);
    assert_eq!(window_ids.len(), 2, "{window_ids:?}");
    for (w, g) in window_ids.iter().zip(&whole_ids) {
        assert!(
            w == g || !whole_ids.contains(w),
            "a device named as another GPU: {window_ids:?} vs {whole_ids:?}"
        );
    }
    assert_eq!(codes(&window), codes(&whole));
}

#[test]
fn the_tail_of_a_llama_server_start_names_the_llama_engine() {
    // `sample-logs/706-…`, line 54 (`srv    load_model: initializing, …`, read by the signature table of
    // docs/log-formats.md §0.1) after a fragment of failure lines that names no engine (`sample-logs/1003-…`,
    // lines 8–10).
    let mut text = excerpt("1003-", &[(8, 10)]);
    assert_eq!(only_load(&text).reconciled.load.engine, Engine::Unknown);
    text.push_str(&excerpt("706-", &[(54, 54)]));
    assert_eq!(only_load(&text).reconciled.load.engine, Engine::Llama);
}

/// `text` with its first line (a command line) continued the way a shell user writes it: ` \` and a new,
/// indented line before every second flag (`$ llama-server \` / `    --ctx-size 8192 --threads 10 \` / …).
fn continued_command(text: &str) -> String {
    let (first, rest) = text.split_once('\n').unwrap();
    let mut out = String::new();
    let mut flags = 0;
    for (i, word) in first.split(' ').enumerate() {
        if word.starts_with('-') {
            flags += 1;
            if flags % 2 == 1 {
                out.push_str(" \\\n    ");
            } else {
                out.push(' ');
            }
        } else if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.push('\n');
    out + rest
}

#[test]
fn a_command_line_continued_with_backslashes_gives_the_same_facts() {
    // The real command lines of the corpus, pasted as one line above their logs: llama-server's (through a
    // wrapper's `argv:`, `sample-logs/706-…:1`), `vllm serve` (`sample-logs/803-…:1`) and SGLang's
    // `python3.12 -m sglang.launch_server` (`sample-logs/811-…:1`); each again as a shell user writes it,
    // continued with ` \` over several lines.
    for prefix in ["706-", "803-", "811-"] {
        let (name, text) = sample_log(prefix);
        let continued = continued_command(&text);
        assert!(
            continued.lines().count() > text.lines().count() + 1,
            "{continued}"
        );
        let facts = |t: &str| -> Vec<Value> {
            crate::properties::loads_json(&analyze(&name, t.as_bytes()))
                .iter()
                .map(crate::properties::figures)
                .collect()
        };
        let (one_line, several) = (facts(&text), facts(&continued));
        assert!(!one_line.is_empty());
        assert_eq!(one_line, several, "{name}");
    }
    // And the settings themselves, from the continued command alone above the weight buffers.
    let text = continued_command(&excerpt("706-", &[(1, 1), (30, 32)]));
    let l = only_load(&text);
    let s = &l.reconciled.load.settings;
    assert_eq!(
        (s.ctx_size, s.batch_size, s.ubatch_size),
        (Some(8192), Some(2048), Some(512))
    );
    assert_eq!(s.speculative.as_deref(), Some("draft-mtp"));
}

#[test]
fn a_window_s_runtime_knows_less_only_as_llama_server_of_an_unknown_launcher_or_ollama_of_an_unknown_placer(
) {
    let name = |r: Runtime| Value::String(format!("{r:?}"));
    let mut accepted = Vec::new();
    for window in Runtime::ALL {
        for whole in Runtime::ALL {
            if window != whole && runtime_knows_less(&name(window), &name(whole)) {
                accepted.push((window, whole));
            }
        }
    }
    assert_eq!(
        accepted,
        [
            (Runtime::OllamaPlacerUnknown, Runtime::OllamaEstimator),
            (Runtime::OllamaPlacerUnknown, Runtime::OllamaEngine),
            (Runtime::LlamaCppLauncherUnknown, Runtime::OllamaFit),
            (Runtime::LlamaCppLauncherUnknown, Runtime::LlamaCpp),
        ]
    );
}

/// The devices of a load's clip buffers, in the load's order.
fn clip_devices(l: &Concluded) -> Vec<vramdiff::model::Device> {
    l.reconciled
        .load
        .actual
        .buffers
        .iter()
        .filter(|b| b.projector)
        .map(|b| b.device.clone())
        .collect()
}

/// The device of clip's buffers in a window of `sample-logs/founding-today-3090-4060-gemma4-31b.log` (lines
/// `ranges`, 1-based), with the device rows the window reports.
fn clip_device_in(ranges: &[(usize, usize)]) -> (Vec<vramdiff::model::Device>, Concluded) {
    let l = only_load(&excerpt("founding-today-3090-", ranges));
    (clip_devices(&l), l)
}

#[test]
fn clip_s_device_is_known_only_from_a_line_that_names_it() {
    use vramdiff::model::Device;
    // The whole log: `clip_ctx: CLIP using CPU backend` (line 108), then `load_hparams: model size: 812.46 MiB`
    // (113) and `reserve_compute_meta: CPU compute buffer size = 57.84 MiB` (115).
    let (whole, _) = clip_device_in(&[(1, 137)]);
    assert_eq!(whole, [Device::Host, Device::Host]);
    // Without the CLIP line, clip's own compute buffer names its backend.
    let (window, _) = clip_device_in(&[(112, 137)]);
    assert_eq!(window, [Device::Host, Device::Host]);
    // Ollama's `disabling multimodal projector offload` (line 6) keeps it on the host.
    let (window, _) = clip_device_in(&[(6, 6), (109, 114)]);
    assert_eq!(window, [Device::Host]);
    // clip.cpp up to Ollama 0.6.5 named the backend without an index and always took its device 0
    // (`grammars/40-llama-cpp.toml`'s `llama.clip-backend` example, docs/log-formats.md §5.1).
    let cuda = format!(
        "clip_model_load: CLIP using CUDA backend\n{}",
        excerpt("founding-today-3090-", &[(109, 114)])
    );
    let l = only_load(&cuda);
    let clip: Vec<&Device> = l
        .reconciled
        .load
        .actual
        .buffers
        .iter()
        .map(|b| &b.device)
        .collect();
    assert_eq!(clip, [&Device::named("CUDA0")]);
    // The size line alone names no device: unknown, not a GPU the log does not name.
    let (window, l) = clip_device_in(&[(109, 114)]);
    assert_eq!(window, [Device::Unknown]);
    assert!(!l.reconciled.load.actual.buffers[0].host);
    // No device row holds it (no GPU's, not the host's), the projector's row does, and no finding rests on a
    // device: not `gpu-unused` (nothing ran on a GPU), not `projector-on-cpu`; only `incomplete-load`.
    assert!(
        l.reconciled.devices.is_empty(),
        "{:?}",
        l.reconciled.devices
    );
    assert_eq!(codes(&l), [FindingCode::IncompleteLoad]);
    let json: Value =
        serde_json::from_str(&rendered(l.clone(), vramdiff::report::Format::Json)).unwrap();
    let buffer = &json["loads"][0]["actual"]["buffers"][0];
    assert_eq!(buffer["device"], "unknown", "{buffer}");
    let text = rendered(l, vramdiff::report::Format::Text);
    assert!(
        text.contains("clip's memory is on a device the log does not name"),
        "{text}"
    );
}

#[test]
fn clip_on_a_machine_without_a_gpu_is_on_the_host_and_a_device_not_known_makes_no_gpu_unused_error()
{
    use vramdiff::model::Device;
    let (_, text) = sample_log("511-");
    let lines: Vec<&str> = text.lines().collect();
    let window = |ranges: &[(usize, usize)]| {
        let mut out = String::new();
        for &(a, b) in ranges {
            for line in &lines[a - 1..b] {
                out.push_str(line);
                out.push('\n');
            }
        }
        only_load(&out)
    };
    let severity = |l: &Concluded| {
        l.findings
            .iter()
            .find(|f| f.code == FindingCode::GpuUnused)
            .map(|f| f.severity)
    };
    // `sample-logs/511-…`: the driver rejects the laptop's RTX 3060 (line 10), discovery lists only the CPU
    // (`inference compute id=cpu library=cpu`, line 12); the first load's text model on the host (169–204),
    // then clip's `load_hparams: model size: 802.50 MiB` (237), without `CLIP using CPU backend` (218) and
    // clip's compute buffer (241): with no GPU at all, clip is on the host, as the whole log says.
    let l = window(&[(10, 217), (219, 240)]);
    assert_eq!(clip_devices(&l), [Device::Host]);
    assert_eq!(severity(&l), Some(vramdiff::model::Severity::Error));
    // The rejection, the text model's host buffers and the size line, but not discovery's CPU line: clip's
    // device is not known, so `gpu-unused` says the GPU was rejected (a warning) but not that nothing ran on a
    // GPU (the error): clip may be on one.
    let l = window(&[(10, 10), (169, 217), (219, 240)]);
    assert_eq!(clip_devices(&l), [Device::Unknown]);
    assert_eq!(severity(&l), Some(vramdiff::model::Severity::Warning));
}
