//! `knob-ignored`: a setting the user made that did not reach the placement (`docs/log-formats.md` §5.6). Three
//! signs: a variable of `server config` that the runtime's knob table (`src/model/knobs.rs`) marks as ignored
//! there (`OLLAMA_GPU_OVERHEAD` under llama-server's `--fit`); llama.cpp's warning that a `LLAMA_ARG_*` variable
//! is overwritten by a flag on the command line (a flag Ollama passes); Ollama's `invalid llama-server fit target`.
//! The hint names the setting that does reach the placement, from the same table.

use super::{finding, CheckDef, Context};
use crate::model::{knobs, Finding, FindingCode, Reach, Severity, Spelling};

pub const DEF: CheckDef = CheckDef {
    code: FindingCode::KnobIgnored,
    summary: "a setting the user made that does not reach the placement in this runtime, and the one that does",
    run: check,
};

fn check(cx: &Context, out: &mut Vec<Finding>) {
    let load = &cx.load.load;
    let Some(s) = load.scheduler.as_ref() else {
        return;
    };
    let table = knobs::table(load.runtime);
    for entry in table {
        let (Spelling::Env(name), Reach::Ignored(why)) = (entry.spelling, entry.reach) else {
            continue;
        };
        // Set, and not to the value that does nothing anyway.
        let Some(value) = s.env(name).filter(|v| !matches!(*v, "0" | "false")) else {
            continue;
        };
        let instead = table
            .iter()
            .find(|e| e.knob == entry.knob && matches!(e.reach, Reach::Placer(_)))
            .or_else(|| knobs::reaching(load.runtime, crate::model::Knob::FitMargin))
            .map(|e| format!("what does: {}", e.spelled()))
            .unwrap_or_default();
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{name}={value} is set in the server's environment (server config, line {}) but does not reach the placement: {why}",
                s.environment_line.unwrap_or_default()
            ),
            &format!("unset it; {instead}"),
            s.environment_line.into_iter().collect(),
            None,
            None,
        ));
    }
    for o in &s.overwritten {
        // The Ollama setting that Ollama turns into that flag.
        let instead = table
            .iter()
            .find(|e| match e.reach {
                Reach::Placer(flags) => flags.split_whitespace().next() == Some(o.flag.as_str()),
                Reach::Ignored(_) => false,
            })
            .map(|e| {
                format!(
                    "set {} instead, which Ollama passes as {}",
                    e.spelled(),
                    o.flag
                )
            })
            .unwrap_or_else(|| {
                format!(
                    "Ollama passes {} itself; the variable cannot change it",
                    o.flag
                )
            });
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "{} is set, but llama.cpp says the command line's {} overwrites it (line {}): the variable did nothing",
                o.variable, o.flag, o.line
            ),
            &instead,
            vec![o.line],
            None,
            None,
        ));
    }
    if let Some(bad) = &s.invalid_fit_target {
        out.push(finding(
            DEF.code,
            Severity::Warning,
            format!(
                "LLAMA_ARG_FIT_TARGET={} could not be read (line {}): Ollama ignored it and --fit kept its own margin",
                bad.reason.as_deref().unwrap_or(""),
                bad.line
            ),
            "write it in MiB, one value for every GPU or one per GPU separated by commas (LLAMA_ARG_FIT_TARGET=2048 or 2048,1024)",
            vec![bad.line],
            None,
            None,
        ));
    }
}
