//! The main report written load by load, as the pipeline hands each load out, so that a log with thousands of
//! loads never holds them all: each load is rendered as it completes and dropped. The bytes are those of
//! [`super::render`] on the whole analysis (`tests/streamed_report.rs` compares the two on every sample).
//!
//! The text and Markdown layouts put the loads first and the inputs last, so each load's part goes straight to
//! the output; JSONL is one line per load. The JSON document sorts `inputs` before `loads`, and an input's
//! summary is known only at its end, so each load's element is rendered at once and spooled (in memory up to
//! `IN_MEMORY` bytes, then in a temporary file) until the inputs are written. What the end of the report
//! needs of the loads is kept as small aggregates: how many were read from each input, the worst severity
//! found. HTML (charts drawn per load, evidence quoted) and JUnit (a suite per input) need the whole
//! analysis: [`Streamed::new`] returns `None` for them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use super::document::{render_part, Markup};
use super::{color, json, outline, Charts, Format, Writer};
use crate::model::{Concluded, InputSummary, Severity};

/// Rendered JSON kept in memory before it goes to a temporary file: a report of a few loads never touches the
/// disk, and a long one holds at most this much (with the vector's doubling, twice this) of its loads' JSON.
const IN_MEMORY: usize = 256 << 10;

/// The main report, written as the loads come.
pub struct Streamed<'w> {
    out: &'w mut dyn Write,
    layout: Layout,
    show_unrecognized: bool,
    /// Paint the text for a terminal (`color::paint`, line by line: a line not yet ended waits in `pending`).
    color: bool,
    pending: String,
    loads: usize,
    loads_by_path: BTreeMap<String, usize>,
    worst: Option<Severity>,
    /// The pairs of loads (`crate::pairs`), found as the loads come; written at the end.
    pairer: crate::pairs::Pairer,
    /// The first write that failed; nothing is written after it.
    error: Option<io::Error>,
}

enum Layout {
    Markup(Box<dyn Markup>),
    Json(Spool),
    JsonLines,
}

impl<'w> Streamed<'w> {
    /// The report in `format` written to `out` as the loads come, or `None` for a format that needs every
    /// load at once (HTML, JUnit). `color`: paint the text layout for a terminal.
    pub fn new(
        format: Format,
        show_unrecognized: bool,
        color: bool,
        out: &'w mut dyn Write,
    ) -> Option<Streamed<'w>> {
        let layout = match format.registration().1 {
            Writer::Markup(new, Charts::Linked) => Layout::Markup(new()),
            Writer::Json => Layout::Json(Spool::default()),
            Writer::JsonLines => Layout::JsonLines,
            Writer::Markup(_, Charts::Embedded) | Writer::Junit => return None,
        };
        let mut streamed = Streamed {
            out,
            layout,
            show_unrecognized,
            color,
            pending: String::new(),
            loads: 0,
            loads_by_path: BTreeMap::new(),
            worst: None,
            pairer: crate::pairs::Pairer::default(),
            error: None,
        };
        if let Layout::Markup(markup) = &mut streamed.layout {
            let mut text = String::new();
            render_part(&outline::head(), markup.as_mut(), &mut text);
            streamed.text(text);
        }
        Some(streamed)
    }

    /// The next load, rendered now; the load itself is not kept.
    pub fn load(&mut self, load: &Concluded) {
        self.loads += 1;
        *self
            .loads_by_path
            .entry(load.reconciled.load.source.path.clone())
            .or_default() += 1;
        self.worst = self
            .worst
            .max(load.findings.iter().map(|f| f.severity).max());
        if !matches!(self.layout, Layout::JsonLines) {
            self.pairer.push(load);
        }
        if self.error.is_some() {
            return;
        }
        let result = match &mut self.layout {
            Layout::Markup(markup) => {
                let mut text = String::new();
                render_part(&outline::load(self.loads, load), markup.as_mut(), &mut text);
                self.text(text);
                Ok(())
            }
            Layout::Json(spool) => {
                let mut element = Vec::new();
                match json::load_element(&mut element, load, self.loads == 1) {
                    Ok(()) => spool.write(&element),
                    Err(e) => Err(io::Error::other(e)),
                }
            }
            Layout::JsonLines => self.out.write_all(&json::load_line(load)),
        };
        self.keep(result);
    }

    /// The worst severity among the findings of the loads written so far.
    pub fn worst(&self) -> Option<Severity> {
        self.worst
    }

    /// The end of the report (the inputs, read to their end), flushed; the first write error, if any.
    pub fn finish(mut self, inputs: &[InputSummary]) -> io::Result<()> {
        let pairs = std::mem::take(&mut self.pairer).finish();
        if self.error.is_none() {
            let result = match &mut self.layout {
                Layout::Markup(markup) => {
                    let mut doc = super::document::Document::new();
                    let counts = &self.loads_by_path;
                    outline::tail(
                        &mut doc,
                        self.loads,
                        inputs,
                        |path| counts.get(path).copied().unwrap_or(0),
                        &pairs,
                        super::Charts::Linked,
                        self.show_unrecognized,
                    );
                    let mut text = String::new();
                    render_part(&doc, markup.as_mut(), &mut text);
                    self.text(text);
                    let rest = std::mem::take(&mut self.pending);
                    self.write_text(&rest)
                }
                Layout::Json(spool) => {
                    let mut head = Vec::new();
                    let mut tail = Vec::new();
                    json::report_until_loads(&mut head, inputs)
                        .and_then(|()| json::report_after_loads(&mut tail, self.loads > 0, &pairs))
                        .map_err(io::Error::other)
                        .and_then(|()| self.out.write_all(&head))
                        .and_then(|()| spool.copy_to(&mut *self.out))
                        .and_then(|()| self.out.write_all(&tail))
                }
                Layout::JsonLines => Ok(()),
            };
            self.keep(result);
        }
        if self.error.is_none() {
            let flushed = self.out.flush();
            self.keep(flushed);
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Text of the layout: written, painted line by line when asked.
    fn text(&mut self, text: String) {
        if self.error.is_some() {
            return;
        }
        if !self.color {
            let result = self.out.write_all(text.as_bytes());
            self.keep(result);
            return;
        }
        self.pending.push_str(&text);
        if let Some(end) = self.pending.rfind('\n') {
            let rest = self.pending.split_off(end + 1);
            let lines = std::mem::replace(&mut self.pending, rest);
            let result = self.write_text(&lines);
            self.keep(result);
        }
    }

    fn write_text(&mut self, text: &str) -> io::Result<()> {
        if self.color {
            self.out.write_all(color::paint(text).as_bytes())
        } else {
            self.out.write_all(text.as_bytes())
        }
    }

    fn keep(&mut self, result: io::Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

/// Bytes kept for later: in memory up to [`IN_MEMORY`], then in a temporary file (removed when dropped). When
/// no temporary file can be made they stay in memory.
#[derive(Default)]
struct Spool {
    memory: Vec<u8>,
    file: Option<(BufWriter<File>, PathBuf)>,
    no_file: bool,
}

impl Spool {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.file.is_none() && !self.no_file && self.memory.len() + bytes.len() > IN_MEMORY {
            match temporary_file() {
                Some((file, path)) => {
                    let mut file = BufWriter::with_capacity(1 << 16, file);
                    let spilled = file.write_all(&self.memory);
                    self.memory = Vec::new();
                    self.file = Some((file, path));
                    spilled?;
                }
                None => self.no_file = true,
            }
        }
        match &mut self.file {
            Some((file, _)) => file.write_all(bytes),
            None => {
                self.memory.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Everything written, in order, to `out`.
    fn copy_to(&mut self, out: &mut dyn Write) -> io::Result<()> {
        match &mut self.file {
            Some((file, _)) => {
                file.flush()?;
                let file = file.get_mut();
                file.seek(SeekFrom::Start(0))?;
                let mut buffer = vec![0; 1 << 16];
                loop {
                    let n = file.read(&mut buffer)?;
                    if n == 0 {
                        return Ok(());
                    }
                    out.write_all(&buffer[..n])?;
                }
            }
            None => out.write_all(&self.memory),
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some((_, path)) = self.file.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A new file in the temporary folder, for this process alone.
fn temporary_file() -> Option<(File, PathBuf)> {
    let dir = std::env::temp_dir();
    for attempt in 0..16 {
        let path = dir.join(format!(
            "vramdiff-{}-{attempt}.report.json",
            std::process::id()
        ));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Some((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_gives_back_what_it_was_given_in_memory_and_past_it_in_a_file() {
        let mut spool = Spool::default();
        let chunk: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        let mut expected = Vec::new();
        for _ in 0..(IN_MEMORY / chunk.len() + 3) {
            spool.write(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
        }
        assert!(spool.file.is_some() || spool.no_file);
        let path = spool.file.as_ref().map(|(_, p)| p.clone());
        let mut out = Vec::new();
        spool.copy_to(&mut out).unwrap();
        assert_eq!(out, expected);
        drop(spool);
        if let Some(path) = path {
            assert!(!path.exists(), "the temporary file is removed");
        }
    }
}
