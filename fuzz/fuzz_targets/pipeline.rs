//! The whole pipeline on arbitrary bytes: `Pipeline::run` (framing, grammar, smi scanner, load assembly,
//! reconciliation, replay, findings), then every reporter. Invariants: no panic;
//! the JSON report is valid JSON; the text report holds no control character but newline and tab.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::model::Analysis;
use vramdiff::pipeline::{Options, Pipeline};
use vramdiff::report::{self, Format, ReportOptions};

fn pipeline() -> &'static Mutex<Pipeline> {
    static PIPELINE: OnceLock<Mutex<Pipeline>> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let options = Options {
            keep_unrecognized: true,
            ..Options::default()
        };
        Mutex::new(Pipeline::new(&options).expect("built-in grammar"))
    })
}

fuzz_target!(|data: &[u8]| {
    let report = pipeline().lock().unwrap_or_else(|e| e.into_inner()).run(
        "fuzz.log",
        vramdiff::source::decoded(std::io::Cursor::new(data.to_vec())),
        &mut [],
    );
    let analysis = Analysis {
        inputs: vec![report.summary],
        loads: report.loads,
    };
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
