//! Where in a key its Teddy searcher starts looking.
//!
//! A Teddy searcher finds candidate positions by a fingerprint of its patterns' first four bytes, then
//! compares every pattern of a bucket wherever the bucket's fingerprint matches: what a search costs is how
//! often log text matches a fingerprint. A key that starts with text nearly every line of a server log holds
//! (the `msg="…"` anchors of Go slog records start with what every record holds; a `llama_…` anchor starts
//! with the `llam` of the `ollama[` before every journald line) matches its fingerprint on nearly every line
//! and is compared there in vain. Such a key is searched from its first window that this text does not hold,
//! and [`super::LineFilter`] compares the bytes before the window on each hit: the same keys are found at
//! the same places, at fewer fingerprint matches (`docs/performance.md`, Speed II, fourth stop).
//!
//! Only the keys starting with that text move: moving every key to its rarest window by byte or 4-gram
//! frequencies was measured and costs more, because a bucket's fingerprint accepts the nybbles of all its
//! keys, and rarer bytes are more varied ones.

/// The length of a window: Teddy's fingerprint covers the first four bytes of its patterns.
pub const WINDOW: usize = 4;

/// Text nearly every line of an Ollama server log holds, whatever the line says: journald's identifier
/// before each line (`Nov 30 06:05:00 host ollama[1234]: `) and the keys every Go slog record starts with
/// (`time=… level=INFO source=server.go:168 msg="…"`; `docs/log-formats.md`).
const EVERY_LINE: &[u8] = b"ollama[ time= level= source= msg=\"";

/// The offset in `key` (at least [`WINDOW`] bytes) where its search starts: its first window that
/// [`EVERY_LINE`] does not hold, or 0 when it holds them all (the key is such text itself: `time=`).
pub fn offset(key: &[u8]) -> usize {
    debug_assert!(key.len() >= WINDOW);
    (0..=key.len() - WINDOW)
        .find(|&i| !EVERY_LINE.windows(WINDOW).any(|w| w == &key[i..i + WINDOW]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_starting_with_what_every_line_holds_is_searched_past_it() {
        // A slog anchor is not searched by its `msg="`, a llama.cpp one not by the `llam` of `ollama[`.
        assert_eq!(offset(b"msg=\"offload to gpu\""), 2);
        assert_eq!(offset(b"llama_kv_cache"), 2);
        assert_eq!(offset(b"source=ggml.go"), 4);
        // Other keys stay as they are, and so does a key that is such text itself.
        assert_eq!(offset(b"load_tensors:"), 0);
        assert_eq!(offset(b"buffer size"), 0);
        assert_eq!(offset(b"time="), 0);
        assert_eq!(offset(b".log"), 0);
    }
}
