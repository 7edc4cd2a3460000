//! Whether a suggestion of the first load delivered: when the setting it named is the change the user made in
//! the second load, the figures its lever moves are judged by the pair's comparison (`super::compare`). A
//! suggestion's setting is read back in the spellings `src/checks/suggest/` writes (`num_ctx=N`,
//! `--ctx-size N`, `-ub N`, `num_gpu=N`, `-np N`, `OLLAMA_KV_CACHE_TYPE=t`, `--cache-type-k t …`); one it
//! does not name a lever by is left out, never guessed.

use crate::model::{human, Concluded, PairFigure, PairVerdict, SuggestionOutcome};

use super::settings::SettingsDiff;

/// The lever a suggestion's setting names and the value it asks for, as the pair's `changed[].after` writes
/// it.
fn lever(setting: &str) -> Option<(&'static str, String)> {
    let words: Vec<&str> = setting.split_whitespace().collect();
    let assign = |key: &str| {
        setting
            .strip_prefix(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && !v.contains(' '))
    };
    if let Some(v) = assign("num_ctx=") {
        return Some(("ctx-per-slot", v));
    }
    if let Some(v) = assign("num_gpu=") {
        return Some(("ngl", v));
    }
    if let Some(v) = assign("OLLAMA_KV_CACHE_TYPE=") {
        return Some(("kv-type", v));
    }
    match words.as_slice() {
        ["--ctx-size" | "-c", v] => Some(("ctx", v.to_string())),
        ["-ub" | "--ubatch-size", v] => Some(("ubatch", v.to_string())),
        ["-ngl" | "--n-gpu-layers", v] => Some(("ngl", v.to_string())),
        ["-np" | "--parallel", v] => Some(("parallel", v.to_string())),
        ["--cache-type-k", k, "--cache-type-v", v] if k == v => Some(("kv-type", k.to_string())),
        _ => None,
    }
}

/// The first load's suggestions that are the change `diff` made, with whether they delivered.
pub fn outcomes(
    from: &Concluded,
    diff: &SettingsDiff,
    figures: &[PairFigure],
) -> Vec<SuggestionOutcome> {
    let per_slot = diff.changes.ctx.map(|c| c.to_string());
    from.suggestions
        .iter()
        .filter_map(|s| {
            let (name, value) = lever(&s.setting)?;
            let made = match name {
                "ctx-per-slot" => per_slot.as_deref() == Some(value.as_str()),
                _ => diff.changed.iter().any(|c| {
                    c.setting == name && c.modelled && c.after.eq_ignore_ascii_case(&value)
                }),
            };
            if !made {
                return None;
            }
            let lever_name = if name == "ctx-per-slot" { "ctx" } else { name };
            let judged: Vec<&PairFigure> = figures
                .iter()
                .filter(|f| f.device.is_none() && f.levers.iter().any(|l| l == lever_name))
                .collect();
            let delivered = (!judged.is_empty()
                && judged.iter().all(|f| f.verdict != PairVerdict::NotMeasured))
            .then(|| {
                judged
                    .iter()
                    .all(|f| f.verdict == PairVerdict::WithinRounding)
            });
            let figures_words: Vec<String> = judged
                .iter()
                .filter_map(|f| {
                    let (p, m) = (f.predicted?, f.measured?);
                    Some(if f.component == "layers" {
                        format!("layers predicted {}, measured {}", p.bytes, m.bytes)
                    } else {
                        format!(
                            "{} predicted {}, measured {}",
                            f.component,
                            human(p.bytes),
                            human(m.bytes)
                        )
                    })
                })
                .collect();
            let verdict = match delivered {
                Some(true) => "delivered what it promised",
                Some(false) => "did not deliver what it promised",
                None => "cannot be judged: the second load does not log what it moves",
            };
            Some(SuggestionOutcome {
                setting: s.setting.clone(),
                effect: s.effect.clone(),
                delivered,
                text: if figures_words.is_empty() {
                    format!(
                        "the first load's suggestion {} was the change made: {verdict}",
                        s.setting
                    )
                } else {
                    format!(
                        "the first load's suggestion {} was the change made: {verdict} ({})",
                        s.setting,
                        figures_words.join("; ")
                    )
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lever;

    #[test]
    fn a_suggestion_is_read_back_in_the_spellings_the_suggestions_write() {
        // Settings as the reports in reports/ print them; `None`: no lever, never guessed.
        let cases = [
            ("-ub 256", Some(("ubatch", "256"))),
            ("num_ctx=6912", Some(("ctx-per-slot", "6912"))),
            ("--ctx-size 34816", Some(("ctx", "34816"))),
            ("num_gpu=49", Some(("ngl", "49"))),
            ("-np 1", Some(("parallel", "1"))),
            ("OLLAMA_KV_CACHE_TYPE=q8_0", Some(("kv-type", "q8_0"))),
            (
                "--cache-type-k q8_0 --cache-type-v q8_0",
                Some(("kv-type", "q8_0")),
            ),
            (
                "num_ctx at 1/16 of this load's context (the log does not print it)",
                None,
            ),
            ("CUDA_VISIBLE_DEVICES=0", None),
            ("--cache-type-k q8_0 --cache-type-v f16", None),
        ];
        for (setting, want) in cases {
            let want = want.map(|(name, value)| (name, value.to_string()));
            assert_eq!(lever(setting), want, "{setting}");
        }
    }
}
