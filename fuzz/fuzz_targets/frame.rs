//! Line framing: arbitrary bytes cut into physical lines (as `source::LineReader` does) and fed to the
//! `Framer`. Invariants: no panic; every logical line is numbered with a physical line already pushed, in
//! non-decreasing order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramdiff::frame::Framer;
use vramdiff::source::{LineReader, PhysicalLine};

fuzz_target!(|data: &[u8]| {
    let mut lines = LineReader::new(std::io::Cursor::new(data));
    let mut physical = PhysicalLine::default();
    let mut framer = Framer::new();
    let mut last = 0u64;
    let mut pushed = 0u64;
    let mut check = |n: u64, text: &str, pushed: u64| {
        assert!(n >= 1 && n <= pushed, "line {n} not yet pushed ({pushed})");
        assert!(n >= last, "line numbers went back: {n} after {last}");
        last = n;
        let _ = text.len();
    };
    while lines.next_line(&mut physical).expect("in-memory read") {
        pushed = physical.number;
        framer.push(physical.number, &physical.bytes, |n, t| check(n, t, pushed));
    }
    framer.finish(|n, t| check(n, t, pushed));
});
