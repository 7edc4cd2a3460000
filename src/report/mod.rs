//! Reporters: an [`Analysis`] in, bytes out. One reporter per file behind the [`Reporter`] trait (as in
//! hyperfine's `src/export/`); none of them does I/O, so the caller decides where the bytes go.

pub mod chart;
pub mod diff;
pub mod inspect;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod table;
pub mod tables;
pub mod text;
pub mod whatif;

use crate::model::Analysis;

/// Turns an analysis into the bytes of one output format.
pub trait Reporter {
    fn render(&self, analysis: &Analysis) -> Vec<u8>;
}

/// The output formats of the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    /// One JSON object per line and per load: a `loads[]` element plus `input`.
    JsonLines,
    Junit,
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
}

/// The reporter for a format.
pub fn reporter(format: Format, options: ReportOptions) -> Box<dyn Reporter> {
    match format {
        Format::Text => Box::new(text::TextReporter { options }),
        Format::Json => Box::new(json::JsonReporter),
        Format::Junit => Box::new(junit::JunitReporter {
            threshold: options.fail_on,
        }),
        Format::Markdown => Box::new(markdown::MarkdownReporter { options }),
        Format::JsonLines => Box::new(json::JsonLinesReporter),
    }
}

/// One load's report on its own, numbered `index`, for `--follow`, which prints each load as it completes.
/// JUnit is one document per run, not a stream: `--follow` refuses it, and the text stands in here.
pub fn render_load(format: Format, index: usize, load: &crate::model::Concluded) -> Vec<u8> {
    let mut out = String::new();
    match format {
        Format::Text | Format::Junit => text::load_section(&mut out, index, load),
        Format::Markdown => markdown::load_section(&mut out, index, load, &[]),
        Format::Json | Format::JsonLines => return json::load_line(load),
    }
    out.into_bytes()
}

/// Make text from a log safe inside Markdown: control characters become `?`, line breaks a space, and every
/// character Markdown or HTML could read as markup is backslash-escaped (so a model name cannot open a link,
/// a table cell, a heading or an HTML tag).
pub fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // Parentheses, `#`, `+` and `!` only mean something at a line start or after `]`, which escaped
            // text never gives them.
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if (c.is_control() && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) =>
            {
                out.push('?')
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for a Markdown code span: control characters and backticks removed (a code span cannot be escaped).
pub fn md_code(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() || c == '`' { ' ' } else { c })
        .collect();
    format!("`{}`", clean.trim())
}

/// Make text from a log safe to print: control characters (terminal escapes, `\r`, C1 controls) and the
/// bidirectional overrides and isolates (which reorder what a terminal shows, "Trojan Source") become `?`.
pub fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    }
    if text.chars().any(unsafe_char) {
        text.chars()
            .map(|c| if unsafe_char(c) { '?' } else { c })
            .collect::<String>()
            .into()
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}
