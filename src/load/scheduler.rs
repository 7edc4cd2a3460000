//! The lifecycle of Ollama's scheduler in the llama-server era (Ollama 0.30–0.34; its lines are in
//! `docs/log-formats.md` §5.6). Before llama-server starts, the scheduler:
//!
//! 1. reads its environment at start-up (`server config`) and picks a default context from the VRAM tier
//!    (`vram-based default context`) — both server-wide, kept by the assembler and given to every load;
//! 2. takes the llama-server path (`using llama-server for model`) and predicts the model's memory as *file size
//!    plus f16 KV*; when that is at most 80 % of one GPU's available memory it prints `selecting single GPU …`
//!    and gives llama-server that GPU alone, else prints nothing and gives it every GPU;
//! 3. checks eviction with the same prediction (`… evicting` / `fits alongside …`), decides mmap and the
//!    projector (`disabling mmap …`, `disabling multimodal projector offload`);
//! 4. starts llama-server; when that fails it may retry once (`reducing automatic context and retrying once`,
//!    `evicting all other models …`, `… retrying with projector CPU offload`) and give up (`Load failed`).
//!
//! One [`SchedulerLedger`] per load: [`SchedulerLedger::push`] takes each scheduler line as it is read (the
//! assembler decides which load a line belongs to), and [`SchedulerLedger::resolve`] turns what was read,
//! with the load's own figures, into the [`Scheduler`] the later stages read.

use crate::model::scheduler::{
    Decision, DefaultContext, EnvSetting, Eviction, GpuChoice, Overwritten, PaddingEvidence,
    ProjectorGate, ProjectorRule, ProjectorRuleKind, PsRow, Retry, RuleEvidence, Scheduler,
    PADDING_SINCE, PROJECTOR_FLOOR, PROJECTOR_RULE_SINCE,
};
use crate::model::{Load, Quantity, GIB, MIB};
use crate::parse::event::SchedulerLine;

use super::engine::parse_version;
use super::prediction;

/// The variables of `server config` that reach (or are known not to reach) the placement in this era
/// (`docs/log-formats.md` §5.6, the knob table): only these are kept.
const PLACEMENT_VARIABLES: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "GGML_VK_VISIBLE_DEVICES",
    "OLLAMA_CONTEXT_LENGTH",
    "OLLAMA_NUM_PARALLEL",
    "OLLAMA_KV_CACHE_TYPE",
    "OLLAMA_FLASH_ATTENTION",
    "OLLAMA_SCHED_SPREAD",
    "OLLAMA_GPU_OVERHEAD",
    "OLLAMA_MAX_LOADED_MODELS",
    "LLAMA_ARG_FIT",
    "LLAMA_ARG_FIT_TARGET",
];

/// The server-wide part: `server config` and `vram-based default context`, kept until another log begins.
#[derive(Debug, Clone, Default)]
pub struct ServerScheduler {
    pub environment: Option<(Vec<(String, String)>, u64)>,
    pub default_context: Option<DefaultContext>,
}

impl ServerScheduler {
    /// Take a server-wide line; any other is handed back.
    pub fn push(&mut self, line: SchedulerLine, at: u64) -> Option<SchedulerLine> {
        match line {
            SchedulerLine::ServerConfig(env) => self.environment = Some((env, at)),
            SchedulerLine::DefaultContext {
                total_vram,
                num_ctx,
            } => {
                self.default_context = Some(DefaultContext {
                    total_vram,
                    num_ctx,
                    line: at,
                })
            }
            other => return Some(other),
        }
        None
    }
}

/// The scheduler lines of one load.
#[derive(Debug, Clone, Default)]
pub struct SchedulerLedger {
    server: ServerScheduler,
    path_line: Option<u64>,
    choice: Option<GpuChoice>,
    logged_prediction: Option<(Quantity, u64)>,
    eviction: Option<Eviction>,
    mmap_disabled: Option<Decision>,
    invalid_fit_target: Option<Decision>,
    retries: Vec<Retry>,
    overwritten: Vec<Overwritten>,
    no_buffer_sizes_line: Option<u64>,
    runtime_oom_lines: Vec<u64>,
    ps_table: Vec<PsRow>,
    file_size: Option<(Quantity, u64)>,
    first_line: Option<u64>,
}

impl SchedulerLedger {
    /// Carry the server's environment into a ledger begun before the load opened.
    pub fn set_server(&mut self, server: &ServerScheduler) {
        self.server = server.clone();
    }

    /// The first line of the load this ledger read (the scheduler's lines come before the runner's).
    pub fn first_line(&self) -> Option<u64> {
        self.first_line
    }

    /// Whether a line is one the scheduler prints before llama-server starts (it belongs to the next load).
    pub fn before_start(line: &SchedulerLine) -> bool {
        match line {
            SchedulerLine::UsingLlamaServer
            | SchedulerLine::SingleGpu { .. }
            | SchedulerLine::MainGpuPassedThrough
            | SchedulerLine::Backend { .. }
            | SchedulerLine::Eviction { .. }
            | SchedulerLine::MmapDisabled { .. }
            | SchedulerLine::InvalidFitTarget { .. }
            | SchedulerLine::PredictedExceeds { .. } => true,
            SchedulerLine::ServerConfig(_)
            | SchedulerLine::DefaultContext { .. }
            | SchedulerLine::Retry { .. }
            | SchedulerLine::RuntimeOom
            | SchedulerLine::NoBufferSizes
            | SchedulerLine::EnvOverwritten { .. }
            | SchedulerLine::PsHeader
            | SchedulerLine::PsRow(_)
            | SchedulerLine::MakeSpace { .. } => false,
        }
    }

    /// The model file's size (`file size = …`), the first term of the prediction.
    pub fn file_size(&mut self, size: Quantity, at: u64) {
        self.file_size = Some((size, at));
    }

    /// Record one scheduler line read at `at`.
    pub fn push(&mut self, line: SchedulerLine, at: u64) {
        if Self::before_start(&line) {
            self.first_line = Some(self.first_line.map_or(at, |f| f.min(at)));
        }
        match line {
            SchedulerLine::ServerConfig(_) | SchedulerLine::DefaultContext { .. } => {
                let _ = self.server.push(line, at);
            }
            SchedulerLine::UsingLlamaServer => self.path_line = Some(at),
            SchedulerLine::SingleGpu {
                requested,
                main_gpu: _,
                id,
                name,
                description,
                predicted,
                available,
            } => {
                if let Some(p) = predicted {
                    self.logged_prediction = Some((p, at));
                }
                self.choice = Some(GpuChoice::SingleGpu {
                    id,
                    name: description.or(name),
                    requested,
                    predicted,
                    available,
                    line: at,
                });
            }
            SchedulerLine::MainGpuPassedThrough => {}
            SchedulerLine::Backend {
                library,
                gpu_count,
                available_gpu_count: _,
            } => {
                if !matches!(self.choice, Some(GpuChoice::SingleGpu { .. })) {
                    self.choice = Some(GpuChoice::Backend {
                        library,
                        gpu_count,
                        line: at,
                    });
                }
            }
            SchedulerLine::Eviction {
                evicting,
                predicted,
                predicted_num_ctx: _,
                available,
                gpu_free: _,
                system_free: _,
            } => {
                if let (Some(p), None) = (predicted, self.logged_prediction) {
                    self.logged_prediction = Some((p, at));
                }
                self.eviction = Some(Eviction {
                    evicting,
                    predicted,
                    available,
                    line: at,
                });
            }
            SchedulerLine::MmapDisabled { reason } => {
                self.mmap_disabled = Some(Decision { reason, line: at })
            }
            SchedulerLine::InvalidFitTarget { value } => {
                self.invalid_fit_target = Some(Decision {
                    reason: value,
                    line: at,
                })
            }
            SchedulerLine::Retry {
                kind,
                old_num_ctx,
                new_num_ctx,
                error,
            } => self.retries.push(Retry {
                kind,
                old_num_ctx,
                new_num_ctx,
                error,
                line: at,
            }),
            SchedulerLine::RuntimeOom => self.runtime_oom_lines.push(at),
            // The assembler makes it an attempt of the load (`load::attempts`); it never reaches a ledger.
            SchedulerLine::MakeSpace { .. } => {}
            SchedulerLine::PredictedExceeds { predicted, .. } => {
                if let (Some(p), None) = (predicted, self.logged_prediction) {
                    self.logged_prediction = Some((p, at));
                }
            }
            SchedulerLine::NoBufferSizes => self.no_buffer_sizes_line = Some(at),
            SchedulerLine::EnvOverwritten { variable, flag } => {
                if !self.overwritten.iter().any(|o| o.variable == variable) {
                    self.overwritten.push(Overwritten {
                        variable,
                        flag,
                        line: at,
                    });
                }
            }
            SchedulerLine::PsHeader => self.ps_table.clear(),
            SchedulerLine::PsRow(row) => self.ps_table.push(PsRow {
                name: row.name,
                size: row.size,
                processor: row.processor,
                gpu_percent: row.gpu_percent,
                context: row.context,
                line: at,
            }),
        }
    }

    /// What the scheduler decided for `load`, with the prediction computed from the load's figures when the
    /// log did not print it. `projector_estimate` is llama-server's `[mtmd]` estimate with its line.
    pub fn resolve(self, load: &Load, projector_estimate: Option<(Quantity, u64)>) -> Scheduler {
        let environment: Vec<EnvSetting> = self
            .server
            .environment
            .as_ref()
            .map(|(env, _)| {
                env.iter()
                    .filter(|(k, _)| PLACEMENT_VARIABLES.contains(&k.as_str()))
                    .map(|(k, v)| EnvSetting {
                        name: k.clone(),
                        value: v.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let user_fit_target = environment
            .iter()
            .any(|e| e.name == "LLAMA_ARG_FIT_TARGET" && !e.value.is_empty());
        let gpu_choice = match (self.choice, &load.settings) {
            (Some(choice), _) => choice,
            (None, s) if s.split_mode.as_deref() == Some("none") && s.main_gpu.is_some() => {
                GpuChoice::MainGpu {
                    main_gpu: s.main_gpu.unwrap_or_default(),
                    line: load.source.first_line,
                }
            }
            (None, _) if self.path_line.is_some() || gpus_with_buffers(load) > 1 => {
                GpuChoice::AllGpus {
                    since_line: self.path_line,
                }
            }
            (None, _) => GpuChoice::NotShown,
        };
        let prediction = prediction::prediction(load, self.logged_prediction, self.file_size);
        let single_gpu_rule = prediction
            .as_ref()
            .map(|p| prediction::single_gpu_rule(load, p))
            .unwrap_or_default();
        let projector = projector_gate(load, projector_estimate, user_fit_target);
        Scheduler {
            environment,
            environment_line: self.server.environment.as_ref().map(|(_, l)| *l),
            default_context: self.server.default_context,
            prediction,
            gpu_choice,
            single_gpu_rule,
            eviction: self.eviction,
            mmap_disabled: self.mmap_disabled,
            projector,
            retries: self.retries,
            overwritten: self.overwritten,
            invalid_fit_target: self.invalid_fit_target,
            no_buffer_sizes_line: self.no_buffer_sizes_line,
            runtime_oom_lines: self.runtime_oom_lines,
            ps_table: self.ps_table,
        }
    }
}

/// GPUs holding at least one buffer of the load.
fn gpus_with_buffers(load: &Load) -> usize {
    let mut devices: Vec<&crate::model::Device> = load
        .actual
        .buffers
        .iter()
        .filter(|b| !b.host && b.device.is_gpu())
        .map(|b| &b.device)
        .collect();
    devices.sort();
    devices.dedup();
    devices.len()
}

/// The load has a GPU: discovery or `gpu memory` names one, or llama.cpp's tables or buffers use one (an
/// excerpt without Ollama's GPU lines).
fn has_gpu(load: &Load) -> bool {
    !load.gpus.is_empty()
        || load
            .estimate
            .as_ref()
            .is_some_and(|e| e.per_device.iter().any(|d| d.device.is_gpu()))
        || load
            .actual
            .buffers
            .iter()
            .any(|b| !b.host && b.device.is_gpu())
}

/// The projector gate of `docs/log-formats.md` §5.6 item 4: kept on the CPU (Ollama's line or
/// `--no-mmproj-offload`), or offloaded, in which case Ollama raises the `--fit` margin to ⌈projector + 1 GiB⌉
/// MiB unless the user set `LLAMA_ARG_FIT_TARGET`.
fn projector_gate(
    load: &Load,
    estimate: Option<(Quantity, u64)>,
    user_fit_target: bool,
) -> Option<ProjectorGate> {
    let s = &load.settings;
    let on_host = load.actual.projector_device.as_ref().map(|d| d.is_host());
    let has_gpu = has_gpu(load);
    let offloaded = match (s.projector_offload, on_host) {
        // No GPU: nowhere to offload it, whatever the command says.
        (Some(offloaded), _) => offloaded && has_gpu,
        (None, Some(host)) => !host,
        // A projector without `--no-mmproj-offload` goes to a GPU, when there is one.
        (None, None) if estimate.is_some() => has_gpu,
        (None, None) => return None,
    };
    let mut lines: Vec<u64> = s.projector_offload_line.into_iter().collect();
    lines.extend(estimate.map(|(_, l)| l));
    lines.sort_unstable();
    lines.dedup();
    let size = estimate.map(|(q, _)| q);
    let version = load.ollama_version.as_deref().and_then(parse_version);
    let pads = version.is_none_or(|v| v >= PADDING_SINCE);
    let fit_target = match (offloaded, user_fit_target, s.fit_target, size) {
        (_, _, Some(logged), _) => Some(logged),
        (true, false, None, Some(projector)) if pads => {
            // ⌈(projector + 1 GiB) / MiB⌉ MiB, on each bound.
            let up = |bytes: i64| {
                bytes
                    .saturating_add(GIB)
                    .saturating_add(MIB - 1)
                    .div_euclid(MIB)
                    .saturating_mul(MIB)
            };
            Some(Quantity::with_bounds(
                up(projector.bytes),
                up(projector.low),
                up(projector.high),
            ))
        }
        _ => None,
    };
    // The padding is Ollama's only when it computed the target (not the user, not the command line).
    let padding = match (fit_target, s.fit_target, version) {
        (Some(_), None, Some(_)) => Some(PaddingEvidence::Version),
        (Some(padded), None, None) => {
            // llama.cpp's fit printed a target at least the padded one (it may add its own reserve on top).
            let logged = load.estimate.as_ref().and_then(|e| e.fit.as_ref()?.target);
            Some(match logged {
                Some(t) if t.high >= padded.low => PaddingEvidence::LoggedTarget,
                Some(_) | None => PaddingEvidence::Assumed,
            })
        }
        _ => None,
    };
    let rule = if offloaded || s.projector_offload_reason.as_deref() != Some("limited-vram") {
        None
    } else {
        projector_rule(load, version, size)
    };
    Some(ProjectorGate {
        offloaded,
        reason: s.projector_offload_reason.clone(),
        size,
        fit_target,
        fit_target_set_by_user: user_fit_target,
        padding,
        rule,
        lines,
    })
}

/// Which rule kept the projector on the CPU for lack of VRAM (`docs/log-formats.md` §5.6 item 4): 0.30's flat
/// floor (10 GiB available) or, from 0.31, the projector + 1 GiB against each GPU's free memory. Either keeps
/// the projector on the CPU when *some* GPU is short (ollama#16599: a 3090 with 22.3 GiB and a 4060 with 6.5
/// GiB available, projector on the CPU under 0.30.6), so the GPU with the least room is the one judged. By the
/// version when the log gives it; else by what that GPU's figures rule out: 10 GiB or more available rules the
/// floor out, free memory above the projector + 1 GiB rules the projector rule out; with neither the version
/// nor the projector's size, the floor, and the size the projector rule would have needed.
fn projector_rule(
    load: &Load,
    version: Option<(u32, u32, u32)>,
    projector: Option<Quantity>,
) -> Option<ProjectorRule> {
    let gpu = load
        .gpus
        .iter()
        .filter(|g| g.available.is_some())
        .min_by_key(|g| g.available.map(|a| a.bytes))?;
    let available = gpu.available?;
    let free = gpu.free;
    let room = free.unwrap_or(available);
    let needed = projector.map(|p| Quantity::with_bounds(p.bytes + GIB, p.low + GIB, p.high + GIB));
    let floor = Quantity::exact(PROJECTOR_FLOOR);
    let (kind, by) = match version {
        Some(v) if v < PROJECTOR_RULE_SINCE => {
            (ProjectorRuleKind::Floor10Gib, RuleEvidence::Version)
        }
        Some(_) => (ProjectorRuleKind::ProjectorPlus1Gib, RuleEvidence::Version),
        None if available.low >= PROJECTOR_FLOOR => {
            (ProjectorRuleKind::ProjectorPlus1Gib, RuleEvidence::Figures)
        }
        None if available.high < PROJECTOR_FLOOR => {
            (ProjectorRuleKind::Floor10Gib, RuleEvidence::Figures)
        }
        // Within rounding of the floor: the figures decide nothing.
        None => return None,
    };
    let (bar, unless) = match kind {
        ProjectorRuleKind::Floor10Gib => {
            // The projector rule is ruled out only when the room is above it; say what it would have needed.
            let unless = match (version, needed) {
                (None, None) => Some(room.minus(Quantity::exact(GIB))),
                (None, Some(n)) if room.low >= n.high => None,
                // The projector rule could have decided it as well.
                (None, Some(_)) => return None,
                (Some(_), _) => None,
            };
            (Some(floor), unless)
        }
        ProjectorRuleKind::ProjectorPlus1Gib => (needed, None),
    };
    Some(ProjectorRule {
        kind,
        by,
        gpu: gpu
            .name
            .clone()
            .unwrap_or_else(|| format!("GPU {}", gpu.id)),
        available,
        free,
        bar,
        unless_projector_over: unless,
        line: gpu.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::event_of;
    use crate::parse::event::EventKind;

    fn scheduler_line(line: &str) -> SchedulerLine {
        match event_of(line) {
            EventKind::Scheduler(s) => *s,
            other => panic!("not a scheduler line: {other:?}"),
        }
    }

    /// `sample-logs/511-…-2loads.log:2` (`server config`, Ollama 0.33.2), cut to its placement variables.
    const SERVER_CONFIG_511: &str = r#"time=2026-09-02T16:51:59.107Z level=INFO source=routes.go:1951 msg="server config" env="map[CUDA_VISIBLE_DEVICES: GGML_VK_VISIBLE_DEVICES: LLAMA_ARG_FIT: LLAMA_ARG_FIT_TARGET: OLLAMA_CONTEXT_LENGTH:0 OLLAMA_GPU_OVERHEAD:0 OLLAMA_KV_CACHE_TYPE: OLLAMA_NUM_PARALLEL:2 OLLAMA_ORIGINS:[http://localhost https://localhost] OLLAMA_SCHED_SPREAD:false]""#;

    #[test]
    fn the_server_config_and_default_context_are_server_wide() {
        let mut server = ServerScheduler::default();
        assert!(server.push(scheduler_line(SERVER_CONFIG_511), 2).is_none());
        // `sample-logs/511-…:13`.
        assert!(server
            .push(
                scheduler_line(r#"time=2026-09-02T16:52:04.751Z level=INFO source=routes.go:2058 msg="vram-based default context" total_vram="0 B" default_num_ctx=4096"#),
                13
            )
            .is_none());
        let (env, line) = server.environment.clone().unwrap();
        assert_eq!(line, 2);
        assert!(env.contains(&("OLLAMA_NUM_PARALLEL".to_string(), "2".to_string())));
        assert_eq!(
            server.default_context,
            Some(DefaultContext {
                total_vram: Some(Quantity::exact(0)),
                num_ctx: Some(4096),
                line: 13
            })
        );
        // A load's ledger starts from them, and keeps only the variables that reach the placement, as set.
        let mut ledger = SchedulerLedger::default();
        ledger.set_server(&server);
        let s = ledger.resolve(&Load::default(), None);
        assert_eq!(s.env("OLLAMA_NUM_PARALLEL"), Some("2"));
        assert_eq!(s.env("LLAMA_ARG_FIT_TARGET"), None);
        assert!(s.environment.iter().all(|e| e.name != "OLLAMA_ORIGINS"));
        assert_eq!(s.gpu_choice, GpuChoice::NotShown);
    }

    #[test]
    fn the_llama_server_path_without_a_single_gpu_line_hands_every_gpu_over() {
        let mut ledger = SchedulerLedger::default();
        // `sample-logs/505-…:2`.
        ledger.push(scheduler_line(r#"time=2026-08-01T07:03:07.972Z level=INFO source=server.go:109 msg="using llama-server for model" model=/root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0"#), 2);
        assert_eq!(ledger.first_line(), Some(2));
        let s = ledger.clone().resolve(&Load::default(), None);
        assert_eq!(
            s.gpu_choice,
            GpuChoice::AllGpus {
                since_line: Some(2)
            }
        );
        // A single-GPU line names the GPU and carries the logged prediction.
        ledger.push(scheduler_line(r#"time=2026-06-20T10:02:11.404Z level=INFO source=sched.go:1188 msg="selecting single GPU for llama-server model" main_gpu=0 id=0 library=CUDA name=CUDA0 description="NVIDIA GeForce RTX 3090" predicted="9.8 GiB" available="22.3 GiB""#), 3);
        let s = ledger.resolve(&Load::default(), None);
        assert!(matches!(
            s.gpu_choice,
            GpuChoice::SingleGpu { ref name, line: 3, .. } if name.as_deref() == Some("NVIDIA GeForce RTX 3090")
        ));
        let p = s.prediction.unwrap();
        assert_eq!(p.lines, vec![3]);
        assert_eq!(p.source, crate::model::scheduler::PredictionSource::Logged);
    }

    #[test]
    fn retries_mmap_and_overwritten_variables_are_kept_with_their_lines() {
        let mut ledger = SchedulerLedger::default();
        // `sample-logs/511-…:14`.
        ledger.push(scheduler_line(r#"time=2026-09-02T16:52:34.597Z level=INFO source=sched.go:1147 msg="disabling mmap for llama-server load by default" model=/root/.ollama/models/blobs/sha256-9ed150d4367e68df0ac8e1540f6ddc65b42d0ee26378329d1ecbca60f93fc5f8 reason=cpu"#), 14);
        ledger.push(scheduler_line(r#"time=2026-06-20T10:07:02.550Z level=WARN source=sched.go:702 msg="llama-server load failed; reducing automatic context and retrying once" model=/m old_num_ctx=32768 effective_num_ctx=32768 new_num_ctx=8192 old_num_batch=512 new_num_batch=512 error="llama-server process has terminated: exit status 1""#), 40);
        ledger.push(
            scheduler_line("warn: LLAMA_ARG_CTX_SIZE environment variable is set, but will be overwritten by command line argument -c"),
            41,
        );
        let s = ledger.resolve(&Load::default(), None);
        assert_eq!(
            s.mmap_disabled,
            Some(Decision {
                reason: Some("cpu".into()),
                line: 14
            })
        );
        assert_eq!(
            (
                s.retries[0].kind.as_str(),
                s.retries[0].old_num_ctx,
                s.retries[0].new_num_ctx
            ),
            ("reduce-context", Some(32768), Some(8192))
        );
        assert_eq!(s.overwritten[0].flag, "-c");
    }

    #[test]
    fn an_offloaded_projector_pads_the_fit_target_by_its_size_plus_one_gib() {
        let mut load = Load::default();
        load.gpus.push(crate::model::Gpu::default());
        load.settings.projector_offload = Some(true);
        // `sample-logs/506-…:4`: `[mtmd] … 1136.09 MiB`.
        let projector = crate::parse::values::parse_size("1136.09 MiB").unwrap();
        let gate = projector_gate(&load, Some((projector, 4)), false).unwrap();
        assert!(gate.offloaded);
        // ⌈1136.09 + 1024⌉ = 2161 MiB.
        assert_eq!(gate.fit_target.map(|q| q.bytes), Some(2161 * MIB));
        // A target the user set in the environment is not padded.
        let gate = projector_gate(&load, Some((projector, 4)), true).unwrap();
        assert_eq!(gate.fit_target, None);
        // Kept on the CPU: no padding.
        load.settings.projector_offload = Some(false);
        let gate = projector_gate(&load, Some((projector, 4)), false).unwrap();
        assert_eq!((gate.offloaded, gate.fit_target), (false, None));
    }
}
