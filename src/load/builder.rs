//! Accumulating the events of one load, then resolving them into a [`Load`].
//!
//! Several lines can carry the same fact (the context size is in `--ctx-size`, `KvSize` and `n_ctx`); the
//! builder keeps every source and [`LoadBuilder::finish`] picks by a fixed precedence, so the result does
//! not depend on line order beyond what the dialect itself implies. Each concern resolves in its own file:
//! [`super::settings`], [`super::gpus`], [`super::estimate`] (and [`super::fit`]), [`super::engine`]; this
//! file holds what was seen and assembles the load.

use crate::model::{
    Actual, BreakdownRow, BufferKind, Device, KvCache, Launcher, Load, LoadEnd, LoadSource,
    ModelRef, PartialReason, Placer, Quantity, RejectedGpu,
};
use crate::parse::event::ParamValue;
use crate::parse::event::{
    BreakdownLine, ContextParam, GpuInfo, KvSizeLine, LlamaServerStart, LoadRequest, RunnerCommand,
    RunnerDevice, SummaryPart,
};

use super::buffers::{BufferLedger, BufferLine};
use super::engine_requests::RequestLedger;
use super::estimator::EstimatorLedger;
use super::fit::FitLedger;
use super::hyperparameters::{hyperparameters, layout};
use super::scheduler::SchedulerLedger;
use super::serving::ServingLedger;

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

/// llama.cpp's context parameters, the last printed value of each.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextParams {
    pub ctx: Option<i64>,
    pub batch: Option<i64>,
    pub ubatch: Option<i64>,
    pub seq_max: Option<i64>,
    pub flash_attention: Option<bool>,
    /// `n_ctx_seq` / `n_ctx_per_seq`.
    pub ctx_per_sequence: Option<i64>,
    /// `kv_unified`, when printed.
    pub kv_unified: Option<bool>,
    /// `n_parallel is set to auto, using n_parallel = N`.
    pub parallel_auto: Option<i64>,
    /// `pipeline parallelism enabled (n_copies=N)`.
    pub pipeline_copies: Option<i64>,
}

impl ContextParams {
    pub fn read(&mut self, param: ContextParam) {
        match param {
            ContextParam::Ctx(n) => self.ctx = Some(n),
            ContextParam::Batch(n) => self.batch = Some(n),
            ContextParam::Ubatch(n) => self.ubatch = Some(n),
            ContextParam::SeqMax(n) => self.seq_max = Some(n),
            ContextParam::ParallelAuto(n) => self.parallel_auto = Some(n),
            ContextParam::PipelineCopies(n) => self.pipeline_copies = Some(n),
            // The last line counts; `auto` says nothing about what was chosen.
            ContextParam::FlashAttention(on) => self.flash_attention = on,
            ContextParam::CtxPerSequence(n) => self.ctx_per_sequence = Some(n),
            ContextParam::KvUnified(on) => self.kv_unified = Some(on),
        }
    }
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
    /// The command Ollama logged when it started the runner (one of Ollama's own lines).
    pub runner: Option<(RunnerCommand, u64)>,
    /// A llama.cpp program's own command line, pasted with the log or logged by a wrapper: the user's
    /// settings, no sign of Ollama.
    pub command_line: Option<(RunnerCommand, u64)>,
    pub loading_model: Option<(Option<i64>, Option<i64>, u64)>,
    /// The Ollama engine's `load request`s (`fit`, `alloc`, `commit`).
    pub requests: RequestLedger,
    pub context: ContextParams,
    pub kv_cells: Option<i64>,
    /// The first line of the load's KV caches (an announcement, a KV buffer or a size line): the caches'
    /// start is in the log when some line of the load came before it (`settings`).
    pub first_kv_line: Option<u64>,
    pub kv_type: Option<String>,
    pub architecture: Option<String>,
    /// Ollama's estimator: the estimate line the layers were placed by.
    pub estimator: EstimatorLedger,
    pub summary_estimate: Vec<SummaryEntry>,
    pub summary_estimate_total: Option<(Quantity, u64)>,
    /// llama.cpp's `--fit` phase: its probe tables, decision and result (llama.cpp placed the layers).
    pub fit: FitLedger,
    /// vLLM's or SGLang's memory lines, per rank (`load::serving`).
    pub serving: ServingLedger,
    /// What the server held while it served (`load::serving_memory`).
    pub timeline: super::serving_memory::TimelineLedger,
    /// Ollama's scheduler before llama-server started (Ollama ≥ 0.30): its decisions and retries.
    pub scheduler: SchedulerLedger,
    /// Lines only one runtime prints (`docs/log-formats.md` §0.1): the weakest signs of the runtime and engine.
    pub signs: Vec<crate::parse::event::RuntimeSign>,
    /// The scheduler's attempts before this load's layout (`load::attempts`).
    pub attempts: Vec<crate::model::Attempt>,
    pub ledger: BufferLedger,
    pub summary_actual_total: Option<(Quantity, u64)>,
    /// The breakdown table printed after the load (at llama-server's exit): an actual.
    pub exit_table: Vec<(BreakdownLine, u64)>,
    /// The exit table began with its header (not cut above its first row).
    pub exit_table_headed: bool,
    /// A table header was printed: the next row starts a new table.
    pub header_pending: bool,
    /// The table whose rows are being read, and its phase.
    pub open_table: Option<super::lifecycle::OpenTable>,
    /// Every breakdown table's phase, in order.
    pub tables: Vec<crate::model::TableRecord>,
    /// Buffer lines that were a test allocation (the fit's dry run).
    pub dry_run: Option<crate::model::DryRunBuffers>,
    /// The first GPU weights or KV buffer printed as 0.00 MiB: only the fit's no-alloc dry run prints one
    /// (`lifecycle::demote_lone_dry_run`), so llama.cpp placed the layers even when a later round's reprint
    /// replaced it.
    pub no_alloc_print_line: Option<u64>,
    /// `offloaded L/M layers`: the real load.
    pub offloaded_line: Option<u64>,
    /// `model loaded`: serving.
    pub serving_line: Option<u64>,
    /// `creating … draft context`: buffers after it are the speculative draft's.
    pub draft_context_line: Option<u64>,
    pub offloaded: Option<(i64, i64)>,
    pub seen_offloaded: bool,
    /// llama.cpp's device inventory (`device_info:`, `using device … MiB free`).
    pub runner_devices: Vec<(RunnerDevice, u64)>,
    /// `print_info:` hyperparameters, last value per key, with the line that printed it.
    pub model_params: Vec<(String, ParamValue, u64)>,
    pub kv_caches: Vec<(KvSizeLine, u64)>,
    /// The cache `creating (non-)SWA KV cache` announced, for the next KV size line.
    pub kv_cache_swa: Option<bool>,
    /// llama-server's `[mtmd]` projector estimate and `[spec]` draft estimate, with their lines.
    pub projector_estimate: Option<(Quantity, u64)>,
    pub draft_estimate: Option<(Quantity, u64)>,
    /// Where clip ran (`CLIP using CPU backend`).
    pub projector_backend: Option<(Device, u64)>,
    /// Ollama kept the projector off the GPU, and why (`disabling multimodal projector offload`).
    pub projector_offload_disabled: Option<(Option<String>, u64)>,
    /// A line of Ollama's llama-server wrapper was read while this load was open (`waiting for llama-server …`).
    pub ollama_llama_server: bool,
    /// The model path from `loading model via llama-server` (Ollama ≥ 0.30 only prints it that way).
    pub model_path: Option<String>,
    /// What llama-server's own start lines said (`load::events`), with the first of them.
    pub llama_server: Option<(LlamaServerStart, u64)>,
    /// llama.cpp read a model in this load (`llama_model_loader`): a weak sign of the llama engine.
    pub model_loader_seen: bool,
    /// GPUs the server found and rejected (carried across loads until the server restarts).
    pub rejected: Vec<RejectedGpu>,
    pub failure: Option<(String, u64)>,
    /// Who a failure line's model file says started llama.cpp (`load::runtime`'s model stores: Ollama's blobs,
    /// LM Studio's models), from any failure line of the load.
    pub failed_model_store: Option<crate::model::Launcher>,
    /// The failure recorded is an out-of-memory one.
    pub failure_oom: bool,
    /// The part a failure line named (the first such line).
    pub failed_part: Option<(crate::model::FailedPart, u64)>,
    /// Why the load failed, merged over every failure line (`FailureCause::merge`).
    pub failure_cause: Option<crate::model::FailureCause>,
    /// The first allocation a failure line names with its size; its device from a line that names one.
    pub failed_allocation: Option<crate::model::FailedAllocation>,
    /// A line only llama.cpp's own programs print (`common_init_from_params`, `main: error:`): no Ollama runner.
    pub llama_cpp_tool: bool,
    /// Failures the runtime recovered from (a layout backoff after them), in log order.
    pub recovered: Vec<crate::model::Recovered>,
    /// Metal's budget (`recommendedMaxWorkingSetSize`) and what the process allocated against it.
    pub working_set: Option<crate::model::WorkingSet>,
    pub notes: Vec<String>,
    pub actual_sources: Vec<&'static str>,
    /// RPC devices the load's lines name, with their host and the first line naming them (`load::remote`).
    pub remote: Vec<(Device, String, u64)>,
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

    /// The runtime recovered from the failure seen so far (Ollama's layout backoff): it is kept as recovered,
    /// and the load is no longer failed unless a later line fails it again.
    pub fn recover(&mut self, backoff: Option<String>, line: u64) {
        let Some((failure, failure_line)) = self.failure.take() else {
            return;
        };
        self.recovered.push(crate::model::Recovered {
            failure,
            failure_line,
            cause: self.failure_cause.take(),
            allocation: self.failed_allocation.take(),
            recovery: backoff.map_or("backoff".to_string(), |b| format!("backoff {b}")),
            recovery_line: line,
        });
        self.failure_oom = false;
        self.failed_part = None;
    }

    /// One of llama-server's start lines: keep what it says (the first build, model and verbosity printed).
    pub fn llama_server_start(&mut self, start: LlamaServerStart, line: u64) {
        let (seen, _) = self
            .llama_server
            .get_or_insert_with(|| (LlamaServerStart::default(), line));
        seen.build = seen.build.take().or(start.build);
        seen.model = seen.model.take().or(start.model);
        seen.verbosity = seen.verbosity.or(start.verbosity);
    }

    /// llama-server started here but printed none of its memory lines: they come at verbosity 4 only.
    fn quiet_llama_server_note(&self) -> Option<String> {
        let (start, _) = self.llama_server.as_ref()?;
        if self.runner.is_some() {
            // Ollama starts llama-server with `--log-verbosity 4` itself.
            return None;
        }
        let memory_lines = !self.ledger.is_empty()
            || !self.fit.is_empty()
            || !self.exit_table.is_empty()
            || !self.kv_caches.is_empty();
        if memory_lines {
            return None;
        }
        let level = match start.verbosity {
            Some(v) if v >= 4 => return None,
            Some(v) => format!("this log was written at verbosity {v}"),
            None => "this log does not say its verbosity".to_string(),
        };
        Some(format!(
            "llama-server prints its memory lines (weights, KV cache and compute buffers, --fit, the breakdown table) only at verbosity 4 and {level}: start it with `-lv 4` to compare its memory"
        ))
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

    /// The command that started the runner and its line: Ollama's, else the user's own llama.cpp command.
    pub fn command(&self) -> Option<&(RunnerCommand, u64)> {
        self.runner.as_ref().or(self.command_line.as_ref())
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

    pub(super) fn commit_request(&self) -> Option<&LoadRequest> {
        self.requests.decisive()
    }

    /// A `print_info:` count (`n_layer`), when printed as one.
    pub(super) fn model_count(&self, key: &str) -> Option<i64> {
        self.model_params
            .iter()
            .rev()
            .find(|(k, _, _)| k == key)
            .and_then(|(_, v, _)| v.count())
            .and_then(|n| i64::try_from(n).ok())
    }

    pub(super) fn model(&self) -> ModelRef {
        let hyperparameters = hyperparameters(&self.model_params);
        let path = self
            .command()
            .and_then(|(c, _)| c.model.clone())
            .or(self.model_path.clone())
            .or_else(|| {
                self.llama_server
                    .as_ref()
                    .and_then(|(s, _)| s.model.clone())
            });
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
            block_count: self.model_count("n_layer"),
            layout: hyperparameters.as_ref().and_then(|h| layout(h).ok()),
            hyperparameters,
            gguf: None,
        }
    }

    /// Resolve everything seen into a load (not yet reconciled).
    pub fn finish(mut self, ended_by: LoadEnd) -> Load {
        let mut reasons = Vec::new();
        if !self.started_cleanly {
            reasons.push(PartialReason::StartsMidLoad);
        }
        if self.phase < Phase::Ended && self.failure.is_none() {
            reasons.push(PartialReason::Unfinished(ended_by));
        }
        self.demote_lone_dry_run();
        if let Some(note) = self.quiet_llama_server_note() {
            self.notes.push(note);
        }
        let engine = self.engine();
        let runtime = self.runtime();
        let shared_pools = self.shared_pools();
        for pool in &shared_pools {
            let names: Vec<String> = pool.iter().map(|d| d.to_string()).collect();
            self.notes.push(format!(
                "{} report the same total and free memory: one memory pool (one physical GPU or unified memory), so their free memory is not added up",
                names.join(", ")
            ));
        }
        if let Some(metal) = self
            .exit_table
            .iter()
            .map(|(r, _)| r)
            .chain(self.fit.first_rows())
            .find(|r| r.device.is_metal() && r.total.is_some())
        {
            self.notes.push(format!(
                "{}'s total ({}) is Metal's recommended working set, not the machine's RAM",
                metal.device,
                crate::model::human(metal.total.map_or(0, |t| t.low))
            ));
        }
        let lifecycle = if runtime.llama_cpp_places_layers() {
            self.lifecycle(&self.fit_context())
        } else {
            crate::model::Lifecycle::default()
        };
        let mut settings = self.settings();
        let mut gpus = self.gpus();
        let device_notes = self.device_notes(&gpus);
        self.notes.extend(device_notes);
        let model = self.model();
        let mut estimate = self.estimate();
        let serving = (!self.serving.is_empty()).then(|| self.serving.figures());
        if let Some(figures) = &serving {
            // The engine's own plan and what each rank reports (`load::serving`).
            estimate = self.serving.estimate(figures).or(estimate);
            for b in self.serving.buffers(figures) {
                self.ledger.set_last(BufferLine {
                    component: if self.serving.sglang {
                        "sglang"
                    } else {
                        "vllm"
                    },
                    buffer: &b.buffer,
                    device: Some(b.device.clone()),
                    kind: b.kind,
                    size: b.size,
                    line: b.line,
                    projector: false,
                });
            }
            self.mark_source(if self.serving.sglang {
                "sglang"
            } else {
                "vllm"
            });
            settings.ctx_size = settings.ctx_size.or(figures.max_len.map(|c| c.value));
            gpus = super::serving::gpus_of(figures);
            if self.serving.repeated > 0 {
                self.notes.push(format!(
                    "{} engine-level line(s) printed again with the same figure (counted once)",
                    self.serving.repeated
                ));
            }
        }
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
            self.ledger.duplicates.retain(|d| d.kind != BufferKind::Kv);
            self.notes.push(format!(
                "{} KV caches ({} cells: full and sliding-window attention); their buffers add up per device",
                caches.len(),
                caches.join(" and ")
            ));
        }
        let duplicates = std::mem::take(&mut self.ledger.duplicates);
        self.notes.extend(duplicates.iter().map(|d| d.to_string()));
        let mut buffers = std::mem::take(&mut self.ledger).into_buffers();
        if reasons
            .iter()
            .any(|r| matches!(r, PartialReason::Unfinished(_)))
        {
            // A compute reservation of 0 B in a load the log does not see finish says only that nothing was
            // reserved there yet: the runtimes reserve their graphs again before the load is done (the Ollama
            // engine prints `compute graph … buffer_type=CPU size="0 B"`, then 10.5 MiB for the same backend,
            // `sample-logs/004-…` lines 33 and 35). Not the load's figure: left out (it adds nothing to a sum).
            buffers.retain(|b| !(b.kind == BufferKind::Compute && b.size.bytes == 0));
        }
        // clip's size lines do not name a device: the one a line of the load names (`clip_device`), else it
        // stays unknown.
        if let Some(d) = self.clip_device(&buffers) {
            for b in buffers.iter_mut().filter(|b| !b.device.is_known()) {
                b.host = d.is_host();
                b.device = d.clone();
            }
        }
        let unplaced: Vec<String> = buffers
            .iter()
            .filter(|b| !b.device.is_known())
            .map(|b| b.line.to_string())
            .collect();
        if !unplaced.is_empty() {
            self.notes.push(format!(
                "{} {}: clip's memory is on a device the log does not name (no line says where clip runs: `CLIP using … backend`, clip's compute buffer, the projector offload setting, a discovery without GPUs): counted in the projector's row, in no device's",
                if unplaced.len() == 1 { "line" } else { "lines" },
                unplaced.join(", ")
            ));
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
        // `on device 0` names a position: the device is the load's GPU there (`CUDA0`, `ROCm0`).
        let resolve =
            |mut a: crate::model::FailedAllocation| {
                if let Some(position) = a
                    .device
                    .as_ref()
                    .filter(|d| d.is_unknown_gpu())
                    .and_then(Device::position)
                {
                    if let Some(known) = buffers.iter().map(|b| &b.device).find(|d| {
                        d.is_gpu() && !d.is_unknown_gpu() && d.position() == Some(position)
                    }) {
                        a.device = Some(known.clone());
                    }
                }
                a
            };
        let failed_allocation = self.failed_allocation.take().map(resolve);
        let recovered: Vec<crate::model::Recovered> = std::mem::take(&mut self.recovered)
            .into_iter()
            .map(|mut r| {
                r.allocation = r.allocation.map(resolve);
                r
            })
            .collect();
        let projector_device = self.projector_backend.as_ref().map(|(d, _)| d.clone());
        let scheduler = std::mem::take(&mut self.scheduler);
        let runner_version = self.runner.as_ref().and_then(|(c, _)| c.version.clone());
        let projector_estimate = self.projector_estimate;
        // The scheduler's evictions and the `--fit` rounds, in the order printed.
        let mut attempts = std::mem::take(&mut self.attempts);
        attempts.extend(self.fit.attempts());
        attempts.sort_by_key(crate::model::Attempt::line);
        if let Some(dry) = &self.dry_run {
            super::fit_rounds::attach_dry_run_buffers(&mut attempts, &dry.lines);
        }
        let mut load = Load {
            source: LoadSource {
                path: self.path.clone(),
                first_line: self.first_line,
                last_line: self.last_line,
                partial: !reasons.is_empty(),
                partial_reasons: reasons,
            },
            engine,
            runtime,
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
                failed_part: self.failed_part.filter(|_| failed),
                failure_cause: self.failure_cause.filter(|_| failed),
                failed_allocation: failed_allocation.filter(|_| failed),
                working_set: self.working_set,
                recovered,
            },
            serving,
            timeline: self.timeline.finish(),
            // The server's `Listening … (version …)`, else the version the runner's path names.
            ollama_version: self.version.or(runner_version),
            llama_cpp_build: self.llama_server.and_then(|(s, _)| s.build),
            scheduler: None,
            attempts,
            notes: self.notes,
            lifecycle,
            shared_pools,
        };
        // Only Ollama ≥ 0.30's scheduler prints its decisions before llama-server starts.
        load.scheduler = match load.runtime.placer() {
            Placer::LlamaFit(Launcher::Ollama) => {
                Some(scheduler.resolve(&load, projector_estimate))
            }
            Placer::LlamaFit(Launcher::User | Launcher::Unknown)
            | Placer::OllamaScheduler
            | Placer::ServingEngine(_)
            | Placer::Unknown => None,
        };
        load
    }
}
