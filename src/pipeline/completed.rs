//! The loads between the assembler and the sink, and what was observed of each: a completed load waits here
//! for the captures pasted after it, then its observations are gathered (the pasted captures, the `--smi`
//! files, what the sink sees at that moment) and it is reconciled with them and concluded.

use std::borrow::Cow;

use crate::checks::CheckConfig;
use crate::load::model_file::{self, LastRead, ModelFiles};
use crate::model::{InputSummary, Load, Snapshot};
use crate::reconcile::observations::{Pasted, Series};
use crate::reconcile::observed::pick_in_series;
use crate::reconcile::{reconcile, Observations};
use crate::replay::Asked;

use super::{conclude, no_load_for_capture, LoadSink};

/// The loads between the assembler and the sink. A completed load is held until the next one completes, the
/// input ends or a followed input goes quiet, so that a capture pasted after it (before the next load's
/// start) is still among its observations. At most one load is held; none is kept once handed to the sink.
pub(super) struct Completed<'s, S: LoadSink + ?Sized> {
    pub(super) held: Option<Load>,
    /// The model files (`--gguf`, the blob the log names) whose layout is attached to each load.
    pub(super) model_files: &'s ModelFiles,
    pub(super) model_file_read: &'s mut LastRead,
    /// What reading a model file said, by the load's first line; moved onto the summary as the input is read.
    pub(super) model_warnings: Vec<(u64, String)>,
    /// Loads handed out so far, the held one included.
    pub(super) seen: usize,
    pub(super) config: CheckConfig,
    pub(super) whatif: Option<&'s Asked>,
    pub(super) sink: &'s mut S,
}

impl<S: LoadSink + ?Sized> Completed<'_, S> {
    /// The assembler completed `load`: the one held before it can go.
    pub(super) fn push(&mut self, mut load: Load, captures: &[Snapshot], name: &str) {
        let last = &mut *self.model_file_read;
        let warning = model_file::attach(&mut load, self.model_files, |path| {
            last.read(path, |p| {
                crate::gguf::read_layout(p).map_err(|e| e.to_string())
            })
        });
        if let Some(w) = warning {
            self.model_warnings.push((load.source.first_line, w));
        }
        self.seen += 1;
        if let Some(previous) = self.held.take() {
            self.conclude(
                previous,
                captures,
                name,
                Some(load.source.first_line),
                &mut [],
            );
        }
        self.held = Some(load);
    }

    /// Hand out the held load; `capture_files` (the `--smi` files) are applied to it when it is the last.
    pub(super) fn flush(
        &mut self,
        captures: &[Snapshot],
        name: &str,
        capture_files: &mut [InputSummary],
    ) {
        if let Some(load) = self.held.take() {
            self.conclude(load, captures, name, None, capture_files);
        }
    }

    /// Gather what was observed of the load (the captures pasted around it, `capture_files`, what the sink sees
    /// now), reconcile it with them and carry it through the last stages to the sink.
    fn conclude(
        &mut self,
        load: Load,
        captures: &[Snapshot],
        name: &str,
        next_first: Option<u64>,
        capture_files: &mut [InputSummary],
    ) {
        let several = self.seen > 1;
        let observations = Observations {
            pasted: Some(Pasted {
                path: name,
                snapshots: captures,
                next_first,
            }),
            files: capture_files
                .iter()
                .filter(|f| !f.captures.is_empty())
                .map(|file| Series {
                    path: file.path.clone(),
                    snapshots: Cow::Borrowed(&file.captures[..]),
                    note: several.then(|| {
                        format!(
                            "{} capture {} applied to this load, the last one read: a capture file carries no link to log lines",
                            file.captures[0].format.tool(),
                            file.path
                        )
                    }),
                })
                .collect(),
            moment: self.sink.observe(&load),
        };
        let load = reconcile(load, &observations);
        for file in capture_files.iter_mut() {
            if !file.captures.is_empty() && pick_in_series(&file.captures).is_none() {
                no_load_for_capture(file);
            }
        }
        self.sink
            .concluded(conclude(load, &self.config, self.whatif));
    }
}
