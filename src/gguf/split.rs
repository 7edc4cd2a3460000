//! Split models: llama.cpp's `gguf-split` writes a model as `NAME-00001-of-0000N.gguf` … `-0000N-of-0000N`,
//! the first part holding the metadata and every part its own header and tensor infos (`split.count`,
//! `split.no`, `split.tensors.count` say so). Named by its first part, a split model is read whole: every
//! part's header (never its tensor data), the tensors put together in part order, the lengths added up. A
//! tensor's bytes are measured within its own part, so the layout is the same as one file's.

use super::error::{GgufError, GgufErrorKind};
use super::header::GgufHeader;

/// The names of every part when `name` is the first part of a split model (`…-00001-of-0000N.gguf`, a query
/// string after it allowed), in order; `None` otherwise, or for a model of one part.
pub fn part_names(name: &str) -> Option<Vec<String>> {
    let (path, query) = match name.find('?') {
        Some(at) => name.split_at(at),
        None => (name, ""),
    };
    let stem = path.strip_suffix(".gguf")?;
    // `-00001-of-00003`: two five-digit numbers (gguf-split's `%05d`).
    let tail = stem.get(stem.len().checked_sub(15)?..)?;
    let bytes = tail.as_bytes();
    let digits = |r: std::ops::Range<usize>| bytes[r].iter().all(u8::is_ascii_digit);
    if bytes[0] != b'-' || &tail[6..10] != "-of-" || !digits(1..6) || !digits(10..15) {
        return None;
    }
    if &tail[1..6] != "00001" {
        return None;
    }
    let count: u32 = tail[10..15].parse().ok()?;
    if count < 2 {
        return None;
    }
    let base = &stem[..stem.len() - 15];
    Some(
        (1..=count)
            .map(|k| format!("{base}-{k:05}-of-{count:05}.gguf{query}"))
            .collect(),
    )
}

/// The parts' headers as one: the first part's metadata, every part's tensors in order, the lengths added.
/// Refused when a part says it is another one than its name (`split.no`) or the count differs (`split.count`).
pub fn merge(parts: Vec<GgufHeader>) -> Result<GgufHeader, GgufError> {
    let count = parts.len() as u64;
    for (i, part) in parts.iter().enumerate() {
        let wrong = |problem: String| GgufError {
            path: part.path.clone(),
            offset: 0,
            kind: GgufErrorKind::BadMetadata {
                key: "split".into(),
                problem,
            },
        };
        if let Some(n) = part.get_u64("split.count") {
            if n != count {
                return Err(wrong(format!(
                    "split.count is {n}, the name says {count} parts"
                )));
            }
        }
        if let Some(no) = part.get_u64("split.no") {
            if no != i as u64 {
                return Err(wrong(format!(
                    "split.no is {no}, the name says part {}",
                    i + 1
                )));
            }
        }
    }
    let mut parts = parts.into_iter();
    let Some(mut whole) = parts.next() else {
        return Err(GgufError {
            path: String::new(),
            offset: 0,
            kind: GgufErrorKind::Io("a split model of no part".into()),
        });
    };
    for part in parts {
        whole.file_bytes += part.file_bytes;
        whole.tensors.extend(part.tensors);
    }
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_part_names_every_part() {
        assert_eq!(
            part_names("dir/Qwen3-235B-Q4_K_M-00001-of-00003.gguf"),
            Some(vec![
                "dir/Qwen3-235B-Q4_K_M-00001-of-00003.gguf".to_string(),
                "dir/Qwen3-235B-Q4_K_M-00002-of-00003.gguf".to_string(),
                "dir/Qwen3-235B-Q4_K_M-00003-of-00003.gguf".to_string(),
            ])
        );
        assert_eq!(
            part_names("https://h/m-00001-of-00002.gguf?download=true").unwrap()[1],
            "https://h/m-00002-of-00002.gguf?download=true"
        );
        assert_eq!(part_names("m-00002-of-00003.gguf"), None);
        assert_eq!(part_names("m-00001-of-00001.gguf"), None);
        assert_eq!(part_names("m.gguf"), None);
        assert_eq!(part_names("of-00003.gguf"), None);
        assert_eq!(part_names("m-0001-of-0003.gguf"), None);
        assert_eq!(
            part_names("é-00001-of-00002.gguf").map(|p| p.len()),
            Some(2)
        );
    }

    fn part(path: &str, split: Option<(u16, u16)>, tensors: usize, bytes: u64) -> GgufHeader {
        let mut metadata = Vec::new();
        if let Some((no, count)) = split {
            for (key, v) in [("split.no", no), ("split.count", count)] {
                metadata.push(super::super::Metadata {
                    key: key.into(),
                    value: super::super::Value::U16(v),
                    offset: 0,
                });
            }
        }
        GgufHeader {
            path: path.into(),
            version: 3,
            file_bytes: bytes,
            alignment: 32,
            data_start: 64,
            metadata,
            tensors: (0..tensors)
                .map(|i| super::super::TensorInfo {
                    name: format!("{path}.{i}"),
                    shape: vec![1],
                    ggml_type: 0,
                    type_name: Some("F32"),
                    offset: 0,
                    bytes: 32,
                    data_bytes: Some(4),
                    info_offset: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn parts_merge_in_order_and_must_agree_with_their_names() {
        let whole = merge(vec![
            part("a", Some((0, 2)), 2, 1000),
            part("b", Some((1, 2)), 3, 500),
        ])
        .unwrap();
        assert_eq!(whole.path, "a");
        assert_eq!(whole.file_bytes, 1500);
        assert_eq!(whole.tensors.len(), 5);
        assert_eq!(whole.tensors[4].name, "b.2");
        assert_eq!(whole.get_u64("split.count"), Some(2));
        // No split keys: taken on the names' word.
        assert!(merge(vec![part("a", None, 1, 10), part("b", None, 1, 10)]).is_ok());
        let count =
            merge(vec![part("a", Some((0, 3)), 1, 10), part("b", None, 1, 10)]).unwrap_err();
        assert!(
            count
                .to_string()
                .contains("split.count is 3, the name says 2 parts"),
            "{count}"
        );
        let no = merge(vec![part("a", None, 1, 10), part("b", Some((0, 2)), 1, 10)]).unwrap_err();
        assert!(no.to_string().starts_with("b: "), "{no}");
        assert!(
            no.to_string()
                .contains("split.no is 0, the name says part 2"),
            "{no}"
        );
    }
}
