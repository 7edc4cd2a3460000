//! `--ollama`: ask the Ollama server what it has loaded (`GET /api/ps`) when a load completes, and keep the
//! entry for that load: Ollama's own `size` and `size_vram`, the third figure beside the buffers and
//! nvidia-smi. One blocking request with a timeout (minreq: no TLS, no async runtime).

use serde::Deserialize;

use crate::model::{OllamaPs, Quantity, Reconciled};

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
}

impl PsClient {
    pub fn new(url: &str) -> Self {
        PsClient {
            url: url.trim_end_matches('/').to_string(),
            warned: false,
        }
    }

    /// `/api/ps` now. `Err(Some(why))` the first time it fails, `Err(None)` after.
    pub fn ps(&mut self) -> Result<PsResponse, Option<String>> {
        match self.get() {
            Ok(r) => Ok(r),
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
            .with_timeout(TIMEOUT_SECONDS)
            .send()
            .map_err(|e| format!("GET {url}: {e}"))?;
        if response.status_code != 200 {
            return Err(format!("GET {url}: HTTP {}", response.status_code));
        }
        serde_json::from_slice(response.as_bytes())
            .map_err(|e| format!("GET {url}: not the /api/ps answer: {e}"))
    }

    /// Attach the entry of `ps` that is this load's model, if one can be told apart.
    pub fn attach(&self, ps: &PsResponse, load: &mut Reconciled) {
        if let Some((model, matched_by)) = pick(ps, load) {
            load.ollama_ps = Some(OllamaPs {
                url: self.url.clone(),
                name: model.name.clone(),
                size: Quantity::exact(model.size),
                size_vram: Quantity::exact(model.size_vram),
                context_length: model.context_length,
                models_listed: ps.models.len(),
                matched_by,
            });
        }
    }
}

/// The model of `/api/ps` that is this load's: the only one listed, else the one whose `size_vram` is nearest
/// the load's GPU buffers (the log names the model by its blob, `/api/ps` by its name and manifest digest, so
/// names cannot be joined).
fn pick<'p>(ps: &'p PsResponse, load: &Reconciled) -> Option<(&'p PsModel, String)> {
    match ps.models.as_slice() {
        [] => None,
        [only] => Some((only, "the only model /api/ps listed".to_string())),
        models => {
            let buffers = load.gpu_buffers()?.value.bytes;
            let nearest = models
                .iter()
                .min_by_key(|m| (m.size_vram - buffers).unsigned_abs())?;
            Some((
                nearest,
                format!(
                    "of the {} models /api/ps listed, the one whose size_vram is nearest the load's GPU buffers",
                    models.len()
                ),
            ))
        }
    }
}
