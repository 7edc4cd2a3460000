//! `vramdiff --follow`: the report command on a live input. The command checks what it was asked, catches
//! Ctrl-C and SIGTERM, and hands the input to the follow loop ([`crate::live`]), which writes each load's report
//! to the terminal as the load completes; what is left when the loop ends (the error that ended it, the exit
//! code) is the [`Outcome`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::resolve::Follow;
use super::Outcome;
use crate::live::{self, Terminal};
use crate::pipeline::Pipeline;
use crate::report;

/// Follow the input `request` names and report each load as it completes, until Ctrl-C or SIGTERM.
pub fn follow(request: &Follow, terminal: Terminal<'_>) -> Outcome {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            (terminal.message)(format!("cannot catch signal {signal}: {e}"));
        }
    }
    follow_until(request, terminal, stop)
}

/// [`follow`], ended when `stop` is set.
pub fn follow_until(request: &Follow, terminal: Terminal<'_>, stop: Arc<AtomicBool>) -> Outcome {
    let path = match request.files.as_slice() {
        [one] => one.as_str(),
        _ => {
            return Outcome::error(
                "--follow follows one input (a file, or standard input)".to_string(),
            )
        }
    };
    if let Err(e) = report::supports(report::Command::Follow, request.live.format) {
        return Outcome::error(e.to_string());
    }
    let mut pipeline = match Pipeline::new(&request.options) {
        Ok(p) => p,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let ended = live::follow(&mut pipeline, path, &request.live, terminal, stop);
    Outcome {
        messages: ended.error.into_iter().collect(),
        code: ended.code,
        ..Outcome::default()
    }
}
