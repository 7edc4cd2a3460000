//! The event kinds of the lines llama.cpp's `--fit` prints while it places layers
//! (`grammars/50-llama-server.toml`, the `fit.*` rules; `docs/log-formats.md` §5.4–§5.5): one kind per line
//! shape, each built into a [`FitLine`]. Every figure there is whole MiB, truncated.

use super::event::{EventKind, FitLine};
use super::fields::BuildError;
use super::kind::{EventSpec, Words};
use crate::model::{Device, FitStopCause};

/// Why the fit stopped, from the reason it printed (`n_gpu_layers already set by user to 999999, abort`),
/// with the value the user set when the reason prints one.
pub fn stop_cause(reason: &str) -> (FitStopCause, Option<i64>) {
    let by_user = reason.contains("already set by user");
    let cause = if reason.contains("SPLIT_MODE_TENSOR") {
        FitStopCause::SplitModeTensor
    } else if by_user && reason.contains("n_gpu_layers") {
        FitStopCause::GpuLayersSetByUser
    } else if by_user && reason.contains("tensor_split") {
        FitStopCause::TensorSplitSetByUser
    } else if by_user && reason.contains("overrides") {
        FitStopCause::OverridesSetByUser
    } else {
        FitStopCause::Error
    };
    let value = reason
        .split_once(" to ")
        .and_then(|(_, rest)| {
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse::<i64>().ok()
        })
        .filter(|_| cause == FitStopCause::GpuLayersSetByUser);
    (cause, value)
}

/// A fit line as the event it is.
fn fit(line: FitLine) -> Result<EventKind, BuildError> {
    Ok(EventKind::Fit(Box::new(line)))
}

pub const SPECS: &[EventSpec] = &[
    EventSpec {
        kind: "fit_start",
        required: &[],
        optional: &[],
        settable: &[],
        build: |_| fit(FitLine::Start),
    },
    EventSpec {
        kind: "fit_projection",
        required: &["used", "free"],
        optional: &["scope"],
        settable: &[],
        build: |f| {
            fit(FitLine::Projection {
                used: f.mib("used")?,
                free: f.mib("free")?,
                host: f.get("scope") == Some("host"),
            })
        },
    },
    EventSpec {
        kind: "fit_initial",
        required: &["device", "used", "free"],
        optional: &["name", "total", "target"],
        settable: &[],
        build: |f| {
            fit(FitLine::Initial {
                device: Device::named(f.need("device")?.trim()),
                name: f.opt_text("name"),
                total: f.opt_mib("total"),
                used: f.mib("used")?,
                free: f.mib("free")?,
                target: f.opt_mib("target"),
            })
        },
    },
    EventSpec {
        kind: "fit_decision",
        required: &["change"],
        optional: &["target", "amount"],
        settable: &[("change", Words::BOOL)],
        build: |f| {
            fit(FitLine::Decision {
                change: f.need("change")? == "true",
                target: f.opt_mib("target"),
                amount: f.opt_mib("amount"),
            })
        },
    },
    EventSpec {
        kind: "fit_context",
        required: &["to"],
        optional: &["from", "less"],
        settable: &[],
        // `context size set by user to N -> no change` has no `from`; `reduced from A to B` has.
        build: |f| {
            fit(FitLine::Context {
                from: f.opt_int("from"),
                less: f.opt_mib("less"),
                to: f.int("to")?,
                by_user: f.get("from").is_none(),
            })
        },
    },
    EventSpec {
        kind: "fit_target",
        required: &["id", "target"],
        optional: &[],
        settable: &[],
        build: |f| {
            fit(FitLine::Target {
                id: f.int("id")?,
                target: f.mib("target")?,
            })
        },
    },
    EventSpec {
        kind: "fit_probe",
        required: &["id", "layers", "mem"],
        optional: &["partial"],
        settable: &[],
        build: |f| {
            fit(FitLine::Probe {
                id: f.int("id")?,
                layers: f.int("layers")?,
                partial: f.opt_int("partial"),
                mem: f.mib("mem")?,
            })
        },
    },
    EventSpec {
        kind: "fit_set",
        required: &["id", "layers"],
        optional: &["high"],
        settable: &[],
        build: |f| {
            fit(FitLine::Set {
                id: f.int("id")?,
                layers: f.int("layers")?,
                high: f.get("high").is_some_and(|h| !h.is_empty()),
            })
        },
    },
    EventSpec {
        kind: "fit_device",
        required: &["device", "used"],
        optional: &["name", "layers", "free", "overflowing"],
        settable: &[],
        build: |f| {
            fit(FitLine::Result {
                device: Device::named(f.need("device")?.trim()),
                name: f.opt_text("name"),
                layers: f.opt_int("layers"),
                used: f.mib("used")?,
                free: f.opt_mib("free"),
                overflowing: f.opt_int("overflowing"),
            })
        },
    },
    EventSpec {
        kind: "fit_stopped",
        required: &["reason"],
        optional: &[],
        settable: &[],
        build: |f| {
            let (cause, value) = stop_cause(f.need("reason")?);
            fit(FitLine::Stopped { cause, value })
        },
    },
    EventSpec {
        kind: "fit_done",
        required: &[],
        optional: &["seconds"],
        settable: &[],
        build: |f| {
            fit(FitLine::Done {
                seconds: f
                    .get("seconds")
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite()),
            })
        },
    },
];
