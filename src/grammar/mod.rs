//! Grammars: every log dialect vramdiff reads, as data.
//!
//! The built-in grammar files (`grammars/*.toml`) are embedded in the binary; `--grammar-dir DIR` adds files
//! or replaces built-in files of the same name at run time, so a fork's new log line is a data change, not a
//! rebuild. Files apply in file-name order (`NN-` prefixes set precedence), rules in file order.

mod compiled;
mod raw;
pub mod signatures;

use std::path::Path;

use include_dir::{include_dir, Dir};

pub use compiled::{Grammar, Rule, RuleRegex};
pub use raw::{RawExample, RawGrammarFile, RawRule, FORMAT_VERSION};

static BUILTIN: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/grammars");

/// Why a grammar could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    #[error("grammar file {file}: {what}")]
    File { file: String, what: String },
    #[error("grammar file {file}, rule '{id}': {what}")]
    Rule {
        file: String,
        id: String,
        what: String,
    },
    #[error("rule id '{id}' is defined twice ({first} and {second}); rule ids must be unique")]
    DuplicateId {
        id: String,
        first: String,
        second: String,
    },
    #[error("could not build the anchor prefilter: {0}")]
    Prefilter(String),
}

/// The origin of the grammar files built into the binary.
const BUILTIN_ORIGIN: &str = "built-in";

/// A grammar file's name, its text, and where it came from ([`BUILTIN_ORIGIN`] or a path).
struct Source {
    name: String,
    text: String,
    origin: String,
}

fn builtin_sources() -> Vec<Source> {
    let mut sources: Vec<Source> = BUILTIN
        .files()
        .filter(|f| f.path().extension().is_some_and(|e| e == "toml"))
        .map(|f| Source {
            name: f
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            text: String::from_utf8_lossy(f.contents()).into_owned(),
            origin: BUILTIN_ORIGIN.to_string(),
        })
        .collect();
    // The runtime signatures of docs/log-formats.md §0.1, the last file (`grammar::signatures`).
    sources.push(Source {
        name: signatures::FILE_NAME.to_string(),
        text: signatures::grammar_file(),
        origin: BUILTIN_ORIGIN.to_string(),
    });
    sources
}

fn dir_sources(dir: &Path) -> Result<Vec<Source>, GrammarError> {
    let file_err = |what: String| GrammarError::File {
        file: dir.display().to_string(),
        what,
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| file_err(format!("cannot read the directory: {e}")))?;
    let mut sources = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| file_err(e.to_string()))?.path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| GrammarError::File {
            file: path.display().to_string(),
            what: format!("cannot read: {e}"),
        })?;
        sources.push(Source {
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            text,
            origin: path.display().to_string(),
        });
    }
    Ok(sources)
}

/// Load the built-in grammar, with files from `override_dir` added or replacing built-ins of the same name.
pub fn load(override_dir: Option<&Path>) -> Result<Grammar, GrammarError> {
    let mut sources = builtin_sources();
    if let Some(dir) = override_dir {
        for extra in dir_sources(dir)? {
            sources.retain(|s| s.name != extra.name);
            sources.push(extra);
        }
    }
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    let mut rules: Vec<Rule> = Vec::new();
    let mut files = Vec::new();
    for source in sources {
        let raw: RawGrammarFile = toml::from_str(&source.text).map_err(|e| GrammarError::File {
            file: source.origin.clone(),
            what: e.to_string(),
        })?;
        if raw.format != FORMAT_VERSION {
            return Err(GrammarError::File {
                file: source.origin.clone(),
                what: format!(
                    "format = {} but this vramdiff reads format = {FORMAT_VERSION}",
                    raw.format
                ),
            });
        }
        // The built-in rules' regexes are built on first use (the tests build every one); a file of the
        // user's is built whole now, so that every error in it is said before a log is read.
        let build_now = source.origin != BUILTIN_ORIGIN;
        for raw_rule in raw.rules {
            let rule = Rule::compile(raw_rule, &source.name, build_now)?;
            if let Some(prev) = rules.iter().find(|r| r.id == rule.id) {
                return Err(GrammarError::DuplicateId {
                    id: rule.id.clone(),
                    first: prev.file.clone(),
                    second: source.name.clone(),
                });
            }
            rules.push(rule);
        }
        files.push((source.name, source.origin));
    }
    Grammar::build(rules, files)
}
