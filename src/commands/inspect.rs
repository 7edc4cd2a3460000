//! `vramdiff inspect`: a GGUF file's header, as weights per layer and KV cache per token. No log, no
//! pipeline: the `gguf` stage reads the file and `report::inspect` renders it.

use super::resolve::Inspect;
use super::Outcome;
use crate::report;

/// `vramdiff inspect MODEL`.
pub fn inspect(request: &Inspect) -> Outcome {
    // Only `--tensors` prints the metadata values; otherwise string arrays (the vocabulary) are not kept.
    let detail = if request.tensors {
        crate::gguf::Detail::Everything
    } else {
        crate::gguf::Detail::Sizes
    };
    let read = |path: &std::path::Path| {
        crate::gguf::read_header_to(path, detail).map_err(|e| e.to_string())
    };
    let result = read(&request.model).and_then(|header| {
        let mmproj = request.mmproj.as_deref().map(read).transpose()?;
        let layout =
            crate::gguf::layout::build(&header, mmproj.as_ref()).map_err(|e| e.to_string())?;
        let inspection = report::inspect::Inspection {
            header: &header,
            layout: &layout,
            mmproj: mmproj.as_ref(),
            options: report::inspect::InspectOptions {
                tensors: request.tensors,
            },
        };
        report::render(report::What::Inspect(inspection), request.format).map_err(|e| e.to_string())
    });
    match result {
        Ok(stdout) => Outcome {
            stdout,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(e),
    }
}
