//! The nvidia-smi / rocm-smi scanner (table, CSV, -q, XML, rocm text and JSON) on arbitrary lines, in both
//! modes: inside a log and as a `--smi` capture file (with and without a CSV field list). The first byte
//! picks the mode. Invariant: no panic, warnings carry a line that was fed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramdiff::smi::{SmiItem, SmiScanner};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut scanner = match mode % 3 {
        0 => SmiScanner::in_log(),
        1 => SmiScanner::capture_file(None),
        _ => SmiScanner::capture_file(Some("index,name,memory.used,memory.total")),
    };
    let text = String::from_utf8_lossy(rest);
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len() as u64;
    let mut check = |item: SmiItem| {
        if let SmiItem::Warning { line, .. } = item {
            assert!(line <= total, "warning on line {line} of {total}");
        }
    };
    for (i, line) in lines.iter().enumerate() {
        let _ = scanner.feed(i as u64 + 1, line, &mut check);
    }
    scanner.finish(&mut check);
});
