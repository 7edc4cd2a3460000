//! `--ollama`: ask the Ollama server what it has loaded (`GET /api/ps`) when a load completes; the reconcile
//! stage keeps the entry for that load (`reconcile/ps.rs`): Ollama's own `size` and `size_vram`, the third
//! figure beside the buffers and nvidia-smi. One blocking request with a timeout (minreq: no TLS, no async
//! runtime).

use serde::Deserialize;

use crate::reconcile::observations::{PsListing, PsModel as Listed};

/// The server asked when `--ollama` is given without a URL.
pub const DEFAULT_URL: &str = "http://127.0.0.1:11434";

/// How long the request may take, in seconds.
pub const TIMEOUT_SECONDS: u64 = 3;

/// `/api/ps` as Ollama's API documentation gives it; fields we do not read are ignored.
#[derive(Debug, Deserialize)]
pub struct PsResponse {
    #[serde(default)]
    pub models: Vec<PsModel>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PsModel {
    pub name: String,
    pub size: i64,
    pub size_vram: i64,
    #[serde(default)]
    pub context_length: Option<i64>,
}

/// Asks one server and says once when it cannot.
pub struct PsClient {
    url: String,
    warned: bool,
    /// Seconds the request may take (minreq counts whole seconds).
    timeout: u64,
}

impl PsClient {
    pub fn new(url: &str) -> Self {
        PsClient {
            url: url.trim_end_matches('/').to_string(),
            warned: false,
            timeout: TIMEOUT_SECONDS,
        }
    }

    /// Asks with another bound than [`TIMEOUT_SECONDS`], rounded up to whole seconds (at least one).
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout.as_secs_f64().ceil().max(1.0) as u64;
        self
    }

    /// `/api/ps` now. `Err(Some(why))` the first time it fails, `Err(None)` after.
    pub fn ps(&mut self) -> Result<PsListing, Option<String>> {
        match self.get() {
            Ok(r) => Ok(listing(&self.url, r)),
            Err(_) if self.warned => Err(None),
            Err(e) => {
                self.warned = true;
                Err(Some(format!(
                    "--ollama {}: {e}; reports go on without Ollama's figure",
                    self.url
                )))
            }
        }
    }

    fn get(&self) -> Result<PsResponse, String> {
        let url = format!("{}/api/ps", self.url);
        let response = minreq::get(url.as_str())
            .with_timeout(self.timeout)
            .send()
            .map_err(|e| format!("GET {url}: {e}"))?;
        if response.status_code != 200 {
            return Err(format!("GET {url}: HTTP {}", response.status_code));
        }
        read_reply(response.as_bytes()).map_err(|e| format!("GET {url}: {e}"))
    }
}

/// The body of an `/api/ps` reply as Ollama's documented shape, or why it is not that (the server's bytes are
/// outside input: the fuzz target `fuzz/fuzz_targets/ps.rs` feeds this and [`listing`]).
pub fn read_reply(body: &[u8]) -> Result<PsResponse, String> {
    serde_json::from_slice(body).map_err(|e| format!("not the /api/ps answer: {e}"))
}

/// The reply as the reconcile stage's listing of what server `url` had loaded.
pub fn listing(url: &str, reply: PsResponse) -> PsListing {
    PsListing {
        url: url.to_string(),
        models: reply
            .models
            .into_iter()
            .map(|m| Listed {
                name: m.name,
                size: m.size,
                size_vram: m.size_vram,
                context_length: m.context_length,
            })
            .collect(),
    }
}
