//! The chart of a pair of loads (issue 53, `crate::pairs`): per figure, the first load's size, the replay's
//! prediction at the second load's settings and what the second load measured, as grouped bars, the prediction
//! and the measurement each with the rounding of its figures as a whisker, and the verdict above.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{gib, ACTUAL, ESTIMATED, FONT, OTHER};
use super::{draw_legend, gib_axes, ChartError};
use crate::model::{human, LoadPair, PairFigure, Quantity};

fn whisker(x: f64, q: &Quantity) -> PathElement<(f64, f64)> {
    PathElement::new(
        vec![(x, gib(q.low)), (x, gib(q.high))],
        BLACK.stroke_width(2),
    )
}

/// Whether the pair has a figure to draw.
pub fn has_figures(pair: &LoadPair) -> bool {
    !pair.figures_in_bytes().is_empty()
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    pair: &LoadPair,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let rows = pair.figures_in_bytes();
    let top = rows
        .iter()
        .flat_map(|f| [f.before, f.predicted, f.measured])
        .flatten()
        .map(|q| q.high)
        .max()
        .unwrap_or(1 << 30);
    let y_max = gib(top) * 1.25 + 0.001;
    let n = rows.len().max(1) as f64;
    let mut chart = gib_axes(root, title, n, y_max, 40)?;
    let bar = |i: usize, slot: f64, q: &Quantity, color: RGBColor| {
        let x0 = i as f64 + 0.08 + slot * 0.28;
        Rectangle::new([(x0, 0.0), (x0 + 0.26, gib(q.bytes))], color.filled())
    };
    for (slot, label, color, pick) in [
        (
            0.0,
            "first load",
            OTHER,
            (|f: &PairFigure| f.before) as fn(&PairFigure) -> Option<Quantity>,
        ),
        (
            1.0,
            "predicted at the second load's settings (whisker: rounding)",
            ESTIMATED,
            |f: &PairFigure| f.predicted,
        ),
        (
            2.0,
            "measured by the second load (whisker: rounding)",
            ACTUAL,
            |f: &PairFigure| f.measured,
        ),
    ] {
        let bars: Vec<(usize, Quantity)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| pick(f).map(|q| (i, q)))
            .collect();
        let series = chart
            .draw_series(bars.iter().map(|(i, q)| bar(*i, slot, q, color)))
            .map_err(ChartError::draw)?;
        if !bars.is_empty() {
            series.label(label).legend(move |(x, y)| {
                Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
            });
        }
        if slot > 0.0 {
            chart
                .draw_series(
                    bars.iter()
                        .map(|(i, q)| whisker(*i as f64 + 0.21 + slot * 0.28, q)),
                )
                .map_err(ChartError::draw)?;
        }
    }
    let label_style =
        TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (i, f) in rows.iter().enumerate() {
        let height = [f.before, f.predicted, f.measured]
            .iter()
            .flatten()
            .map(|q| q.high)
            .max()
            .unwrap_or(0);
        let words = match f.error {
            Some(e) if e > 0 => format!("+{} {}", human(e), f.verdict_words()),
            Some(e) => format!("{} {}", human(e), f.verdict_words()),
            None => f.verdict_words(),
        };
        chart
            .draw_series(std::iter::once(Text::new(
                words,
                (i as f64 + 0.5, gib(height) + y_max * 0.02),
                label_style.clone(),
            )))
            .map_err(ChartError::draw)?;
    }
    let name_style = TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, f) in rows.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let name = match &f.device {
            Some(d) => format!("{} {d}", f.component),
            None => format!("{} (all)", f.component),
        };
        root.draw(&Text::new(name, (px, py + 8), name_style.clone()))
            .map_err(ChartError::draw)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 14)
}
