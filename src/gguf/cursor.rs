//! The header is read front to back through a buffered reader, a few bytes at a time: the tensor data that
//! follows (gigabytes) is never read nor mapped. Every read is checked against the bytes the file still holds
//! before anything is allocated, so a length or a count from a hostile header cannot make the reader allocate
//! more than the file could back — and never more than [`MAX_HEADER_BYTES`] in total, which a sparse file of any
//! apparent size cannot lift. Fixed-width fields are decoded with nom's little-endian parsers.

use std::io::{BufRead, BufReader, Read};

use nom::number::complete::{le_f32, le_f64, le_i16, le_i32, le_i64, le_u16, le_u32, le_u64};

use super::error::{GgufError, GgufErrorKind};
use super::value::Detail;

/// The most header bytes (metadata and tensor infos) the reader accepts. Real headers are a few MB (the largest
/// are tokenizers with ~260 k tokens and merges); 64 MiB bounds what a hostile header can make the reader hold.
pub const MAX_HEADER_BYTES: u64 = 64 << 20;

/// A position in a GGUF file being read, with the file's length to check every read against.
pub struct Cursor<R: Read> {
    reader: BufReader<R>,
    path: String,
    pos: u64,
    len: u64,
    detail: Detail,
}

/// A fixed-width little-endian number that nom can decode.
pub trait Number: Sized + Copy {
    const WIDTH: usize;
    fn decode(bytes: &[u8]) -> Self;
}

macro_rules! number {
    ($t:ty, $width:expr, $parser:ident) => {
        impl Number for $t {
            const WIDTH: usize = $width;
            fn decode(bytes: &[u8]) -> Self {
                // The caller hands exactly WIDTH bytes, so the complete parser cannot fail; 0 keeps it total.
                $parser::<_, nom::error::Error<&[u8]>>(bytes)
                    .map(|(_, v)| v)
                    .unwrap_or_default()
            }
        }
    };
}

number!(u16, 2, le_u16);
number!(i16, 2, le_i16);
number!(u32, 4, le_u32);
number!(i32, 4, le_i32);
number!(u64, 8, le_u64);
number!(i64, 8, le_i64);
number!(f32, 4, le_f32);
number!(f64, 8, le_f64);

impl Number for u8 {
    const WIDTH: usize = 1;
    fn decode(bytes: &[u8]) -> Self {
        bytes.first().copied().unwrap_or_default()
    }
}

impl Number for i8 {
    const WIDTH: usize = 1;
    fn decode(bytes: &[u8]) -> Self {
        bytes.first().map(|&b| b as i8).unwrap_or_default()
    }
}

impl<R: Read> Cursor<R> {
    /// A cursor at the start of a file of `len` bytes.
    pub fn new(reader: R, len: u64, path: &str, detail: Detail) -> Cursor<R> {
        Cursor {
            reader: BufReader::with_capacity(64 << 10, reader),
            path: path.to_string(),
            pos: 0,
            len,
            detail,
        }
    }

    /// How much of the metadata this read keeps.
    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// Bytes read so far: the offset of the next read.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The file's length.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// Bytes left after the position.
    pub fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// An error at `offset`.
    pub fn error_at(&self, offset: u64, kind: GgufErrorKind) -> GgufError {
        GgufError {
            path: self.path.clone(),
            offset,
            kind,
        }
    }

    /// An error at the current position.
    pub fn error(&self, kind: GgufErrorKind) -> GgufError {
        self.error_at(self.pos, kind)
    }

    /// Refuse a read of `needed` bytes the file does not hold, or that would take the header past its limit.
    fn check(&self, needed: u64, what: &'static str) -> Result<(), GgufError> {
        if needed > self.remaining() {
            return Err(self.error(GgufErrorKind::Truncated {
                what,
                needed,
                remaining: self.remaining(),
            }));
        }
        if self.pos.saturating_add(needed) > MAX_HEADER_BYTES {
            return Err(self.error(GgufErrorKind::TooLarge {
                what: "a header",
                count: self.pos.saturating_add(needed),
                limit: MAX_HEADER_BYTES,
            }));
        }
        Ok(())
    }

    /// Refuse a count of items of at least `min_width` bytes each that the rest of the file cannot hold.
    pub fn check_count(
        &self,
        count: u64,
        min_width: u64,
        what: &'static str,
    ) -> Result<(), GgufError> {
        if count.saturating_mul(min_width) > self.remaining() {
            return Err(self.error(GgufErrorKind::CountPastEnd {
                what,
                count,
                remaining: self.remaining(),
            }));
        }
        Ok(())
    }

    /// Exactly `n` bytes, checked against the file's length first.
    pub fn bytes(&mut self, n: u64, what: &'static str) -> Result<Vec<u8>, GgufError> {
        self.check(n, what)?;
        // `check` bounds n by the header limit, so it fits in memory and in usize.
        let mut buf = vec![0u8; n as usize];
        self.fill(&mut buf, what)?;
        Ok(buf)
    }

    fn fill(&mut self, buf: &mut [u8], what: &'static str) -> Result<(), GgufError> {
        match self.reader.read_exact(buf) {
            Ok(()) => {
                self.pos += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(self.error(GgufErrorKind::Truncated {
                    what,
                    needed: buf.len() as u64,
                    remaining: 0,
                }))
            }
            Err(e) => Err(self.error(GgufErrorKind::Io(e.to_string()))),
        }
    }

    /// One little-endian number.
    pub fn number<T: Number>(&mut self, what: &'static str) -> Result<T, GgufError> {
        self.check(T::WIDTH as u64, what)?;
        let mut buf = [0u8; 8];
        let buf = &mut buf[..T::WIDTH];
        self.fill(buf, what)?;
        Ok(T::decode(buf))
    }

    /// `count` little-endian numbers, read as one block and decoded by nom.
    pub fn numbers<T: Number>(
        &mut self,
        count: u64,
        what: &'static str,
    ) -> Result<Vec<T>, GgufError> {
        self.check_count(count, T::WIDTH as u64, what)?;
        let raw = self.bytes(count * T::WIDTH as u64, what)?;
        Ok(raw.chunks_exact(T::WIDTH).map(T::decode).collect())
    }

    /// A GGUF string: a u64 length, then that many bytes of UTF-8 (invalid sequences become U+FFFD).
    pub fn string(&mut self, what: &'static str) -> Result<String, GgufError> {
        let mut out = String::new();
        self.string_with(&mut Vec::new(), what, |b| {
            out = String::from_utf8_lossy(b).into_owned()
        })?;
        Ok(out)
    }

    /// A GGUF string's bytes, handed to `use_bytes`: straight from the read buffer when they are in it (no copy),
    /// else through `scratch` (reused across an array's strings).
    pub fn string_with(
        &mut self,
        scratch: &mut Vec<u8>,
        what: &'static str,
        use_bytes: impl FnOnce(&[u8]),
    ) -> Result<(), GgufError> {
        let start = self.pos;
        let n: u64 = self.number(what)?;
        if n > self.remaining() {
            return Err(self.error_at(
                start,
                GgufErrorKind::CountPastEnd {
                    what: "a string length",
                    count: n,
                    remaining: self.remaining(),
                },
            ));
        }
        self.check(n, what)?;
        // `check` bounds n by the header limit.
        let n = n as usize;
        let buffered = self.reader.buffer();
        if buffered.len() >= n {
            use_bytes(&buffered[..n]);
            self.reader.consume(n);
            self.pos += n as u64;
            return Ok(());
        }
        scratch.clear();
        scratch.resize(n, 0);
        self.fill(scratch, what)?;
        use_bytes(scratch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_little_endian() {
        let bytes = [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0xff];
        let mut c = Cursor::new(&bytes[..], bytes.len() as u64, "t", Detail::Everything);
        assert_eq!(c.number::<u32>("a").unwrap(), 1);
        assert_eq!(c.number::<u64>("b").unwrap(), 2);
        assert_eq!(c.number::<i8>("c").unwrap(), -1);
        assert_eq!(c.position(), 13);
        let e = c.number::<u8>("d").unwrap_err();
        assert_eq!(e.offset, 13);
    }

    #[test]
    fn a_string_longer_than_the_file_is_refused_before_allocating() {
        let mut bytes = u64::MAX.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        let mut c = Cursor::new(&bytes[..], bytes.len() as u64, "t", Detail::Everything);
        let e = c.string("a key").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(matches!(e.kind, GgufErrorKind::CountPastEnd { .. }), "{e}");
    }
}
