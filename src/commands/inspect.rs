//! `vramdiff inspect`: a GGUF file's header, as weights per layer and KV cache per token. No log, no
//! pipeline: the `gguf` stage reads the file (or, for a URL, the header's bytes the `fetch` stage brings) and
//! `report::inspect` renders it.

use super::resolve::Inspect;
use super::Outcome;
use crate::gguf::{Detail, GgufHeader};
use crate::report;

/// `vramdiff inspect MODEL`.
pub fn inspect(request: &Inspect) -> Outcome {
    let mut notes = Vec::new();
    match run(request, &mut notes) {
        Ok(stdout) => Outcome {
            stdout,
            messages: notes,
            ..Outcome::default()
        },
        Err(e) => Outcome::error(e),
    }
}

/// The report's bytes; `notes` gets what each fetch cost.
fn run(request: &Inspect, notes: &mut Vec<String>) -> Result<Vec<u8>, String> {
    // Only `--tensors` prints the metadata values; otherwise string arrays (the vocabulary) are not kept.
    let detail = if request.tensors {
        Detail::Everything
    } else {
        Detail::Sizes
    };
    let remote = |name: &str| crate::fetch::is_remote(name);
    let (header, mut mmproj) = if remote(&request.model) && request.mmproj.is_none() {
        // An `ollama://` model's manifest may name its projector: read it unless `--mmproj` names one.
        let (header, projector, fetched) =
            crate::gguf::remote::read_with_projector(&request.model, &request.fetch, detail)?;
        notes.push(fetched.note(&request.model));
        (header, projector)
    } else {
        (read(&request.model, request, detail, notes)?, None)
    };
    if let Some(name) = &request.mmproj {
        mmproj = Some(read(name, request, detail, notes)?);
    }
    let layout = crate::gguf::layout::build(&header, mmproj.as_ref()).map_err(|e| e.to_string())?;
    let inspection = report::inspect::Inspection {
        header: &header,
        layout: &layout,
        mmproj: mmproj.as_ref(),
        options: report::inspect::InspectOptions {
            tensors: request.tensors,
        },
    };
    report::render(report::What::Inspect(inspection), request.format).map_err(|e| e.to_string())
}

/// One header, from a path or a URL.
fn read(
    name: &str,
    request: &Inspect,
    detail: Detail,
    notes: &mut Vec<String>,
) -> Result<GgufHeader, String> {
    if crate::fetch::is_remote(name) {
        let (header, fetched) = crate::gguf::remote::read_header(name, &request.fetch, detail)?;
        notes.push(fetched.note(name));
        Ok(header)
    } else {
        crate::gguf::read_header_to(std::path::Path::new(name), detail).map_err(|e| e.to_string())
    }
}
