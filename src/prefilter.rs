//! The per-line literal prefilter: one SIMD pass over a line that says which consumers could care about it.
//!
//! A multi-GB log is almost entirely lines no rule reads (access logs, chatter, progress dots). Whether a
//! line *might* matter is a question about literals: a grammar rule can only match a line containing one of
//! its anchors, and an unrecognised line only counts as memory-like if it contains a memory word. This module
//! answers that question for many literal sets at once, as a bit set of *groups* (one group per consumer),
//! so that a line no consumer can use costs one vectorised scan and nothing else.
//!
//! The answer is a necessary condition, never a sufficient one: a group's bit is set whenever one of its
//! literals occurs in the line (and sometimes when it does not). Each consumer still does its own exact
//! check on the lines it is given. To keep the scan fast, a literal that contains another one is dropped
//! before the searcher is built (the shorter one finds every line the longer one would); the built-in grammar
//! and memory words come down to about 60 literals, few enough for the SIMD searcher (Teddy, from the
//! `aho-corasick` crate). Where Teddy is unavailable (no SSSE3/AVX2 or NEON, or more than 128 literals) a
//! plain Aho-Corasick automaton gives the same answer, several times slower.

use aho_corasick::packed;
use aho_corasick::AhoCorasick;

/// A set of consumers, one bit each.
pub type Groups = u32;

/// Literal search screening each line for the consumers whose literals it contains.
#[derive(Debug, Clone)]
pub struct LineFilter {
    searcher: Searcher,
    /// For each searched key, the groups whose literals contain it.
    key_groups: Vec<Groups>,
    /// Every group that has at least one literal.
    all: Groups,
}

#[derive(Debug, Clone)]
enum Searcher {
    /// No literals at all: nothing ever matches.
    Empty,
    Teddy(packed::Searcher),
    Automaton(AhoCorasick),
}

/// Collects literals by group, then builds a [`LineFilter`].
#[derive(Debug, Default, Clone)]
pub struct LineFilterBuilder {
    literals: Vec<(Vec<u8>, Groups)>,
}

impl LineFilterBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add literals for `group` (a single bit). Empty literals are ignored.
    pub fn add<I, S>(&mut self, group: Groups, literals: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        for literal in literals {
            let literal = literal.as_ref();
            if !literal.is_empty() {
                self.literals.push((literal.to_vec(), group));
            }
        }
        self
    }

    pub fn build(&self) -> LineFilter {
        // A literal containing another literal is redundant: the shorter one finds every line it would.
        let mut keys: Vec<&[u8]> = self.literals.iter().map(|(l, _)| l.as_slice()).collect();
        keys.sort_unstable();
        keys.dedup();
        let reduced: Vec<&[u8]> = keys
            .iter()
            .copied()
            .filter(|k| !keys.iter().any(|o| o.len() < k.len() && contains(k, o)))
            .collect();
        // A key answers for every literal that contains it; every literal contains at least one key.
        let key_groups: Vec<Groups> = reduced
            .iter()
            .map(|k| {
                self.literals
                    .iter()
                    .filter(|(l, _)| contains(l, k))
                    .fold(0, |acc, (_, g)| acc | g)
            })
            .collect();
        let all = self.literals.iter().fold(0, |acc, (_, g)| acc | g);
        let searcher = if reduced.is_empty() {
            Searcher::Empty
        } else {
            packed::Config::new()
                .heuristic_pattern_limits(false)
                .builder()
                .extend(reduced.iter())
                .build()
                .map(Searcher::Teddy)
                .unwrap_or_else(|| {
                    Searcher::Automaton(AhoCorasick::new(&reduced).expect("literal patterns"))
                })
        };
        LineFilter {
            searcher,
            key_groups,
            all,
        }
    }
}

impl LineFilter {
    /// The groups whose literals may occur in `line` (0: no consumer can use this line).
    pub fn scan(&self, line: &[u8]) -> Groups {
        let mut found = 0;
        let mut at = 0;
        // Resume one byte after each hit rather than after its end, so keys that overlap a hit are seen too
        // (two keys never start at the same position unless one is a prefix of the other, and then the longer
        // one was dropped). Stop as soon as every group is in.
        while at < line.len() && found != self.all {
            let hit = match &self.searcher {
                Searcher::Empty => None,
                Searcher::Teddy(s) => s
                    .find_in(line, aho_corasick::Span::from(at..line.len()))
                    .map(|m| (m.pattern().as_usize(), m.start())),
                Searcher::Automaton(a) => a
                    .find(aho_corasick::Input::new(line).span(at..line.len()))
                    .map(|m| (m.pattern().as_usize(), m.start())),
            };
            let Some((key, start)) = hit else { break };
            found |= self.key_groups[key];
            at = start + 1;
        }
        found
    }

    /// True when Teddy (SIMD) is in use rather than the scalar automaton.
    pub fn is_vectorised(&self) -> bool {
        matches!(self.searcher, Searcher::Teddy(_))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Groups = 1;
    const B: Groups = 2;

    fn filter() -> LineFilter {
        LineFilterBuilder::new()
            .add(A, ["buffer size =", "msg=\"model weights\" buffer=", "MiB"])
            .add(B, ["NVIDIA-SMI", "memory.used"])
            .build()
    }

    #[test]
    fn groups_of_every_literal_present() {
        let f = filter();
        assert_eq!(
            f.scan(b"[GIN] 2025/07/31 - 08:32:16 | 200 | 1.2s | POST \"/api/chat\""),
            0
        );
        assert_eq!(
            f.scan(b"load_tensors: CUDA0 model buffer size =  4403.49 MiB") & A,
            A
        );
        assert_eq!(f.scan(b"| NVIDIA-SMI 535.183.01 |"), B);
        assert_eq!(f.scan(b"memory.used [MiB]"), A | B);
        assert_eq!(f.scan(b"x msg=\"model weights\" buffer=CUDA0"), A);
    }

    #[test]
    fn overlapping_keys_of_different_groups_are_both_seen() {
        let f = LineFilterBuilder::new()
            .add(A, ["abcdefgh"])
            .add(B, ["efghijkl"])
            .build();
        assert_eq!(f.scan(b"--abcdefghijkl--"), A | B);
        assert_eq!(f.scan(b"--abcdefgh--"), A);
    }

    #[test]
    fn empty_filter_matches_nothing() {
        let f = LineFilterBuilder::new().build();
        assert_eq!(f.scan(b"anything"), 0);
    }
}
