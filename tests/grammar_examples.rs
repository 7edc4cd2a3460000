//! Every grammar rule against its own example lines: the full grammar must classify each example with that
//! rule (so precedence is right), yield the expected fields, and build a typed event.

use vramdiff::frame::Framer;
use vramdiff::grammar;
use vramdiff::parse::build::build;
use vramdiff::parse::matcher::classify;
use vramdiff::parse::spec::event_spec;

#[test]
fn every_rule_matches_its_examples_with_the_expected_fields() {
    let g = grammar::load(None).expect("built-in grammar");
    assert!(
        g.rules.len() >= 40,
        "expected the full built-in grammar, got {} rules",
        g.rules.len()
    );
    let mut candidates = Vec::new();
    let mut checked = 0;
    for rule in &g.rules {
        assert!(!rule.examples.is_empty(), "{}: no example", rule.id);
        for example in &rule.examples {
            // Examples are raw log lines: frame them as the tool does (journald prefixes etc.).
            let mut framed = Vec::new();
            let mut f = Framer::new();
            f.push(1, example.line.as_bytes(), |_, l| {
                framed.push(l.to_string())
            });
            f.finish(|_, l| framed.push(l.to_string()));
            let line = &framed[0];
            let (matched, fields) = classify(&g, line, &mut candidates)
                .unwrap_or_else(|| panic!("{}: example not recognised: {line}", rule.id));
            assert_eq!(
                matched.id, rule.id,
                "example of {} was taken by {}: {line}",
                rule.id, matched.id
            );
            for (key, want) in &example.expect {
                assert_eq!(
                    fields.get(key),
                    Some(want.as_str()),
                    "{}: field '{key}' of {line}",
                    rule.id
                );
            }
            let required = event_spec(&rule.event).map_or(&[][..], |s| s.required);
            for field in required {
                assert!(
                    fields.get(field).is_some(),
                    "{}: event {} needs field '{field}'",
                    rule.id,
                    rule.event
                );
            }
            build(&rule.event, &fields).unwrap_or_else(|e| panic!("{}: {e}: {line}", rule.id));
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} examples checked");
}

#[test]
fn an_override_dir_replaces_a_builtin_file_and_adds_rules() {
    let dir = crate::util::grammar_dir(
        "grammar",
        r#"format = 1
[[rule]]
id = "fork.vram"
event = "known"
anchors = ["fork vram"]
regex = 'fork vram'
[[rule.example]]
line = "fork vram 12"
expect = {}
"#,
    );
    let g = grammar::load(Some(&dir)).expect("override loads");
    assert!(g.rules.iter().any(|r| r.id == "fork.vram"));
    std::fs::write(dir.join("60-fork.toml"), "format = 2\n").unwrap();
    let err = grammar::load(Some(&dir)).unwrap_err().to_string();
    assert!(
        err.contains("60-fork.toml") && err.contains("format = 2"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_misspelt_set_key_in_a_grammar_dir_is_an_error_naming_file_and_rule() {
    let dir = crate::util::grammar_dir(
        "grammar-set",
        r#"format = 1
[[rule]]
id = "fork.kv"
event = "kv_size"
anchors = ["fork kv"]
regex = 'fork kv (?P<size>\d+ MiB)'
set = { recurrant = "true" }
[[rule.example]]
line = "fork kv 12 MiB"
expect = {}
"#,
    );
    let out = crate::util::run(
        &["--grammar-dir", dir.to_str().unwrap(), "-"],
        b"fork kv 12 MiB\n",
    );
    let err = crate::util::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("60-fork.toml")
            && err.contains("'fork.kv'")
            && err.contains("no settable field 'recurrant' (settable: recurrent)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
