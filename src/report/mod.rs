//! Reporters: what a command found in, bytes out. Each command's report is one [`document::Document`] (built
//! in `outline.rs`, `whatif.rs`, `diff.rs`, `inspect.rs`), written by each human-readable format through
//! [`document::Markup`] (`text.rs`, `markdown.rs`, `html.rs`); JSON (the serde contract, `json.rs`) and JUnit (XML,
//! `junit.rs`) are serialisers of their own. Every format is registered in one place,
//! `Format::registration`, and [`render`] is the one way in: a format a command does not write is an
//! [`UnsupportedFormat`] naming those it does. Nothing here does I/O, so the caller decides where the bytes go.

pub mod chain;
pub mod chart;
pub mod color;
pub mod diff;
pub mod document;
mod escape;
pub mod html;
pub mod html_page;
pub mod inspect;
pub mod issue;
pub mod json;
mod json_nested;
mod json_sorted;
pub mod junit;
pub mod markdown;
pub mod outline;
pub mod pair_bars;
pub mod pairs;
pub mod redact;
pub mod streamed;
pub mod table;
pub mod tables;
pub mod text;
pub mod whatif;

use crate::model::{Analysis, Concluded, Severity};
use document::Markup;
pub use escape::{html_escape, md_code, md_escape, sanitize};

/// The output formats of the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    /// One JSON object per line and per load: a `loads[]` element plus `input`.
    JsonLines,
    Junit,
    /// One self-contained HTML file: styles inline, charts embedded, no script, nothing fetched.
    Html,
}

/// Where a layout's charts go: linked files written by `--chart`, or drawn into the document itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charts {
    Linked,
    Embedded,
}

/// How a format is written: a layout of the documents, or a serialiser of its own.
enum Writer {
    Markup(fn() -> Box<dyn Markup>, Charts),
    /// The versioned JSON document of each command.
    Json,
    /// One JSON line per load where a command has loads; its JSON document elsewhere.
    JsonLines,
    /// JUnit XML: a suite per input, a case per load.
    Junit,
}

impl Format {
    /// Every format, in the order usage messages name them.
    pub const ALL: [Format; 6] = [
        Format::Text,
        Format::Markdown,
        Format::Html,
        Format::Json,
        Format::JsonLines,
        Format::Junit,
    ];

    /// The registration: each format's `--format` name and how it is written.
    fn registration(self) -> (&'static str, Writer) {
        match self {
            Format::Text => (
                "text",
                Writer::Markup(|| Box::new(text::Text::default()), Charts::Linked),
            ),
            Format::Markdown => (
                "markdown",
                Writer::Markup(|| Box::new(markdown::Markdown), Charts::Linked),
            ),
            Format::Html => (
                "html",
                Writer::Markup(|| Box::new(html::Html::default()), Charts::Embedded),
            ),
            Format::Json => ("json", Writer::Json),
            Format::JsonLines => ("jsonl", Writer::JsonLines),
            Format::Junit => ("junit", Writer::Junit),
        }
    }

    /// The `--format` value that names it.
    pub fn name(self) -> &'static str {
        self.registration().0
    }
}

/// The commands that report, each with the formats it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Report,
    Follow,
    Whatif,
    Diff,
    Inspect,
}

impl Command {
    /// What the command writes, for a usage message.
    fn purpose(self) -> &'static str {
        match self {
            Command::Report => "vramdiff reports every load",
            Command::Follow => "--follow prints each load as it completes",
            Command::Whatif => "whatif replays every load",
            Command::Diff => "diff compares two runs",
            Command::Inspect => "inspect reads a model file",
        }
    }

    /// Why the command does not write with `writer` (`None`: it does).
    fn refuses(self, writer: &Writer) -> Option<&'static str> {
        match writer {
            Writer::Markup(_, Charts::Linked) | Writer::Json | Writer::JsonLines => None,
            Writer::Markup(_, Charts::Embedded) => match self {
                Command::Follow => Some("an HTML file is one document per run"),
                Command::Report | Command::Whatif | Command::Diff | Command::Inspect => None,
            },
            Writer::Junit => match self {
                Command::Follow => Some("JUnit is one document per run"),
                Command::Inspect => Some("a model file has no findings to fail on"),
                Command::Report | Command::Whatif | Command::Diff => None,
            },
        }
    }
}

/// A format the command does not write: a usage error naming the formats it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnsupportedFormat {
    pub command: Command,
    pub format: Format,
}

impl std::fmt::Display for UnsupportedFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = Format::ALL
            .into_iter()
            .filter(|&format| supports(self.command, format).is_ok())
            .map(Format::name)
            .collect();
        let list = match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        write!(f, "{}: --format {list}", self.command.purpose())?;
        match self.command.refuses(&self.format.registration().1) {
            Some(why) => write!(f, " ({why})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for UnsupportedFormat {}

/// Whether `command` writes `format`.
pub fn supports(command: Command, format: Format) -> Result<(), UnsupportedFormat> {
    match command.refuses(&format.registration().1) {
        None => Ok(()),
        Some(_) => Err(UnsupportedFormat { command, format }),
    }
}

/// What a command reports.
#[derive(Debug, Clone, Copy)]
pub enum What<'a> {
    /// The main report of an analysis.
    Report {
        analysis: &'a Analysis,
        options: &'a ReportOptions,
    },
    /// `--follow`: one load's report as it completes, numbered `index`.
    Load { index: usize, load: &'a Concluded },
    /// `vramdiff whatif`; JUnit fails on findings at or above `fail_on`.
    Whatif {
        analysis: &'a Analysis,
        fail_on: Option<Severity>,
    },
    /// `vramdiff diff`.
    Diff(&'a crate::diff::Diff),
    /// `vramdiff inspect`.
    Inspect(inspect::Inspection<'a>),
}

impl What<'_> {
    pub fn command(&self) -> Command {
        match self {
            What::Report { .. } => Command::Report,
            What::Load { .. } => Command::Follow,
            What::Whatif { .. } => Command::Whatif,
            What::Diff(_) => Command::Diff,
            What::Inspect(_) => Command::Inspect,
        }
    }

    /// The command's document, for the human-readable formats.
    fn document(self, charts: Charts) -> document::Document {
        match self {
            What::Report { analysis, options } => outline::report(analysis, options, charts),
            What::Load { index, load } => outline::load(index, load),
            What::Whatif { analysis, .. } => whatif::document(analysis),
            What::Diff(d) => diff::document(d),
            What::Inspect(i) => inspect::document(&i),
        }
    }

    /// The command's JSON document.
    fn json(self) -> Vec<u8> {
        match self {
            What::Report { analysis, .. } => json::report(analysis),
            What::Load { load, .. } => json::load_line(load),
            What::Whatif { analysis, .. } => whatif::json(analysis),
            What::Diff(d) => diff::json(d),
            What::Inspect(i) => json::document(inspect::to_json(&i)),
        }
    }

    /// The command's JUnit document, where it has one.
    fn junit(self) -> Option<Vec<u8>> {
        match self {
            What::Report { analysis, options } => Some(junit::write(&junit::analysis_suites(
                analysis,
                options.fail_on,
                &|_| None,
            ))),
            What::Whatif { analysis, fail_on } => Some(whatif::junit(analysis, fail_on)),
            What::Diff(d) => Some(junit::diff(d)),
            What::Load { .. } | What::Inspect(_) => None,
        }
    }
}

/// A command's report in a format: the one way in.
pub fn render(what: What<'_>, format: Format) -> Result<Vec<u8>, UnsupportedFormat> {
    let unsupported = UnsupportedFormat {
        command: what.command(),
        format,
    };
    supports(unsupported.command, format)?;
    match format.registration().1 {
        Writer::Markup(new, charts) => {
            Ok(what.document(charts).render(new().as_mut()).into_bytes())
        }
        Writer::Json => Ok(what.json()),
        Writer::JsonLines => Ok(match what {
            What::Report { analysis, .. } => {
                analysis.loads.iter().flat_map(json::load_line).collect()
            }
            other => other.json(),
        }),
        Writer::Junit => what.junit().ok_or(unsupported),
    }
}

/// Turns an analysis into the bytes of one output format.
pub trait Reporter {
    fn render(&self, analysis: &Analysis) -> Vec<u8>;
}

/// A chart written beside the report, for reporters that can link it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartLink {
    /// The path as written (relative when `--chart` was relative).
    pub path: String,
    pub title: String,
}

/// Options every reporter may use.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// List the unrecognised memory lines.
    pub show_unrecognized: bool,
    /// Charts written for each load (by load index), when `--chart` was given.
    pub charts: Vec<Vec<ChartLink>>,
    /// JUnit: a failure per finding at or above this severity (`None`: no failures).
    pub fail_on: Option<crate::model::Severity>,
    /// The text of the log lines findings name, by input path and line number, when the command read them
    /// again (`source::excerpt`); empty otherwise.
    pub evidence: Evidence,
}

/// Log lines by input path and line number.
pub type Evidence = std::collections::BTreeMap<String, std::collections::BTreeMap<u64, String>>;

/// The lines every finding of `analysis` names, read again from each input (see `source::excerpt`).
pub fn read_evidence(analysis: &Analysis) -> Evidence {
    let mut wanted: std::collections::BTreeMap<&str, std::collections::BTreeSet<u64>> =
        std::collections::BTreeMap::new();
    for load in &analysis.loads {
        let path = load.reconciled.load.source.path.as_str();
        let lines = load.findings.iter().flat_map(|f| f.lines.iter().copied());
        wanted.entry(path).or_default().extend(lines);
    }
    wanted
        .into_iter()
        .map(|(path, lines)| {
            (
                path.to_string(),
                crate::source::excerpt::lines_at(path, &lines),
            )
        })
        .collect()
}

/// The main report in a format.
struct Registered {
    format: Format,
    options: ReportOptions,
}

impl Reporter for Registered {
    fn render(&self, analysis: &Analysis) -> Vec<u8> {
        let what = What::Report {
            analysis,
            options: &self.options,
        };
        // Every format writes the main report (`Command::refuses` refuses it none), so the error is not met.
        render(what, self.format).unwrap_or_else(|e| e.to_string().into_bytes())
    }
}

/// The reporter for a format (a thin wrapper over [`render`]).
pub fn reporter(format: Format, options: ReportOptions) -> Box<dyn Reporter> {
    Box::new(Registered { format, options })
}

/// One load's report on its own, numbered `index`, for `--follow`, which prints each load as it completes
/// (a thin wrapper over [`render`]; JUnit is one document per run, refused).
pub fn render_load(
    format: Format,
    index: usize,
    load: &Concluded,
) -> Result<Vec<u8>, UnsupportedFormat> {
    render(What::Load { index, load }, format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_a_command_does_not_write_is_refused_naming_those_it_does() {
        let load = Concluded::default();
        let refused = render(
            What::Load {
                index: 1,
                load: &load,
            },
            Format::Junit,
        )
        .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "--follow prints each load as it completes: --format text, markdown, json or jsonl (JUnit is one document per run)"
        );
        assert_eq!(supports(Command::Follow, Format::Junit), Err(refused));
        for command in [Command::Report, Command::Whatif, Command::Diff] {
            for format in Format::ALL {
                assert_eq!(supports(command, format), Ok(()), "{command:?} {format:?}");
            }
        }
        assert!(supports(Command::Inspect, Format::Junit).is_err());
    }

    #[test]
    fn every_format_has_its_own_name() {
        let mut names: Vec<&str> = Format::ALL.into_iter().map(Format::name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len());
    }
}
