//! Building an event from a kind's name, for callers that hold a name rather than a checked rule (the grammar
//! example tests, tools). The parser does not come here: it resolves each rule's spec once, when it is built,
//! and calls that spec's builder directly (see `mod.rs`).

use super::event::EventKind;
use super::fields::{BuildError, Fields};
use super::spec::event_spec;

/// Build the event a rule names from its fields.
pub fn build(event: &str, fields: &Fields) -> Result<EventKind, BuildError> {
    let spec = event_spec(event).ok_or_else(|| format!("unknown event kind '{event}'"))?;
    (spec.build)(fields)
}
