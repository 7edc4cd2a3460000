//! Every grammar's line parser: each line of the input through `Parser::parse_line` with the built-in
//! grammar (all dialects are tried on every line). Invariants: no panic; the literal prefilter's scan of all
//! the lines at once (`LineFilter::scan_lines`, `src/prefilter/mod.rs`), their texts abutting, finds in each line
//! what its scan alone finds.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use vramdiff::parse::Parser;

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
    let mut joined = String::new();
    let mut ranges = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let _ = parser.parse_line(i as u64 + 1, line);
        ranges.push((joined.len(), joined.len() + line.len()));
        joined.push_str(line);
    }
    let filter = parser.line_filter();
    let mut together = Vec::new();
    filter.scan_lines(joined.as_bytes(), &ranges, &mut together);
    let alone: Vec<_> = text.split('\n').map(|l| filter.scan(l.as_bytes())).collect();
    assert_eq!(together, alone);
});
