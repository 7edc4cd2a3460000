//! The fit/lifecycle ledger: each line of the input through the grammar (`Parser::read_line`, as
//! `src/pipeline/mod.rs` drives it) and every event into the load `Assembler` (`src/load/mod.rs`), with the
//! clock's jump back starting another log. Stops at the assembler, so a crash here is the ledger's, not a
//! later stage's. Invariants: no panic; every load handed out spans lines that were fed, first before last.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::load::Assembler;
use vramdiff::model::Load;
use vramdiff::parse::clock::Clock;
use vramdiff::parse::{LineOutcome, Parser};

fn parser() -> &'static Mutex<Parser> {
    static PARSER: OnceLock<Mutex<Parser>> = OnceLock::new();
    PARSER.get_or_init(|| {
        let grammar = vramdiff::grammar::load(None).expect("built-in grammar");
        Mutex::new(Parser::new(grammar).expect("built-in grammar compiles"))
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parser = parser().lock().unwrap_or_else(|e| e.into_inner());
    let mut assembler = Assembler::new("fuzz.log");
    let mut clock = Clock::new();
    let mut fed = 0u64;
    let check = |load: Load, fed: u64| {
        let s = &load.source;
        assert!(s.first_line <= s.last_line, "{s:?}");
        assert!(s.last_line <= fed, "{s:?} after {fed} lines");
    };
    for (i, line) in text.split('\n').enumerate() {
        let number = i as u64 + 1;
        fed = number;
        if clock.jumps_back(line) {
            assembler.another_log(|l| check(l, fed));
        }
        if let LineOutcome::Event(event) = parser.read_line(number, line) {
            assembler.push(*event, |l| check(l, fed));
        }
    }
    let _ = assembler.discovered();
    assembler.finish(|l| check(l, fed));
});
