//! `batch --html FILE`: the batch summary as one self-contained page. The summary is Markdown that vramdiff
//! itself writes (`src/batch/summary.rs`, `calibration.rs`, `baseline.rs`: headings, paragraphs, pipe tables,
//! `-` lists, code spans, every log value backslash-escaped by `md_escape`), so this reads exactly that subset —
//! it is no general Markdown reader — and lays it out with the HTML report's styles, the batch charts embedded
//! as PNG `data:` URIs. Text is unescaped from Markdown, then escaped for HTML: nothing in it becomes markup.

use std::fmt::Write;

use super::chart::Chart;
use super::escape::html_escape;
use super::html::{base64, STYLE};

/// Markdown's backslash escapes removed, code spans as `<code>`, everything else HTML-escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut plain = String::new();
    let mut chars = text.chars();
    let mut in_code = false;
    let mut code = String::new();
    while let Some(c) = chars.next() {
        if in_code {
            if c == '`' {
                let _ = write!(out, "<code>{}</code>", html_escape(&code));
                code.clear();
                in_code = false;
            } else {
                code.push(c);
            }
        } else if c == '\\' {
            plain.push(chars.next().unwrap_or('\\'));
        } else if c == '`' {
            out.push_str(&html_escape(&plain));
            plain.clear();
            in_code = true;
        } else {
            plain.push(c);
        }
    }
    if in_code {
        plain.push('`');
        plain.push_str(&code);
    }
    out.push_str(&html_escape(&plain));
    strong(&out)
}

/// `**bold**` (already escaped text: `*` is not escaped by HTML) as `<strong>`.
fn strong(text: &str) -> String {
    let parts: Vec<&str> = text.split("**").collect();
    if parts.len() < 3 || parts.len().is_multiple_of(2) {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<strong>{part}</strong>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The cells of a pipe-table row, split at `|` not escaped by a backslash.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cell.push('\\');
                if let Some(next) = chars.next() {
                    cell.push(next);
                }
            }
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    cells.push(cell.trim().to_string());
    cells
}

fn is_rule(row: &str) -> bool {
    row.contains("---") && row.chars().all(|c| matches!(c, '|' | ':' | '-' | ' '))
}

/// A table's lines (header, rule, rows) as HTML.
fn table(out: &mut String, rows: &[&str]) {
    let right: Vec<bool> = rows
        .get(1)
        .filter(|r| is_rule(r))
        .map(|r| cells(r).iter().map(|c| c.ends_with(':')).collect())
        .unwrap_or_default();
    let class = |i: usize| {
        if right.get(i).copied().unwrap_or(false) {
            " class=\"num\""
        } else {
            ""
        }
    };
    out.push_str("<div class=\"scroll\"><table>\n");
    for (n, row) in rows.iter().enumerate() {
        if is_rule(row) {
            continue;
        }
        let tag = if n == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for (i, cell) in cells(row).iter().enumerate() {
            let _ = write!(out, "<{tag}{}>{}</{tag}>", class(i), inline(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
}

/// The summary's Markdown and the batch's charts as one page titled by the summary's first heading.
pub fn summary_page(markdown: &str, charts: &[Chart]) -> String {
    let title = markdown
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(inline)
        .unwrap_or_else(|| "vramdiff batch summary".to_string());
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<meta name=\"generator\" content=\"vramdiff\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
    );
    let lines: Vec<&str> = markdown.lines().collect();
    let mut i = 0;
    let mut list_open = false;
    while i < lines.len() {
        let line = lines[i];
        let is_item = line.starts_with("- ");
        if list_open && !is_item {
            out.push_str("</ul>\n");
            list_open = false;
        }
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some((level, text)) = (1..=6).rev().find_map(|level| {
            line.strip_prefix(&format!("{} ", "#".repeat(level)))
                .map(|t| (level, t))
        }) {
            let _ = writeln!(out, "<h{level}>{}</h{level}>", inline(text));
        } else if line.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].starts_with('|') {
                i += 1;
            }
            table(&mut out, &lines[start..i]);
            continue;
        } else if let Some(item) = line.strip_prefix("- ") {
            if !list_open {
                out.push_str("<ul>\n");
                list_open = true;
            }
            let _ = writeln!(out, "<li>{}</li>", inline(item));
        } else {
            let _ = writeln!(out, "<p>{}</p>", inline(line));
        }
        i += 1;
    }
    if list_open {
        out.push_str("</ul>\n");
    }
    if !charts.is_empty() {
        out.push_str("<h2>Charts</h2>\n");
        for c in charts {
            let _ = writeln!(
                out,
                "<figure><img alt=\"{title}\" src=\"data:image/png;base64,{}\"><figcaption>{title}</figcaption></figure>",
                base64(&c.png),
                title = html_escape(&c.title)
            );
        }
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_subset_becomes_html_and_log_text_stays_text() {
        let md = "# vramdiff batch summary\n\n2 files read, `worst` is far.\n\n## Findings\n\n\
                  | code | model | loads |\n| :--- | :--- | ---: |\n| needless\\-split | a\\|b \\<script\\> | 3 |\n\n\
                  - **REGRESSION** x\\<img onerror=1\\>\n- two\n\nend\n";
        let html = summary_page(md, &[]);
        assert!(html.contains("<title>vramdiff batch summary</title>"));
        assert!(html.contains("<p>2 files read, <code>worst</code> is far.</p>"));
        assert!(html.contains(
            "<tr><td>needless-split</td><td>a|b &lt;script&gt;</td><td class=\"num\">3</td></tr>"
        ));
        assert!(html.contains("<tr><th>code</th><th>model</th><th class=\"num\">loads</th></tr>"));
        assert!(html.contains("<ul>\n<li><strong>REGRESSION</strong> x&lt;img onerror=1&gt;</li>\n<li>two</li>\n</ul>\n<p>end</p>"));
        assert!(!html.contains("<script"));
    }
}
