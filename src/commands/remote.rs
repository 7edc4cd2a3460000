//! `--gguf URL`, read before the run: the pipeline reads model files as it goes, but a header over the network
//! is read once, here, so that a URL that cannot be read stops the command with one line and exit 2 (a URL is
//! asked for, never found by chance like a blob the log names), and every load then uses its layout
//! (`load::model_file`'s `preread`).

use super::resolve::Request;
use crate::gguf::{self, Detail};

/// Read the `--gguf URL` of the request, if it has one. Returns the note to print (what was fetched), or the
/// error that stops the command.
pub fn prepare(request: &mut Request) -> Result<Option<String>, String> {
    let options = match request {
        Request::Report(r) => &mut r.options,
        Request::Whatif(w) => &mut w.options,
        Request::Follow(f) => &mut f.options,
        #[cfg(feature = "batch")]
        Request::Batch(b) => &mut b.options.analysis,
        _ => return Ok(None),
    };
    let Some((address, fetch)) = options.model_files.remote.clone() else {
        return Ok(None);
    };
    let (header, fetched) = gguf::remote::read_header(&address, &fetch, Detail::Sizes)?;
    let layout = gguf::layout::build(&header, None).map_err(|e| e.to_string())?;
    options.model_files.preread = Some((address.clone(), layout));
    Ok(Some(fetched.note(&address)))
}
