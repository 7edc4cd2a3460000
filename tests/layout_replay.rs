//! The replay with a model layout such as a GGUF header gives (built here: the reader is another branch's):
//! per-layer weights replace the average in both eras, and the file is named in the figures' sources.

use vramdiff::model::{LayerLayout, LayoutSource, ModelLayout, Reconciled, MIB};
use vramdiff::replay::{replay, Changes};

use crate::util::{analyze, root};

fn load(file: &str) -> Reconciled {
    let a = analyze(&[&root().join(file)]);
    a.loads[0].reconciled.clone()
}

/// A GGUF-like layout over the log's own KV shape: every block `base` bytes of weights, block `heavy` more.
fn with_weights(load: &Reconciled, base: u64, heavy: (usize, u64)) -> ModelLayout {
    let from_log = load
        .load
        .model
        .layout
        .clone()
        .expect("the log prints its hyperparameters");
    ModelLayout {
        source: LayoutSource::Gguf {
            path: "/models/test.gguf".into(),
        },
        layers: from_log
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| LayerLayout {
                dense_bytes: Some(if i == heavy.0 { base + heavy.1 } else { base }),
                expert_bytes: Some(0),
                ..*l
            })
            .collect(),
        ..from_log
    }
}

// Ollama's estimator (001: one T4, 33/33 layers): the replayed allocation grows by exactly what the file's
// blocks weigh beyond the average.
#[test]
fn the_estimator_replay_takes_each_block_s_weights() {
    let mut l = load("sample-logs/001-kaggle-t4-llama31-8b.log");
    let before = replay(&l, &Changes::default()).unwrap().estimate.unwrap();
    let avg = before.figures.layer_weights as u64;
    let blocks = before.figures.blocks as u64;
    l.load.model.layout = Some(with_weights(&l, avg, (0, 300 * MIB as u64)));
    let after = replay(&l, &Changes::default()).unwrap().estimate.unwrap();
    assert_eq!(after.placement.offloaded, before.placement.offloaded);
    // Block 0 is also the estimator's `layerSize`, the one layer held back on each GPU.
    let grown = after.placement.gpus[0].allocation - before.placement.gpus[0].allocation;
    assert_eq!(grown, 2 * 300 * MIB, "block 0 placed and held back");
    assert!(
        after
            .figures
            .from
            .iter()
            .any(|f| f.contains("GGUF header of /models/test.gguf")),
        "{:?}",
        after.figures.from
    );
    assert_eq!(blocks, 32);
}

// llama.cpp's --fit (today's founding case): the measured replay on one GPU uses the file's weights; a model
// 2 GiB heavier in one layer no longer leaves 3.35 GiB above the margin but 2 GiB less.
#[test]
fn the_fit_replay_takes_each_layer_s_weights() {
    let mut l = load("sample-logs/founding-today-3090-4060-gemma4-31b.log");
    let before = replay(&l, &Changes::default()).unwrap().measured.unwrap();
    let avg = before.figures.layer_weights as u64;
    l.load.model.layout = Some(with_weights(&l, avg, (30, 2048 * MIB as u64)));
    let after = replay(&l, &Changes::default()).unwrap().measured.unwrap();
    assert_eq!(before.margin - after.margin, 2048 * MIB);
    assert!(
        after
            .figures
            .from
            .iter()
            .any(|f| f.contains("per-layer weights and KV: the GGUF header")),
        "{:?}",
        after.figures.from
    );
}

// Ollama's estimator era, a KV cache bigger than estimated (001 with the T4's free memory cut so that 2048
// tokens per slot no longer fit by the measured sizes): the `num_ctx` suggestion is `whatif --max-ctx`'s figure
// by the measured replay, and that context, replayed, fits.
#[test]
fn the_num_ctx_suggestion_is_the_largest_context_that_fits() {
    use vramdiff::checks::suggest::{suggest, Evidence};
    use vramdiff::model::{Finding, FindingCode, KvType, Quantity, Severity};
    use vramdiff::replay::max_ctx::{fits_at, Judge};

    let mut l = load("sample-logs/001-kaggle-t4-llama31-8b.log");
    let m = replay(&l, &Changes::default()).unwrap().measured.unwrap();
    // Take away the spare memory and a quarter of the KV cache (1 GiB over 4 slots of 2048).
    let e = l.load.estimate.as_mut().unwrap();
    let free = e.available[0].bytes - m.margin - 256 * MIB - MIB;
    e.available[0] = Quantity::exact(free);
    assert_eq!(
        fits_at(&l, &Changes::default(), 2048, KvType::F16, Judge::Measured).map(|f| f.0),
        Some(false)
    );
    let findings = [Finding {
        code: FindingCode::KvMismatch,
        severity: Severity::Warning,
        message: String::new(),
        hint: String::new(),
        lines: Vec::new(),
        device: None,
        component: None,
    }];
    let whatif = replay(&l, &Changes::default());
    let suggestions = suggest(&Evidence {
        load: &l,
        whatif: whatif.as_ref(),
        findings: &findings,
    });
    let s = suggestions
        .iter()
        .find(|s| s.setting.starts_with("num_ctx="))
        .expect("a num_ctx suggestion");
    let n: i64 = s.setting["num_ctx=".len()..].parse().unwrap();
    assert!(n < 2048 && n % 256 == 0, "{s:?}");
    assert!(s.effect.contains("whatif --max-ctx"), "{s:?}");
    assert_eq!(
        fits_at(&l, &Changes::default(), n, KvType::F16, Judge::Measured).map(|f| f.0),
        Some(true)
    );
    assert_eq!(
        fits_at(
            &l,
            &Changes::default(),
            n + 256,
            KvType::F16,
            Judge::Measured
        )
        .map(|f| f.0),
        Some(false)
    );
}
