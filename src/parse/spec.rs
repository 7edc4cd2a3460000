//! What a grammar rule may name for each event kind: the fields the event needs and the constant fields a rule
//! may `set`, with the words each accepts. The parser checks every rule against this when it is built, so a
//! misspelt `set` key, an unknown word or a rule that can never yield a required field is an error naming the
//! rule, not a silently different event.

use super::build::{buffer_kind, side_estimate};
use crate::grammar::Rule;
use crate::model::OffloadShape;

/// The words a rule may `set` a field to.
#[derive(Debug, Clone, Copy)]
pub enum Words {
    /// Any text (a reason, a component name).
    Any,
    /// One of these words.
    List(&'static [&'static str]),
    /// A word the event's own reader accepts.
    Check(fn(&str) -> bool),
}

impl Words {
    fn accepts(self, word: &str) -> bool {
        match self {
            Words::Any => true,
            Words::List(words) => words.contains(&word),
            Words::Check(accepts) => accepts(word),
        }
    }
}

const BOOL: Words = Words::List(&["true", "false"]);
const PHASE: Words = Words::List(&["estimate", "actual"]);

/// An event kind a grammar rule may name: the fields the event needs, and the constant fields a rule may
/// `set`, with the words each accepts. A grammar is checked against these when the parser is built, so a
/// misspelt key or word is an error naming the rule, not a silently different event.
pub struct EventSpec {
    pub kind: &'static str,
    pub required: &'static [&'static str],
    pub settable: &'static [(&'static str, Words)],
}

/// Every event kind a grammar rule may name.
pub const EVENT_KINDS: &[EventSpec] = &[
    EventSpec {
        kind: "server_start",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "inference_compute",
        required: &["id"],
        settable: &[],
    },
    EventSpec {
        kind: "gpu_memory",
        required: &["id"],
        settable: &[],
    },
    EventSpec {
        kind: "estimate",
        required: &[],
        settable: &[("form", Words::Check(|w| OffloadShape::named(w).is_some()))],
    },
    EventSpec {
        kind: "runner_start",
        required: &["cmd"],
        settable: &[("runner", Words::List(&["llama-server"]))],
    },
    EventSpec {
        kind: "loading_model",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "load_request",
        required: &["request"],
        settable: &[],
    },
    EventSpec {
        kind: "engine_start",
        required: &["engine"],
        settable: &[("engine", Words::List(&["llama", "ollama"]))],
    },
    EventSpec {
        kind: "cuda_device",
        required: &["index", "name"],
        settable: &[],
    },
    EventSpec {
        kind: "offloaded",
        required: &["done", "total"],
        settable: &[],
    },
    EventSpec {
        kind: "buffer",
        required: &["buffer", "size"],
        settable: &[
            ("component", Words::Any),
            ("kind", Words::Check(|w| buffer_kind(w).is_some())),
            ("projector", BOOL),
        ],
    },
    EventSpec {
        kind: "engine_weights",
        required: &["buffer", "size"],
        settable: &[],
    },
    EventSpec {
        kind: "engine_graph",
        required: &["buffer", "size"],
        settable: &[],
    },
    EventSpec {
        kind: "memory_summary",
        required: &["part", "device", "size"],
        settable: &[("phase", PHASE)],
    },
    EventSpec {
        kind: "memory_total",
        required: &["size"],
        settable: &[("phase", PHASE)],
    },
    EventSpec {
        kind: "breakdown_row",
        required: &["device", "self", "model", "context", "compute"],
        settable: &[],
    },
    EventSpec {
        kind: "breakdown_header",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "fit_start",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "fit_projection",
        required: &["used", "free"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_initial",
        required: &["device", "used", "free"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_decision",
        required: &["change"],
        settable: &[("change", BOOL)],
    },
    EventSpec {
        kind: "fit_context",
        required: &["to"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_target",
        required: &["id", "target"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_probe",
        required: &["id", "layers", "mem"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_set",
        required: &["id", "layers"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_device",
        required: &["device", "used"],
        settable: &[],
    },
    EventSpec {
        kind: "fit_done",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "runner_device",
        required: &["device", "free"],
        settable: &[],
    },
    EventSpec {
        kind: "side_estimate",
        required: &["what", "size"],
        settable: &[("what", Words::Check(|w| side_estimate(w).is_some()))],
    },
    EventSpec {
        kind: "projector_backend",
        required: &["device"],
        settable: &[],
    },
    EventSpec {
        kind: "projector_offload_disabled",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "gpu_rejected",
        required: &["name", "reason"],
        settable: &[("reason", Words::Any)],
    },
    EventSpec {
        kind: "kv_size",
        required: &["size"],
        settable: &[("recurrent", BOOL)],
    },
    EventSpec {
        kind: "model_param",
        required: &["key", "value"],
        settable: &[],
    },
    EventSpec {
        kind: "model_loader",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "recovered",
        required: &["message"],
        settable: &[],
    },
    EventSpec {
        kind: "kv_params",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "context_param",
        required: &["key", "value"],
        settable: &[],
    },
    EventSpec {
        kind: "projector_size",
        required: &["what", "size"],
        settable: &[("what", Words::List(&["graph", "weights"]))],
    },
    EventSpec {
        kind: "vocab_only",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "runner_started",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "load_failed",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "model_header",
        required: &[],
        settable: &[],
    },
    EventSpec {
        kind: "known",
        required: &[],
        settable: &[],
    },
];

/// The spec of an event kind.
pub fn event_spec(kind: &str) -> Option<&'static EventSpec> {
    EVENT_KINDS.iter().find(|s| s.kind == kind)
}

/// Check a rule against its event's spec: a known event, `set` keys and words the event reads, renames from
/// fields the regex names, and every required field obtainable (a rule reading Go slog records gets its
/// fields from the line, so only its `set` is checked).
pub fn check_rule(rule: &Rule) -> Result<(), String> {
    let Some(spec) = event_spec(&rule.event) else {
        let known: Vec<&str> = EVENT_KINDS.iter().map(|s| s.kind).collect();
        return Err(format!(
            "unknown event '{}' (known: {})",
            rule.event,
            known.join(", ")
        ));
    };
    for (key, word) in &rule.set {
        let Some((_, words)) = spec.settable.iter().find(|(k, _)| k == key) else {
            let settable: Vec<&str> = spec.settable.iter().map(|(k, _)| *k).collect();
            return Err(format!(
                "event '{}' has no settable field '{key}' (settable: {})",
                spec.kind,
                if settable.is_empty() {
                    "none".to_string()
                } else {
                    settable.join(", ")
                }
            ));
        };
        if !words.accepts(word) {
            return Err(format!(
                "'{word}' is not a value of {key} for event '{}'",
                spec.kind
            ));
        }
    }
    if rule.logfmt {
        return Ok(());
    }
    let named: Vec<&str> = rule.regex.capture_names().flatten().collect();
    for (from, _) in &rule.rename {
        if !named.contains(&from.as_str()) {
            return Err(format!(
                "rename of '{from}', which the regex does not capture"
            ));
        }
    }
    let obtainable = |field: &str| {
        named.contains(&field)
            || rule.set.iter().any(|(k, _)| k == field)
            || rule.rename.iter().any(|(_, to)| to == field)
    };
    if let Some(missing) = spec.required.iter().find(|f| !obtainable(f)) {
        return Err(format!(
            "event '{}' needs field '{missing}', which the rule never yields",
            spec.kind
        ));
    }
    Ok(())
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
        assert_eq!(check_rule(&r), Ok(()));
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
        assert_eq!(check_rule(&r), Ok(()));
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
