//! Tensor infos: name, shape, ggml type and offset, and each tensor's bytes. The bytes come from the distance
//! to the next tensor's offset (the last one runs to the end of the file), so a quantisation type newer than
//! this reader still gets its exact size; the table of known types below only names them and lets the reader
//! catch tensors that overlap.

use std::io::Read;

use serde::Serialize;

use super::cursor::Cursor;
use super::error::{GgufError, GgufErrorKind};

/// ggml allows at most 4 dimensions (`GGML_MAX_DIMS`).
pub const MAX_DIMS: u32 = 4;

/// One tensor as the header describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorInfo {
    pub name: String,
    /// Dimensions, innermost first (ggml's `ne`).
    pub shape: Vec<u64>,
    /// The ggml type number.
    #[serde(rename = "type")]
    pub ggml_type: u32,
    /// The type's name when this reader knows it (`F16`, `Q4_K`, …).
    pub type_name: Option<&'static str>,
    /// Offset from the start of the data section (a multiple of the alignment).
    pub offset: u64,
    /// Bytes from this tensor's offset to the next one's (or to the end of the file): its data and the padding
    /// to the alignment.
    pub bytes: u64,
    /// The data alone, from the shape and the type's block size, when the type is known.
    pub data_bytes: Option<u64>,
    /// Where the tensor info starts in the file (for errors).
    #[serde(skip)]
    pub info_offset: u64,
}

impl TensorInfo {
    /// Number of elements.
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }
}

/// Known ggml types: number, name, elements per block, bytes per block (ggml.c's `type_traits`).
const GGML_TYPES: &[(u32, &str, u64, u64)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 40),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
];

fn known_type(t: u32) -> Option<(&'static str, u64, u64)> {
    GGML_TYPES
        .iter()
        .find(|(n, ..)| *n == t)
        .map(|&(_, name, block, size)| (name, block, size))
}

/// The name of a ggml type, when known.
pub fn ggml_type_name(t: u32) -> Option<&'static str> {
    known_type(t).map(|(name, ..)| name)
}

/// Bytes of `elements` elements of type `t` (rows are whole blocks), when the type is known.
fn data_bytes(t: u32, shape: &[u64]) -> Option<u64> {
    let (_, block, size) = known_type(t)?;
    let row = shape.first().copied().unwrap_or(1);
    let rows: u64 = shape
        .iter()
        .skip(1)
        .try_fold(1u64, |a, &d| a.checked_mul(d))?;
    row.div_ceil(block).checked_mul(size)?.checked_mul(rows)
}

/// Read `count` tensor infos at the cursor. Their `bytes` are filled in by [`measure`].
pub fn read_infos<R: Read>(c: &mut Cursor<R>, count: u64) -> Result<Vec<TensorInfo>, GgufError> {
    // Name length, dimension count, type and offset: at least 24 bytes per tensor info.
    c.check_count(count, 24, "a tensor count")?;
    let mut infos = Vec::new();
    let mut names = std::collections::HashSet::new();
    for _ in 0..count {
        let info_offset = c.position();
        let name = c.string("a tensor name")?;
        if !names.insert(name.clone()) {
            return Err(c.error_at(
                info_offset,
                GgufErrorKind::BadTensor {
                    name,
                    problem: "the name appears twice".into(),
                },
            ));
        }
        let dims_at = c.position();
        let n_dims: u32 = c.number("a tensor's dimension count")?;
        if n_dims > MAX_DIMS {
            return Err(c.error_at(
                dims_at,
                GgufErrorKind::BadTensor {
                    name,
                    problem: format!("{n_dims} dimensions; ggml allows at most {MAX_DIMS}"),
                },
            ));
        }
        let shape: Vec<u64> = c.numbers(n_dims.into(), "a tensor's dimensions")?;
        if shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .is_none()
        {
            return Err(c.error_at(
                dims_at,
                GgufErrorKind::BadTensor {
                    name,
                    problem: format!("the element count of shape {shape:?} overflows 64 bits"),
                },
            ));
        }
        let ggml_type: u32 = c.number("a tensor's type")?;
        let offset: u64 = c.number("a tensor's offset")?;
        infos.push(TensorInfo {
            type_name: ggml_type_name(ggml_type),
            data_bytes: data_bytes(ggml_type, &shape),
            name,
            shape,
            ggml_type,
            offset,
            bytes: 0,
            info_offset,
        });
    }
    Ok(infos)
}

/// Check the offsets as llama.cpp does (aligned, in file order, not overlapping, inside the file) and give each
/// tensor its bytes: the distance to the next offset, the last one to the end of the file.
pub fn measure<R: Read>(
    c: &Cursor<R>,
    infos: &mut [TensorInfo],
    data_start: u64,
    alignment: u64,
) -> Result<(), GgufError> {
    let data_len = c.file_len().saturating_sub(data_start);
    let bad = |t: &TensorInfo, problem: String| {
        c.error_at(
            t.info_offset,
            GgufErrorKind::BadTensor {
                name: t.name.clone(),
                problem,
            },
        )
    };
    for i in 0..infos.len() {
        let t = &infos[i];
        if !t.offset.is_multiple_of(alignment) {
            return Err(bad(
                t,
                format!(
                    "offset {} is not a multiple of the alignment {alignment}",
                    t.offset
                ),
            ));
        }
        let end = match infos.get(i + 1) {
            Some(next) if next.offset < t.offset => {
                return Err(bad(
                    t,
                    format!(
                        "offset {} comes after the next tensor's ({:?} at {}): offsets must be in file order",
                        t.offset, next.name, next.offset
                    ),
                ))
            }
            Some(next) => next.offset,
            None => data_len,
        };
        if t.offset > data_len {
            return Err(bad(
                t,
                format!(
                    "offset {} is past the end of the file (the data section holds {data_len} bytes)",
                    t.offset
                ),
            ));
        }
        let span = end - t.offset;
        let needed = t.data_bytes.unwrap_or(u64::from(t.elements() > 0));
        if span < needed {
            let problem = if i + 1 < infos.len() {
                format!(
                    "its {needed} bytes at offset {} overlap the next tensor at {end}",
                    t.offset
                )
            } else {
                format!(
                    "its {needed} bytes at offset {} run past the end of the file (the data section holds {data_len} bytes)",
                    t.offset
                )
            };
            return Err(bad(t, problem));
        }
        infos[i].bytes = span;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_size_whole_blocks() {
        assert_eq!(data_bytes(0, &[4, 3]), Some(48));
        assert_eq!(data_bytes(8, &[64, 2]), Some(2 * 2 * 34));
        assert_eq!(data_bytes(12, &[256]), Some(144));
        assert_eq!(data_bytes(200, &[256]), None);
        assert_eq!(ggml_type_name(14), Some("Q6_K"));
    }
}
