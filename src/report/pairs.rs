//! The pairs of loads (issue 53, `crate::pairs`) as blocks of the main report: for each pair, the settings
//! that changed, a table of each figure as the first load logged it, as the replay predicted it at the second
//! load's settings and as the second load measured it, with the error and its range, and the settings the
//! replay could not model named beside the figures they move.

use super::document::Block;
use super::table::{Align, Table};
use super::tables::{delta, q};
use super::Charts;
use crate::model::{LoadPair, PairFigure};

/// How a pair's loads are numbered: in one report, or each in its own run (`vramdiff diff`: the old run's
/// load first, the new run's second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    OneReport,
    TwoRuns,
}

/// The report's blocks for `pairs`; none without a pair. A layout that carries its pictures
/// (`Charts::Embedded`: HTML) gets each pair's chart drawn; the others (Markdown, the terminal) its bars of
/// Unicode blocks (`super::pair_bars`).
pub fn blocks(pairs: &[LoadPair], charts: Charts, numbering: Numbering) -> Vec<Block> {
    let mut out = Vec::new();
    if pairs.is_empty() {
        return out;
    }
    out.push(Block::Heading {
        level: 2,
        text: "Pairs of loads: the next load's settings replayed".to_string(),
    });
    for pair in pairs {
        out.push(Block::Field {
            key: match numbering {
                Numbering::OneReport => format!("Loads {} → {}", pair.first, pair.second),
                Numbering::TwoRuns => {
                    format!("Old load {} → new load {}", pair.first, pair.second)
                }
            },
            value: format!(
                "{}, {}{}",
                pair.model.words(),
                pair.runtime,
                pair.version
                    .as_ref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default()
            ),
        });
        let changed: Vec<String> = pair
            .changed
            .iter()
            .map(|c| {
                if c.modelled {
                    format!("{} {} → {}", c.setting, c.before, c.after)
                } else {
                    format!("{} {} → {} (not modelled)", c.setting, c.before, c.after)
                }
            })
            .collect();
        out.push(Block::Field {
            key: "settings changed".to_string(),
            value: if changed.is_empty() {
                "not in the log".to_string()
            } else {
                changed.join(", ")
            },
        });
        out.push(Block::Table {
            table: table(&pair.figures),
            indent: 2,
        });
        match charts {
            Charts::Linked => {
                let bars = super::pair_bars::lines(pair);
                if !bars.is_empty() {
                    out.push(Block::Fenced(vec![Block::Lines(bars)]));
                }
            }
            Charts::Embedded => match super::chart::pair_chart(pair) {
                Ok(Some(chart)) => out.push(Block::Figures(vec![chart])),
                Ok(None) => {}
                Err(e) => out.push(Block::Notes(vec![format!(
                    "the chart could not be drawn: {e}"
                )])),
            },
        }
        let mut notes: Vec<String> = pair.note.iter().cloned().collect();
        notes.extend(
            pair.changed
                .iter()
                .filter(|c| !c.modelled)
                .map(|c| c.why.clone()),
        );
        // What keeps a figure from a prediction besides a changed setting (Ollama's graph estimate scaled in
        // place of the runner's buffers), once each.
        for f in &pair.figures {
            for why in &f.not_modelled {
                let said = pair.changed.iter().any(|c| c.why.starts_with(why.as_str()))
                    || pair
                        .note
                        .as_deref()
                        .is_some_and(|n| n.starts_with(why.as_str()))
                    || notes.iter().any(|n| n.contains(why.as_str()));
                if !said {
                    notes.push(format!("{}: {why}", f.component));
                }
            }
        }
        notes.extend(pair.suggestions.iter().map(|s| s.text.clone()));
        if !notes.is_empty() {
            out.push(Block::Notes(notes));
        }
        out.push(Block::Gap);
    }
    out.push(Block::End);
    out
}

fn table(figures: &[PairFigure]) -> Table {
    let mut t = Table::new(&[
        ("figure", Align::Left),
        ("device", Align::Left),
        ("first load", Align::Right),
        ("predicted", Align::Right),
        ("measured", Align::Right),
        ("error (range)", Align::Right),
        ("verdict", Align::Left),
    ]);
    for f in figures {
        let count = |v: Option<crate::model::Quantity>| {
            v.map_or("–".to_string(), |v| v.bytes.to_string())
        };
        let layers = f.component == "layers";
        let (before, predicted, measured) = if layers {
            (count(f.before), count(f.predicted), count(f.measured))
        } else {
            (q(f.before), q(f.predicted), q(f.measured))
        };
        let error = match (f.predicted, f.measured) {
            (Some(p), Some(m)) if layers => format!("{:+}", p.bytes - m.bytes),
            (Some(p), Some(m)) => delta(Some(p.minus(m))),
            (Some(_) | None, Some(_) | None) => "–".to_string(),
        };
        t.push(vec![
            f.component.clone(),
            f.device
                .as_ref()
                .map_or("all".to_string(), |d| d.to_string()),
            before,
            predicted,
            measured,
            error,
            f.verdict_words(),
        ]);
    }
    t
}
