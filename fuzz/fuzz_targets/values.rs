//! The nom value parsers on arbitrary text. Invariants: no panic; every size read keeps
//! `low <= bytes <= high` and is not negative (a truncated MiB figure may be).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramdiff::model::Quantity;
use vramdiff::parse::values;

fn check(q: &Quantity) {
    assert!(q.low <= q.bytes && q.bytes <= q.high, "{q:?}");
    assert!(q.low >= 0, "{q:?}");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let t: &str = &text;
    if let Some(q) = values::parse_size(t) {
        check(&q);
    }
    if let Some(q) = values::parse_size_or_bare(t, vramdiff::model::MIB) {
        check(&q);
    }
    // Truncated MiB may be negative (free memory below zero): only the bounds are checked.
    if let Some(q) = values::parse_mib_truncated(t) {
        assert!(q.low <= q.bytes && q.bytes <= q.high, "{q:?}");
    }
    if let Ok(bytes) = values::parse_typed_size(t) {
        assert!(bytes >= 0, "{t:?} → {bytes}");
    }
    for q in values::parse_size_list(t).unwrap_or_default() {
        check(&q);
    }
    let _ = values::parse_int_list(t);
    let _ = values::parse_int(t);
    let _ = values::parse_logfmt(t);
    let _ = values::parse_go_struct(t);
    let _ = values::parse_gpu_layers(t);
});
