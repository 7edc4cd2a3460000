//! Opening inputs and reading them as physical lines, with bounded memory.
//!
//! Files and stdin are read as byte streams. gzip and zstd streams are decompressed whatever their name
//! (see [`decompress`], which also caps the expansion ratio against decompression bombs). A UTF-16 byte-order mark (what Windows PowerShell's `>` writes)
//! is detected and the stream transcoded to UTF-8; anything else is passed through as bytes (invalid UTF-8 is
//! decoded lossily later, by the framer). Lines longer than [`MAX_LINE_BYTES`] are cut: the first part is
//! kept and parsed, the rest skipped, and the cut is reported with its line number.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use encoding_rs_io::DecodeReaderBytesBuilder;

pub mod decompress;
pub mod diff_sides;
pub mod excerpt;
pub mod follow;

/// The longest physical line kept whole. Real log lines are under 64 KiB (the longest we have seen, the
/// `server config` environment dump, is about 3 KiB); a longer line is kept up to this length.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Why an input could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: is a directory (give the log files inside it, or use `vramdiff batch` for folders)")]
    IsDirectory { path: String },
    #[error("{path}: {source}")]
    Open { path: String, source: io::Error },
}

/// An opened input: its display name and a buffered byte stream.
pub struct Input {
    pub name: String,
    pub reader: Box<dyn BufRead + Send>,
}

/// Open a path (`-` is stdin) for reading: gzip/zstd decompressed (sniffed by magic bytes), UTF-16 with a
/// byte-order mark transcoded to UTF-8.
pub fn open(path: &str) -> Result<Input, SourceError> {
    if path == "-" {
        let name = "<stdin>".to_string();
        let reader = decompress::transparent(io::stdin()).map_err(|source| SourceError::Open {
            path: name.clone(),
            source,
        })?;
        return Ok(Input {
            name,
            reader: decoded(reader),
        });
    }
    let p = Path::new(path);
    if p.is_dir() {
        return Err(SourceError::IsDirectory {
            path: path.to_string(),
        });
    }
    let opened = File::open(p).and_then(decompress::transparent);
    let reader = opened.map_err(|source| SourceError::Open {
        path: path.to_string(),
        source,
    })?;
    Ok(Input {
        name: path.to_string(),
        reader: decoded(reader),
    })
}

/// Wrap any byte stream: BOM sniffing for UTF-16/UTF-8, bytes passed through untouched otherwise.
pub fn decoded<R: Read + Send + 'static>(inner: R) -> Box<dyn BufRead + Send> {
    let decoder = DecodeReaderBytesBuilder::new()
        .bom_sniffing(true)
        .utf8_passthru(true)
        .build(inner);
    Box::new(BufReader::with_capacity(256 * 1024, decoder))
}

/// One physical line as read.
#[derive(Debug, Default)]
pub struct PhysicalLine {
    /// The bytes, without the line terminator; at most [`MAX_LINE_BYTES`].
    pub bytes: Vec<u8>,
    /// 1-based line number.
    pub number: u64,
    /// How many bytes were cut off the end because the line was too long.
    pub cut_bytes: u64,
}

/// Reads physical lines from a stream into a reused buffer.
pub struct LineReader<R> {
    reader: R,
    number: u64,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R) -> Self {
        LineReader { reader, number: 0 }
    }

    /// Read the next line into `line`; `Ok(false)` at the end of the stream.
    pub fn next_line(&mut self, line: &mut PhysicalLine) -> io::Result<bool> {
        line.bytes.clear();
        line.cut_bytes = 0;
        let mut saw_any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(line.bytes.len());
            let keep = chunk.len().min(room);
            line.bytes.extend_from_slice(&chunk[..keep]);
            line.cut_bytes += (chunk.len() - keep) as u64;
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                break;
            }
        }
        if !saw_any {
            return Ok(false);
        }
        if line.bytes.last() == Some(&b'\r') {
            line.bytes.pop();
        }
        self.number += 1;
        line.number = self.number;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let mut r = LineReader::new(io::Cursor::new(input.to_vec()));
        let mut out = Vec::new();
        let mut l = PhysicalLine::default();
        while r.next_line(&mut l).unwrap() {
            out.push((l.number, l.bytes.clone()));
        }
        out
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        assert_eq!(
            lines(b"a\r\nb\r\nc"),
            vec![(1, b"a".to_vec()), (2, b"b".to_vec()), (3, b"c".to_vec())]
        );
    }

    #[test]
    fn utf16_with_bom_is_transcoded() {
        let text = "load_tensors: CUDA0 model buffer size =  1.00 MiB\r\n";
        let mut bytes = vec![0xFF, 0xFE];
        for unit in text.encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        let mut r = LineReader::new(decoded(io::Cursor::new(bytes)));
        let mut l = PhysicalLine::default();
        assert!(r.next_line(&mut l).unwrap());
        assert_eq!(String::from_utf8(l.bytes.clone()).unwrap(), text.trim_end());
    }

    #[test]
    fn invalid_utf8_passes_through_as_bytes() {
        let got = lines(b"ok\n\xff\xfe\xfd bad\n");
        assert_eq!(got[1].1, b"\xff\xfe\xfd bad".to_vec());
    }
}
