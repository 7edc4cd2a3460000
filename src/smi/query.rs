//! `nvidia-smi -q` and `-q -d MEMORY` text: `Key : value` lines whose indentation (4 spaces a level) gives
//! the nesting. We keep the stack of open section headers (`FB Memory Usage`, `MIG devices` › `MIG Device`,
//! `Processes`) so `Used` under `FB Memory Usage` is frame-buffer memory and the same key under
//! `BAR1 Memory Usage` is ignored.

use super::{is_not_available, mib, text, whole, SmiItem, Step};
use crate::model::{normalize_bus_id, SmiFormat, SmiGpu, SmiProcess, Snapshot};

/// In a capture file, a `-q` output whose banner was not copied: `Timestamp : …` or `GPU 00000000:04:00.0`.
pub(super) fn is_loose_start(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("GPU ") {
        return normalize_bus_id(rest).is_some();
    }
    line.starts_with("Timestamp") && split_key_value(line).is_some()
}

/// `    Product Name                    : Tesla K80` → ("Product Name", "Tesla K80"); headers give `None`.
fn split_key_value(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    if let Some(i) = t.find(" : ") {
        return Some((t[..i].trim(), t[i + 3..].trim()));
    }
    t.strip_suffix(" :").map(|k| (k.trim(), ""))
}

pub(super) struct Query {
    snap: Snapshot,
    /// Open section headers: (indent, name).
    stack: Vec<(usize, String)>,
    gpu: Option<SmiGpu>,
    migs: Vec<SmiGpu>,
    process: Option<SmiProcess>,
    processes: Vec<SmiProcess>,
    processes_known: bool,
    seen_banner: bool,
}

impl Query {
    pub(super) fn new(line: u64) -> Self {
        Query {
            snap: Snapshot {
                format: SmiFormat::Query,
                line,
                end_line: line,
                timestamp: None,
                driver_version: None,
                gpus: Vec::new(),
                processes: None,
            },
            stack: Vec::new(),
            gpu: None,
            migs: Vec::new(),
            process: None,
            processes: Vec::new(),
            processes_known: false,
            seen_banner: false,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str) -> Step {
        if line.trim().is_empty() {
            return Step::Took;
        }
        if line.starts_with('=') {
            if !line.contains("NVSMI LOG")
                || self.seen_banner
                || self.snap.end_line != self.snap.line
            {
                // Another banner: the next capture.
                return Step::Rejected;
            }
            self.seen_banner = true;
            return Step::Took;
        }
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let is_gpu_header = line.starts_with("GPU ") && normalize_bus_id(&line[4..]).is_some();
        if indent == 0 && self.gpu.is_some() && !is_gpu_header {
            return self.feed_flat(number, line);
        }
        if indent == 0 {
            if let Some(bus) = line.strip_prefix("GPU ").and_then(normalize_bus_id) {
                self.flush_gpu();
                self.stack.clear();
                self.gpu = Some(SmiGpu {
                    bus_id: Some(bus),
                    line: number,
                    ..SmiGpu::default()
                });
            } else {
                match split_key_value(line) {
                    Some(("Timestamp", v)) => self.snap.timestamp = text(v),
                    Some(("Driver Version", v)) => self.snap.driver_version = text(v),
                    Some(("CUDA Version" | "Attached GPUs", _)) => {}
                    _ => return Step::Rejected,
                }
            }
            self.snap.end_line = number;
            return Step::Took;
        }
        self.snap.end_line = number;
        if self.gpu.is_none() {
            return Step::Took;
        }
        while self.stack.last().is_some_and(|(i, _)| *i >= indent) {
            self.stack.pop();
        }
        match split_key_value(line) {
            None => {
                let name = line.trim().to_string();
                if name == "MIG Device" {
                    self.flush_process();
                    let parent = self.gpu.as_ref().expect("inside a GPU block");
                    self.migs.push(SmiGpu {
                        index: parent.index,
                        name: parent.name.clone(),
                        uuid: None,
                        bus_id: parent.bus_id.clone(),
                        mig: true,
                        line: number,
                        ..SmiGpu::default()
                    });
                }
                self.stack.push((indent, name));
            }
            Some((key, value)) => self.value(number, key, value),
        }
        Step::Took
    }

    /// A line of a GPU block whose indentation was lost (log collectors and the framer strip leading blanks):
    /// a header opens a first-level section, the GPU-level keys vramdiff reads close it, and any other key
    /// belongs to the open section.
    fn feed_flat(&mut self, number: u64, line: &str) -> Step {
        /// Keys printed directly under `GPU …` that vramdiff reads.
        const GPU_LEVEL: &[&str] = &["Product Name", "GPU UUID", "Minor Number", "Processes"];
        self.snap.end_line = number;
        match split_key_value(line) {
            None => {
                let name = line.trim().to_string();
                let nested_mig = name == "MIG Device"
                    && self.stack.first().is_some_and(|(_, n)| n == "MIG devices");
                if nested_mig {
                    self.stack.truncate(1);
                    // Reuse the indented path's bookkeeping for a MIG device.
                    return self.feed(number, &format!("        {name}"));
                }
                self.stack.clear();
                self.stack.push((4, name));
            }
            Some((key, value)) => {
                if GPU_LEVEL.contains(&key) && !(key == "Processes" && value.is_empty()) {
                    self.stack.clear();
                }
                let (key, value) = (key.to_string(), value.to_string());
                self.value(number, &key, &value);
            }
        }
        Step::Took
    }

    fn value(&mut self, number: u64, key: &str, value: &str) {
        let in_mig = self.stack.iter().any(|(_, n)| n == "MIG Device");
        let parent = self.stack.last().map(|(_, n)| n.as_str());
        let gpu = self.gpu.as_mut().expect("inside a GPU block");
        match parent {
            None => match key {
                "Product Name" => gpu.name = text(value),
                "GPU UUID" => gpu.uuid = text(value),
                "Minor Number" => gpu.index = whole(value),
                "Processes" => {
                    // `Processes : None`
                    self.processes_known = true;
                }
                _ => {}
            },
            Some("FB Memory Usage") => {
                let target = if in_mig {
                    match self.migs.last_mut() {
                        Some(m) => m,
                        None => return,
                    }
                } else {
                    gpu
                };
                let q = mib(value);
                match key {
                    "Total" => target.total = q,
                    "Reserved" => target.reserved = q,
                    "Used" => {
                        target.used = q;
                        target.line = number;
                    }
                    "Free" => target.free = q,
                    _ => {}
                }
            }
            Some("MIG Device") if key == "Index" => {
                if let Some(m) = self.migs.last_mut() {
                    m.mig_device = whole(value);
                }
            }
            Some("Processes") => {
                self.processes_known = true;
                let (bus, uuid) = (gpu.bus_id.clone(), gpu.uuid.clone());
                let start_new = match key {
                    "GPU instance ID" => true,
                    "Process ID" => self.process.as_ref().is_none_or(|p| p.pid.is_some()),
                    _ => false,
                };
                if start_new {
                    self.flush_process();
                    self.process = Some(SmiProcess {
                        gpu_uuid: uuid,
                        gpu_bus_id: bus,
                        line: number,
                        ..SmiProcess::default()
                    });
                }
                let Some(p) = self.process.as_mut() else {
                    return;
                };
                match key {
                    "Process ID" => {
                        p.pid = whole(value);
                        p.line = number;
                    }
                    "Name" | "Process Name" => p.name = value.to_string(),
                    "Used GPU Memory" => {
                        p.used = if is_not_available(value) {
                            None
                        } else {
                            mib(value)
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn flush_process(&mut self) {
        if let Some(p) = self.process.take() {
            self.processes.push(p);
        }
    }

    fn flush_gpu(&mut self) {
        self.flush_process();
        if let Some(g) = self.gpu.take() {
            super::adopt_parent(&g, &mut self.migs);
            self.snap.gpus.push(g);
            self.snap.gpus.append(&mut self.migs);
        }
    }

    pub(super) fn finish(mut self, emit: &mut impl FnMut(SmiItem)) {
        self.flush_gpu();
        if self.processes_known {
            self.snap.processes = Some(self.processes);
        }
        if self.snap.gpus.is_empty() {
            emit(SmiItem::Warning {
                line: self.snap.line,
                message: "nvidia-smi -q capture lists no GPU block".to_string(),
            });
        }
        for g in self.snap.gpus.iter().filter(|g| g.used.is_none()) {
            emit(SmiItem::Warning {
                line: g.line,
                message: format!(
                    "nvidia-smi -q capture starting at line {}: GPU {} has no FB Memory Usage figures (capture \
                     cut before them?)",
                    self.snap.line,
                    g.bus_id.as_deref().unwrap_or("?")
                ),
            });
        }
        emit(SmiItem::Snapshot(self.snap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn run(text: &str) -> Vec<SmiItem> {
        let mut q = Query::new(1);
        let mut out = Vec::new();
        for (i, l) in text.lines().enumerate() {
            if q.feed(i as u64 + 1, l) != Step::Took {
                break;
            }
        }
        q.finish(&mut |i| out.push(i));
        out
    }

    #[test]
    fn header_lines_from_corpus_040() {
        assert_eq!(
            split_key_value("    Product Name                    : Tesla K80"),
            Some(("Product Name", "Tesla K80"))
        );
        assert_eq!(
            split_key_value("Timestamp                           : Tue Aug 14 17:01:49 2018"),
            Some(("Timestamp", "Tue Aug 14 17:01:49 2018"))
        );
        assert_eq!(split_key_value("    Driver Model"), None);
        assert!(is_loose_start("GPU 00000000:00:1E.0"));
        assert!(!is_loose_start("GPU[0]\t\t: VRAM Total Memory (B): 1"));
    }

    #[test]
    fn fb_memory_not_bar1_and_processes() {
        // FB block as in docs/log-formats.md §7.3 (K80, 470), process block in the `-q` layout of ≥ 450.
        let items = run("==============NVSMI LOG==============

Timestamp                                 : Sun Jul 20 09:44:10 2025
Driver Version                            : 470.256.02
CUDA Version                              : 11.4

Attached GPUs                             : 2
GPU 00000000:07:00.0
    Product Name                          : Tesla K80
    GPU UUID                              : GPU-2b1f6c0e-0000-0000-0000-000000000001
    Minor Number                          : 1
    FB Memory Usage
        Total                             : 11441 MiB
        Used                              : 9866 MiB
        Free                              : 1575 MiB
    BAR1 Memory Usage
        Total                             : 16384 MiB
        Used                              : 2 MiB
        Free                              : 16382 MiB
    Processes
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 18732
            Type                          : C
            Name                          : /usr/local/bin/ollama
            Used GPU Memory               : 9863 MiB
");
        assert_eq!(items.len(), 1, "{items:?}");
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!()
        };
        assert_eq!(s.timestamp.as_deref(), Some("Sun Jul 20 09:44:10 2025"));
        assert_eq!(s.driver_version.as_deref(), Some("470.256.02"));
        let g = &s.gpus[0];
        assert_eq!(g.index, Some(1));
        assert_eq!(g.used.unwrap().bytes, 9866 * MIB);
        assert_eq!(g.total.unwrap().bytes, 11441 * MIB);
        assert_eq!(g.free.unwrap().bytes, 1575 * MIB);
        assert_eq!(g.reserved, None);
        assert_eq!(g.line, 14);
        let p = &s.processes.as_ref().unwrap()[0];
        assert_eq!(
            (p.pid, p.name.as_str()),
            (Some(18732), "/usr/local/bin/ollama")
        );
        assert_eq!(p.used.unwrap().bytes, 9863 * MIB);
        assert_eq!(p.gpu_bus_id.as_deref(), Some("00000000:07:00.0"));
    }

    #[test]
    fn mig_device_blocks_are_separate_entries() {
        // `-q` shape of a MIG-enabled GPU (nesting as in the XML of corpus 105), BAR1 again not read.
        let items = run("GPU 00000000:00:04.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    MIG devices
        MIG Device
            Index                         : 0
            GPU Instance ID               : 1
            FB Memory Usage
                Total                     : 19968 MiB
                Reserved                  : 0 MiB
                Used                      : 19 MiB
                Free                      : 19948 MiB
            BAR1 Memory Usage
                Total                     : 32767 MiB
                Used                      : 0 MiB
    Minor Number                          : 0
    FB Memory Usage
        Total                             : 40960 MiB
        Reserved                          : 605 MiB
        Used                              : 38 MiB
        Free                              : 40315 MiB
    Processes                             : None
");
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(s.gpus.len(), 2);
        assert!(!s.gpus[0].mig);
        assert_eq!(s.gpus[0].used.unwrap().bytes, 38 * MIB);
        assert_eq!(s.gpus[0].index, Some(0));
        let m = &s.gpus[1];
        assert!(m.mig);
        assert_eq!((m.index, m.mig_device), (Some(0), Some(0)));
        assert_eq!(m.used.unwrap().bytes, 19 * MIB);
        assert_eq!(m.total.unwrap().bytes, 19968 * MIB);
        assert_eq!(m.name.as_deref(), Some("NVIDIA A100-SXM4-40GB"));
    }

    #[test]
    fn processes_none_is_an_empty_list() {
        let items = run("GPU 00000000:04:00.0
    FB Memory Usage
        Total                             : 11441 MiB
        Reserved                          : 0 MiB
        Used                              : 4 MiB
        Free                              : 11437 MiB
    Processes                             : None
");
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(s.processes, Some(vec![]));
        assert_eq!(s.gpus[0].reserved.unwrap().bytes, 0);
    }
}
