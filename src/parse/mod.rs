//! Parsing: logical lines in, typed [`Event`]s out.
//!
//! The grammar decides which lines are which (see `grammars/`); [`matcher`] applies a rule to a line and
//! yields its [`fields`]. Each event kind is defined once, by an [`kind::EventSpec`] that sits beside its
//! builder in the module of its family of log lines ([`server`], [`estimate`], [`engine`], [`llama`],
//! [`llama_server`], [`fit`]; [`command`] reads runner command lines, [`words`] the words of typed choices);
//! [`spec`] gathers them and checks every rule against its kind when the [`Parser`] is built, which then
//! builds each matched line with its rule's spec. [`values`] holds the nom parsers for sizes, lists, logfmt
//! and Go structs. Lines that no rule recognises are counted, and those that look like memory lines are kept
//! for `--show-unrecognized`.
//!
//! The imports between these files form a DAG (a test below holds it), leaves first: [`values`], [`event`],
//! [`clock`]; [`fields`] (on values); [`matcher`] (fields); [`words`] (event); [`command`] and [`kind`]
//! (fields, event); the families (kind, fields, words, values, command); [`spec`] (the families); [`build`]
//! and this file (spec).

pub mod build;
pub mod clock;
pub mod command;
pub mod engine;
pub mod estimate;
pub mod event;
pub mod fields;
pub mod figures;
pub mod fit;
pub mod kind;
pub mod llama;
pub mod llama_server;
pub mod matcher;
pub mod scheduler;
pub mod server;
pub mod serving;
pub mod serving_line;
pub mod serving_memory;
pub mod serving_memory_line;
pub mod signature;
pub mod spec;
pub mod values;
pub mod words;

use std::sync::Arc;

use aho_corasick::AhoCorasick;

use crate::grammar::Grammar;
use crate::prefilter::{Groups, Hits, LineFilter, LineFilterBuilder};
pub use event::{Event, EventKind, FailureLine};
use kind::EventSpec;

/// Prefilter groups, one bit each: a rule anchor may occur in the line, or (only) a memory word. One SIMD scan
/// tells which; a line with neither costs nothing more.
const ANCHOR: Groups = 1;
/// See [`ANCHOR`]: not a rule, but counted (`unrecognized_memory_lines`).
const MEMORY_WORD: Groups = 2;

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
    /// The literal prefilter over every anchor and memory word (see [`ANCHOR`]); shared with a thread that
    /// scans lines ahead of the parser ([`Parser::line_filter`]).
    filter: Arc<LineFilter>,
    memory_words: AhoCorasick,
    candidates: Vec<usize>,
    /// Rule ids, shared with the events that cite them.
    rule_ids: Vec<Arc<str>>,
    /// Each rule's event spec, by rule index: resolved once, so a matched line is built without a lookup.
    specs: Vec<&'static EventSpec>,
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
    /// Check every rule against its event's spec (known event, `set` keys and words, obtainable fields), then
    /// build the parser.
    pub fn new(grammar: Grammar) -> Result<Parser, ParserError> {
        let specs = grammar
            .rules
            .iter()
            .map(|rule| {
                spec::check_rule(rule).map_err(|what| ParserError {
                    file: rule.file.clone(),
                    id: rule.id.clone(),
                    what,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rule_ids = grammar
            .rules
            .iter()
            .map(|r| Arc::from(r.id.as_str()))
            .collect();
        let memory_words = AhoCorasick::new(MEMORY_WORDS).expect("static patterns");
        let filter = LineFilterBuilder::new()
            .add(
                ANCHOR,
                grammar
                    .rules
                    .iter()
                    .flat_map(|r| r.anchors.iter().map(String::as_str)),
            )
            .add(MEMORY_WORD, MEMORY_WORDS.iter().copied())
            .build()
            .into();
        Ok(Parser {
            grammar,
            filter,
            memory_words,
            candidates: Vec::new(),
            rule_ids,
            specs,
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

    /// Parse one logical line, every rule tried (no prefilter).
    pub fn parse_line(&mut self, number: u64, line: &str) -> LineOutcome {
        self.parse_line_prefiltered(number, line, true, false)
    }

    /// Parse one logical line of a stream: the literal prefilter first decides which rules can match at all,
    /// so the common line that carries no anchor and no memory word costs one scan. The outcome is the same
    /// as [`Parser::parse_line`]'s (a test holds this on every sample and grammar example).
    pub fn read_line(&mut self, number: u64, line: &str) -> LineOutcome {
        let hits = self.filter.scan(line.as_bytes());
        self.read_scanned_line(number, line, hits)
    }

    /// The literal prefilter [`Parser::read_line`] scans each line with, for a thread that scans the lines
    /// before they reach the parser ([`Parser::read_scanned_line`]).
    pub fn line_filter(&self) -> Arc<LineFilter> {
        Arc::clone(&self.filter)
    }

    /// [`Parser::read_line`] for a line already scanned: `hits` must be what [`Parser::line_filter`] found in
    /// it.
    pub fn read_scanned_line(&mut self, number: u64, line: &str, hits: Hits) -> LineOutcome {
        if hits.possible & (ANCHOR | MEMORY_WORD) == 0 {
            return LineOutcome::Unrecognized { memory_like: false };
        }
        self.parse_line_prefiltered(
            number,
            line,
            hits.possible & ANCHOR != 0,
            hits.certain & MEMORY_WORD != 0,
        )
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
            return match (self.specs[index].build)(&fields) {
                // A runtime's signature (`grammar::signatures`, the last rules) on a line that carries memory
                // figures no rule read: the figures matter more than the sign, so the line stays one not
                // understood (listed with `--show-unrecognized`). `offload` alone names no figure (the
                // Ollama engine's `offloading 20 repeating layers to GPU` is a sign).
                Ok(EventKind::RuntimeSign(_))
                    if self
                        .memory_words
                        .find_iter(line)
                        .any(|m| MEMORY_WORDS[m.pattern().as_usize()] != "offload") =>
                {
                    LineOutcome::Unrecognized { memory_like: true }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Framer;

    /// The prefilter's promise, on every line of every sample log and every grammar example: a line it
    /// passes over is one the parser ignores, and a line without the anchor bit matches no rule.
    #[test]
    fn the_prefilter_only_skips_what_the_parser_ignores() {
        let mut parser = Parser::new(crate::grammar::load(None).unwrap()).unwrap();
        let mut lines: Vec<String> = parser
            .grammar()
            .rules
            .iter()
            .flat_map(|r| r.examples.iter().map(|e| e.line.clone()))
            .collect();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-logs");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // The answer files beside the samples are not logs.
            if path.to_string_lossy().ends_with(".expect.toml") {
                continue;
            }
            let bytes = std::fs::read(path).unwrap();
            let mut framer = Framer::new();
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                lines.push(String::from_utf8_lossy(line).into_owned());
                framer.push(i as u64 + 1, line, |_, text| lines.push(text.to_string()));
            }
            framer.finish(|_, text| lines.push(text.to_string()));
        }
        let (mut skipped, mut memory_only) = (0, 0);
        for line in &lines {
            let hits = parser.filter.scan(line.as_bytes());
            let full = format!("{:?}", parser.parse_line(1, line));
            if hits.possible & (ANCHOR | MEMORY_WORD) == 0 {
                skipped += 1;
                assert_eq!(full, "Unrecognized { memory_like: false }", "{line}");
            } else {
                memory_only += usize::from(hits.possible & ANCHOR == 0);
            }
            assert_eq!(full, format!("{:?}", parser.read_line(1, line)), "{line}");
        }
        assert!(skipped > 100 && memory_only > 0, "{skipped} {memory_only}");
        // Scanned together, as the reading thread scans a batch: the lines' texts abutting, or with text
        // that is no line's between them (keys in it, as a batch's file names may hold), each line gets
        // what it gets alone.
        for gap in ["", "MiB offload=memory buffer size"] {
            let mut text = String::new();
            let mut ranges = Vec::new();
            for line in &lines {
                text.push_str(gap);
                ranges.push((text.len(), text.len() + line.len()));
                text.push_str(line);
            }
            let mut together = Vec::new();
            parser
                .filter
                .scan_lines(text.as_bytes(), &ranges, &mut together);
            let alone: Vec<Hits> = lines
                .iter()
                .map(|l| parser.filter.scan(l.as_bytes()))
                .collect();
            assert_eq!(together, alone, "gap {gap:?}");
        }
    }

    /// The files of this module import each other without a cycle (`use super::…` and `crate::parse::…`,
    /// tests included), so each can be read knowing only what it imports.
    #[test]
    fn the_imports_between_parse_files_have_no_cycle() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/parse");
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        files.sort();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        // The first path segment after each `super::`/`crate::parse::`, or of each item of a `{…}` group.
        let imports = |text: &str| -> Vec<&str> {
            let mut found = Vec::new();
            for prefix in ["super::", "crate::parse::"] {
                for (at, _) in text.match_indices(prefix) {
                    let rest = &text[at + prefix.len()..];
                    let items = match rest.strip_prefix('{') {
                        Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                        None => rest,
                    };
                    for item in items.split(',') {
                        let name = item
                            .trim()
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or("");
                        if let Some(n) = names.iter().find(|n| **n == name) {
                            found.push(*n);
                        }
                        if !rest.starts_with('{') {
                            break;
                        }
                    }
                }
            }
            found
        };
        let edges: Vec<(&str, Vec<&str>)> = files
            .iter()
            .filter(|(n, _)| n != "mod")
            .map(|(n, text)| (n.as_str(), imports(text)))
            .collect();
        // Take away, again and again, the files that import no file left; a cycle is what remains.
        let mut left: Vec<&str> = edges.iter().map(|(n, _)| *n).collect();
        loop {
            let free: Vec<&str> = left
                .iter()
                .copied()
                .filter(|n| {
                    let deps = &edges.iter().find(|(m, _)| m == n).unwrap().1;
                    !deps.iter().any(|d| d != n && left.contains(d))
                })
                .collect();
            if free.is_empty() {
                break;
            }
            left.retain(|n| !free.contains(n));
        }
        assert!(
            left.is_empty(),
            "files of src/parse/ in an import cycle or importing one: {left:?}"
        );
    }
}
