//! The flags of a model read over HTTP (`inspect URL`, `--gguf URL`): the timeout, whether a server without
//! range requests may send the whole file, and the header cache.

use clap::Args as ClapArgs;

/// How a URL's header is fetched.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct FetchArgs {
    /// With a URL: how long connecting and each wait for bytes may take, in seconds [default: 30]
    #[arg(long, value_name = "SECONDS", value_parser = super::doctor::parse_seconds)]
    pub timeout: Option<std::time::Duration>,

    /// With a URL whose server ignores range requests: read the header from the start of the whole-file reply
    /// (stopped once the header is read) instead of refusing.
    #[arg(long)]
    pub allow_full_download: bool,

    /// With a URL: neither read nor write the header cache ($VRAMDIFF_CACHE_DIR, else
    /// $XDG_CACHE_HOME/vramdiff/headers, else ~/.cache/vramdiff/headers).
    #[arg(long)]
    pub no_cache: bool,
}
