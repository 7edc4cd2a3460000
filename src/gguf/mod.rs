//! GGUF model files, header only: a reader of our own (nom over a buffered, incremental read — the tensor data
//! is never read nor mapped, so a 100 GB model costs milliseconds and a few MB) and the [`ModelLayout`] built
//! from it. A source-like stage: it reads a file and speaks the `model` vocabulary; nothing downstream of it is
//! imported here. `vramdiff inspect` prints what it reads; the replay and `whatif --max-ctx` use the layout.
//!
//! Sizes come from the offsets, not from a table of quantisation types: a tensor's bytes are the distance to the
//! next tensor's offset (the data section is aligned by `general.alignment`, 32 by default; the last tensor runs
//! to the end of the file), so they include each tensor's padding to the alignment (less than the alignment each).

pub mod cursor;
pub mod error;
pub mod header;
pub mod layout;
pub mod remote;
pub mod split;
pub mod tensors;
pub mod value;

use std::fs::File;
use std::path::Path;

pub use error::{GgufError, GgufErrorKind};
pub use header::{GgufHeader, Metadata};
pub use tensors::TensorInfo;
pub use value::{Array, Detail, Value};

use crate::model::ModelLayout;

/// Read a GGUF file's header (metadata and tensor infos), every value kept.
pub fn read_header(path: &Path) -> Result<GgufHeader, GgufError> {
    read_header_to(path, Detail::Everything)
}

/// Read a GGUF file's header, keeping the metadata to `detail` ([`Detail::Sizes`]: string arrays counted, not
/// kept — what the layout needs, a few MB less on a large vocabulary).
///
/// The first part of a split model (`…-00001-of-0000N.gguf`) is read with every other part beside it, as one
/// model ([`split`]).
pub fn read_header_to(path: &Path, detail: Detail) -> Result<GgufHeader, GgufError> {
    let name = path.display().to_string();
    if let Some(parts) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(split::part_names)
    {
        let headers = parts
            .iter()
            .map(|part| read_one(&path.with_file_name(part), detail))
            .collect::<Result<Vec<_>, _>>()?;
        let mut header = split::merge(headers)?;
        header.path = name;
        return Ok(header);
    }
    read_one(path, detail)
}

/// One file's header.
fn read_one(path: &Path, detail: Detail) -> Result<GgufHeader, GgufError> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| GgufError {
        path: name.clone(),
        offset: 0,
        kind: GgufErrorKind::Io(e.to_string()),
    };
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    header::read(file, len, &name, detail)
}

/// Read a GGUF header from bytes in memory (tests, the fuzz target).
pub fn read_header_bytes(bytes: &[u8], name: &str) -> Result<GgufHeader, GgufError> {
    header::read(bytes, bytes.len() as u64, name, Detail::Everything)
}

/// A model file's layout: per-layer weights (experts apart), what does not repeat, the output layer, the
/// projector (`v.*`/`mm.*` tensors in the file) and each layer's attention.
pub fn read_layout(path: &Path) -> Result<ModelLayout, GgufError> {
    read_layout_with_mmproj(path, None)
}

/// [`read_layout`] with the projector in a separate mmproj file.
pub fn read_layout_with_mmproj(
    path: &Path,
    mmproj: Option<&Path>,
) -> Result<ModelLayout, GgufError> {
    let lean = |p: &Path| read_header_to(p, Detail::Sizes);
    let header = lean(path)?;
    let projector = mmproj.map(lean).transpose()?;
    layout::build(&header, projector.as_ref())
}
