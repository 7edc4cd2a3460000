//! The optional config file: defaults for the flags a user sets once for every run (the checks' thresholds,
//! `--fail-on`, `--color`, `--format`), so a CI job or a shell does not repeat them. It is the lowest level of
//! three: a flag beats its environment variable (clap reads both, `crate::cli`), which beats the file, which
//! beats the built-in default ([`super::resolve`] applies the order).
//!
//! Where: `$VRAMDIFF_CONFIG` when set (then it must exist), else `$XDG_CONFIG_HOME/vramdiff/config.toml`
//! (an absolute `XDG_CONFIG_HOME`, as the XDG base directory specification requires), else
//! `~/.config/vramdiff/config.toml`; none there is no config. The keys are the flags' long names. A file the
//! user wrote is checked whole before any command runs: an unknown key, a table, or a bad value is an error
//! that names the file, the line and the key (exit 2), never a silent default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use toml::Spanned;

use crate::cli::{parse_size_arg, ColorArg, FormatArg, SeverityArg};

/// The keys a config file may hold, as the flags are named.
pub const KEYS: [&str; 6] = [
    "color",
    "fail-on",
    "format",
    "over-min",
    "over-percent",
    "unattributed-min",
];

/// What the config file sets (all `None` without a file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The file read, when there was one.
    pub path: Option<PathBuf>,
    pub color: Option<ColorArg>,
    pub fail_on: Option<SeverityArg>,
    pub format: Option<FormatArg>,
    pub over_min: Option<i64>,
    pub over_percent: Option<i64>,
    pub unattributed_min: Option<i64>,
}

/// The config file this environment names, read and checked; `Ok(Config::default())` when there is none.
pub fn load() -> Result<Config, String> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(named) = var("VRAMDIFF_CONFIG") {
        let path = PathBuf::from(named);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: cannot read the config file ($VRAMDIFF_CONFIG): {e}",
                path.display()
            )
        })?;
        return parse(&path, &text);
    }
    let dir = match var("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => Some(dir),
        _ => var("HOME").map(|home| PathBuf::from(home).join(".config")),
    };
    let Some(path) = dir.map(|d| d.join("vramdiff").join("config.toml")) else {
        return Ok(Config::default());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(format!(
            "{}: cannot read the config file: {e}",
            path.display()
        )),
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// `text`, the file at `path`, checked key by key.
pub fn parse(path: &Path, text: &str) -> Result<Config, String> {
    let shown = path.display();
    let table: BTreeMap<Spanned<String>, Spanned<toml::Value>> =
        toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => format!(
                "{shown}:{}: not valid TOML: {}",
                line_of(text, span.start),
                e.message().trim()
            ),
            None => format!("{shown}: not valid TOML: {}", e.message().trim()),
        })?;
    let mut config = Config {
        path: Some(path.to_path_buf()),
        ..Config::default()
    };
    // In the file's order, so the first error said is the first in the file.
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    for (key, value) in entries {
        let line = line_of(text, key.span().start);
        let name = key.get_ref().as_str();
        let bad = |why: String| format!("{shown}:{line}: {name}: {why}");
        let raw = value.get_ref();
        match name {
            "color" => config.color = Some(choice(raw).map_err(bad)?),
            "fail-on" => config.fail_on = Some(choice(raw).map_err(bad)?),
            "format" => config.format = Some(choice(raw).map_err(bad)?),
            "over-percent" => config.over_percent = Some(percent(raw).map_err(bad)?),
            "over-min" => config.over_min = Some(size(raw).map_err(bad)?),
            "unattributed-min" => config.unattributed_min = Some(size(raw).map_err(bad)?),
            _ => {
                let known = KEYS.join(", ");
                return Err(match raw {
                    toml::Value::Table(_) => format!(
                        "{shown}:{line}: unknown table [{name}] (the file holds only these keys, at the top: {known})"
                    ),
                    _ => format!("{shown}:{line}: unknown key `{name}` (known keys: {known})"),
                });
            }
        }
    }
    Ok(config)
}

/// One of a flag's values, as the flag takes it (`"warning"`).
fn choice<T: ValueEnum>(value: &toml::Value) -> Result<T, String> {
    let names = || {
        T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match value {
        toml::Value::String(s) => {
            T::from_str(s, false).map_err(|_| format!("'{s}' is not one of {}", names()))
        }
        other => Err(format!(
            "a string is expected (one of {}), not {}",
            names(),
            kind(other)
        )),
    }
}

/// A percentage: a whole number, 0 or more.
fn percent(value: &toml::Value) -> Result<i64, String> {
    match value {
        toml::Value::Integer(n) if *n >= 0 => Ok(*n),
        toml::Value::Integer(n) => Err(format!("{n} is below 0")),
        other => Err(format!("a whole number is expected, not {}", kind(other))),
    }
}

/// A size as the flags take it: `"256MiB"`, `"1.5 GiB"`, or a byte count.
fn size(value: &toml::Value) -> Result<i64, String> {
    match value {
        toml::Value::String(s) => parse_size_arg(s),
        toml::Value::Integer(n) if *n >= 0 => Ok(*n),
        toml::Value::Integer(n) => Err(format!("{n} is below 0")),
        other => Err(format!(
            "a size is expected (\"256MiB\", \"1.5GiB\" or bytes), not {}",
            kind(other)
        )),
    }
}

fn kind(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Config, String> {
        parse(Path::new("/c/config.toml"), text)
    }

    #[test]
    fn every_key_read_as_its_flag_takes_it() {
        let c = parsed(
            "# thresholds\nover-percent = 25\nover-min = \"512MiB\"\nunattributed-min = 2147483648\nfail-on = \"warning\"\ncolor = \"never\"\nformat = \"markdown\"\n",
        )
        .unwrap();
        assert_eq!(c.over_percent, Some(25));
        assert_eq!(c.over_min, Some(512 << 20));
        assert_eq!(c.unattributed_min, Some(2 << 30));
        assert_eq!(c.fail_on, Some(SeverityArg::Warning));
        assert_eq!(c.color, Some(ColorArg::Never));
        assert_eq!(c.format, Some(FormatArg::Markdown));
        assert_eq!(parsed("").unwrap().fail_on, None);
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        let e = parsed("fail-on = \"error\"\n\nfail_on = \"warning\"\n").unwrap_err();
        assert!(
            e.starts_with("/c/config.toml:3: unknown key `fail_on`"),
            "{e}"
        );
        assert!(e.contains("known keys: color, fail-on"), "{e}");
        let e = parsed("over-percent = 10\nover-min = \"12 parsecs\"\n").unwrap_err();
        assert!(e.starts_with("/c/config.toml:2: over-min: "), "{e}");
        let e = parsed("fail-on = \"loud\"\n").unwrap_err();
        assert_eq!(
            e,
            "/c/config.toml:1: fail-on: 'loud' is not one of info, warning, error, never"
        );
        let e = parsed("over-percent = \"ten\"\n").unwrap_err();
        assert_eq!(
            e,
            "/c/config.toml:1: over-percent: a whole number is expected, not a string"
        );
        let e = parsed("over-percent = -3\n").unwrap_err();
        assert!(e.contains(":1: over-percent: -3 is below 0"), "{e}");
        let e = parsed("color = true\n").unwrap_err();
        assert!(e.contains(":1: color: a string is expected"), "{e}");
        let e = parsed("over-percent = 1\n[report]\nfail-on = \"info\"\n").unwrap_err();
        assert!(
            e.starts_with("/c/config.toml:2: unknown table [report]"),
            "{e}"
        );
        let e = parsed("over-percent = 10\nfail-on = \n").unwrap_err();
        assert!(e.starts_with("/c/config.toml:2: not valid TOML: "), "{e}");
        let e = parsed("a = 1\na = 2\n").unwrap_err();
        assert!(e.starts_with("/c/config.toml:2: not valid TOML: "), "{e}");
    }

    #[test]
    fn bad_bytes_never_panic() {
        for text in [
            "\u{0}",
            "=",
            "[[",
            "over-min = 1e400",
            "x = \"\\u{D800}\"",
            "\"\" = 1",
        ] {
            assert!(parsed(text).is_err(), "{text:?}");
        }
    }
}
