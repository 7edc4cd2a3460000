//! What was observed of a load beside its log, as an input of the reconcile stage: the captures pasted into
//! its log, the `--smi` capture files, and what the machine showed at the moment the load completed (a live
//! `--capture`, Ollama's `/api/ps`). The pipeline gathers them before it reconciles the load, so a
//! [`crate::model::Reconciled`] is built whole and never patched afterwards.

use std::borrow::Cow;

use crate::model::Snapshot;

/// The captures pasted into the load's own input; which of them belong to the load is chosen by its lines
/// ([`super::observed::pick_in_log`]).
#[derive(Debug, Clone, Copy)]
pub struct Pasted<'a> {
    /// The input they were read from.
    pub path: &'a str,
    /// Every capture of the input read so far, in input order.
    pub snapshots: &'a [Snapshot],
    /// The first line of the next load of the same input, if one was read.
    pub next_first: Option<u64>,
}

/// A series of captures with no link to log lines: a `--smi` file, or the capture `--capture` took when the
/// load completed ([`super::observed::pick_in_series`] chooses among them).
#[derive(Debug, Clone)]
pub struct Series<'a> {
    /// Where it came from, as the report names it.
    pub path: String,
    pub snapshots: Cow<'a, [Snapshot]>,
    /// Said on the load when the series is joined to it (how they were paired).
    pub note: Option<String>,
}

/// One model `/api/ps` listed, in the figures of Ollama's API documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PsModel {
    pub name: String,
    pub size: i64,
    pub size_vram: i64,
    pub context_length: Option<i64>,
}

/// What Ollama's `GET /api/ps` listed when the load completed (`--ollama`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PsListing {
    /// The server asked.
    pub url: String,
    pub models: Vec<PsModel>,
}

/// What the machine showed at the moment the load completed (`--follow`'s `--capture` and `--ollama`).
#[derive(Debug, Clone, Default)]
pub struct Moment {
    pub capture: Option<Series<'static>>,
    pub ps: Option<PsListing>,
}

/// Everything observed of one load beside its log. Captures apply in this order — pasted, then the `--smi`
/// files, then the live capture —, each one that holds a GPU replacing the rows of the one before while every
/// note stays.
#[derive(Debug, Clone, Default)]
pub struct Observations<'a> {
    pub pasted: Option<Pasted<'a>>,
    /// The `--smi` files, for the last load read.
    pub files: Vec<Series<'a>>,
    pub moment: Moment,
}
