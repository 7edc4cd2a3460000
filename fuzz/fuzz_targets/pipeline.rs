//! The whole pipeline on arbitrary bytes: `app::analyze_stream` (framing, grammar, smi scanner, load
//! assembly, reconciliation), the findings and replay stages, then every reporter. Invariants: no panic;
//! the JSON report is valid JSON; the text report holds no control character but newline and tab.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::app::{self, Options};
use vramdiff::model::Analysis;
use vramdiff::parse::Parser;
use vramdiff::report::{self, Format, ReportOptions};

fn parser() -> &'static Mutex<Parser> {
    static PARSER: OnceLock<Mutex<Parser>> = OnceLock::new();
    PARSER.get_or_init(|| Mutex::new(app::parser(&Options::default()).expect("built-in grammar")))
}

fuzz_target!(|data: &[u8]| {
    let options = Options {
        keep_unrecognized: true,
        ..Options::default()
    };
    let mut analysis = Analysis::default();
    let summary = {
        let mut parser = parser().lock().unwrap_or_else(|e| e.into_inner());
        app::analyze_stream(
            "fuzz.log",
            vramdiff::source::decoded(std::io::Cursor::new(data.to_vec())),
            &mut parser,
            &options,
            &mut analysis.loads,
        )
    };
    analysis.inputs.push(summary);
    for load in &mut analysis.loads {
        app::conclude(load, &options.checks);
    }
    let json = report::reporter(Format::Json, ReportOptions::default()).render(&analysis);
    serde_json::from_slice::<serde_json::Value>(&json).expect("the JSON report is JSON");
    let markdown = report::reporter(Format::Markdown, ReportOptions::default()).render(&analysis);
    let markdown = String::from_utf8(markdown).expect("the Markdown report is UTF-8");
    assert!(
        !markdown
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "control character in the Markdown report"
    );
    for show_unrecognized in [false, true] {
        let options = ReportOptions {
            show_unrecognized,
            ..ReportOptions::default()
        };
        let text = report::reporter(Format::Text, options).render(&analysis);
        let text = String::from_utf8(text).expect("the text report is UTF-8");
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "control character in the text report"
        );
    }
});
