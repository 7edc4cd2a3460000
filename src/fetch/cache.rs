//! Headers fetched before, kept on disk so that a second `whatif` on the same URL is instant: each entry is
//! the file's first bytes as far as the header reader went, with the file's length and the server's ETag. An
//! entry is used without asking the server when its URL can never name other bytes (an Ollama blob's digest, a
//! Hugging Face revision pinned at a commit: `url::is_immutable`), else after one conditional request
//! (`If-None-Match` with the ETag: `304` keeps it, a new ETag fetches the header again and replaces it).
//! A reply without an ETag is cached only for an immutable URL.
//!
//! Where: `$VRAMDIFF_CACHE_DIR`, else `$XDG_CACHE_HOME/vramdiff/headers`, else `~/.cache/vramdiff/headers`.
//! An entry's file name is a hash of the URL (FNV-1a, stable across builds); the URL is inside too and must
//! match. A cache that cannot be read or written is a miss, never an error: the header is fetched again.

use std::path::{Path, PathBuf};

/// The first line of an entry file, then a JSON line of its facts, then the bytes.
const MAGIC: &[u8] = b"vramdiff header cache 1\n";

/// A cached header.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The URL it was fetched from (before redirects).
    pub url: String,
    pub etag: Option<String>,
    /// The file's length.
    pub len: u64,
    /// The file's first bytes.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// The cache folder from the environment, if one can be named.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("VRAMDIFF_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        return Some(xdg.join("vramdiff").join("headers"));
    }
    var("HOME")
        .or_else(|| var("USERPROFILE"))
        .map(|home| home.join(".cache").join("vramdiff").join("headers"))
}

/// FNV-1a, 64 bits: a file name for a URL that does not change between builds.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn path(dir: &Path, url: &str) -> PathBuf {
    dir.join(format!("{:016x}.gguf-header", fnv1a(url)))
}

/// The entry for `url`, if the cache holds a readable one.
pub fn get(dir: &Path, url: &str) -> Option<Entry> {
    let data = std::fs::read(path(dir, url)).ok()?;
    let rest = data.strip_prefix(MAGIC)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    let mut entry: Entry = serde_json::from_slice(&rest[..newline]).ok()?;
    if entry.url != url {
        return None;
    }
    entry.bytes = rest[newline + 1..].to_vec();
    (entry.bytes.len() as u64 <= entry.len).then_some(entry)
}

/// Keep `entry` (written to a temporary file and renamed, so a reader never sees half of it). Failures are
/// ignored: the next run fetches again.
pub fn put(dir: &Path, entry: &Entry) {
    let Ok(facts) = serde_json::to_vec(entry) else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let target = path(dir, &entry.url);
    let temporary = target.with_extension(format!("tmp{}", std::process::id()));
    let mut data = Vec::with_capacity(MAGIC.len() + facts.len() + 1 + entry.bytes.len());
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&facts);
    data.push(b'\n');
    data.extend_from_slice(&entry.bytes);
    if std::fs::write(&temporary, &data).is_ok() && std::fs::rename(&temporary, &target).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_names_its_url() {
        let dir = std::env::temp_dir().join(format!("vramdiff-cache-unit-{}", std::process::id()));
        let entry = Entry {
            url: "https://h/m.gguf".into(),
            etag: Some("\"abc\"".into()),
            len: 1000,
            bytes: b"GGUF\n\x00rest".to_vec(),
        };
        put(&dir, &entry);
        assert_eq!(get(&dir, "https://h/m.gguf"), Some(entry));
        assert_eq!(get(&dir, "https://h/other.gguf"), None);
        std::fs::write(path(&dir, "https://h/m.gguf"), b"garbage").unwrap();
        assert_eq!(get(&dir, "https://h/m.gguf"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_file_name_is_stable() {
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
