//! Building [`FitLine`]s: the lines llama.cpp's `--fit` prints while it places layers (§5.4–§5.5 of
//! `docs/log-formats.md`). Every figure there is whole MiB, truncated.

use super::build::{need, opt_int, opt_text, BuildError};
use super::event::FitLine;
use super::matcher::Fields;
use super::values::{parse_int, parse_mib_truncated};
use crate::model::{Device, Quantity};

fn mib(fields: &Fields, name: &str) -> Result<Quantity, BuildError> {
    let text = need(fields, name)?;
    parse_mib_truncated(text).ok_or_else(|| format!("field '{name}' is not a MiB figure: '{text}'"))
}

fn opt_mib(fields: &Fields, name: &str) -> Option<Quantity> {
    fields.get(name).and_then(parse_mib_truncated)
}

fn int(fields: &Fields, name: &str) -> Result<i64, BuildError> {
    let text = need(fields, name)?;
    parse_int(text).ok_or_else(|| format!("field '{name}' is not a whole number: '{text}'"))
}

/// The fit line a grammar event names (`fit_start`, `fit_projection`, …).
pub fn fit_line(event: &str, fields: &Fields) -> Result<FitLine, BuildError> {
    Ok(match event {
        "fit_start" => FitLine::Start,
        "fit_projection" => FitLine::Projection {
            used: mib(fields, "used")?,
            free: mib(fields, "free")?,
            host: fields.get("scope") == Some("host"),
        },
        "fit_initial" => FitLine::Initial {
            device: Device::named(need(fields, "device")?.trim()),
            name: opt_text(fields, "name"),
            total: opt_mib(fields, "total"),
            used: mib(fields, "used")?,
            free: mib(fields, "free")?,
            target: opt_mib(fields, "target"),
        },
        "fit_decision" => FitLine::Decision {
            change: need(fields, "change")? == "true",
            target: opt_mib(fields, "target"),
            amount: opt_mib(fields, "amount"),
        },
        // `context size set by user to N -> no change` has no `from`; `reduced from A to B` has.
        "fit_context" => FitLine::Context {
            from: opt_int(fields, "from"),
            to: int(fields, "to")?,
            by_user: fields.get("from").is_none(),
        },
        "fit_target" => FitLine::Target {
            id: int(fields, "id")?,
            target: mib(fields, "target")?,
        },
        "fit_probe" => FitLine::Probe {
            id: int(fields, "id")?,
            layers: int(fields, "layers")?,
            partial: opt_int(fields, "partial"),
            mem: mib(fields, "mem")?,
        },
        "fit_set" => FitLine::Set {
            id: int(fields, "id")?,
            layers: int(fields, "layers")?,
            high: fields.get("high").is_some_and(|h| !h.is_empty()),
        },
        "fit_device" => FitLine::Result {
            device: Device::named(need(fields, "device")?.trim()),
            name: opt_text(fields, "name"),
            layers: opt_int(fields, "layers"),
            used: mib(fields, "used")?,
            free: opt_mib(fields, "free"),
        },
        "fit_done" => FitLine::Done {
            seconds: fields
                .get("seconds")
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite()),
        },
        other => return Err(format!("unknown fit event '{other}'")),
    })
}
