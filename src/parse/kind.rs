//! What defines an event kind a grammar rule may name: [`EventSpec`], its name, the fields it needs and may
//! use, the constant fields a rule may `set` (with the words each accepts) and the function that builds the
//! typed event. The specs themselves live with their builders, one module per family of log lines
//! (`server.rs`, `estimate.rs`, `engine.rs`, `llama.rs`, `llama_server.rs`, `fit.rs`); `spec.rs` gathers
//! them. This module only says what a spec is and how a rule is checked against one.

use super::event::EventKind;
use super::fields::{BuildError, Fields};
use crate::grammar::Rule;

/// The words a rule may `set` a field to.
#[derive(Debug, Clone, Copy)]
pub enum Words {
    /// Any text (a reason, a component name).
    Any,
    /// One of these words.
    List(&'static [&'static str]),
    /// A word the event's own reader accepts.
    Check(fn(&str) -> bool),
}

impl Words {
    /// `true` or `false`.
    pub const BOOL: Words = Words::List(&["true", "false"]);

    fn accepts(self, word: &str) -> bool {
        match self {
            Words::Any => true,
            Words::List(words) => words.contains(&word),
            Words::Check(accepts) => accepts(word),
        }
    }
}

/// Builds an event kind's typed event from a matched line's fields.
pub type Build = fn(&Fields) -> Result<EventKind, BuildError>;

/// An event kind a grammar rule may name, defined once: the grammar check, the builder dispatch and the event
/// table of `grammars/README.md` (held to it by a test in `spec.rs`) all come from here.
#[derive(Debug)]
pub struct EventSpec {
    /// The name a rule's `event =` gives.
    pub kind: &'static str,
    /// Fields the event cannot be built without: a rule must yield each (unless it reads logfmt).
    pub required: &'static [&'static str],
    /// Fields the builder reads when they are there.
    pub optional: &'static [&'static str],
    /// Fields a rule may `set` to a constant, with the words each accepts.
    pub settable: &'static [(&'static str, Words)],
    /// Builds the typed event.
    pub build: Build,
}

impl EventSpec {
    /// Check a rule naming this event: `set` keys and words the event reads, renames from fields the regex
    /// names, and every required field obtainable (a rule reading Go slog records gets its fields from the
    /// line, so only its `set` is checked).
    pub fn check(&self, rule: &Rule) -> Result<(), String> {
        for (key, word) in &rule.set {
            let Some((_, words)) = self.settable.iter().find(|(k, _)| k == key) else {
                let settable: Vec<&str> = self.settable.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "event '{}' has no settable field '{key}' (settable: {})",
                    self.kind,
                    if settable.is_empty() {
                        "none".to_string()
                    } else {
                        settable.join(", ")
                    }
                ));
            };
            if !words.accepts(word) {
                return Err(format!(
                    "'{word}' is not a value of {key} for event '{}'",
                    self.kind
                ));
            }
        }
        if rule.logfmt {
            return Ok(());
        }
        let named: Vec<&str> = rule.regex.capture_names().collect();
        for (from, _) in &rule.rename {
            if !named.contains(&from.as_str()) {
                return Err(format!(
                    "rename of '{from}', which the regex does not capture"
                ));
            }
        }
        let obtainable = |field: &str| {
            named.contains(&field)
                || rule.set.iter().any(|(k, _)| k == field)
                || rule.rename.iter().any(|(_, to)| to == field)
        };
        if let Some(missing) = self.required.iter().find(|f| !obtainable(f)) {
            return Err(format!(
                "event '{}' needs field '{missing}', which the rule never yields",
                self.kind
            ));
        }
        Ok(())
    }
}
