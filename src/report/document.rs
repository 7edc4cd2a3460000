//! A report as a sequence of blocks, built once per command (`outline.rs` for a load and an analysis,
//! `whatif.rs`, `diff.rs`, `inspect.rs`) and written by each human-readable format through the [`Markup`]
//! trait (`text.rs`, `markdown.rs`, `html.rs`): the builder decides what is said and in which order, the format decides
//! how each block looks. Cells and values hold the raw text (log text included); each format makes it safe
//! for its medium.
//!
//! A new format implements [`Markup`] in a file of its own and is registered in `mod.rs`.

use super::chart::Chart;
use super::table::{Align, Table};
use super::tables::Section;
use super::ChartLink;

/// A report: blocks in reading order.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub blocks: Vec<Block>,
}

/// One part of a report.
#[derive(Debug, Clone)]
pub enum Block {
    /// The document's title (`vramdiff report`): a heading in a document; a terminal has no title.
    Title(String),
    /// A heading over what follows.
    Heading { level: u8, text: String },
    /// What one part of the report is about: a load, with where it was read.
    Subject(Subject),
    /// Labelled values under a subject (GPUs, settings, the estimate…).
    Facts(Vec<(String, String)>),
    /// A titled table with how each row was obtained.
    Section(Section),
    /// A table on its own; `indent` is where a terminal starts it.
    Table { table: Table, indent: usize },
    /// The placement replayed, in short: whether the estimate's own figures give the logged placement.
    Replay(ReplaySummary),
    /// What the checks found, most severe first.
    Findings(Vec<FindingItem>),
    /// Settings to try, each with its effect: `(setting, effect)`.
    Suggestions(Vec<(String, String)>),
    /// Charts written beside the report (`--chart`), linked where the format can link.
    ChartRef(Vec<ChartLink>),
    /// Charts drawn in memory, for a format that carries pictures inside itself (HTML); the others skip them.
    Figures(Vec<Chart>),
    /// Notes that qualify the subject.
    Notes(Vec<String>),
    /// A sentence on its own.
    Paragraph(String),
    /// Lines as written, each with its own indentation (the evidence of a replay, a model file's header).
    Lines(Vec<String>),
    /// A label and its value on one line (`settings changed: …`).
    Field { key: String, value: String },
    /// A short statement about the subject (`only in the old run`).
    Remark(String),
    /// A titled list of short items (`findings appeared: …`).
    List { title: String, items: Vec<String> },
    /// A titled sequence of steps, in order, each with the log lines it rests on (Ollama's chain of decisions).
    Steps(Steps),
    /// `whatif --max-ctx`: the largest context per KV type under a headline, and what it assumes.
    Limits(Limits),
    /// What a comparison compares, with its counts.
    Comparison(Comparison),
    /// One compared pair (a load of each run) and where each side was read.
    Compared(Compared),
    /// A subject's regressions: Markdown states them first, a terminal last (at [`Block::End`]).
    Regressions(Vec<String>),
    /// The outcome of a whole comparison.
    Verdict(String),
    /// The inputs read and what each gave.
    Inputs(Vec<InputItem>),
    /// The pause between parts of one subject: a blank line on a terminal.
    Gap,
    /// The end of one subject's part.
    End,
    /// Blocks written as a terminal shows them, inside any format (a replay's detail).
    Preformatted(Vec<Block>),
    /// Blocks written as a terminal shows them, fenced as a code block where the format has one.
    Fenced(Vec<Block>),
}

/// The heading of a subject: `label` (`Load 2`), its `name` (the model), where it was read, qualifiers.
#[derive(Debug, Clone)]
pub struct Subject {
    pub label: String,
    pub name: Option<String>,
    /// The input and the line range the subject was read from.
    pub source: (String, u64, u64),
    /// Short qualifiers (`engine ollama`, `Ollama 0.6.2`).
    pub tags: Vec<String>,
}

/// An ordered sequence of steps under a title.
#[derive(Debug, Clone)]
pub struct Steps {
    pub title: String,
    pub items: Vec<Step>,
}

/// One step: a short label, what happened, and the lines that say so.
#[derive(Debug, Clone)]
pub struct Step {
    pub label: String,
    pub text: String,
    pub lines: Vec<u64>,
}

/// The short form of a replay (see `whatif.rs` for the words).
#[derive(Debug, Clone)]
pub struct ReplaySummary {
    /// With the estimate's figures: the split, the layers on GPUs out of all, and how it compares with the
    /// log (in the terminal's words; Markdown names split and allocations only).
    pub estimate: Option<EstimateSummary>,
    /// With the measured figures: the verdict.
    pub measured: Option<String>,
}

#[derive(Debug, Clone)]
pub struct EstimateSummary {
    pub split: String,
    pub offloaded: i64,
    pub total: i64,
    pub agreements: String,
    pub split_agrees: Option<bool>,
    pub allocations_agree: Option<bool>,
    /// When the logged split is reproduced: the estimator family whose rules did it and the decision the split
    /// hung on, with its margin (`ollama37-241a0340: the last layer missed CUDA1 by …`).
    pub explained: Option<String>,
}

/// One finding as the report shows it.
#[derive(Debug, Clone)]
pub struct FindingItem {
    pub severity: &'static str,
    pub code: String,
    pub message: String,
    /// The devices, components and log lines it is about (may be empty).
    pub refs: String,
    pub hint: String,
    /// The log lines it rests on as written (`(line, text)`), when the command read them again
    /// ([`super::ReportOptions::evidence`]); the formats that quote evidence show them.
    pub evidence: Vec<(u64, String)>,
}

/// `whatif --max-ctx`'s table and what it assumes.
#[derive(Debug, Clone)]
pub struct Limits {
    pub headline: String,
    pub table: Table,
    pub assumptions: Vec<String>,
}

/// The two runs compared and the counts.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub title: String,
    pub old: String,
    pub new: String,
    pub summary: String,
}

/// One compared pair: its number, its label and where each side starts (`–` for a missing side).
#[derive(Debug, Clone)]
pub struct Compared {
    pub index: usize,
    pub label: String,
    pub old: String,
    pub new: String,
}

/// One input of an analysis.
#[derive(Debug, Clone)]
pub struct InputItem {
    pub path: String,
    pub lines: u64,
    pub recognized: u64,
    pub unrecognized_memory: u64,
    pub loads: usize,
    /// The captures listed (at most `LISTED_CAPTURES` in `outline.rs`) and how many there are in all.
    pub captures: Vec<CaptureItem>,
    pub all_captures: usize,
    pub error: Option<String>,
    /// `(line, message)`.
    pub warnings: Vec<(Option<u64>, String)>,
    /// The unrecognised memory lines, when `--show-unrecognized` asked for them: `(line, text)`.
    pub unrecognized: Option<Vec<(u64, String)>>,
    /// The lines a terminal's wrap cut inside a figure, not read: `(line, text, notice)`, always listed.
    pub cut_by_wrap: Vec<(u64, String, String)>,
}

/// The inputs as one table (a row per input: lines, recognised, memory-like lines not understood, loads,
/// captures), the same in every layout that draws tables.
pub fn inputs_table(inputs: &[InputItem]) -> Table {
    let mut table = Table::new(&[
        ("input", Align::Left),
        ("lines", Align::Right),
        ("recognised", Align::Right),
        ("memory-like, not understood", Align::Right),
        ("loads", Align::Right),
        ("captures", Align::Right),
    ]);
    for input in inputs {
        table.push(vec![
            input.path.clone(),
            input.lines.to_string(),
            input.recognized.to_string(),
            input.unrecognized_memory.to_string(),
            input.loads.to_string(),
            input.all_captures.to_string(),
        ]);
    }
    table
}

/// One `nvidia-smi` (or `rocm-smi`) capture of an input.
#[derive(Debug, Clone)]
pub struct CaptureItem {
    pub line: u64,
    pub format: &'static str,
    pub timestamp: Option<String>,
    pub driver: Option<String>,
    pub table: Table,
}

/// How one format writes each block. The walk is [`Document::render`]; a format holds whatever state its
/// layout needs between blocks.
pub trait Markup {
    /// What comes before the first block (a document's head); most layouts have none.
    fn begin(&mut self, _out: &mut String, _document: &Document) {}
    /// What comes after the last block (closing what `begin` opened); most layouts have none.
    fn finish(&mut self, _out: &mut String) {}
    fn title(&mut self, out: &mut String, text: &str);
    fn heading(&mut self, out: &mut String, level: u8, text: &str);
    fn subject(&mut self, out: &mut String, subject: &Subject);
    fn facts(&mut self, out: &mut String, facts: &[(String, String)]);
    fn section(&mut self, out: &mut String, section: &Section);
    fn table(&mut self, out: &mut String, table: &Table, indent: usize);
    fn replay(&mut self, out: &mut String, replay: &ReplaySummary);
    fn findings(&mut self, out: &mut String, findings: &[FindingItem]);
    fn suggestions(&mut self, out: &mut String, suggestions: &[(String, String)]);
    fn chart_ref(&mut self, out: &mut String, charts: &[ChartLink]);
    fn figures(&mut self, out: &mut String, charts: &[Chart]);
    fn notes(&mut self, out: &mut String, notes: &[String]);
    fn paragraph(&mut self, out: &mut String, text: &str);
    fn lines(&mut self, out: &mut String, lines: &[String]);
    fn field(&mut self, out: &mut String, key: &str, value: &str);
    fn remark(&mut self, out: &mut String, text: &str);
    fn list(&mut self, out: &mut String, title: &str, items: &[String]);
    fn steps(&mut self, out: &mut String, steps: &Steps);
    fn limits(&mut self, out: &mut String, limits: &Limits);
    fn comparison(&mut self, out: &mut String, comparison: &Comparison);
    fn compared(&mut self, out: &mut String, compared: &Compared);
    fn regressions(&mut self, out: &mut String, regressions: &[String]);
    fn verdict(&mut self, out: &mut String, text: &str);
    fn inputs(&mut self, out: &mut String, inputs: &[InputItem]);
    fn gap(&mut self, out: &mut String);
    fn end(&mut self, out: &mut String);
    /// `body` is the terminal's rendering of the blocks.
    fn preformatted(&mut self, out: &mut String, body: &str);
    /// `body` is the terminal's rendering of the blocks.
    fn fenced(&mut self, out: &mut String, body: &str);
}

/// A step's lines in words (`line 12`, `lines 3, 9, 14`), empty when it has none.
pub fn step_lines(lines: &[u64]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!("line {one}"),
        many => format!(
            "lines {}",
            many.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Document {
    pub fn new() -> Self {
        Document::default()
    }

    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }

    /// The document in one format.
    pub fn render(&self, markup: &mut dyn Markup) -> String {
        let mut out = String::new();
        markup.begin(&mut out, self);
        render_blocks(&self.blocks, markup, &mut out);
        markup.finish(&mut out);
        out
    }
}

/// The blocks of `document` appended to `out` without `begin` and `finish`: a document written in parts
/// (`report::streamed`, for layouts that have neither) is the concatenation of its parts.
pub fn render_part(document: &Document, markup: &mut dyn Markup, out: &mut String) {
    render_blocks(&document.blocks, markup, out);
}

/// Blocks as a terminal shows them.
pub fn plain(blocks: &[Block]) -> String {
    let mut out = String::new();
    render_blocks(blocks, &mut super::text::Text::default(), &mut out);
    out
}

fn render_blocks(blocks: &[Block], m: &mut dyn Markup, out: &mut String) {
    for block in blocks {
        match block {
            Block::Title(text) => m.title(out, text),
            Block::Heading { level, text } => m.heading(out, *level, text),
            Block::Subject(s) => m.subject(out, s),
            Block::Facts(facts) => m.facts(out, facts),
            Block::Section(s) => m.section(out, s),
            Block::Table { table, indent } => m.table(out, table, *indent),
            Block::Replay(r) => m.replay(out, r),
            Block::Findings(f) => m.findings(out, f),
            Block::Suggestions(s) => m.suggestions(out, s),
            Block::ChartRef(c) => m.chart_ref(out, c),
            Block::Figures(c) => m.figures(out, c),
            Block::Notes(n) => m.notes(out, n),
            Block::Paragraph(text) => m.paragraph(out, text),
            Block::Lines(lines) => m.lines(out, lines),
            Block::Field { key, value } => m.field(out, key, value),
            Block::Remark(text) => m.remark(out, text),
            Block::List { title, items } => m.list(out, title, items),
            Block::Steps(s) => m.steps(out, s),
            Block::Limits(l) => m.limits(out, l),
            Block::Comparison(c) => m.comparison(out, c),
            Block::Compared(c) => m.compared(out, c),
            Block::Regressions(r) => m.regressions(out, r),
            Block::Verdict(text) => m.verdict(out, text),
            Block::Inputs(inputs) => m.inputs(out, inputs),
            Block::Gap => m.gap(out),
            Block::End => m.end(out),
            Block::Preformatted(inner) => m.preformatted(out, &plain(inner)),
            Block::Fenced(inner) => m.fenced(out, &plain(inner)),
        }
    }
}
