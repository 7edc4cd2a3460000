//! Log text made safe for each medium: a terminal (`sanitize`), Markdown (`md_escape`, `md_code`) and HTML
//! (`html_escape`). A log is untrusted input: a model name must not move the cursor, reorder what a terminal
//! shows, open a link, or become a tag.

/// Make text from a log safe inside Markdown: control characters become `?`, line breaks a space, and every
/// character Markdown or HTML could read as markup is backslash-escaped (so a model name cannot open a link,
/// a table cell, a heading or an HTML tag).
pub fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // Parentheses, `#`, `+` and `!` only mean something at a line start or after `]`, which escaped
            // text never gives them.
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if (c.is_control() && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) =>
            {
                out.push('?')
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for a Markdown code span: control characters and backticks removed (a code span cannot be escaped).
pub fn md_code(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() || c == '`' { ' ' } else { c })
        .collect();
    format!("`{}`", clean.trim())
}

/// Make text from a log safe to print: control characters (terminal escapes, `\r`, C1 controls) and the
/// bidirectional overrides and isolates (which reorder what a terminal shows, "Trojan Source") become `?`.
pub fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    }
    if text.chars().any(unsafe_char) {
        text.chars()
            .map(|c| if unsafe_char(c) { '?' } else { c })
            .collect::<String>()
            .into()
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Make text from a log safe inside HTML, in element content and in quoted attribute values alike: the five
/// characters HTML reads as markup become character references, and what [`sanitize`] replaces becomes `?`.
pub fn html_escape(text: &str) -> String {
    let clean = sanitize(text);
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::html_escape;

    #[test]
    fn html_escape_leaves_no_markup_and_no_control_character() {
        assert_eq!(
            html_escape("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            html_escape("\"><img src=x onerror='a'>&amp;"),
            "&quot;&gt;&lt;img src=x onerror=&#39;a&#39;&gt;&amp;amp;"
        );
        assert_eq!(html_escape("a\u{1b}[31mb\u{202e}c"), "a?[31mb?c");
    }
}
