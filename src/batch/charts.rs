//! Batch charts: estimated against actual for every load (log-log, one colour per component, the identity line
//! where a perfect estimate would sit) and the distribution of actual/estimated per component.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ingest::FileResult;
use super::rows::COMPONENTS;
use crate::report::chart::style::{gib, FONT, GRAPH, KV, PROJECTOR, WEIGHTS};
use crate::report::chart::{draw_legend, render, Chart, ChartError};

fn color(component: &str) -> RGBColor {
    match component {
        "weights_gpu" => WEIGHTS,
        "weights_host" => RGBColor(120, 160, 210),
        "kv" => KV,
        "graph" => GRAPH,
        _ => PROJECTOR,
    }
}

fn err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Draw(e.to_string())
}

/// Every (component, estimated GiB, actual GiB) with both sides positive.
fn points(results: &[FileResult]) -> Vec<(&'static str, f64, f64)> {
    let mut out = Vec::new();
    for r in results {
        for l in &r.loads {
            for (k, c) in COMPONENTS.iter().enumerate() {
                let fig = &l.components[k];
                if let (Some(e), Some(a)) = (fig.estimated, fig.actual) {
                    if e > 0 && a > 0 {
                        out.push((c.as_str(), gib(e), gib(a)));
                    }
                }
            }
        }
    }
    out
}

fn scatter(results: &[FileResult]) -> Result<Option<Chart>, ChartError> {
    let pts = points(results);
    if pts.is_empty() {
        return Ok(None);
    }
    let lo = pts.iter().flat_map(|p| [p.1, p.2]).fold(f64::MAX, f64::min) / 1.5;
    let hi = pts.iter().flat_map(|p| [p.1, p.2]).fold(0.0, f64::max) * 1.5;
    let title = format!(
        "Estimated vs actual, {} component figures (log-log)",
        pts.len()
    );
    let png = render(|root| {
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("estimated (GiB)")
            .y_desc("actual (GiB)")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new([(lo, lo), (hi, hi)], BLACK.stroke_width(1)))
            .map_err(err)?
            .label("actual = estimated")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
        for c in COMPONENTS {
            let name = c.as_str();
            let mine: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.0 == name)
                .map(|p| (p.1, p.2))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let colour = color(name);
            chart
                .draw_series(
                    mine.iter()
                        .map(|&(x, y)| Circle::new((x, y), 5, colour.filled())),
                )
                .map_err(err)?
                .label(format!("{name} ({})", mine.len()))
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, colour.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 14)
    })?;
    Ok(Some(Chart {
        file_name: "estimated-vs-actual.png".to_string(),
        title,
        png,
    }))
}

fn histogram(results: &[FileResult], component: &'static str) -> Result<Option<Chart>, ChartError> {
    let ratios: Vec<f64> = points(results)
        .into_iter()
        .filter(|p| p.0 == component)
        .map(|p| p.2 / p.1)
        .collect();
    if ratios.is_empty() {
        return Ok(None);
    }
    // Bins of 0.05 over [0, 2], with everything beyond in the last bin.
    const BINS: usize = 40;
    let mut counts = [0u32; BINS];
    for r in &ratios {
        let i = ((r / 0.05).floor().max(0.0) as usize).min(BINS - 1);
        counts[i] += 1;
    }
    let top = *counts.iter().max().unwrap_or(&1) as f64;
    let title = format!(
        "{component}: actual / estimated over {} loads",
        ratios.len()
    );
    let png = render(|root| {
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..2.0, 0f64..top * 1.2 + 0.5)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("actual / estimated (1 = exact; last bin: 1.95 and above)")
            .y_desc("loads")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(err)?;
        let colour = color(component);
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(i, &n)| {
                        let x = i as f64 * 0.05;
                        Rectangle::new([(x + 0.004, 0.0), (x + 0.046, n as f64)], colour.filled())
                    }),
            )
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(1.0, 0.0), (1.0, top * 1.2 + 0.5)],
                BLACK.stroke_width(2),
            )))
            .map_err(err)?;
        let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Top));
        chart
            .draw_series(std::iter::once(Text::new(
                "exact",
                (1.01, top * 1.2 + 0.4),
                style,
            )))
            .map_err(err)?;
        Ok(())
    })?;
    Ok(Some(Chart {
        file_name: format!("ratio-{component}.png"),
        title,
        png,
    }))
}

/// Every batch chart that has data.
pub fn all(results: &[FileResult]) -> Result<Vec<Chart>, ChartError> {
    let mut out = Vec::new();
    out.extend(scatter(results)?);
    for c in COMPONENTS {
        out.extend(histogram(results, c.as_str())?);
    }
    Ok(out)
}
