//! Reconcile a load with what nvidia-smi (or rocm-smi) saw: join each of the load's devices to a GPU of a
//! capture, and split the GPU's used memory into the runner's buffers, the rest of the runner process (CUDA
//! context, workspaces), other processes and whatever an idle capture already showed.
//!
//! Choosing *which* capture belongs to a load is separate from the arithmetic: [`pick_in_log`] for captures
//! pasted into the log around the load, [`pick_in_series`] for a capture file given with `--smi` or taken live
//! with `--capture`. The captures come in as the load's [`Observations`], before it is reconciled.

use crate::model::{
    same_uuid, CaptureRef, Device, DeviceRow, GpuJoin, Load, ObservedRow, Quantity, SmiGpu,
    SmiProcess, Snapshot,
};

use super::observations::Observations;

/// The captures chosen for one load.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The input the captures were read from.
    pub path: &'a str,
    /// The capture taken while the model was loaded.
    pub loaded: &'a Snapshot,
    /// A process table taken with it, when `loaded` has none (`--query-compute-apps` printed separately).
    pub processes: Option<&'a [SmiProcess]>,
    /// A capture taken before the load (idle baseline), when there is one.
    pub idle: Option<&'a Snapshot>,
}

/// Process names that are Ollama's or llama.cpp's runner: the memory they hold is the load's.
const RUNNER_NAMES: &[&str] = &[
    "ollama_llama_server",
    "ollama",
    "llama-server",
    "llama_server",
    "ollama_runner",
];

/// True when a process table's name is the runner (path and `.exe` stripped; names cut with `...` match on
/// their prefix).
pub fn is_runner_process(name: &str) -> bool {
    let base = name.trim().rsplit(['/', '\\']).next().unwrap_or("");
    let base = base.strip_suffix(".exe").unwrap_or(base);
    // `ollama runner --model …` when the table shows arguments.
    let base = base.split_whitespace().next().unwrap_or("");
    match base.strip_suffix("...") {
        Some(prefix) if prefix.len() >= 4 => RUNNER_NAMES.iter().any(|n| n.starts_with(prefix)),
        Some(_) => false,
        None => RUNNER_NAMES.contains(&base),
    }
}

/// Among the captures of the load's own input, the one taken while it was loaded and an idle one before it.
///
/// `snapshots` are in input order; the load spans `first..=last` lines and the next load in the same input
/// starts at `next_first`. The loaded capture is the one with the most memory in use among those after the
/// load's last line and before the next load (the moment the model was certainly resident); the idle capture
/// is the last one before the load's first line.
pub fn pick_in_log(
    snapshots: &[Snapshot],
    first: u64,
    last: u64,
    next_first: Option<u64>,
) -> Option<(usize, Option<usize>)> {
    let after = |s: &Snapshot| s.line > last && next_first.is_none_or(|n| s.line < n);
    let loaded = peak(snapshots, after)?;
    let idle = snapshots
        .iter()
        .rposition(|s| s.end_line < first && !s.gpus.is_empty());
    Some((loaded, idle))
}

/// In a capture file with no link to log lines, the capture with the most memory in use is the loaded one, and
/// the first earlier capture is the idle candidate; [`observe`] only uses it as a baseline on a GPU where it
/// lacks at least 90 % of the load's buffers (the model was not loaded yet).
pub fn pick_in_series(snapshots: &[Snapshot]) -> Option<(usize, Option<usize>)> {
    let loaded = peak(snapshots, |_| true)?;
    let idle = (0..loaded).find(|&i| !snapshots[i].gpus.is_empty());
    Some((loaded, idle))
}

fn peak(snapshots: &[Snapshot], keep: impl Fn(&Snapshot) -> bool) -> Option<usize> {
    let used = |s: &Snapshot| {
        s.gpus
            .iter()
            .filter_map(|g| g.used)
            .map(|q| q.bytes)
            .sum::<i64>()
    };
    snapshots
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.gpus.is_empty() && keep(s))
        // The first of equal peaks: the earliest moment the model was fully resident.
        .max_by(|(ia, a), (ib, b)| used(a).cmp(&used(b)).then(ib.cmp(ia)))
        .map(|(i, _)| i)
}

/// A process-only capture (`--query-compute-apps`) next to the chosen one, for its process table.
fn neighbour_processes(snapshots: &[Snapshot], loaded: usize) -> Option<&[SmiProcess]> {
    [loaded + 1, loaded.wrapping_sub(1)]
        .into_iter()
        .filter_map(|i| snapshots.get(i))
        .find(|s| s.gpus.is_empty())
        .and_then(|s| s.processes.as_deref())
}

/// What the captures of a load show: the rows of the last capture that applies, the notes of every one.
#[derive(Debug, Default)]
pub struct Seen {
    pub rows: Vec<ObservedRow>,
    /// What a reader must know about the joins, in the order the captures applied.
    pub notes: Vec<String>,
}

impl Seen {
    fn apply(&mut self, (rows, notes): (Vec<ObservedRow>, Vec<String>)) {
        self.rows = rows;
        self.notes.extend(notes);
    }
}

/// Join the load (its device rows `devices`) with the captures observed of it, in the order of
/// [`Observations`]: the pasted ones around it in its log, the `--smi` files, the live capture.
pub fn seen(load: &Load, devices: &[DeviceRow], observations: &Observations<'_>) -> Seen {
    let mut seen = Seen::default();
    if let Some(pasted) = &observations.pasted {
        let snapshots = pasted.snapshots;
        if let Some((loaded, idle)) = pick_in_log(
            snapshots,
            load.source.first_line,
            load.source.last_line,
            pasted.next_first,
        ) {
            seen.apply(observe(
                load,
                devices,
                Observation {
                    path: pasted.path,
                    loaded: &snapshots[loaded],
                    processes: neighbour_processes(snapshots, loaded),
                    idle: idle.map(|i| &snapshots[i]),
                },
            ));
        }
    }
    for series in observations
        .files
        .iter()
        .chain(&observations.moment.capture)
    {
        let snapshots = &series.snapshots[..];
        if let Some((loaded, idle)) = pick_in_series(snapshots) {
            seen.apply(observe(
                load,
                devices,
                Observation {
                    path: &series.path,
                    loaded: &snapshots[loaded],
                    processes: neighbour_processes(snapshots, loaded),
                    idle: idle.map(|i| &snapshots[i]),
                },
            ));
            seen.notes.extend(series.note.clone());
        }
    }
    seen
}

/// The GPU of `snapshot` a device of the load runs on, and how they were matched.
fn join<'s>(load: &Load, device: &Device, snapshot: &'s Snapshot) -> Option<(&'s SmiGpu, GpuJoin)> {
    let position = device.position()?;
    let gpus: Vec<&SmiGpu> = snapshot.gpus.iter().filter(|g| !g.mig).collect();
    let log_gpu = load.gpus.get(position);
    if let Some(id) = log_gpu
        .map(|g| g.id.as_str())
        .filter(|id| id.starts_with("GPU-"))
    {
        if let Some(g) = gpus
            .iter()
            .find(|g| g.uuid.as_deref().is_some_and(|u| same_uuid(u, id)))
        {
            return Some((g, GpuJoin::Uuid));
        }
    }
    if let Some(bus) = log_gpu.and_then(|g| g.bus_id.as_deref()) {
        if let Some(g) = gpus.iter().find(|g| g.bus_id.as_deref() == Some(bus)) {
            return Some((g, GpuJoin::Bus));
        }
    }
    // Both sides name their GPUs and none matched: this capture is of other GPUs; do not guess.
    let log_uuid = log_gpu.is_some_and(|g| g.id.starts_with("GPU-"));
    let log_bus = log_gpu.is_some_and(|g| g.bus_id.is_some());
    if (log_uuid && gpus.iter().any(|g| g.uuid.is_some()))
        || (log_bus && gpus.iter().any(|g| g.bus_id.is_some()))
    {
        return None;
    }
    let by_index = gpus
        .iter()
        .find(|g| g.index == Some(position as u32))
        .or_else(|| gpus.get(position).filter(|g| g.index.is_none()));
    by_index.map(|g| (*g, GpuJoin::Index))
}

/// The runner's and the other processes' memory on one GPU; `None` each when the table cannot say.
fn split_processes(
    processes: &[SmiProcess],
    gpu: &SmiGpu,
) -> (Option<Quantity>, Option<Quantity>, Vec<u64>) {
    let on_gpu: Vec<&SmiProcess> = processes.iter().filter(|p| p.runs_on(gpu)).collect();
    if processes.is_empty() || on_gpu.iter().any(|p| p.used.is_none()) {
        return (None, None, on_gpu.iter().map(|p| p.line).collect());
    }
    let sum = |runner: bool| {
        Quantity::sum(
            on_gpu
                .iter()
                .filter(|p| is_runner_process(&p.name) == runner)
                .filter_map(|p| p.used),
        )
        .unwrap_or(Quantity::exact(0))
    };
    let lines = on_gpu
        .iter()
        .filter(|p| is_runner_process(&p.name))
        .map(|p| p.line)
        .collect();
    (Some(sum(true)), Some(sum(false)), lines)
}

/// The observed rows of the load (its device rows `devices`) from one capture, and the notes a reader must know
/// about the join.
pub fn observe(
    load: &Load,
    devices: &[DeviceRow],
    observation: Observation<'_>,
) -> (Vec<ObservedRow>, Vec<String>) {
    let Observation {
        path,
        loaded,
        processes,
        idle,
    } = observation;
    let processes = loaded.processes.as_deref().or(processes);
    let capture = CaptureRef {
        path: path.to_string(),
        line: loaded.line,
        format: loaded.format,
        timestamp: loaded.timestamp.clone(),
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut index_joined = false;
    for device in devices.iter().filter(|d| !d.host) {
        let Some((gpu, join)) = join(load, &device.device, loaded) else {
            continue;
        };
        index_joined |= join == GpuJoin::Index;
        let idle_gpu = idle.and_then(|s| join_same(gpu, s));
        let (runner, others, mut lines) = match processes {
            Some(p) => split_processes(p, gpu),
            None => (None, None, Vec::new()),
        };
        let buffers = device.actual;
        // An idle capture only counts when the load's buffers were not yet there.
        let baseline = idle_gpu.and_then(|g| g.used).filter(|b| {
            let (Some(used), Some(buffers)) = (gpu.used, buffers) else {
                return false;
            };
            used.bytes - b.bytes >= buffers.bytes / 10 * 9
        });
        let (unattributed, unattributed_from) = match (runner, buffers) {
            (Some(r), Some(b)) if r.bytes > 0 => (
                Some(r.minus(b)),
                "runner process memory − the runner's buffers".to_string(),
            ),
            (_, Some(b)) => match (gpu.used, baseline) {
                (Some(u), Some(base)) => (
                    Some(u.minus(base).minus(b)),
                    "used − idle baseline − the runner's buffers".to_string(),
                ),
                (Some(u), None) => (
                    Some(u.minus(b)),
                    "used − the runner's buffers (no idle capture: includes the driver's own use and other processes)"
                        .to_string(),
                ),
                _ => (None, "the capture has no used figure for this GPU".to_string()),
            },
            (_, None) => (None, "no buffer lines for this device in the log".to_string()),
        };
        lines.push(gpu.line);
        lines.sort_unstable();
        lines.dedup();
        // What the log says of this device's GPU fills what the capture does not print.
        let log_gpu = device.device.position().and_then(|p| load.gpus.get(p));
        rows.push(ObservedRow {
            device: device.device.clone(),
            gpu_id: gpu.uuid.clone().or_else(|| {
                log_gpu
                    .map(|g| g.id.clone())
                    .filter(|id| id.starts_with("GPU-"))
            }),
            join,
            name: gpu
                .name
                .clone()
                .or_else(|| log_gpu.and_then(|g| g.name.clone())),
            used: gpu.used,
            total: gpu.total,
            baseline,
            estimated: device.estimated,
            buffers,
            runner_process: runner,
            other_processes: others,
            unattributed,
            unattributed_from,
            capture: capture.clone(),
            lines,
        });
    }
    let tool = loaded.format.tool();
    if index_joined {
        let names: Vec<&str> = loaded
            .gpus
            .iter()
            .filter_map(|g| g.name.as_deref())
            .collect();
        let mixed = names.windows(2).any(|w| w[0] != w[1]);
        notes.push(if mixed {
            format!(
                "{tool} capture {path}:{} matched to the runner's devices by index only, on mixed cards: nvidia-smi numbers GPUs in PCI bus order, CUDA fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; capture with --query-gpu=index,uuid,memory.used,memory.total to join by UUID",
                loaded.line
            )
        } else {
            format!(
                "{tool} capture {path}:{} matched to the runner's devices by index (identical cards, no UUID in the capture)",
                loaded.line
            )
        });
    }
    if rows.is_empty() && !devices.iter().all(|d| d.host) {
        notes.push(format!(
            "{tool} capture {path}:{} lists no GPU that matches this load's devices",
            loaded.line
        ));
    }
    if processes.is_some_and(|p| p.is_empty()) && !rows.is_empty() {
        notes.push(format!(
            "{tool} capture {path}:{} shows no processes although memory is in use (a container without the host's PID namespace?): memory is not attributed to processes",
            loaded.line
        ));
    }
    (rows, notes)
}

/// The same physical GPU in another capture of the same series (UUID, bus id, else index).
fn join_same<'s>(gpu: &SmiGpu, other: &'s Snapshot) -> Option<&'s SmiGpu> {
    other
        .gpus
        .iter()
        .find(|g| g.uuid.is_some() && g.uuid == gpu.uuid)
        .or_else(|| {
            other
                .gpus
                .iter()
                .find(|g| g.bus_id.is_some() && g.bus_id == gpu.bus_id)
        })
        .or_else(|| {
            other
                .gpus
                .iter()
                .find(|g| g.index.is_some() && g.index == gpu.index)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_process_names_from_real_tables() {
        assert!(is_runner_process("/usr/local/bin/ollama"));
        assert!(is_runner_process("ollama.exe"));
        assert!(is_runner_process("./build/bin/llama-server"));
        assert!(is_runner_process(
            "C:\\Program Files\\Ollama\\ollama_llama_server.exe"
        ));
        assert!(is_runner_process(
            "/tmp/ollama1234/runners/cuda_v11/ollama_llama_se..."
        ));
        assert!(!is_runner_process("/usr/lib/xorg/Xorg"));
        assert!(!is_runner_process("python3"));
        assert!(!is_runner_process("..."));
    }
}
