//! Framing: physical byte lines in, logical text lines out, each with the 1-based number of the physical
//! line it starts on.
//!
//! The framer decodes UTF-8 lossily (a bad byte costs one character, never the line), strips collector
//! prefixes and ANSI codes (see [`prefix`]), and joins lines that a paste re-wrapped (see [`join`]). It holds
//! at most one logical line, so memory does not grow with the input; a line nothing can join onto is passed on
//! at once, without a copy.

pub mod join;
pub mod prefix;
pub mod read;

use join::Continuation;

/// A logical line bigger than this is not extended further by joining.
const MAX_JOINED_BYTES: usize = 1 << 20;

/// Turns physical lines into logical lines, one behind.
#[derive(Debug, Default)]
pub struct Framer {
    pending: String,
    pending_line: u64,
    has_pending: bool,
    /// Number of physical lines joined onto a previous one.
    pub joined_lines: u64,
}

impl Framer {
    pub fn new() -> Self {
        Framer::default()
    }

    /// Feed one physical line. When it completes the previous logical line, `emit` receives that line.
    pub fn push(&mut self, number: u64, bytes: &[u8], mut emit: impl FnMut(u64, &str)) {
        // Checking first is much faster than the lossy decoder on the (usual) valid line.
        let text = match std::str::from_utf8(bytes) {
            Ok(valid) => std::borrow::Cow::Borrowed(valid),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        let text = prefix::strip_ansi(&text);
        let (line, stripped) = prefix::strip_prefixes(&text);
        if self.has_pending && self.pending.len() < MAX_JOINED_BYTES {
            match join::continuation(&self.pending, line, stripped.indented) {
                Continuation::No => {}
                Continuation::WithSpace => {
                    let keep = self.pending.trim_end().len();
                    self.pending.truncate(keep);
                    self.pending.push(' ');
                    self.pending.push_str(line);
                    self.joined_lines += 1;
                    return;
                }
                Continuation::Glued => {
                    self.pending.push_str(line);
                    self.joined_lines += 1;
                    return;
                }
            }
        }
        if self.has_pending {
            emit(self.pending_line, &self.pending);
        }
        if join::can_be_continued(line) {
            self.pending.clear();
            self.pending.push_str(line);
            self.pending_line = number;
            self.has_pending = true;
        } else {
            // Nothing can join onto it, so it need not wait (or be copied) for the next line.
            self.has_pending = false;
            emit(number, line);
        }
    }

    /// Flush the last logical line at the end of the input.
    pub fn finish(&mut self, mut emit: impl FnMut(u64, &str)) {
        if self.has_pending {
            emit(self.pending_line, &self.pending);
        }
        self.has_pending = false;
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(input: &[&[u8]]) -> Vec<(u64, String)> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for (i, l) in input.iter().enumerate() {
            f.push(i as u64 + 1, l, |n, s| out.push((n, s.to_string())));
        }
        f.finish(|n, s| out.push((n, s.to_string())));
        out
    }

    #[test]
    fn rewrapped_record_becomes_one_line_numbered_from_its_start() {
        let out = frame(&[
            b"time=2025-05-22T17:59:04.662-07:00 level=INFO source=server.go:168 msg=offload library=cuda layers.requested=-1",
            b" layers.model=63 layers.offload=49",
            b"load_tensors: offloaded 33/33 layers to GPU",
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0, 1);
        assert!(out[0]
            .1
            .ends_with("layers.requested=-1 layers.model=63 layers.offload=49"));
        assert_eq!(
            out[1],
            (3, "load_tensors: offloaded 33/33 layers to GPU".to_string())
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_dropped() {
        let out = frame(&[b"load_tensors: \xff CUDA0"]);
        assert_eq!(out[0].1, "load_tensors: \u{fffd} CUDA0");
    }
}
