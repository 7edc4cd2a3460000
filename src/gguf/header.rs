//! The GGUF header as a whole: magic, version (2 or 3), the counts, every metadata key-value, every tensor info,
//! and where the aligned data section starts. Reading it touches the first few MB of the file at most.

use std::io::Read;

use serde::Serialize;

use super::cursor::Cursor;
use super::error::{GgufError, GgufErrorKind};
use super::tensors::{self, TensorInfo};
use super::value::{self, Detail, Value};

/// `general.alignment` when the file does not set it.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// One metadata key-value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metadata {
    pub key: String,
    pub value: Value,
    /// Where the entry starts in the file.
    #[serde(skip)]
    pub offset: u64,
}

/// Everything before the tensor data.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufHeader {
    /// The file as named by the caller.
    pub path: String,
    pub version: u32,
    /// The file's length in bytes.
    pub file_bytes: u64,
    /// `general.alignment`, or 32.
    pub alignment: u64,
    /// Offset of the data section (after the tensor infos, aligned).
    pub data_start: u64,
    /// Metadata in file order.
    pub metadata: Vec<Metadata>,
    /// Tensor infos in file order, with their bytes.
    pub tensors: Vec<TensorInfo>,
}

impl GgufHeader {
    /// The value of a metadata key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata
            .iter()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }

    /// A metadata key read as a non-negative integer.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.get("general.architecture").and_then(Value::as_str)
    }
}

/// Parse the fixed prefix: magic, version, tensor count, metadata count (nom over the first 24 bytes).
fn prefix(input: &[u8]) -> nom::IResult<&[u8], (u32, u64, u64)> {
    use nom::number::complete::{le_u32, le_u64};
    use nom::Parser;
    let (rest, (_, version, tensors, kvs)) = (
        nom::bytes::complete::tag(&b"GGUF"[..]),
        le_u32,
        le_u64,
        le_u64,
    )
        .parse(input)?;
    Ok((rest, (version, tensors, kvs)))
}

/// Read the header of a file of `len` bytes from `reader` (positioned at its start), keeping the metadata to
/// `detail`.
pub fn read<R: Read>(
    reader: R,
    len: u64,
    path: &str,
    detail: Detail,
) -> Result<GgufHeader, GgufError> {
    let mut c = Cursor::new(reader, len, path, detail);
    let magic = c.bytes(4.min(len), "the magic")?;
    if magic != b"GGUF" {
        return Err(c.error_at(
            0,
            GgufErrorKind::BadMagic(String::from_utf8_lossy(&magic).into_owned()),
        ));
    }
    let mut fixed = magic;
    fixed.extend(c.bytes(20, "the version and counts")?);
    let (_, (version, tensor_count, kv_count)) = prefix(&fixed).map_err(|_| {
        c.error_at(
            0,
            GgufErrorKind::BadMagic(String::from_utf8_lossy(&fixed[..4]).into_owned()),
        )
    })?;
    if version != 2 && version != 3 {
        return Err(c.error_at(4, GgufErrorKind::UnsupportedVersion(version)));
    }
    // A key (length + bytes), a type and the smallest value: at least 13 bytes per entry.
    c.check_count(kv_count, 13, "a metadata count")
        .map_err(|e| GgufError { offset: 16, ..e })?;
    let mut metadata: Vec<Metadata> = Vec::new();
    let mut keys = std::collections::HashSet::new();
    for _ in 0..kv_count {
        let offset = c.position();
        let key = c.string("a metadata key")?;
        if !keys.insert(key.clone()) {
            // llama.cpp refuses a file with a key twice: which value would count is undefined.
            return Err(c.error_at(
                offset,
                GgufErrorKind::BadMetadata {
                    key,
                    problem: "the key appears twice".into(),
                },
            ));
        }
        let t: u32 = c.number("a metadata value type")?;
        let value = value::read_value(&mut c, t, 0).map_err(|e| name_key(e, &key))?;
        metadata.push(Metadata { key, value, offset });
    }
    c.check_count(tensor_count, 24, "a tensor count")
        .map_err(|e| GgufError { offset: 8, ..e })?;
    let mut tensors = tensors::read_infos(&mut c, tensor_count)?;
    let alignment = alignment(&c, &metadata)?;
    let data_start = c.position().div_ceil(alignment) * alignment;
    if !tensors.is_empty() && data_start > len {
        return Err(c.error(GgufErrorKind::Truncated {
            what: "the padding before the tensor data",
            needed: data_start - c.position(),
            remaining: c.remaining(),
        }));
    }
    tensors::measure(&c, &mut tensors, data_start, alignment)?;
    Ok(GgufHeader {
        path: path.to_string(),
        version,
        file_bytes: len,
        alignment,
        data_start,
        metadata,
        tensors,
    })
}

/// Put the key's name into a metadata error raised while reading its value.
fn name_key(mut e: GgufError, key: &str) -> GgufError {
    if let GgufErrorKind::BadMetadata { key: k, .. } = &mut e.kind {
        *k = key.to_string();
    }
    e
}

/// `general.alignment`: a power of two (llama.cpp refuses anything else), 32 when absent.
fn alignment<R: Read>(c: &Cursor<R>, metadata: &[Metadata]) -> Result<u64, GgufError> {
    let Some(entry) = metadata.iter().find(|m| m.key == "general.alignment") else {
        return Ok(DEFAULT_ALIGNMENT);
    };
    match entry.value.as_u64() {
        Some(a) if a.is_power_of_two() && a <= 1 << 30 => Ok(a),
        _ => Err(c.error_at(
            entry.offset,
            GgufErrorKind::BadMetadata {
                key: entry.key.clone(),
                problem: format!(
                    "{} is not a power of two (at most 2^30)",
                    serde_json::to_string(&entry.value).unwrap_or_default()
                ),
            },
        )),
    }
}
