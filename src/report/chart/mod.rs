//! PNG charts of a load, drawn with plotters into memory and encoded without any varying metadata, so the same
//! input gives the same bytes. Text comes from the embedded DejaVu Sans, not the machine's fonts. File names
//! derive from the input's file name and the load's number, never from log text.

mod components;
mod devices;
pub mod files;
mod pair;

pub mod style;
mod timeline;

use plotters::prelude::*;

use crate::model::Concluded;
use style::{encode_png, register_fonts, HEIGHT, WIDTH};

/// A chart could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("PNG encoding failed: {0}")]
    Encode(#[from] png::EncodingError),
}

impl ChartError {
    pub fn draw<E: std::fmt::Display>(e: E) -> ChartError {
        ChartError::Draw(e.to_string())
    }
}

/// One chart: its file name (no directory) and its PNG bytes.
#[derive(Debug, Clone)]
pub struct Chart {
    pub file_name: String,
    /// What the chart shows, for alt text and link titles.
    pub title: String,
    pub png: Vec<u8>,
}

/// A file-name stem from an input path: its file name without extension, reduced to `[A-Za-z0-9._-]`.
pub fn stem(path: &str) -> String {
    if path == "-" || path == "<stdin>" {
        return "stdin".to_string();
    }
    let name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name
        .strip_suffix(".log")
        .or_else(|| name.strip_suffix(".txt"))
        .unwrap_or(&name);
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.');
    if clean.is_empty() {
        "input".to_string()
    } else {
        clean.chars().take(100).collect()
    }
}

/// A chart's plotting area: categories along x (`0..n`), GiB up to `y_max` along y.
pub type Axes<'a, DB> = ChartContext<
    'a,
    DB,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// Clear `root`, title it, and draw a GiB y axis over `n` categories (their names are drawn by the caller).
pub fn gib_axes<'a, DB: DrawingBackend + 'a>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    n: f64,
    y_max: f64,
    x_label_area: u32,
) -> Result<Axes<'a, DB>, ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(ChartError::draw)?;
    let mut chart = ChartBuilder::on(root)
        .caption(title, (style::FONT, 22).into_font().style(FontStyle::Bold))
        .margin(16)
        .x_label_area_size(x_label_area)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n, 0f64..y_max)
        .map_err(ChartError::draw)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_x_axis()
        .y_desc("GiB")
        .label_style((style::FONT, 15))
        .axis_desc_style((style::FONT, 16))
        .draw()
        .map_err(ChartError::draw)?;
    Ok(chart)
}

/// The legend box every chart draws: the labelled series, on a light background with a border.
pub fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    font_size: u32,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .label_font((style::FONT, font_size))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(ChartError::draw)
}

/// Draw into a fresh canvas with the embedded fonts and encode it as PNG.
pub fn render(
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>) -> Result<(), ChartError>,
) -> Result<Vec<u8>, ChartError> {
    register_fonts();
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root)?;
        root.present().map_err(ChartError::draw)?;
    }
    Ok(encode_png(&rgb, WIDTH, HEIGHT)?)
}

/// The charts of load number `number` (1-based, as in the reports) of an input.
pub fn load_charts(load: &Concluded, number: usize) -> Result<Vec<Chart>, ChartError> {
    let stem = stem(&load.reconciled.load.source.path);
    let model = super::tables::model_name(load);
    let model: String = model.chars().filter(|c| !c.is_control()).take(40).collect();
    let mut charts = Vec::new();
    let any_figure = load
        .reconciled
        .components
        .iter()
        .any(|c| c.estimated.is_some() || c.actual.is_some());
    if any_figure {
        let title = format!("Load {number} ({model}): estimate vs actual per component");
        let png = render(|root| components::draw(root, &title, load))?;
        charts.push(Chart {
            file_name: format!("{stem}-load{number}-components.png"),
            title,
            png,
        });
    }
    if load.reconciled.devices.iter().any(|d| !d.host) {
        let title = format!("Load {number} ({model}): per GPU — estimate, buffers, nvidia-smi");
        let png = render(|root| devices::draw(root, &title, load))?;
        charts.push(Chart {
            file_name: format!("{stem}-load{number}-gpus.png"),
            title,
            png,
        });
    }
    if let Some(t) = load
        .reconciled
        .load
        .timeline
        .as_ref()
        .filter(|t| timeline::has_series(t))
    {
        let title = format!("Load {number} ({model}): while serving");
        let png = render(|root| timeline::draw(root, &title, t))?;
        charts.push(Chart {
            file_name: format!("{stem}-load{number}-serving.png"),
            title,
            png,
        });
    }
    Ok(charts)
}

/// The chart of a pair of loads (`crate::pairs`), for the HTML report; `None` without a figure to draw.
pub fn pair_chart(pair: &crate::model::LoadPair) -> Result<Option<Chart>, ChartError> {
    if !pair::has_figures(pair) {
        return Ok(None);
    }
    let title = format!(
        "Loads {} → {}: predicted at the second load's settings vs measured",
        pair.first, pair.second
    );
    let png = render(|root| pair::draw(root, &title, pair))?;
    Ok(Some(Chart {
        file_name: format!("pair-{}-{}.png", pair.first, pair.second),
        title,
        png,
    }))
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn file_names_never_carry_path_or_markup_characters() {
        assert_eq!(
            stem("sample-logs/founding-k80-gemma3-12b.log"),
            "founding-k80-gemma3-12b"
        );
        assert_eq!(stem("-"), "stdin");
        assert_eq!(stem("<stdin>"), "stdin");
        assert_eq!(stem("../../etc/passwd"), "passwd");
        assert_eq!(stem("logs/a b$(rm -rf).log"), "a_b__rm_-rf_");
        assert_eq!(stem("/tmp/..."), "input");
        assert_eq!(stem("C:\\\\logs\\\\x.log"), "C___logs__x");
    }
}
