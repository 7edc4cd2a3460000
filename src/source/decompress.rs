//! Transparent decompression of gzip and zstd inputs, with a cap on the expansion ratio.
//!
//! Logs are often shipped compressed (`journalctl … | gzip`, logrotate's `.gz`, `zstd`-compressed bundles),
//! and the batch command reads whatever files a folder holds, so every input is sniffed: a stream that
//! starts with the gzip (`1f 8b`) or zstd (`28 b5 2f fd`) magic is decompressed, whatever its name. Several
//! gzip members or zstd frames one after the other are read as one stream, as `zcat` does.
//!
//! A decompression bomb (a small file that expands to terabytes) cannot exhaust memory here — lines are
//! streamed and cut at 1 MiB — but it can keep vramdiff busy for hours. So decompression stops with an
//! error once the output is larger than [`BOMB_MIN_OUTPUT`] (1 GiB) **and** larger than [`BOMB_MAX_RATIO`]
//! (100) times the compressed bytes read so far. Real logs compress 5–30× (gzip) or up to ~60× (zstd
//! -19); a file of zeros compresses about 1000× with gzip (deflate's ceiling is 1032×) and far more with
//! zstd, so a ratio of 1000 would let a gzip bomb through. A genuine file past the cap can still be read
//! by decompressing it first: `zcat big.log.gz | vramdiff`.

use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Decompressed output below this size is never refused, whatever the ratio.
pub const BOMB_MIN_OUTPUT: u64 = 1 << 30;
/// Past [`BOMB_MIN_OUTPUT`], output larger than this many times the compressed bytes read is refused.
pub const BOMB_MAX_RATIO: u64 = 100;

/// What a stream's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// Recognise the magic at the start of a stream.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// Return `inner` as it is, or decompressing when it starts with a gzip or zstd magic. The first four
/// bytes are read to decide (fewer at the end of a short stream) and given back in front of the stream.
pub fn transparent<R: Read + Send + 'static>(inner: R) -> io::Result<Box<dyn Read + Send>> {
    transparent_with(inner, BOMB_MIN_OUTPUT, BOMB_MAX_RATIO)
}

/// [`transparent`] with explicit bomb limits (tests use small ones).
pub fn transparent_with<R: Read + Send + 'static>(
    mut inner: R,
    min_output: u64,
    max_ratio: u64,
) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(4);
    (&mut inner).take(4).read_to_end(&mut head)?;
    // A pipe may deliver fewer bytes per read; `take(4).read_to_end` keeps reading until 4 or the end.
    let kind = Compression::sniff(&head);
    let raw = io::Cursor::new(head).chain(inner);
    if kind == Compression::None {
        return Ok(Box::new(raw));
    }
    let read = Arc::new(AtomicU64::new(0));
    let counted = BufReader::with_capacity(
        64 * 1024,
        Counted {
            inner: raw,
            read: read.clone(),
        },
    );
    let decoder: Box<dyn Read + Send> = match kind {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(counted)?),
        Compression::None => unreachable!("returned above"),
    };
    Ok(Box::new(Capped {
        inner: decoder,
        kind,
        compressed: read,
        output: 0,
        min_output,
        max_ratio,
    }))
}

/// Counts the compressed bytes the decoder has pulled.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Stops a decoder whose output outgrows the bomb limits.
struct Capped<D> {
    inner: D,
    kind: Compression,
    compressed: Arc<AtomicU64>,
    output: u64,
    min_output: u64,
    max_ratio: u64,
}

impl<D: Read> Read for Capped<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.output += n as u64;
        let compressed = self.compressed.load(Ordering::Relaxed).max(1);
        if self.output > self.min_output && self.output / compressed >= self.max_ratio {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} data expands more than {}× ({} bytes out of {} compressed bytes read): stopped as a \
                     likely decompression bomb; if the file is genuine, decompress it first and pipe it in",
                    self.kind.as_str(),
                    self.max_ratio,
                    self.output,
                    compressed
                ),
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(r: &mut dyn Read) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn plain_text_passes_through_even_when_shorter_than_a_magic() {
        for text in [&b""[..], b"a", b"\x1f", b"load_tensors: CUDA0\n"] {
            let mut r = transparent(io::Cursor::new(text.to_vec())).unwrap();
            assert_eq!(read_all(&mut r).unwrap(), text);
        }
    }

    #[test]
    fn gzip_members_and_zstd_frames_are_read_as_one_stream() {
        let mut gz = gzip(b"line one\n");
        gz.extend(gzip(b"line two\n"));
        let mut r = transparent(io::Cursor::new(gz)).unwrap();
        assert_eq!(read_all(&mut r).unwrap(), b"line one\nline two\n");

        let mut zs = zstd::encode_all(&b"line one\n"[..], 3).unwrap();
        zs.extend(zstd::encode_all(&b"line two\n"[..], 3).unwrap());
        let mut r = transparent(io::Cursor::new(zs)).unwrap();
        assert_eq!(read_all(&mut r).unwrap(), b"line one\nline two\n");
    }

    #[test]
    fn a_bomb_is_stopped_once_past_both_limits() {
        let member = gzip(&vec![0u8; 1 << 20]);
        let bomb: Vec<u8> = member.repeat(8);
        let mut r = transparent_with(io::Cursor::new(bomb.clone()), 4 << 20, 100).unwrap();
        let e = read_all(&mut r).unwrap_err();
        assert!(e.to_string().contains("decompression bomb"), "{e}");
        // Under the output floor the same ratio is fine.
        let mut r = transparent_with(io::Cursor::new(bomb), 16 << 20, 100).unwrap();
        assert_eq!(read_all(&mut r).unwrap().len(), 8 << 20);
    }

    #[test]
    fn a_cut_gzip_stream_is_an_error_not_a_silent_end() {
        let gz = gzip(&b"load_tensors: CUDA0 model buffer size = 1.00 MiB\n".repeat(100));
        let mut r = transparent(io::Cursor::new(gz[..gz.len() / 2].to_vec())).unwrap();
        assert!(read_all(&mut r).is_err());
    }
}
