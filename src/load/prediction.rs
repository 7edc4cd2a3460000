//! Ollama's own prediction in the llama-server era and the single-GPU rule it judges GPUs by
//! (`docs/log-formats.md` §5.6 item 2). Before llama.cpp runs, the scheduler predicts **model file size + KV at
//! f16** — 2 × layers × the smallest KV head count × head size × (num_ctx × parallel) × 2 bytes, whatever
//! `OLLAMA_KV_CACHE_TYPE` says and ignoring sliding windows — and gives llama-server one GPU only when the
//! prediction is at most 80 % of that GPU's available memory. This module takes the logged `predicted=` when
//! there is one, else computes the figure from the log, and replays the rule on each GPU of the load: by how
//! much each missed the bar, and whether the real footprint (every GPU buffer the load allocated, plus the
//! `--fit` margin) would have fitted it alone.

use crate::model::scheduler::{Prediction, PredictionSource, SingleGpuTest, SINGLE_GPU_SHARE};
use crate::model::{Hyperparameters, Load, PerLayer, Quantity, GIB};

/// Ollama's prediction for `load`: the logged figure, else file size + f16 KV when the log gives both terms.
pub fn prediction(
    load: &Load,
    logged: Option<(Quantity, u64)>,
    file_size: Option<(Quantity, u64)>,
) -> Option<Prediction> {
    if let Some((total, line)) = logged {
        return Some(Prediction {
            total,
            source: PredictionSource::Logged,
            lines: vec![line],
            file_size: file_size.map(|(q, _)| q),
            kv_f16: None,
            context: load.settings.ctx_size,
        });
    }
    let (file, line) = file_size?;
    let context = load.settings.ctx_size?;
    let per_token = load
        .model
        .hyperparameters
        .as_ref()
        .and_then(f16_kv_bytes_per_token)?;
    let kv = per_token.checked_mul(u64::try_from(context).ok()?)?;
    let kv = Quantity::exact(i64::try_from(kv).ok()?);
    Some(Prediction {
        total: file.plus(kv),
        source: PredictionSource::Computed,
        lines: std::iter::once(line)
            .chain(
                load.model
                    .hyperparameters
                    .iter()
                    .flat_map(|h| h.lines.iter().copied()),
            )
            .collect(),
        file_size: Some(file),
        kv_f16: Some(kv),
        context: Some(context),
    })
}

/// KV bytes per token at f16 as Ollama's prediction counts them: every layer at the smallest (non-zero) K and V
/// width, no sliding window.
fn f16_kv_bytes_per_token(h: &Hyperparameters) -> Option<u64> {
    let layers = h.n_layer?;
    let smallest = |p: &PerLayer| -> Option<u64> {
        match p {
            PerLayer::All(v) => Some(*v),
            PerLayer::Each(values) => values.iter().copied().filter(|v| *v > 0).min(),
        }
    };
    let width = match (&h.n_embd_k_gqa, &h.n_embd_v_gqa) {
        (Some(k), Some(v)) => smallest(k)?.checked_add(smallest(v)?)?,
        _ => {
            let heads = smallest(h.n_head_kv.as_ref()?)?;
            let k = h.n_embd_head_k?;
            let v = h.n_embd_head_v.unwrap_or(k);
            heads.checked_mul(k.checked_add(v)?)?
        }
    };
    width.checked_mul(layers)?.checked_mul(2)
}

/// The single-GPU rule on every GPU of the load whose available memory the log gives.
pub fn single_gpu_rule(load: &Load, prediction: &Prediction) -> Vec<SingleGpuTest> {
    let gpu_buffers = Quantity::sum(
        load.actual
            .buffers
            .iter()
            .filter(|b| !b.host && b.device.is_gpu())
            .map(|b| b.size),
    );
    let margin = load.settings.fit_target.unwrap_or(Quantity::exact(GIB));
    let (num, den) = SINGLE_GPU_SHARE;
    load.gpus
        .iter()
        .filter_map(|gpu| {
            let available = gpu.available?;
            let bar = available.scale(num, den);
            let passes = prediction.total.bytes <= bar.bytes;
            let free = gpu.free.unwrap_or(available);
            let spare = gpu_buffers.map(|footprint| free.minus(footprint).minus(margin));
            Some(SingleGpuTest {
                gpu: gpu.id.clone(),
                name: gpu.name.clone(),
                available,
                bar,
                passes,
                misses_by: (!passes).then(|| prediction.total.minus(bar)),
                footprint_fits: spare.map(|s| s.bytes >= 0),
                footprint_spare: spare,
                line: gpu.line,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::loads_of;
    use crate::model::scheduler::GpuChoice;

    /// The founding case of today (`sample-logs/founding-today-3090-4060-gemma4-31b.log`), the lines the
    /// prediction and the rule read: the two `gpu memory` lines, the command, `file size` and the shape.
    #[test]
    fn the_founding_case_misses_the_bar_on_the_3090_while_its_footprint_fits() {
        let loads = loads_of(&[
            r#"time=2026-06-07T18:12:00.136+07:00 level=INFO source=llama_server.go:403 msg="starting llama-server" cmd="C:\\llama-server.exe --model C:\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 -c 16384 -np 1 --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on -b 1024 -ub 1024""#,
            r#"time=2026-06-07T18:12:00.142+07:00 level=INFO source=sched.go:620 msg="gpu memory" id=0 library=CUDA available="22.3 GiB" free="22.8 GiB" minimum="457.0 MiB" overhead="0 B""#,
            r#"time=2026-06-07T18:12:00.142+07:00 level=INFO source=sched.go:620 msg="gpu memory" id=1 library=CUDA available="6.5 GiB" free="6.9 GiB" minimum="457.0 MiB" overhead="0 B""#,
            "print_info: file size   = 17.61 GiB (4.88 BPW)",
            "print_info: n_layer               = 60",
            "print_info: n_head_kv             = 16",
            "print_info: n_embd_head_k         = 128",
            "print_info: n_embd_head_v         = 128",
            "print_info: n_embd_k_gqa          = 2048",
            "print_info: n_embd_v_gqa          = 2048",
            "load_tensors:        CUDA0 model buffer size = 11750.47 MiB",
            "load_tensors:        CUDA1 model buffer size =  4352.53 MiB",
        ]);
        let s = loads[0].scheduler.as_ref().expect("an Ollama ≥ 0.30 load");
        let p = s.prediction.as_ref().expect("computed");
        assert_eq!(p.source, PredictionSource::Computed);
        // 60 layers × (2048 + 2048) × 2 bytes × 16384 = 7.5 GiB at f16, although the cache is q8_0.
        assert_eq!(p.kv_f16, Some(Quantity::exact(7_864_320 * 1024)));
        assert_eq!(human_gib(p.total.bytes), "25.11");
        let t0 = &s.single_gpu_rule[0];
        // 80 % of 22.3 GiB is 17.84 GiB: missed by 7.27 GiB.
        assert!(!t0.passes);
        assert_eq!(human_gib(t0.bar.bytes), "17.84");
        assert_eq!(human_gib(t0.misses_by.unwrap().bytes), "7.27");
        // The buffers (15.72 GiB) and the 1 GiB margin fit the 3090's 22.8 GiB free.
        assert_eq!(t0.footprint_fits, Some(true));
        assert_eq!(
            s.footprint_fits_but_rule_missed().map(|t| t.gpu.as_str()),
            Some("0")
        );
        assert_eq!(s.single_gpu_rule[1].footprint_fits, Some(false));
        // The buffers sit on two GPUs and no single-GPU line was read: every GPU was handed over.
        assert_eq!(s.gpu_choice, GpuChoice::AllGpus { since_line: None });
    }

    fn human_gib(bytes: i64) -> String {
        format!("{:.2}", bytes as f64 / GIB as f64)
    }
}
