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

/// The knob table of `docs/findings.md`, as the knob tables in `src/model/knobs.rs` give it.
fn knob_table() -> String {
    use vramdiff::model::knobs::table;
    use vramdiff::model::{Knob, Reach, Runtime};
    let cell = |runtime: Runtime, knob: Knob| match table(runtime).iter().find(|e| e.knob == knob) {
        None => "–".to_string(),
        Some(e) => match e.reach {
            Reach::Placer(_) => format!("`{}`", e.spelled()),
            Reach::Ignored(why) => format!("`{}`: ignored, {why}", e.spelled()),
        },
    };
    let mut out = String::from(
        "| knob | Ollama's estimator and engine | Ollama ≥ 0.30 (`--fit`) | llama.cpp on its own | llama-server, launcher unknown | vLLM | SGLang |\n|---|---|---|---|---|---|---|\n",
    );
    for knob in Knob::ALL {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            knob.purpose(),
            cell(Runtime::OllamaEstimator, knob),
            cell(Runtime::OllamaFit, knob),
            cell(Runtime::LlamaCpp, knob),
            cell(Runtime::LlamaCppLauncherUnknown, knob),
            cell(Runtime::Vllm, knob),
            cell(Runtime::Sglang, knob)
        ));
    }
    out
}

#[test]
fn findings_doc_knob_table_is_the_code_s() {
    use vramdiff::model::knobs::table;
    use vramdiff::model::Runtime;
    // The table's first column stands for both of Ollama's scheduler runtimes: they share one table.
    assert_eq!(
        table(Runtime::OllamaEstimator),
        table(Runtime::OllamaEngine)
    );
    let text = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    let want = knob_table();
    assert!(
        text.contains(&want),
        "docs/findings.md must hold the knob table of src/model/knobs.rs:\n{want}"
    );
}
