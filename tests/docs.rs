//! The documentation a newcomer reads stays true to the code: `docs/findings.md` has exactly one section
//! (`## \`code\``) per finding code the library defines, in the order of the check registry, so a code added,
//! renamed or removed without its documentation fails here.

use crate::util::root;

/// The codes `docs/findings.md` gives a section, in file order.
fn documented_codes() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| {
            h.trim()
                .strip_prefix('`')
                .and_then(|h| h.strip_suffix('`'))
                .unwrap_or_else(|| {
                    panic!("docs/findings.md: a section heading that is not a code: {h:?}")
                })
                .to_string()
        })
        .collect()
}

#[test]
fn findings_doc_has_one_section_per_finding_code() {
    let registry: Vec<String> = vramdiff::checks::REGISTRY
        .iter()
        .map(|c| c.code.as_str().to_string())
        .collect();
    let every_code: Vec<String> = vramdiff::model::FindingCode::ALL
        .iter()
        .map(|(_, w)| w.to_string())
        .collect();
    assert_eq!(registry, every_code, "the registry runs every code");
    assert_eq!(
        documented_codes(),
        registry,
        "docs/findings.md: one `## `code`` section per finding code, in registry order"
    );
}

#[test]
fn findings_doc_summary_table_lists_every_code() {
    let text = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    for (_, word) in vramdiff::model::FindingCode::ALL {
        let row = format!("| `{word}` |");
        assert_eq!(
            text.matches(&row).count(),
            1,
            "docs/findings.md: one summary-table row for {word}"
        );
    }
}
