//! Validated, compiled rules and the matcher that applies them to a line.
//!
//! Every rule names literal anchors; one Aho-Corasick automaton over all anchors finds, in a single pass
//! over the line, which rules can possibly match (`Grammar::candidates`). Applying the rules is the parse
//! stage's job.

use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::{meta, PatternID};

use super::raw::{RawExample, RawRule};
use super::GrammarError;

/// Each rule's lazy DFA cache, forward and reverse (the regex crate's default is 2 MiB per regex). A rule's
/// regex only runs on the rare lines holding its anchors, and on the mix input the instructions spent in the
/// rule regexes are the same with 16 KiB as with 256 KiB (callgrind, `docs/performance.md`), while a log that
/// reaches many rules kept up to 256 KiB of states for each (~10 MB of peak memory on the mix). A regex whose
/// NFA needs more than this for a handful of states runs without the lazy DFA (the backtracker and the PikeVM,
/// same matches); the long-lines input, where the DFA matters most, reads as fast as with 256 KiB.
const LAZY_DFA_CACHE: usize = 16 << 10;

/// A rule's regex: `regex::Regex`'s engine (`regex_automata::meta`, same syntax, same matches, Unicode and
/// UTF-8 as there) built without the one-pass DFA that `regex::Regex` builds for every regex with a capture
/// group: ~0.4 MB each with the grammar's literals and Unicode classes, 20 MB of every run's memory before its
/// first line (heaptrack). The captures of the rare matching line are found by the bounded backtracker or
/// the PikeVM instead.
#[derive(Debug, Clone)]
pub struct RuleRegex(meta::Regex);

impl RuleRegex {
    pub fn new(pattern: &str) -> Result<RuleRegex, String> {
        meta::Regex::builder()
            .configure(
                meta::Config::new()
                    .onepass(false)
                    .hybrid_cache_capacity(LAZY_DFA_CACHE),
            )
            .build(pattern)
            .map(RuleRegex)
            .map_err(|e| e.to_string())
    }

    /// The named groups, in the pattern's order.
    pub fn capture_names(&self) -> impl Iterator<Item = &str> {
        self.0.group_info().pattern_names(PatternID::ZERO).flatten()
    }

    /// On a match, each named group that took part with its text, in the pattern's order.
    pub fn named_captures<'l>(&self, line: &'l str) -> Option<Vec<(&str, &'l str)>> {
        let mut caps = self.0.create_captures();
        self.0.captures(line, &mut caps);
        if !caps.is_match() {
            return None;
        }
        Some(
            self.capture_names()
                .filter_map(|name| Some((name, &line[caps.get_group_by_name(name)?.range()])))
                .collect(),
        )
    }

    pub fn is_match(&self, line: &str) -> bool {
        self.0.is_match(line)
    }
}

/// A rule ready to run.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub event: String,
    pub file: String,
    pub anchors: Vec<String>,
    pub regex: RuleRegex,
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
            RuleRegex::new(&raw.regex).map_err(|e| err(format!("regex does not compile: {e}")))?;
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
#[derive(Debug, Clone)]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The same matches and groups as `regex::Regex` on the same pattern.
    #[test]
    fn a_rule_regex_captures_as_regex_does() {
        let pattern = r"^(?P<device>CUDA\d+): (?P<name>.*?) \((?P<total>\d+) MiB(?:, (?P<free>\d+) MiB free)?\)\s*$";
        let ours = RuleRegex::new(pattern).unwrap();
        let theirs = regex::Regex::new(pattern).unwrap();
        assert_eq!(
            ours.capture_names().collect::<Vec<_>>(),
            theirs.capture_names().flatten().collect::<Vec<_>>()
        );
        for line in [
            "CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23500 MiB free)",
            "CUDA1: Ünïcode (1 MiB)  ",
            "CUDA1: nothing",
        ] {
            let expected = theirs.captures(line).map(|c| {
                theirs
                    .capture_names()
                    .flatten()
                    .filter_map(|n| Some((n, c.name(n)?.as_str())))
                    .collect::<Vec<_>>()
            });
            assert_eq!(ours.named_captures(line), expected, "{line}");
            assert_eq!(ours.is_match(line), theirs.is_match(line));
        }
    }
}
