//! A model's GGUF header over HTTP(S), so "will it fit?" is answered before the download: `vramdiff inspect
//! URL` and `--gguf URL`. A source-like stage beside `source`: it turns an address (`url`: `https://`, `hf://`,
//! `ollama://`) into the bytes of the file's start, fetched in growing range requests (`range`) through one
//! client (`client`, ureq with rustls), remembered in a cache (`cache`), with errors a user can act on
//! (`error`). It knows nothing of GGUF: the `gguf` stage reads the header from a [`RemoteFile`] as from any
//! byte source, and the reading stops when the header does. Nothing of the crate is imported here.
//!
//! Without the `remote` cargo feature (on by default) the addresses are still recognised, and refused in one
//! line.

pub mod cache;
pub mod error;
pub mod url;

#[cfg(feature = "remote")]
pub mod client;
#[cfg(feature = "remote")]
pub mod ollama;
#[cfg(feature = "remote")]
pub mod range;

use std::path::PathBuf;
use std::time::Duration;

pub use error::{FetchError, FetchErrorKind};
#[cfg(feature = "remote")]
pub use range::RemoteFile;
pub use url::{is_remote, Endpoints};

/// The timeout of each connection and each wait for bytes, unless `--timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How to fetch, decided once per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchOptions {
    /// Each connection's and each read's timeout (`--timeout`).
    pub timeout: Duration,
    /// `--allow-full-download`: read a server without ranges from the start of its whole-file reply.
    pub allow_full_download: bool,
    /// `$HF_TOKEN`: sent as `Authorization: Bearer` to the Hugging Face endpoint only.
    pub token: Option<String>,
    /// The header cache's folder (`None`: `--no-cache`, or no folder could be named).
    pub cache_dir: Option<PathBuf>,
    pub endpoints: Endpoints,
}

impl Default for FetchOptions {
    /// No token, no cache, the public endpoints: what a library caller gets unless it asks.
    fn default() -> FetchOptions {
        FetchOptions {
            timeout: DEFAULT_TIMEOUT,
            allow_full_download: false,
            token: None,
            cache_dir: None,
            endpoints: Endpoints::default(),
        }
    }
}

impl FetchOptions {
    /// The options with the token (`$HF_TOKEN`), the cache folder and the endpoints from the environment.
    pub fn from_environment(
        timeout: Duration,
        allow_full_download: bool,
        cache: bool,
    ) -> FetchOptions {
        FetchOptions {
            timeout,
            allow_full_download,
            token: std::env::var("HF_TOKEN")
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
            cache_dir: if cache { cache::default_dir() } else { None },
            endpoints: Endpoints::from_environment(),
        }
    }
}

/// Where an address's bytes are: the model file's URL, and an Ollama model's projector blob when its manifest
/// has one (a vision model's `application/vnd.ollama.image.projector` layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub url: String,
    pub projector: Option<String>,
}

/// The URLs `address` names (for `ollama://`, after reading the registry's manifest).
#[cfg(feature = "remote")]
pub fn locate(address: &str, options: &FetchOptions) -> Result<Located, FetchError> {
    match url::parse(address, &options.endpoints)? {
        url::Target::File(url) => Ok(Located {
            url,
            projector: None,
        }),
        url::Target::Ollama { manifest, blobs } => {
            let client = client::Client::new(address, &manifest, None, false, options.timeout);
            let layers = ollama::blobs(&client, &manifest, &blobs)?;
            Ok(Located {
                url: layers.model,
                projector: layers.projector,
            })
        }
    }
}

/// Open the file `address` names, from its first bytes (the cache's when they stand).
#[cfg(feature = "remote")]
pub fn open(address: &str, options: &FetchOptions) -> Result<RemoteFile, FetchError> {
    let located = locate(address, options)?;
    open_url(address, &located.url, options)
}

/// Open the file at `url` (shown as `address`), from its first bytes (the cache's when they stand).
#[cfg(feature = "remote")]
pub fn open_url(
    address: &str,
    url: &str,
    options: &FetchOptions,
) -> Result<RemoteFile, FetchError> {
    use client::Client;
    let url = url.to_string();
    // The token is Hugging Face's: it goes to its endpoint only, never to another server named in a URL.
    let hugging_face = url::origin(&url) == url::origin(&options.endpoints.hf);
    let token = options.token.clone().filter(|_| hugging_face);
    let client = || Client::new(address, &url, token.clone(), hugging_face, options.timeout);
    let allow = options.allow_full_download;
    if let Some(entry) = options
        .cache_dir
        .as_deref()
        .and_then(|d| cache::get(d, &url))
    {
        if url::is_immutable(&url) {
            return Ok(RemoteFile::cached(client(), &url, entry));
        }
        if let Some(tag) = entry.etag.clone() {
            return match RemoteFile::open(client(), &url, allow, Some(&tag))? {
                range::First::NotModified => Ok(RemoteFile::cached(client(), &url, entry).asked(1)),
                range::First::Fetched(file) => Ok(*file),
            };
        }
    }
    match RemoteFile::open(client(), &url, allow, None)? {
        range::First::Fetched(file) => Ok(*file),
        range::First::NotModified => Err(FetchError::new(
            address,
            FetchErrorKind::BadReply("HTTP 304 to a request that was not conditional".into()),
        )),
    }
}

/// Without the `remote` feature: every address is refused in one line.
#[cfg(not(feature = "remote"))]
pub fn open(address: &str, options: &FetchOptions) -> Result<std::convert::Infallible, FetchError> {
    url::parse(address, &options.endpoints)?;
    Err(FetchError::new(address, FetchErrorKind::NoRemoteFeature))
}

/// Keep what was read of `file` in the cache (once its header was read whole), when the entry can be checked
/// later: an ETag, or a URL that never names other bytes.
#[cfg(feature = "remote")]
pub fn keep(file: &RemoteFile, options: &FetchOptions) {
    let (Some(dir), Some((_, entry))) = (options.cache_dir.as_deref(), file.to_cache()) else {
        return;
    };
    if entry.etag.is_some() || url::is_immutable(&entry.url) {
        cache::put(dir, &entry);
    }
}
