//! `vramdiff diff OLD NEW`: what changed in memory between two runs — two logs, or two `batch --out` folders.
//!
//! This stage sits after `checks`: it reads concluded loads (or the rows `batch` wrote from them), reduces each
//! to the [`facts::LoadFacts`] a comparison needs, pairs the loads of both runs ([`matching`]) and compares
//! every figure as an interval ([`compare`]): a change inside the printed rounding is not a change. The
//! reporters (`report::diff`) render the result; nothing here does I/O.

pub mod compare;
pub mod facts;
pub mod matching;

pub use compare::{
    diff, Diff, FigureChange, KvFillChange, LoadDiff, Movement, PlacementChange, RowDiff, Side,
};
pub use facts::{FindingFact, KvFill, LoadFacts, MatchKey, Placement, RowFacts};
