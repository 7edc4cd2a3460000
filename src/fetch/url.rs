//! The model addresses vramdiff reads over HTTP, as the user types them, turned into plain HTTP(S) URLs:
//!
//! - `https://…` and `http://…`: any server that answers range requests (a Hugging Face `/resolve/` URL
//!   redirects to a signed CDN URL, followed by `client`);
//! - `hf://ORG/REPO/FILE.gguf` and `hf://ORG/REPO@REV/FILE.gguf`: Hugging Face's `/resolve/REV/` URL (`main`
//!   when no revision is named), under `$HF_ENDPOINT` when set (Hugging Face's own tools read it too);
//! - `ollama://NAME[:TAG]` and `ollama://NAMESPACE/NAME[:TAG]`: the Ollama registry's manifest
//!   (`/v2/NAMESPACE/NAME/manifests/TAG`, namespace `library` and tag `latest` by default), under
//!   `$VRAMDIFF_OLLAMA_REGISTRY` when set; the model layer's blob is read from the digest in it.
//!
//! Pure string work, no I/O: what the addresses mean is pinned by the unit tests below.

use super::error::{FetchError, FetchErrorKind};

/// Hugging Face, unless `$HF_ENDPOINT` says otherwise.
pub const HF_ENDPOINT: &str = "https://huggingface.co";
/// The Ollama registry, unless `$VRAMDIFF_OLLAMA_REGISTRY` says otherwise.
pub const OLLAMA_REGISTRY: &str = "https://registry.ollama.ai";

/// Where the short forms point, decided once from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// The base of `hf://` (no trailing slash).
    pub hf: String,
    /// The base of `ollama://` (no trailing slash).
    pub ollama: String,
}

impl Default for Endpoints {
    fn default() -> Endpoints {
        Endpoints {
            hf: HF_ENDPOINT.to_string(),
            ollama: OLLAMA_REGISTRY.to_string(),
        }
    }
}

impl Endpoints {
    /// `$HF_ENDPOINT` and `$VRAMDIFF_OLLAMA_REGISTRY`, else the public services.
    pub fn from_environment() -> Endpoints {
        let var = |name: &str, default: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().trim_end_matches('/').to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_string())
        };
        Endpoints {
            hf: var("HF_ENDPOINT", HF_ENDPOINT),
            ollama: var("VRAMDIFF_OLLAMA_REGISTRY", OLLAMA_REGISTRY),
        }
    }
}

/// What an address names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file at a URL.
    File(String),
    /// A model in an Ollama registry: its manifest's URL, and the base its blobs are under
    /// (`…/v2/NAMESPACE/NAME/blobs/`).
    Ollama { manifest: String, blobs: String },
}

/// Whether an input is an address (a scheme this module reads), not a path.
pub fn is_remote(input: &str) -> bool {
    let lower = input.trim_start().to_ascii_lowercase();
    ["http://", "https://", "hf://", "ollama://"]
        .iter()
        .any(|s| lower.starts_with(s))
}

/// The address `input` turned into what to fetch.
pub fn parse(input: &str, endpoints: &Endpoints) -> Result<Target, FetchError> {
    let bad = |why: &str| FetchError::new(input, FetchErrorKind::BadUrl(why.to_string()));
    if input.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("it holds a space or a control character"));
    }
    let (scheme, rest) = input
        .split_once("://")
        .ok_or_else(|| bad("no scheme (https://, hf:// or ollama://)"))?;
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            if host.is_empty() {
                return Err(bad("no host"));
            }
            Ok(Target::File(input.to_string()))
        }
        "hf" => hf(rest, endpoints).map_err(|why| bad(&why)),
        "ollama" => ollama(rest, endpoints).map_err(|why| bad(&why)),
        _ => Err(bad(
            "the scheme is not https://, http://, hf:// or ollama://",
        )),
    }
}

/// `ORG/REPO[@REV]/PATH` → `{hf}/ORG/REPO/resolve/REV/PATH`.
fn hf(rest: &str, endpoints: &Endpoints) -> Result<Target, String> {
    const FORM: &str = "hf:// takes ORG/REPO/FILE.gguf or ORG/REPO@REVISION/FILE.gguf";
    let mut parts = rest.splitn(3, '/');
    let (Some(org), Some(repo), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(FORM.to_string());
    };
    let (repo, revision) = match repo.split_once('@') {
        Some((r, rev)) => (r, rev),
        None => (repo, "main"),
    };
    if org.is_empty()
        || repo.is_empty()
        || revision.is_empty()
        || path.is_empty()
        || path.ends_with('/')
        || path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(FORM.to_string());
    }
    Ok(Target::File(format!(
        "{}/{org}/{repo}/resolve/{revision}/{path}",
        endpoints.hf
    )))
}

/// `[NAMESPACE/]NAME[:TAG]` → the manifest's URL and the blobs' base.
fn ollama(rest: &str, endpoints: &Endpoints) -> Result<Target, String> {
    const FORM: &str =
        "ollama:// takes NAME, NAME:TAG or NAMESPACE/NAME:TAG (as `ollama pull` does)";
    let (path, tag) = match rest.rsplit_once(':') {
        Some((p, t)) if !t.contains('/') => (p, t),
        _ => (rest, "latest"),
    };
    let segments: Vec<&str> = path.split('/').collect();
    let (namespace, name) = match segments.as_slice() {
        [name] => ("library", *name),
        [namespace, name] => (*namespace, *name),
        _ => return Err(FORM.to_string()),
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !s.starts_with('.')
    };
    if !word(namespace) || !word(name) || !word(tag) {
        return Err(FORM.to_string());
    }
    let base = format!("{}/v2/{namespace}/{name}", endpoints.ollama);
    Ok(Target::Ollama {
        manifest: format!("{base}/manifests/{tag}"),
        blobs: format!("{base}/blobs/"),
    })
}

/// Whether the bytes at `url` can never change, so a cached header is used without asking the server: an
/// Ollama blob (named by its digest) or a Hugging Face `/resolve/` URL pinned at a commit (40 hex digits).
pub fn is_immutable(url: &str) -> bool {
    if let Some((_, digest)) = url.rsplit_once("/blobs/sha256:") {
        return digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some((_, after)) = url.split_once("/resolve/") {
        let revision = after.split('/').next().unwrap_or("");
        return revision.len() == 40 && revision.chars().all(|c| c.is_ascii_hexdigit());
    }
    false
}

/// The `scheme://host[:port]` of a URL, lower-cased: whom a token may be sent to.
pub fn origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::new();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Credentials in the URL are not part of the origin.
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    )
}

/// A redirect's `Location` read against the URL that answered with it (absolute, scheme-relative,
/// host-relative or path-relative).
pub fn join(base: &str, location: &str) -> String {
    let location = location.trim();
    if is_absolute(location) {
        return location.to_string();
    }
    let scheme = base.split_once("://").map_or("https", |(s, _)| s);
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}");
    }
    let origin = origin(base);
    if location.starts_with('/') {
        return format!("{origin}{location}");
    }
    // Relative to the base's folder.
    let path = base[origin.len().min(base.len())..]
        .split(['?', '#'])
        .next()
        .unwrap_or("");
    let folder = path.rsplit_once('/').map_or("", |(f, _)| f);
    format!("{origin}{folder}/{location}")
}

fn is_absolute(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hf: &str, ollama: &str) -> Endpoints {
        Endpoints {
            hf: hf.into(),
            ollama: ollama.into(),
        }
    }

    fn file(input: &str) -> String {
        match parse(input, &Endpoints::default()) {
            Ok(Target::File(url)) => url,
            other => panic!("{input}: {other:?}"),
        }
    }

    #[test]
    fn which_inputs_are_addresses() {
        assert!(is_remote("https://huggingface.co/a/b/resolve/main/c.gguf"));
        assert!(is_remote("HTTP://127.0.0.1:8080/x.gguf"));
        assert!(is_remote("hf://a/b/c.gguf"));
        assert!(is_remote("ollama://gemma3:12b"));
        assert!(!is_remote("model.gguf"));
        assert!(!is_remote("/root/.ollama/models/blobs/sha256-abc"));
        assert!(!is_remote("C:\\models\\x.gguf"));
    }

    #[test]
    fn plain_urls_are_kept_as_typed() {
        let u = "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf";
        assert_eq!(file(u), u);
        assert_eq!(
            file("http://127.0.0.1:9/a.gguf?x=1"),
            "http://127.0.0.1:9/a.gguf?x=1"
        );
        assert!(parse("https:///a.gguf", &Endpoints::default()).is_err());
        assert!(parse("https://h/a b.gguf", &Endpoints::default()).is_err());
        assert!(parse("ftp://h/a.gguf", &Endpoints::default()).is_err());
    }

    #[test]
    fn hf_short_form_is_the_resolve_url() {
        assert_eq!(
            file("hf://Qwen/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf"),
            "https://huggingface.co/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf"
        );
        assert_eq!(
            file("hf://org/repo@v1.0/sub/dir/m-00001-of-00002.gguf"),
            "https://huggingface.co/org/repo/resolve/v1.0/sub/dir/m-00001-of-00002.gguf"
        );
        // A slash ends the revision, so `refs/pr/N` is written encoded, as in Hugging Face's own URLs.
        assert_eq!(
            file("hf://org/repo@refs%2Fpr%2F1/m.gguf"),
            "https://huggingface.co/org/repo/resolve/refs%2Fpr%2F1/m.gguf"
        );
        assert_eq!(
            parse("hf://o/r/m.gguf", &at("http://127.0.0.1:5", "x")),
            Ok(Target::File(
                "http://127.0.0.1:5/o/r/resolve/main/m.gguf".into()
            ))
        );
        for bad in [
            "hf://org/repo",
            "hf://org//m.gguf",
            "hf://o/r@/m.gguf",
            "hf://o/r/../m.gguf",
            "hf://o/r/d/",
        ] {
            let e = parse(bad, &Endpoints::default()).unwrap_err();
            assert!(e.to_string().starts_with(bad), "{e}");
            assert!(e.to_string().contains("hf:// takes"), "{e}");
        }
    }

    #[test]
    fn ollama_names_are_registry_paths() {
        let d = Endpoints::default();
        assert_eq!(
            parse("ollama://gemma3:12b", &d),
            Ok(Target::Ollama {
                manifest: "https://registry.ollama.ai/v2/library/gemma3/manifests/12b".into(),
                blobs: "https://registry.ollama.ai/v2/library/gemma3/blobs/".into(),
            })
        );
        assert_eq!(
            parse("ollama://llama3.2", &d),
            Ok(Target::Ollama {
                manifest: "https://registry.ollama.ai/v2/library/llama3.2/manifests/latest".into(),
                blobs: "https://registry.ollama.ai/v2/library/llama3.2/blobs/".into(),
            })
        );
        assert_eq!(
            parse(
                "ollama://someone/model:q4_K_M",
                &at("x", "http://127.0.0.1:7")
            ),
            Ok(Target::Ollama {
                manifest: "http://127.0.0.1:7/v2/someone/model/manifests/q4_K_M".into(),
                blobs: "http://127.0.0.1:7/v2/someone/model/blobs/".into(),
            })
        );
        for bad in [
            "ollama://",
            "ollama://a/b/c",
            "ollama://gemma3:",
            "ollama://ge mma",
            "ollama://../x",
        ] {
            assert!(parse(bad, &d).is_err(), "{bad}");
        }
    }

    #[test]
    fn immutable_urls_are_named_by_their_content() {
        let digest = "e8ad13eff07a78d89926e9e8b882317d082ef5bf9768ad7b50fcdbbcd63748de";
        assert!(is_immutable(&format!(
            "https://r/v2/library/g/blobs/sha256:{digest}"
        )));
        assert!(is_immutable(
            "https://huggingface.co/o/r/resolve/0123456789abcdef0123456789abcdef01234567/m.gguf"
        ));
        assert!(!is_immutable(
            "https://huggingface.co/o/r/resolve/main/m.gguf"
        ));
        assert!(!is_immutable("https://example.com/m.gguf"));
    }

    #[test]
    fn redirects_are_joined_and_origins_compared() {
        assert_eq!(
            origin("https://HuggingFace.co/o/r?x"),
            "https://huggingface.co"
        );
        assert_eq!(origin("http://u:p@127.0.0.1:80/x"), "http://127.0.0.1:80");
        let base = "https://huggingface.co/o/r/resolve/main/m.gguf";
        assert_eq!(
            join(base, "https://cdn.example/x?sig=1"),
            "https://cdn.example/x?sig=1"
        );
        assert_eq!(join(base, "//cdn.example/x"), "https://cdn.example/x");
        assert_eq!(join(base, "/api/x"), "https://huggingface.co/api/x");
        assert_eq!(
            join(base, "n.gguf"),
            "https://huggingface.co/o/r/resolve/main/n.gguf"
        );
    }
}
