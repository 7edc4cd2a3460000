//! Applying a grammar to a line: the anchor prefilter picks candidate rules, their regexes run in
//! precedence order, and the first match yields its fields (named groups, constants, logfmt pairs).

use crate::grammar::{Grammar, Rule};

use super::fields::Fields;
use super::values::parse_logfmt;

/// Try one rule on a line; on a match return its fields.
pub fn apply(rule: &Rule, line: &str) -> Option<Fields> {
    let mut pairs: Vec<(String, String)> = rule
        .regex
        .named_captures(line)?
        .into_iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    pairs.extend(rule.set.iter().cloned());
    if rule.logfmt {
        for (key, value) in parse_logfmt(line) {
            let key = match &rule.key_prefix {
                Some(prefix) => match key.strip_prefix(prefix.as_str()) {
                    Some(stripped) => stripped.to_string(),
                    None => continue,
                },
                None => key,
            };
            pairs.push((key, value));
        }
    }
    for (from, to) in &rule.rename {
        for pair in pairs.iter_mut().filter(|p| &p.0 == from) {
            pair.0 = to.clone();
        }
    }
    Some(Fields::from_pairs(pairs))
}

/// The first rule that matches `line`, with its fields; `candidates` is reused scratch space.
pub fn classify<'g>(
    grammar: &'g Grammar,
    line: &str,
    candidates: &mut Vec<usize>,
) -> Option<(&'g Rule, Fields)> {
    grammar.candidates(line, candidates);
    candidates.iter().find_map(|&i| {
        let rule = &grammar.rules[i];
        apply(rule, line).map(|fields| (rule, fields))
    })
}
