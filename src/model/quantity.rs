//! Byte quantities that carry the uncertainty of the text they were read from.
//!
//! Ollama prints sizes with one decimal (`6.8 GiB` is anything in [6.75, 6.85) GiB), llama.cpp with two
//! (`4403.49 MiB` ± 0.005 MiB), nvidia-smi in whole MiB (± 0.5 MiB), and llama-server's breakdown table and
//! `--fit` lines in whole MiB *truncated* (`1530` is [1530, 1531) MiB).
//! A [`Quantity`] keeps the nominal value together with the lowest and highest byte counts the printed text
//! allows, and all arithmetic on it is interval arithmetic, so a derived figure (a sum, a delta) never
//! claims more precision than its inputs had. Comparisons ("is this gap real?") are done on the intervals.

use serde::{Deserialize, Serialize};

/// Binary unit multipliers used by every dialect we read.
pub const KIB: i64 = 1024;
pub const MIB: i64 = 1024 * 1024;
pub const GIB: i64 = 1024 * 1024 * 1024;
pub const TIB: i64 = 1024 * GIB;

/// A byte count with inclusive bounds: `low <= bytes <= high` always holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The nominal value (what the text says, converted to bytes).
    pub bytes: i64,
    /// The smallest byte count the text is consistent with.
    pub low: i64,
    /// The largest byte count the text is consistent with.
    pub high: i64,
}

/// How two quantities compare once their uncertainty is taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering3 {
    /// The intervals overlap: no difference can be claimed.
    Overlap,
    /// Every value of the left is above every value of the right.
    Above,
    /// Every value of the left is below every value of the right.
    Below,
}

impl Quantity {
    /// An exactly known byte count.
    pub const fn exact(bytes: i64) -> Self {
        Quantity {
            bytes,
            low: bytes,
            high: bytes,
        }
    }

    /// A quantity with explicit bounds; the bounds are reordered and widened to contain `bytes`.
    pub fn with_bounds(bytes: i64, low: i64, high: i64) -> Self {
        let (low, high) = if low <= high {
            (low, high)
        } else {
            (high, low)
        };
        Quantity {
            bytes,
            low: low.min(bytes),
            high: high.max(bytes),
        }
    }

    /// A value printed as a decimal number `mantissa / 10^scale` of `unit` bytes, precise to half a unit in
    /// the last printed digit. Returns `None` when the value does not fit in 63 bits.
    pub fn from_decimal(mantissa: u128, scale: u32, unit: i64) -> Option<Self> {
        let unit = unit as i128;
        let denom = 10i128.checked_pow(scale)?;
        let m = i128::try_from(mantissa).ok()?;
        let twice = m.checked_mul(2)?.checked_mul(unit)?;
        let nominal = div_round(m.checked_mul(unit)?, denom);
        // [m - 0.5, m + 0.5] in units of the last digit, times unit. Checked: 38 decimals make 2 × 10³⁸, past
        // i128 (the values fuzz target found it).
        let denom2 = denom.checked_mul(2)?;
        let low = floor_div(twice.checked_sub(unit)?, denom2).max(0);
        let high = ceil_div(twice.checked_add(unit)?, denom2);
        Some(Quantity {
            bytes: i64::try_from(nominal).ok()?,
            low: i64::try_from(low).ok()?,
            high: i64::try_from(high).ok()?,
        })
    }

    /// A whole number of `unit`s printed *truncated* (C integer division, `bytes / MiB`), as llama.cpp's
    /// memory breakdown table and its `--fit` lines print MiB: a printed `1530` is anything in
    /// [1530, 1531) MiB, and a printed `-500` anything in (-501, -500] MiB. `None` past 63 bits.
    pub fn from_truncated(value: i64, unit: i64) -> Option<Self> {
        let nominal = value.checked_mul(unit)?;
        let (low, high) = if value >= 0 {
            (nominal, nominal.checked_add(unit - 1)?)
        } else {
            (nominal.checked_sub(unit - 1)?, nominal)
        };
        Some(Quantity {
            bytes: nominal,
            low,
            high,
        })
    }

    /// Width of the interval in bytes.
    pub fn spread(&self) -> i64 {
        self.high.saturating_sub(self.low)
    }

    /// Interval sum.
    pub fn plus(self, other: Quantity) -> Quantity {
        Quantity {
            bytes: self.bytes.saturating_add(other.bytes),
            low: self.low.saturating_add(other.low),
            high: self.high.saturating_add(other.high),
        }
    }

    /// Interval difference `self - other` (the widest interval consistent with both).
    pub fn minus(self, other: Quantity) -> Quantity {
        Quantity {
            bytes: self.bytes.saturating_sub(other.bytes),
            low: self.low.saturating_sub(other.high),
            high: self.high.saturating_sub(other.low),
        }
    }

    /// Multiply by a whole count (a per-GPU charge paid on `n` GPUs). A negative count flips the bounds;
    /// results past the i64 range saturate, so the bounds stay ordered.
    pub fn times(self, n: i64) -> Quantity {
        Quantity::with_bounds(
            self.bytes.saturating_mul(n),
            self.low.saturating_mul(n),
            self.high.saturating_mul(n),
        )
    }

    /// Scale by the fraction `num / den` (used to pro-rate a total over layers). A negative fraction flips
    /// the bounds; results past the i64 range saturate; `den == 0` leaves the quantity as it is.
    pub fn scale(self, num: i64, den: i64) -> Quantity {
        if den == 0 {
            return self;
        }
        let f = |v: i64| {
            let scaled = div_round(v as i128 * num as i128, den as i128);
            scaled.clamp(i64::MIN as i128, i64::MAX as i128) as i64
        };
        Quantity::with_bounds(f(self.bytes), f(self.low), f(self.high))
    }

    /// Sum of an iterator of quantities; `None` when the iterator is empty.
    pub fn sum<I: IntoIterator<Item = Quantity>>(items: I) -> Option<Quantity> {
        items.into_iter().reduce(Quantity::plus)
    }

    /// Compare two quantities as intervals.
    pub fn compare(&self, other: &Quantity) -> Ordering3 {
        if self.low > other.high {
            Ordering3::Above
        } else if self.high < other.low {
            Ordering3::Below
        } else {
            Ordering3::Overlap
        }
    }
}

fn div_round(n: i128, d: i128) -> i128 {
    if n >= 0 {
        (n + d / 2) / d
    } else {
        -((-n + d / 2) / d)
    }
}

fn floor_div(n: i128, d: i128) -> i128 {
    n.div_euclid(d)
}

fn ceil_div(n: i128, d: i128) -> i128 {
    -((-n).div_euclid(d))
}

/// Render a byte count the way a person reads it: GiB with two decimals from 1 GiB, MiB with one decimal
/// below, bytes below 1 KiB. Negative values keep their sign.
pub fn human(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "" };
    let b = bytes.unsigned_abs() as f64;
    if b >= GIB as f64 {
        format!("{sign}{:.2} GiB", b / GIB as f64)
    } else if b >= MIB as f64 {
        format!("{sign}{:.1} MiB", b / MIB as f64)
    } else if b >= KIB as f64 {
        format!("{sign}{:.1} KiB", b / KIB as f64)
    } else {
        format!("{sign}{} B", b as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_decimal_gib_is_plus_minus_half_a_tenth() {
        // "6.8 GiB" as Ollama's HumanBytes2 prints it.
        let q = Quantity::from_decimal(68, 1, GIB).unwrap();
        assert_eq!(q.bytes, 7301444403); // 6.8 * 2^30 rounded
        assert_eq!(q.low, 7247757312); // 6.75 GiB
        assert_eq!(q.high, 7355131495); // 6.85 GiB (rounded up)
        assert!(q.low <= q.bytes && q.bytes <= q.high);
    }

    #[test]
    fn two_decimal_mib_is_exact_to_five_thousandths() {
        let q = Quantity::from_decimal(440349, 2, MIB).unwrap(); // 4403.49 MiB
                                                                 // ±0.005 MiB, plus at most a byte of rounding at each end.
        assert!((q.high - q.low - MIB / 100).abs() <= 2, "{q:?}");
    }

    #[test]
    fn zero_bytes_cannot_go_negative() {
        let q = Quantity::from_decimal(0, 0, 1).unwrap();
        assert_eq!((q.low, q.bytes), (0, 0));
    }

    #[test]
    fn delta_widens_by_both_uncertainties() {
        let a = Quantity::with_bounds(100, 90, 110);
        let b = Quantity::with_bounds(50, 45, 55);
        let d = a.minus(b);
        assert_eq!((d.low, d.bytes, d.high), (35, 50, 65));
    }

    #[test]
    fn a_truncated_table_figure_matches_the_buffer_it_truncates() {
        // A breakdown table's `1530` (MiB, truncated) against buffers of 1530.62 MiB: the same memory.
        let table = Quantity::from_truncated(1530, MIB).unwrap();
        let buffers = Quantity::from_decimal(153062, 2, MIB).unwrap();
        assert_eq!((table.low, table.high), (1530 * MIB, 1531 * MIB - 1));
        assert_eq!(table.compare(&buffers), Ordering3::Overlap);
        // Rounded to ±0.5 MiB instead, the same figure would wrongly exclude 1530.62 MiB.
        let rounded = Quantity::from_decimal(1530, 0, MIB).unwrap();
        assert_eq!(rounded.compare(&buffers), Ordering3::Below);
        let negative = Quantity::from_truncated(-500, MIB).unwrap();
        assert_eq!((negative.low, negative.high), (-501 * MIB + 1, -500 * MIB));
        assert!(Quantity::from_truncated(i64::MAX / 2, MIB).is_none());
    }

    #[test]
    fn overflow_is_refused_not_wrapped() {
        assert!(Quantity::from_decimal(u64::MAX as u128, 0, MIB).is_none());
    }

    #[test]
    fn overlapping_intervals_compare_as_overlap() {
        let a = Quantity::with_bounds(10, 5, 15);
        let b = Quantity::with_bounds(20, 14, 30);
        assert_eq!(a.compare(&b), Ordering3::Overlap);
        assert_eq!(Quantity::exact(40).compare(&b), Ordering3::Above);
    }
}
