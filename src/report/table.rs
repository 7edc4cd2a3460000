//! A small table model shared by the text (and later Markdown) reporters: cells are plain strings, the
//! renderer decides the layout.

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of strings with a header row.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Self {
        Table {
            headers: headers.iter().map(|(h, _)| h.to_string()).collect(),
            align: headers.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(cell.chars().count());
                }
            }
        }
        w
    }

    /// A GitHub-flavoured Markdown table; every cell escaped so log text cannot inject markup.
    pub fn to_markdown(&self) -> String {
        let row = |cells: &[String]| {
            let escaped: Vec<String> = cells.iter().map(|c| super::md_escape(c)).collect();
            format!("| {} |\n", escaped.join(" | "))
        };
        let mut out = row(&self.headers);
        let rule: Vec<&str> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => ":---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for r in &self.rows {
            out.push_str(&row(r));
        }
        out
    }

    /// Aligned plain-text rendering, `indent` spaces in front of every line.
    pub fn to_text(&self, indent: usize) -> String {
        let widths = self.widths();
        let pad = " ".repeat(indent);
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            out.push_str(&pad);
            let mut parts = Vec::new();
            for (i, cell) in cells.iter().enumerate() {
                let cell = super::sanitize(cell);
                let width = widths.get(i).copied().unwrap_or(0);
                let fill = width.saturating_sub(cell.chars().count());
                let last = i + 1 == cells.len();
                parts.push(match self.align.get(i) {
                    Some(Align::Right) => format!("{}{}", " ".repeat(fill), cell),
                    _ if last => cell.to_string(),
                    _ => format!("{}{}", cell, " ".repeat(fill)),
                });
            }
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        for row in &self.rows {
            line(row, &mut out);
        }
        out
    }
}
