//! A remote file as a `Read` that fetches only what is read: the GGUF reader (`src/gguf/header.rs`) pulls the
//! header front to back and stops after the tensor infos, and each time it reads past what has arrived this
//! asks for the next range, growing — 256 KiB first (most headers), then twice the last, up to 16 MiB — so a
//! header costs a few requests and never the tensor data. The file's length (the last tensor runs to its end)
//! is the total of the first reply's `Content-Range`. A server that ignores `Range` is refused unless
//! `--allow-full-download`, and then its whole-file reply is read only as far as the header goes.

use std::io::{self, Read};

use super::cache::Entry;
use super::client::{Ask, Client, Reply};
use super::error::{FetchError, FetchErrorKind};

/// The first range asked for: the whole header of most models (the vocabulary is most of it).
pub const FIRST_RANGE: u64 = 256 << 10;
/// The largest range asked for at once.
pub const MAX_RANGE: u64 = 16 << 20;

/// A remote file read from its start, as far as the reader goes.
pub struct RemoteFile {
    client: Client,
    /// The URL the bytes come from (after the first reply's redirects; the address as resolved when read from
    /// the cache).
    url: String,
    /// The URL the cache knows it by (before redirects: a CDN's signed URL changes every time).
    key: String,
    len: u64,
    etag: Option<String>,
    content_type: Option<String>,
    /// The file's first bytes, as far as they have arrived.
    bytes: Vec<u8>,
    pos: u64,
    next_range: u64,
    /// `--allow-full-download` on a server without ranges: the whole-file reply, read on demand.
    stream: Option<Box<dyn Read + Send>>,
    /// The fetch error behind an I/O error the reader saw, to report instead of it.
    error: Option<FetchError>,
    /// Bytes received over the network this run, and the requests made.
    fetched: u64,
    requests: u32,
}

/// How a first request went.
pub enum First {
    Fetched(Box<RemoteFile>),
    /// `304 Not Modified`: the cached header stands.
    NotModified,
}

impl RemoteFile {
    /// Ask for the file's first range at `url` (`if_none_match`: the cached ETag, answered 304 when unchanged).
    pub fn open(
        client: Client,
        url: &str,
        allow_full_download: bool,
        if_none_match: Option<&str>,
    ) -> Result<First, FetchError> {
        let ask = Ask {
            range: Some((0, FIRST_RANGE - 1)),
            if_none_match,
            ..Ask::default()
        };
        let mut reply = client.get(url, ask)?;
        let html = reply
            .content_type
            .as_deref()
            .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
        let mut file = RemoteFile {
            url: reply.url.clone(),
            key: url.to_string(),
            len: 0,
            etag: reply.etag.clone(),
            content_type: reply.content_type.clone(),
            bytes: Vec::new(),
            pos: 0,
            next_range: FIRST_RANGE * 2,
            stream: None,
            error: None,
            fetched: 0,
            requests: 1,
            client,
        };
        match reply.status {
            304 if if_none_match.is_some() => Ok(First::NotModified),
            206 => {
                let (start, end, total) = file.content_range(&reply)?;
                if start != 0 || end >= FIRST_RANGE {
                    return Err(file.bad(format!(
                        "asked for bytes 0-{}, got {start}-{end}",
                        FIRST_RANGE - 1
                    )));
                }
                file.len = total;
                let mut reader = reply.body.as_reader();
                file.bytes = file.client.read_exact(&mut reader, 0, end + 1)?;
                file.fetched = file.bytes.len() as u64;
                Ok(First::Fetched(Box::new(file)))
            }
            // Asked past the end: an empty file (the reader says it is not GGUF).
            416 => Ok(First::Fetched(Box::new(file))),
            200 if html => Err(file.client.error(FetchErrorKind::Html)),
            200 if !allow_full_download => Err(file.client.error(FetchErrorKind::NoRanges {
                total: reply.content_length,
            })),
            200 => {
                file.len = reply
                    .content_length
                    .ok_or_else(|| file.client.error(FetchErrorKind::NoLength))?;
                file.stream = Some(Box::new(reply.body.into_reader()));
                Ok(First::Fetched(Box::new(file)))
            }
            status => Err(file.client.error(FetchErrorKind::Status {
                status,
                reason: ureq::http::StatusCode::from_u16(status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("")
                    .to_string(),
            })),
        }
    }

    /// The file as the cache holds it; more is asked of `url` only if the reader goes past the cached bytes.
    pub fn cached(client: Client, url: &str, entry: Entry) -> RemoteFile {
        RemoteFile {
            client,
            url: url.to_string(),
            key: url.to_string(),
            len: entry.len,
            etag: entry.etag,
            content_type: None,
            next_range: (entry.bytes.len() as u64).max(FIRST_RANGE),
            bytes: entry.bytes,
            pos: 0,
            stream: None,
            error: None,
            fetched: 0,
            requests: 0,
        }
    }

    /// The same file, counting `n` requests already made for it (the conditional one the cache asked).
    pub fn asked(mut self, n: u32) -> RemoteFile {
        self.requests += n;
        self
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address as the user typed it.
    pub fn shown(&self) -> &str {
        &self.client.shown
    }

    /// Bytes received over the network this run.
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    /// Requests made this run.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// Whether the server said the reply is a web page.
    pub fn is_html(&self) -> bool {
        self.content_type
            .as_deref()
            .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"))
    }

    /// The fetch error behind the last failed read, if one was.
    pub fn take_error(&mut self) -> Option<FetchError> {
        self.error.take()
    }

    /// What the cache keeps of the file once its header is read: its bytes so far, its length and ETag
    /// (`None` when nothing new arrived this run).
    pub fn to_cache(&self) -> Option<(String, Entry)> {
        (self.fetched > 0).then(|| {
            (
                self.key.clone(),
                Entry {
                    url: self.key.clone(),
                    etag: self.etag.clone(),
                    len: self.len,
                    bytes: self.bytes.clone(),
                },
            )
        })
    }

    fn bad(&self, what: String) -> FetchError {
        self.client.error(FetchErrorKind::BadReply(what))
    }

    /// `Content-Range: bytes START-END/TOTAL`.
    fn content_range(&self, reply: &Reply) -> Result<(u64, u64, u64), FetchError> {
        let Some(text) = reply.content_range.as_deref() else {
            return Err(self.bad("a partial reply (206) without Content-Range".into()));
        };
        let parsed = text
            .trim()
            .strip_prefix("bytes ")
            .and_then(|r| r.split_once('/'))
            .and_then(|(span, total)| {
                let (a, b) = span.split_once('-')?;
                let a: u64 = a.trim().parse().ok()?;
                let b: u64 = b.trim().parse().ok()?;
                let total: u64 = total.trim().parse().ok()?;
                (a <= b && b < total).then_some((a, b, total))
            });
        parsed.ok_or_else(|| {
            self.bad(format!(
                "Content-Range {text:?} (a span and the file's total length expected)"
            ))
        })
    }

    /// Fetch the bytes after those that have arrived.
    fn more(&mut self) -> Result<(), FetchError> {
        let start = self.bytes.len() as u64;
        let size = self.next_range.min(self.len - start);
        if let Some(stream) = self.stream.as_mut() {
            let got = self.client.read_exact(stream.as_mut(), start, size)?;
            self.fetched += got.len() as u64;
            self.bytes.extend_from_slice(&got);
            self.next_range = (self.next_range * 2).min(MAX_RANGE);
            return Ok(());
        }
        let ask = Ask {
            range: Some((start, start + size - 1)),
            ..Ask::default()
        };
        self.requests += 1;
        let mut reply = self.client.get(&self.url, ask)?;
        if reply.status != 206 {
            return Err(self.bad(format!(
                "HTTP {} to a range request for bytes {start}-, after a partial reply for the first bytes",
                reply.status
            )));
        }
        if reply.etag.is_some() && self.etag.is_some() && reply.etag != self.etag {
            return Err(self.bad(
                "the file changed while its header was read (another ETag): run again".into(),
            ));
        }
        let (a, b, total) = self.content_range(&reply)?;
        if a != start || total != self.len || b + 1 > start + size {
            return Err(self.bad(format!(
                "asked for bytes {start}-{} of {}, got {a}-{b} of {total}",
                start + size - 1,
                self.len
            )));
        }
        self.url = reply.url.clone();
        let mut reader = reply.body.as_reader();
        let got = self.client.read_exact(&mut reader, start, b + 1 - a)?;
        self.fetched += got.len() as u64;
        self.bytes.extend_from_slice(&got);
        self.next_range = (self.next_range * 2).min(MAX_RANGE);
        Ok(())
    }
}

impl Read for RemoteFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        if self.pos >= self.bytes.len() as u64 {
            if let Err(e) = self.more() {
                let message = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(message));
            }
        }
        let at = self.pos as usize;
        let n = buf.len().min(self.bytes.len() - at);
        buf[..n].copy_from_slice(&self.bytes[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}
