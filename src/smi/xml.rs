//! `nvidia-smi -q -x` XML, read with quick-xml, safely.
//!
//! The document is buffered line by line (from `<?xml` or `<nvidia_smi_log>` to `</nvidia_smi_log>`) and
//! parsed once complete. Safety rules, because a capture file or a log can come from anywhere:
//! * a document whose DOCTYPE declares entities (`<!ENTITY`, internal subset) is refused with a warning —
//!   no billion laughs, no external entities; the real `<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">`
//!   is fine because nothing is ever fetched;
//! * inside a log, a line that cannot be part of nvidia-smi's XML (not blank, not indented, not starting with
//!   `<` or `]`) ends the capture as cut, so a document that never closes cannot swallow the log;
//! * entity references are never expanded beyond the five predefined ones and numeric character
//!   references; any other `&name;` is kept as literal text;
//! * the buffered document is capped at [`MAX_DOCUMENT_BYTES`]; a longer one is cut there (the part read is
//!   still used) and the rest of it is skipped.

use quick_xml::events::Event;
use quick_xml::Reader;

use super::{is_not_available, mib, text, whole, SmiItem, Step, MAX_DOCUMENT_BYTES};
use crate::model::{normalize_bus_id, SmiFormat, SmiGpu, SmiProcess, Snapshot};

const END: &str = "</nvidia_smi_log>";

/// An XML capture inside a log starts with its declaration, DOCTYPE or root element.
pub(super) fn is_start(line: &str) -> bool {
    line.starts_with("<?xml")
        || line.starts_with("<nvidia_smi_log")
        || line.starts_with("<!DOCTYPE nvidia_smi_log")
}

#[derive(Debug, PartialEq, Eq)]
enum Mode {
    Buffering,
    /// Refused or over the cap: swallow the rest of the document without keeping it.
    Skipping,
}

pub(super) struct Xml {
    start: u64,
    end: u64,
    buf: String,
    mode: Mode,
    refused: bool,
    closed: bool,
    /// Inside a log, a line that cannot be XML (not blank, not indented, not starting with `<`) ends it.
    in_log: bool,
}

impl Xml {
    pub(super) fn new(start: u64, in_log: bool) -> Self {
        Xml {
            start,
            end: start,
            buf: String::new(),
            mode: Mode::Buffering,
            refused: false,
            closed: false,
            in_log,
        }
    }

    pub(super) fn feed(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> Step {
        if self.in_log && number != self.start {
            let first = line.as_bytes().first().copied();
            // `]>` closes a DOCTYPE's internal subset (which is refused, but still part of the document).
            if !matches!(first, None | Some(b' ' | b'\t' | b'<' | b']')) {
                return Step::Rejected;
            }
        }
        self.end = number;
        let closes = line.contains(END);
        if self.mode == Mode::Buffering {
            if line.contains("<!ENTITY") {
                self.refuse(
                    number,
                    "declares an entity (<!ENTITY …>); refused, nothing expanded or fetched",
                    emit,
                );
            } else if self.buf.len() + line.len() + 1 > MAX_DOCUMENT_BYTES {
                emit(SmiItem::Warning {
                    line: number,
                    message: format!(
                        "nvidia-smi XML capture starting at line {} is larger than {} MiB: cut before this line, \
                         the rest of the document is skipped",
                        self.start,
                        MAX_DOCUMENT_BYTES >> 20
                    ),
                });
                self.mode = Mode::Skipping;
            } else {
                self.buf.push_str(line);
                self.buf.push('\n');
            }
        }
        if closes {
            self.closed = true;
            return Step::Closed;
        }
        Step::Took
    }

    fn refuse(&mut self, number: u64, why: &str, emit: &mut impl FnMut(SmiItem)) {
        emit(SmiItem::Warning {
            line: number,
            message: format!(
                "nvidia-smi XML capture starting at line {} {why}",
                self.start
            ),
        });
        self.refused = true;
        self.mode = Mode::Skipping;
        self.buf = String::new();
    }

    pub(super) fn finish(self, emit: &mut impl FnMut(SmiItem)) {
        if self.refused {
            return;
        }
        if !self.closed {
            emit(SmiItem::Warning {
                line: self.end,
                message: format!(
                    "nvidia-smi XML capture starting at line {} has no closing {END} (cut); using what was read",
                    self.start
                ),
            });
        }
        if let Some(snap) = parse(&self.buf, self.start, self.end, emit) {
            emit(SmiItem::Snapshot(snap));
        }
    }
}

/// Line numbers of byte offsets in the buffered document.
struct Lines {
    starts: Vec<usize>,
    first: u64,
}

impl Lines {
    fn new(doc: &str, first: u64) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', doc.as_bytes()).map(|i| i + 1));
        Lines { starts, first }
    }

    fn at(&self, offset: u64) -> u64 {
        let i = self.starts.partition_point(|&s| s as u64 <= offset);
        self.first + i.saturating_sub(1) as u64
    }
}

/// Parse a buffered document. Returns `None` (after a warning) when it is refused or holds no `<gpu>`.
fn parse(doc: &str, first: u64, last: u64, emit: &mut impl FnMut(SmiItem)) -> Option<Snapshot> {
    let lines = Lines::new(doc, first);
    let mut reader = Reader::from_str(doc);
    let mut snap = Snapshot {
        format: SmiFormat::QueryXml,
        line: first,
        end_line: last,
        timestamp: None,
        driver_version: None,
        gpus: Vec::new(),
        processes: None,
    };
    let mut path: Vec<String> = Vec::new();
    let mut value = String::new();
    let mut gpu: Option<SmiGpu> = None;
    let mut migs: Vec<SmiGpu> = Vec::new();
    let mut process: Option<SmiProcess> = None;
    let mut processes: Vec<SmiProcess> = Vec::new();
    let mut unknown_entity_warned = false;
    loop {
        let at = lines.at(reader.buffer_position());
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => {
                emit(SmiItem::Warning {
                    line: lines.at(reader.error_position()),
                    message: format!(
                        "nvidia-smi XML capture starting at line {first}: {e}; using what was read"
                    ),
                });
                break;
            }
        };
        match event {
            Event::Eof => break,
            Event::DocType(d) if d.contains("ENTITY") || d.contains('[') => {
                emit(SmiItem::Warning {
                    line: at,
                    message: format!(
                        "nvidia-smi XML capture starting at line {first} has a DOCTYPE with an internal \
                         subset; refused, nothing expanded or fetched"
                    ),
                });
                return None;
            }
            Event::Start(e) => {
                let name = e.local_name().as_ref().to_owned();
                value.clear();
                match (path.last().map(String::as_str), name.as_str()) {
                    (Some("nvidia_smi_log"), "gpu") => {
                        let id = e
                            .try_get_attribute("id")
                            .ok()
                            .flatten()
                            .map(|a| a.value.into_owned());
                        gpu = Some(SmiGpu {
                            bus_id: id.as_deref().and_then(normalize_bus_id),
                            line: at,
                            ..SmiGpu::default()
                        });
                    }
                    (Some("mig_devices"), "mig_device") => {
                        if let Some(g) = &gpu {
                            migs.push(SmiGpu {
                                index: g.index,
                                name: g.name.clone(),
                                bus_id: g.bus_id.clone(),
                                mig: true,
                                line: at,
                                ..SmiGpu::default()
                            });
                        }
                    }
                    (Some("gpu"), "processes") => {
                        snap.processes.get_or_insert_with(Vec::new);
                    }
                    (Some("processes"), "process_info") => {
                        process = gpu.as_ref().map(|g| SmiProcess {
                            gpu_uuid: g.uuid.clone(),
                            gpu_bus_id: g.bus_id.clone(),
                            line: at,
                            ..SmiProcess::default()
                        });
                    }
                    _ => {}
                }
                path.push(name);
            }
            Event::Text(t) => value.push_str(&t),
            Event::CData(t) => value.push_str(&t),
            Event::GeneralRef(r) => {
                let name: &str = &r;
                let ch = match name {
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "amp" => Some('&'),
                    "apos" => Some('\''),
                    "quot" => Some('"'),
                    _ => r.resolve_char_ref().ok().flatten(),
                };
                match ch {
                    Some(c) => value.push(c),
                    None => {
                        // Never expanded: kept as written.
                        value.push('&');
                        value.push_str(name);
                        value.push(';');
                        if !unknown_entity_warned {
                            unknown_entity_warned = true;
                            emit(SmiItem::Warning {
                                line: at,
                                message: format!(
                                    "nvidia-smi XML: undeclared entity &{name}; left unexpanded"
                                ),
                            });
                        }
                    }
                }
            }
            Event::End(_) => {
                let Some(name) = path.pop() else { continue };
                let parents: Vec<&str> = path.iter().rev().take(3).map(String::as_str).collect();
                let v = value.trim();
                match (name.as_str(), parents.as_slice()) {
                    ("timestamp", ["nvidia_smi_log", ..]) => snap.timestamp = text(v),
                    ("driver_version", ["nvidia_smi_log", ..]) => snap.driver_version = text(v),
                    ("gpu", ["nvidia_smi_log", ..]) => {
                        if let Some(g) = gpu.take() {
                            super::adopt_parent(&g, &mut migs);
                            snap.gpus.push(g);
                            snap.gpus.append(&mut migs);
                        }
                    }
                    (field, ["gpu", "nvidia_smi_log", ..]) => {
                        if let Some(g) = gpu.as_mut() {
                            match field {
                                "product_name" => g.name = text(v),
                                "uuid" => g.uuid = text(v),
                                "minor_number" => g.index = whole(v),
                                _ => {}
                            }
                        }
                    }
                    (field, ["fb_memory_usage", "gpu", ..]) => {
                        if let Some(g) = gpu.as_mut() {
                            memory(g, field, v, at);
                        }
                    }
                    (field, ["fb_memory_usage", "mig_device", ..]) => {
                        if let Some(m) = migs.last_mut() {
                            memory(m, field, v, at);
                        }
                    }
                    ("index", ["mig_device", ..]) => {
                        if let Some(m) = migs.last_mut() {
                            m.mig_device = whole(v);
                        }
                    }
                    (field, ["process_info", "processes", "gpu", ..]) => {
                        if let Some(p) = process.as_mut() {
                            match field {
                                "pid" => p.pid = whole(v),
                                "process_name" => p.name = v.to_string(),
                                "used_memory" => {
                                    p.used = if is_not_available(v) { None } else { mib(v) }
                                }
                                _ => {}
                            }
                        }
                    }
                    ("process_info", ["processes", "gpu", ..]) => {
                        if let Some(p) = process.take() {
                            processes.push(p);
                        }
                    }
                    _ => {}
                }
                value.clear();
            }
            _ => {}
        }
    }
    // A cut document: keep the GPU that was open.
    if let Some(g) = gpu.take() {
        super::adopt_parent(&g, &mut migs);
        snap.gpus.push(g);
        snap.gpus.append(&mut migs);
    }
    if let Some(list) = snap.processes.as_mut() {
        *list = processes;
    }
    if snap.gpus.is_empty() {
        emit(SmiItem::Warning {
            line: first,
            message: format!("nvidia-smi XML capture starting at line {first} lists no <gpu>"),
        });
        return None;
    }
    Some(snap)
}

fn memory(g: &mut SmiGpu, field: &str, v: &str, at: u64) {
    let q = mib(v);
    match field {
        "total" => g.total = q,
        "reserved" => g.reserved = q,
        "used" => {
            g.used = q;
            g.line = at;
        }
        "free" => g.free = q,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn run(doc: &str) -> Vec<SmiItem> {
        let mut x = Xml::new(1, false);
        let mut out = Vec::new();
        for (i, l) in doc.lines().enumerate() {
            if x.feed(i as u64 + 1, l, &mut |it| out.push(it)) != Step::Took {
                break;
            }
        }
        x.finish(&mut |it| out.push(it));
        out
    }

    #[test]
    fn fb_memory_and_process_from_corpus_103() {
        // Lines of corpus 103 (RTX 3060 laptop, driver 515), cut down to the parts we read.
        let items = run(r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
    <timestamp>Tue Sep 20 15:21:01 2022</timestamp>
    <driver_version>515.65.01</driver_version>
    <gpu id="00000000:01:00.0">
        <product_name>NVIDIA GeForce RTX 3060 Laptop GPU</product_name>
        <uuid>GPU-473d8d0f-d462-185c-6b36-6fc23e23e571</uuid>
        <minor_number>0</minor_number>
        <fb_memory_usage>
            <total>6144 MiB</total>
            <reserved>197 MiB</reserved>
            <used>5 MiB</used>
            <free>5940 MiB</free>
        </fb_memory_usage>
        <bar1_memory_usage>
            <total>8192 MiB</total>
            <used>1 MiB</used>
            <free>8191 MiB</free>
        </bar1_memory_usage>
        <processes>
            <process_info>
                <gpu_instance_id>N/A</gpu_instance_id>
                <compute_instance_id>N/A</compute_instance_id>
                <pid>28543</pid>
                <type>G</type>
                <process_name>/usr/libexec/Xorg</process_name>
                <used_memory>4 MiB</used_memory>
            </process_info>
        </processes>
    </gpu>
</nvidia_smi_log>"#);
        assert_eq!(items.len(), 1, "{items:?}");
        let SmiItem::Snapshot(s) = &items[0] else {
            panic!()
        };
        assert_eq!(s.timestamp.as_deref(), Some("Tue Sep 20 15:21:01 2022"));
        assert_eq!(s.driver_version.as_deref(), Some("515.65.01"));
        let g = &s.gpus[0];
        assert_eq!(g.used.unwrap().bytes, 5 * MIB);
        assert_eq!(g.total.unwrap().bytes, 6144 * MIB);
        assert_eq!(g.reserved.unwrap().bytes, 197 * MIB);
        assert_eq!(g.line, 13);
        let p = &s.processes.as_ref().unwrap()[0];
        assert_eq!((p.pid, p.name.as_str()), (Some(28543), "/usr/libexec/Xorg"));
        assert_eq!(p.used.unwrap().bytes, 4 * MIB);
        assert_eq!(p.line, 22);
    }

    #[test]
    fn predefined_and_numeric_references_only() {
        let items = run(r#"<nvidia_smi_log>
<gpu id="00000000:01:00.0"><product_name>A &amp; B &#x41;&#66; &custom;</product_name>
<fb_memory_usage><used>1 MiB</used></fb_memory_usage></gpu>
</nvidia_smi_log>"#);
        let s = items
            .iter()
            .find_map(|i| match i {
                SmiItem::Snapshot(s) => Some(s),
                _ => None,
            })
            .unwrap();
        assert_eq!(s.gpus[0].name.as_deref(), Some("A & B AB &custom;"));
        assert!(items.iter().any(|i| matches!(i, SmiItem::Warning { .. })));
    }

    #[test]
    fn internal_subset_entities_are_refused() {
        let items = run(r#"<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
  <!ENTITY lol "lol">
]>
<nvidia_smi_log><gpu id="00000000:01:00.0"><product_name>&lol;</product_name></gpu></nvidia_smi_log>"#);
        assert_eq!(items.len(), 1, "{items:?}");
        assert!(
            matches!(&items[0], SmiItem::Warning { line: 3, message } if message.contains("ENTITY"))
        );
    }
}
