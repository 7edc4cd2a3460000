//! `vramdiff inspect`: a GGUF file's header, as weights per layer and KV cache per token. No log, no
//! pipeline: the `gguf` stage reads the file (or, for a URL, the header's bytes the `fetch` stage brings) and
//! `report::inspect` renders it.

use super::resolve::Inspect;
use super::Outcome;
use crate::gguf::{Detail, GgufHeader};
use crate::report;

/// `vramdiff inspect MODEL`.
pub fn inspect(request: &Inspect) -> Outcome {
    // Only `--tensors` prints the metadata values; otherwise string arrays (the vocabulary) are not kept.
    let detail = if request.tensors {
        Detail::Everything
    } else {
        Detail::Sizes
    };
    let mut notes = Vec::new();
    let mut read = |name: &str| -> Result<GgufHeader, String> {
        if crate::fetch::is_remote(name) {
            let (header, fetched) = crate::gguf::remote::read_header(name, &request.fetch, detail)?;
            notes.push(fetched.note(name));
            Ok(header)
        } else {
            crate::gguf::read_header_to(std::path::Path::new(name), detail)
                .map_err(|e| e.to_string())
        }
    };
    let result = read(&request.model).and_then(|header| {
        let mmproj = request.mmproj.as_deref().map(&mut read).transpose()?;
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
            messages: notes,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(e),
    }
}
