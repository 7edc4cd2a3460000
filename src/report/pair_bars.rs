//! The chart of a pair of loads (issue 53) for the layouts that carry no picture (Markdown, the terminal): per
//! figure, the first load's size, the replay's prediction at the second load's settings and what the second
//! load measured, as bars of Unicode blocks on one scale, with the verdict beside the measurement. HTML draws
//! the same figures as a picture (`super::chart::pair`); these bars are what Markdown shows in its place, in
//! a code block so that every viewer keeps the columns.

use crate::model::{human, LoadPair, Quantity};

/// The longest bar, in character cells.
const WIDTH: usize = 30;

/// The eighths of a cell, from one eighth to seven (a whole cell is `█`).
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// A bar of `value` on a scale where `top` fills [`WIDTH`] cells, padded to that width.
fn bar(value: i64, top: i64) -> String {
    let eighths = if top > 0 {
        (i128::from(value.max(0)) * (WIDTH as i128) * 8 / i128::from(top)) as usize
    } else {
        0
    };
    let (whole, part) = (eighths / 8, eighths % 8);
    let mut out: String = "█".repeat(whole.min(WIDTH));
    if part > 0 && whole < WIDTH {
        out.push(EIGHTHS[part - 1]);
    }
    // A figure too small for an eighth still shows that it is there.
    if out.is_empty() && value > 0 {
        out.push(EIGHTHS[0]);
    }
    let cells = out.chars().count();
    out.extend(std::iter::repeat_n(' ', WIDTH.saturating_sub(cells)));
    out
}

/// The bars of `pair`'s figures, one line per bar, indented as the pair's table; empty when it has no figure
/// in bytes.
pub fn lines(pair: &LoadPair) -> Vec<String> {
    let figures = pair.figures_in_bytes();
    let top = figures
        .iter()
        .flat_map(|f| [f.before, f.predicted, f.measured])
        .flatten()
        .map(|q| q.bytes)
        .max()
        .unwrap_or(0);
    let labels: Vec<String> = figures
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f.component,
                f.device
                    .as_ref()
                    .map_or("all".to_string(), |d| d.to_string())
            )
        })
        .collect();
    let label_width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = Vec::new();
    for (f, label) in figures.iter().zip(&labels) {
        let rows: [(&str, Option<Quantity>); 3] = [
            ("first load", f.before),
            ("predicted", f.predicted),
            ("measured", f.measured),
        ];
        for (k, (name, value)) in rows.into_iter().enumerate() {
            let shown = if k == 0 { label.as_str() } else { "" };
            let line = match value {
                Some(q) => {
                    let verdict = if k == 2 {
                        format!("  {}", f.verdict_words())
                    } else {
                        String::new()
                    };
                    format!(
                        "{shown:<label_width$}  {name:<10}  {} {}{verdict}",
                        bar(q.bytes, top),
                        human(q.bytes)
                    )
                }
                None if k == 1 => format!(
                    "{shown:<label_width$}  {name:<10}  {:<WIDTH$} – ({})",
                    "",
                    f.verdict_words()
                ),
                None => format!("{shown:<label_width$}  {name:<10}  {:<WIDTH$} –", ""),
            };
            out.push(format!("  {}", line.trim_end()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn a_bar_is_its_share_of_the_scale_in_eighths_of_a_cell() {
        assert_eq!(bar(100, 100), "█".repeat(30));
        assert_eq!(bar(50, 100).trim_end(), "█".repeat(15));
        // 1/240 of the scale is one eighth of a cell; less still shows.
        assert_eq!(bar(1, 240).trim_end(), "▏");
        assert_eq!(bar(1, 1 << 40).trim_end(), "▏");
        assert_eq!(bar(0, 100).trim_end(), "");
        // 9/240: one cell and one eighth.
        assert_eq!(bar(9, 240).trim_end(), "█▏");
        for v in [0, 1, 7, 99, 100] {
            assert_eq!(bar(v, 100).chars().count(), 30, "{v}");
        }
    }
}
