//! GPU monitor captures: find nvidia-smi / rocm-smi output in a log (or take a whole `--smi` file as one) and
//! turn every capture into a [`Snapshot`].
//!
//! This file is the dispatcher: [`SmiScanner::feed`] sees every line of a possibly multi-GB log, so while no
//! capture is open it only looks at the first byte (and, for the few lines whose first byte could start a
//! capture, a prefix) before returning — no allocation, no regex. Once a capture starts, the line goes to
//! that format's state machine (`table`, `query`, `xml`, `csv`, `rocm`), which says whether the line is
//! part of the capture, closes it, or does not belong. A line that does not belong is another writer's line
//! between the rows while fewer than [`MAX_FOREIGN_LINES`] came in a row and it starts nothing (the grammar
//! reads it, the capture stays open); else the capture is flushed and the line is looked at again as a
//! possible start. The helpers the format parsers share live here too.

mod csv;
pub mod file;
mod query;
mod rocm;
mod table;
mod xml;

use crate::model::{Quantity, Snapshot, MIB};

/// The largest buffered document (XML, rocm-smi JSON) we parse; a bigger one is cut here with a warning.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// What the scanner hands back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmiItem {
    Snapshot(Snapshot),
    Warning { line: u64, message: String },
}

/// What a format's state machine did with a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The line is part of the capture; more may follow.
    Took,
    /// The line is part of the capture and ends it.
    Closed,
    /// The line is not part of the capture: the capture ended on the line before.
    Rejected,
}

enum State {
    Idle,
    // Boxed: the idle state stays small; a box is allocated only when a capture starts.
    Table(Box<table::Table>),
    Query(Box<query::Query>),
    Xml(xml::Xml),
    Csv(csv::Csv),
    Rocm(rocm::Rocm),
    RocmJson(rocm::Json),
}

/// Lines seen just before a possible table: nvidia-smi's date line and/or the table's top border, and how
/// many other writers' lines came since the first of them (see [`TABLE_LOOKBACK_LINES`]).
#[derive(Debug, Default)]
struct Prelude {
    line: u64,
    date: Option<String>,
    border: bool,
    foreign: u32,
}

/// Literals one of which every line that starts a capture in a log holds (see [`SmiScanner::feed`]): an
/// nvidia-smi table ([`TABLE_START_LITERALS`]), `-q` (`==… NVSMI LOG …==`), XML (`<?xml`, `<nvidia_smi_log`,
/// `<!DOCTYPE nvidia_smi_log`), a CSV header (whose columns must name a memory figure: `memory.used`,
/// `used_memory` …), rocm-smi (its `=== ROCm System Management Interface ===` banner, a `GPU[0]` line, a
/// `{"card0": …}` document). A line holding none of them, seen while no capture is open and no capture prelude
/// is held ([`SmiScanner::is_quiet`]), is no capture's and leaves the scanner as it is.
pub const START_LITERALS: [&str; 7] = [
    "NVSMI LOG",
    "<?xml",
    "nvidia_smi_log",
    "memory",
    "ROCm System Management Interface",
    "GPU[",
    "\"card",
];

/// Literals one of which a line that starts an nvidia-smi table holds (`| NVIDIA-SMI … Driver Version …`, or
/// the `| GPU  Name …` header). Such a table takes the date line and the top border from the two lines above
/// it, so those must be seen too.
pub const TABLE_START_LITERALS: [&str; 2] = ["NVIDIA-SMI ", "GPU  Name"];

/// How many lines in a row an open capture lets by that are not its own before it counts as ended.
///
/// A monitor prints a capture in one go, but what collects it may put other writers' lines between its rows:
/// a journal or a terminal shared with other processes, the server logging while `nvidia-smi` runs. Such a
/// line is no row of the capture (a row is known by its own shape: a table's `|`/`+-` rows, a CSV row with
/// the header's columns, a `GPU[n]` line), so it neither ends the capture nor changes it; the rows after it
/// still belong to the capture. A capture that was cut (no closing border) ends this many lines after its
/// last row, with its warning as before; a line that starts another capture (a date line, a border, a
/// header, a banner) ends it at once. Other writers print a few lines in the milliseconds a capture takes;
/// the bound keeps a cut capture from holding the skim off (`crate::frame::skim`: every line is framed
/// while a capture is open) and its snapshot from waiting past the loads that follow.
pub const MAX_FOREIGN_LINES: u32 = 8;

/// How far above a table's first line ([`TABLE_START_LITERALS`]) its date line may be: the date line and the
/// top border, and the [`MAX_FOREIGN_LINES`] other writers' lines that may land between them and the header
/// as between any rows of the table (a journal or a terminal shared with other processes). The date is
/// held that long ([`SmiScanner::feed`]), and the skim frames as many lines above a table's first line
/// (`crate::frame::skim`), so a date line holding no literal is seen.
pub const TABLE_LOOKBACK_LINES: usize = 2 + MAX_FOREIGN_LINES as usize;

/// Finds and parses GPU monitor captures, one line at a time.
pub struct SmiScanner {
    /// `--smi` file: every line belongs to a capture; looser starts are accepted.
    file: bool,
    /// The `--query-gpu=` field list for headerless CSV (file mode only).
    fields: Option<String>,
    state: State,
    prelude: Option<Prelude>,
    headerless_warned: bool,
    /// Lines the open capture did not take since its last row (see [`MAX_FOREIGN_LINES`]).
    foreign: u32,
}

impl SmiScanner {
    /// For lines inside an Ollama/CI log: only recognisable captures (table, -q, XML, CSV *with* a header,
    /// rocm-smi) are taken.
    pub fn in_log() -> Self {
        SmiScanner {
            file: false,
            fields: None,
            state: State::Idle,
            prelude: None,
            headerless_warned: false,
            foreign: 0,
        }
    }

    /// For a file given with `--smi`: everything is a capture; headerless CSV is accepted when `fields` names
    /// its columns (the `--query-gpu=` list, e.g. "index,name,memory.used,memory.total"), else a Warning
    /// explains how to pass them.
    pub fn capture_file(fields: Option<&str>) -> Self {
        SmiScanner {
            file: true,
            fields: fields.map(str::to_string),
            ..SmiScanner::in_log()
        }
    }

    /// Feed one logical line (already stripped of journald/docker prefixes, no trailing newline). Returns
    /// true when the line belongs to a capture (so the caller does not count it as an unrecognised line).
    /// Emits finished snapshots/warnings through `emit`.
    ///
    /// A date line or top border just above a table (other writers' lines may come between them and its
    /// header, [`TABLE_LOOKBACK_LINES`]) is only known to belong to it once the table header follows, so in a
    /// log those two lines return false (in a capture file every line returns true).
    pub fn feed(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> bool {
        if !matches!(self.state, State::Idle) {
            let step = match &mut self.state {
                State::Idle => Step::Rejected,
                State::Table(p) => p.feed(number, line),
                State::Query(p) => p.feed(number, line),
                State::Xml(p) => p.feed(number, line, emit),
                State::Csv(p) => p.feed(number, line, emit),
                State::Rocm(p) => p.feed(number, line),
                State::RocmJson(p) => p.feed(number, line, emit),
            };
            match step {
                Step::Took => {
                    if !line.trim().is_empty() {
                        self.foreign = 0;
                    }
                    return true;
                }
                Step::Closed => {
                    self.close(emit);
                    return true;
                }
                Step::Rejected if self.foreign < MAX_FOREIGN_LINES && self.rows_have_a_shape() => {
                    self.foreign += 1;
                    return self.foreign_line(number, line, emit) || self.file;
                }
                Step::Rejected => self.close(emit),
            }
        }
        self.idle(number, line, emit) || self.file
    }

    /// True when the open capture's rows are known by their shape, so that a line of another shape can be
    /// let by: a table's `|`/`+-` rows, a CSV row of the header's columns, rocm-smi's `GPU[n]` lines, an XML
    /// element. Not `-q`: once its indentation is lost (collectors and the framer strip leading blanks) any
    /// `key: value` line could be one of its rows, and only a line of no such shape ends it.
    fn rows_have_a_shape(&self) -> bool {
        match self.state {
            State::Table(_) | State::Csv(_) | State::Rocm(_) | State::Xml(_) => true,
            State::Idle | State::Query(_) | State::RocmJson(_) => false,
        }
    }

    /// A line the open capture does not take, seen fewer than [`MAX_FOREIGN_LINES`] lines after its last
    /// row: another writer's line between the capture's rows, unless it starts a capture itself (a date
    /// line, a border, a header or banner: the open capture ended on the line before). The open capture
    /// stays open and the line is the grammar's.
    fn foreign_line(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> bool {
        let open = std::mem::replace(&mut self.state, State::Idle);
        // What the line starts is emitted after the open capture, which came first.
        let mut started = Vec::new();
        let took = self.idle(number, line, &mut |item| started.push(item));
        if self.is_quiet() && started.is_empty() {
            self.state = open;
            return took;
        }
        Self::finish_state(open, emit);
        self.foreign = 0;
        started.into_iter().for_each(&mut *emit);
        took
    }

    /// True when no capture is open and no date line or top border is held for a table that may follow: a
    /// line that starts nothing then changes nothing (see [`START_LITERALS`]).
    pub fn is_quiet(&self) -> bool {
        matches!(self.state, State::Idle) && self.prelude.is_none()
    }

    /// End of input: flush a capture in progress (a truncated capture still yields what was read, plus a
    /// Warning).
    pub fn finish(&mut self, emit: &mut impl FnMut(SmiItem)) {
        self.prelude = None;
        self.close(emit);
    }

    fn close(&mut self, emit: &mut impl FnMut(SmiItem)) {
        self.foreign = 0;
        Self::finish_state(std::mem::replace(&mut self.state, State::Idle), emit);
    }

    fn finish_state(state: State, emit: &mut impl FnMut(SmiItem)) {
        match state {
            State::Idle => {}
            State::Table(p) => (*p).finish(emit),
            State::Query(p) => (*p).finish(emit),
            State::Xml(p) => p.finish(emit),
            State::Csv(p) => p.finish(emit),
            State::Rocm(p) => p.finish(emit),
            State::RocmJson(p) => p.finish(emit),
        }
    }

    /// No capture open: does `line` start one? The common case (an ordinary log line) costs a byte compare.
    fn idle(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> bool {
        let prelude = self.prelude.take();
        let Some(&first) = line.as_bytes().first() else {
            self.let_by(prelude);
            return false;
        };
        match first {
            b'|' | b'N' if table::is_start(line) => {
                let (start, date) = match prelude {
                    Some(p) => (p.line, p.date),
                    None => (number, None),
                };
                let mut t = table::Table::new(start, date);
                let step = t.feed(number, line);
                self.state = State::Table(Box::new(t));
                debug_assert_eq!(step, Step::Took);
                true
            }
            b'+' if line.starts_with("+--") => {
                // Possibly the top border of a table; keep a date line seen just before it.
                self.prelude = Some(match prelude {
                    Some(p) if !p.border => Prelude { border: true, ..p },
                    _ => Prelude {
                        line: number,
                        date: None,
                        border: true,
                        foreign: 0,
                    },
                });
                false
            }
            b'M' | b'T' | b'W' | b'F' | b'S' if is_date_line(line) => {
                self.prelude = Some(Prelude {
                    line: number,
                    date: Some(line.trim().to_string()),
                    border: false,
                    foreign: 0,
                });
                false
            }
            b'=' if line.contains("NVSMI LOG") => self.start_query(number, line),
            b'T' | b'G' if self.file && query::is_loose_start(line) => {
                self.start_query(number, line)
            }
            b'=' if line.contains("ROCm System Management Interface") => {
                self.state = State::Rocm(rocm::Rocm::new(number, true));
                true
            }
            b'G' if rocm::is_gpu_line(line) => {
                let mut r = rocm::Rocm::new(number, false);
                r.feed(number, line);
                self.state = State::Rocm(r);
                true
            }
            b'<' if self.file || xml::is_start(line) => {
                let mut x = xml::Xml::new(number, !self.file);
                let step = x.feed(number, line, emit);
                self.state = State::Xml(x);
                if step != Step::Took {
                    self.close(emit);
                }
                true
            }
            b'{' if self.file || line.starts_with("{\"card") || line.starts_with("{ \"card") => {
                let mut j = rocm::Json::new(number);
                let step = j.feed(number, line, emit);
                self.state = State::RocmJson(j);
                if step != Step::Took {
                    self.close(emit);
                }
                true
            }
            b'a'..=b'z' if csv::may_be_header(line) => match csv::Csv::from_header(number, line) {
                Some(c) => {
                    self.state = State::Csv(c);
                    true
                }
                None => {
                    self.let_by(prelude);
                    false
                }
            },
            _ if self.file => self.headerless_csv(number, line, emit),
            _ => {
                self.let_by(prelude);
                false
            }
        }
    }

    /// A line that starts nothing, seen while a date line or top border is held: another writer's line
    /// between them and the table's header, let by (the prelude kept) while fewer than
    /// [`MAX_FOREIGN_LINES`] came since the prelude's first line.
    fn let_by(&mut self, prelude: Option<Prelude>) {
        self.prelude = prelude
            .filter(|p| p.foreign < MAX_FOREIGN_LINES)
            .map(|p| Prelude {
                foreign: p.foreign + 1,
                ..p
            });
    }

    fn start_query(&mut self, number: u64, line: &str) -> bool {
        let mut q = query::Query::new(number);
        q.feed(number, line);
        self.state = State::Query(Box::new(q));
        true
    }

    /// A capture-file line that started nothing: a headerless CSV row when the field list is known.
    fn headerless_csv(&mut self, number: u64, line: &str, emit: &mut impl FnMut(SmiItem)) -> bool {
        if line.trim().is_empty() || !line.contains(',') {
            return true;
        }
        match &self.fields {
            Some(fields) => match csv::Csv::from_fields(number, fields) {
                Some(mut c) => {
                    if c.feed(number, line, emit) == Step::Took {
                        self.state = State::Csv(c);
                    } else if !self.headerless_warned {
                        self.headerless_warned = true;
                        emit(SmiItem::Warning {
                            line: number,
                            message: format!(
                                "CSV row does not match the given field list \"{fields}\" (wrong field count \
                                 or values)"
                            ),
                        });
                    }
                }
                None if !self.headerless_warned => {
                    self.headerless_warned = true;
                    emit(SmiItem::Warning {
                        line: number,
                        message: format!(
                            "the field list \"{fields}\" names no memory column (memory.used, memory.total, \
                             used_memory, …)"
                        ),
                    });
                }
                None => {}
            },
            None if !self.headerless_warned => {
                self.headerless_warned = true;
                emit(SmiItem::Warning {
                    line: number,
                    message: "headerless nvidia-smi CSV (--format=csv,noheader): its columns are unknown; pass \
                              the --query-gpu= field list it was made with (e.g. \
                              \"index,name,memory.used,memory.total\") along with the capture, or keep the \
                              header line"
                        .to_string(),
                });
            }
            None => {}
        }
        true
    }
}

/// `Thu Jul 31 08:32:16 2025`, `Mon Aug  7 11:10:06 2023`: nvidia-smi's date line above its table.
fn is_date_line(line: &str) -> bool {
    let t = line.trim_end();
    if !(20..=26).contains(&t.len()) {
        return false;
    }
    let mut it = t.split_ascii_whitespace();
    let (Some(day), Some(month), Some(dom), Some(time), Some(year), None) = (
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
    ) else {
        return false;
    };
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    DAYS.contains(&day)
        && MONTHS.contains(&month)
        && dom.len() <= 2
        && digits(dom)
        && time.len() == 8
        && time.split(':').all(|p| p.len() == 2 && digits(p))
        && year.len() == 4
        && digits(year)
}

/// MIG instances are listed before the parent's minor number (`-q`, XML): give them the parent's identity
/// once the parent's block is complete.
fn adopt_parent(parent: &crate::model::SmiGpu, migs: &mut [crate::model::SmiGpu]) {
    for m in migs {
        m.index = m.index.or(parent.index);
        if m.name.is_none() {
            m.name.clone_from(&parent.name);
        }
        if m.bus_id.is_none() {
            m.bus_id.clone_from(&parent.bus_id);
        }
    }
}

/// True for the placeholders nvidia-smi prints for a missing value.
fn is_not_available(text: &str) -> bool {
    let t = text.trim();
    let t = t
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(t);
    matches!(
        t,
        "" | "N/A" | "Not Supported" | "Unknown Error" | "Insufficient Permissions" | "Unknown"
    )
}

/// A whole number of MiB as nvidia-smi prints it (`9866MiB`, `9866 MiB`, `9866`), ±0.5 MiB; placeholders
/// (`N/A`, `[Not Supported]`) are `None`.
fn mib(text: &str) -> Option<Quantity> {
    crate::parse::values::parse_size_or_bare(text, MIB)
}

/// A whole number (index, PID, minor number).
fn whole(text: &str) -> Option<u32> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Text as printed, or `None` for an nvidia-smi placeholder.
fn text(value: &str) -> Option<String> {
    (!is_not_available(value)).then(|| value.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_line_above_the_table() {
        // corpus 039 and the founding capture
        assert!(is_date_line("Thu Jul 31 08:32:16 2025"));
        assert!(is_date_line("Sun Jul 20 09:44:10 2025"));
        // `-q -x` prints unpadded days (corpus 106)
        assert!(is_date_line("Mon Aug 7 11:10:06 2023"));
        assert!(is_date_line("Mon Aug  7 11:10:06 2023"));
        assert!(!is_date_line("Thursday Jul 31 08:32:16 2025"));
        assert!(!is_date_line("Thu Jul 31 08:32 2025 x"));
    }

    #[test]
    fn mib_cells_as_printed() {
        let q = mib("9866MiB").unwrap();
        assert_eq!(q.bytes, 9866 * MIB);
        assert_eq!(
            (q.low, q.high),
            (9866 * MIB - MIB / 2, 9866 * MIB + MIB / 2)
        );
        assert_eq!(mib(" 11441 MiB ").unwrap().bytes, 11441 * MIB);
        assert_eq!(mib("103").unwrap().bytes, 103 * MIB);
        assert_eq!(mib("N/A"), None);
        assert_eq!(mib("[N/A]"), None);
        assert!(is_not_available("[Not Supported]"));
    }

    #[test]
    fn ordinary_log_lines_start_nothing() {
        let mut s = SmiScanner::in_log();
        let mut items = Vec::new();
        for (i, line) in [
            "time=2025-07-20T09:43:50.123+08:00 level=INFO source=server.go:135 msg=\"system memory\"",
            "llama_model_loader: - kv   0:                       general.architecture str              = gemma3",
            "[GIN] 2025/07/20 - 09:44:12 | 200 |  4.2s |       127.0.0.1 | POST     \"/api/generate\"",
            "Thu, the weather",
            "",
            "name=ollama is not a CSV header",
            "{\"level\":\"info\"}",
        ]
        .iter()
        .enumerate()
        {
            assert!(!s.feed(i as u64 + 1, line, &mut |it| items.push(it)), "{line}");
        }
        s.finish(&mut |it| items.push(it));
        assert!(items.is_empty(), "{items:?}");
    }
}
