//! The GGUF header reader on arbitrary bytes. Invariants: no panic, no allocation the input cannot back;
//! an error names an offset inside the input (or the end of it); a header that reads builds a layout or a
//! named error, and every tensor it measured lies inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramdiff::gguf;

fuzz_target!(|data: &[u8]| {
    match gguf::read_header_bytes(data, "fuzz.gguf") {
        Ok(header) => {
            for t in &header.tensors {
                assert!(
                    header.data_start + t.offset + t.bytes <= data.len() as u64,
                    "{t:?}"
                );
            }
            let _ = gguf::layout::build(&header, None);
        }
        Err(e) => {
            assert!(e.offset <= data.len() as u64, "{e}");
            let _ = e.to_string();
        }
    }
});
