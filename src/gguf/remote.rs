//! A GGUF header read over HTTP: the `fetch` stage gives the file's start as a byte source ([`crate::fetch`]'s
//! range reader, or the cache), and [`super::header::read`] reads it as it reads a file on disk. Split models
//! (`-00001-of-0000N.gguf`) read every part's header. When a read fails because a fetch did, the fetch's own
//! message is given (the HTTP status, the cut reply), not the reader's I/O error.

use super::header::GgufHeader;
use super::value::Detail;
use crate::fetch::FetchOptions;

/// What reading a remote header cost: the bytes received over the network, the requests, the files' length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetched {
    pub bytes: u64,
    pub requests: u32,
    pub file_bytes: u64,
}

impl Fetched {
    /// One line for stderr: how little was read.
    pub fn note(&self, address: &str) -> String {
        if self.bytes == 0 {
            return match self.requests {
                0 => format!("{address}: header from the cache, no request made"),
                n => format!(
                    "{address}: header from the cache, unchanged on the server ({n} request{}, nothing fetched)",
                    if n == 1 { "" } else { "s" }
                ),
            };
        }
        let percent = if self.file_bytes == 0 {
            0.0
        } else {
            self.bytes as f64 * 100.0 / self.file_bytes as f64
        };
        format!(
            "{address}: read {} of {} bytes ({percent:.3} %) in {} request{}",
            self.bytes,
            self.file_bytes,
            self.requests,
            if self.requests == 1 { "" } else { "s" }
        )
    }
}

/// The header at `address` (every part's, merged, for a split model), and what fetching it cost.
pub fn read_header(
    address: &str,
    options: &FetchOptions,
    detail: Detail,
) -> Result<(GgufHeader, Fetched), String> {
    match super::split::part_names(address) {
        None => read_one(address, options, detail),
        Some(parts) => {
            let mut headers = Vec::with_capacity(parts.len());
            let mut total = Fetched::default();
            for part in &parts {
                let (header, fetched) = read_one(part, options, detail)?;
                total.bytes += fetched.bytes;
                total.requests += fetched.requests;
                total.file_bytes += fetched.file_bytes;
                headers.push(header);
            }
            let mut header = super::split::merge(headers).map_err(|e| e.to_string())?;
            header.path = address.to_string();
            Ok((header, total))
        }
    }
}

/// The header at `address` and, for an `ollama://` model whose manifest has one, its projector's (shown as
/// `ADDRESS (projector)`): what `inspect` reads when no `--mmproj` is given.
#[cfg(feature = "remote")]
pub fn read_with_projector(
    address: &str,
    options: &FetchOptions,
    detail: Detail,
) -> Result<(GgufHeader, Option<GgufHeader>, Fetched), String> {
    if super::split::part_names(address).is_some() {
        let (header, fetched) = read_header(address, options, detail)?;
        return Ok((header, None, fetched));
    }
    // The manifest is read once: its model layer, then its projector.
    let located = crate::fetch::locate(address, options).map_err(|e| e.to_string())?;
    let open = |shown: &str, url: &str| {
        crate::fetch::open_url(shown, url, options).map_err(|e| e.to_string())
    };
    let (header, mut fetched) = read_file(open(address, &located.url)?, address, options, detail)?;
    let Some(projector) = located.projector else {
        return Ok((header, None, fetched));
    };
    let shown = format!("{address} (projector)");
    let (mmproj, more) = read_file(open(&shown, &projector)?, &shown, options, detail)?;
    fetched.bytes += more.bytes;
    fetched.requests += more.requests;
    fetched.file_bytes += more.file_bytes;
    Ok((header, Some(mmproj), fetched))
}

/// Without the `remote` feature: refused like every address.
#[cfg(not(feature = "remote"))]
pub fn read_with_projector(
    address: &str,
    options: &FetchOptions,
    detail: Detail,
) -> Result<(GgufHeader, Option<GgufHeader>, Fetched), String> {
    read_header(address, options, detail).map(|(h, f)| (h, None, f))
}

#[cfg(feature = "remote")]
fn read_one(
    address: &str,
    options: &FetchOptions,
    detail: Detail,
) -> Result<(GgufHeader, Fetched), String> {
    let file = crate::fetch::open(address, options).map_err(|e| e.to_string())?;
    read_file(file, address, options, detail)
}

/// Read the header from `file`, opened for `address`; keep what was read in the cache.
#[cfg(feature = "remote")]
fn read_file(
    mut file: crate::fetch::RemoteFile,
    address: &str,
    options: &FetchOptions,
    detail: Detail,
) -> Result<(GgufHeader, Fetched), String> {
    use super::error::GgufErrorKind;
    let len = file.len();
    match super::header::read(&mut file, len, address, detail) {
        Ok(header) => {
            crate::fetch::keep(&file, options);
            let fetched = Fetched {
                bytes: file.fetched(),
                requests: file.requests(),
                file_bytes: len,
            };
            Ok((header, fetched))
        }
        Err(e) => {
            if let Some(fetch) = file.take_error() {
                return Err(fetch.to_string());
            }
            match e.kind {
                GgufErrorKind::BadMagic(_) if file.is_html() => {
                    let html =
                        crate::fetch::FetchError::new(address, crate::fetch::FetchErrorKind::Html);
                    Err(html.to_string())
                }
                // The length is the server's word (Content-Range): say so, a cut upload or a bad proxy.
                GgufErrorKind::Truncated { .. } | GgufErrorKind::CountPastEnd { .. } => Err(format!(
                    "{e} (the server gives the file's length as {len} bytes: a cut or incomplete file)"
                )),
                _ => Err(e.to_string()),
            }
        }
    }
}

#[cfg(not(feature = "remote"))]
fn read_one(
    address: &str,
    options: &FetchOptions,
    _detail: Detail,
) -> Result<(GgufHeader, Fetched), String> {
    match crate::fetch::open(address, options) {
        Err(e) => Err(e.to_string()),
        Ok(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_how_little_was_read() {
        let read = Fetched {
            bytes: 262_144,
            requests: 1,
            file_bytes: 8_137_471_168,
        };
        assert_eq!(
            read.note("hf://o/r/m.gguf"),
            "hf://o/r/m.gguf: read 262144 of 8137471168 bytes (0.003 %) in 1 request"
        );
        let cached = Fetched {
            file_bytes: 10,
            ..Fetched::default()
        };
        assert_eq!(
            cached.note("x"),
            "x: header from the cache, no request made"
        );
        let revalidated = Fetched {
            requests: 1,
            file_bytes: 10,
            ..Fetched::default()
        };
        assert_eq!(
            revalidated.note("x"),
            "x: header from the cache, unchanged on the server (1 request, nothing fetched)"
        );
    }
}
