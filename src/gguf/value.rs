//! GGUF metadata values: the thirteen value types of versions 2 and 3, arrays of any of them, and arrays of
//! arrays. Arrays of numbers are kept as typed vectors (a 260 k-token score table is 1 MB, not 260 k enums).

use std::io::Read;

use serde::ser::{Serialize, SerializeSeq, Serializer};

use super::cursor::Cursor;
use super::error::{GgufError, GgufErrorKind};

/// Arrays inside arrays inside … at most this deep (llama.cpp itself reads none; the format allows them).
pub const MAX_NESTING: usize = 4;

/// The value type numbers of the GGUF format.
pub mod value_type {
    pub const U8: u32 = 0;
    pub const I8: u32 = 1;
    pub const U16: u32 = 2;
    pub const I16: u32 = 3;
    pub const U32: u32 = 4;
    pub const I32: u32 = 5;
    pub const F32: u32 = 6;
    pub const BOOL: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
    pub const U64: u32 = 10;
    pub const I64: u32 = 11;
    pub const F64: u32 = 12;
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    U64(u64),
    I64(i64),
    F64(f64),
    Array(Array),
}

/// An array: all elements of one type.
#[derive(Debug, Clone, PartialEq)]
pub enum Array {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    String(Strings),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Array(Vec<Array>),
}

/// The strings of an array in one buffer: a 150 k-token vocabulary costs its bytes and 8 bytes a token, not
/// 150 k heap allocations (which would triple a header's footprint).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Strings {
    text: String,
    ends: Vec<usize>,
    /// Strings read past but not kept ([`Detail::Sizes`]): counted, so the array's length stays true.
    skipped: usize,
}

/// How much of the metadata a read keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Every value (`inspect --tensors` prints them all).
    Everything,
    /// What sizes and shapes need: string arrays (a tokenizer's vocabulary and merges, megabytes on a large
    /// model) are counted, their text not kept.
    Sizes,
}

impl Strings {
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }

    /// Count a string that is not kept.
    pub fn skip_one(&mut self) {
        self.skipped += 1;
    }

    /// The array's length, strings not kept included.
    pub fn len(&self) -> usize {
        self.ends.len() + self.skipped
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text.get(start..end)
    }

    /// The strings kept.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.ends.len()).filter_map(|i| self.get(i))
    }
}

impl<S: AsRef<str>> FromIterator<S> for Strings {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out = Strings::default();
        for s in iter {
            out.push(s.as_ref());
        }
        out
    }
}

impl Serialize for Strings {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The name GGUF tools give a value type (`u32`, `str`, `arr`, …).
pub fn type_name(t: u32) -> &'static str {
    match t {
        value_type::U8 => "u8",
        value_type::I8 => "i8",
        value_type::U16 => "u16",
        value_type::I16 => "i16",
        value_type::U32 => "u32",
        value_type::I32 => "i32",
        value_type::F32 => "f32",
        value_type::BOOL => "bool",
        value_type::STRING => "str",
        value_type::ARRAY => "arr",
        value_type::U64 => "u64",
        value_type::I64 => "i64",
        value_type::F64 => "f64",
        _ => "unknown",
    }
}

/// The fewest bytes one element of type `t` takes in the file (what a count is checked against).
fn min_width(t: u32) -> u64 {
    match t {
        value_type::U8 | value_type::I8 | value_type::BOOL => 1,
        value_type::U16 | value_type::I16 => 2,
        value_type::U32 | value_type::I32 | value_type::F32 => 4,
        value_type::ARRAY => 12,
        _ => 8,
    }
}

impl Value {
    /// The value's type number.
    pub fn type_id(&self) -> u32 {
        match self {
            Value::U8(_) => value_type::U8,
            Value::I8(_) => value_type::I8,
            Value::U16(_) => value_type::U16,
            Value::I16(_) => value_type::I16,
            Value::U32(_) => value_type::U32,
            Value::I32(_) => value_type::I32,
            Value::F32(_) => value_type::F32,
            Value::Bool(_) => value_type::BOOL,
            Value::String(_) => value_type::STRING,
            Value::U64(_) => value_type::U64,
            Value::I64(_) => value_type::I64,
            Value::F64(_) => value_type::F64,
            Value::Array(_) => value_type::ARRAY,
        }
    }

    /// The value as a non-negative integer, whatever its integer width.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl Array {
    /// The element type number.
    pub fn element_type(&self) -> u32 {
        match self {
            Array::U8(_) => value_type::U8,
            Array::I8(_) => value_type::I8,
            Array::U16(_) => value_type::U16,
            Array::I16(_) => value_type::I16,
            Array::U32(_) => value_type::U32,
            Array::I32(_) => value_type::I32,
            Array::F32(_) => value_type::F32,
            Array::Bool(_) => value_type::BOOL,
            Array::String(_) => value_type::STRING,
            Array::U64(_) => value_type::U64,
            Array::I64(_) => value_type::I64,
            Array::F64(_) => value_type::F64,
            Array::Array(_) => value_type::ARRAY,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Array::U8(v) => v.len(),
            Array::I8(v) => v.len(),
            Array::U16(v) => v.len(),
            Array::I16(v) => v.len(),
            Array::U32(v) => v.len(),
            Array::I32(v) => v.len(),
            Array::F32(v) => v.len(),
            Array::Bool(v) => v.len(),
            Array::String(v) => v.len(),
            Array::U64(v) => v.len(),
            Array::I64(v) => v.len(),
            Array::F64(v) => v.len(),
            Array::Array(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element as a non-negative integer (`None` for non-integer arrays or a negative element).
    pub fn as_u64s(&self) -> Option<Vec<u64>> {
        fn all<T: Copy>(v: &[T], f: impl Fn(T) -> Option<u64>) -> Option<Vec<u64>> {
            v.iter().map(|&x| f(x)).collect()
        }
        match self {
            Array::U8(v) => all(v, |x| Some(x.into())),
            Array::U16(v) => all(v, |x| Some(x.into())),
            Array::U32(v) => all(v, |x| Some(x.into())),
            Array::U64(v) => all(v, Some),
            Array::I8(v) => all(v, |x| u64::try_from(x).ok()),
            Array::I16(v) => all(v, |x| u64::try_from(x).ok()),
            Array::I32(v) => all(v, |x| u64::try_from(x).ok()),
            Array::I64(v) => all(v, |x| u64::try_from(x).ok()),
            _ => None,
        }
    }

    /// Every element as a flag (booleans, or integers where non-zero is true).
    pub fn as_bools(&self) -> Option<Vec<bool>> {
        match self {
            Array::Bool(v) => Some(v.clone()),
            other => other
                .as_u64s()
                .map(|v| v.into_iter().map(|x| x != 0).collect()),
        }
    }
}

/// Read a value of type `t` (already read) at the cursor.
pub fn read_value<R: Read>(c: &mut Cursor<R>, t: u32, depth: usize) -> Result<Value, GgufError> {
    Ok(match t {
        value_type::U8 => Value::U8(c.number("a u8 value")?),
        value_type::I8 => Value::I8(c.number("an i8 value")?),
        value_type::U16 => Value::U16(c.number("a u16 value")?),
        value_type::I16 => Value::I16(c.number("an i16 value")?),
        value_type::U32 => Value::U32(c.number("a u32 value")?),
        value_type::I32 => Value::I32(c.number("an i32 value")?),
        value_type::F32 => Value::F32(c.number("an f32 value")?),
        value_type::BOOL => Value::Bool(read_bool(c)?),
        value_type::STRING => Value::String(c.string("a string value")?),
        value_type::U64 => Value::U64(c.number("a u64 value")?),
        value_type::I64 => Value::I64(c.number("an i64 value")?),
        value_type::F64 => Value::F64(c.number("an f64 value")?),
        value_type::ARRAY => Value::Array(read_array(c, depth + 1)?),
        other => return Err(c.error(GgufErrorKind::UnknownValueType(other))),
    })
}

fn read_bool<R: Read>(c: &mut Cursor<R>) -> Result<bool, GgufError> {
    let at = c.position();
    match c.number::<u8>("a bool value")? {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(c.error_at(
            at,
            GgufErrorKind::BadMetadata {
                key: String::new(),
                problem: format!("a bool is stored as {b}, not 0 or 1"),
            },
        )),
    }
}

/// An array: its element type, its count, then the elements.
fn read_array<R: Read>(c: &mut Cursor<R>, depth: usize) -> Result<Array, GgufError> {
    let start = c.position();
    if depth > MAX_NESTING {
        return Err(c.error(GgufErrorKind::NestingTooDeep(MAX_NESTING)));
    }
    let t: u32 = c.number("an array's element type")?;
    if t > value_type::F64 {
        return Err(c.error_at(start, GgufErrorKind::UnknownValueType(t)));
    }
    let count_at = c.position();
    let count: u64 = c.number("an array's length")?;
    c.check_count(count, min_width(t), "an array length")
        .map_err(|e| GgufError {
            offset: count_at,
            ..e
        })?;
    Ok(match t {
        value_type::U8 => Array::U8(c.numbers(count, "a u8 array")?),
        value_type::I8 => Array::I8(c.numbers(count, "an i8 array")?),
        value_type::U16 => Array::U16(c.numbers(count, "a u16 array")?),
        value_type::I16 => Array::I16(c.numbers(count, "an i16 array")?),
        value_type::U32 => Array::U32(c.numbers(count, "a u32 array")?),
        value_type::I32 => Array::I32(c.numbers(count, "an i32 array")?),
        value_type::F32 => Array::F32(c.numbers(count, "an f32 array")?),
        value_type::U64 => Array::U64(c.numbers(count, "a u64 array")?),
        value_type::I64 => Array::I64(c.numbers(count, "an i64 array")?),
        value_type::F64 => Array::F64(c.numbers(count, "an f64 array")?),
        value_type::BOOL => {
            let mut v = Vec::new();
            for _ in 0..count {
                v.push(read_bool(c)?);
            }
            Array::Bool(v)
        }
        value_type::STRING => {
            let mut v = Strings::default();
            let mut scratch = Vec::new();
            let keep = c.detail() == Detail::Everything;
            for _ in 0..count {
                c.string_with(&mut scratch, "a string in an array", |b| {
                    if !keep {
                        v.skip_one();
                    } else {
                        match std::str::from_utf8(b) {
                            Ok(s) => v.push(s),
                            Err(_) => v.push(&String::from_utf8_lossy(b)),
                        }
                    }
                })?;
            }
            Array::String(v)
        }
        _ => {
            let mut v = Vec::new();
            for _ in 0..count {
                v.push(read_array(c, depth + 1)?);
            }
            Array::Array(v)
        }
    })
}

/// A float for JSON: finite values as numbers (f32 widened exactly), the others as strings.
fn float<S: Serializer>(x: f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(x)
    } else {
        s.serialize_str(&x.to_string())
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::U8(v) => s.serialize_u8(*v),
            Value::I8(v) => s.serialize_i8(*v),
            Value::U16(v) => s.serialize_u16(*v),
            Value::I16(v) => s.serialize_i16(*v),
            Value::U32(v) => s.serialize_u32(*v),
            Value::I32(v) => s.serialize_i32(*v),
            Value::F32(v) => float(f64::from(*v), s),
            Value::Bool(v) => s.serialize_bool(*v),
            Value::String(v) => s.serialize_str(v),
            Value::U64(v) => s.serialize_u64(*v),
            Value::I64(v) => s.serialize_i64(*v),
            Value::F64(v) => float(*v, s),
            Value::Array(a) => a.serialize(s),
        }
    }
}

struct Float(f64);

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        float(self.0, s)
    }
}

impl Serialize for Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Array::U8(v) => v.serialize(s),
            Array::I8(v) => v.serialize(s),
            Array::U16(v) => v.serialize(s),
            Array::I16(v) => v.serialize(s),
            Array::U32(v) => v.serialize(s),
            Array::I32(v) => v.serialize(s),
            Array::Bool(v) => v.serialize(s),
            Array::String(v) => v.serialize(s),
            Array::U64(v) => v.serialize(s),
            Array::I64(v) => v.serialize(s),
            Array::Array(v) => v.serialize(s),
            Array::F32(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for x in v {
                    seq.serialize_element(&Float(f64::from(*x)))?;
                }
                seq.end()
            }
            Array::F64(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for x in v {
                    seq.serialize_element(&Float(*x))?;
                }
                seq.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], t: u32) -> Result<Value, GgufError> {
        let mut c = Cursor::new(bytes, bytes.len() as u64, "t", Detail::Everything);
        read_value(&mut c, t, 0)
    }

    fn array_header(t: u32, n: u64) -> Vec<u8> {
        let mut b = t.to_le_bytes().to_vec();
        b.extend_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn a_read_for_sizes_counts_string_arrays_without_keeping_them() {
        let mut b = array_header(value_type::STRING, 3);
        for word in ["<s>", "hello", "world"] {
            b.extend((word.len() as u64).to_le_bytes());
            b.extend(word.as_bytes());
        }
        b.extend([7u8]); // the next value's first byte: the read stops right before it
        let mut c = Cursor::new(&b[..], b.len() as u64, "t", Detail::Sizes);
        let Value::Array(Array::String(strings)) =
            read_value(&mut c, value_type::ARRAY, 0).unwrap()
        else {
            panic!("a string array");
        };
        assert_eq!((strings.len(), strings.iter().count()), (3, 0));
        assert_eq!(c.position(), b.len() as u64 - 1);
        let Value::Array(Array::String(kept)) = read(&b, value_type::ARRAY).unwrap() else {
            panic!("a string array");
        };
        assert_eq!(kept.iter().collect::<Vec<_>>(), ["<s>", "hello", "world"]);
    }

    #[test]
    fn nested_arrays_are_read() {
        let mut b = array_header(value_type::ARRAY, 2);
        b.extend(array_header(value_type::U16, 2));
        b.extend([1, 0, 2, 0]);
        b.extend(array_header(value_type::STRING, 1));
        b.extend(2u64.to_le_bytes());
        b.extend(b"hi");
        let v = read(&b, value_type::ARRAY).unwrap();
        assert_eq!(
            v,
            Value::Array(Array::Array(vec![
                Array::U16(vec![1, 2]),
                Array::String(["hi"].into_iter().collect())
            ]))
        );
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"[[1,2],["hi"]]"#);
    }

    #[test]
    fn an_absurd_array_length_is_refused_at_its_offset() {
        let mut b = array_header(value_type::U64, u64::MAX / 2);
        b.extend([0; 16]);
        let e = read(&b, value_type::ARRAY).unwrap_err();
        assert_eq!(e.offset, 4);
        assert!(matches!(e.kind, GgufErrorKind::CountPastEnd { .. }), "{e}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut b = Vec::new();
        for _ in 0..10 {
            b.extend(array_header(value_type::ARRAY, 1));
        }
        let e = read(&b, value_type::ARRAY).unwrap_err();
        assert_eq!(e.kind, GgufErrorKind::NestingTooDeep(MAX_NESTING));
    }

    #[test]
    fn unknown_types_are_named() {
        assert_eq!(
            read(&[0; 8], 13).unwrap_err().kind,
            GgufErrorKind::UnknownValueType(13)
        );
        let b = array_header(99, 0);
        assert_eq!(
            read(&b, value_type::ARRAY).unwrap_err().kind,
            GgufErrorKind::UnknownValueType(99)
        );
    }

    #[test]
    fn floats_widen_exactly_and_non_finite_ones_become_strings() {
        let v = Value::F32(0.1);
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            format!("{}", f64::from(0.1f32))
        );
        assert_eq!(
            serde_json::to_string(&Value::F64(f64::NAN)).unwrap(),
            r#""NaN""#
        );
    }
}
