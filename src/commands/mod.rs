//! The commands, from parsed arguments to what the terminal gets.

pub mod diff;
pub mod report;
