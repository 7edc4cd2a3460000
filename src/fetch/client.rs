//! One HTTP GET, as the range reader and the Ollama manifest need it: ureq (rustls, no OpenSSL) with the
//! redirects followed here rather than by ureq, so that the `Range` and `If-None-Match` headers go along to the
//! CDN a Hugging Face `/resolve/` URL redirects to, while the token (`Authorization: Bearer`) goes only to the
//! origin the user named and is dropped on a redirect to any other host.

use std::io::Read;
use std::time::Duration;

use super::error::{FetchError, FetchErrorKind};
use super::url::{join, origin};

/// The most redirects followed for one request (Hugging Face uses one).
pub const MAX_REDIRECTS: u32 = 10;

/// An HTTP client for one address: the token and whom it may be sent to, the timeout.
pub struct Client {
    agent: ureq::Agent,
    /// The address as typed, for the messages.
    pub shown: String,
    /// `HF_TOKEN`, sent only to `token_origin`.
    token: Option<String>,
    token_origin: String,
    /// Whether the first URL is Hugging Face's (the one host a token is for).
    hugging_face: bool,
    timeout: Duration,
}

/// What to ask for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ask<'a> {
    /// `Range: bytes=START-END` (inclusive).
    pub range: Option<(u64, u64)>,
    pub accept: Option<&'a str>,
    pub if_none_match: Option<&'a str>,
}

/// A reply, after the redirects.
pub struct Reply {
    pub status: u16,
    /// The URL that answered (after the redirects): where the next ranges are asked for.
    pub url: String,
    pub content_range: Option<String>,
    pub content_length: Option<u64>,
    pub content_type: Option<String>,
    pub etag: Option<String>,
    pub body: ureq::Body,
}

impl Client {
    /// A client for the address `shown`, whose first URL is `first`; `token` (when `first` is Hugging Face's)
    /// goes to `first`'s origin only.
    pub fn new(
        shown: &str,
        first: &str,
        token: Option<String>,
        hugging_face: bool,
        timeout: Duration,
    ) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(timeout))
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
            .user_agent(concat!("vramdiff/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent: config.new_agent(),
            shown: shown.to_string(),
            token,
            token_origin: origin(first),
            hugging_face,
            timeout,
        }
    }

    /// Whether a token is set.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// An error about this address.
    pub fn error(&self, kind: FetchErrorKind) -> FetchError {
        FetchError::new(&self.shown, kind)
    }

    /// The timeout's error.
    pub fn timed_out(&self) -> FetchError {
        self.error(FetchErrorKind::Timeout(self.timeout.as_secs()))
    }

    /// GET `url`, following redirects; an error status is a reply (the caller knows what it means).
    pub fn get(&self, url: &str, ask: Ask<'_>) -> Result<Reply, FetchError> {
        let mut url = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let mut request = self.agent.get(&url);
            if let Some((start, end)) = ask.range {
                request = request.header("Range", format!("bytes={start}-{end}"));
            }
            if let Some(accept) = ask.accept {
                request = request.header("Accept", accept);
            }
            if let Some(tag) = ask.if_none_match {
                request = request.header("If-None-Match", tag);
            }
            let token_sent = match &self.token {
                Some(token) if origin(&url) == self.token_origin => {
                    request = request.header("Authorization", format!("Bearer {token}"));
                    true
                }
                _ => false,
            };
            let response = request.call().map_err(|e| self.call_error(e))?;
            let status = response.status().as_u16();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let Some(location) = header("location") else {
                    return Err(self.error(FetchErrorKind::BadReply(format!(
                        "HTTP {status} without a Location"
                    ))));
                };
                url = join(&url, &location);
                continue;
            }
            if status == 401 || status == 403 {
                return Err(self.error(FetchErrorKind::Unauthorized {
                    status,
                    hugging_face: self.hugging_face,
                    token_sent,
                }));
            }
            if status == 404 {
                return Err(self.error(FetchErrorKind::NotFound));
            }
            let reply = Reply {
                status,
                content_range: header("content-range"),
                content_length: header("content-length").and_then(|v| v.trim().parse().ok()),
                content_type: header("content-type"),
                etag: header("etag"),
                url,
                body: response.into_body(),
            };
            return Ok(reply);
        }
        Err(self.error(FetchErrorKind::TooManyRedirects(MAX_REDIRECTS)))
    }

    fn call_error(&self, e: ureq::Error) -> FetchError {
        match e {
            ureq::Error::Timeout(_) => self.timed_out(),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => self.timed_out(),
            ureq::Error::TooManyRedirects => {
                self.error(FetchErrorKind::TooManyRedirects(MAX_REDIRECTS))
            }
            other => self.error(FetchErrorKind::Network(one_line(&other.to_string()))),
        }
    }

    /// Read exactly `expected` bytes from `reader` (a range's body, or the next part of a whole file's),
    /// starting at `start` in the file: fewer is a cut reply, a stall is the timeout.
    pub fn read_exact(
        &self,
        reader: &mut dyn Read,
        start: u64,
        expected: u64,
    ) -> Result<Vec<u8>, FetchError> {
        let mut out = Vec::with_capacity(expected.min(64 << 20) as usize);
        let mut buf = [0u8; 64 << 10];
        while (out.len() as u64) < expected {
            let want = (expected - out.len() as u64).min(buf.len() as u64) as usize;
            match reader.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(self.timed_out()),
                Err(_) => break,
            }
        }
        if (out.len() as u64) < expected {
            return Err(self.error(FetchErrorKind::Cut {
                start,
                got: out.len() as u64,
                expected,
            }));
        }
        Ok(out)
    }
}

/// A message on one line.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
