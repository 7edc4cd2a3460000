//! The sizes an unrecognised memory-like line prints (`1024.00 MiB`, `7.5 GiB`, `21.63 GB`), so a report
//! can list what it did not read with the figures in it (`InputSummary::unrecognized`, issue 52): a reader of
//! the JSON, or an issue template, sees which numbers were skipped without reading the line.
//!
//! Only the lines kept for that list pass here (at most `pipeline::MAX_KEPT_UNRECOGNIZED` per input), never
//! the hot path. Units are read as vramdiff reads sizes everywhere (`super::values`): binary multiples, the
//! decimal spellings (`KB`, `MB`, `GB`, `TB`) as their binary twins, as llama.cpp's clip, SGLang and
//! nvidia-smi mean them.

use crate::model::analysis::LineFigure;
use crate::model::{GIB, KIB, MIB, TIB};

/// The units, longest spelling first, and their multiples.
const UNITS: [(&str, i64); 9] = [
    ("TiB", TIB),
    ("GiB", GIB),
    ("MiB", MIB),
    ("KiB", KIB),
    ("TB", TIB),
    ("GB", GIB),
    ("MB", MIB),
    ("KB", KIB),
    ("B", 1),
];

/// Every size `line` prints, in order: a number (digits, one optional fraction) not glued to a word before
/// it, at most one space, a unit of `UNITS` not glued to a word after it.
pub fn size_figures(line: &str) -> Vec<LineFigure> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.')
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let mut number_end = i;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            number_end = i;
        }
        let unit_start = number_end + usize::from(b.get(number_end) == Some(&b' '));
        let Some((unit, multiple)) = UNITS
            .iter()
            .find(|(u, _)| b[unit_start..].starts_with(u.as_bytes()))
        else {
            continue;
        };
        let end = unit_start + unit.len();
        if b.get(end).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let number: f64 = line[start..number_end].parse().unwrap_or(0.0);
        let bytes = number * *multiple as f64;
        if bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64 {
            out.push(LineFigure {
                text: line[start..end].to_string(),
                bytes: bytes.round() as u64,
            });
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<(String, u64)> {
        size_figures(line)
            .into_iter()
            .map(|f| (f.text, f.bytes))
            .collect()
    }

    #[test]
    fn sizes_as_logs_print_them() {
        // `sample-logs/001-kaggle-t4-llama31-8b.log` line 168, hard-wrapped at 80 columns (its first piece).
        assert_eq!(
            texts(
                "llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB,"
            ),
            vec![
                ("1024.00 MiB".to_string(), 1 << 30),
                ("512.00 MiB".to_string(), 1 << 29)
            ]
        );
        // SGLang (`sample-logs/811-…` line 25): `avail mem=21.63 GB`; nvidia-smi `14707MiB`.
        assert_eq!(
            texts("Load weight begin. avail mem=21.63 GB")[0].0,
            "21.63 GB"
        );
        assert_eq!(
            texts("|   14707MiB /  24576MiB |")[1],
            ("24576MiB".to_string(), 24576 << 20)
        );
    }

    #[test]
    fn words_and_versions_are_no_sizes() {
        for line in [
            "version 0.11.4 build 1234",
            "H100 80GBx8",
            "sha256-9Bdeadbeef",
            "layers.split=11,11",
            "",
        ] {
            assert_eq!(texts(line), vec![], "{line}");
        }
        // Too big for 64 bits: left out, never wrapped around.
        assert_eq!(texts("99999999999999999999999 TiB"), vec![]);
    }
}
