//! serde_json's pretty printer, started some levels deep: the JSON report is written one input and one load at
//! a time (`super::json`, `super::streamed`), each element as it stands inside the whole document. Printing
//! an element on its own and indenting each of its lines after would copy every byte of the report twice;
//! this writes it indented in one pass, byte for byte what `serde_json::to_vec_pretty` gives for the element
//! in its place (two spaces a level, `": "` between key and value; the test below compares the two).

use std::io::{self, Write};

use serde_json::ser::Formatter;

/// `serde_json::ser::PrettyFormatter` with two spaces a level, starting at `depth` levels.
pub(super) struct NestedPretty {
    depth: usize,
    has_value: bool,
}

impl NestedPretty {
    pub(super) fn at(depth: usize) -> NestedPretty {
        NestedPretty {
            depth,
            has_value: false,
        }
    }

    fn value_written(&mut self) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn new_line<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        indent(writer, self.depth)
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            writer.write_all(b"\n")?;
            indent(writer, self.depth)?;
        }
        writer.write_all(bracket)
    }
}

fn indent<W: ?Sized + Write>(writer: &mut W, depth: usize) -> io::Result<()> {
    const SPACES: &[u8] = &[b' '; 64];
    let mut left = 2 * depth;
    while left > 0 {
        let n = left.min(SPACES.len());
        writer.write_all(&SPACES[..n])?;
        left -= n;
    }
    Ok(())
}

impl Formatter for NestedPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.value_written()
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.value_written()
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::{json, Value};

    use super::NestedPretty;

    fn nested(value: &Value, depth: usize) -> String {
        let mut out = Vec::new();
        value
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut out,
                NestedPretty::at(depth),
            ))
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    /// At depth 0 the bytes are `to_vec_pretty`'s; deeper, each line after the first is indented two spaces a
    /// level more, as the whole document's printer puts them (empty arrays and objects stay `[]` and `{}`).
    #[test]
    fn nested_printing_is_the_pretty_printers_indented() {
        let value = json!({
            "b": [1, {"c": [], "d": {}}, "x\ny"],
            "a": {"e": null, "f": [true, 2.5]},
            "z": 80,
        });
        let pretty = String::from_utf8(serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        assert_eq!(nested(&value, 0), pretty);
        for depth in [1, 2, 40] {
            let indented = pretty.replace('\n', &format!("\n{}", "  ".repeat(depth)));
            assert_eq!(nested(&value, depth), indented, "depth {depth}");
        }
        assert_eq!(nested(&json!([]), 3), "[]");
        assert_eq!(nested(&json!("s"), 3), "\"s\"");
    }
}
