//! `rocm-smi --showmeminfo vram` (text between `==== ROCm System Management Interface ====` banners) and
//! its `--json` form.
//!
//! No real rocm-smi capture is in the corpus: the shapes follow docs/log-formats.md §7.6 —
//! `GPU[0]\t\t: VRAM Total Memory (B): 17163091968`, `GPU[0]\t\t: VRAM Total Used Memory (B): …`, and
//! `{"card0": {"VRAM Total Memory (B)": "…", "VRAM Total Used Memory (B)": "…"}}`. Figures are bytes, exact.

use super::{SmiItem, Step, MAX_DOCUMENT_BYTES};
use crate::model::{normalize_bus_id, Quantity, SmiFormat, SmiGpu, Snapshot};

/// `GPU[0]\t\t: …`
pub(super) fn is_gpu_line(line: &str) -> bool {
    gpu_line(line).is_some()
}

/// `GPU[3]\t\t: VRAM Total Memory (B): 17163091968` → (3, "VRAM Total Memory (B)", "17163091968").
fn gpu_line(line: &str) -> Option<(u32, &str, &str)> {
    let rest = line.strip_prefix("GPU[")?;
    let (index, rest) = rest.split_once(']')?;
    let index = index.parse().ok()?;
    let rest = rest.trim_start().strip_prefix(':')?;
    let (key, value) = rest.split_once(':')?;
    Some((index, key.trim(), value.trim()))
}

/// One rocm-smi field onto its GPU. Keys compare case-insensitively (rocm-smi versions differ in case).
fn apply(gpu: &mut SmiGpu, key: &str, value: &str, line: u64) {
    let key = key.to_ascii_lowercase();
    let bytes = || value.trim().parse::<i64>().ok().map(Quantity::exact);
    match key.as_str() {
        "vram total memory (b)" => gpu.total = bytes(),
        "vram total used memory (b)" => {
            gpu.used = bytes();
            gpu.line = line;
        }
        "card series" | "device name" if !value.is_empty() => gpu.name = Some(value.to_string()),
        "pci bus" => gpu.bus_id = normalize_bus_id(value),
        "unique id" | "guid" if gpu.uuid.is_none() && !value.is_empty() => {
            gpu.uuid = Some(value.to_string())
        }
        _ => {}
    }
}

fn gpu_mut(gpus: &mut Vec<SmiGpu>, index: u32) -> &mut SmiGpu {
    match gpus.iter().position(|g| g.index == Some(index)) {
        Some(i) => &mut gpus[i],
        None => {
            gpus.push(SmiGpu {
                index: Some(index),
                ..SmiGpu::default()
            });
            gpus.last_mut().expect("just pushed")
        }
    }
}

fn snapshot(format: SmiFormat, line: u64) -> Snapshot {
    Snapshot {
        format,
        line,
        end_line: line,
        timestamp: None,
        driver_version: None,
        gpus: Vec::new(),
        processes: None,
    }
}

/// The text report.
pub(super) struct Rocm {
    snap: Snapshot,
    banner: bool,
    closed: bool,
}

impl Rocm {
    pub(super) fn new(line: u64, banner: bool) -> Self {
        Rocm {
            snap: snapshot(SmiFormat::RocmSmi, line),
            banner,
            closed: false,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str) -> Step {
        if line.trim().is_empty() {
            return Step::Took;
        }
        if line.starts_with('=') {
            if line.contains("End of ROCm SMI Log") {
                self.snap.end_line = number;
                self.closed = true;
                return Step::Closed;
            }
            if line.contains("ROCm System Management Interface") && !self.snap.gpus.is_empty() {
                return Step::Rejected;
            }
            // A section banner (`==== Memory Usage (Bytes) ====`) or the closing rule.
            self.snap.end_line = number;
            return Step::Took;
        }
        let Some((index, key, value)) = gpu_line(line) else {
            return Step::Rejected;
        };
        self.snap.end_line = number;
        apply(gpu_mut(&mut self.snap.gpus, index), key, value, number);
        Step::Took
    }

    pub(super) fn finish(self, emit: &mut impl FnMut(SmiItem)) {
        if self.banner && !self.closed {
            emit(SmiItem::Warning {
                line: self.snap.end_line,
                message: format!(
                    "rocm-smi capture starting at line {} has no \"End of ROCm SMI Log\" banner (cut?)",
                    self.snap.line
                ),
            });
        }
        if self.snap.gpus.is_empty() {
            emit(SmiItem::Warning {
                line: self.snap.line,
                message: "rocm-smi capture lists no GPU line".to_string(),
            });
            return;
        }
        if self.snap.gpus.iter().all(|g| g.used.is_none()) {
            emit(SmiItem::Warning {
                line: self.snap.line,
                message:
                    "rocm-smi capture has no \"VRAM Total Used Memory (B)\" line (run it with \
                          --showmeminfo vram)"
                        .to_string(),
            });
        }
        emit(SmiItem::Snapshot(self.snap));
    }
}

/// The `--json` report: buffered until its braces balance, then read with serde_json.
pub(super) struct Json {
    start: u64,
    end: u64,
    buf: String,
    depth: i64,
    in_string: bool,
    escaped: bool,
    cut: bool,
}

impl Json {
    pub(super) fn new(start: u64) -> Self {
        Json {
            start,
            end: start,
            buf: String::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            cut: false,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> Step {
        if self.buf.len() + line.len() > MAX_DOCUMENT_BYTES {
            emit(SmiItem::Warning {
                line: number,
                message: format!(
                    "rocm-smi JSON starting at line {} is larger than {} MiB; dropped",
                    self.start,
                    MAX_DOCUMENT_BYTES >> 20
                ),
            });
            self.cut = true;
            return Step::Closed;
        }
        self.end = number;
        self.buf.push_str(line);
        self.buf.push('\n');
        for c in line.bytes() {
            match (self.in_string, self.escaped, c) {
                (true, true, _) => self.escaped = false,
                (true, false, b'\\') => self.escaped = true,
                (true, false, b'"') => self.in_string = false,
                (false, _, b'"') => self.in_string = true,
                (false, _, b'{') => self.depth += 1,
                (false, _, b'}') => self.depth -= 1,
                _ => {}
            }
        }
        if self.depth <= 0 {
            Step::Closed
        } else {
            Step::Took
        }
    }

    pub(super) fn finish(self, emit: &mut impl FnMut(SmiItem)) {
        if self.cut {
            return;
        }
        let warn = |emit: &mut dyn FnMut(SmiItem), message: String| {
            emit(SmiItem::Warning {
                line: self.start,
                message,
            })
        };
        let value: serde_json::Value = match serde_json::from_str(&self.buf) {
            Ok(v) => v,
            Err(e) => {
                warn(
                    emit,
                    format!("rocm-smi JSON starting at line {}: {e}", self.start),
                );
                return;
            }
        };
        let Some(cards) = value.as_object() else {
            warn(emit, "rocm-smi JSON is not an object".to_string());
            return;
        };
        let mut snap = snapshot(SmiFormat::RocmSmiJson, self.start);
        snap.end_line = self.end;
        for (card, fields) in cards {
            let Some(index) = card.strip_prefix("card").and_then(|i| i.parse().ok()) else {
                continue;
            };
            let Some(fields) = fields.as_object() else {
                continue;
            };
            let gpu = gpu_mut(&mut snap.gpus, index);
            gpu.line = self.start;
            for (key, value) in fields {
                let value = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => continue,
                };
                apply(gpu, key, &value, self.start);
            }
        }
        if snap.gpus.is_empty() {
            warn(emit, "rocm-smi JSON has no \"cardN\" entry".to_string());
            return;
        }
        emit(SmiItem::Snapshot(snap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // No real rocm-smi capture exists in the corpus; these lines follow docs/log-formats.md §7.6.

    #[test]
    fn doc_shaped_showmeminfo_lines() {
        assert_eq!(
            gpu_line("GPU[0]\t\t: VRAM Total Memory (B): 17163091968"),
            Some((0, "VRAM Total Memory (B)", "17163091968"))
        );
        let mut r = Rocm::new(1, true);
        for (i, l) in [
            "GPU[0]\t\t: VRAM Total Memory (B): 17163091968",
            "GPU[0]\t\t: VRAM Total Used Memory (B): 6442450944",
            "================================================================================",
            "============================= End of ROCm SMI Log ==============================",
        ]
        .iter()
        .enumerate()
        {
            r.feed(i as u64 + 2, l);
        }
        let mut out = Vec::new();
        r.finish(&mut |i| out.push(i));
        let [SmiItem::Snapshot(s)] = out.as_slice() else {
            panic!("{out:?}")
        };
        assert_eq!(s.gpus[0].total, Some(Quantity::exact(17163091968)));
        assert_eq!(s.gpus[0].used, Some(Quantity::exact(6442450944)));
        assert_eq!(s.end_line, 5);
    }

    #[test]
    fn doc_shaped_json() {
        let mut j = Json::new(7);
        let mut out = Vec::new();
        let step = j.feed(
            7,
            r#"{"card0": {"VRAM Total Memory (B)": "17163091968", "VRAM Total Used Memory (B)": "1048576"}, "card1": {"VRAM Total Memory (B)": "8573157376", "VRAM Total Used Memory (B)": "0"}}"#,
            &mut |i| out.push(i),
        );
        assert_eq!(step, Step::Closed);
        j.finish(&mut |i| out.push(i));
        let [SmiItem::Snapshot(s)] = out.as_slice() else {
            panic!("{out:?}")
        };
        assert_eq!(s.format, SmiFormat::RocmSmiJson);
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[0].used, Some(Quantity::exact(1048576)));
        assert_eq!(s.gpus[1].index, Some(1));
    }
}
