//! Parsing: logical lines in, typed [`Event`]s out.
//!
//! The grammar decides which lines are which (see `grammars/`); [`build`] turns a match into a typed event
//! (with [`command`] for runner command lines and [`fit`] for llama.cpp's `--fit` lines); [`values`] holds
//! the nom parsers for sizes, lists, logfmt and Go structs. Lines that no rule recognises
//! are counted, and those that look like memory lines are kept for `--show-unrecognized`.

pub mod build;
pub mod clock;
pub mod command;
pub mod event;
pub mod fit;
pub mod matcher;
pub mod values;

use std::sync::Arc;

use aho_corasick::AhoCorasick;

use crate::grammar::Grammar;
pub use event::{Event, EventKind};

/// Words that mark a line as being about memory; an unrecognised line containing one is reported.
const MEMORY_WORDS: &[&str] = &[
    "MiB",
    "GiB",
    " MB",
    "buffer size",
    "VRAM",
    "memory",
    "offload",
];

/// What became of one line.
#[derive(Debug)]
pub enum LineOutcome {
    Event(Box<Event>),
    /// No rule matched.
    Unrecognized {
        memory_like: bool,
    },
    /// A rule matched but its fields could not be read.
    Malformed {
        rule: String,
        reason: String,
    },
}

/// Applies a grammar to lines. Cloned per worker thread in a batch (clones share nothing mutable).
#[derive(Clone)]
pub struct Parser {
    grammar: Grammar,
    memory_words: AhoCorasick,
    candidates: Vec<usize>,
    /// Rule ids, shared with the events that cite them.
    rule_ids: Vec<Arc<str>>,
}

/// The parser cannot use a grammar.
#[derive(Debug, thiserror::Error)]
#[error("grammar file {file}, rule '{id}': {what}")]
pub struct ParserError {
    pub file: String,
    pub id: String,
    pub what: String,
}

impl Parser {
    /// Check that every rule names a known event kind, then build the parser.
    pub fn new(grammar: Grammar) -> Result<Parser, ParserError> {
        for rule in &grammar.rules {
            if !build::EVENT_KINDS
                .iter()
                .any(|(kind, _)| *kind == rule.event)
            {
                let known: Vec<&str> = build::EVENT_KINDS.iter().map(|(k, _)| *k).collect();
                return Err(ParserError {
                    file: rule.file.clone(),
                    id: rule.id.clone(),
                    what: format!(
                        "unknown event '{}' (known: {})",
                        rule.event,
                        known.join(", ")
                    ),
                });
            }
        }
        let rule_ids = grammar
            .rules
            .iter()
            .map(|r| Arc::from(r.id.as_str()))
            .collect();
        let memory_words = AhoCorasick::new(MEMORY_WORDS).expect("static patterns");
        Ok(Parser {
            grammar,
            memory_words,
            candidates: Vec::new(),
            rule_ids,
        })
    }

    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// Every rule anchor: a line containing none of them matches no rule.
    pub fn anchors(&self) -> impl Iterator<Item = &str> {
        self.grammar
            .rules
            .iter()
            .flat_map(|r| r.anchors.iter().map(String::as_str))
    }

    /// The words that make an unrecognised line memory-like.
    pub fn memory_words(&self) -> &'static [&'static str] {
        MEMORY_WORDS
    }

    /// Parse one logical line.
    pub fn parse_line(&mut self, number: u64, line: &str) -> LineOutcome {
        self.parse_line_prefiltered(number, line, true, false)
    }

    /// Parse one logical line that a prefilter has looked at. `may_have_anchor` false promises that no
    /// anchor ([`Parser::anchors`]) occurs in it, so no rule is tried; `has_memory_word` true promises that a
    /// memory word ([`Parser::memory_words`]) does, so they need not be looked for.
    pub fn parse_line_prefiltered(
        &mut self,
        number: u64,
        line: &str,
        may_have_anchor: bool,
        has_memory_word: bool,
    ) -> LineOutcome {
        if !may_have_anchor {
            return LineOutcome::Unrecognized {
                memory_like: has_memory_word || self.memory_words.is_match(line),
            };
        }
        self.grammar.candidates(line, &mut self.candidates);
        for &index in &self.candidates {
            let rule = &self.grammar.rules[index];
            let Some(fields) = matcher::apply(rule, line) else {
                continue;
            };
            return match build::build(&rule.event, &fields) {
                Ok(kind) => LineOutcome::Event(Box::new(Event {
                    line: number,
                    rule: self.rule_ids[index].clone(),
                    kind,
                })),
                Err(reason) => LineOutcome::Malformed {
                    rule: rule.id.clone(),
                    reason,
                },
            };
        }
        LineOutcome::Unrecognized {
            memory_like: has_memory_word || self.memory_words.is_match(line),
        }
    }
}
