//! JUnit XML, the report format GitLab, Jenkins, Azure DevOps and most CI servers read: one `<testsuite>` per
//! input log, one `<testcase>` per load (named by model and settings), one `<failure>` per finding at or above
//! the `--fail-on` severity, carrying its message, hint and the log lines it rests on (`PATH:LINE`). `diff`
//! gives one suite for the comparison, a case per load and a failure per regression.
//!
//! Text from a log reaches the XML only through quick-xml's escaping, after [`xml_text`] has replaced what XML
//! 1.0 cannot carry at all (control characters other than tab and newline, U+FFFE/U+FFFF) and the
//! bidirectional overrides. No timestamps or durations: the same input gives the same bytes.

use std::io;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::diff::Diff;
use crate::diff::MatchKey;
use crate::model::{Analysis, Concluded, Finding, InputRole, InputSummary, Severity};

/// A failed check inside a test case.
#[derive(Debug, Clone)]
pub struct Failure {
    /// One line: `code: message`.
    pub message: String,
    /// The severity (`warning`) or kind (`regression`).
    pub kind: String,
    /// The details: message, hint, log lines.
    pub body: String,
}

/// One test case: a load.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub classname: String,
    pub failures: Vec<Failure>,
    /// Shown beside the case (the replay's summary for `whatif`).
    pub system_out: Option<String>,
}

/// One test suite: an input.
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
    /// The input could not be read.
    pub error: Option<String>,
    /// The suite's `<properties>`: facts about the input that are no test (the memory-like lines no rule
    /// understood), as `(name, value)`.
    pub properties: Vec<(String, String)>,
}

/// Text that XML 1.0 can carry: forbidden characters (controls other than tab and newline, the
/// non-characters U+FFFE and U+FFFF) and the bidirectional overrides become `?`.
pub fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            let forbidden = (c.is_control() && c != '\t' && c != '\n')
                || c == '\u{fffe}'
                || c == '\u{ffff}'
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c);
            if forbidden {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// The suites as a JUnit document.
pub fn write(suites: &[Suite]) -> Vec<u8> {
    render(suites).unwrap_or_else(|e| format!("<!-- error: {e} -->\n").into_bytes())
}

fn render(suites: &[Suite]) -> io::Result<Vec<u8>> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let count = |f: &dyn Fn(&Suite) -> usize| suites.iter().map(f).sum::<usize>().to_string();
    let tests = count(&|s| s.cases.len());
    let failures = count(&|s| s.cases.iter().filter(|c| !c.failures.is_empty()).count());
    let errors = count(&|s| usize::from(s.error.is_some()));
    w.create_element("testsuites")
        .with_attribute(("name", "vramdiff"))
        .with_attribute(("tests", tests.as_str()))
        .with_attribute(("failures", failures.as_str()))
        .with_attribute(("errors", errors.as_str()))
        .write_inner_content(|w| {
            for s in suites {
                suite(w, s)?;
            }
            Ok(())
        })?;
    let mut out = w.into_inner();
    out.push(b'\n');
    Ok(out)
}

fn suite(w: &mut Writer<Vec<u8>>, s: &Suite) -> io::Result<()> {
    let name = xml_text(&s.name);
    let tests = s.cases.len().to_string();
    let failures = s
        .cases
        .iter()
        .filter(|c| !c.failures.is_empty())
        .count()
        .to_string();
    let errors = usize::from(s.error.is_some()).to_string();
    w.create_element("testsuite")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("tests", tests.as_str()))
        .with_attribute(("failures", failures.as_str()))
        .with_attribute(("errors", errors.as_str()))
        .with_attribute(("skipped", "0"))
        .write_inner_content(|w| {
            if !s.properties.is_empty() {
                w.create_element("properties").write_inner_content(|w| {
                    for (name, value) in &s.properties {
                        let (name, value) = (xml_text(name), xml_text(value));
                        w.create_element("property")
                            .with_attribute(("name", name.as_str()))
                            .with_attribute(("value", value.as_str()))
                            .write_empty()?;
                    }
                    Ok(())
                })?;
            }
            if let Some(e) = &s.error {
                let e = xml_text(e);
                w.create_element("error")
                    .with_attribute(("message", e.as_str()))
                    .with_attribute(("type", "input"))
                    .write_text_content(BytesText::new(&e))?;
            }
            for c in &s.cases {
                case(w, c)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn case(w: &mut Writer<Vec<u8>>, c: &Case) -> io::Result<()> {
    let (name, classname) = (xml_text(&c.name), xml_text(&c.classname));
    let element = w
        .create_element("testcase")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("classname", classname.as_str()));
    if c.failures.is_empty() && c.system_out.is_none() {
        element.write_empty()?;
        return Ok(());
    }
    element.write_inner_content(|w| {
        for f in &c.failures {
            let (message, body) = (xml_text(&f.message), xml_text(&f.body));
            w.create_element("failure")
                .with_attribute(("message", message.as_str()))
                .with_attribute(("type", f.kind.as_str()))
                .write_text_content(BytesText::new(&body))?;
        }
        if let Some(text) = &c.system_out {
            w.create_element("system-out")
                .write_text_content(BytesText::new(&xml_text(text)))?;
        }
        Ok(())
    })?;
    Ok(())
}

/// A load's test case name: model and settings, then where it starts (two loads of one model stay apart).
pub fn case_name(load: &Concluded) -> String {
    format!(
        "{} (line {})",
        MatchKey::of(load).label(),
        load.reconciled.load.source.first_line
    )
}

/// A finding of the log at `path` as a JUnit failure: its code and message, hint and log lines.
pub fn finding_failure(path: &str, f: &Finding) -> Failure {
    let refs: Vec<String> = f.lines.iter().map(|l| format!("{path}:{l}")).collect();
    Failure {
        message: format!("{}: {}", f.code, f.message),
        kind: f.severity.as_str().to_string(),
        body: format!(
            "{} ({}): {}\nhint: {}\nlog lines: {}\n",
            f.code,
            f.severity.as_str(),
            f.message,
            f.hint,
            if refs.is_empty() {
                "none".to_string()
            } else {
                refs.join(" ")
            }
        ),
    }
}

/// A load's case: a failure per finding at or above `threshold` (`None`: no failures).
fn load_case(load: &Concluded, threshold: Option<Severity>) -> Case {
    let path = &load.reconciled.load.source.path;
    let failures = load
        .findings
        .iter()
        .filter(|f| threshold.is_some_and(|t| f.severity >= t))
        .map(|f| finding_failure(path, f))
        .collect();
    Case {
        name: case_name(load),
        classname: format!("vramdiff.{path}"),
        failures,
        system_out: None,
    }
}

/// The properties of an input's suite: the count of memory-like lines no rule understood, and of lines a
/// terminal's wrap cut inside a figure where there are any, so what was not read is visible in CI too
/// (issue 52; the JSON report lists them).
pub fn input_properties(input: &InputSummary) -> Vec<(String, String)> {
    let mut properties = vec![(
        "unrecognized_memory_lines".to_string(),
        input.unrecognized_memory_lines.to_string(),
    )];
    if !input.cut_by_wrap.is_empty() {
        properties.push((
            "lines_cut_by_wrap".to_string(),
            input.cut_by_wrap.len().to_string(),
        ));
    }
    properties
}

/// A suite per log input with a case per load of it. `system_out` adds text to each load's case.
pub fn analysis_suites(
    analysis: &Analysis,
    threshold: Option<Severity>,
    system_out: &dyn Fn(&Concluded) -> Option<String>,
) -> Vec<Suite> {
    analysis
        .inputs
        .iter()
        .filter(|i| i.role == InputRole::Log)
        .map(|input| Suite {
            name: input.path.clone(),
            cases: analysis
                .loads
                .iter()
                .filter(|l| l.reconciled.load.source.path == input.path)
                .map(|l| Case {
                    system_out: system_out(l),
                    ..load_case(l, threshold)
                })
                .collect(),
            error: input.error.clone(),
            properties: input_properties(input),
        })
        .collect()
}

/// `diff` as JUnit: one suite (old → new), a case per load, a failure per regression.
pub fn diff(diff: &Diff) -> Vec<u8> {
    let cases = diff
        .loads
        .iter()
        .map(|l| {
            let at = l.new.as_ref().or(l.old.as_ref());
            Case {
                name: format!(
                    "{} (line {})",
                    l.label,
                    at.map(|s| s.first_line).unwrap_or(0)
                ),
                classname: format!("vramdiff.diff.{}", diff.new),
                failures: l
                    .regressions
                    .iter()
                    .map(|r| Failure {
                        message: r.clone(),
                        kind: "regression".to_string(),
                        body: format!("{r}\nold: {}\nnew: {}\n", diff.old, diff.new),
                    })
                    .collect(),
                system_out: None,
            }
        })
        .collect();
    write(&[Suite {
        name: format!("{} → {}", diff.old, diff.new),
        cases,
        error: None,
        properties: Vec::new(),
    }])
}
