//! PLACEHOLDER for the GGUF header reader (issue 14, built on the `gguf` branch): the lead replaces this file
//! with the real module at merge. Only the one function the rest of vramdiff calls is here, and it always
//! fails, so every caller's "the file could not be read" path is what runs until then.

use std::path::Path;

use crate::model::ModelLayout;

/// Why a GGUF file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufError(String);

impl std::fmt::Display for GgufError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GgufError {}

/// The layout a GGUF file's header describes.
pub fn read_layout(_path: &Path) -> Result<ModelLayout, GgufError> {
    Err(GgufError("GGUF reader not merged yet".to_string()))
}
