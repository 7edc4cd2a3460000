//! `vramdiff --follow`: the report command on a live input. A [`Follow`] source is read through the one
//! pipeline ([`Pipeline::stream`]); as each load completes, what the machine shows at that moment is attached
//! to it (a GPU capture, [`capture`]; Ollama's `/api/ps`, [`ollama`]), and its report is written and flushed
//! at once. Nothing is kept between loads, so a follow can run for days.
//!
//! It ends quietly (exit 0) on Ctrl-C or SIGTERM, after the line being read, or when stdout is closed; with 1
//! at the first finding at `--fail-on`'s severity, after that load's report; when standard input ends.

pub mod capture;
pub mod ollama;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::cli::{CaptureArg, ReportArgs};
use crate::commands::report::{format, options, severity};
use crate::model::{Concluded, InputWarning, Reconciled, Severity};
use crate::pipeline::{LoadSink, Pipeline};
use crate::reconcile::observed::attach_capture;
use crate::report::{self, Format};
use crate::source::follow::Follow;

use capture::{Capturer, Tool};
use ollama::PsClient;

/// Where the follow writes: the report for stdout, messages for stderr, each as it happens.
pub struct Terminal<'t> {
    pub stdout: &'t mut dyn Write,
    pub message: &'t mut dyn FnMut(String),
}

/// Follow the input `args` names and report each load as it completes. Returns the exit code.
pub fn follow(args: &ReportArgs, terminal: Terminal<'_>) -> u8 {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            (terminal.message)(format!("cannot catch signal {signal}: {e}"));
        }
    }
    follow_until(args, terminal, stop)
}

/// [`follow`], ended when `stop` is set.
pub fn follow_until(args: &ReportArgs, terminal: Terminal<'_>, stop: Arc<AtomicBool>) -> u8 {
    let Terminal { stdout, message } = terminal;
    let path = match args.input.files.as_slice() {
        [] => "-",
        [one] => one.as_str(),
        _ => {
            message("--follow follows one input (a file, or standard input)".to_string());
            return 2;
        }
    };
    if format(args.format) == Format::Junit {
        message(
            "--follow prints each load as it completes: --format text, markdown, json or jsonl (JUnit is one document per run)"
                .to_string(),
        );
        return 2;
    }
    let mut pipeline = match Pipeline::new(&options(&args.input, false)) {
        Ok(p) => p,
        Err(e) => {
            message(e.to_string());
            return 2;
        }
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
        format: format(args.format),
        stdout,
        message,
        notices,
        capturer: match args.capture {
            CaptureArg::NvidiaSmi => Some(Capturer::new(Tool::NvidiaSmi, capture::TIMEOUT)),
            CaptureArg::RocmSmi => Some(Capturer::new(Tool::RocmSmi, capture::TIMEOUT)),
            CaptureArg::None => None,
        },
        ps: args.ollama.as_deref().map(PsClient::new),
        fail_on: severity(args.fail_on),
        stop: Arc::clone(&stop),
        index: 0,
        code: 0,
    };
    let reader = std::io::BufReader::with_capacity(256 * 1024, source);
    let summary = pipeline.stream(name, reader, &mut [], &mut sink);
    sink.pass_notices();
    if !stop.load(Ordering::Relaxed) {
        if let Some(e) = &summary.error {
            (sink.message)(e.clone());
            return 2;
        }
    }
    sink.code
}

/// The follow's sink: attaches what is observed now, prints the report, decides when to stop.
struct Printer<'t> {
    format: Format,
    stdout: &'t mut dyn Write,
    message: &'t mut dyn FnMut(String),
    /// What the source noticed (rotation, truncation, a file not there yet), passed on between loads.
    notices: Arc<std::sync::Mutex<Vec<String>>>,
    capturer: Option<Capturer>,
    ps: Option<PsClient>,
    fail_on: Option<Severity>,
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
    fn completed(&mut self, load: &mut Reconciled) {
        if self.stopped() {
            return;
        }
        if let Some(capturer) = &mut self.capturer {
            match capturer.take() {
                Ok(snapshots) => {
                    let path = format!("{} (live)", capturer.program());
                    let note = format!("{path}: captured when this load completed (--capture)");
                    attach_capture(load, &snapshots, &path, Some(note));
                }
                Err(Some(why)) => (self.message)(why),
                Err(None) => {}
            }
        }
        if let Some(client) = &mut self.ps {
            match client.ps() {
                Ok(ps) => client.attach(&ps, load),
                Err(Some(why)) => (self.message)(why),
                Err(None) => {}
            }
        }
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
        let bytes = report::render_load(self.format, self.index, &load);
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
