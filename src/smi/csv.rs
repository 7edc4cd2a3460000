//! `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]` and `--query-compute-apps=… --format=csv`.
//!
//! Columns are named by the header (`memory.used [MiB]`; the compute-apps header says `used_gpu_memory`
//! where the query said `used_memory`) or, for headerless output in a capture file, by the field list the
//! user passes. Any order and subset of fields works; `[N/A]` / `[Not Supported]` cells read as missing.
//! `nvidia-smi -l N` repeats the rows: a new snapshot starts when a GPU (or process) key repeats (not on a
//! mere `timestamp` change: the rows of one reading carry per-GPU stamps that differ by milliseconds).

use super::{is_not_available, mib, text, whole, SmiItem, Step};
use crate::model::{normalize_bus_id, SmiFormat, SmiGpu, SmiProcess, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Index,
    Name,
    Uuid,
    BusId,
    Timestamp,
    Driver,
    Used,
    Total,
    Free,
    Reserved,
    Pid,
    ProcessName,
    ProcessUsed,
    GpuUuid,
    GpuBusId,
    Other,
}

fn field(name: &str) -> Field {
    match name {
        "index" => Field::Index,
        "name" | "gpu_name" => Field::Name,
        "uuid" => Field::Uuid,
        "pci.bus_id" => Field::BusId,
        "timestamp" => Field::Timestamp,
        "driver_version" => Field::Driver,
        "memory.used" => Field::Used,
        "memory.total" => Field::Total,
        "memory.free" => Field::Free,
        "memory.reserved" => Field::Reserved,
        "pid" => Field::Pid,
        "process_name" => Field::ProcessName,
        "used_memory" | "used_gpu_memory" => Field::ProcessUsed,
        "gpu_uuid" => Field::GpuUuid,
        "gpu_bus_id" => Field::GpuBusId,
        _ => Field::Other,
    }
}

/// The first field of every header we can use starts with one of these; checked before anything else so
/// an ordinary log line is dismissed after a few bytes.
const FIRST_FIELDS: [&str; 22] = [
    "index",
    "name",
    "uuid",
    "pci.",
    "timestamp",
    "driver_version",
    "memory.",
    "pid",
    "process_name",
    "used_gpu_memory",
    "used_memory",
    "gpu_uuid",
    "gpu_bus_id",
    "gpu_name",
    "count",
    "serial",
    "temperature.",
    "utilization.",
    "power.",
    "clocks.",
    "fan.",
    "pstate",
];

/// The first bytes of [`FIRST_FIELDS`].
const FIELD_STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut i = 0;
    while i < FIRST_FIELDS.len() {
        starts[FIRST_FIELDS[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    starts
};

/// Cheap check: does the line's first token look like a query field followed by a comma?
pub(super) fn may_be_header(line: &str) -> bool {
    let b = line.as_bytes();
    // The scanner asks this of every framed line that starts with a lowercase letter: most fail at the
    // first byte, which no field name starts with.
    if !b.first().is_some_and(|&c| FIELD_STARTS[usize::from(c)]) {
        return false;
    }
    let end = b
        .iter()
        .position(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'.' || c == b'_'))
        .unwrap_or(b.len());
    if end == 0 || !matches!(b.get(end), Some(b',' | b' ')) {
        return false;
    }
    let first = &line[..end];
    FIRST_FIELDS.iter().any(|f| first.starts_with(f))
}

/// `index, name, memory.used [MiB]` → fields; `None` unless every column is field-shaped and one of them
/// is a memory figure.
fn parse_fields(header: &str) -> Option<Vec<Field>> {
    let mut out = Vec::new();
    for col in header.split(',') {
        let col = col.trim();
        let name = match col.split_once(' ') {
            Some((name, unit)) if unit.trim().starts_with('[') && unit.trim().ends_with(']') => {
                name
            }
            Some(_) => return None,
            None => col,
        };
        let ok = !name.is_empty()
            && name
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'.' || c == b'_');
        if !ok {
            return None;
        }
        out.push(field(name));
    }
    out.iter()
        .any(|f| {
            matches!(
                f,
                Field::Used | Field::Total | Field::Free | Field::Reserved | Field::ProcessUsed
            )
        })
        .then_some(out)
}

pub(super) struct Csv {
    fields: Vec<Field>,
    apps: bool,
    header_line: u64,
    snap: Option<Snapshot>,
    keys: Vec<String>,
    rows: usize,
}

impl Csv {
    pub(super) fn from_header(number: u64, line: &str) -> Option<Self> {
        Some(Self::new(number, parse_fields(line)?))
    }

    /// Headerless rows named by the `--query-gpu=` (or `--query-compute-apps=`) list.
    pub(super) fn from_fields(number: u64, fields: &str) -> Option<Self> {
        Some(Self::new(number, parse_fields(fields)?))
    }

    fn new(number: u64, fields: Vec<Field>) -> Self {
        let gpu_memory = fields.iter().any(|f| {
            matches!(
                f,
                Field::Used | Field::Total | Field::Free | Field::Reserved
            )
        });
        let apps = !gpu_memory
            && fields
                .iter()
                .any(|f| matches!(f, Field::Pid | Field::ProcessUsed));
        Csv {
            fields,
            apps,
            header_line: number,
            snap: None,
            keys: Vec::new(),
            rows: 0,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> Step {
        if line.trim().is_empty() {
            return Step::Rejected;
        }
        if parse_fields(line).as_deref() == Some(self.fields.as_slice()) {
            // The header again (a loop that re-runs nvidia-smi): a new reading follows.
            self.flush(emit);
            return Step::Took;
        }
        let Some(cells) = self.cells(line) else {
            return Step::Rejected;
        };
        let mut gpu = SmiGpu {
            line: number,
            ..SmiGpu::default()
        };
        let mut process = SmiProcess {
            line: number,
            ..SmiProcess::default()
        };
        let (mut timestamp, mut driver) = (None, None);
        for (f, cell) in self.fields.iter().zip(&cells) {
            let na = is_not_available(cell);
            let memory = || {
                if na {
                    Ok(None)
                } else {
                    mib(cell).map(Some).ok_or(())
                }
            };
            let q = match f {
                Field::Used | Field::Total | Field::Free | Field::Reserved | Field::ProcessUsed => {
                    match memory() {
                        Ok(q) => q,
                        Err(()) => return Step::Rejected,
                    }
                }
                _ => None,
            };
            match f {
                Field::Index => match whole(cell) {
                    Some(i) => gpu.index = Some(i),
                    None if na => {}
                    None => return Step::Rejected,
                },
                Field::Name => gpu.name = text(cell),
                Field::Uuid => gpu.uuid = text(cell),
                Field::BusId => gpu.bus_id = normalize_bus_id(cell),
                Field::Timestamp => timestamp = text(cell),
                Field::Driver => driver = text(cell),
                Field::Used => gpu.used = q,
                Field::Total => gpu.total = q,
                Field::Free => gpu.free = q,
                Field::Reserved => gpu.reserved = q,
                Field::Pid => match whole(cell) {
                    Some(p) => process.pid = Some(p),
                    None if na => {}
                    None => return Step::Rejected,
                },
                Field::ProcessName => process.name = cell.trim().to_string(),
                Field::ProcessUsed => process.used = q,
                Field::GpuUuid => process.gpu_uuid = text(cell),
                Field::GpuBusId => process.gpu_bus_id = normalize_bus_id(cell),
                Field::Other => {}
            }
        }
        let key = if self.apps {
            format!(
                "{:?}/{:?}/{:?}",
                process.pid, process.gpu_uuid, process.gpu_bus_id
            )
        } else {
            format!("{:?}/{:?}/{:?}", gpu.index, gpu.uuid, gpu.bus_id)
        };
        // Only a repeated key starts a new reading: nvidia-smi stamps each GPU's row when it reads that GPU,
        // so the rows of one reading can differ by milliseconds (or straddle a second) and a timestamp change
        // alone would split one reading into one snapshot per GPU. The snapshot keeps its first row's stamp.
        if self.keys.contains(&key) {
            self.flush(emit);
        }
        self.keys.push(key);
        self.rows += 1;
        let line_of_snapshot = if self.rows == 1 {
            self.header_line
        } else {
            number
        };
        let apps = self.apps;
        let snap = self.snap.get_or_insert_with(|| Snapshot {
            format: if apps {
                SmiFormat::QueryComputeAppsCsv
            } else {
                SmiFormat::QueryGpuCsv
            },
            line: line_of_snapshot,
            end_line: number,
            timestamp: timestamp.clone(),
            driver_version: None,
            gpus: Vec::new(),
            processes: apps.then(Vec::new),
        });
        snap.end_line = number;
        if snap.driver_version.is_none() {
            snap.driver_version = driver;
        }
        match snap.processes.as_mut() {
            Some(list) => list.push(process),
            None => snap.gpus.push(gpu),
        }
        Step::Took
    }

    /// Split a row into as many cells as there are fields; a process or GPU name holding commas takes the
    /// extra cells.
    fn cells<'a>(&self, line: &'a str) -> Option<Vec<&'a str>> {
        let raw: Vec<&str> = line.split(',').map(str::trim).collect();
        let n = self.fields.len();
        if raw.len() == n {
            return Some(raw);
        }
        let wide = self
            .fields
            .iter()
            .position(|f| matches!(f, Field::ProcessName | Field::Name))?;
        if raw.len() < n {
            return None;
        }
        let extra = raw.len() - n;
        // Re-cut the line so the name keeps its commas as printed.
        let mut starts = vec![0];
        starts.extend(line.match_indices(',').map(|(i, _)| i + 1));
        let name_start = starts[wide];
        let name_end = starts[wide + extra + 1] - 1;
        let mut cells: Vec<&str> = raw[..wide].to_vec();
        cells.push(line[name_start..name_end].trim());
        cells.extend_from_slice(&raw[wide + extra + 1..]);
        Some(cells)
    }

    fn flush(&mut self, emit: &mut impl FnMut(SmiItem)) {
        if let Some(s) = self.snap.take() {
            emit(SmiItem::Snapshot(s));
        }
        self.keys.clear();
    }

    pub(super) fn finish(mut self, emit: &mut impl FnMut(SmiItem)) {
        if self.rows == 0 {
            emit(SmiItem::Warning {
                line: self.header_line,
                message: "nvidia-smi CSV header without any row".to_string(),
            });
        }
        self.flush(emit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn run(header: &str, rows: &[&str]) -> Vec<SmiItem> {
        let mut c = Csv::from_header(1, header).unwrap();
        let mut out = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(
                c.feed(i as u64 + 2, r, &mut |it| out.push(it)),
                Step::Took,
                "{r}"
            );
        }
        c.finish(&mut |it| out.push(it));
        out
    }

    fn snapshots(items: &[SmiItem]) -> Vec<&Snapshot> {
        items
            .iter()
            .filter_map(|i| match i {
                SmiItem::Snapshot(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn corpus_102_header_and_row() {
        let header = "name, uuid, fan.speed [%], pstate, memory.reserved [MiB], memory.used [MiB], memory.free [MiB], utilization.gpu [%], utilization.memory [%], temperature.gpu, power.draw [W], clocks.current.graphics [MHz], clocks.current.sm [MHz], clocks.current.memory [MHz], clocks.current.video [MHz]";
        assert!(may_be_header(header));
        let items = run(header, &["Tesla P100-PCIE-16GB, GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6, [N/A], P0, 103, 0, 16280, 0, 0, 37, 28.16, 405, 405, 715, 835"]);
        let s = snapshots(&items);
        assert_eq!(s.len(), 1);
        let g = &s[0].gpus[0];
        assert_eq!(g.name.as_deref(), Some("Tesla P100-PCIE-16GB"));
        assert_eq!(g.reserved.unwrap().bytes, 103 * MIB);
        assert_eq!(g.used.unwrap().bytes, 0);
        assert_eq!(g.free.unwrap().bytes, 16280 * MIB);
        assert_eq!(g.total, None);
    }

    #[test]
    fn doc_shape_with_units_and_loop_repeats() {
        // docs/log-formats.md §7.2, then the same GPU again as `nvidia-smi -l 5` prints it.
        let items = run(
            "index, name, memory.used [MiB], memory.total [MiB]",
            &[
                "0, Tesla K80, 617 MiB, 11441 MiB",
                "1, Tesla K80, 9866 MiB, 11441 MiB",
                "0, Tesla K80, 620 MiB, 11441 MiB",
                "1, Tesla K80, [N/A], 11441 MiB",
            ],
        );
        let s = snapshots(&items);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].gpus[1].used.unwrap().bytes, 9866 * MIB);
        assert_eq!((s[0].line, s[0].end_line), (1, 3));
        assert_eq!((s[1].line, s[1].end_line), (4, 5));
        assert_eq!(s[1].gpus[1].used, None);
    }

    #[test]
    fn loop_with_timestamps_splits_on_repeated_gpus_not_on_milliseconds() {
        let items = run(
            "timestamp, index, memory.used [MiB], memory.total [MiB]",
            &[
                "2025/07/20 09:44:10.998, 0, 617 MiB, 11441 MiB",
                "2025/07/20 09:44:11.001, 1, 9866 MiB, 11441 MiB",
                "2025/07/20 09:44:16.002, 0, 617 MiB, 11441 MiB",
                "2025/07/20 09:44:16.004, 1, 14 MiB, 11441 MiB",
            ],
        );
        let s = snapshots(&items);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].timestamp.as_deref(), Some("2025/07/20 09:44:10.998"));
        assert_eq!(s[0].gpus.len(), 2);
        assert_eq!(s[1].timestamp.as_deref(), Some("2025/07/20 09:44:16.002"));
        assert_eq!(s[1].gpus[1].used.unwrap().bytes, 14 * MIB);
    }

    #[test]
    fn compute_apps_with_a_comma_in_the_name() {
        // Header and row shape from docs/log-formats.md §7.2 (Windows, nounits-like).
        let items = run(
            "pid, process_name, used_gpu_memory [MiB]",
            &["27220, ollama.exe, 12497", "1, a, b.exe, 5 MiB"],
        );
        let s = snapshots(&items);
        assert_eq!(s[0].format, SmiFormat::QueryComputeAppsCsv);
        assert!(s[0].gpus.is_empty());
        let p = s[0].processes.as_ref().unwrap();
        assert_eq!((p[0].pid, p[0].name.as_str()), (Some(27220), "ollama.exe"));
        assert_eq!(p[0].used.unwrap().bytes, 12497 * MIB);
        assert_eq!(p[1].name, "a, b.exe");
    }

    #[test]
    fn log_lines_are_not_headers() {
        assert!(!may_be_header("time=2025-07-20T09:43:50 level=INFO"));
        assert!(!may_be_header("llama_model_loader: loaded meta data"));
        assert!(may_be_header("memory.used [MiB], memory.total [MiB]"));
        assert!(parse_fields("name, is, not, a header").is_none());
        assert!(parse_fields("index, name").is_none());
    }
}
