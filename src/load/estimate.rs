//! A load's estimate, from whichever of its sources the log has: Ollama's `offload to` line (every shape since
//! v0.1), the Ollama engine's per-device memory summary (v0.11.5+), or llama.cpp's `--fit` plan (llama-server
//! era, through [`super::fit`]).

use crate::model::{
    Device, DeviceEstimate, DeviceFree, Estimate, EstimateForm, Layers, OffloadShape, Quantity,
    WeightsSemantics,
};
use crate::parse::event::SummaryPart;

use super::builder::LoadBuilder;
use super::engine::parse_version;
use super::fit::FitContext;

impl LoadBuilder {
    fn weights_semantics(&self, shape: OffloadShape) -> WeightsSemantics {
        // Before v0.6.1 memory.weights.total summed blocks *with* their KV share; v0.6.3 made it blocks + output.
        let with_kv = match self.version.as_deref().and_then(parse_version) {
            Some(v) => v < (0, 6, 1),
            None => shape.weights_include_kv(),
        };
        if with_kv {
            WeightsSemantics::BlocksWithKv
        } else {
            WeightsSemantics::Blocks
        }
    }

    /// The estimate, from the first source the load has: Ollama's estimate line, the Ollama engine's
    /// per-device memory summary, or llama.cpp's `--fit` phase.
    pub(super) fn estimate(&self) -> Option<Estimate> {
        if let Some((e, line)) = self.estimator.estimate() {
            let library = e.library.clone();
            let lib = library.clone().unwrap_or_else(|| "gpu".to_string());
            let per_device = e
                .allocations
                .iter()
                .enumerate()
                .map(|(i, total)| DeviceEstimate {
                    device: Device::for_library(&lib, i),
                    weights: None,
                    kv: None,
                    graph: None,
                    total: Some(*total),
                    layers: if e.split.len() == e.allocations.len() {
                        e.split.get(i).copied()
                    } else if e.allocations.len() == 1 {
                        e.offload
                    } else {
                        None
                    },
                })
                .collect();
            return Some(Estimate {
                library,
                layers: Layers {
                    requested: e.requested,
                    model: e.model_layers,
                    offload: e.offload,
                    split: e.split.clone(),
                },
                available: e.available.clone(),
                gpu_overhead: e.gpu_overhead,
                required_full: e.required_full,
                required_partial: e.required_partial,
                kv: e.kv,
                allocations: e.allocations.clone(),
                weights_total: e.weights_total,
                weights_repeating: e.weights_repeating,
                weights_nonrepeating: e.weights_nonrepeating,
                graph_full: e.graph_full,
                graph_partial: e.graph_partial,
                projector_weights: e.projector_weights,
                projector_graph: e.projector_graph,
                per_device,
                form: EstimateForm::Offload(e.form),
                weights_semantics: self.weights_semantics(e.form),
                lines: vec![*line],
                source_position: e.source_position.clone(),
                logged_on: e.logged_on.clone(),
                ..Estimate::default()
            });
        }
        if !self.summary_estimate.is_empty() {
            let mut devices: Vec<Device> = self
                .summary_estimate
                .iter()
                .map(|s| s.device.clone())
                .collect();
            devices.sort();
            devices.dedup();
            let part = |device: &Device, part: SummaryPart| {
                self.summary_estimate
                    .iter()
                    .find(|s| s.device == *device && s.part == part)
                    .map(|s| s.size)
            };
            // The summary prints each device's weights first, then the KV caches, then the graphs, each only
            // when non-zero (`docs/log-formats.md` §4.2); a load's weights are never zero, so a summary
            // without a `model weights` line was cut before its start (a window, an excerpt): its devices'
            // figures are parts of their estimates, and no device's whole.
            let cut_before_weights = self
                .summary_estimate
                .iter()
                .all(|s| s.part != SummaryPart::Weights);
            let per_device: Vec<DeviceEstimate> = devices
                .iter()
                .map(|d| {
                    let (w, k, g) = (
                        part(d, SummaryPart::Weights),
                        part(d, SummaryPart::Kv),
                        part(d, SummaryPart::Graph),
                    );
                    DeviceEstimate {
                        device: d.clone(),
                        weights: w,
                        kv: k,
                        graph: g,
                        total: Quantity::sum([w, k, g].into_iter().flatten())
                            .filter(|_| !cut_before_weights),
                        layers: None,
                    }
                })
                .collect();
            let sum_part = |p: SummaryPart| {
                Quantity::sum(
                    self.summary_estimate
                        .iter()
                        .filter(|s| s.part == p)
                        .map(|s| s.size),
                )
            };
            let mut lines: Vec<u64> = self.summary_estimate.iter().map(|s| s.line).collect();
            lines.extend(self.summary_estimate_total.map(|(_, l)| l));
            lines.sort_unstable();
            return Some(Estimate {
                library: None,
                layers: Layers {
                    requested: self.loading_model.and_then(|(_, r, _)| r),
                    model: self.loading_model.and_then(|(m, _, _)| m),
                    offload: None,
                    split: Vec::new(),
                },
                required_full: self.summary_estimate_total.map(|(q, _)| q),
                kv: sum_part(SummaryPart::Kv),
                weights_total: sum_part(SummaryPart::Weights),
                graph_full: sum_part(SummaryPart::Graph),
                per_device,
                form: EstimateForm::MemorySummary,
                weights_semantics: WeightsSemantics::PerDevice,
                lines,
                ..Estimate::default()
            });
        }
        self.fit.estimate(&self.fit_context())
    }

    /// What the `--fit` estimate needs from the rest of the load.
    pub(super) fn fit_context(&self) -> FitContext {
        let main_gpu = self.command().and_then(|(c, _)| c.main_gpu).unwrap_or(0);
        // The projector runs where a line of the load says clip runs (`clip_device`: the host when its offload
        // is off); else, offloaded by default, on the GPU llama-server listed at the main GPU's place. Without
        // that list the device is not known (no backend is guessed), and the estimate charges it to no row.
        let device = self.clip_device(self.ledger.buffers()).unwrap_or_else(|| {
            self.runner_devices
                .iter()
                .map(|(d, _)| d.device.clone())
                .filter(Device::is_gpu)
                .nth(main_gpu.max(0) as usize)
                .unwrap_or(Device::Unknown)
        });
        let settings = self.settings();
        FitContext {
            kv: self
                .model()
                .layout
                .zip(crate::model::kv_geometry::kv_geometry_of(&settings)),
            blocks: self.model_count("n_layer"),
            gpu_layers: self.command().and_then(|(c, _)| c.gpu_layers),
            projector: self.projector_estimate.map(|(q, l)| (q, device, l)),
            draft: self.draft_estimate,
            draft_device: self
                .ledger
                .buffers()
                .find(|b| b.component == "draft" && !b.host)
                .map(|b| b.device.clone()),
            inventory: self
                .runner_devices
                .iter()
                .map(|(d, line)| DeviceFree {
                    device: d.device.clone(),
                    name: d.name.clone(),
                    total: d.total,
                    free: d.free,
                    line: *line,
                })
                .collect(),
            buffer_gpus: {
                let mut gpus: Vec<Device> = self
                    .ledger
                    .buffers()
                    .filter(|b| !b.host && b.device.is_gpu())
                    .map(|b| b.device.clone())
                    .collect();
                gpus.sort();
                gpus.dedup();
                gpus
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{Device, EstimateForm, OffloadShape, WeightsSemantics};

    /// `sample-logs/1101-ollama-0170-metal-m4-phi3-128k-kv12gib-evict-then-load.log:8–12`: the llama engine's
    /// memory summary, its estimate (0.12.11–0.24, printed after `loading model`).
    const SUMMARY_1101: [&str; 5] = [
        r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=server.go:498 msg="loading model" "model layers"=33 requested=-1"#,
        r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:240 msg="model weights" device=Metal size="2.0 GiB""#,
        r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:251 msg="kv cache" device=Metal size="12.0 GiB""#,
        r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:262 msg="compute graph" device=Metal size="2.0 GiB""#,
        r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:272 msg="total memory" size="16.0 GiB""#,
    ];

    #[test]
    fn a_memory_summary_cut_before_its_weights_gives_no_device_its_whole_estimate() {
        let whole = loads_of(&SUMMARY_1101);
        let metal = &whole[0].estimate.as_ref().unwrap().per_device[0];
        assert_eq!(metal.total.map(|q| q.bytes >> 30), Some(16));
        // A window starting at the graph line: the graph's figure holds, Metal's whole estimate is unknown
        // (it read 2.0 GiB, and the fragment called the 14.1 GiB Metal allocated an underestimate).
        let cut = loads_of(&SUMMARY_1101[3..]);
        let estimate = cut[0].estimate.as_ref().unwrap();
        assert_eq!(estimate.per_device[0].graph.map(|q| q.bytes >> 30), Some(2));
        assert_eq!(estimate.per_device[0].total, None);
        assert_eq!(estimate.required_full.map(|q| q.bytes >> 30), Some(16));
    }

    #[test]
    fn ollama_s_offload_line_is_the_estimate_read_by_its_shape() {
        // `sample-logs/002-runpod-rtx4090-llama31-8b-lora.log:22` (no version line before it).
        let loads = loads_of(&[
            r#"time=2025-12-01T20:28:54.084Z level=INFO source=memory.go:356 msg="offload to cuda" layers.requested=-1 layers.model=33 layers.offload=33 layers.split="" memory.available="[23.3 GiB]" memory.gpu_overhead="0 B" memory.required.full="6.5 GiB" memory.required.partial="6.5 GiB" memory.required.kv="1.0 GiB" memory.required.allocations="[6.5 GiB]" memory.weights.total="4.9 GiB" memory.weights.repeating="4.5 GiB" memory.weights.nonrepeating="411.0 MiB" memory.graph.full="560.0 MiB" memory.graph.partial="677.5 MiB""#,
        ]);
        let e = loads[0].estimate.as_ref().unwrap();
        // No projector fields: the E4–E6 shape, whose weights.total summed each block's KV share; with no
        // version line to say otherwise, the shape decides.
        assert_eq!(e.form, EstimateForm::Offload(OffloadShape::E4E6));
        assert_eq!(e.weights_semantics, WeightsSemantics::BlocksWithKv);
        assert_eq!(e.layers.offload, Some(33));
        assert_eq!(e.per_device.len(), 1);
        assert_eq!(e.per_device[0].layers, Some(33));
        assert_eq!(e.lines, [1]);
    }

    /// `sample-logs/009-linux-cuda-qwen3-coder-next-partial-kvf16-newengine.log:5-11`.
    const SUMMARY_009: [&str; 7] = [
        r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=device.go:240 msg="model weights" device=CUDA0 size="19.9 GiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:245 msg="model weights" device=CPU size="28.3 GiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:251 msg="kv cache" device=CUDA0 size="1.1 GiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:256 msg="kv cache" device=CPU size="1.5 GiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:262 msg="compute graph" device=CUDA0 size="884.1 MiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:267 msg="compute graph" device=CPU size="270.6 MiB""#,
        r#"time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:272 msg="total memory" size="51.9 GiB""#,
    ];

    #[test]
    fn the_memory_summary_before_a_commit_is_the_per_device_estimate() {
        let loads = loads_of(&SUMMARY_009);
        let e = loads[0].estimate.as_ref().unwrap();
        assert_eq!(e.form, EstimateForm::MemorySummary);
        let devices: Vec<String> = e.per_device.iter().map(|d| d.device.to_string()).collect();
        assert_eq!(devices, ["CUDA0", "CPU"]);
        let cuda0 = &e.per_device[0];
        assert_eq!(cuda0.device, Device::named("CUDA0"));
        assert!(cuda0.weights.is_some() && cuda0.kv.is_some() && cuda0.graph.is_some());
        assert_eq!(e.lines, [1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn after_a_commit_the_memory_summary_is_what_was_allocated_not_an_estimate() {
        let mut lines = vec![
            r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}""#,
        ];
        lines.extend(SUMMARY_009);
        let loads = loads_of(&lines);
        assert!(loads[0].estimate.is_none());
        assert!(!loads[0].actual.buffers.is_empty());
    }
}
