//! `vramdiff doctor` (and `vramdiff` with no file on a terminal): find the server's log on this machine
//! ([`super::locate`]), observe the GPUs (nvidia-smi, else rocm-smi) and Ollama's `/api/ps` now, run the log
//! through the pipeline with those observations for its last load, and report that load — as the terminal's
//! report, or with `--issue` as a redacted Markdown block for a bug report (`report::issue`). Every command it
//! runs and the `/api/ps` request are bounded by `--timeout` ([`TIMEOUT`] by default): a hung tool is stopped,
//! named on stderr, and the report goes on with what was found.

use std::collections::BTreeSet;
use std::time::Duration;

use super::locate::{locate, Log};
use super::resolve::Doctor;
use super::Outcome;
use crate::live::capture::Capturer;
use crate::live::ollama::PsClient;
use crate::model::{Concluded, CutByWrap, Load, UnrecognizedLine};
use crate::pipeline::{LoadSink, Options, Pipeline};
use crate::reconcile::observations::{Moment, Series};
use crate::report::redact::{redact, Known};
use crate::report::{self, issue, Format};

/// How long each command doctor runs (journalctl, docker, nvidia-smi, rocm-smi) and the `/api/ps` request may
/// take by default: far beyond what a healthy tool needs, short enough that a hung one is noticed.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Keeps the last load, each observed with what was seen now.
struct LastLoad {
    now: Moment,
    count: usize,
    last: Option<Concluded>,
}

impl LoadSink for LastLoad {
    fn observe(&mut self, _load: &Load) -> Moment {
        self.now.clone()
    }

    fn concluded(&mut self, load: Concluded) {
        self.count += 1;
        self.last = Some(load);
    }
}

/// `vramdiff doctor`.
pub fn doctor(request: &Doctor) -> Outcome {
    let mut messages = Vec::new();
    if request.implicit {
        messages.push(
            "no log given and standard input is a terminal: looking for the Ollama log (vramdiff doctor; pipe a log in or name a file to read it)"
                .to_string(),
        );
    }
    let (found, tried) = locate(request.log.as_deref(), request.timeout);
    messages.extend(tried.stopped.iter().map(|t| format!("timed out: {t}")));
    let Some(found) = found else {
        messages.extend(tried.places.iter().map(|t| format!("tried {t}")));
        messages.push("no log found; name it: vramdiff doctor LOG".to_string());
        return Outcome {
            messages,
            code: 2,
            ..Outcome::default()
        };
    };
    messages.push(format!("reading {}", found.origin));
    // What the command printed is kept in a temporary file, so the evidence lines can be read again by number.
    let scratch = std::env::temp_dir().join(format!("vramdiff-doctor-{}.log", std::process::id()));
    let path = match &found.log {
        Log::File(p) => p.display().to_string(),
        Log::Printed(text) => {
            if let Err(e) = std::fs::write(&scratch, text) {
                return Outcome::error(format!("cannot keep {}: {e}", found.origin));
            }
            scratch.display().to_string()
        }
    };
    let now = observe(request, &mut messages);
    let result = run(&path, now);
    let evidence_of = |load: &Concluded| -> Vec<(u64, String)> {
        let wanted: BTreeSet<u64> = load.findings.iter().flat_map(|f| f.lines.clone()).collect();
        crate::source::excerpt::lines_at(&path, &wanted)
            .into_iter()
            .collect()
    };
    let outcome = match result {
        Err(e) => Outcome::error(e),
        Ok((_, None, _, _)) => {
            messages.push(format!("no model load in {}", found.origin));
            Outcome {
                messages,
                code: 2,
                ..Outcome::default()
            }
        }
        Ok((count, Some(load), unread, cut_by_wrap)) => {
            let stdout = if request.issue {
                let source = &load.reconciled.load.source;
                let of_load = |line: u64| (source.first_line..=source.last_line).contains(&line);
                let context = issue::IssueContext {
                    origin: found.origin.clone(),
                    observed: observed_words(&load),
                    evidence: evidence_of(&load),
                    unread: unread
                        .iter()
                        .filter(|u| of_load(u.line))
                        .map(|u| (u.line, u.text.clone()))
                        .collect(),
                    cut_by_wrap: cut_by_wrap
                        .iter()
                        .filter(|c| of_load(c.line))
                        .map(|c| (c.line, c.text.clone(), c.width))
                        .collect(),
                };
                issue::issue(count, &load, &context, &Known::this_machine()).into_bytes()
            } else if request.json {
                redacted_json(
                    &report::render_load(Format::JsonLines, count, &load).unwrap_or_default(),
                )
            } else {
                report::render_load(Format::Text, count, &load).unwrap_or_default()
            };
            messages.push(format!(
                "the last of {count} load{} in {}",
                if count == 1 { "" } else { "s" },
                found.origin
            ));
            let failed = request
                .fail_on
                .is_some_and(|t| load.findings.iter().any(|f| f.severity >= t));
            Outcome {
                stdout,
                messages,
                code: u8::from(failed),
            }
        }
    };
    if matches!(found.log, Log::Printed(_)) {
        let _ = std::fs::remove_file(&scratch);
    }
    outcome
}

/// `--format json`: the load's JSON line with every string redacted as `--issue` redacts its text (host and
/// user names, IP addresses, tokens), value by value, so the line stays valid JSON whatever a value held.
fn redacted_json(line: &[u8]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return line.to_vec();
    };
    let known = Known::this_machine();
    redact_strings(&mut value, &known);
    let mut out = serde_json::to_vec(&value).unwrap_or_default();
    out.push(b'\n');
    out
}

fn redact_strings(value: &mut serde_json::Value, known: &Known) {
    match value {
        serde_json::Value::String(text) => *text = redact(text, known).0,
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, known)),
        serde_json::Value::Object(fields) => {
            fields.values_mut().for_each(|v| redact_strings(v, known))
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// The GPUs and `/api/ps` now; each that cannot be had is said once and skipped.
fn observe(request: &Doctor, messages: &mut Vec<String>) -> Moment {
    let mut now = Moment::default();
    let mut missing = Vec::new();
    for tool in &request.capture {
        let mut capturer = Capturer::new(*tool, request.timeout);
        match capturer.take() {
            Ok(snapshots) if !snapshots.is_empty() => {
                let path = format!("{} (now)", capturer.program());
                now.capture = Some(Series {
                    note: Some(format!(
                        "{path}: captured by vramdiff doctor, not when the load completed"
                    )),
                    path,
                    snapshots: snapshots.into(),
                });
                break;
            }
            Ok(_) => missing.push(format!("{}: no GPU listed", capturer.program())),
            Err(why) => missing.push(why.unwrap_or_default()),
        }
    }
    if now.capture.is_none() && !request.capture.is_empty() {
        messages.push(format!(
            "no GPU capture ({})",
            missing
                .iter()
                .map(|m| m
                    .trim_start_matches("--capture ")
                    .split(';')
                    .next()
                    .unwrap_or(""))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if let Some(url) = &request.ollama {
        match PsClient::new(url).with_timeout(request.timeout).ps() {
            Ok(listing) => now.ps = Some(listing),
            Err(why) => messages.push(
                why.unwrap_or_default()
                    .trim_start_matches("--ollama ")
                    .split("; ")
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ),
        }
    }
    now
}

/// The log through the pipeline: the loads counted, the last one, the memory-like lines no rule understood,
/// and the lines a terminal's wrap cut inside a figure.
type Run = (
    usize,
    Option<Concluded>,
    Vec<UnrecognizedLine>,
    Vec<CutByWrap>,
);

fn run(path: &str, now: Moment) -> Result<Run, String> {
    let options = Options {
        keep_unrecognized: true,
        model_files: crate::load::model_file::ModelFiles::from_environment(
            None,
            std::env::var_os("VRAMDIFF_NO_MODEL_SEARCH").is_none(),
        ),
        ..Options::default()
    };
    let mut pipeline = Pipeline::new(&options).map_err(|e| e.to_string())?;
    let input = crate::source::open(path).map_err(|e| e.to_string())?;
    let mut sink = LastLoad {
        now,
        count: 0,
        last: None,
    };
    let summary = pipeline.stream(&input.name, input.reader, &mut [], &mut sink);
    if let Some(e) = summary.error {
        return Err(e);
    }
    Ok((
        sink.count,
        sink.last,
        summary.unrecognized,
        summary.cut_by_wrap,
    ))
}

/// What was observed of the load now, in words.
fn observed_words(load: &Concluded) -> Vec<String> {
    let mut words = Vec::new();
    let observed = &load.reconciled.observed;
    if !observed.is_empty() {
        words.push(format!(
            "{} GPU{} matched in a capture taken by doctor",
            observed.len(),
            if observed.len() == 1 { "" } else { "s" }
        ));
    }
    if load.reconciled.ollama_ps.is_some() {
        words.push("Ollama's /api/ps read by doctor".to_string());
    }
    words
}
