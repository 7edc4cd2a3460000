//! How a compute buffer changes with the micro-batch, the context and the slots: the law the real llama.cpp
//! follows, measured on build b11549 (CPU, `tests/data/oracle-levers/`, `tests/oracle_levers.rs`), so that
//! `whatif --ubatch`, `--ctx` and `--parallel` predict the buffer from one run.
//!
//! # The law measured
//! llama.cpp reserves the compute buffer for one micro-batch of `u` tokens against the whole cache: `n_kv` is
//! a full KV stream's cells `c` (the context, or its share per slot on a split cache) and the window cache's
//! cells `w` (`pad256(window + u)` a sequence). The buffer is
//!
//! `C = u × (a + β·c + γ·w)`
//!
//! with `a` per token (activations, logits: the model's own, read from the run), and
//! - **flash attention on**: `β = γ = 2` bytes (the f16 KQ masks of the full and the window caches). llama
//!   (4 layers, 4 heads) at `-ub 512`: `-c 4096` 9.52 MiB, 8192 13.52, 16384 21.52, 32768 37.52 — 4 MiB more
//!   per 4096 cells = 512 × 4096 × 2 bytes; at `-c 8192`: `-ub 128` 3.38, 256 6.76, 512 13.52, 1024 27.04,
//!   2048 54.07 (proportional). gemma3 (window 512, 5 of 6 layers) at `-c 8192`: `-ub 128` 2.57, 512 10.53,
//!   2048 48.11 — proportional but for the window cells (768, 1024, 2560): 10.53 × 4 + 2048 × (2560 − 1024) × 2
//!   bytes = 48.12.
//! - **flash attention off**: `β = 4 × n_head + 4` (the f32 scores of every head and the f32 mask), `γ = 4`
//!   (the window's f32 mask; its scores reuse the full layer's memory). llama: `-c 4096` 43.51, 8192 83.51,
//!   16384 163.51 at `-ub 512` (40 MiB per 4096 cells = 512 × 4096 × 20 bytes, 4 heads); gemma3 at `-c 8192`:
//!   `-ub 512` 83.77, 2048 347.08 = (83.77 − 2) × 4 + 2048 × 2560 × 4 bytes. `n_head` comes from the log's
//!   `print_info: n_head` (the largest when it differs per layer); a log without it gets the full cache's term
//!   taken as proportional to `u × c` (exact for the micro-batch; an upper bound as the context grows, `a` not
//!   growing with it: llama 8192 → 16384 predicts 167.02 for 163.51 real).
//! - **flash attention on ↔ off** (the pairs of loads, `crate::pairs`): the masks of one mode are taken off
//!   and the masks and scores of the other put on, the per-token part `a` held. It is not quite the same in
//!   the two graphs: on the oracle's CPU runs `a` is about 1 KB a token larger without flash attention, so
//!   on → off predicts 0.5–1.1 % low (llama at `-c 4096 -ub 512`: 43.02 MiB for 43.51 real, at `-c 8192`
//!   83.02 for 83.51; gemma3 43.53 for 43.77) and off → on 7 % high (7.51 for 7.02), `tests/pairs.rs`.
//!   Without `n_head` the scores are unknown and the switch is not modelled: `sample-logs/1256-…` (llama-cli,
//!   Vulkan, gpt-oss-20b) prints none. By hand with that model's 64 heads, this law gives 2462 MiB for the
//!   2210 its run without flash attention measured (`a` about 0.5 MB a token smaller there): the law is
//!   measured on the CPU backend only.
//! - **slots**: only through `c` and `w`: `-c 8192 -np 4` (2048 cells a stream) 7.52 = 5.52 + 2048 × 512 × 2
//!   bytes; `-np auto` (one unified stream of 8192) 13.52, as `-np 1`.
//!
//! Not modelled: a backend that pads the mask or keeps several graph copies (pipeline parallelism), and which
//! of a multi-GPU load's devices hold the attention: each device's buffer is taken to hold its own masks (a
//! device whose buffer is smaller than its masks would be is scaled linearly with the micro-batch instead).

use crate::model::kv_geometry::{kv_geometry_of, CacheGeometry};
use crate::model::{LayerAttention, PerLayer, Reconciled};

use super::super::figures::Changes;

/// Bytes of the f16 mask per token and cell with flash attention; of the window's f32 mask without.
const FA_MASK: i64 = 2;
const F32_MASK: i64 = 4;

/// The compute law's inputs of a load as logged and as changed.
#[derive(Debug, Clone, Copy)]
pub struct ComputeLaw {
    before: Point,
    after: Point,
    /// Flash attention on (printed, or assumed from `auto`) or off, as logged.
    flash: bool,
    /// Flash attention at the changed settings.
    flash_after: bool,
    /// Whether the log printed flash attention's state.
    flash_printed: bool,
    /// Query heads (`print_info: n_head`), which size the f32 scores without flash attention.
    heads: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Point {
    ubatch: i64,
    cells: i64,
    window: i64,
}

fn point(g: &CacheGeometry, window: Option<u64>) -> Point {
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Point {
        ubatch: i(g.ubatch).max(1),
        cells: i(g.cells()).max(1),
        window: window.map_or(0, |w| i(g.window_cells(w))),
    }
}

impl ComputeLaw {
    /// The law for `changes` on `load`; `None` when the log does not give its cache geometry.
    pub fn of(load: &Reconciled, changes: &Changes) -> Option<ComputeLaw> {
        let logged = kv_geometry_of(&load.load.settings)?;
        let new = changes.geometry(load)?;
        let window = load.load.model.layout.as_ref().and_then(|l| {
            l.layers.iter().find_map(|l| match l.attention {
                LayerAttention::SlidingWindow { window, .. } => Some(window),
                _ => None,
            })
        });
        let flash = load.load.settings.flash_attention;
        let heads = load
            .load
            .model
            .hyperparameters
            .as_ref()
            .and_then(|h| h.n_head.as_ref())
            .and_then(|h| match h {
                PerLayer::All(n) => Some(*n),
                PerLayer::Each(each) => each.iter().copied().max(),
            })
            .and_then(|n| i64::try_from(n).ok())
            .filter(|&n| n > 0);
        Some(ComputeLaw {
            before: point(&logged, window),
            after: point(&new, window),
            flash: flash.unwrap_or(true),
            flash_after: changes.flash_attention.unwrap_or(flash.unwrap_or(true)),
            flash_printed: flash.is_some(),
            heads,
        })
    }

    /// Whether the change moves the buffer at all.
    pub fn changes(&self) -> bool {
        self.before != self.after || self.flash != self.flash_after
    }

    /// Whether the law can switch flash attention: the scores without it need the log's `n_head`.
    pub fn models_flash_switch(&self) -> bool {
        self.heads.is_some()
    }

    /// The masks and scores of one micro-batch at `p` in a mode: flash attention's f16 masks over every
    /// cache, else the f32 scores of every head with the f32 mask over the full cache and the f32 mask over
    /// the window; `None` without flash attention and without `n_head`.
    fn attention_terms(&self, flash: bool, p: Point) -> Option<i128> {
        let (u, c, w) = (
            i128::from(p.ubatch),
            i128::from(p.cells),
            i128::from(p.window),
        );
        if flash {
            return Some(i128::from(FA_MASK) * u * (c + w));
        }
        let per_cell = i128::from(F32_MASK) * (i128::from(self.heads?) + 1);
        Some(u * (per_cell * c + i128::from(F32_MASK) * w))
    }

    /// A buffer of `bytes` at the logged settings, at the changed ones.
    pub fn scale(&self, bytes: i64) -> i64 {
        let (b, a) = (self.before, self.after);
        let by = |v: i128, num: i128, den: i128| v * num / den.max(1);
        let (u0, u1) = (i128::from(b.ubatch), i128::from(a.ubatch));
        let (c0, c1) = (i128::from(b.cells), i128::from(a.cells));
        let (w0, w1) = (i128::from(b.window), i128::from(a.window));
        let c = i128::from(bytes);
        if self.flash != self.flash_after {
            // The per-token part held, one mode's terms taken off and the other's put on; a buffer smaller
            // than its own terms (a device that does not hold the attention) keeps its per-token scaling.
            let switched = self
                .attention_terms(self.flash, b)
                .zip(self.attention_terms(self.flash_after, a))
                .map(|(old, new)| {
                    let rest = (c - old).max(0);
                    by(rest, u1, u0) + if c >= old { new } else { 0 }
                })
                .unwrap_or(c);
            return i64::try_from(switched).unwrap_or(if switched < 0 { 0 } else { i64::MAX });
        }
        let after = if self.flash {
            let masks = |u: i128, c: i128, w: i128| i128::from(FA_MASK) * u * (c + w);
            let rest = c - masks(u0, c0, w0);
            if rest < 0 {
                by(c, u1, u0)
            } else {
                by(rest, u1, u0) + masks(u1, c1, w1)
            }
        } else if let Some(heads) = self.heads {
            // The f32 scores of every head and the f32 mask over the full cache, the f32 mask over the window.
            let per_cell = i128::from(F32_MASK) * (i128::from(heads) + 1);
            let scores = |u: i128, c: i128, w: i128| u * (per_cell * c + i128::from(F32_MASK) * w);
            let rest = c - scores(u0, c0, w0);
            if rest < 0 {
                by(c, u1 * c1, u0 * c0)
            } else {
                by(rest, u1, u0) + scores(u1, c1, w1)
            }
        } else {
            let window = |u: i128, w: i128| i128::from(F32_MASK) * u * w;
            let rest = c - window(u0, w0);
            if rest < 0 {
                by(c, u1, u0)
            } else {
                by(rest, u1 * c1, u0 * c0) + window(u1, w1)
            }
        };
        i64::try_from(after).unwrap_or(if after < 0 { 0 } else { i64::MAX })
    }

    /// The law in words, with what it assumes.
    pub fn words(&self) -> String {
        let (b, a) = (self.before, self.after);
        let arrow = |x: i64, y: i64| {
            if x == y {
                x.to_string()
            } else {
                format!("{x} → {y}")
            }
        };
        let mut what = vec![
            format!("n_ubatch {}", arrow(b.ubatch, a.ubatch)),
            format!("cells per stream {}", arrow(b.cells, a.cells)),
        ];
        if b.window > 0 {
            what.push(format!("window cells {}", arrow(b.window, a.window)));
        }
        let law = if self.flash != self.flash_after {
            what.push(format!(
                "flash attention {}",
                if self.flash_after {
                    "off → on"
                } else {
                    "on → off"
                }
            ));
            "flash attention's f16 masks (2 bytes × n_ubatch × the cells of every cache) swapped for the f32 scores \
             and masks without it (4 bytes × n_ubatch × ((n_head + 1) × the full cache's cells + the window's)), \
             or back, the per-token part held (real llama.cpp b11549: 0.5–1.1 % low on CPU; 11 % high on a \
             Vulkan run, sample 1256)"
        } else if self.flash {
            "llama.cpp's compute buffer is n_ubatch × (a + 2 bytes × the cells of every cache) with flash attention \
             (measured, real llama.cpp b11549)"
        } else if self.heads.is_some() {
            "without flash attention llama.cpp's compute buffer is n_ubatch × (a + 4 bytes × (n_head + 1) × the full \
             cache's cells + 4 bytes × the window's) (measured, real llama.cpp b11549)"
        } else if a.cells != b.cells {
            "without flash attention the scores grow with n_ubatch × cells (taken as proportional: an upper bound \
             as the context grows, the per-token part does not; the log prints no n_head)"
        } else {
            "llama.cpp's compute buffer is proportional to n_ubatch at a fixed context (measured, real llama.cpp \
             b11549)"
        };
        let assumed = if self.flash_printed {
            ""
        } else {
            "; flash attention assumed on (the log says auto, which llama.cpp turns on where the backend has it)"
        };
        if let (false, Some(h)) = (self.flash && self.flash_after, self.heads) {
            what.push(format!("n_head {h}"));
        }
        format!("{}: {law}{assumed}", what.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(before: (i64, i64, i64), after: (i64, i64, i64), flash: bool) -> ComputeLaw {
        with_heads(before, after, flash, None)
    }

    fn with_heads(
        before: (i64, i64, i64),
        after: (i64, i64, i64),
        flash: bool,
        heads: Option<i64>,
    ) -> ComputeLaw {
        let p = |(ubatch, cells, window)| Point {
            ubatch,
            cells,
            window,
        };
        ComputeLaw {
            before: p(before),
            after: p(after),
            flash,
            flash_after: flash,
            flash_printed: true,
            heads,
        }
    }

    #[test]
    fn the_law_reproduces_the_real_runs_it_was_measured_on() {
        let mib = |x: f64| (x * 1048576.0).round() as i64;
        let near = |got: i64, want: f64| (got as f64 / 1048576.0 - want).abs() < 0.03;
        // gemma3, flash attention, -c 8192: -ub 512 (window 1024 cells) 10.53 MiB → -ub 2048 (2560) 48.11.
        let l = law((512, 8192, 1024), (2048, 8192, 2560), true);
        assert!(near(l.scale(mib(10.53)), 48.11));
        // The same without flash attention: 83.77 → 347.08.
        let l = law((512, 8192, 1024), (2048, 8192, 2560), false);
        assert!(near(l.scale(mib(83.77)), 347.08));
        // llama, flash attention, -ub 512: -c 8192 13.52 → -c 16384 21.52.
        let l = law((512, 8192, 0), (512, 16384, 0), true);
        assert!(near(l.scale(mib(13.52)), 21.52));
        // llama without flash attention, 4 heads: -c 4096 43.51 → 8192 83.51 and 16384 163.51; without n_head
        // the context's term is an upper bound (167.02 for 163.51).
        let l = with_heads((512, 4096, 0), (512, 16384, 0), false, Some(4));
        assert!(near(l.scale(mib(43.51)), 163.51));
        let l = with_heads((512, 8192, 0), (128, 8192, 0), false, Some(4));
        assert!(near(l.scale(mib(83.51)), 83.51 / 4.0));
        let l = law((512, 8192, 0), (512, 16384, 0), false);
        assert!(l.scale(mib(83.51)) > mib(163.51));
    }
}
