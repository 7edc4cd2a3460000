//! What can go wrong reading a model's header over HTTP, said so the user can act on it: every message is one
//! line naming the URL as typed, the problem and the way out (the flag, the token, the URL form). The commands
//! print it and exit 2; nothing here panics.

use std::fmt;

/// A remote header that could not be read: which URL (as the user typed it) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// The URL as typed (`hf://…`, `ollama://…`, `https://…`).
    pub url: String,
    pub kind: FetchErrorKind,
}

impl FetchError {
    pub fn new(url: &str, kind: FetchErrorKind) -> FetchError {
        FetchError {
            url: url.to_string(),
            kind,
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.kind)
    }
}

impl std::error::Error for FetchError {}

/// Why a remote header was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchErrorKind {
    #[error("not a model URL: {0}")]
    BadUrl(String),
    #[error(
        "this vramdiff was built without the `remote` feature: download the file and give its path"
    )]
    NoRemoteFeature,
    #[error("the server does not answer range requests (it began sending the whole file{}): vramdiff reads only the header, so it stopped; pass --allow-full-download to read the header from the start of the full download", size_note(*.total))]
    NoRanges { total: Option<u64> },
    #[error("the server sent the whole file without its length (no Content-Length): the last tensor's size cannot be known without reading it all")]
    NoLength,
    #[error("HTTP {status}: the model is gated or private{}", token_note(*.hugging_face, *.token_sent))]
    Unauthorized {
        status: u16,
        /// Whether the URL is Hugging Face's (the only host `HF_TOKEN` is sent to).
        hugging_face: bool,
        token_sent: bool,
    },
    #[error("HTTP 404: no such file (check the organisation, repository, revision and file name; a split model is named by its first part, -00001-of-0000N.gguf)")]
    NotFound,
    #[error("HTTP {status} {reason}")]
    Status { status: u16, reason: String },
    #[error("no answer within {0} s (raise it with --timeout SECONDS)")]
    Timeout(u64),
    #[error("the reply was cut: {got} of the {expected} bytes asked for from byte {start} arrived before the connection closed")]
    Cut { start: u64, got: u64, expected: u64 },
    #[error("the server sent a web page (text/html), not the file: for Hugging Face use the /resolve/ URL (or hf://ORG/REPO/FILE.gguf), not /blob/")]
    Html,
    #[error("the server's reply cannot be read: {0}")]
    BadReply(String),
    #[error("more than {0} redirects")]
    TooManyRedirects(u32),
    #[error("cannot connect: {0}")]
    Network(String),
    #[error("the Ollama registry's manifest: {0}")]
    Manifest(String),
}

fn size_note(total: Option<u64>) -> String {
    match total {
        Some(n) => format!(", {n} bytes"),
        None => String::new(),
    }
}

fn token_note(hugging_face: bool, sent: bool) -> &'static str {
    match (hugging_face, sent) {
        (true, true) => ": the token in HF_TOKEN was sent (as `Authorization: Bearer`) and refused; check that it can read this repository and that the model's licence is accepted on its page",
        (true, false) => ": accept the model's licence on its page, then set HF_TOKEN to a Hugging Face access token (sent as `Authorization: Bearer`, to Hugging Face only, not across a redirect)",
        (false, _) => ": vramdiff sends a token (HF_TOKEN) to Hugging Face only; download the file and give its path",
    }
}
