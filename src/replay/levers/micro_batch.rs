//! The micro-batch lever (`whatif --ubatch N`, llama.cpp's `-ub`): llama.cpp sizes each compute buffer for one
//! micro-batch, so the buffers scale linearly with `n_ubatch`. The suggestions compute a smaller micro-batch's
//! effect this way (`src/checks/suggest/failure.rs`: `ubatch`, `scaled`; `src/checks/suggest/fit.rs`:
//! `compute_imbalance`), and `whatif` must print the same figure for the same value, so both scale from the
//! load's printed `n_ubatch`, else llama.cpp's default 512, said to be assumed.

use crate::model::Reconciled;

/// llama.cpp's default micro-batch when the log prints no `n_ubatch` (the suggestions scale from it too,
/// `src/checks/suggest/failure.rs`).
pub const DEFAULT_UBATCH: i64 = 512;

/// llama.cpp's default logical batch (`-b`) when the log prints no `n_batch`: the micro-batch never exceeds it
/// (llama.cpp takes `min(n_batch, n_ubatch)`).
pub const DEFAULT_BATCH: i64 = 2048;

/// The micro-batch a load ran with and the one asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MicroBatch {
    /// The load's `n_ubatch`, else [`DEFAULT_UBATCH`].
    pub logged: i64,
    /// Whether the log printed it.
    pub printed: bool,
    /// What the user asked for (`--ubatch`).
    pub asked: i64,
    /// What llama.cpp would run with: the asked value, at most the logical batch.
    pub to: i64,
    /// The logical batch that caps it, when it does, and whether the log printed that batch.
    pub capped_by: Option<(i64, bool)>,
}

impl MicroBatch {
    /// The micro-batch `load` ran with: its `n_ubatch`, else [`DEFAULT_UBATCH`]; `true` when printed.
    pub fn logged(load: &Reconciled) -> (i64, bool) {
        match load.load.settings.ubatch_size {
            Some(u) if u > 0 => (u, true),
            Some(_) | None => (DEFAULT_UBATCH, false),
        }
    }

    /// The micro-batch change `asked` makes to `load` (a non-positive `asked` reads as 1).
    pub fn of(load: &Reconciled, asked: i64) -> MicroBatch {
        let settings = &load.load.settings;
        let (logged, printed) = MicroBatch::logged(load);
        let (batch, batch_printed) = match settings.batch_size {
            Some(b) if b > 0 => (b, true),
            Some(_) | None => (DEFAULT_BATCH.max(logged), false),
        };
        let asked = asked.max(1);
        let to = asked.min(batch);
        MicroBatch {
            logged,
            printed,
            asked,
            to,
            capped_by: (to < asked).then_some((batch, batch_printed)),
        }
    }

    /// `bytes` at the new micro-batch: `bytes × to / logged`, without overflow (saturating at `i64::MAX`).
    pub fn scale(&self, bytes: i64) -> i64 {
        let scaled = i128::from(bytes) * i128::from(self.to) / i128::from(self.logged.max(1));
        i64::try_from(scaled).unwrap_or(if scaled < 0 { i64::MIN } else { i64::MAX })
    }

    /// The change in words: `512, llama.cpp's default (the log does not print n_ubatch) → 256`.
    pub fn words(&self) -> String {
        let from = if self.printed {
            self.logged.to_string()
        } else {
            format!(
                "{}, llama.cpp's default (assumed: the log does not print n_ubatch)",
                self.logged
            )
        };
        let cap = match self.capped_by {
            Some((batch, true)) => format!(" (-ub {} capped at the load's n_batch {batch})", self.asked),
            Some((batch, false)) => format!(
                " (-ub {} capped at llama.cpp's default n_batch {batch}, assumed: the log does not print it)",
                self.asked
            ),
            None => String::new(),
        };
        format!("{from} → {}{cap}", self.to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(logged: i64, to: i64) -> MicroBatch {
        MicroBatch {
            logged,
            printed: true,
            asked: to,
            to,
            capped_by: None,
        }
    }

    #[test]
    fn the_compute_buffer_scales_linearly_without_overflow() {
        // sample-logs/1003-…: 4,757,131,264 bytes at 512, half at 256.
        assert_eq!(at(512, 256).scale(4_757_131_264), 2_378_565_632);
        assert_eq!(at(1, i64::MAX).scale(i64::MAX), i64::MAX);
        assert_eq!(at(0, 256).scale(1024), 256 * 1024);
        assert_eq!(at(1, i64::MAX).scale(i64::MIN), i64::MIN);
    }
}
