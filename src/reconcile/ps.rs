//! Reconcile a load with what Ollama's `/api/ps` listed: which listed model is this load's, and Ollama's own
//! `size` and `size_vram` for it, the third figure beside the buffers and nvidia-smi.

use crate::model::{gpu_buffers_of, DeviceRow, OllamaPs, Quantity};

use super::observations::{PsListing, PsModel};

/// The entry of `listing` that is this load's (whose device rows are `devices`), if one can be told apart.
pub fn matched(listing: &PsListing, devices: &[DeviceRow]) -> Option<OllamaPs> {
    let (model, matched_by) = pick(listing, devices)?;
    Some(OllamaPs {
        url: listing.url.clone(),
        name: model.name.clone(),
        size: Quantity::exact(model.size),
        size_vram: Quantity::exact(model.size_vram),
        context_length: model.context_length,
        models_listed: listing.models.len(),
        matched_by,
    })
}

/// The model of `/api/ps` that is this load's: the only one listed, else the one whose `size_vram` is nearest
/// the load's GPU buffers (the log names the model by its blob, `/api/ps` by its name and manifest digest, so
/// names cannot be joined).
fn pick<'p>(listing: &'p PsListing, devices: &[DeviceRow]) -> Option<(&'p PsModel, String)> {
    match listing.models.as_slice() {
        [] => None,
        [only] => Some((only, "the only model /api/ps listed".to_string())),
        models => {
            let buffers = gpu_buffers_of(devices)?.value.bytes;
            let nearest = models
                .iter()
                .min_by_key(|m| m.size_vram.abs_diff(buffers))?;
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
