//! CLI manners through the real binary: `--color` with `NO_COLOR` and `CLICOLOR_FORCE` as clig.dev describes
//! (colour only when asked for or forced here, since a test's stdout is a pipe), and `-q`.

use std::process::{Command, Stdio};

use crate::util::{root, scratch};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";

fn report(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
    command
        .args(["--fail-on", "never"])
        .args(args)
        .arg(FOUNDING)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn colour_only_when_asked_or_forced_and_the_plain_text_is_the_golden() {
    let golden =
        std::fs::read_to_string(root().join("reports/founding-k80-gemma3-12b.log.txt")).unwrap();
    let (piped, _) = report(&[], &[]);
    assert!(!piped.contains('\x1b'), "a pipe gets no colour");
    let (always, _) = report(&["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(
        always.contains("  \x1b[33mwarning\x1b[0m needless-split:"),
        "{always}"
    );
    assert!(
        always.contains("\x1b[33mover (estimate larger)\x1b[0m"),
        "{always}"
    );
    let stripped = always
        .replace("\x1b[33m", "")
        .replace("\x1b[34m", "")
        .replace("\x1b[32m", "")
        .replace("\x1b[0m", "");
    // Painting only wraps the report's words: without the codes it is the plain report.
    let (plain, _) = report(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(stripped, plain);
    // `--color never` beats the environment and gives the golden report byte for byte.
    let smi = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt";
    let (never, _) = report(
        &["--color", "never", "--smi", smi],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert_eq!(never, golden);
    let (forced, _) = report(&[], &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(forced, always);
    let (off, _) = report(&[], &[("CLICOLOR_FORCE", "0")]);
    assert!(!off.contains('\x1b'));
    let (json, _) = report(&["--format", "json", "--color", "always"], &[]);
    assert!(
        !json.contains('\x1b'),
        "only the terminal's layout is painted"
    );
}

#[test]
fn quiet_keeps_stderr_empty_unless_the_command_fails() {
    let dir = scratch("manners-quiet");
    let charts = dir.join("charts").display().to_string();
    let (_, said) = report(&["--chart", &charts], &[]);
    assert!(said.contains("wrote "), "{said}");
    let (_, quiet) = report(&["--chart", &charts, "-q"], &[]);
    assert_eq!(quiet, "");
    let out = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
        .args(["-q", "no-such-file.log"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.is_empty(), "a failure is still said");
    let _ = std::fs::remove_dir_all(&dir);
}
