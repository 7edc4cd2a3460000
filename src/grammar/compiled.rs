//! Validated, compiled rules and the matcher that applies them to a line.
//!
//! Every rule names literal anchors; one Aho-Corasick automaton over all anchors finds, in a single pass
//! over the line, which rules can possibly match (`Grammar::candidates`). Applying the rules is the parse
//! stage's job.

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

use super::raw::{RawExample, RawRule};
use super::GrammarError;

/// A rule ready to run.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub event: String,
    pub file: String,
    pub anchors: Vec<String>,
    pub regex: Regex,
    /// Also read the line as a Go slog record.
    pub logfmt: bool,
    pub key_prefix: Option<String>,
    pub rename: Vec<(String, String)>,
    pub set: Vec<(String, String)>,
    pub examples: Vec<RawExample>,
}

impl Rule {
    pub(super) fn compile(raw: RawRule, file: &str) -> Result<Rule, GrammarError> {
        let err = |what: String| GrammarError::Rule {
            file: file.to_string(),
            id: raw.id.clone(),
            what,
        };
        if raw.id.trim().is_empty() {
            return Err(err("empty id".into()));
        }
        if raw.anchors.is_empty() || raw.anchors.iter().any(|a| a.is_empty()) {
            return Err(err("needs at least one non-empty anchor".into()));
        }
        if raw.examples.is_empty() {
            return Err(err("needs at least one example line".into()));
        }
        let regex =
            Regex::new(&raw.regex).map_err(|e| err(format!("regex does not compile: {e}")))?;
        Ok(Rule {
            id: raw.id,
            event: raw.event,
            file: file.to_string(),
            anchors: raw.anchors,
            regex,
            logfmt: raw.logfmt,
            key_prefix: raw.key_prefix,
            rename: raw.rename.into_iter().collect(),
            set: raw.set.into_iter().collect(),
            examples: raw.examples,
        })
    }
}

/// All rules, in precedence order, with the anchor prefilter.
#[derive(Debug)]
pub struct Grammar {
    pub rules: Vec<Rule>,
    anchors: AhoCorasick,
    /// For each anchor pattern, the rules that listed it.
    anchor_rules: Vec<Vec<usize>>,
    /// The files the grammar was built from, in order, with where each came from.
    pub files: Vec<(String, String)>,
}

impl Grammar {
    pub(super) fn build(
        rules: Vec<Rule>,
        files: Vec<(String, String)>,
    ) -> Result<Grammar, GrammarError> {
        let mut patterns: Vec<String> = Vec::new();
        let mut anchor_rules: Vec<Vec<usize>> = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            for anchor in rule_anchors(rule) {
                match patterns.iter().position(|p| p == anchor) {
                    Some(p) => anchor_rules[p].push(index),
                    None => {
                        patterns.push(anchor.to_string());
                        anchor_rules.push(vec![index]);
                    }
                }
            }
        }
        let anchors = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .map_err(|e| GrammarError::Prefilter(e.to_string()))?;
        Ok(Grammar {
            rules,
            anchors,
            anchor_rules,
            files,
        })
    }

    /// Fill `out` with the indices of the rules whose anchors occur in `line`, in precedence order.
    /// Most lines of a log contain no anchor at all, and cost one pass of the automaton.
    pub fn candidates(&self, line: &str, out: &mut Vec<usize>) {
        out.clear();
        for m in self.anchors.find_overlapping_iter(line) {
            out.extend_from_slice(&self.anchor_rules[m.pattern().as_usize()]);
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }
}

fn rule_anchors(rule: &Rule) -> impl Iterator<Item = &str> {
    rule.anchors.iter().map(String::as_str)
}
