//! The nvidia-smi / rocm-smi readers (the table, `--query-gpu` CSV, `-q` text, `-q -x` XML, rocm-smi text and
//! JSON) on arbitrary bytes. The first byte picks the mode: the scanner inside a log (`SmiScanner::in_log`,
//! line by line as `src/pipeline/mod.rs` feeds it), or a `--smi` capture file read whole as
//! `src/smi/file.rs` reads one (decoding, framing, the scanner), with and without a CSV field list.
//! Invariants: no panic; warnings carry a line that was fed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramdiff::smi::file::read_capture;
use vramdiff::smi::{SmiItem, SmiScanner};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fields = match mode % 3 {
        0 => None,
        1 => Some(None),
        _ => Some(Some("index,name,memory.used,memory.total")),
    };
    let Some(fields) = fields else {
        let text = String::from_utf8_lossy(rest);
        let lines: Vec<&str> = text.split('\n').collect();
        let total = lines.len() as u64;
        let mut check = |item: SmiItem| {
            if let SmiItem::Warning { line, .. } = item {
                assert!(line <= total, "warning on line {line} of {total}");
            }
        };
        let mut scanner = SmiScanner::in_log();
        for (i, line) in lines.iter().enumerate() {
            let _ = scanner.feed(i as u64 + 1, line, &mut check);
        }
        scanner.finish(&mut check);
        return;
    };
    let reader = vramdiff::source::decoded(std::io::Cursor::new(rest.to_vec()));
    let summary = read_capture("fuzz.nvidia-smi.txt", reader, fields);
    for w in &summary.warnings {
        if let Some(line) = w.line {
            assert!(
                line <= summary.lines.max(1),
                "warning on line {line} of {}",
                summary.lines
            );
        }
    }
});
