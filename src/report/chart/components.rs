//! The components chart: estimated against actual per component as grouped bars, each with the rounding
//! bounds of its figure as a whisker, and the delta written above the pair.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{gib, ACTUAL, ESTIMATED, FONT};
use super::{draw_legend, gib_axes, ChartError};
use crate::model::{human, Concluded, Quantity, Verdict};

fn whisker(x: f64, q: &Quantity) -> PathElement<(f64, f64)> {
    PathElement::new(
        vec![(x, gib(q.low)), (x, gib(q.high))],
        BLACK.stroke_width(2),
    )
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    load: &Concluded,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let rows: Vec<_> = load
        .reconciled
        .components
        .iter()
        .filter(|c| c.estimated.is_some() || c.actual.is_some())
        .collect();
    let top = rows
        .iter()
        .flat_map(|c| [c.estimated, c.actual])
        .flatten()
        .map(|q| q.high)
        .max()
        .unwrap_or(1 << 30);
    let y_max = gib(top) * 1.2 + 0.05;
    let n = rows.len().max(1) as f64;
    let mut chart = gib_axes(root, title, n, y_max, 40)?;
    let bar = |i: usize, left: bool, q: &Quantity, color: RGBColor| {
        let x0 = i as f64 + if left { 0.12 } else { 0.52 };
        Rectangle::new([(x0, 0.0), (x0 + 0.36, gib(q.bytes))], color.filled())
    };
    let estimated: Vec<_> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.estimated.map(|q| (i, q)))
        .collect();
    let actual: Vec<_> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.actual.map(|q| (i, q)))
        .collect();
    let series = chart
        .draw_series(estimated.iter().map(|(i, q)| bar(*i, true, q, ESTIMATED)))
        .map_err(ChartError::draw)?;
    if !estimated.is_empty() {
        series
            .label("estimated (whisker: rounding of the printed figure)")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], ESTIMATED.filled()));
    }
    let series = chart
        .draw_series(actual.iter().map(|(i, q)| bar(*i, false, q, ACTUAL)))
        .map_err(ChartError::draw)?;
    if !actual.is_empty() {
        series
            .label("actual (runner's buffers)")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], ACTUAL.filled()));
    }
    let missing = if estimated.is_empty() {
        Some("no estimate in the log for this load: actual only")
    } else if actual.is_empty() {
        Some("no allocation lines in the log for this load: estimate only")
    } else {
        None
    };
    if let Some(note) = missing {
        // Upper left: the legend sits upper right.
        let style = TextStyle::from((FONT, 17).into_font()).pos(Pos::new(HPos::Left, VPos::Top));
        chart
            .draw_series(std::iter::once(Text::new(
                note,
                (n * 0.02, y_max * 0.98),
                style,
            )))
            .map_err(ChartError::draw)?;
    }
    chart
        .draw_series(
            estimated
                .iter()
                .map(|(i, q)| whisker(*i as f64 + 0.30, q))
                .chain(actual.iter().map(|(i, q)| whisker(*i as f64 + 0.70, q))),
        )
        .map_err(ChartError::draw)?;
    let label_style =
        TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (i, c) in rows.iter().enumerate() {
        let Some(d) = c.delta else { continue };
        let height = [c.estimated, c.actual]
            .iter()
            .flatten()
            .map(|q| q.high)
            .max()
            .unwrap_or(0);
        let word = match c.verdict {
            Verdict::Match => "within rounding",
            Verdict::Over => "estimate over",
            Verdict::Under => "estimate UNDER",
            Verdict::Unknown => "",
        };
        let sign = if d.bytes > 0 { "+" } else { "" };
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{sign}{} {word}", human(d.bytes)),
                (i as f64 + 0.5, gib(height) + y_max * 0.02),
                label_style.clone(),
            )))
            .map_err(ChartError::draw)?;
    }
    // Category names under the axis, in pixel space so they sit under each pair.
    let name_style = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, c) in rows.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(
            c.component.as_str().to_string(),
            (px, py + 8),
            name_style.clone(),
        ))
        .map_err(ChartError::draw)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 15)
}
