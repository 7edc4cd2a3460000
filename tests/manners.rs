//! CLI manners through the real binary: `--color` with `NO_COLOR` and `CLICOLOR_FORCE` as clig.dev describes
//! (colour only when asked for or forced here, since a test's stdout is a pipe), and `-q`, on every command;
//! the config file (`$XDG_CONFIG_HOME/vramdiff/config.toml`, `~/.config/…`, `$VRAMDIFF_CONFIG`) with each
//! level of flags > environment > file proven, and its mistakes named by file, line and key.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{root, scratch};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";

/// The real binary in the repository, with none of the settings a developer's shell may hold: no colour
/// variables, no `VRAMDIFF_*` defaults, and a config home of its own (`config`: an empty folder unless a test
/// writes a file there).
fn vramdiff(args: &[&str], env: &[(&str, &str)], config: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
    command
        .args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("VRAMDIFF_CONFIG")
        .env_remove("VRAMDIFF_FAIL_ON")
        .env_remove("VRAMDIFF_FORMAT")
        .env_remove("VRAMDIFF_OVER_PERCENT")
        .env_remove("VRAMDIFF_OVER_MIN")
        .env_remove("VRAMDIFF_UNATTRIBUTED_MIN")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("XDG_CONFIG_HOME", config)
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn report(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let config = scratch("manners-no-config");
    let mut all = vec!["--fail-on", "never"];
    all.extend_from_slice(args);
    all.push(FOUNDING);
    let out = vramdiff(&all, env, &config);
    let _ = std::fs::remove_dir_all(&config);
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

/// A config home with `vramdiff/config.toml` holding `text`.
fn config_home(tag: &str, text: &str) -> PathBuf {
    let dir = scratch(&format!("manners-config-{tag}"));
    std::fs::create_dir_all(dir.join("vramdiff")).unwrap();
    std::fs::write(dir.join("vramdiff").join("config.toml"), text).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The finding codes of the founding case's JSON report run with `args`.
fn codes(args: &[&str], env: &[(&str, &str)], config: &Path) -> Vec<String> {
    let mut all = vec!["--format", "json", "--fail-on", "never"];
    all.extend_from_slice(args);
    all.push(FOUNDING);
    let out = vramdiff(&all, env, config);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["loads"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// `fail-on`: the founding case's worst finding is a warning, so the built-in `error` exits 0; the file's
/// `warning` exits 1; `VRAMDIFF_FAIL_ON=never` beats the file; `--fail-on warning` beats the environment.
#[test]
fn config_fail_on_flag_beats_environment_beats_file() {
    let none = scratch("manners-config-none");
    assert_eq!(vramdiff(&[FOUNDING], &[], &none).status.code(), Some(0));
    let home = config_home("fail-on", "# CI: fail on warnings\nfail-on = \"warning\"\n");
    let file = vramdiff(&[FOUNDING], &[], &home);
    assert_eq!(file.status.code(), Some(1), "{}", text(&file.stderr));
    let env = [("VRAMDIFF_FAIL_ON", "never")];
    assert_eq!(vramdiff(&[FOUNDING], &env, &home).status.code(), Some(0));
    let flag = vramdiff(&["--fail-on", "warning", FOUNDING], &env, &home);
    assert_eq!(flag.status.code(), Some(1));
    // The file's fail-on reaches every command that has the flag: doctor's own default is never.
    let doctor = vramdiff(
        &["doctor", "--no-ollama", "--capture", "none", FOUNDING],
        &[],
        &home,
    );
    assert_eq!(doctor.status.code(), Some(1), "{}", text(&doctor.stderr));
    let _ = std::fs::remove_dir_all(&none);
    let _ = std::fs::remove_dir_all(&home);
}

/// The thresholds: the founding case's graph (3.60 GiB estimated, 1.18 GiB allocated) is an `overestimate`
/// at the built-in 10 % and 256 MiB; a file's `over-percent = 1000` or `over-min = "100GiB"` silences it, the
/// environment's built-in values bring it back, and the flag beats the environment again.
#[test]
fn config_thresholds_flag_beats_environment_beats_file() {
    let none = scratch("manners-thresholds-none");
    assert!(codes(&[], &[], &none).contains(&"overestimate".to_string()));
    let home = config_home("percent", "over-percent = 1000\n");
    assert!(!codes(&[], &[], &home).contains(&"overestimate".to_string()));
    let env = [("VRAMDIFF_OVER_PERCENT", "10")];
    assert!(codes(&[], &env, &home).contains(&"overestimate".to_string()));
    assert!(!codes(&["--over-percent", "1000"], &env, &home).contains(&"overestimate".to_string()));
    let sized = config_home(
        "min",
        "over-min = \"100GiB\"\nunattributed-min = \"2GiB\"\n",
    );
    assert!(!codes(&[], &[], &sized).contains(&"overestimate".to_string()));
    let env = [("VRAMDIFF_OVER_MIN", "256MiB")];
    assert!(codes(&[], &env, &sized).contains(&"overestimate".to_string()));
    assert!(!codes(&["--over-min", "100GiB"], &env, &sized).contains(&"overestimate".to_string()));
    for dir in [none, home, sized] {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `color` and `format` from the file, each beaten by the environment (`NO_COLOR`, `VRAMDIFF_FORMAT`), each
/// beaten by the flag.
#[test]
fn config_color_and_format_flag_beats_environment_beats_file() {
    let home = config_home(
        "color",
        "color = \"always\"\nformat = \"json\"\nfail-on = \"never\"\n",
    );
    let out = vramdiff(&["--format", "text", FOUNDING], &[], &home);
    assert!(
        text(&out.stdout).contains("\x1b[33mwarning\x1b[0m"),
        "the file's colour on a pipe"
    );
    let out = vramdiff(&["--format", "text", FOUNDING], &[("NO_COLOR", "1")], &home);
    assert!(
        !text(&out.stdout).contains('\x1b'),
        "NO_COLOR beats the file"
    );
    let out = vramdiff(
        &["--format", "text", "--color", "always", FOUNDING],
        &[("NO_COLOR", "1")],
        &home,
    );
    assert!(
        text(&out.stdout).contains("\x1b[33mwarning\x1b[0m"),
        "the flag beats NO_COLOR"
    );

    let out = vramdiff(&[FOUNDING], &[], &home);
    assert!(text(&out.stdout).starts_with("{\n"), "the file's format");
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap();
    let env = [("VRAMDIFF_FORMAT", "markdown")];
    let out = vramdiff(&[FOUNDING], &env, &home);
    assert!(
        text(&out.stdout).starts_with("# vramdiff report\n"),
        "{}",
        text(&out.stdout)
    );
    let out = vramdiff(&["--format", "text", FOUNDING], &env, &home);
    assert!(text(&out.stdout).starts_with("Load 1: "));
    let _ = std::fs::remove_dir_all(&home);
}

/// Where the file is looked for: `$VRAMDIFF_CONFIG`, else an absolute `$XDG_CONFIG_HOME`, else
/// `~/.config`.
#[test]
fn config_file_places_in_order() {
    let dir = scratch("manners-config-places");
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".config").join("vramdiff")).unwrap();
    std::fs::write(
        home.join(".config").join("vramdiff").join("config.toml"),
        "fail-on = \"warning\"\n",
    )
    .unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
        command
            .arg(FOUNDING)
            .current_dir(root())
            .env_clear()
            .env("HOME", &home)
            .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
            .stdin(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    };
    // ~/.config/vramdiff/config.toml when XDG_CONFIG_HOME is unset, or relative (the spec ignores it).
    assert_eq!(run(&[]).status.code(), Some(1));
    assert_eq!(
        run(&[("XDG_CONFIG_HOME", "relative")]).status.code(),
        Some(1)
    );
    // An absolute XDG_CONFIG_HOME without a vramdiff folder: no config at all.
    let empty = dir.join("xdg");
    std::fs::create_dir_all(&empty).unwrap();
    let xdg = empty.display().to_string();
    assert_eq!(run(&[("XDG_CONFIG_HOME", &xdg)]).status.code(), Some(0));
    // $VRAMDIFF_CONFIG names the file, wherever it is.
    let named = dir.join("ci.toml");
    std::fs::write(&named, "fail-on = \"info\"\n").unwrap();
    let named = named.display().to_string();
    let out = run(&[("XDG_CONFIG_HOME", &xdg), ("VRAMDIFF_CONFIG", &named)]);
    assert_eq!(out.status.code(), Some(1));
    // A named file that is not there is an error, not a silent default.
    let missing = dir.join("missing.toml").display().to_string();
    let out = run(&[("VRAMDIFF_CONFIG", &missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "{missing}: cannot read the config file ($VRAMDIFF_CONFIG)"
        )),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A mistake in the file is said with the file, the line and the key, exit 2, for every command that reads
/// it; `completions` and `man`, which read none, still run.
#[test]
fn config_mistakes_name_file_line_and_key() {
    let file = |home: &Path| {
        home.join("vramdiff")
            .join("config.toml")
            .display()
            .to_string()
    };
    for (tag, body, said) in [
        (
            "value",
            "fail-on = \"warning\"\n# sizes as the flags take them\nover-min = \"12 parsecs\"\n",
            ":3: over-min: ",
        ),
        (
            "key",
            "fail-on = \"warning\"\nfail_on = \"error\"\n",
            ":2: unknown key `fail_on` (known keys: color, fail-on, format, over-min, over-percent, unattributed-min)",
        ),
        ("choice", "\n\ncolor = \"sometimes\"\n", ":3: color: 'sometimes' is not one of auto, always, never"),
        ("type", "over-percent = \"ten\"\n", ":1: over-percent: a whole number is expected, not a string"),
        ("table", "[doctor]\nfail-on = \"info\"\n", ":1: unknown table [doctor]"),
        ("syntax", "fail-on = \"warning\"\nover-percent = = 3\n", ":2: not valid TOML: "),
    ] {
        let home = config_home(tag, body);
        for args in [
            vec![FOUNDING],
            vec!["whatif", FOUNDING],
            vec!["doctor", "--no-ollama", FOUNDING],
            vec!["diff", FOUNDING, FOUNDING],
        ] {
            let out = vramdiff(&args, &[], &home);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{tag} {args:?}: {err}");
            assert!(
                err.starts_with(&format!("vramdiff: {}{said}", file(&home))),
                "{tag} {args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
            assert!(out.stdout.is_empty());
        }
        let out = vramdiff(&["completions", "bash"], &[], &home);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let _ = std::fs::remove_dir_all(&home);
    }
}

/// `--color` and `-q` on every command: whatif's verdicts and diff's regressions painted; the notes each
/// command writes on stderr (a step summary that cannot be written, batch's count, follow's missing monitor)
/// silenced by `-q`, the report kept.
#[test]
fn color_and_quiet_on_every_command() {
    let config = scratch("manners-every-command");
    // A folder is not a file to append to: the step summary's warning is a note on stderr.
    let summary = config.display().to_string();
    let noted = [("GITHUB_STEP_SUMMARY", summary.as_str())];

    let whatif = ["whatif", FOUNDING, "--gpu-count", "1", "--summary"];
    let out = vramdiff(
        &[&whatif[..], &["--color", "always"]].concat(),
        &noted,
        &config,
    );
    let report = text(&out.stdout);
    assert!(
        report.contains("figures: \x1b[32mfits on 1 GPU\x1b[0m"),
        "{report}"
    );
    assert!(
        report.contains("\x1b[33m2.55 GiB left to the CPU\x1b[0m"),
        "{report}"
    );
    assert!(text(&out.stderr).contains("cannot append the summary"));
    let quiet = vramdiff(&[&whatif[..], &["-q"]].concat(), &noted, &config);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stderr), "");
    assert!(!text(&quiet.stdout).contains('\x1b'), "a pipe is plain");
    assert_eq!(
        text(&quiet.stdout),
        text(&out.stdout)
            .replace("\x1b[32m", "")
            .replace("\x1b[33m", "")
            .replace("\x1b[0m", "")
    );

    let grown = "tests/fixtures/founding-k80-gemma3-12b-cuda1-weights-plus-1gib.log";
    let diff = ["diff", FOUNDING, grown, "--summary"];
    let out = vramdiff(
        &[&diff[..], &["--color", "always"]].concat(),
        &noted,
        &config,
    );
    assert!(
        text(&out.stdout).contains("\x1b[1;31mREGRESSION\x1b[0m CUDA1"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("cannot append the summary"));
    let quiet = vramdiff(
        &[&diff[..], &["--quiet", "--color", "never"]].concat(),
        &noted,
        &config,
    );
    assert_eq!(text(&quiet.stderr), "");
    assert!(text(&quiet.stdout).contains("REGRESSION CUDA1"));

    let out = vramdiff(&["batch", FOUNDING, "--color", "always"], &[], &config);
    assert!(
        text(&out.stderr).contains("1 files (0 skipped: unreadable), 1 loads"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains('\x1b'),
        "the batch's Markdown summary is not painted"
    );
    let quiet = vramdiff(&["batch", "-q", FOUNDING], &[], &config);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stderr), "");
    assert_eq!(quiet.stdout, out.stdout);

    let model = "tests/data/gguf/llama-tiny.gguf";
    let out = vramdiff(&["inspect", model, "-q", "--color", "always"], &[], &config);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let plain = vramdiff(&["inspect", model], &[], &config);
    assert_eq!(
        out.stdout, plain.stdout,
        "nothing in a model file's table is a verdict"
    );

    // --follow on standard input: the monitor asked for is not on PATH, which is said once (and not with -q);
    // each load's text report painted as it is written.
    let empty_path = config.join("bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let follow = |extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
        command
            .args(["-f", "--capture", "nvidia-smi", "--fail-on", "never"])
            .args(extra)
            .current_dir(root())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env("XDG_CONFIG_HOME", &config)
            .env("PATH", &empty_path)
            .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
            .stdin(std::fs::File::open(root().join(FOUNDING)).unwrap());
        command.output().unwrap()
    };
    let out = follow(&["--color", "always"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("  \x1b[33mwarning\x1b[0m needless-split:"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("--capture nvidia-smi: not found on PATH"),
        "{}",
        text(&out.stderr)
    );
    let quiet = follow(&["-q"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stderr), "");
    assert!(text(&quiet.stdout).contains("  warning needless-split:"));
    let _ = std::fs::remove_dir_all(&config);
}
