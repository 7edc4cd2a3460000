//! Validated, compiled rules and the matcher that applies them to a line.
//!
//! Every rule names literal anchors; one Aho-Corasick automaton over all anchors finds, in a single pass
//! over the line, which rules can possibly match (`Grammar::candidates`; a DFA of the same anchors for long
//! lines). Applying the rules is the parse stage's job.

use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::meta;
use regex_syntax::ast::{self, Ast};

use super::raw::{RawExample, RawRule};
use super::GrammarError;

/// Each rule's lazy DFA cache, forward and reverse (the regex crate's default is 2 MiB per regex). A rule's
/// regex only runs on the lines holding its anchors, but a log of many loads reaches the same few rules
/// again and again: with 16 KiB their states were thrown away and determinized anew all the time (4 % of a
/// run's instructions on the mix, `docs/performance.md`, Speed II, fourth stop), with 64 KiB they stay, and
/// 256 KiB saves nothing more. A log that reaches many rules keeps at most this much for each (peak memory
/// 23 → 25 MB on the mix). A regex whose NFA needs more than this for a handful of states runs without the
/// lazy DFA (the backtracker and the PikeVM, same matches). Since the fifth stop only the lines longer than
/// [`SHORT_LINE_BYTES`] or beyond ASCII use it: on the mix only the few rules a longer line reaches keep one.
const LAZY_DFA_CACHE: usize = 64 << 10;

/// An ASCII line at most this long is matched by a build of the rule's regex without the lazy DFA (the
/// bounded backtracker finds the match and its groups in one pass, [`RuleRegex`]); a longer one by the build
/// with it. To find a match's groups the regex engine first runs the lazy DFA forward and back over the line
/// to find where the match lies, then the backtracker over that span: on a line of a few hundred bytes the
/// DFA's two passes (and determinizing its states) cost more than the backtracker's one over the whole line.
/// The backtracker's work grows with the line times the NFA's states (its visited set), the DFA's with the
/// line alone: on long lines the DFA wins by far (longlines-100M, with the DFA off for every line: 0.49 →
/// 3.8 s). The cost of both on the mix: `docs/performance.md`, Speed II, fifth stop.
const SHORT_LINE_BYTES: usize = 1 << 10;

/// A line at least this long is searched for anchors with the anchors' DFA ([`Grammar::candidates`]), built
/// on the first such line. On a long line the DFA searches about twice as fast as the automaton built at load
/// (~8 against ~17 instructions a byte, callgrind; longlines-100M 0.47 → 0.35 s of CPU), but it takes ~10 ms
/// to build (38 M instructions) and its table (~2 MB) is slower than the small automaton on short lines: on
/// the mix, built after its first 4 MiB of searched lines, it cost 6 % more time and 2 MB more memory.
const DFA_LINE_BYTES: usize = 16 << 10;

/// A rule's regex: `regex::Regex`'s engine (`regex_automata::meta`, same syntax, same matches, Unicode and
/// UTF-8 as there) built without the one-pass DFA that `regex::Regex` builds for every regex with a capture
/// group: ~0.4 MB each with the grammar's literals and Unicode classes, 20 MB of every run's memory before its
/// first line (heaptrack). The captures of the rare matching line are found by the bounded backtracker or
/// the PikeVM instead.
///
/// The pattern's syntax is parsed when the rule is loaded (a syntax error is the grammar's error, and the
/// capture names are known); the matcher may be built then ([`RuleRegex::new`]) or on the first line that
/// reaches the rule ([`RuleRegex::on_first_use`]): building every rule's NFAs was most of a run's start-up
/// (~25 ms, `docs/performance.md`), and a log reaches few rules. Clones share the one matcher, built once.
///
/// A line that is all ASCII is matched by a twin built from the same pattern with Unicode classes off (its
/// `\d`, `\w`, `\s`, `\S` and `.` are then byte classes): on ASCII text every class, case folding and word
/// boundary of the pattern accepts exactly the bytes it accepts in Unicode mode (Unicode's digits, word
/// characters and white space within ASCII are `[0-9]`, `[0-9A-Za-z_]` and `[\t\n\v\f\r ]`, its case
/// folding pairs no ASCII letter with another ASCII letter but its other case, and every byte offset is a
/// character boundary), so the matches and groups are the same; its NFA has a few states where a Unicode
/// `\w` has hundreds, and the bounded backtracker that finds a match's groups clears and walks a visited
/// set of states × bytes. A pattern the twin cannot be built from (a Unicode property such as `\p{L}`, a
/// non-ASCII literal) is matched by the Unicode build on every line.
#[derive(Debug, Clone)]
pub struct RuleRegex(Arc<LazyRegex>);

#[derive(Debug)]
struct LazyRegex {
    pattern: String,
    /// The named groups with their group indexes (the same in both builds), in the pattern's order.
    names: Vec<(usize, String)>,
    /// `None` once building failed (only a pattern past the engine's size limits, which [`RuleRegex::new`]
    /// reports): such a regex matches nothing on a line that is not ASCII. (Only the built-in grammars are
    /// built on first use, and every one of their regexes builds: a test below.)
    built: OnceLock<Option<meta::Regex>>,
    /// The twin for ASCII lines, built on the first ASCII line longer than [`SHORT_LINE_BYTES`]; `None` when
    /// the pattern has none.
    ascii: OnceLock<Option<meta::Regex>>,
    /// The twin without the lazy DFA, for ASCII lines of at most [`SHORT_LINE_BYTES`]; built on the first.
    ascii_short: OnceLock<Option<meta::Regex>>,
}

impl RuleRegex {
    /// Parse and build the regex now: every error is reported here.
    pub fn new(pattern: &str) -> Result<RuleRegex, String> {
        let regex = Self::on_first_use(pattern)?;
        let built = build(pattern)?;
        let _ = regex.0.built.set(Some(built));
        Ok(regex)
    }

    /// Parse the regex's syntax now (its syntax errors are reported here) and build its matcher on first use
    /// (an error only the build finds, such as an unknown Unicode class, then leaves it matching nothing:
    /// the built-in grammars are built on first use, and a test builds every one of their regexes).
    pub fn on_first_use(pattern: &str) -> Result<RuleRegex, String> {
        let ast = ast::parse::Parser::new()
            .parse(pattern)
            .map_err(|e| e.to_string())?;
        let mut names = Vec::new();
        capture_names(&ast, &mut names);
        names.sort_by_key(|(index, _)| *index);
        Ok(RuleRegex(Arc::new(LazyRegex {
            pattern: pattern.to_string(),
            names: names
                .into_iter()
                .map(|(index, name)| (index as usize, name))
                .collect(),
            built: OnceLock::new(),
            ascii: OnceLock::new(),
            ascii_short: OnceLock::new(),
        })))
    }

    fn built(&self) -> Option<&meta::Regex> {
        self.0
            .built
            .get_or_init(|| build(&self.0.pattern).ok())
            .as_ref()
    }

    /// The matcher for `line`: the ASCII twin when the line is ASCII and the pattern has one, without the
    /// lazy DFA when the line is short ([`SHORT_LINE_BYTES`]).
    fn for_line(&self, line: &str) -> Option<&meta::Regex> {
        let twin = || {
            let (twin, lazy_dfa) = if line.len() <= SHORT_LINE_BYTES {
                (&self.0.ascii_short, false)
            } else {
                (&self.0.ascii, true)
            };
            twin.get_or_init(|| build_ascii(&self.0.pattern, lazy_dfa).ok())
                .as_ref()
        };
        line.is_ascii()
            .then(twin)
            .flatten()
            .or_else(|| self.built())
    }

    /// The named groups, in the pattern's order.
    pub fn capture_names(&self) -> impl Iterator<Item = &str> {
        self.0.names.iter().map(|(_, name)| name.as_str())
    }

    /// On a match, each named group that took part with its text, in the pattern's order.
    ///
    /// The groups are read from the match's slots by index (group `i` of the pattern is slots `2i` and
    /// `2i + 1`), in a slot array on the stack when the pattern has few groups: a rule regex runs on every
    /// line holding its anchors, and a `Captures` allocated for each, its groups looked up by name through a
    /// hash map, cost more than the matching on a short line (`docs/performance.md`, Speed II).
    pub fn named_captures<'l>(&self, line: &'l str) -> Option<Vec<(&str, &'l str)>> {
        /// Slots kept on the stack: sixteen groups, the implicit whole match included.
        const STACK_SLOTS: usize = 32;
        let regex = self.for_line(line)?;
        let len = regex.group_info().slot_len();
        let mut on_stack = [None; STACK_SLOTS];
        let mut on_heap = Vec::new();
        let slots = if len <= STACK_SLOTS {
            &mut on_stack[..len]
        } else {
            on_heap.resize(len, None);
            &mut on_heap[..]
        };
        regex.search_slots(&regex_automata::Input::new(line), slots)?;
        Some(
            self.0
                .names
                .iter()
                .filter_map(|(index, name)| {
                    let start = (*slots.get(2 * index)?)?.get();
                    let end = (*slots.get(2 * index + 1)?)?.get();
                    Some((name.as_str(), &line[start..end]))
                })
                .collect(),
        )
    }

    pub fn is_match(&self, line: &str) -> bool {
        self.for_line(line)
            .is_some_and(|regex| regex.is_match(line))
    }
}

fn build(pattern: &str) -> Result<meta::Regex, String> {
    build_with(pattern, regex_automata::util::syntax::Config::new(), true)
}

/// The ASCII twin of `build(pattern)` (see [`RuleRegex`]): Unicode classes off, and so the check that no
/// match can split a UTF-8 character, which cannot happen on the ASCII lines it is given; with or without
/// the lazy DFA ([`SHORT_LINE_BYTES`]).
fn build_ascii(pattern: &str, lazy_dfa: bool) -> Result<meta::Regex, String> {
    build_with(
        pattern,
        regex_automata::util::syntax::Config::new()
            .unicode(false)
            .utf8(false),
        lazy_dfa,
    )
}

fn build_with(
    pattern: &str,
    syntax: regex_automata::util::syntax::Config,
    lazy_dfa: bool,
) -> Result<meta::Regex, String> {
    meta::Regex::builder()
        .syntax(syntax)
        .configure(
            meta::Config::new()
                .onepass(false)
                .hybrid(lazy_dfa)
                .hybrid_cache_capacity(LAZY_DFA_CACHE),
        )
        .build(pattern)
        .map_err(|e| e.to_string())
}

/// Every named capture group of `ast` with its group index (the order `regex` numbers them in: the
/// translation to the HIR keeps the syntax tree's indexes). The syntax tree is all a rule needs at load:
/// translating it (Unicode classes such as `\w` expanded into hundreds of ranges) was a third of every run's
/// start-up (`docs/performance.md`, Speed II, fifth stop), and the matcher translates it again when built.
fn capture_names(ast: &Ast, out: &mut Vec<(u32, String)>) {
    match ast {
        Ast::Group(group) => {
            match &group.kind {
                ast::GroupKind::CaptureName { name, .. } => {
                    out.push((name.index, name.name.clone()))
                }
                ast::GroupKind::CaptureIndex(_) | ast::GroupKind::NonCapturing(_) => {}
            }
            capture_names(&group.ast, out);
        }
        Ast::Repetition(repetition) => capture_names(&repetition.ast, out),
        Ast::Concat(concat) => concat.asts.iter().for_each(|sub| capture_names(sub, out)),
        Ast::Alternation(alternation) => alternation
            .asts
            .iter()
            .for_each(|sub| capture_names(sub, out)),
        Ast::Empty(_)
        | Ast::Flags(_)
        | Ast::Literal(_)
        | Ast::Dot(_)
        | Ast::Assertion(_)
        | Ast::ClassUnicode(_)
        | Ast::ClassPerl(_)
        | Ast::ClassBracketed(_) => {}
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
    /// Check a rule as read from a grammar file and compile it; `build_now` builds its regex's matcher now
    /// (every error reported here) rather than on first use (syntax errors only).
    pub(super) fn compile(raw: RawRule, file: &str, build_now: bool) -> Result<Rule, GrammarError> {
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
        let regex = if build_now {
            RuleRegex::new(&raw.regex)
        } else {
            RuleRegex::on_first_use(&raw.regex)
        };
        let regex = regex.map_err(|e| err(format!("regex does not compile: {e}")))?;
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
    /// The anchors' automaton built at load (a noncontiguous or contiguous NFA: quick to build).
    anchors: AhoCorasick,
    /// The anchors, for the DFA built on the first line of [`DFA_LINE_BYTES`] or more: a log of short lines
    /// never pays for it.
    patterns: Arc<[String]>,
    anchors_dfa: OnceLock<AhoCorasick>,
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
            patterns: patterns.into(),
            anchors_dfa: OnceLock::new(),
            anchor_rules,
            files,
        })
    }

    /// Fill `out` with the indices of the rules whose anchors occur in `line`, in precedence order.
    /// Most lines of a log contain no anchor at all, and cost one pass of the automaton.
    pub fn candidates(&self, line: &str, out: &mut Vec<usize>) {
        out.clear();
        for m in self.anchor_search(line.len()).find_overlapping_iter(line) {
            out.extend_from_slice(&self.anchor_rules[m.pattern().as_usize()]);
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// The automaton to search a line of `len` bytes with: the DFA for a long line ([`DFA_LINE_BYTES`]), the
    /// one built at load for the others. Both find the same anchors. If the DFA cannot be built (too many
    /// states), the one built at load serves on.
    fn anchor_search(&self, len: usize) -> &AhoCorasick {
        if len < DFA_LINE_BYTES {
            return &self.anchors;
        }
        self.anchors_dfa.get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(self.patterns.iter())
                .unwrap_or_else(|_| self.anchors.clone())
        })
    }
}

fn rule_anchors(rule: &Rule) -> impl Iterator<Item = &str> {
    rule.anchors.iter().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The anchors' DFA, which searches long lines, finds the candidates the automaton built at load finds, on
    /// every grammar example and on lines holding several anchors, each made longer than [`DFA_LINE_BYTES`].
    #[test]
    fn the_anchors_dfa_finds_the_candidates_of_the_automaton_built_at_load() {
        let grammar = super::super::load(None).unwrap();
        let mut lines: Vec<String> = grammar
            .rules
            .iter()
            .flat_map(|r| r.examples.iter().map(|e| e.line.clone()))
            .collect();
        let all_anchors = grammar.patterns.join(" ");
        lines.push(all_anchors.clone());
        lines.push(format!("{all_anchors} {}", lines[0]));
        // A byte no anchor holds, so the padding adds no match.
        let padding = "\x01".repeat(DFA_LINE_BYTES);
        for line in &lines {
            let mut short = Vec::new();
            grammar.candidates(line, &mut short);
            let mut long = Vec::new();
            grammar.candidates(&format!("{line}{padding}"), &mut long);
            assert_eq!(long, short, "{line}");
        }
        assert!(
            grammar.anchors_dfa.get().is_some(),
            "the long lines built the DFA"
        );
        let mut every = Vec::new();
        grammar.candidates(&format!("{all_anchors}{padding}"), &mut every);
        assert_eq!(every.len(), grammar.rules.len());
    }

    /// Every built-in rule's regex, built on first use in a run, builds, and the capture names read from its
    /// syntax before it is built are the built matcher's.
    #[test]
    fn every_built_in_rule_regex_builds_with_the_names_read_before() {
        let grammar = super::super::load(None).unwrap();
        assert!(grammar.rules.len() > 100);
        for rule in &grammar.rules {
            let built = build(&rule.regex.0.pattern).unwrap_or_else(|e| panic!("{}: {e}", rule.id));
            let names: Vec<&str> = built
                .group_info()
                .pattern_names(regex_automata::PatternID::ZERO)
                .flatten()
                .collect();
            assert_eq!(
                rule.regex.capture_names().collect::<Vec<_>>(),
                names,
                "{}",
                rule.id
            );
            assert!(
                rule.regex.0.built.get().is_none(),
                "{} built at load",
                rule.id
            );
        }
    }

    /// A pattern past the engine's size limits, or with a Unicode class that does not exist: no syntax
    /// error, an error when built now, and a regex matching nothing (never a panic) when built on first use.
    /// A syntax error is an error either way.
    #[test]
    fn a_regex_that_cannot_be_built_is_an_error_now_and_no_match_later() {
        for pattern in [r"\w{1000}\w{1000}\w{1000}\w{1000}", r"(?P<x>\p{Nope})"] {
            assert!(RuleRegex::new(pattern).is_err(), "{pattern}");
            let lazy = RuleRegex::on_first_use(pattern).unwrap();
            assert!(!lazy.is_match("word"), "{pattern}");
            assert_eq!(lazy.named_captures("word"), None, "{pattern}");
        }
        for pattern in [r"(?P<x>a", r"a{2,1}", r"(?P<1x>a)"] {
            assert!(RuleRegex::new(pattern).is_err(), "{pattern}");
            assert!(RuleRegex::on_first_use(pattern).is_err(), "{pattern}");
        }
    }

    /// The ASCII twins (without the lazy DFA for a short line, with it for a long one) find what the Unicode
    /// build finds, groups and all, on every ASCII line of the bundled logs (real lines copied from the
    /// corpus, `sample-logs/`, and the tests' copies, `tests/data/`) that holds one of a built-in rule's
    /// anchors, and on every rule's example lines, for every rule those lines reach, each line also made
    /// longer than [`SHORT_LINE_BYTES`]; and both are built for every built-in pattern.
    #[test]
    fn the_ascii_twin_matches_as_the_unicode_build_on_ascii_lines() {
        let grammar = super::super::load(None).unwrap();
        fn unicode<'r, 'l>(rule: &'r Rule, line: &'l str) -> Option<Vec<(&'r str, &'l str)>> {
            let regex = rule.regex.built().unwrap();
            let mut caps = regex.create_captures();
            regex.captures(line, &mut caps);
            caps.is_match().then(|| {
                rule.regex
                    .capture_names()
                    .filter_map(|name| Some((name, &line[caps.get_group_by_name(name)?.range()])))
                    .collect()
            })
        }
        let mut lines: Vec<String> = grammar
            .rules
            .iter()
            .flat_map(|rule| rule.examples.iter().map(|e| e.line.clone()))
            .collect();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["sample-logs", "tests/data"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            lines.extend(
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(|l| l.trim_end_matches('\r').to_string()),
            );
        }
        let (mut compared, mut matched, mut long) = (0, 0, 0);
        let mut candidates = Vec::new();
        for line in lines.iter().filter(|l| l.is_ascii()) {
            grammar.candidates(line, &mut candidates);
            // The line, and generated neighbours where the classes' edges lie: ASCII controls that are white
            // space in both modes (\x0b) and in neither (\x1c), letters in the other case, digits gone; and
            // the line made longer than SHORT_LINE_BYTES, matched by the twin with the lazy DFA.
            let variants = [
                line.clone(),
                format!("{line}{}", " ".repeat(SHORT_LINE_BYTES)),
                line.replace(' ', "\x0b"),
                line.replace(' ', "\x1c"),
                line.to_ascii_uppercase(),
                line.replace(|c: char| c.is_ascii_digit(), "_"),
            ];
            for (variant, &index) in variants
                .iter()
                .flat_map(|v| candidates.iter().map(move |i| (v, i)))
            {
                let rule = &grammar.rules[index];
                let twin = rule.regex.named_captures(variant);
                assert_eq!(twin, unicode(rule, variant), "{}: {variant:?}", rule.id);
                assert_eq!(rule.regex.is_match(variant), twin.is_some(), "{}", rule.id);
                compared += 1;
                matched += usize::from(twin.is_some());
                long += usize::from(variant.len() > SHORT_LINE_BYTES);
            }
        }
        for rule in &grammar.rules {
            assert!(
                build_ascii(&rule.regex.0.pattern, true).is_ok()
                    && build_ascii(&rule.regex.0.pattern, false).is_ok(),
                "{} has no ASCII twin",
                rule.id
            );
        }
        assert!(
            compared > 10_000 && matched > 1_000 && long > 1_000 && compared - long > 1_000,
            "{compared} {matched} {long}"
        );
    }

    /// A line that is not ASCII is matched by the Unicode build (a Unicode `\w` takes `é`, a byte class
    /// would not), and a pattern with a Unicode property has no twin but still matches ASCII lines.
    #[test]
    fn a_line_beyond_ascii_is_matched_in_unicode() {
        let word = RuleRegex::on_first_use(r"name=(?P<name>\w+)").unwrap();
        assert_eq!(
            word.named_captures("name=ab1_c"),
            Some(vec![("name", "ab1_c")])
        );
        assert_eq!(
            word.named_captures("name=café!"),
            Some(vec![("name", "café")])
        );
        assert!(word.0.built.get().is_some() && word.0.ascii_short.get().is_some());
        assert!(build_ascii(r"(?P<letters>\p{L}+)", false).is_err());
        let letters = RuleRegex::on_first_use(r"(?P<letters>\p{L}+)").unwrap();
        assert_eq!(
            letters.named_captures("12ab"),
            Some(vec![("letters", "ab")])
        );
        assert_eq!(
            letters.named_captures("12éa"),
            Some(vec![("letters", "éa")])
        );
    }

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
