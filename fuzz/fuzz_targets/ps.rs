//! Ollama's `/api/ps` reply (`src/live/ollama.rs`): arbitrary bytes as the body the server sent, read into
//! the listing (`read_reply`, `listing`), then handed to the pipeline as what was observed when each load of
//! a two-GPU sample log completed, so the reconcile stage picks the load's entry (`src/reconcile/ps.rs`), the
//! checks compare it (`ps-mismatch`) and the reporters print it. Invariants: no panic; the JSON report is JSON.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::live::ollama;
use vramdiff::model::{Analysis, Concluded, Load};
use vramdiff::pipeline::{LoadSink, Options, Pipeline};
use vramdiff::reconcile::observations::{Moment, PsListing};
use vramdiff::report::{self, Format, ReportOptions};

/// A log with one load and GPU buffers on two devices, so a listing of several models is matched by size.
const LOG: &[u8] = include_bytes!("../../sample-logs/024-multigpu-cuda0-cuda2-70b-actual.log");

fn pipeline() -> &'static Mutex<Pipeline> {
    static PIPELINE: OnceLock<Mutex<Pipeline>> = OnceLock::new();
    PIPELINE
        .get_or_init(|| Mutex::new(Pipeline::new(&Options::default()).expect("built-in grammar")))
}

struct Observed {
    ps: PsListing,
    loads: Vec<Concluded>,
}

impl LoadSink for Observed {
    fn observe(&mut self, _load: &Load) -> Moment {
        Moment {
            ps: Some(self.ps.clone()),
            ..Moment::default()
        }
    }

    fn concluded(&mut self, load: Concluded) {
        self.loads.push(load);
    }
}

fuzz_target!(|data: &[u8]| {
    let reply = match ollama::read_reply(data) {
        Ok(reply) => reply,
        Err(e) => {
            let _ = e.len();
            return;
        }
    };
    let mut sink = Observed {
        ps: ollama::listing("http://127.0.0.1:11434", reply),
        loads: Vec::new(),
    };
    let summary = pipeline().lock().unwrap_or_else(|e| e.into_inner()).stream(
        "fuzz.log",
        vramdiff::source::decoded(std::io::Cursor::new(LOG)),
        &mut [],
        &mut sink,
    );
    let analysis = Analysis {
        inputs: vec![summary],
        loads: sink.loads,
    };
    let json = report::reporter(Format::Json, ReportOptions::default()).render(&analysis);
    serde_json::from_slice::<serde_json::Value>(&json).expect("the JSON report is JSON");
    let _ = report::reporter(Format::Text, ReportOptions::default()).render(&analysis);
    let _ = report::reporter(Format::Markdown, ReportOptions::default()).render(&analysis);
});
