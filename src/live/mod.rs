//! The follow loop of `vramdiff --follow`: a [`Follow`] source read through the one pipeline
//! ([`Pipeline::stream`]); as each load completes, what the machine shows at that moment is observed (a GPU
//! capture, [`capture`]; Ollama's `/api/ps`, [`ollama`]) and handed to the pipeline, which reconciles the load
//! with it; the load's report is written and flushed at once.
//! Nothing is kept between loads, so a follow can run for days. The command that starts it (its checks, its
//! signals) is `commands::follow`; this module takes clap-free [`Settings`].
//!
//! It ends quietly (exit 0) on a stop (Ctrl-C or SIGTERM, after the line being read) or when stdout is closed;
//! with 1 at the first finding at `--fail-on`'s severity, after that load's report; when standard input ends.

pub mod bounded;
pub mod capture;
pub mod metrics;
pub mod ollama;
pub mod serve;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::model::{Concluded, InputWarning, Load, Severity};
use crate::pipeline::{LoadSink, Pipeline};
use crate::reconcile::observations::{Moment, Series};
use crate::report::{self, Format};
use crate::source::follow::Follow;

use capture::{Capturer, Tool};
use ollama::PsClient;

/// What a follow writes and observes.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Any format but JUnit (one document per run).
    pub format: Format,
    /// Stop with 1 at the first finding of this severity or above.
    pub fail_on: Option<Severity>,
    /// `--capture`: the GPU monitor run when a load completes.
    pub capture: Option<Tool>,
    /// `--ollama`: the server whose `/api/ps` is read when a load completes.
    pub ollama: Option<String>,
    /// `--serve`: where `/metrics` and `/loads` are answered while following.
    pub serve: Option<String>,
    /// Paint the text report's severities and verdicts (`--color`).
    pub color: bool,
}

/// Where the follow writes: the report for stdout, messages for stderr, each as it happens.
pub struct Terminal<'t> {
    pub stdout: &'t mut dyn Write,
    pub message: &'t mut dyn FnMut(String),
}

/// How a follow ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// 0, 1 (a finding at `fail_on`), 2 (the report could not be written, the input could not be read).
    pub code: u8,
    /// The read error that ended it, when one did (not yet said on the terminal).
    pub error: Option<String>,
}

/// Follow `path` (`-`: standard input) through `pipeline`, writing each load's report to `terminal` as it
/// completes, until `stop` is set, stdout closes, `fail_on` is reached or standard input ends.
pub fn follow(
    pipeline: &mut Pipeline,
    path: &str,
    settings: &Settings,
    terminal: Terminal<'_>,
    stop: Arc<AtomicBool>,
) -> Ended {
    let Terminal { stdout, message } = terminal;
    let metrics = match &settings.serve {
        Some(addr) => {
            let metrics = Arc::new(std::sync::Mutex::new(metrics::Metrics::default()));
            match serve::address(addr).and_then(|a| serve::start(a, Arc::clone(&metrics))) {
                Ok(bound) => {
                    message(format!("serving http://{bound}/metrics and /loads"));
                    Some(metrics)
                }
                Err(e) => {
                    return Ended {
                        code: 2,
                        error: Some(e),
                    }
                }
            }
        }
        None => None,
    };
    let notices = std::sync::Mutex::new(Vec::<String>::new());
    let notices = Arc::new(notices);
    let queue = Arc::clone(&notices);
    let notice = Box::new(move |text: String| {
        if let Ok(mut q) = queue.lock() {
            q.push(text);
        }
    });
    let (name, source) = if path == "-" {
        ("<stdin>", Follow::stdin(Arc::clone(&stop), notice))
    } else {
        (path, Follow::file(path, Arc::clone(&stop), notice))
    };
    let mut sink = Printer {
        format: settings.format,
        color: settings.color,
        stdout,
        message,
        notices,
        capturer: settings
            .capture
            .map(|tool| Capturer::new(tool, capture::TIMEOUT)),
        ps: settings.ollama.as_deref().map(PsClient::new),
        fail_on: settings.fail_on,
        metrics,
        stop: Arc::clone(&stop),
        index: 0,
        code: 0,
    };
    let reader = std::io::BufReader::with_capacity(256 * 1024, source);
    let summary = pipeline.stream(name, reader, &mut [], &mut sink);
    sink.pass_notices();
    match summary.error {
        Some(e) if !stop.load(Ordering::Relaxed) => Ended {
            code: 2,
            error: Some(e),
        },
        _ => Ended {
            code: sink.code,
            error: None,
        },
    }
}

/// The follow's sink: observes the machine when a load completes, prints the report, decides when to stop.
struct Printer<'t> {
    format: Format,
    color: bool,
    stdout: &'t mut dyn Write,
    message: &'t mut dyn FnMut(String),
    /// What the source noticed (rotation, truncation, a file not there yet), passed on between loads.
    notices: Arc<std::sync::Mutex<Vec<String>>>,
    capturer: Option<Capturer>,
    ps: Option<PsClient>,
    fail_on: Option<Severity>,
    /// `--serve`: each load recorded for `/metrics` and `/loads`.
    metrics: Option<Arc<std::sync::Mutex<metrics::Metrics>>>,
    stop: Arc<AtomicBool>,
    /// Loads reported so far.
    index: usize,
    code: u8,
}

impl Printer<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn pass_notices(&mut self) {
        let taken = match self.notices.lock() {
            Ok(mut q) => std::mem::take(&mut *q),
            Err(_) => Vec::new(),
        };
        for text in taken {
            (self.message)(text);
        }
    }
}

impl LoadSink for Printer<'_> {
    fn observe(&mut self, _load: &Load) -> Moment {
        let mut moment = Moment::default();
        if self.stopped() {
            return moment;
        }
        if let Some(capturer) = &mut self.capturer {
            match capturer.take() {
                Ok(snapshots) => {
                    let path = format!("{} (live)", capturer.program());
                    let note = format!("{path}: captured when this load completed (--capture)");
                    moment.capture = Some(Series {
                        path,
                        snapshots: snapshots.into(),
                        note: Some(note),
                    });
                }
                Err(Some(why)) => (self.message)(why),
                Err(None) => {}
            }
        }
        if let Some(client) = &mut self.ps {
            match client.ps() {
                Ok(listing) => moment.ps = Some(listing),
                Err(Some(why)) => (self.message)(why),
                Err(None) => {}
            }
        }
        moment
    }

    fn warned(&mut self, input: &str, warnings: &[InputWarning]) {
        for w in warnings {
            (self.message)(match w.line {
                Some(line) => format!("warning: {input}:{line}: {}", w.message),
                None => format!("warning: {input}: {}", w.message),
            });
        }
    }

    fn concluded(&mut self, load: Concluded) {
        self.pass_notices();
        // After a stop (Ctrl-C, a closed stdout, --fail-on), the load cut short at the end is not reported.
        if self.stopped() {
            return;
        }
        self.index += 1;
        if let Some(metrics) = &self.metrics {
            let line = report::json::load_line(&load);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            if let Ok(mut m) = metrics.lock() {
                m.record(&String::from_utf8_lossy(&line), now);
            }
        }
        // The format was checked when the follow began (`report::supports`).
        let mut bytes = report::render_load(self.format, self.index, &load).unwrap_or_default();
        if self.color && self.format == Format::Text {
            bytes = report::color::paint(&String::from_utf8_lossy(&bytes)).into_bytes();
        }
        match self
            .stdout
            .write_all(&bytes)
            .and_then(|_| self.stdout.flush())
        {
            Ok(()) => {}
            Err(e) => {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    (self.message)(format!("cannot write the report: {e}"));
                    self.code = 2;
                }
                self.stop.store(true, Ordering::Relaxed);
                return;
            }
        }
        if let Some(threshold) = self.fail_on {
            if let Some(f) = load.findings.iter().find(|f| f.severity >= threshold) {
                (self.message)(format!(
                    "{}: {} at --fail-on {}; stopping",
                    f.code,
                    f.severity.as_str(),
                    threshold.as_str()
                ));
                self.code = 1;
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }
}
