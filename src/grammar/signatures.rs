//! The lines only one runtime prints, as data: the table of `docs/log-formats.md` §0.1 (between its
//! `runtime-signatures` markers) is read here and becomes the rules of a last grammar file,
//! `99-runtime-signatures.toml`, whose `runtime_sign` events tell the load assembler which runtime and engine
//! printed a line (`load::runtime`, `load::engine`). Being last, a row reads only lines no other rule reads; a
//! `--grammar-dir` file of the same name replaces it. This module exists so that the table a reader sees is the
//! one the inference uses, never a copy.

/// `docs/log-formats.md`, whose §0.1 table is the data.
const DOC: &str = include_str!("../../docs/log-formats.md");

/// The name of the grammar file the table becomes.
pub const FILE_NAME: &str = "99-runtime-signatures.toml";

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub id: String,
    pub anchor: String,
    /// A regex on the framed line.
    pub shape: String,
    /// `llama-server`, `ollama`, `ollama-llama-server`.
    pub runtime: String,
    /// `llama`, `ollama`, or `–` (the line does not tell).
    pub engine: String,
    pub versions: String,
    /// `path:line` of a real line in the repository.
    pub real_line: String,
    /// The start of that line as framed: the rule's example.
    pub example: String,
}

/// Every row of the table, in order.
pub fn signatures() -> Vec<Signature> {
    let begin = DOC
        .find("<!-- runtime-signatures: begin -->")
        .expect("docs/log-formats.md has the runtime-signatures table");
    let end = DOC[begin..]
        .find("<!-- runtime-signatures: end -->")
        .map(|e| begin + e)
        .expect("the runtime-signatures table ends");
    let table = &DOC[begin..end];
    let example = |id: &str| -> String {
        let key = format!("- `{id}`: `");
        table
            .lines()
            .find_map(|l| l.strip_prefix(&key)?.strip_suffix('`'))
            .unwrap_or_else(|| panic!("docs/log-formats.md §0.1 gives no example line for {id}"))
            .to_string()
    };
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells = cells(l);
            assert_eq!(cells.len(), 7, "a runtime-signatures row has 7 cells: {l}");
            let code = |c: &str| c.trim().trim_matches('`').to_string();
            let id = code(&cells[0]);
            Signature {
                example: example(&id),
                id,
                anchor: cells[1]
                    .trim()
                    .strip_prefix('`')
                    .and_then(|c| c.strip_suffix('`'))
                    .unwrap_or("")
                    .to_string(),
                shape: code(&cells[2]),
                runtime: cells[3].trim().to_string(),
                engine: cells[4].trim().to_string(),
                versions: cells[5].trim().to_string(),
                real_line: code(&cells[6]),
            }
        })
        .collect()
}

/// A Markdown table row's cells: split at `|` not escaped as `\|`, and `\|` read as `|`.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                out.last_mut().expect("one cell").push('|');
            }
            '|' => out.push(String::new()),
            c => out.last_mut().expect("one cell").push(c),
        }
    }
    out
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The table as a grammar file.
pub fn grammar_file() -> String {
    let mut toml = String::from(
        "format = 1\ndescription = \"Lines only one runtime prints (docs/log-formats.md §0.1, read by src/grammar/signatures.rs).\"\n",
    );
    for s in signatures() {
        toml.push_str(&format!(
            "\n[[rule]]\nid = {}\nevent = \"runtime_sign\"\ndescription = {}\nanchors = [{}]\nregex = {}\nset = {{ runtime = {}, engine = {} }}\n[[rule.example]]\nline = {}\nsource = {}\n",
            quoted(&format!("signature.{}", s.id)),
            quoted(&format!("versions: {}; real line: {}", s.versions, s.real_line)),
            quoted(&s.anchor),
            quoted(&s.shape),
            quoted(&s.runtime),
            quoted(if s.engine == "–" { "unknown" } else { &s.engine }),
            quoted(&s.example),
            quoted(&s.real_line),
        ));
    }
    toml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_read_whole_and_its_shapes_are_regexes_holding_their_anchor() {
        let rows = signatures();
        assert!(rows.len() >= 4, "{rows:#?}");
        for r in &rows {
            regex::Regex::new(&r.shape).unwrap_or_else(|e| panic!("{}: {e}", r.id));
            assert!(!r.anchor.is_empty(), "{}", r.id);
            assert!(r.real_line.contains(':'), "{}", r.id);
        }
        let slot = rows.iter().find(|r| r.id == "llama-server.slot").unwrap();
        assert!(slot.shape.contains(r"\| task"), "{}", slot.shape);
        toml::from_str::<super::super::RawGrammarFile>(&grammar_file()).unwrap();
    }
}
