//! Every event kind a grammar rule may name, gathered from the modules that define them (one per family of log
//! lines, each kind's [`EventSpec`] beside its builder), and the check of a rule against its kind. The parser
//! checks every rule when it is built, so a misspelt event or `set` key, an unknown word or a rule that can
//! never yield a required field is an error naming the rule, not a silently different event; the check hands
//! back the rule's spec, so the parser builds each matched line with no lookup by name.

use super::kind::EventSpec;
use super::{engine, estimate, fit, llama, llama_server, server};
use crate::grammar::Rule;

/// Every family's event kinds; no kind is named in two.
const FAMILIES: &[&[EventSpec]] = &[
    server::SPECS,
    estimate::SPECS,
    engine::SPECS,
    llama::SPECS,
    llama_server::SPECS,
    fit::SPECS,
];

/// Every event kind a grammar rule may name.
pub fn event_kinds() -> impl Iterator<Item = &'static EventSpec> {
    FAMILIES.iter().flat_map(|family| family.iter())
}

/// The spec of an event kind.
pub fn event_spec(kind: &str) -> Option<&'static EventSpec> {
    event_kinds().find(|s| s.kind == kind)
}

/// Check a rule against its event's spec (see [`EventSpec::check`]) and return that spec; an event no family
/// defines is an error listing the known ones.
pub fn check_rule(rule: &Rule) -> Result<&'static EventSpec, String> {
    let Some(spec) = event_spec(&rule.event) else {
        let mut known: Vec<&str> = event_kinds().map(|s| s.kind).collect();
        known.sort_unstable();
        return Err(format!(
            "unknown event '{}' (known: {})",
            rule.event,
            known.join(", ")
        ));
    };
    spec.check(rule)?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(event: &str, regex: &str, set: &[(&str, &str)], rename: &[(&str, &str)]) -> Rule {
        Rule {
            id: "test.rule".into(),
            event: event.into(),
            file: "60-test.toml".into(),
            anchors: vec!["x".into()],
            regex: regex::Regex::new(regex).unwrap(),
            logfmt: false,
            key_prefix: None,
            rename: rename
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            set: set
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            examples: Vec::new(),
        }
    }

    #[test]
    fn a_rule_as_the_built_in_grammar_writes_it_passes() {
        let r = rule(
            "buffer",
            r"(?P<buffer>\w+) (?P<kind>KV|RS)? buffer size = (?P<size>.*)",
            &[("component", "llama_kv_cache"), ("projector", "false")],
            &[],
        );
        assert_eq!(check_rule(&r).map(|s| s.kind), Ok("buffer"));
    }

    #[test]
    fn a_misspelt_set_key_names_the_settable_fields() {
        let r = rule("kv_size", r"(?P<size>.*)", &[("recurrant", "true")], &[]);
        let err = check_rule(&r).unwrap_err();
        assert!(
            err.contains("'recurrant'") && err.contains("settable: recurrent"),
            "{err}"
        );
    }

    #[test]
    fn a_set_word_the_event_does_not_read_is_refused() {
        let r = rule("estimate", r"offload", &[("form", "e9")], &[]);
        assert!(check_rule(&r).unwrap_err().contains("'e9'"));
        let r = rule("fit_decision", r"fit", &[("change", "yes")], &[]);
        assert!(check_rule(&r).unwrap_err().contains("'yes'"));
        let r = rule(
            "buffer",
            r"(?P<buffer>\w+) (?P<size>.*)",
            &[("kind", "kv")],
            &[],
        );
        assert!(check_rule(&r).unwrap_err().contains("'kv'"));
    }

    #[test]
    fn a_required_field_the_rule_never_yields_is_an_error() {
        let r = rule("buffer", r"(?P<buffer>\w+) (?P<sise>.*)", &[], &[]);
        assert!(check_rule(&r).unwrap_err().contains("needs field 'size'"));
        // A rename can supply it, from a field the regex captures.
        let r = rule(
            "buffer",
            r"(?P<buffer>\w+) (?P<sise>.*)",
            &[],
            &[("sise", "size")],
        );
        assert_eq!(check_rule(&r).map(|s| s.kind), Ok("buffer"));
        let r = rule(
            "buffer",
            r"(?P<buffer>\w+) (?P<size>.*)",
            &[],
            &[("sizes", "size")],
        );
        assert!(check_rule(&r).unwrap_err().contains("rename of 'sizes'"));
    }

    #[test]
    fn an_unknown_event_lists_the_known_ones() {
        let err = check_rule(&rule("bufer", "x", &[], &[])).unwrap_err();
        assert!(
            err.contains("unknown event 'bufer'") && err.contains("buffer"),
            "{err}"
        );
    }
}
