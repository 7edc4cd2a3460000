//! `--format html` through the real binary, read back with a real HTML parser (`scraper`, html5ever): one
//! self-contained document (no script, no external URL, every picture a PNG `data:` URI), the load's tables,
//! findings with the log lines they rest on, and log text that never becomes markup.

use scraper::{Html, Selector};

use crate::util::{root, run, scratch, stderr, stdout};

const FOUNDING_K80: &str = "sample-logs/founding-k80-gemma3-12b.log";
const FOUNDING_K80_SMI: &str = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt";
const FOUNDING_TODAY: &str = "sample-logs/founding-today-3090-4060-gemma4-31b.log";

fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn html_of(args: &[&str]) -> String {
    let mut all = vec!["--format", "html", "--fail-on", "never"];
    all.extend_from_slice(args);
    let out = run(&all, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .expect("base64 character") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// What every HTML report must be: one parsed document with no script, nothing to fetch, and no URL.
fn assert_self_contained(html: &str) -> Html {
    let doc = Html::parse_document(html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "an external URL in the report"
    );
    assert!(select(&doc, "script").is_empty(), "a script element");
    assert!(select(&doc, "link, iframe, object, embed, base").is_empty());
    assert_eq!(select(&doc, "head > style").len(), 1);
    assert!(html.contains("prefers-color-scheme:dark"));
    for element in doc
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
    {
        for (name, _) in element.value().attrs() {
            assert!(!name.starts_with("on"), "an event handler attribute {name}");
        }
    }
    for img in select(&doc, "img") {
        let src = img.value().attr("src").unwrap();
        let data = src
            .strip_prefix("data:image/png;base64,")
            .unwrap_or_else(|| panic!("a picture that is not an embedded PNG: {src:.60}"));
        assert_eq!(png_size(&base64_decode(data)), (1000, 600));
        assert!(!img.value().attr("alt").unwrap_or_default().is_empty());
    }
    doc
}

#[test]
fn the_founding_case_as_one_self_contained_page_with_tables_findings_and_charts() {
    let html = html_of(&[FOUNDING_K80, "--smi", FOUNDING_K80_SMI]);
    let doc = assert_self_contained(&html);
    assert_eq!(
        select(&doc, "title")[0].text().collect::<String>(),
        "vramdiff report"
    );
    let headings: Vec<String> = select(&doc, "section.subject h3")
        .iter()
        .map(|h| h.text().collect())
        .collect();
    for wanted in [
        "Components",
        "Devices",
        "Observed (nvidia-smi)",
        "Findings",
        "Try",
        "Charts",
    ] {
        assert!(
            headings.iter().any(|h| h == wanted),
            "{wanted}: {headings:?}"
        );
    }
    // The devices table, cell by cell, as the text report gives it.
    let cells: Vec<Vec<String>> = select(&doc, "section.subject table")[1]
        .select(&Selector::parse("tbody tr").unwrap())
        .map(|tr| {
            tr.select(&Selector::parse("td").unwrap())
                .map(|td| td.text().collect())
                .collect()
        })
        .collect();
    // The estimate as the runner's mapping reads it (the last-layer bucket's weights on CUDA1, where the
    // runner ran them: docs/founding-cases.md).
    assert_eq!(cells[0][..3], ["CUDA0", "1.75 GiB", "222.5 MiB"]);
    assert_eq!(cells[1][..3], ["CUDA1", "10.15 GiB", "8.50 GiB"]);
    // Both charts, embedded.
    assert_eq!(select(&doc, "figure img").len(), 2);
    // Each finding folds the log lines it rests on, quoted from the log.
    let findings = select(&doc, "ul.findings > li");
    assert_eq!(findings.len(), 5);
    let needless = findings[0].text().collect::<String>();
    assert!(needless.contains("needless-split"), "{needless}");
    let evidence: String = findings[0]
        .select(&Selector::parse("details pre").unwrap())
        .flat_map(|p| p.text())
        .collect();
    assert!(
        evidence.contains("29: time=2025-07-20T09:43:28.905+08:00 level=INFO source=ggml.go:377 msg=\"model weights\" buffer=CUDA0 size=\"136.7 MiB\""),
        "{evidence}"
    );
    assert_eq!(evidence.lines().count(), 5, "{evidence}");
    let severities: Vec<String> = select(&doc, "ul.findings .sev")
        .iter()
        .map(|s| s.text().collect())
        .collect();
    assert_eq!(severities[..2], ["warning", "warning"]);
}

#[test]
fn the_founding_today_case_and_whatif_and_diff_parse_as_html() {
    let html = html_of(&[FOUNDING_TODAY]);
    let doc = assert_self_contained(&html);
    assert!(!select(&doc, "figure img").is_empty());
    assert!(!select(&doc, "ul.findings > li").is_empty());

    let out = run(&["whatif", "--format", "html", FOUNDING_K80], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = assert_self_contained(&stdout(&out));
    let pre: String = select(&doc, "pre").iter().flat_map(|p| p.text()).collect();
    assert!(pre.contains("Load 1"), "{pre}");

    let new = "tests/fixtures/founding-k80-gemma3-12b-cuda1-weights-plus-1gib.log";
    let out = run(&["diff", "--format", "html", FOUNDING_K80, new], b"");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&out)
    );
    let doc = assert_self_contained(&stdout(&out));
    assert_eq!(
        select(&doc, "title")[0].text().collect::<String>(),
        "vramdiff diff"
    );
    let text: String = doc.root_element().text().collect();
    assert!(text.contains("REGRESSION"), "{text}");
}

#[test]
fn follow_refuses_html_naming_the_formats_it_writes() {
    let out = run(&["-f", "--format", "html", FOUNDING_K80], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("an HTML file is one document per run"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn hostile_log_text_stays_text() {
    const SCRIPT: &str = "<script>alert(1)</script>";
    const BREAKOUT: &str = "\"><img src=x onerror=alert(2)>";
    let log = std::fs::read_to_string(root().join(FOUNDING_K80)).unwrap();
    let mut hostile = String::new();
    for (i, line) in log.lines().enumerate() {
        let line = line.replace(
            "architecture=gemma3",
            &format!("architecture=gemma3{SCRIPT}"),
        );
        hostile.push_str(&line);
        // Line 29 is evidence of a finding: its quoted text carries both payloads.
        if i + 1 == 29 {
            hostile.push_str(&format!(" note=\"{SCRIPT}{BREAKOUT}\""));
        }
        hostile.push('\n');
    }
    hostile.push_str(&format!("ggml_backend_cuda_buffer_type_alloc_buffer: weird {BREAKOUT}{SCRIPT} buffer size = 12.0 MiB\n"));
    let dir = scratch("html-hostile");
    let path = dir.join(format!("a{BREAKOUT}.log").replace(['/', '"'], "_"));
    std::fs::write(&path, hostile).unwrap();
    let html = html_of(&["--show-unrecognized", path.to_str().unwrap()]);
    let doc = assert_self_contained(&html);
    assert!(
        !html.contains(SCRIPT) && !html.contains("<img src=x"),
        "raw payload in the HTML"
    );
    // Every picture is one of ours.
    assert!(select(&doc, "img")
        .iter()
        .all(|i| i.value().attr("onerror").is_none()));
    // The payloads are there, as text: in the title of the load, the quoted evidence and the unread lines.
    let heading: String = select(&doc, "section.subject h2")[0].text().collect();
    assert!(heading.contains(SCRIPT), "{heading}");
    let evidence: String = select(&doc, "ul.findings details pre")
        .iter()
        .flat_map(|p| p.text())
        .collect();
    assert!(
        evidence.contains(&format!("{SCRIPT}{BREAKOUT}")),
        "{evidence}"
    );
    let all: String = doc.root_element().text().collect();
    assert!(
        all.contains(&format!("weird {BREAKOUT}{SCRIPT}")),
        "the unrecognised line as text"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "batch")]
#[test]
fn batch_writes_its_summary_as_one_self_contained_page() {
    let dir = scratch("html-batch");
    let page = dir.join("summary.html");
    let out = run(
        &["batch", "sample-logs", "--html", page.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("wrote "), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = Html::parse_document(&html);
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(select(&doc, "script").is_empty());
    assert_eq!(
        select(&doc, "title")[0].text().collect::<String>(),
        "vramdiff batch summary"
    );
    // The summary's tables, as tables: the first is the ratio per component.
    let first = &select(&doc, "table")[0];
    let header: Vec<String> = first
        .select(&Selector::parse("th").unwrap())
        .map(|t| t.text().collect())
        .collect();
    assert_eq!(
        header,
        ["component", "loads", "median", "p10", "p90", "worst"]
    );
    assert!(select(&doc, "table").len() >= 5);
    // The batch charts, embedded PNGs.
    let images = select(&doc, "img");
    assert!(!images.is_empty());
    for img in images {
        let src = img.value().attr("src").unwrap();
        let data = src.strip_prefix("data:image/png;base64,").unwrap();
        assert_eq!(&base64_decode(data)[..8], b"\x89PNG\r\n\x1a\n");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
