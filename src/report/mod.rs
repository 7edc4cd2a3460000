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

/// Make text from a log safe to print: control characters (terminal escapes included) become `?`.
pub fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(|c| c.is_control() && c != '\t') {
        text.chars()
            .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
            .collect::<String>()
            .into()
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}
