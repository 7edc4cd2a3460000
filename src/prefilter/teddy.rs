//! The Teddy searchers of a [`super::LineFilter`]: each key's pattern (its rest from the window
//! `super::window` picks), the patterns split over searchers of at most [`TEDDY_KEYS`], and each searcher's
//! patterns in the order that fills its buckets with alike ones. What a searcher finds is the same whatever
//! is decided here; only how fast it finds it changes.

use aho_corasick::packed;

use super::window;

/// The most keys one Teddy searcher is given; more keys are split over several searchers of equal share (in
/// sorted order, so keys with alike starts share one), each still vectorised (one scalar automaton over them
/// all would make every read several times slower). One searcher takes up to 128. Teddy puts its keys in 16
/// buckets (the Fat AVX2 searcher) and compares every key of a bucket wherever the bucket's fingerprint of
/// their first four bytes matches, so what a searcher costs is a pass over the bytes plus how often log text
/// matches a bucket's fingerprint: [`teddy_order`] fills each bucket with keys alike in the nybbles the
/// fingerprint tests. With that order, two searchers of 81 and 89 keys cost less than four of 41–45
/// (`docs/performance.md`, Speed II, third stop), one of 128 more than two of 64, and the built-in grammar's
/// skim (194 keys with the file names) and parser (177) search fastest in three searchers each (fourth stop).
pub(super) const TEDDY_KEYS: usize = 80;

/// Teddy searchers, each with the index of its first pattern.
pub(super) type Parts = Vec<(packed::Searcher, usize)>;

/// Teddy searchers over `keys`, each searched from its window on ([`window::offset`]), or `None` where
/// the CPU has no Teddy. Teddy compares a pattern whole wherever its first four bytes' fingerprint
/// matches, so a key's pattern is its rest from the window on, and the bytes before the window are
/// compared on each hit. A pattern that another one starts with stands for that one's keys too: then two
/// patterns never match at one position, and every match is reported.
pub(super) fn searchers(keys: &[&[u8]]) -> Option<(Parts, Vec<Pattern>)> {
    let mut rests: Vec<(&[u8], usize, usize)> = keys
        .iter()
        .enumerate()
        .map(|(index, key)| {
            let offset = window::offset(key);
            (&key[offset..], index, offset)
        })
        .collect();
    // Shortest first, so that a pattern's prefixes are all seen before it.
    rests.sort_by_key(|&(rest, index, _)| (rest.len(), rest, index));
    let mut patterns: Vec<(&[u8], Pattern)> = Vec::new();
    for (rest, index, offset) in rests {
        match patterns.iter_mut().find(|(p, _)| rest.starts_with(p)) {
            Some((_, pattern)) => pattern.keys.push((index, offset)),
            None => patterns.push((
                rest,
                Pattern {
                    len: rest.len(),
                    keys: vec![(index, offset)],
                },
            )),
        }
    }
    // In byte order, so that patterns starting alike share a searcher.
    patterns.sort_by(|a, b| a.0.cmp(b.0));
    let parts = patterns.len().div_ceil(TEDDY_KEYS);
    let share = patterns.len().div_ceil(parts);
    // Each searcher's patterns in the order that puts alike ones in one bucket; a searcher's pattern
    // number indexes `patterns` from the searcher's first pattern.
    for part in patterns.chunks_mut(share) {
        let bytes: Vec<&[u8]> = part.iter().map(|(p, _)| *p).collect();
        let mut moved: Vec<(&[u8], Pattern)> = teddy_order(&bytes)
            .into_iter()
            .map(|i| std::mem::replace(&mut part[i], (&[][..], Pattern::default())))
            .collect();
        part.swap_with_slice(&mut moved);
    }
    // The Fat searcher (AVX2: 16 buckets, twice the Slim one's) for so few keys, where the CPU has it.
    let teddy = |part: &[(&[u8], Pattern)], fat: Option<bool>| {
        packed::Config::new()
            .heuristic_pattern_limits(false)
            .only_teddy_fat(fat)
            .builder()
            .extend(part.iter().map(|(p, _)| p))
            .build()
    };
    let parts = patterns
        .chunks(share)
        .enumerate()
        .map(|(i, part)| {
            teddy(part, Some(true))
                .or_else(|| teddy(part, None))
                .map(|s| (s, i * share))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((parts, patterns.into_iter().map(|(_, p)| p).collect()))
}

/// A pattern of a Teddy searcher: a key's rest from its window on, standing for that key and every key whose
/// rest it starts.
#[derive(Debug, Clone, Default)]
pub(super) struct Pattern {
    /// The pattern's length: a key it stands for from its first byte, and as long, is the pattern itself, found
    /// whole by Teddy.
    pub(super) len: usize,
    /// Each key the pattern stands for, with where the pattern starts in it.
    pub(super) keys: Vec<(usize, usize)>,
}

/// The buckets of a Fat Teddy searcher (the AVX2 one; the Slim one has half as many).
const TEDDY_BUCKETS: usize = 16;

/// The order to hand `keys` (at least `super::SHORT` bytes each) to a Teddy searcher in so that each of its
/// buckets holds keys alike in what its fingerprint tests: for each of the first four bytes, its low nybble
/// and its high nybble, a byte matching when both are among the bucket's keys' (so a bucket of keys with
/// three low nybbles at a position lets through every byte with one of them and any of the keys' high
/// nybbles). Log text is mostly lowercase letters and digits, which share a few high nybbles, so the low
/// nybbles decide: keys sorted by their low nybbles, cut into [`TEDDY_BUCKETS`] runs of equal length, make
/// fingerprints that text matches far less often than keys spread over the buckets as they come.
///
/// The aho-corasick crate's Teddy builder (the version `Cargo.lock` pins) puts a key whose low nybbles another
/// key already has in that key's bucket, and any other key in bucket `15 - number % 16`, numbering keys in
/// the order given: so the runs are handed out one key of each run in turn, the longer runs first, which
/// puts run `r` in bucket `15 - r`. Which bucket a key is in never changes what is found (the builder keeps
/// leftmost-first matches right however keys are spread); were the builder to spread keys otherwise, only
/// the speed would change.
fn teddy_order(keys: &[&[u8]]) -> Vec<usize> {
    let low_nybbles = |key: &[u8]| -> [u8; 4] { std::array::from_fn(|j| key[j] & 0x0f) };
    let mut by_nybbles: Vec<usize> = (0..keys.len()).collect();
    by_nybbles.sort_by_key(|&i| (low_nybbles(keys[i]), keys[i]));
    let n = keys.len();
    let buckets = TEDDY_BUCKETS.min(n);
    let mut runs: Vec<&[usize]> = (0..buckets)
        .map(|b| &by_nybbles[b * n / buckets..(b + 1) * n / buckets])
        .collect();
    runs.sort_by_key(|run| std::cmp::Reverse(run.len()));
    let longest = runs.first().map_or(0, |run| run.len());
    (0..longest)
        .flat_map(|turn| runs.iter().filter_map(move |run| run.get(turn).copied()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order handed to Teddy is every key once, and the keys numbered alike modulo the bucket count (one
    /// bucket each, by the builder's rule in [`teddy_order`]'s doc) are a run of keys sorted by their low
    /// nybbles, so keys alike in them share a bucket: here the keys of each low-nybble start are one run.
    #[test]
    fn alike_low_nybbles_share_a_bucket() {
        // 16 starts whose low nybbles differ (`a`..`p`), three keys each, given interleaved.
        let keys: Vec<Vec<u8>> = (0..3)
            .flat_map(|i| {
                (b'a'..=b'p').map(move |c| format!("{}{}{i}key", c as char, c as char).into_bytes())
            })
            .collect();
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let order = teddy_order(&keys);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..keys.len()).collect::<Vec<_>>());
        for bucket in 0..TEDDY_BUCKETS {
            let starts: std::collections::BTreeSet<u8> = order
                .iter()
                .enumerate()
                .filter(|(number, _)| number % TEDDY_BUCKETS == bucket)
                .map(|(_, &key)| keys[key][0])
                .collect();
            assert_eq!(starts.len(), 1, "bucket {bucket}: {starts:?}");
        }
        // Fewer keys than buckets, and none: still every key once.
        assert_eq!(teddy_order(&keys[..5]).len(), 5);
        assert!(teddy_order(&[]).is_empty());
    }
}
