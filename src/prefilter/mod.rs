//! The per-line literal prefilter: one SIMD pass over a line that says which consumers could care about it.
//!
//! A multi-GB log is almost entirely lines no rule reads (access logs, chatter, progress dots). Whether a
//! line *might* matter is a question about literals: a grammar rule can only match a line containing one of
//! its anchors, and an unrecognised line only counts as memory-like if it contains a memory word. This module
//! answers that question for many literal sets at once, as a bit set of *groups* (one group per consumer),
//! so that a line no consumer can use costs one vectorised scan and nothing else.
//!
//! The answer ([`Hits::possible`]) is a necessary condition, never a sufficient one: a group's bit is set
//! whenever one of its literals occurs in the line (and sometimes when it does not). Each consumer still does
//! its own exact check on the lines it is given; [`Hits::certain`] lets it skip that check when a literal was
//! found whole. To keep the scan fast, a literal that contains another one is dropped before the searcher is
//! built (the shorter one finds every line the longer one would): the built-in grammar and memory words come
//! down to about 170 literals for the SIMD searcher (Teddy, from the `aho-corasick` crate) plus `MiB`, `GiB` and
//! ` MB`, which are found by `memchr` on their rare byte because a 3-byte literal would shorten Teddy's
//! fingerprint for all the others. A key that starts with text nearly every log line holds is searched from a
//! later window (`window.rs`) and compared whole around each match, so the keys are found where they are and
//! nowhere else, at fewer fingerprint matches. The patterns are split over several Teddy searchers of at most
//! `TEDDY_KEYS` each (one takes at most 128), each given its patterns in the order that puts alike ones in
//! one of its buckets (`teddy_order`: what a searcher costs is how often text matches a bucket). Where Teddy
//! is unavailable (no SSSE3/AVX2 or NEON) a plain Aho-Corasick automaton over the whole keys gives the same
//! answer, several times slower.

mod teddy;
mod window;

use aho_corasick::AhoCorasick;

use teddy::Pattern;

/// A set of consumers, one bit each.
pub type Groups = u32;

/// What one scan found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hits {
    /// Groups one of whose literals may occur in the line; a group not in here has none in it.
    pub possible: Groups,
    /// Groups one of whose literals certainly occurs in the line (a subset of `possible`, and not
    /// necessarily complete: the scan stops once every group is possible).
    pub certain: Groups,
}

/// Literal search screening each line for the consumers whose literals it contains.
#[derive(Debug, Clone)]
pub struct LineFilter {
    searcher: Searcher,
    /// The keys the main searcher finds, at least [`SHORT`] bytes each.
    keys: Vec<Vec<u8>>,
    /// For each of `keys`: the groups with a literal containing it, and those with a literal equal to it.
    key_groups: Vec<Hits>,
    /// Keys shorter than [`SHORT`], found by a rare byte instead of in `searcher`.
    short: ShortKeys,
    /// Every group that has at least one literal.
    all: Groups,
}

#[derive(Debug, Clone)]
enum Searcher {
    /// No literals at all: nothing ever matches.
    Empty,
    /// Teddy searchers over consecutive slices of `patterns` (at most `teddy::TEDDY_KEYS` each), each with
    /// the index of its first pattern.
    Teddy {
        parts: teddy::Parts,
        patterns: Vec<Pattern>,
    },
    /// An automaton over the whole keys, its pattern numbers the keys' indexes.
    Automaton(AhoCorasick),
}

/// Keys shorter than this would shorten Teddy's fingerprint for every key (it uses the first
/// `min(4, shortest key)` bytes), which costs more than finding them separately.
const SHORT: usize = 4;

/// Short keys (`MiB`, `GiB`, ` MB`), found with `memchr` on one rare byte each (at most three distinct).
#[derive(Debug, Clone, Default)]
struct ShortKeys {
    /// The rare bytes searched for.
    bytes: Vec<u8>,
    /// Each key, the offset of its rare byte in it, and its groups.
    keys: Vec<(Vec<u8>, usize, Hits)>,
}

impl ShortKeys {
    fn scan(&self, line: &[u8], hits: &mut Hits) {
        let mut from = 0;
        while let Some(i) = self.find_rare_byte(&line[from..]) {
            let at = from + i;
            for (key, offset, groups) in &self.keys {
                if at >= *offset && line[at - offset..].starts_with(key) {
                    hits.possible |= groups.possible;
                    hits.certain |= groups.certain;
                }
            }
            from = at + 1;
        }
    }

    /// [`ShortKeys::scan`] of each line of `lines` (byte ranges of `text`, in order) whose groups are not
    /// all possible yet (`all`), as [`LineFilter::scan`] does it line by line.
    fn scan_lines(&self, text: &[u8], lines: &[(usize, usize)], hits: &mut [Hits], all: Groups) {
        let Some((&(first, _), &(_, text_end))) = lines.first().zip(lines.last()) else {
            return;
        };
        // The line the last rare byte fell in, and whether it was to be scanned (not every group possible
        // before the short keys were looked for).
        let mut current: Option<(usize, bool)> = None;
        let mut line = 0;
        let mut from = first;
        while let Some(i) = self.find_rare_byte(&text[from..text_end]) {
            let at = from + i;
            from = at + 1;
            while line < lines.len() && lines[line].1 <= at {
                line += 1;
            }
            let Some(&(line_start, line_end)) = lines.get(line) else {
                break;
            };
            if at < line_start {
                from = line_start;
                continue;
            }
            let scanned = match current {
                Some((seen, scanned)) if seen == line => scanned,
                _ => {
                    let scanned = hits[line].possible != all;
                    current = Some((line, scanned));
                    scanned
                }
            };
            if !scanned {
                from = line_end;
                continue;
            }
            for (key, offset, groups) in &self.keys {
                if at >= line_start + offset && text[at - offset..line_end].starts_with(key) {
                    hits[line].possible |= groups.possible;
                    hits[line].certain |= groups.certain;
                }
            }
        }
    }

    fn find_rare_byte(&self, haystack: &[u8]) -> Option<usize> {
        match self.bytes[..] {
            [] => None,
            [a] => memchr::memchr(a, haystack),
            [a, b] => memchr::memchr2(a, b, haystack),
            [a, b, c, ..] => memchr::memchr3(a, b, c, haystack),
        }
    }
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
        let mut distinct: Vec<&[u8]> = self.literals.iter().map(|(l, _)| l.as_slice()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let within = containment(&distinct);
        let all = self.literals.iter().fold(0, |acc, (_, g)| acc | g);
        // A key answers for every literal that contains it (every literal contains at least one key), and
        // certainly for those it equals.
        let mut answers = vec![Hits::default(); distinct.len()];
        for (literal, group) in &self.literals {
            let Ok(literal) = distinct.binary_search(&literal.as_slice()) else {
                continue;
            };
            for &key in &within[literal] {
                answers[key].possible |= group;
                if key == literal {
                    answers[key].certain |= group;
                }
            }
        }
        let mut short = ShortKeys::default();
        let mut long: Vec<&[u8]> = Vec::new();
        let mut key_groups: Vec<Hits> = Vec::new();
        for (index, &key) in distinct.iter().enumerate() {
            if within[index].iter().any(|&o| distinct[o].len() < key.len()) {
                continue;
            }
            let groups = answers[index];
            if key.len() < SHORT {
                let offset = (0..key.len())
                    .rev()
                    .min_by_key(|&i| commonness(key[i]))
                    .unwrap_or(0);
                if !short.bytes.contains(&key[offset]) {
                    short.bytes.push(key[offset]);
                }
                short.keys.push((key.to_vec(), offset, groups));
            } else {
                long.push(key);
                key_groups.push(groups);
            }
        }
        if short.bytes.len() > 3 {
            // Too many distinct rare bytes for memchr: back into the main searcher.
            for (key, _, groups) in short.keys.drain(..) {
                long.push(
                    self.literals
                        .iter()
                        .find(|(l, _)| *l == key)
                        .unwrap()
                        .0
                        .as_slice(),
                );
                key_groups.push(groups);
            }
            short.bytes.clear();
        }
        let searcher = if long.is_empty() {
            Searcher::Empty
        } else {
            teddy::searchers(&long)
                .map(|(parts, patterns)| Searcher::Teddy { parts, patterns })
                .unwrap_or_else(|| {
                    Searcher::Automaton(AhoCorasick::new(&long).expect("literal patterns"))
                })
        };
        LineFilter {
            searcher,
            keys: long.iter().map(|k| k.to_vec()).collect(),
            key_groups,
            short,
            all,
        }
    }
}

impl LineFilter {
    /// Which groups' literals may (and which certainly do) occur in `line`.
    pub fn scan(&self, line: &[u8]) -> Hits {
        let mut hits = Hits::default();
        // Each part of the searcher goes over the line once, on its own: the groups found are the same in
        // any order, and a part is never searched again over bytes it has passed.
        for part in 0..self.long_parts() {
            let mut at = 0;
            while at < line.len() && hits.possible != self.all {
                let Some((pattern, start)) = self.find_pattern(part, line, at, line.len()) else {
                    break;
                };
                self.keys_found(pattern, start, line, (0, line.len()), |groups| {
                    hits.possible |= groups.possible;
                    hits.certain |= groups.certain;
                });
                at = start + 1;
            }
        }
        if hits.possible != self.all {
            self.short.scan(line, &mut hits);
        }
        hits
    }

    /// The leftmost pattern of part `part` of the main searcher in `haystack[from..to]`, and where it starts:
    /// for Teddy a key's rest from its window on, for the automaton a whole key. Callers search again one
    /// byte after a match, so patterns overlapping it are found too: two patterns never match at one position
    /// (none starts another).
    fn find_pattern(
        &self,
        part: usize,
        haystack: &[u8],
        from: usize,
        to: usize,
    ) -> Option<(usize, usize)> {
        match &self.searcher {
            Searcher::Empty => None,
            Searcher::Teddy { parts, .. } => {
                let (searcher, first) = &parts[part];
                searcher
                    .find_in(haystack, aho_corasick::Span::from(from..to))
                    .map(|m| (first + m.pattern().as_usize(), m.start()))
            }
            Searcher::Automaton(automaton) => automaton
                .find(aho_corasick::Input::new(haystack).span(from..to))
                .map(|m| (m.pattern().as_usize(), m.start())),
        }
    }

    /// Hand `each` the groups of every key that pattern `pattern`, found at `at`, stands for and that occurs
    /// whole inside `bounds` of `text`: for Teddy the keys its pattern stands for, compared around it; for the
    /// automaton its key.
    fn keys_found(
        &self,
        pattern: usize,
        at: usize,
        text: &[u8],
        (start, end): (usize, usize),
        mut each: impl FnMut(Hits),
    ) {
        // `found`: the searcher matched exactly this key's bytes already.
        let mut whole = |key: usize, offset: usize, found: bool| {
            let bytes = &self.keys[key];
            if at >= start + offset
                && at - offset + bytes.len() <= end
                && (found || text[at - offset..].starts_with(bytes))
            {
                each(self.key_groups[key]);
            }
        };
        match &self.searcher {
            Searcher::Empty => {}
            Searcher::Teddy { patterns, .. } => {
                let pattern = &patterns[pattern];
                for &(key, offset) in &pattern.keys {
                    whole(
                        key,
                        offset,
                        offset == 0 && self.keys[key].len() == pattern.len,
                    );
                }
            }
            Searcher::Automaton(_) => whole(pattern, 0, true),
        }
    }

    /// [`LineFilter::scan`] of many lines at once: `lines` are the byte ranges of `text` that the lines
    /// occupy, in order, apart or abutting; `hits` is given one [`Hits`] per line, the same as `scan` finds
    /// in that line alone. Each searcher goes over the text once instead of once a line, its set-up paid once
    /// a hit instead of once a line (the framed lines of a server log are short: `docs/performance.md`). A
    /// key found in text that is no line's, or across the end of a line, counts for no line.
    pub fn scan_lines(&self, text: &[u8], lines: &[(usize, usize)], hits: &mut Vec<Hits>) {
        hits.clear();
        hits.resize(lines.len(), Hits::default());
        if lines.is_empty() {
            return;
        }
        for part in 0..self.long_parts() {
            self.scan_lines_part(part, text, lines, hits);
        }
        self.short.scan_lines(text, lines, hits, self.all);
    }

    /// One part of [`LineFilter::scan_lines`]: the search resumes one byte after each hit, as in
    /// [`LineFilter::scan`], or at the end of a line once every group is possible in it. A key reaching
    /// out of a line is no hit of that line.
    fn scan_lines_part(
        &self,
        part: usize,
        text: &[u8],
        lines: &[(usize, usize)],
        hits: &mut [Hits],
    ) {
        let (mut line, mut at) = (0, lines[0].0);
        let text_end = lines[lines.len() - 1].1;
        while at < text_end {
            let Some((pattern, start)) = self.find_pattern(part, text, at, text_end) else {
                break;
            };
            while line < lines.len() && lines[line].1 <= start {
                line += 1;
            }
            let Some(&bounds) = lines.get(line) else {
                break;
            };
            let (line_start, line_end) = bounds;
            if start < line_start {
                at = line_start;
                continue;
            }
            let found = &mut hits[line];
            if found.possible == self.all {
                at = line_end;
                continue;
            }
            self.keys_found(pattern, start, text, bounds, |groups| {
                found.possible |= groups.possible;
                found.certain |= groups.certain;
            });
            at = if found.possible == self.all {
                line_end
            } else {
                start + 1
            };
        }
    }

    /// A search of a whole block (a read buffer holding many lines) for the next position where any key
    /// occurs: see [`BlockSearch`].
    pub fn block<'f, 'h>(&'f self, haystack: &'h [u8]) -> BlockSearch<'f, 'h> {
        BlockSearch {
            filter: self,
            haystack,
            long: vec![Cached::Unknown; self.long_parts()],
            short: Cached::Unknown,
        }
    }

    /// True when Teddy (SIMD) is in use rather than the scalar automaton.
    pub fn is_vectorised(&self) -> bool {
        matches!(self.searcher, Searcher::Teddy { .. })
    }
}

/// The next hit of one of a block search's searchers (each Teddy part, the short keys), remembered so that it
/// is searched for once: another searcher's hits may be far closer, and searching again from each of them
/// would cost the distance to this hit every time.
#[derive(Debug, Clone, Copy)]
enum Cached {
    /// Not searched yet (or the last hit lies before where the search now starts).
    Unknown,
    /// A key occurs at this position (its start for the main searcher, its rare byte for a short key).
    At(usize),
    /// No key of this searcher occurs in the rest of the block.
    Nowhere,
}

/// Where the keys of a [`LineFilter`] occur in a block of many lines, front to back: one SIMD search over
/// the block instead of one per line, the per-call set-up paid once per hit instead of once per line.
///
/// [`BlockSearch::next_from`] answers with a position inside a line that holds a key; which key, and
/// which groups, is the caller's business (it reads that line whole). Keys never hold a newline, so a hit
/// never spans two lines.
#[derive(Debug)]
pub struct BlockSearch<'f, 'h> {
    filter: &'f LineFilter,
    haystack: &'h [u8],
    /// One per part of the main searcher (`Searcher::Teddy` may have several).
    long: Vec<Cached>,
    short: Cached,
}

impl BlockSearch<'_, '_> {
    /// The first position at or after `from` where a key occurs (a position inside the key), or `None` when
    /// no key occurs there. `from` must not decrease from one call to the next.
    pub fn next_from(&mut self, from: usize) -> Option<usize> {
        let (filter, hay) = (self.filter, self.haystack);
        for (part, cached) in self.long.iter_mut().enumerate() {
            cached.refresh(from, || filter.find_long(part, hay, from));
        }
        self.short.refresh(from, || filter.short.find(hay, from));
        self.long
            .iter()
            .chain([&self.short])
            .filter_map(|c| match c {
                Cached::At(at) => Some(*at),
                Cached::Unknown | Cached::Nowhere => None,
            })
            .min()
    }
}

impl Cached {
    /// Search again with `find` when nothing is remembered or the hit remembered lies before `from`.
    fn refresh(&mut self, from: usize, find: impl FnOnce() -> Option<usize>) {
        if matches!(self, Cached::Unknown) || matches!(self, Cached::At(at) if *at < from) {
            *self = find().map_or(Cached::Nowhere, Cached::At);
        }
    }
}

impl LineFilter {
    /// How many parts the main searcher has (one but for Teddy over more than `teddy::TEDDY_KEYS` keys).
    fn long_parts(&self) -> usize {
        match &self.searcher {
            Searcher::Teddy { parts, .. } => parts.len(),
            Searcher::Empty | Searcher::Automaton(_) => 1,
        }
    }

    /// A position inside the leftmost key of part `part` of the main searcher that lies at or after `from`
    /// (its window's start, for Teddy).
    fn find_long(&self, part: usize, haystack: &[u8], from: usize) -> Option<usize> {
        let mut at = from;
        while at < haystack.len() {
            let (pattern, start) = self.find_pattern(part, haystack, at, haystack.len())?;
            let mut whole = false;
            self.keys_found(pattern, start, haystack, (0, haystack.len()), |_| {
                whole = true
            });
            if whole {
                return Some(start);
            }
            at = start + 1;
        }
        None
    }
}

impl ShortKeys {
    /// The position of the rare byte of the first short key that occurs whole at or after `from`.
    fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        let mut at = from;
        while at < haystack.len() {
            let rare = at + self.find_rare_byte(&haystack[at..])?;
            let whole = self.keys.iter().any(|(key, offset, _)| {
                rare >= from + offset && haystack[rare - offset..].starts_with(key)
            });
            if whole {
                return Some(rare);
            }
            at = rare + 1;
        }
        None
    }
}

/// True when `needle` occurs in `haystack`: [`containment`]'s test of every pair where its automaton cannot be
/// built (tens of thousands of pairs, each a few dozen bytes), where a plain comparison at each offset costs
/// less than setting up a `memmem` searcher for every pair.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    needle.len() <= haystack.len()
        && haystack[..=haystack.len() - needle.len()]
            .iter()
            .enumerate()
            .any(|(i, &b)| b == first && haystack[i + 1..].starts_with(rest))
}

/// For each of `distinct` (no two alike), the indexes of those it contains, itself included: one overlapping
/// search of each in an automaton of them all, instead of a test of every pair (the grammar's few hundred
/// literals: the skim's and the parser's builds 22 → 11 M instructions of every run's start-up,
/// `docs/performance.md`, Speed II, fifth stop). Where the automaton cannot be built, every pair is tested.
fn containment(distinct: &[&[u8]]) -> Vec<Vec<usize>> {
    let automaton = aho_corasick::AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
        .build(distinct);
    distinct
        .iter()
        .map(|literal| match &automaton {
            Ok(automaton) => {
                let mut found: Vec<usize> = automaton
                    .find_overlapping_iter(*literal)
                    .map(|m| m.pattern().as_usize())
                    .collect();
                found.sort_unstable();
                found.dedup();
                found
            }
            Err(_) => contained_pairwise(literal, distinct),
        })
        .collect()
}

/// The indexes of the literals of `distinct` that `literal` contains, each pair tested.
fn contained_pairwise(literal: &[u8], distinct: &[&[u8]]) -> Vec<usize> {
    (0..distinct.len())
        .filter(|&o| contains(literal, distinct[o]))
        .collect()
}

/// How common a byte is in log text, roughly (higher: more common); picks the byte a short key is found by.
fn commonness(b: u8) -> u8 {
    match b {
        b' ' | b'a'..=b'z' | b'0'..=b'9' => 3,
        b'=' | b'"' | b'.' | b':' | b'-' | b'/' | b'_' => 2,
        b'A'..=b'Z' => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Groups = 1;
    const B: Groups = 2;

    /// More keys than one Teddy searcher takes are split over several, each still vectorised, and every key
    /// is found by the line scan and by the block search.
    #[test]
    fn more_keys_than_teddy_takes_stay_vectorised() {
        let literals: Vec<String> = (0..300).map(|i| format!("key{i:03}word")).collect();
        let filter = LineFilterBuilder::new().add(A, &literals).build();
        if cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("ssse3") {
            assert!(filter.is_vectorised());
            assert_eq!(filter.long_parts(), 300usize.div_ceil(teddy::TEDDY_KEYS));
        }
        for literal in &literals {
            let line = format!("noise before {literal} and after");
            assert_eq!(filter.scan(line.as_bytes()).possible, A, "{literal}");
            let block = format!("nothing here\n{line}\nnothing either\n");
            let at = filter.block(block.as_bytes()).next_from(0);
            assert_eq!(at, Some(13 + "noise before ".len()), "{literal}");
        }
        assert_eq!(filter.scan(b"key30word is not a key").possible, 0);
        assert_eq!(filter.block(b"no key\nat all\n").next_from(0), None);
    }

    #[test]
    fn containment_by_automaton_is_containment_by_pairs() {
        // Anchors and memory words as the grammar has them (grammars/*.toml, src/parse/mod.rs), and every
        // string of one to five bytes over a two-letter alphabet (overlaps of every shape).
        let mut literals: Vec<Vec<u8>> = [
            "msg=\"offload to gpu\"",
            "offload",
            "msg=offload",
            "msg=",
            "MiB",
            "buffer size",
            "model buffer size",
            "CUDA0 model buffer size",
            "llama_kv_cache",
            "llama_kv_cache_init:",
            "KV self size",
            ": size = ",
        ]
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
        for len in 1..=5u32 {
            for bits in 0..1u32 << len {
                literals.push((0..len).map(|i| b"ab"[(bits >> i & 1) as usize]).collect());
            }
        }
        let mut distinct: Vec<&[u8]> = literals.iter().map(Vec::as_slice).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let by_pairs: Vec<Vec<usize>> = distinct
            .iter()
            .map(|l| contained_pairwise(l, &distinct))
            .collect();
        assert_eq!(containment(&distinct), by_pairs);
        assert!(by_pairs.iter().map(Vec::len).sum::<usize>() > 2 * distinct.len());
    }

    #[test]
    fn contains_finds_a_needle_anywhere_and_only_whole() {
        assert!(contains(b"msg=\"offload to gpu\"", b"offload"));
        assert!(contains(b"layers.offload=", b"layers.offload="));
        assert!(contains(b"abc", b"bc"));
        assert!(contains(b"abc", b""));
        assert!(!contains(b"abc", b"abcd"));
        assert!(!contains(b"aab", b"abb"));
        assert!(!contains(b"", b"a"));
    }

    fn possible(f: &LineFilter, line: &[u8]) -> Groups {
        f.scan(line).possible
    }

    fn filter() -> LineFilter {
        LineFilterBuilder::new()
            .add(
                A,
                [
                    "buffer size =",
                    "msg=\"model weights\" buffer=",
                    "MiB",
                    " MB",
                ],
            )
            .add(B, ["NVIDIA-SMI", "memory.used"])
            .build()
    }

    #[test]
    fn groups_of_every_literal_present() {
        let f = filter();
        let gin = b"[GIN] 2025/07/31 - 08:32:16 | 200 | 1.2s | POST \"/api/chat\"";
        assert_eq!(possible(&f, gin), 0);
        let buffer = b"load_tensors: CUDA0 model buffer size =  4403.49 MiB";
        assert_eq!(possible(&f, buffer), A);
        assert_eq!(possible(&f, b"| NVIDIA-SMI 535.183.01 |"), B);
        assert_eq!(possible(&f, b"memory.used [MiB]"), A | B);
        assert_eq!(possible(&f, b"x msg=\"model weights\" buffer=CUDA0"), A);
        assert_eq!(possible(&f, b"MB MiB"), A);
        assert_eq!(possible(&f, b"iB M B"), 0);
        assert_eq!(possible(&f, b"size 12 MB"), A);
    }

    #[test]
    fn overlapping_keys_of_different_groups_are_both_seen() {
        let f = LineFilterBuilder::new()
            .add(A, ["abcdefgh"])
            .add(B, ["efghijkl"])
            .build();
        assert_eq!(possible(&f, b"--abcdefghijkl--"), A | B);
        assert_eq!(possible(&f, b"--abcdefgh--"), A);
    }

    #[test]
    fn a_key_equal_to_a_literal_is_certain() {
        let f = filter();
        let hits = f.scan(b"load_tensors: CUDA0 model buffer size =  4403.49 MiB");
        assert_eq!(hits.certain, A);
        assert_eq!(f.scan(b"memory.used").certain, B);
        assert_eq!(f.scan(b"plain").certain, 0);
        // `buffer=` is B's literal, and only inside A's.
        let partial = LineFilterBuilder::new()
            .add(A, ["msg=\"x\" buffer="])
            .add(B, ["buffer="])
            .build();
        assert_eq!(
            partial.scan(b"y buffer=1"),
            Hits {
                possible: A | B,
                certain: B
            }
        );
    }

    /// Every line a block search lands in is a line the per-line scan finds a key in, and the reverse.
    #[test]
    fn a_block_search_finds_the_lines_a_line_scan_finds() {
        let f = LineFilterBuilder::new()
            .add(A, ["buffer size =", "msg=offload", "MiB", "\x1b", "\0"])
            .add(B, ["NVIDIA-SMI"])
            .build();
        let lines: [&[u8]; 9] = [
            b"[GIN] 2025/07/31 - 08:32:16 | 200 | 1.2s | POST \"/api/chat\"",
            b"load_tensors: CUDA0 model buffer size =  4403.49 MiB",
            b"plain",
            b"",
            b"colour \x1b[0m here",
            b"| NVIDIA-SMI 535.183.01 |",
            b"nul \0 byte",
            b"iB M B buffer size",
            b"12 MiB",
        ];
        let block = lines.join(&b'\n');
        let mut found = Vec::new();
        let mut search = f.block(&block);
        let (mut start, mut from) = (0, 0);
        for line in &lines {
            let end = start + line.len();
            if let Some(at) = search.next_from(from) {
                if at < end {
                    found.push(String::from_utf8_lossy(line).into_owned());
                }
            }
            start = end + 1;
            from = start;
        }
        let expected: Vec<String> = lines
            .iter()
            .filter(|l| f.scan(l).possible != 0)
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        assert_eq!(found, expected);
        assert_eq!(found.len(), 5);
        assert_eq!(f.block(b"no key here").next_from(0), None);
    }

    /// Many lines scanned at once get what each gets alone: keys that cross from one line's text into the
    /// next (long and short ones) or lie between lines count for no line, and a line all of whose groups
    /// are possible early is left.
    #[test]
    fn scanning_lines_together_finds_what_each_line_alone_finds() {
        let f = filter();
        let lines: [&str; 10] = [
            "load_tensors: CUDA0 model buffer size =  4403.49 MiB",
            "buffer si",
            "ze = 12 Mi",
            "B",
            "| NVIDIA-SMI 535.183.01 | memory.used 12 MiB",
            "",
            "x msg=\"model weights\" buffer=CUDA0",
            "size 12 M",
            "B and  MB",
            "plain",
        ];
        for gap in ["", "\n", "NVIDIA-SMI MiB", " M"] {
            let mut text = String::new();
            let mut ranges = Vec::new();
            for line in lines {
                text.push_str(gap);
                ranges.push((text.len(), text.len() + line.len()));
                text.push_str(line);
            }
            let mut together = vec![Hits::default(); 3];
            f.scan_lines(text.as_bytes(), &ranges, &mut together);
            let alone: Vec<Hits> = lines.iter().map(|l| f.scan(l.as_bytes())).collect();
            assert_eq!(together, alone, "gap {gap:?}");
        }
        let possible: Vec<Groups> = lines.iter().map(|l| possible(&f, l.as_bytes())).collect();
        assert_eq!(possible, [A, 0, 0, 0, A | B, 0, A, 0, A, 0]);
        let mut none = vec![Hits::default()];
        f.scan_lines(b"MiB", &[], &mut none);
        assert!(none.is_empty());
    }

    /// Keys starting with what every log line holds are searched from a later window (`window::offset`) and
    /// compared whole: a line holding only their rest has none of them, a key is found at a line's very start
    /// and end, and a key whose window lies in one line's text but whose start lies in the line before counts
    /// for neither line. What every search finds is what a plain substring test finds.
    #[test]
    fn keys_searched_from_a_later_window_are_found_exactly_where_they_are() {
        let literals = [
            "msg=\"offload to ",
            "llama_kv_cache",
            "source=ggml.go",
            "buffer size",
        ];
        let f = LineFilterBuilder::new()
            .add(A, &literals[..2])
            .add(B, &literals[2..])
            .build();
        let lines: [&str; 10] = [
            "time=2025-08-22T17:36:22.027-04:00 level=INFO source=server.go:175 msg=\"offload to cuda\"",
            "level=INFO g=\"offload to cuda\" ma_kv_cache ce=ggml.go",
            "llama_kv_cache: size = 1 MiB",
            "ends with source=ggml.go",
            "ollama[1234]: llama_kv_cach",
            "e and ms",
            "g=\"offload to gpu\"",
            "sou",
            "rce=ggml.go buffer size",
            "plain",
        ];
        let reference = |line: &str| {
            let a = literals[..2].iter().any(|l| line.contains(l));
            let b = literals[2..].iter().any(|l| line.contains(l));
            (if a { A } else { 0 }) | (if b { B } else { 0 })
        };
        let alone: Vec<Hits> = lines.iter().map(|l| f.scan(l.as_bytes())).collect();
        for (line, hits) in lines.iter().zip(&alone) {
            assert_eq!(hits.possible, reference(line), "{line}");
        }
        let text = lines.concat();
        let mut ranges = Vec::new();
        let mut start = 0;
        for line in lines {
            ranges.push((start, start + line.len()));
            start += line.len();
        }
        let mut together = Vec::new();
        f.scan_lines(text.as_bytes(), &ranges, &mut together);
        assert_eq!(together, alone);
        let block = lines.join("\n");
        let mut search = f.block(block.as_bytes());
        let (mut from, mut found) = (0, Vec::new());
        for line in lines {
            let end = from + line.len();
            if search.next_from(from).is_some_and(|at| at < end) {
                found.push(line);
            }
            from = end + 1;
        }
        let expected: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| reference(l) != 0)
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn empty_filter_matches_nothing() {
        let f = LineFilterBuilder::new().build();
        assert_eq!(possible(&f, b"anything"), 0);
    }
}
