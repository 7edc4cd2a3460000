//! The blanks an editor trimmed off a container runtime's partial pieces, put back.
//!
//! containerd and CRI-O write a line longer than the runtime's buffer as `P` (partial) pieces and a last `F`
//! piece, which a reader joins with nothing between them ([`super::prefix`], `docs/log-formats.md` §6).
//! The runtime cuts only where its buffer is full, so every `P` piece of one input holds as many bytes:
//! containerd's `max_container_log_line_size` (16 KiB by default), CRI-O's conmon buffer. A piece that ends
//! in blanks loses them when the paste goes through an editor's or a forum's "trim trailing whitespace",
//! and the joined line then loses the blank at the cut (`memory:` + `0.53 GiB` read as `memory:0.53 GiB`, a
//! rule no longer matches). A `P` piece shorter than the size this input's other `P` pieces show lost that
//! many blanks, and they are put back before the next piece is glued on.
//!
//! What is assumed, and decided where the input is silent:
//! * the size is the longest `P` piece seen so far in the input (the one being glued on included), so a
//!   piece shorter than a size no piece showed yet (the input's first pieces, all of them trimmed) is left
//!   as it is: no size is guessed;
//! * a runtime that cuts only at a full buffer (containerd, conmon for a line longer than its buffer); a
//!   writer that flushed half a line would give a short `P` piece that lost nothing, and it would get
//!   blanks it never had — but only in an input that shows no piece ending in a blank;
//! * an input where a `P` piece ends in a blank was not trimmed: nothing is put back there (an `F` piece says
//!   nothing: a terminal's wrap may have cut its line after a blank, and its rows are framed one by one);
//! * a piece the lossy decoder changed (a runtime cutting inside a character) or that holds colours is
//!   not measured: its bytes are no longer the ones the runtime counted;
//! * a piece shorter than the size by less than the width of the character the next piece begins with was
//!   cut before that character, not trimmed (a cut that keeps characters whole).

/// What one input's `P` pieces show (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Pieces {
    /// The longest `P` piece of this input, in bytes (0: none seen yet).
    size: usize,
    /// A `P` piece of this input ends in a blank: its blanks were not trimmed.
    kept_blanks: bool,
    /// The held line's last piece, when it is a `P` piece as the runtime stored it: its length in bytes.
    held: Option<usize>,
}

impl Pieces {
    /// A CRI piece's text as stored (after `stderr P `), `partial` when it is a `P` piece: what it shows.
    pub(super) fn seen(&mut self, piece: &str, partial: bool) {
        if partial {
            self.kept_blanks |= piece.ends_with([' ', '\t']);
            self.size = self.size.max(piece.len());
        }
    }

    /// The held line's last piece is now `piece` (its length, when it is a `P` piece as stored).
    pub(super) fn hold(&mut self, piece: Option<usize>) {
        self.held = piece;
    }

    /// How many blanks the held piece lost to a trim, when `next` (the next piece's text) is glued onto it.
    pub(super) fn lost_blanks(&mut self, next: &str) -> usize {
        let Some(held) = self.held.take() else {
            return 0;
        };
        if self.kept_blanks || held >= self.size {
            return 0;
        }
        let short = self.size - held;
        match next.chars().next() {
            // Cut before a character of several bytes, which the next piece begins with whole.
            Some(c) if short < c.len_utf8() => 0,
            _ => short,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_piece_gets_back_the_blanks_the_size_says() {
        let mut p = Pieces::default();
        p.seen(&"x".repeat(100), true);
        p.hold(Some(99));
        p.seen("0.53 GiB", false);
        assert_eq!(p.lost_blanks("0.53 GiB"), 1);
        // Nothing held, or a piece as long as the size: nothing lost.
        assert_eq!(p.lost_blanks("0.53 GiB"), 0);
        p.hold(Some(100));
        assert_eq!(p.lost_blanks("x"), 0);
        // Short by less than the next character's width: cut before it.
        p.hold(Some(98));
        assert_eq!(p.lost_blanks("€ rest"), 0);
        p.hold(Some(99));
        assert_eq!(p.lost_blanks("€ rest"), 0);
        p.hold(Some(97));
        assert_eq!(p.lost_blanks("€ rest"), 3);
        p.hold(Some(96));
        assert_eq!(p.lost_blanks("€ rest"), 4);
    }

    #[test]
    fn no_size_and_kept_blanks_put_nothing_back() {
        // The input's first piece: no size shown yet but its own.
        let mut p = Pieces::default();
        p.seen(&"x".repeat(97), true);
        p.hold(Some(97));
        p.seen("rest", false);
        assert_eq!(p.lost_blanks("rest"), 0);
        // The next piece is partial too and shows the size.
        p.hold(Some(97));
        p.seen(&"y".repeat(100), true);
        assert_eq!(p.lost_blanks("yyy"), 3);
        // An `F` piece ending in a blank says nothing (a wrap's row); a `P` piece does: not trimmed.
        p.seen("ends in a blank ", false);
        p.hold(Some(97));
        assert_eq!(p.lost_blanks("rest"), 3);
        p.seen("ends in a blank ", true);
        p.hold(Some(97));
        assert_eq!(p.lost_blanks("rest"), 0);
    }
}
