//! Accumulating the events of one load, then resolving them into a [`Load`].
//!
//! Several lines can carry the same fact (the context size is in `--ctx-size`, `KvSize` and `n_ctx`); the
//! builder keeps every source and [`LoadBuilder::finish`] picks by a fixed precedence, so the result does
//! not depend on line order beyond what the dialect itself implies.

use crate::model::{
    Actual, Backend, BreakdownRow, BufferKind, Device, DeviceEstimate, DeviceFree, Engine, Era,
    Estimate, EstimateForm, Gpu, KvCache, Layers, Load, LoadSource, ModelRef, OffloadShape,
    Quantity, RejectedGpu, Settings, WeightsSemantics,
};
use crate::parse::event::{
    BreakdownLine, EstimateLine, GpuInfo, KvSizeLine, RunnerCommand, RunnerDevice, SummaryPart,
};
use crate::parse::values::{parse_gpu_layers, parse_int};

use super::buffers::{BufferLedger, BufferLine};
use super::fit::{FitContext, FitLedger};

/// How far a load has progressed, as far as the log shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Phase {
    #[default]
    Scheduling,
    Estimated,
    RunnerStarted,
    RunnerOutput,
    Ended,
}

/// One per-device summary line (`model weights`/`kv cache`/`compute graph`).
#[derive(Debug, Clone)]
pub struct SummaryEntry {
    pub part: SummaryPart,
    pub device: Device,
    pub size: Quantity,
    pub line: u64,
}

/// One `load request` line: its operation (`fit`, `alloc`, `commit`) and its fields.
#[derive(Debug, Clone)]
pub struct LoadRequestSeen {
    pub operation: String,
    pub fields: Vec<(String, String)>,
}

/// Everything seen of one load so far.
#[derive(Debug, Default)]
pub struct LoadBuilder {
    pub path: String,
    pub first_line: u64,
    pub last_line: u64,
    pub started_cleanly: bool,
    pub phase: Phase,
    pub version: Option<String>,
    pub inventory: Vec<(GpuInfo, u64)>,
    pub devices: Vec<(GpuInfo, u64)>,
    pub gpu_memory: Vec<(GpuInfo, u64)>,
    pub ollama_engine_hint: bool,
    pub llama_engine_hint: bool,
    pub runner: Option<(RunnerCommand, u64)>,
    pub loading_model: Option<(Option<i64>, Option<i64>, u64)>,
    pub load_requests: Vec<LoadRequestSeen>,
    pub context_params: Vec<(String, String)>,
    pub kv_cells: Option<i64>,
    pub kv_type: Option<String>,
    pub architecture: Option<String>,
    pub estimate: Option<(EstimateLine, u64)>,
    pub summary_estimate: Vec<SummaryEntry>,
    pub summary_estimate_total: Option<(Quantity, u64)>,
    /// llama.cpp's `--fit` phase: its probe tables, decision and result (llama-server era).
    pub fit: FitLedger,
    pub ledger: BufferLedger,
    pub summary_actual_total: Option<(Quantity, u64)>,
    /// The breakdown table printed after the load (at llama-server's exit): an actual.
    pub exit_table: Vec<(BreakdownLine, u64)>,
    /// A table header was printed after the load: its rows replace the exit table.
    pub exit_header: bool,
    pub offloaded: Option<(i64, i64)>,
    pub seen_offloaded: bool,
    /// A `commit` load request was seen: later memory-summary lines are what was allocated.
    pub seen_commit: bool,
    /// llama.cpp's device inventory (`device_info:`, `using device … MiB free`).
    pub runner_devices: Vec<(RunnerDevice, u64)>,
    /// `print_info:` hyperparameters, last value per key.
    pub model_params: Vec<(String, String)>,
    pub kv_caches: Vec<(KvSizeLine, u64)>,
    /// llama-server's `[mtmd]` projector estimate and `[spec]` draft estimate, with their lines.
    pub projector_estimate: Option<(Quantity, u64)>,
    pub draft_estimate: Option<(Quantity, u64)>,
    /// Where clip ran (`CLIP using CPU backend`).
    pub projector_backend: Option<(Device, u64)>,
    /// Ollama kept the projector off the GPU, and why (`disabling multimodal projector offload`).
    pub projector_offload_disabled: Option<(Option<String>, u64)>,
    /// The model path from `loading model via llama-server` (Ollama ≥ 0.30 only prints it that way).
    pub model_path: Option<String>,
    /// llama.cpp read a model in this load (`llama_model_loader`): a weak sign of the llama engine.
    pub model_loader_seen: bool,
    /// GPUs the server found and rejected (carried across loads until the server restarts).
    pub rejected: Vec<RejectedGpu>,
    pub failure: Option<(String, u64)>,
    /// The failure recorded is an out-of-memory one.
    pub failure_oom: bool,
    pub notes: Vec<String>,
    pub actual_sources: Vec<&'static str>,
}

impl LoadBuilder {
    pub fn new(path: &str, line: u64, started_cleanly: bool) -> Self {
        LoadBuilder {
            path: path.to_string(),
            first_line: line,
            last_line: line,
            started_cleanly,
            ..LoadBuilder::default()
        }
    }

    pub fn touch(&mut self, line: u64) {
        self.last_line = self.last_line.max(line);
    }

    pub fn advance(&mut self, phase: Phase) {
        if phase > self.phase {
            self.phase = phase;
        }
    }

    pub fn mark_source(&mut self, source: &'static str) {
        if !self.actual_sources.contains(&source) {
            self.actual_sources.push(source);
        }
    }

    /// A memory breakdown table begins: before the runner allocated anything it is a `--fit` probe (a test
    /// allocation, whatever its figures), after that it is the table llama-server prints at exit.
    pub fn breakdown_header(&mut self) {
        if self.allocated() {
            self.exit_header = true;
        } else {
            self.fit.start_table();
        }
    }

    /// Add one row of the memory breakdown table printed last.
    pub fn add_breakdown(&mut self, row: BreakdownLine, line: u64) {
        if self.allocated() {
            if std::mem::take(&mut self.exit_header) {
                // Printed again (another exit): the last table is the one that counts.
                self.exit_table.clear();
            }
            self.exit_table.push((row, line));
        } else {
            self.fit.add_row(row, line);
        }
    }

    /// The runner has reported allocations (buffers, layer counts) or finished.
    pub fn allocated(&self) -> bool {
        !self.ledger.is_empty() || self.seen_offloaded || self.phase == Phase::Ended
    }

    pub fn add_summary_actual(
        &mut self,
        part: SummaryPart,
        device: &Device,
        size: Quantity,
        line: u64,
    ) {
        let kind = match part {
            SummaryPart::Weights => BufferKind::Model,
            SummaryPart::Kv => BufferKind::Kv,
            SummaryPart::Graph => BufferKind::Compute,
        };
        let buffer = device.to_string();
        self.ledger.set_last(BufferLine {
            component: "memory-summary",
            buffer: &buffer,
            device: Some(device.clone()),
            kind,
            size,
            line,
            projector: false,
        });
        self.mark_source("memory-summary");
    }

    pub fn add_summary_estimate(
        &mut self,
        part: SummaryPart,
        device: &Device,
        size: Quantity,
        line: u64,
    ) {
        self.summary_estimate
            .retain(|e| !(e.part == part && e.device == *device));
        self.summary_estimate.push(SummaryEntry {
            part,
            device: device.clone(),
            size,
            line,
        });
    }

    fn commit_request(&self) -> Option<&LoadRequestSeen> {
        self.load_requests
            .iter()
            .rev()
            .find(|r| r.operation == "commit")
            .or_else(|| self.load_requests.last())
    }

    /// The engine, from the strongest sign the log gives: `--ollama-engine` or the Ollama engine's own lines;
    /// then llama-server, `ollama_llama_server`, `ollama runner --model` without `--ollama-engine`, llama.cpp
    /// buffer lines; last, a `llama_model_loader` dump (which the server's vocab-only load prints too).
    fn engine(&self) -> Engine {
        let cmd = self.runner.as_ref().map(|(c, _)| c);
        if cmd.is_some_and(|c| c.ollama_engine) || self.ollama_engine_hint {
            Engine::Ollama
        } else if self.llama_engine_hint
            || cmd.is_some_and(|c| c.llama_server || c.ollama_runner)
            || (self.runner.is_some() && !self.ledger.is_empty())
            || self.model_loader_seen
        {
            Engine::Llama
        } else {
            Engine::Unknown
        }
    }

    /// Who placed the layers: llama.cpp's `--fit` (llama-server, Ollama ≥ 0.30) or Ollama's estimator.
    fn era(&self) -> Era {
        let version = self.version.as_deref().and_then(parse_version);
        let cmd = self.runner.as_ref().map(|(c, _)| c);
        if cmd.is_some_and(|c| c.llama_server)
            || self.model_path.is_some()
            || !self.fit.is_empty()
            || version.is_some_and(|v| v >= (0, 30, 0))
        {
            Era::LlamaServer
        } else if self.estimate.is_some()
            || !self.load_requests.is_empty()
            || !self.summary_estimate.is_empty()
            || version.is_some()
            || cmd.is_some_and(|c| c.ollama_runner)
            || self.loading_model.is_some()
        {
            Era::Ollama
        } else {
            Era::Unknown
        }
    }

    fn model_param(&self, key: &str) -> Option<&str> {
        self.model_params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn settings(&self) -> Settings {
        let request = self
            .commit_request()
            .map(|r| r.fields.as_slice())
            .unwrap_or(&[]);
        let req = |name: &str| {
            request
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let cmd = self.runner.as_ref().map(|(c, _)| c);
        let ctx = |name: &str| {
            self.context_params
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let flash = req("FlashAttention")
            .and_then(|v| match v {
                "true" | "Enabled" => Some(true),
                "false" | "Disabled" => Some(false),
                _ => None,
            })
            .or(cmd.and_then(|c| c.flash_attention))
            .or(ctx("flash_attn").and_then(|v| match v {
                "1" | "true" | "enabled" => Some(true),
                "0" | "false" | "disabled" => Some(false),
                _ => None,
            }));
        let disabled = self.projector_offload_disabled.as_ref();
        Settings {
            ubatch_size: cmd
                .and_then(|c| c.ubatch_size)
                .or(ctx("n_ubatch").and_then(parse_int)),
            kv_cache_type_v: cmd.and_then(|c| c.kv_cache_type_v.clone()),
            projector_offload: if disabled.is_some() {
                Some(false)
            } else {
                cmd.and_then(|c| {
                    c.projector_offload.or(c
                        .mmproj
                        .as_ref()
                        .filter(|_| c.llama_server)
                        .map(|_| true))
                })
            },
            projector_offload_reason: disabled.and_then(|(r, _)| r.clone()),
            projector_offload_line: disabled.map(|(_, l)| *l).or(self
                .runner
                .as_ref()
                .filter(|(c, _)| c.projector_offload.is_some())
                .map(|(_, l)| *l)),
            split_mode: cmd.and_then(|c| c.split_mode.clone()),
            main_gpu: cmd.and_then(|c| c.main_gpu),
            mmap: cmd.and_then(|c| c.mmap),
            speculative: cmd.and_then(|c| c.speculative.clone()),
            fit_target: cmd
                .and_then(|c| c.fit_target)
                .and_then(|m| Quantity::from_truncated(m, crate::model::MIB)),
            ctx_size: req("KvSize")
                .and_then(parse_int)
                .or(cmd.and_then(|c| c.ctx_size))
                .or(ctx("n_ctx").and_then(parse_int))
                .or(self.kv_cells),
            batch_size: req("BatchSize")
                .and_then(parse_int)
                .or(cmd.and_then(|c| c.batch_size))
                .or(ctx("n_batch").and_then(parse_int)),
            parallel: req("Parallel")
                .and_then(parse_int)
                .or(cmd.and_then(|c| c.parallel))
                .or(ctx("n_seq_max").and_then(parse_int)),
            gpu_layers: req("GPULayers")
                .and_then(parse_gpu_layers)
                .map(|(total, _)| total)
                .or(cmd.and_then(|c| c.gpu_layers)),
            kv_cache_type: req("KvCacheType")
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .or(cmd.and_then(|c| c.kv_cache_type.clone()))
                .or(self.kv_type.clone())
                .or(self
                    .kv_caches
                    .iter()
                    .find(|(k, _)| !k.recurrent)
                    .and_then(|(k, _)| k.type_k.clone())),
            flash_attention: flash,
        }
    }

    fn gpus(&self) -> Vec<Gpu> {
        let to_gpu = gpu_from_info;
        let inventory: Vec<&(GpuInfo, u64)> = self
            .inventory
            .iter()
            .filter(|(g, _)| g.library.as_deref() != Some("cpu"))
            .collect();
        let mut gpus: Vec<Gpu> = if self.devices.is_empty() {
            inventory.iter().map(|(g, l)| to_gpu(g, *l)).collect()
        } else {
            self.devices
                .iter()
                .enumerate()
                .map(|(position, (d, line))| {
                    let mut gpu = to_gpu(d, *line);
                    // Enrich from discovery: by UUID, else by position when the names agree.
                    let found = inventory
                        .iter()
                        .find(|(g, _)| d.id.is_some() && g.id == d.id)
                        .or_else(|| inventory.get(position).filter(|(g, _)| g.name == d.name));
                    if let Some((g, _)) = found {
                        gpu.id = g.id.clone().unwrap_or(gpu.id);
                        gpu.library = g.library.clone();
                        gpu.driver = g.driver.clone();
                        gpu.variant = g.variant.clone();
                        gpu.total = g.total;
                        gpu.available = g.available;
                        gpu.bus_id = g.bus_id.clone().or(gpu.bus_id);
                        if gpu.compute.is_none() {
                            gpu.compute = g.compute.clone();
                        }
                    }
                    gpu
                })
                .collect()
        };
        // llama.cpp's inventory of this load's GPUs: a base list when nothing else described them, else
        // free memory (and total) by position (`CUDA1` is the second).
        let runner_gpus: Vec<&(RunnerDevice, u64)> = self
            .runner_devices
            .iter()
            .filter(|(d, _)| d.device.is_gpu())
            .collect();
        if gpus.is_empty() {
            gpus = runner_gpus
                .iter()
                .map(|(d, line)| Gpu {
                    id: d
                        .device
                        .position()
                        .map(|p| p.to_string())
                        .unwrap_or_else(|| d.device.to_string()),
                    name: d.name.clone(),
                    total: d.total,
                    free: Some(d.free),
                    line: *line,
                    ..Gpu::default()
                })
                .collect();
        } else {
            for (d, _) in &runner_gpus {
                if let Some(gpu) = d.device.position().and_then(|p| gpus.get_mut(p)) {
                    gpu.free = gpu.free.or(Some(d.free));
                    gpu.total = gpu.total.or(d.total);
                }
            }
        }
        for (m, line) in &self.gpu_memory {
            // By id (a UUID, or the same index); Ollama >= 0.30 prints the index (`id=1`) where the runner's
            // device list has UUIDs: then by position.
            let by_id = gpus.iter().position(|g| Some(&g.id) == m.id.as_ref());
            let by_index =
                m.id.as_deref()
                    .and_then(|id| id.parse::<usize>().ok())
                    .filter(|&i| i < gpus.len());
            match by_id.or(by_index) {
                Some(i) => {
                    let gpu = &mut gpus[i];
                    gpu.available = m.available.or(gpu.available);
                    gpu.free = m.free.or(gpu.free);
                    gpu.library = gpu.library.clone().or(m.library.clone());
                }
                None => {
                    if let Some(id) = &m.id {
                        gpus.push(Gpu {
                            id: id.clone(),
                            library: m.library.clone(),
                            available: m.available,
                            free: m.free,
                            line: *line,
                            ..Gpu::default()
                        });
                    }
                }
            }
        }
        gpus
    }

    fn model(&self) -> ModelRef {
        let path = self
            .runner
            .as_ref()
            .and_then(|(c, _)| c.model.clone())
            .or(self.model_path.clone());
        let blob = path.as_deref().and_then(|p| {
            let i = p.rfind("sha256-").or_else(|| p.rfind("sha256:"))?;
            let hex: String = p[i + 7..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .collect();
            (hex.len() == 64).then(|| format!("sha256-{hex}"))
        });
        ModelRef {
            path,
            blob,
            architecture: self.architecture.clone(),
            block_count: self.model_param("n_layer").and_then(parse_int),
        }
    }

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

    fn estimate(&self) -> Option<Estimate> {
        if let Some((e, line)) = &self.estimate {
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
                        total: Quantity::sum([w, k, g].into_iter().flatten()),
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
    fn fit_context(&self) -> FitContext {
        let settings_offload = self.projector_offload_disabled.is_none()
            && self
                .runner
                .as_ref()
                .is_none_or(|(c, _)| c.projector_offload != Some(false));
        let main_gpu = self
            .runner
            .as_ref()
            .and_then(|(c, _)| c.main_gpu)
            .unwrap_or(0);
        let gpu_name = self
            .runner_devices
            .iter()
            .map(|(d, _)| d.device.clone())
            .filter(Device::is_gpu)
            .nth(main_gpu.max(0) as usize)
            .unwrap_or_else(|| Device::gpu(Backend::Cuda, main_gpu.max(0) as u32));
        // The projector runs where clip says; before that line, where the command put it.
        let device = match &self.projector_backend {
            Some((d, _)) if d.is_host() => Device::Host,
            Some(_) => gpu_name,
            None if settings_offload => gpu_name,
            None => Device::Host,
        };
        FitContext {
            blocks: self.model_param("n_layer").and_then(parse_int),
            gpu_layers: self.runner.as_ref().and_then(|(c, _)| c.gpu_layers),
            projector: self.projector_estimate.map(|(q, l)| (q, device, l)),
            draft: self.draft_estimate,
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
        }
    }

    /// Resolve everything seen into a load (not yet reconciled).
    pub fn finish(mut self, ended_by: &str) -> Load {
        let mut reasons = Vec::new();
        if !self.started_cleanly {
            reasons.push(
                "the log starts in the middle of this load (no start line before it)".to_string(),
            );
        }
        if self.phase < Phase::Ended && self.failure.is_none() {
            reasons.push(format!("the load was not seen to finish ({ended_by})"));
        }
        let engine = self.engine();
        let era = self.era();
        let settings = self.settings();
        let gpus = self.gpus();
        let model = self.model();
        let estimate = self.estimate();
        let breakdown: Vec<BreakdownRow> = self
            .exit_table
            .iter()
            .map(|(r, line)| BreakdownRow {
                device: r.device.clone(),
                name: r.name.clone(),
                total: r.total,
                free: r.free,
                self_: r.self_,
                model: r.model,
                context: r.context,
                compute: r.compute,
                unaccounted: r.unaccounted,
                unaccounted_suspect: r.unaccounted_suspect,
                line: *line,
            })
            .collect();
        if !breakdown.is_empty() {
            self.mark_source("breakdown");
        }
        let caches: Vec<String> = self
            .kv_caches
            .iter()
            .filter(|(k, _)| !k.recurrent)
            .filter_map(|(k, _)| k.cells.map(|c| c.to_string()))
            .collect();
        if caches.len() > 1 {
            // Several KV caches (a sliding-window model): their buffers on one device are expected to add up.
            self.ledger
                .notes
                .retain(|n| !(n.contains(" kv buffer on ") && n.contains("same round")));
            self.notes.push(format!(
                "{} KV caches ({} cells: full and sliding-window attention); their buffers add up per device",
                caches.len(),
                caches.join(" and ")
            ));
        }
        self.notes.append(&mut self.ledger.notes);
        let mut buffers = std::mem::take(&mut self.ledger).into_buffers();
        // clip's size lines do not name a device: it is the one clip said it uses (`CLIP using CPU backend`),
        // else the first GPU, where the llama engine always put the projector.
        let unnamed = Device::gpu(Backend::Unknown, 0);
        let first_gpu = buffers
            .iter()
            .filter(|b| !b.host && b.device != unnamed)
            .map(|b| b.device.clone())
            .min();
        let clip_device = match &self.projector_backend {
            Some((d, _)) if d.is_host() => Some(Device::Host),
            _ => first_gpu,
        };
        if let Some(d) = clip_device {
            for b in buffers.iter_mut().filter(|b| b.device == unnamed) {
                b.host = d.is_host();
                b.device = d.clone();
            }
        }
        let failed = self
            .failure
            .as_ref()
            .is_some_and(|_| self.phase < Phase::Ended);
        let kv_caches = self
            .kv_caches
            .iter()
            .map(|(k, line)| KvCache {
                size: k.size,
                cells: k.cells,
                layers: k.layers,
                type_k: k.type_k.clone(),
                type_v: k.type_v.clone(),
                recurrent: k.recurrent,
                line: *line,
            })
            .collect();
        let projector_device = self.projector_backend.as_ref().map(|(d, _)| d.clone());
        Load {
            source: LoadSource {
                path: self.path.clone(),
                first_line: self.first_line,
                last_line: self.last_line,
                partial: !reasons.is_empty(),
                partial_reasons: reasons,
            },
            engine,
            era,
            model,
            settings,
            gpus,
            rejected_gpus: self.rejected.clone(),
            estimate,
            actual: Actual {
                buffers,
                breakdown,
                offloaded_layers: self.offloaded.map(|o| o.0),
                total_layers: self.offloaded.map(|o| o.1),
                failed,
                failure: self.failure.map(|(m, l)| format!("line {l}: {m}")),
                sources: self.actual_sources.iter().map(|s| s.to_string()).collect(),
                reported_total: self.summary_actual_total.map(|(q, _)| q),
                projector_device,
                projector_device_line: self.projector_backend.as_ref().map(|(_, l)| *l),
                kv_caches,
            },
            ollama_version: self.version,
            notes: self.notes,
        }
    }
}

/// `0.9.6`, `0.12.3-rc1`, `0.5.4-0-g2ddc32d-dirty` → (0, 9, 6).
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let core = text.trim_start_matches('v').split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// A GPU description as the report shows it.
pub fn gpu_from_info(g: &GpuInfo, line: u64) -> Gpu {
    Gpu {
        id: g
            .id
            .clone()
            .or(g.index.map(|i| i.to_string()))
            .unwrap_or_default(),
        library: g.library.clone(),
        name: g.name.clone(),
        compute: g.compute.clone(),
        driver: g.driver.clone(),
        variant: g.variant.clone(),
        total: g.total,
        available: g.available,
        free: g.free,
        bus_id: g.bus_id.clone(),
        line,
    }
}
