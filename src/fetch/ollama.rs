//! `ollama://NAME[:TAG]`: the registry's manifest (the Docker distribution API Ollama's registry speaks,
//! `GET /v2/NAMESPACE/NAME/manifests/TAG` with the v2 manifest's `Accept`) names the model layer by its digest
//! (`mediaType` `application/vnd.ollama.image.model`); that layer is the GGUF file, read from
//! `/v2/NAMESPACE/NAME/blobs/DIGEST` with ranges like any other URL. The same digest is the blob's name in
//! `~/.ollama/models/blobs/` once pulled (`sha256-…`). A vision model's projector is a layer of its own
//! (`application/vnd.ollama.image.projector`), read by `inspect` as `--mmproj` would be.

use serde::Deserialize;

use super::client::{Ask, Client};
use super::error::{FetchError, FetchErrorKind};

/// The manifest's media type, as `Accept`.
pub const MANIFEST_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// The layer that is the model's GGUF file.
pub const MODEL_LAYER: &str = "application/vnd.ollama.image.model";
/// The layer that is a vision model's projector, a GGUF file of its own (llama-server's `--mmproj`).
pub const PROJECTOR_LAYER: &str = "application/vnd.ollama.image.projector";
/// The most manifest bytes read (a real one is under 2 KiB).
const MAX_MANIFEST: u64 = 1 << 20;

#[derive(Debug, Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Layer>,
}

#[derive(Debug, Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

/// The blobs of a model: its GGUF file, and its vision projector (a GGUF file too) when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blobs {
    pub model: String,
    pub projector: Option<String>,
}

/// The model layer's blob URL (and the projector's), from the manifest at `manifest`.
pub fn blobs(client: &Client, manifest: &str, blobs: &str) -> Result<Blobs, FetchError> {
    let bad = |why: String| client.error(FetchErrorKind::Manifest(why));
    let ask = Ask {
        accept: Some(MANIFEST_TYPE),
        ..Ask::default()
    };
    let mut reply = client.get(manifest, ask).map_err(|e| match e.kind {
        FetchErrorKind::NotFound => bad("HTTP 404: no such model or tag in the registry (check the name as `ollama pull` takes it)".into()),
        _ => e,
    })?;
    if reply.status != 200 {
        return Err(bad(format!("HTTP {}", reply.status)));
    }
    let text = reply
        .body
        .with_config()
        .limit(MAX_MANIFEST)
        .read_to_string()
        .map_err(|e| bad(super::client::one_line(&e.to_string())))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a manifest: {e}")))?;
    let blob = |media_type: &str| -> Result<Option<String>, FetchError> {
        let Some(layer) = manifest.layers.iter().find(|l| l.media_type == media_type) else {
            return Ok(None);
        };
        let digest = &layer.digest;
        let hex = digest.strip_prefix("sha256:").unwrap_or("");
        if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad(format!(
                "the {media_type} layer's digest {digest:?} is not sha256:<64 hex digits>"
            )));
        }
        Ok(Some(format!("{blobs}{digest}")))
    };
    Ok(Blobs {
        model: blob(MODEL_LAYER)?.ok_or_else(|| bad(format!("no {MODEL_LAYER} layer")))?,
        projector: blob(PROJECTOR_LAYER)?,
    })
}
