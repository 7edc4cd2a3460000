//! Suggestions for vLLM and SGLang loads, in their own flags (`src/model/knobs.rs`).

use super::Evidence;
use crate::model::Suggestion;

/// Settings to try for a vLLM or SGLang load.
pub fn suggest(_evidence: &Evidence, _out: &mut Vec<Suggestion>) {}
