//! Reporters: an [`Analysis`] in, bytes out. One reporter per file behind the [`Reporter`] trait (as in
//! hyperfine's `src/export/`); none of them does I/O, so the caller decides where the bytes go.

pub mod json;
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
}

/// Options every reporter may use.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportOptions {
    /// List the unrecognised memory lines.
    pub show_unrecognized: bool,
}

/// The reporter for a format.
pub fn reporter(format: Format, options: ReportOptions) -> Box<dyn Reporter> {
    match format {
        Format::Text => Box::new(text::TextReporter { options }),
        Format::Json => Box::new(json::JsonReporter),
    }
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
