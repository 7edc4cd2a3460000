//! Grammar files as written on disk (TOML), before validation. See `grammars/README.md` for the format.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The grammar file format version this build reads.
pub const FORMAT_VERSION: u32 = 1;

/// One `grammars/NN-name.toml` file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGrammarFile {
    /// Must equal [`FORMAT_VERSION`].
    pub format: u32,
    /// What the file covers, for people.
    #[serde(default)]
    pub description: String,
    #[serde(default, rename = "rule")]
    pub rules: Vec<RawRule>,
}

/// One rule: which lines it recognises and which fields it extracts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// Unique across all grammar files (`llama.buffer`, `ollama.offload.e7`).
    pub id: String,
    /// The event the parser builds from a match (see `grammars/README.md` for the list).
    pub event: String,
    #[serde(default)]
    pub description: String,
    /// Literal strings of which at least one must occur in a line before the regex is tried.
    pub anchors: Vec<String>,
    /// The regex (Rust `regex` syntax); named groups become fields.
    pub regex: String,
    /// Also read the whole line as a Go slog record and add every `key=value` as a field.
    #[serde(default)]
    pub logfmt: bool,
    /// With `logfmt`: only keys starting with this prefix are kept, with the prefix removed.
    #[serde(default)]
    pub key_prefix: Option<String>,
    /// Field renames applied after extraction (`"layers.real" = "layers.offload"`).
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// Constant fields added to every match (`phase = "actual"`).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Real lines this rule must match, with the fields they must yield.
    #[serde(default, rename = "example")]
    pub examples: Vec<RawExample>,
}

/// A real example line and the fields the rule must extract from it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExample {
    pub line: String,
    /// Where the line comes from (`corpus/raw/001-…log:103`).
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub expect: BTreeMap<String, String>,
}
