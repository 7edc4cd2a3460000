//! Every event kind a grammar rule may name, gathered from the modules that define them (one per family of log
//! lines, each kind's [`EventSpec`] beside its builder), and the check of a rule against its kind. The parser
//! checks every rule when it is built, so a misspelt event or `set` key, an unknown word or a rule that can
//! never yield a required field is an error naming the rule, not a silently different event; the check hands
//! back the rule's spec, so the parser builds each matched line with no lookup by name.

use super::kind::EventSpec;
use super::{
    engine, estimate, fit, llama, llama_server, scheduler, server, serving, serving_memory,
    signature,
};
use crate::grammar::Rule;

/// Every family's event kinds; no kind is named in two.
const FAMILIES: &[&[EventSpec]] = &[
    server::SPECS,
    estimate::SPECS,
    engine::SPECS,
    llama::SPECS,
    llama_server::SPECS,
    fit::SPECS,
    serving::SPECS,
    serving_memory::SPECS,
    scheduler::SPECS,
    signature::SPECS,
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
            regex: crate::grammar::RuleRegex::new(regex).unwrap(),
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

    /// The backticked names of a README table cell, leaving out what parentheses say about them.
    fn names(cell: &str) -> Vec<&str> {
        let (mut names, mut depth, mut start) = (Vec::new(), 0usize, None);
        for (i, c) in cell.char_indices() {
            match (c, start) {
                ('`', None) if depth == 0 => start = Some(i + 1),
                ('`', Some(from)) => {
                    names.push(&cell[from..i]);
                    start = None;
                }
                ('(', None) => depth += 1,
                (')', None) => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        names
    }

    /// Whether a README list of names (`memory.*` standing for every name with that prefix) is exactly a
    /// spec's list.
    fn same_names(readme: &[&str], spec: &[&str]) -> bool {
        let covers = |pattern: &str, name: &str| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pattern == name,
        };
        spec.iter().all(|n| readme.iter().any(|p| covers(p, n)))
            && readme.iter().all(|p| spec.iter().any(|n| covers(p, n)))
    }

    /// `grammars/README.md`'s event table lists every event kind once, with the required and optional fields
    /// of its spec: the table is written by hand, and this holds it to the definitions.
    #[test]
    fn the_grammar_readme_lists_every_event_kind_with_its_fields() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/README.md"))
                .unwrap();
        let table = readme
            .split("## Events and their fields")
            .nth(1)
            .expect("the README's event table");
        let mut listed = Vec::new();
        for row in table.lines().skip_while(|l| !l.starts_with("| `")) {
            if !row.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let [_, kinds, required, optional, _] = cells[..] else {
                panic!("a row of three cells: {row}");
            };
            for kind in names(kinds) {
                let spec = event_spec(kind)
                    .unwrap_or_else(|| panic!("README lists unknown event '{kind}'"));
                assert!(
                    same_names(&names(required), spec.required),
                    "README: required fields of '{kind}' are {:?}, its spec says {:?}",
                    names(required),
                    spec.required
                );
                assert!(
                    same_names(&names(optional), spec.optional),
                    "README: optional fields of '{kind}' are {:?}, its spec says {:?}",
                    names(optional),
                    spec.optional
                );
                listed.push(kind);
            }
        }
        let mut kinds: Vec<&str> = event_kinds().map(|s| s.kind).collect();
        kinds.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, kinds, "README rows against the event kinds");
    }

    #[test]
    fn every_kind_is_defined_once_and_may_set_only_fields_it_names() {
        let mut kinds: Vec<&str> = event_kinds().map(|s| s.kind).collect();
        kinds.sort_unstable();
        let before = kinds.len();
        kinds.dedup();
        assert_eq!(kinds.len(), before, "an event kind defined twice");
        for spec in event_kinds() {
            for (key, _) in spec.settable {
                assert!(
                    spec.required.contains(key) || spec.optional.contains(key),
                    "'{}' may set '{key}', which it neither needs nor reads",
                    spec.kind
                );
            }
            for field in spec.required {
                assert!(
                    !spec.optional.contains(field),
                    "'{}': '{field}' is both required and optional",
                    spec.kind
                );
            }
        }
    }

    /// Each kind's builder reads only the fields its spec lists, on every example line of the built-in
    /// grammar: a field the builder reads and the spec (and so the README) does not name is drift.
    #[test]
    fn builders_read_only_the_fields_their_spec_lists() {
        let grammar = crate::grammar::load(None).unwrap();
        let mut built = 0;
        for rule in &grammar.rules {
            let spec = check_rule(rule).unwrap();
            for example in &rule.examples {
                let mut lines = Vec::new();
                let mut framer = crate::frame::Framer::new();
                framer.push(1, example.line.as_bytes(), |_, l| lines.push(l.to_string()));
                framer.finish(|_, l| lines.push(l.to_string()));
                let Some(fields) = crate::parse::matcher::apply(rule, &lines[0]) else {
                    continue;
                };
                built += usize::from((spec.build)(&fields).is_ok());
                for name in fields.asked() {
                    assert!(
                        spec.required.contains(&name.as_str())
                            || spec.optional.contains(&name.as_str()),
                        "{}: the builder of '{}' reads '{name}', which its spec does not list",
                        rule.id,
                        spec.kind
                    );
                }
            }
        }
        assert!(built >= 60, "only {built} examples built");
    }
}
