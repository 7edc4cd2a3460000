//! The default `nvidia-smi` table, old (≤ 4xx, 79 columns, `Persistence-M|`) and new (≥ 525, 89 columns)
//! layout: header with the driver version, GPU rows (index, name, bus id; `NMiB / MMiB` on the next row),
//! the MIG device table and the process table.
//!
//! Both layouts have the same row structure, so rows are read by cells (`|`-separated) and tokens, never by
//! column position. The table ends at the border closing the process table. A line that is no table line
//! (`|…`, `+-…`, blank: a bash trace's `+ cmd` is none) is not the table's and is rejected; the scanner
//! (`super::SmiScanner`) lets a few such lines by as other writers' lines between the rows before it takes
//! the table as cut.

use super::{is_not_available, mib, text, whole, SmiItem, Step};
use crate::model::{normalize_bus_id, SmiFormat, SmiGpu, SmiProcess, Snapshot};

/// The header line that starts a table: `| NVIDIA-SMI 550.120   Driver Version: …` (or without the frame
/// when pasted bare), or the column header `| GPU  Name …` of a table whose first lines were cut.
pub(super) fn is_start(line: &str) -> bool {
    let inner = line.trim_start_matches('|').trim_start();
    (inner.starts_with("NVIDIA-SMI ") && line.contains("Driver Version"))
        || (line.starts_with('|') && inner.starts_with("GPU  Name"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Gpus,
    Mig,
    /// Header rows of the process table (before its `|===` rule).
    ProcessHeader,
    ProcessRows,
}

pub(super) struct Table {
    snap: Snapshot,
    section: Section,
    /// The last GPU row still waits for its `N MiB / M MiB` row.
    awaiting_memory: bool,
    processes: Vec<SmiProcess>,
    /// The process table said something definite (a row, "No running processes found", its closing border).
    processes_known: bool,
    /// Process rows have `GI ID` and `CI ID` columns (drivers ≥ 450).
    gi_columns: bool,
    closed: bool,
}

impl Table {
    pub(super) fn new(line: u64, timestamp: Option<String>) -> Self {
        Table {
            snap: Snapshot {
                format: SmiFormat::Table,
                line,
                end_line: line,
                timestamp,
                driver_version: None,
                gpus: Vec::new(),
                processes: None,
            },
            section: Section::Gpus,
            awaiting_memory: false,
            processes: Vec::new(),
            processes_known: false,
            gi_columns: true,
            closed: false,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str) -> Step {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            // A blank line separates the GPU table from the process table.
            return Step::Took;
        }
        if trimmed.starts_with("+-") {
            self.snap.end_line = number;
            if self.section == Section::ProcessRows {
                self.processes_known = true;
                self.closed = true;
                return Step::Closed;
            }
            return Step::Took;
        }
        if trimmed.starts_with("NVIDIA-SMI ") {
            // The header pasted without its frame.
            self.snap.end_line = number;
            self.header(trimmed);
            return Step::Took;
        }
        if !trimmed.starts_with('|') {
            return Step::Rejected;
        }
        self.snap.end_line = number;
        self.row(number, trimmed);
        Step::Took
    }

    fn header(&mut self, inner: &str) {
        if let Some((_, rest)) = inner.split_once("Driver Version:") {
            self.snap.driver_version = rest.split_whitespace().next().map(str::to_string);
        }
    }

    fn row(&mut self, number: u64, line: &str) {
        let inner = line.trim_start_matches('|').trim_end_matches('|');
        let cells: Vec<&str> = inner.split('|').collect();
        let first = cells[0].trim();
        if first.starts_with("NVIDIA-SMI ") {
            self.header(first);
        } else if first.starts_with("Processes:") {
            self.section = Section::ProcessHeader;
            self.awaiting_memory = false;
        } else if first.starts_with("MIG devices:") {
            self.section = Section::Mig;
            self.awaiting_memory = false;
        } else if first.starts_with('=') {
            if self.section == Section::ProcessHeader {
                self.section = Section::ProcessRows;
            }
        } else {
            match self.section {
                Section::Gpus => self.gpu_row(number, &cells),
                Section::Mig => self.mig_row(number, &cells),
                Section::ProcessHeader => {
                    if first.contains("PID") && !first.contains("GI") {
                        self.gi_columns = false;
                    }
                }
                Section::ProcessRows => self.process_row(number, first),
            }
        }
    }

    /// `|   0  Tesla K80           Off  | 00000000:04:00.0 Off |                    0 |` then
    /// `| N/A   45C    P0    58W / 149W |    617MiB / 11441MiB |      0%      Default |`.
    fn gpu_row(&mut self, number: u64, cells: &[&str]) {
        if let Some(gpu) = gpu_identity(cells) {
            self.snap.gpus.push(gpu);
            self.awaiting_memory = true;
        } else if self.awaiting_memory {
            if let Some((used, total)) = cells.iter().find_map(|c| memory_cell(c)) {
                let gpu = self.snap.gpus.last_mut().expect("a GPU row came first");
                gpu.used = Some(used);
                gpu.total = Some(total);
                gpu.line = number;
                self.awaiting_memory = false;
            }
        }
    }

    /// `|  0    1   0   0  |              19MiB / 19968MiB    | 42      0 |  3   0    2    0    0 |`; the
    /// row below it holds BAR1 usage, which is not frame-buffer memory and is skipped.
    fn mig_row(&mut self, number: u64, cells: &[&str]) {
        let ids: Vec<Option<u32>> = cells[0].split_whitespace().map(whole_or_na).collect();
        let (Some(gpu), Some(Some(_gi)), Some(Some(_ci)), Some(Some(dev))) = (
            ids.first().copied().flatten(),
            ids.get(1).copied(),
            ids.get(2).copied(),
            ids.get(3).copied(),
        ) else {
            return;
        };
        let Some((used, total)) = cells.get(1).and_then(|c| memory_cell(c)) else {
            return;
        };
        let parent = self
            .snap
            .gpus
            .iter()
            .find(|g| !g.mig && g.index == Some(gpu))
            .cloned()
            .unwrap_or_default();
        self.snap.gpus.push(SmiGpu {
            index: Some(gpu),
            name: parent.name,
            uuid: None,
            bus_id: parent.bus_id,
            used: Some(used),
            total: Some(total),
            reserved: None,
            free: None,
            mig: true,
            mig_device: Some(dev),
            line: number,
        });
    }

    /// `|    0   N/A  N/A     18732      C   /usr/local/bin/ollama             614MiB |` (GI/CI columns) or
    /// `|    0      1234      C   python                                      1234MiB |` (older drivers).
    fn process_row(&mut self, number: u64, first: &str) {
        if first.contains("No running processes found") {
            self.processes_known = true;
            return;
        }
        let tokens = tokens(first);
        let fixed = if self.gi_columns { 5 } else { 3 };
        if tokens.len() < fixed + 1 {
            return;
        }
        let pid_at = fixed - 2;
        let (Some(gpu), Some(pid)) = (whole(tokens[0].1), whole(tokens[pid_at].1)) else {
            return;
        };
        let (type_end, last) = (
            tokens[fixed - 1].0 + tokens[fixed - 1].1.len(),
            tokens[tokens.len() - 1],
        );
        let used = if is_not_available(last.1) {
            None
        } else {
            match mib(last.1) {
                Some(q) => Some(q),
                None => return,
            }
        };
        let name = if tokens.len() > fixed + 1 {
            first[type_end..last.0].trim().to_string()
        } else {
            String::new()
        };
        self.processes.push(SmiProcess {
            gpu_index: Some(gpu),
            gpu_uuid: None,
            gpu_bus_id: None,
            pid: Some(pid),
            name,
            used,
            line: number,
        });
        self.processes_known = true;
    }

    pub(super) fn finish(mut self, emit: &mut impl FnMut(SmiItem)) {
        if self.processes_known {
            self.snap.processes = Some(std::mem::take(&mut self.processes));
        }
        if !self.closed {
            let what = match self.section {
                Section::Gpus | Section::Mig => "before its process table",
                Section::ProcessHeader | Section::ProcessRows => "inside its process table",
            };
            emit(SmiItem::Warning {
                line: self.snap.end_line,
                message: format!(
                    "nvidia-smi table starting at line {} is cut {what} (no closing border); using what was read",
                    self.snap.line
                ),
            });
        }
        if self.snap.gpus.iter().any(|g| g.used.is_none()) {
            emit(SmiItem::Warning {
                line: self.snap.end_line,
                message: format!(
                    "nvidia-smi table starting at line {} has a GPU row without its memory row",
                    self.snap.line
                ),
            });
        }
        emit(SmiItem::Snapshot(self.snap));
    }
}

/// The first row of a GPU: index, name (maybe cut with `...`), persistence mode or Windows driver model;
/// then the bus id.
fn gpu_identity(cells: &[&str]) -> Option<SmiGpu> {
    let first = cells.first()?.trim();
    let bus = cells.get(1)?.split_whitespace().next()?;
    let bus_id = normalize_bus_id(bus)?;
    let (index, rest) = first.split_once(char::is_whitespace)?;
    let index = whole(index)?;
    let rest = rest.trim();
    let name = match rest.rsplit_once(char::is_whitespace) {
        Some((name, "On" | "Off" | "WDDM" | "TCC" | "MCDM" | "N/A")) => name.trim(),
        _ => rest,
    };
    Some(SmiGpu {
        index: Some(index),
        name: text(name),
        bus_id: Some(bus_id),
        ..SmiGpu::default()
    })
}

/// `   617MiB / 11441MiB ` → (used, total).
fn memory_cell(cell: &str) -> Option<(crate::model::Quantity, crate::model::Quantity)> {
    let (used, total) = cell.split_once('/')?;
    let (used, total) = (used.trim(), total.trim());
    if !used.ends_with("MiB") || !total.ends_with("MiB") {
        return None;
    }
    Some((mib(used)?, mib(total)?))
}

fn whole_or_na(t: &str) -> Option<u32> {
    if t == "N/A" {
        Some(u32::MAX)
    } else {
        whole(t)
    }
}

/// Whitespace-separated tokens with their byte offsets.
fn tokens(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(st)) => {
                out.push((st, &s[st..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push((st, &s[st..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn run(lines: &[&str]) -> Vec<SmiItem> {
        let mut t = Table::new(1, None);
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            match t.feed(i as u64 + 1, l) {
                Step::Took => {}
                Step::Closed | Step::Rejected => break,
            }
        }
        t.finish(&mut |i| out.push(i));
        out
    }

    #[test]
    fn new_layout_gpu_rows_from_corpus_038() {
        let cells: Vec<&str> =
            "   0  NVIDIA GeForce RTX 3060        On  |   00000000:01:00.0 Off |                  N/A "
                .split('|')
                .collect();
        let gpu = gpu_identity(&cells).unwrap();
        assert_eq!(gpu.index, Some(0));
        assert_eq!(gpu.name.as_deref(), Some("NVIDIA GeForce RTX 3060"));
        assert_eq!(gpu.bus_id.as_deref(), Some("00000000:01:00.0"));
        let (u, t) = memory_cell("    7400MiB /  12288MiB ").unwrap();
        assert_eq!((u.bytes, t.bytes), (7400 * MIB, 12288 * MIB));
    }

    #[test]
    fn old_layout_cut_name_from_corpus_039() {
        let cells: Vec<&str> =
            "   0  Tesla V100-PCIE...  On   | 00000000:00:0D.0 Off |                    0 "
                .split('|')
                .collect();
        let gpu = gpu_identity(&cells).unwrap();
        assert_eq!(gpu.name.as_deref(), Some("Tesla V100-PCIE..."));
        assert_eq!(gpu.bus_id.as_deref(), Some("00000000:00:0d.0"));
    }

    #[test]
    fn windows_wddm_row_from_the_doc() {
        // The new layout of docs/log-formats.md §7.1, verbatim from ollama/ollama#11014.
        let items = run(&[
            "| NVIDIA-SMI 555.99                 Driver Version: 555.99         CUDA Version: 12.5     |",
            "|   0  NVIDIA CMP 70HX              WDDM  |   00000000:10:00.0 Off |                  N/A |",
            "| 30%   39C    P8             10W /  220W |       0MiB /   8192MiB |      0%      Default |",
        ]);
        let SmiItem::Snapshot(s) = items.last().unwrap() else {
            panic!("{items:?}")
        };
        assert_eq!(s.driver_version.as_deref(), Some("555.99"));
        assert_eq!(s.gpus[0].name.as_deref(), Some("NVIDIA CMP 70HX"));
        assert_eq!(s.gpus[0].used.unwrap().bytes, 0);
        assert_eq!(s.gpus[0].total.unwrap().bytes, 8192 * MIB);
        assert_eq!(s.processes, None);
        assert!(matches!(items[0], SmiItem::Warning { .. }));
    }

    #[test]
    fn process_rows_of_the_founding_capture() {
        let items = run(&[
            "| NVIDIA-SMI 470.256.02   Driver Version: 470.256.02   CUDA Version: 11.4     |",
            "|   1  Tesla K80           Off  | 00000000:07:00.0 Off |                    0 |",
            "| N/A   49C    P0    72W / 149W |   9866MiB / 11441MiB |      0%      Default |",
            "+-------------------------------+----------------------+----------------------+",
            "",
            "+-----------------------------------------------------------------------------+",
            "| Processes:                                                                  |",
            "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |",
            "|        ID   ID                                                   Usage      |",
            "|=============================================================================|",
            "|    1   N/A  N/A     18732      C   /usr/local/bin/ollama            9863MiB |",
            "|    1   N/A  N/A       777    C+G   C:\\Program Files\\Some App\\a.exe    N/A      |",
            "+-----------------------------------------------------------------------------+",
        ]);
        assert_eq!(items.len(), 1, "{items:?}");
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!()
        };
        let p = s.processes.as_ref().unwrap();
        assert_eq!(p[0].pid, Some(18732));
        assert_eq!(p[0].gpu_index, Some(1));
        assert_eq!(p[0].name, "/usr/local/bin/ollama");
        assert_eq!(p[0].used.unwrap().bytes, 9863 * MIB);
        assert_eq!(p[1].name, "C:\\Program Files\\Some App\\a.exe");
        assert_eq!(p[1].used, None);
        assert_eq!(s.end_line, 13);
    }

    #[test]
    fn no_running_processes_is_an_empty_list() {
        let items = run(&[
            "| NVIDIA-SMI 470.223.02   Driver Version: 470.223.02   CUDA Version: 11.4     |",
            "|   0  Tesla V100-PCIE...  On   | 00000000:00:0D.0 Off |                    0 |",
            "| N/A   38C    P0    36W / 250W |   5038MiB / 32510MiB |      0%      Default |",
            "+-----------------------------------------------------------------------------+",
            "| Processes:                                                                  |",
            "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |",
            "|=============================================================================|",
            "|  No running processes found                                                 |",
            "+-----------------------------------------------------------------------------+",
        ]);
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(s.processes, Some(vec![]));
    }

    #[test]
    fn mig_rows_skip_bar1_and_keep_the_parent() {
        // Shape of the 470-era MIG table (A100); BAR1 row below must not be read as frame buffer.
        let items = run(&[
            "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |",
            "|   0  NVIDIA A100-SXM...  On   | 00000000:00:04.0 Off |                   On |",
            "| N/A   31C    P0    42W / 400W |     38MiB / 40536MiB |     N/A      Default |",
            "|                               |                      |              Enabled |",
            "+-------------------------------+----------------------+----------------------+",
            "| MIG devices:                                                                |",
            "+------------------+----------------------+-----------+-----------------------+",
            "| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |",
            "|==================+======================+===========+=======================|",
            "|  0    1   0   0  |     19MiB / 19968MiB | 42      0 |  3   0    2    0    0 |",
            "|                  |      0MiB / 32767MiB |           |                       |",
            "+------------------+----------------------+-----------+-----------------------+",
        ]);
        let SmiItem::Snapshot(s) = items.last().unwrap() else {
            panic!()
        };
        assert_eq!(s.gpus.len(), 2);
        assert!(!s.gpus[0].mig && s.gpus[1].mig);
        assert_eq!(s.gpus[1].used.unwrap().bytes, 19 * MIB);
        assert_eq!(s.gpus[1].mig_device, Some(0));
        assert_eq!(s.gpus[1].bus_id.as_deref(), Some("00000000:00:04.0"));
    }
}
