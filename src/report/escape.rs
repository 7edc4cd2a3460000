//! Log text made safe for each medium: a terminal (`sanitize`) and Markdown (`md_escape`, `md_code`). A log is
//! untrusted input: a model name must not move the cursor, reorder what a terminal shows, or open a link.

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
