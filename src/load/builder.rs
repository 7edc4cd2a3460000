//! Accumulating the events of one load, then resolving them into a [`Load`].
//!
//! Several lines can carry the same fact (the context size is in `--ctx-size`, `KvSize` and `n_ctx`); the
//! builder keeps every source and [`LoadBuilder::finish`] picks by a fixed precedence, so the result does
//! not depend on line order beyond what the dialect itself implies.

use crate::model::{
    device_for_library, device_sort_key, Actual, BreakdownRow, BufferKind, DeviceEstimate, Engine,
    Estimate, Gpu, Layers, Load, LoadSource, ModelRef, Quantity, Settings, HOST_DEVICE, MIB,
};
use crate::parse::event::{BreakdownLine, EstimateLine, GpuInfo, RunnerCommand, SummaryPart};
use crate::parse::values::{parse_gpu_layers, parse_int};

use super::buffers::{BufferLedger, BufferLine};

/// Breakdown tables kept per load (fit probing prints one per probe).
const MAX_TABLES: usize = 16;

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
    pub device: String,
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
    pub fit_projection: Option<(Quantity, Quantity, u64)>,
    pub fit_devices: Vec<(String, Option<i64>, Quantity, u64)>,
    pub ledger: BufferLedger,
    pub summary_actual_total: Option<(Quantity, u64)>,
    /// Memory breakdown tables in print order (at most the last [`MAX_TABLES`]).
    pub breakdown_tables: Vec<Vec<(BreakdownLine, u64)>>,
    /// Resolved at the end: the last table that is an allocation, and the last that is a projection.
    pub breakdown: Vec<(BreakdownLine, u64)>,
    pub breakdown_projection: Vec<(BreakdownLine, u64)>,
    pub offloaded: Option<(i64, i64)>,
    pub seen_offloaded: bool,
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

    /// Add one row of a memory breakdown table; a row for a device already in the current table opens a new
    /// table (llama-server prints one per fit probe and one after the load).
    pub fn add_breakdown(&mut self, row: BreakdownLine, line: u64) {
        let opens = self
            .breakdown_tables
            .last()
            .is_none_or(|t| t.iter().any(|(r, _)| r.device == row.device));
        if opens {
            if self.breakdown_tables.len() == MAX_TABLES {
                self.breakdown_tables.remove(0);
            }
            self.breakdown_tables.push(Vec::new());
        }
        if let Some(table) = self.breakdown_tables.last_mut() {
            table.push((row, line));
        }
    }

    /// Split the tables into the allocation (the last table whose figures add up) and the projection (the
    /// last table where `free + self` exceeds `total`: free memory was measured before `self` was
    /// allocated, so `self` is what a fit probe would need, not what was taken).
    fn resolve_breakdown(&mut self) {
        let is_projection = |t: &Vec<(BreakdownLine, u64)>| {
            t.iter()
                .any(|(r, _)| r.unaccounted_suspect && r.unaccounted.is_none_or(|u| u <= -2 * MIB))
        };
        let tables = std::mem::take(&mut self.breakdown_tables);
        let count = tables.len();
        for table in tables {
            let first = table.first().map(|(_, l)| *l).unwrap_or(0);
            if is_projection(&table) {
                self.notes.push(format!(
                    "line {first}: memory breakdown with free + self > total: a fit projection, read as an estimate"
                ));
                self.breakdown_projection = table;
            } else {
                self.breakdown = table;
            }
        }
        if count > 1 {
            self.notes.push(format!(
                "{count} memory breakdown tables printed; the last of each kind is used"
            ));
        }
    }

    pub fn add_summary_actual(
        &mut self,
        part: SummaryPart,
        device: &str,
        size: Quantity,
        line: u64,
    ) {
        let kind = match part {
            SummaryPart::Weights => BufferKind::Model,
            SummaryPart::Kv => BufferKind::Kv,
            SummaryPart::Graph => BufferKind::Compute,
        };
        self.ledger.set_last(BufferLine {
            component: "memory-summary",
            buffer: device,
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
        device: &str,
        size: Quantity,
        line: u64,
    ) {
        self.summary_estimate
            .retain(|e| !(e.part == part && e.device == device));
        self.summary_estimate.push(SummaryEntry {
            part,
            device: device.to_string(),
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

    fn engine(&self) -> Engine {
        let cmd_ollama = self.runner.as_ref().is_some_and(|(c, _)| c.ollama_engine);
        if cmd_ollama || self.ollama_engine_hint {
            Engine::Ollama
        } else if self.llama_engine_hint
            || self.runner.as_ref().is_some_and(|(c, _)| c.llama_server)
            || (self.runner.is_some() && !self.ledger.is_empty())
        {
            Engine::Llama
        } else {
            Engine::Unknown
        }
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
        Settings {
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
                .or(self.kv_type.clone()),
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
        for (m, _) in &self.gpu_memory {
            if let Some(gpu) = gpus.iter_mut().find(|g| Some(&g.id) == m.id.as_ref()) {
                gpu.available = m.available.or(gpu.available);
            } else if let Some(id) = &m.id {
                gpus.push(Gpu {
                    id: id.clone(),
                    library: m.library.clone(),
                    available: m.available,
                    ..Gpu::default()
                });
            }
        }
        gpus
    }

    fn model(&self) -> ModelRef {
        let path = self.runner.as_ref().and_then(|(c, _)| c.model.clone());
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
        }
    }

    fn weights_semantics(&self, form: &str) -> &'static str {
        // Before v0.6.1 memory.weights.total summed blocks *with* their KV share; v0.6.3 made it blocks + output.
        if let Some(v) = self.version.as_deref().and_then(parse_version) {
            return if v < (0, 6, 1) { "blocks+kv" } else { "blocks" };
        }
        match form {
            "e1" | "e2" | "e3" | "e4-e6" => "blocks+kv",
            _ => "blocks",
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
                    device: device_for_library(if lib == "gpu" { "cuda" } else { &lib }, i),
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
                form: format!("offload-{}", e.form),
                weights_semantics: self.weights_semantics(&e.form).to_string(),
                lines: vec![*line],
            });
        }
        if !self.summary_estimate.is_empty() {
            let mut devices: Vec<String> = self
                .summary_estimate
                .iter()
                .map(|s| s.device.clone())
                .collect();
            devices.sort_by_key(|d| device_sort_key(d));
            devices.dedup();
            let part = |device: &str, part: SummaryPart| {
                self.summary_estimate
                    .iter()
                    .find(|s| s.device == device && s.part == part)
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
                        device: if d == "CPU" {
                            HOST_DEVICE.to_string()
                        } else {
                            d.clone()
                        },
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
                form: "memory-summary".to_string(),
                weights_semantics: "per-device".to_string(),
                lines,
                ..Estimate::default()
            });
        }
        if !self.fit_devices.is_empty() || self.fit_projection.is_some() {
            let per_device = self
                .fit_devices
                .iter()
                .map(|(device, layers, used, _)| DeviceEstimate {
                    device: device.clone(),
                    total: Some(*used),
                    layers: *layers,
                    ..DeviceEstimate::default()
                })
                .collect();
            let mut lines: Vec<u64> = self.fit_devices.iter().map(|f| f.3).collect();
            lines.extend(self.fit_projection.map(|p| p.2));
            lines.sort_unstable();
            return Some(Estimate {
                required_partial: self.fit_projection.map(|p| p.0),
                available: self.fit_projection.map(|p| vec![p.1]).unwrap_or_default(),
                per_device,
                form: "fit-projection".to_string(),
                weights_semantics: "per-device".to_string(),
                lines,
                ..Estimate::default()
            });
        }
        if !self.breakdown_projection.is_empty() {
            let per_device = self
                .breakdown_projection
                .iter()
                .map(|(r, _)| DeviceEstimate {
                    device: r.device.clone(),
                    weights: Some(r.model),
                    kv: Some(r.context),
                    graph: Some(r.compute),
                    total: Some(r.self_),
                    layers: None,
                })
                .collect();
            return Some(Estimate {
                per_device,
                form: "breakdown-projection".to_string(),
                weights_semantics: "per-device".to_string(),
                lines: self.breakdown_projection.iter().map(|(_, l)| *l).collect(),
                ..Estimate::default()
            });
        }
        None
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
        self.resolve_breakdown();
        let engine = self.engine();
        let settings = self.settings();
        let gpus = self.gpus();
        let model = self.model();
        let estimate = self.estimate();
        let breakdown = self
            .breakdown
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
        if !self.breakdown.is_empty() {
            self.mark_source("breakdown");
        }
        self.notes.append(&mut self.ledger.notes);
        let mut buffers = std::mem::take(&mut self.ledger).into_buffers();
        // clip.cpp does not say which device holds the projector; the llama engine always puts it on the
        // first GPU, so charge it there.
        let first_gpu = buffers
            .iter()
            .filter(|b| !b.host && b.buffer != "projector")
            .map(|b| b.device.clone())
            .min_by_key(|d| device_sort_key(d));
        for b in buffers.iter_mut().filter(|b| b.buffer == "projector") {
            b.device = first_gpu.clone().unwrap_or_else(|| "GPU0".to_string());
        }
        let failed = self
            .failure
            .as_ref()
            .is_some_and(|_| self.phase < Phase::Ended);
        Load {
            source: LoadSource {
                path: self.path.clone(),
                first_line: self.first_line,
                last_line: self.last_line,
                partial: !reasons.is_empty(),
                partial_reasons: reasons,
            },
            engine,
            model,
            settings,
            gpus,
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
            },
            components: Vec::new(),
            devices: Vec::new(),
            observed: Vec::new(),
            findings: Vec::new(),
            whatif: None,
            suggestions: Vec::new(),
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
        bus_id: g.bus_id.clone(),
        line,
    }
}
