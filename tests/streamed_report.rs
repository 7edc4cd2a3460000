//! The report written load by load (`report::streamed`: text, Markdown, JSON, JSONL) is byte for byte the
//! report rendered from the whole analysis, on every sample log one by one and on all of them in one run (the
//! loads numbered across inputs, each input's count of loads), with `--show-unrecognized`, and painted.

use vramdiff::commands::report::report;
use vramdiff::commands::resolve::Report;
use vramdiff::pipeline::{analyze, Options};
use vramdiff::report::{color, reporter, Format, ReportOptions};

use crate::golden::paired_capture;
use crate::util::{root, sample_names};

/// The streamed report's bytes, and the whole report's.
fn both(
    files: &[String],
    smi: Vec<String>,
    format: Format,
    show_unrecognized: bool,
    paint: bool,
) -> (Vec<u8>, Vec<u8>) {
    let options = Options {
        smi,
        keep_unrecognized: show_unrecognized,
        ..Options::default()
    };
    let request = Report {
        files: files.to_vec(),
        options: options.clone(),
        format,
        show_unrecognized,
        chart: None,
        fail_on: None,
        summary: false,
    };
    let mut streamed = Vec::new();
    let outcome = report(&request, &mut streamed, paint);
    assert!(outcome.stdout.is_empty(), "{format:?}: written as it went");
    let analysis = analyze(files, &options).unwrap();
    let mut whole = reporter(
        format,
        ReportOptions {
            show_unrecognized,
            ..ReportOptions::default()
        },
    )
    .render(&analysis);
    if paint {
        whole = color::paint(&String::from_utf8(whole).unwrap()).into_bytes();
    }
    (streamed, whole)
}

const STREAMED: [Format; 4] = [
    Format::Text,
    Format::Markdown,
    Format::Json,
    Format::JsonLines,
];

#[test]
fn every_sample_streamed_is_the_whole_report() {
    for name in sample_names() {
        let path = root().join("sample-logs").join(&name).display().to_string();
        let smi: Vec<String> = paired_capture(&name)
            .map(|c| root().join(c).display().to_string())
            .into_iter()
            .collect();
        for format in STREAMED {
            let (streamed, whole) = both(
                std::slice::from_ref(&path),
                smi.clone(),
                format,
                false,
                false,
            );
            assert!(
                !whole.is_empty() || format == Format::JsonLines,
                "{name} {format:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&streamed),
                String::from_utf8_lossy(&whole),
                "{name} {format:?}"
            );
        }
    }
}

#[test]
fn all_samples_in_one_run_streamed_are_the_whole_report() {
    let files: Vec<String> = sample_names()
        .iter()
        .map(|n| root().join("sample-logs").join(n).display().to_string())
        .collect();
    for format in STREAMED {
        for (show, paint) in [(false, false), (true, false), (false, true)] {
            if paint && format != Format::Text {
                continue;
            }
            let (streamed, whole) = both(&files, Vec::new(), format, show, paint);
            assert!(whole.len() > 100_000, "{format:?}: many loads");
            assert!(
                streamed == whole,
                "{format:?} show_unrecognized {show} paint {paint}"
            );
        }
    }
}

/// No load at all: the text says so, the JSON has an empty `loads`.
#[test]
fn an_input_without_loads_streamed_is_the_whole_report() {
    let files = vec![root().join("README.md").display().to_string()];
    for format in STREAMED {
        let (streamed, whole) = both(&files, Vec::new(), format, false, false);
        assert_eq!(
            String::from_utf8_lossy(&streamed),
            String::from_utf8_lossy(&whole),
            "{format:?}"
        );
    }
}
