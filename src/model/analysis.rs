//! The result of reading a set of inputs: one summary per input and every load found.

use serde::Serialize;

use super::concluded::Concluded;
use super::snapshot::Snapshot;

/// A line no rule recognised that looks like it is about memory.
#[derive(Debug, Clone, Serialize)]
pub struct UnrecognizedLine {
    pub line: u64,
    pub text: String,
    /// The sizes the line prints, in order (`crate::parse::figures`): what the report did not read.
    pub figures: Vec<LineFigure>,
}

/// A line a terminal's hard wrap cut inside a figure, where the framer could not tell the next row for the
/// figure's rest (`frame::join::figure_cut`): the line is not read, so no other number stands in for the
/// one the server printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutByWrap {
    /// The physical line the cut line starts on.
    pub line: u64,
    /// The line as read, up to the cut.
    pub text: String,
    /// The terminal's width, in columns, at which the figure was cut.
    pub width: u64,
    /// What the report did with it: `a figure was cut by a wrap at column W; not read`.
    pub notice: String,
}

impl CutByWrap {
    /// The notice for line `line`, `text` as read, cut at `width` columns.
    pub fn new(line: u64, text: &str, width: usize) -> CutByWrap {
        CutByWrap {
            line,
            text: text.to_string(),
            width: width as u64,
            notice: format!("a figure was cut by a wrap at column {width}; not read"),
        }
    }
}

/// A size as an unrecognised line prints it, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineFigure {
    /// As printed: `1024.00 MiB`, `7.5 GiB`, `21.63 GB`.
    pub text: String,
    /// The nominal bytes (binary units for `KiB`…, decimal for `KB`…, as `crate::parse::values` reads them).
    pub bytes: u64,
}

/// A problem with an input that did not stop vramdiff from reading the rest.
#[derive(Debug, Clone, Serialize)]
pub struct InputWarning {
    /// Line number, when the problem is on a line.
    pub line: Option<u64>,
    pub message: String,
}

/// What an input is to vramdiff.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputRole {
    /// A server or CI log (which may contain captures too).
    #[default]
    Log,
    /// A GPU monitor capture file given with `--smi`.
    Capture,
}

/// What vramdiff made of one input.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InputSummary {
    pub path: String,
    /// `log` for a log, `capture` for a file given with `--smi`.
    pub role: InputRole,
    /// Physical lines read.
    pub lines: u64,
    /// Logical lines a grammar rule recognised.
    pub recognized_lines: u64,
    /// Lines that look like memory lines (sizes, buffers, VRAM) but that no rule recognised.
    pub unrecognized_memory_lines: u64,
    /// Physical lines joined onto the line before them (re-wrapped pastes).
    pub joined_lines: u64,
    /// The unrecognised memory lines themselves (only with `--show-unrecognized`; at most 10,000).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecognized: Vec<UnrecognizedLine>,
    /// The memory lines a terminal's wrap cut inside a figure, not read (at most 10,000; none is serialised
    /// when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cut_by_wrap: Vec<CutByWrap>,
    pub warnings: Vec<InputWarning>,
    /// GPUs the server discovered (`inference compute` lines), in the order first printed; a GPU printed again
    /// (a server restart) keeps its place and takes the latest figures.
    pub discovered_gpus: Vec<super::load::Gpu>,
    /// nvidia-smi / rocm-smi captures found in the input, in input order (a time series).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<Snapshot>,
    /// The input could not be read (to the end, or at all).
    pub error: Option<String>,
    /// Warnings past [`MAX_WARNINGS`], counted and summed up by [`InputSummary::close_warnings`].
    #[serde(skip)]
    pub dropped_warnings: u64,
}

/// At most this many warnings are kept per input; the rest are counted.
pub const MAX_WARNINGS: usize = 1_000;

impl InputSummary {
    /// A summary for an input of this role, nothing read yet.
    pub fn new(path: &str, role: InputRole) -> InputSummary {
        InputSummary {
            path: path.to_string(),
            role,
            ..InputSummary::default()
        }
    }

    /// Take in the summary of the other side of the same pasted diff (`crate::source::diff_sides`), where a
    /// batch keeps one summary per file: both sides span the diff's lines, so the line count is one side's;
    /// what each side recognised, joined, warned and captured adds up.
    pub fn absorb_other_side(&mut self, other: InputSummary) {
        self.lines = self.lines.max(other.lines);
        self.recognized_lines += other.recognized_lines;
        self.unrecognized_memory_lines += other.unrecognized_memory_lines;
        self.joined_lines += other.joined_lines;
        self.unrecognized.extend(other.unrecognized);
        self.cut_by_wrap.extend(other.cut_by_wrap);
        for w in other.warnings {
            self.warn(w.line, w.message);
        }
        self.dropped_warnings += other.dropped_warnings;
        // The lines both runs printed alike are on both sides: the GPUs of one side, the other's if it has none.
        if self.discovered_gpus.is_empty() {
            self.discovered_gpus = other.discovered_gpus;
        }
        self.captures.extend(other.captures);
        self.error = self.error.take().or(other.error);
    }

    /// Record a warning (at most [`MAX_WARNINGS`] are kept; the rest are counted).
    pub fn warn(&mut self, line: Option<u64>, message: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(InputWarning { line, message });
        } else {
            self.dropped_warnings += 1;
        }
    }

    /// The input is read: say how many warnings were not kept.
    pub fn close_warnings(&mut self) {
        if self.dropped_warnings > 0 {
            self.warnings.push(InputWarning {
                line: None,
                message: format!("{} more warnings not listed", self.dropped_warnings),
            });
            self.dropped_warnings = 0;
        }
    }
}

/// Everything read from a set of inputs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    pub inputs: Vec<InputSummary>,
    pub loads: Vec<Concluded>,
}
