//! The JSON report's bytes, keys sorted, written straight from the data instead of through a
//! `serde_json::Value`.
//!
//! The report's JSON is what `serde_json::to_vec_pretty` gives for a `Value` (`report::json`): serde_json keeps
//! a `Value`'s maps in `BTreeMap`s, so every object's keys come out sorted, whatever order the structs declare
//! them in. Building that tree for each load and dropping it was most of the report's cost, and the report was
//! 9 % of a run's instructions on a 200 MB log (`docs/performance.md`, "Speed II, second stop"). This
//! serializer writes the same bytes without the tree: each object's members are written one after the other,
//! then put in key order by moving their bytes (a member's bytes do not depend on where they stand). Every
//! conversion a `Value` makes on the way is made here the same: an `f32` is widened to `f64`, a map's integer,
//! `bool` or `char` key becomes its text, a key given twice keeps its last value, an enum is externally
//! tagged. `report::json`'s tests compare the two renderings on every sample.

use std::borrow::Cow;

use serde::ser::{self, Serialize};

/// Write `value` as `serde_json::to_vec_pretty(&serde_json::to_value(value)?)` would, as if nested `depth`
/// levels deep (the lines after the first are indented by `depth` more levels).
pub(super) fn write_sorted_pretty<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    depth: usize,
) -> serde_json::Result<()> {
    let mut spare = Vec::new();
    value.serialize(&mut Sorted {
        out,
        spare: &mut spare,
        depth,
    })
}

struct Sorted<'o> {
    out: &'o mut Vec<u8>,
    /// Where [`Object::finish`] moves an object's values aside while it writes them in key order: one buffer
    /// for every object of the value (an object is finished after the objects inside it), not one each.
    spare: &'o mut Vec<u8>,
    depth: usize,
}

type Error = serde_json::Error;

fn indent(out: &mut Vec<u8>, depth: usize) {
    out.extend(std::iter::repeat_n(b' ', 2 * depth));
}

/// A JSON string, escaped as serde_json escapes it.
fn string(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail.
    let _ = ser::Serializer::serialize_str(&mut serde_json::Serializer::new(&mut *out), s);
}

/// Numbers and strings exactly as serde_json writes them (its serializer over the output holds nothing else).
macro_rules! plain {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {{
        ser::Serializer::$method(&mut serde_json::Serializer::new(&mut *$self.out) $(, $arg)*)
    }};
}

/// Integers of a narrower type written as the wider one a `Value` holds them in.
macro_rules! widened {
    ($wide:ident : $to:ty => $($method:ident : $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<(), Error> {
            plain!(self.$wide(<$to>::from(v)))
        }
    )*};
}

impl<'a, 'o> ser::Serializer for &'a mut Sorted<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Array<'a, 'o>;
    type SerializeTuple = Array<'a, 'o>;
    type SerializeTupleStruct = Array<'a, 'o>;
    type SerializeTupleVariant = Array<'a, 'o>;
    type SerializeMap = Object<'a, 'o>;
    type SerializeStruct = Object<'a, 'o>;
    type SerializeStructVariant = Object<'a, 'o>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        plain!(self.serialize_bool(v))
    }
    widened!(serialize_i64: i64 => serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64);
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        // A `Value` holds an i64 or a u64 (serde_json without `arbitrary_precision`).
        if let Ok(v) = i64::try_from(v) {
            plain!(self.serialize_i64(v))
        } else if let Ok(v) = u64::try_from(v) {
            plain!(self.serialize_u64(v))
        } else {
            Err(ser::Error::custom("number out of range"))
        }
    }
    widened!(serialize_u64: u64 => serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64);
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        match u64::try_from(v) {
            Ok(v) => plain!(self.serialize_u64(v)),
            Err(_) => Err(ser::Error::custom("number out of range")),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // A `Value` widens an f32 to f64 (0.1f32 is written 0.10000000149011612), and holds no NaN or infinity.
        plain!(self.serialize_f64(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        // serde_json writes a NaN or an infinity as null, as a `Value` holds it.
        plain!(self.serialize_f64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        plain!(self.serialize_char(v))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        plain!(self.serialize_str(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // A `Value` holds bytes as an array of numbers.
        let mut array = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for byte in v {
            ser::SerializeSeq::serialize_element(&mut array, byte)?;
        }
        ser::SerializeSeq::end(array)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        // `{"Variant": value}`: one member, so already in order.
        let depth = self.depth;
        self.out.push(b'{');
        self.out.push(b'\n');
        indent(self.out, depth + 1);
        string(self.out, variant);
        self.out.extend_from_slice(b": ");
        value.serialize(&mut Sorted {
            out: self.out,
            spare: self.spare,
            depth: depth + 1,
        })?;
        self.out.push(b'\n');
        indent(self.out, depth);
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Array<'a, 'o>, Error> {
        self.out.push(b'[');
        Ok(Array {
            to: self,
            any: false,
            tag: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Array<'a, 'o>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Array<'a, 'o>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Array<'a, 'o>, Error> {
        let tag = self.open_tag(variant);
        let mut array = self.serialize_seq(Some(len))?;
        array.tag = Some(tag);
        Ok(array)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a, 'o>, Error> {
        let start = self.out.len();
        Ok(Object {
            to: self,
            start,
            members: Vec::new(),
            key: None,
            tag: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Object<'a, 'o>, Error> {
        let start = self.out.len();
        Ok(Object {
            to: self,
            start,
            members: Vec::with_capacity(len),
            key: None,
            tag: None,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Object<'a, 'o>, Error> {
        let tag = self.open_tag(variant);
        let mut object = self.serialize_struct(variant, len)?;
        object.tag = Some(tag);
        Ok(object)
    }
}

impl Sorted<'_> {
    /// `{"Variant": ` of a tuple or struct variant, the inner value then nested one level deeper; the depth
    /// to close the tag at.
    fn open_tag(&mut self, variant: &str) -> usize {
        let depth = self.depth;
        self.out.push(b'{');
        self.out.push(b'\n');
        indent(self.out, depth + 1);
        string(self.out, variant);
        self.out.extend_from_slice(b": ");
        self.depth = depth + 1;
        depth
    }

    /// The `}` of a variant's tag opened at `depth` by [`Sorted::open_tag`], once its inner value is written.
    fn close_tag(&mut self, depth: Option<usize>) {
        if let Some(depth) = depth {
            self.depth = depth;
            self.out.push(b'\n');
            indent(self.out, depth);
            self.out.push(b'}');
        }
    }
}

/// An array being written: its elements in the order given.
pub(super) struct Array<'a, 'o> {
    to: &'a mut Sorted<'o>,
    any: bool,
    /// A tuple variant's tag to close after the array (see [`Sorted::open_tag`]).
    tag: Option<usize>,
}

impl ser::SerializeSeq for Array<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let depth = self.to.depth;
        self.to
            .out
            .extend_from_slice(if self.any { b",\n" } else { b"\n" });
        indent(self.to.out, depth + 1);
        self.any = true;
        value.serialize(&mut Sorted {
            out: self.to.out,
            spare: self.to.spare,
            depth: depth + 1,
        })
    }
    fn end(self) -> Result<(), Error> {
        if self.any {
            self.to.out.push(b'\n');
            indent(self.to.out, self.to.depth);
        }
        self.to.out.push(b']');
        self.to.close_tag(self.tag);
        Ok(())
    }
}

impl ser::SerializeTuple for Array<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Array<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

/// An object being written: each member's value is written after the last one's, and [`Object::finish`]
/// puts them in key order when the object ends.
pub(super) struct Object<'a, 'o> {
    to: &'a mut Sorted<'o>,
    /// Where the object's bytes start in the output.
    start: usize,
    /// Each member's key and where its value's bytes are in the output, in the order given.
    members: Vec<(Cow<'static, str>, usize, usize)>,
    /// A map's key given by `serialize_key`, waiting for its value.
    key: Option<String>,
    /// A struct variant's tag to close after the object (see [`Sorted::open_tag`]).
    tag: Option<usize>,
}

impl Object<'_, '_> {
    fn member<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        value: &T,
    ) -> Result<(), Error> {
        let from = self.to.out.len();
        value.serialize(&mut Sorted {
            out: self.to.out,
            spare: self.to.spare,
            depth: self.to.depth + 1,
        })?;
        self.members.push((key, from, self.to.out.len()));
        Ok(())
    }

    /// Replace the members' values, written in the order given, by the object in key order (the last value
    /// of a key given twice, as a `BTreeMap` keeps it).
    fn finish(mut self) -> Result<(), Error> {
        let depth = self.to.depth;
        if self.members.is_empty() {
            self.to.out.truncate(self.start);
            self.to.out.extend_from_slice(b"{}");
            self.to.close_tag(self.tag);
            return Ok(());
        }
        // Stable: of equal keys, the last given ends up last, and is the one kept.
        self.members
            .sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let values = &mut *self.to.spare;
        values.clear();
        values.extend_from_slice(&self.to.out[self.start..]);
        self.to.out.truncate(self.start);
        let out = &mut *self.to.out;
        out.reserve(values.len() + self.members.len() * (2 * depth + 16));
        out.push(b'{');
        let mut first = true;
        for (i, (key, from, to)) in self.members.iter().enumerate() {
            if self.members.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue;
            }
            out.extend_from_slice(if first { b"\n" } else { b",\n" });
            first = false;
            indent(out, depth + 1);
            string(out, key);
            out.extend_from_slice(b": ");
            out.extend_from_slice(&values[from - self.start..to - self.start]);
        }
        out.push(b'\n');
        indent(out, depth);
        out.push(b'}');
        self.to.close_tag(self.tag);
        Ok(())
    }
}

impl ser::SerializeStruct for Object<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.member(Cow::Borrowed(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeMap for Object<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value without its key"))?;
        self.member(Cow::Owned(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for Array<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeStructVariant for Object<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.member(Cow::Borrowed(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// A map key as the text a `Value`'s map holds (serde_json's rules: a string, a `char`, a `bool`, an integer
/// or a finite float as written, a unit variant's name; anything else is an error).
struct KeyText;

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

/// A map's integer key as its text, as a `Value` makes it.
macro_rules! as_text {
    ($($method:ident : $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<String, Error> {
            Ok(v.to_string())
        }
    )*};
}

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(if v { "true" } else { "false" }.to_owned())
    }
    as_text!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128
    );
    fn serialize_f32(self, v: f32) -> Result<String, Error> {
        if v.is_finite() {
            serde_json::to_string(&v)
        } else {
            Err(ser::Error::custom("float key must be finite"))
        }
    }
    fn serialize_f64(self, v: f64) -> Result<String, Error> {
        if v.is_finite() {
            serde_json::to_string(&v)
        } else {
            Err(ser::Error::custom("float key must be finite"))
        }
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;

    use super::super::json_nested::NestedPretty;
    use super::*;

    /// The reference: the `Value`, pretty-printed nested `depth` levels deep as `report::json` did.
    fn through_value<T: Serialize>(value: &T, depth: usize) -> String {
        let mut out = Vec::new();
        serde_json::to_value(value)
            .unwrap()
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut out,
                NestedPretty::at(depth),
            ))
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    fn straight<T: Serialize>(value: &T, depth: usize) -> String {
        let mut out = Vec::new();
        write_sorted_pretty(&mut out, value, depth).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[derive(Serialize)]
    enum Kind {
        Unit,
        Newtype(u8),
        Tuple(i32, &'static str),
        Struct { zeta: bool, alpha: Option<f32> },
        Empty {},
    }

    /// Bytes through `serialize_bytes`, which derive never calls for a `Vec<u8>`.
    struct Raw(&'static [u8]);

    impl Serialize for Raw {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[derive(Serialize)]
    struct Inner {
        z: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        a: Vec<Kind>,
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Whole {
        // Declared out of key order, as the report's structs are.
        zebra: &'static str,
        apple: f64,
        nan: f64,
        narrow: f32,
        big: u128,
        small: i128,
        none: Option<u8>,
        unit: Unit,
        unit_value: (),
        pair: (u8, char),
        empty_list: Vec<u8>,
        empty_map: BTreeMap<String, u8>,
        numbered: HashMap<u32, &'static str>,
        flags: BTreeMap<bool, u8>,
        raw: Raw,
        inner: Inner,
        #[serde(flatten)]
        rest: BTreeMap<&'static str, i8>,
        #[serde(rename = "Ä \"quoted\"\n")]
        escaped: &'static str,
    }

    #[test]
    fn the_bytes_are_those_of_the_sorted_value_at_every_depth() {
        let whole = Whole {
            zebra: "tab\there, \u{1} and é",
            apple: 1.0,
            nan: f64::NAN,
            narrow: 0.1,
            big: u128::from(u64::MAX),
            small: -5,
            none: None,
            unit: Unit,
            unit_value: (),
            pair: (7, 'x'),
            empty_list: Vec::new(),
            empty_map: BTreeMap::new(),
            // Numbered keys sort as text: "10" before "9".
            numbered: HashMap::from([(9, "nine"), (10, "ten"), (100, "hundred")]),
            flags: BTreeMap::from([(true, 1), (false, 0)]),
            raw: Raw(b"\x00\xff"),
            inner: Inner {
                z: 3,
                skipped: None,
                a: vec![
                    Kind::Unit,
                    Kind::Newtype(4),
                    Kind::Tuple(-1, "t"),
                    Kind::Struct {
                        zeta: true,
                        alpha: Some(2.5),
                    },
                    Kind::Struct {
                        zeta: false,
                        alpha: None,
                    },
                    Kind::Empty {},
                ],
            },
            // A flattened key equal to a field's: the `Value` keeps the one given last.
            rest: BTreeMap::from([("apple", 2), ("middle", 1)]),
            escaped: "x",
        };
        for depth in [0, 1, 2, 5] {
            assert_eq!(straight(&whole, depth), through_value(&whole, depth));
        }
        assert!(straight(&whole, 0).contains("\"apple\": 2"));
        assert!(straight(&whole, 0).contains("0.10000000149011612"));
    }

    #[test]
    fn a_key_that_is_no_string_is_refused_as_by_a_value() {
        let map = BTreeMap::from([(vec![1u8], 1u8)]);
        assert!(serde_json::to_value(&map).is_err());
        assert!(write_sorted_pretty(&mut Vec::new(), &map, 0).is_err());
    }
}
