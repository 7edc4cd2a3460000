//! Re-joining records that a paste re-wrapped or a terminal hard-wrapped.
//!
//! People paste logs into issues and notes, and editors wrap them at 80–120 columns, sometimes mid-token
//! (`C\nPU.1.LLAMAFILE`, `GPU\nLayers:[]`). A physical line is joined onto the previous logical line only
//! when it cannot start a record on its own *and* the previous line is a Go slog record that it plausibly
//! continues: either the previous record has an open quote, or the line is an indented run of `key=value`
//! pairs ([`continuation`]). Everything else stands alone, so a stray line never swallows the next record.
//!
//! A terminal (or `fold`) cuts differently: every long line at the same column, mid-token, with no
//! indentation on the next piece (`… memory.gpu_o` / `verhead="0 B" …`). Such a record must come back byte
//! for byte, glued without a space; [`hard_wrap`] decides it from the lengths of the physical pieces, which
//! the framer measures (in characters, prefix included): every piece but the last is exactly as long as the
//! first, which is at least [`MIN_WRAP_WIDTH`]; the last is no longer; no piece is a record start
//! ([`wrap_piece`], [`is_record_start`]). Equal lengths alone are weak evidence for a record cut into two pieces, so a
//! two-piece cut needs one more sign: the width was already seen wrapping in this input, the record has an
//! open quote, or the pieces meet inside a `key=value` pair ([`slog_cut`]).

/// The narrowest terminal whose hard wrap is undone: narrower cuts are not told apart from short records.
pub const MIN_WRAP_WIDTH: usize = 60;

/// True when `line` looks like the start of a record of some dialect we know.
pub fn starts_record(line: &str) -> bool {
    let b = line.as_bytes();
    if b.is_empty() {
        return true;
    }
    if line.starts_with("time=") || line.starts_with("level=") || line.starts_with("[GIN]") {
        return true;
    }
    // llama.cpp `function_name: …`, `Device 0: …`, nvidia-smi `| …` / `+---`.
    if matches!(b[0], b'|' | b'+' | b'#' | b'=') {
        return true;
    }
    if let Some(colon) = line.find(": ") {
        let head = &line[..colon];
        if !head.is_empty() && head.len() <= 48 && !head.contains('=') {
            return true;
        }
    }
    // Go std log `2024/06/27 19:00:53 …` and other date-led lines.
    b.len() >= 10 && b[..4].iter().all(u8::is_ascii_digit) && (b[4] == b'/' || b[4] == b'-')
}

/// True when `line` (prefixes stripped) is, strictly, the start of a record of a dialect we know: a Go slog
/// record (`time=`, `level=`), a `[GIN]` access line, a llama.cpp `function_name: ` line or `Device 0: `,
/// llama.cpp's old server (`INFO [main] …`), a Go std log or syslog date (`2024/06/27 19:00:53 `,
/// `Nov 30 06:05:00 `), or an nvidia-smi table row (`|`, `+--`, `==`).
///
/// Unlike [`starts_record`] it does not take any `words: ` head for a record, because a piece of a
/// hard-wrapped slog record can begin with one inside a quoted value (`ProjectorPath: MainGPU:0`), and it
/// takes no piece beginning with `-` or `"`, with digits other than a Go std log date, or with `[` other than
/// `[GIN]` (`0 B"`, `-1 layers.model=`, `[37] `).
pub fn is_record_start(line: &str) -> bool {
    let b = line.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    match first {
        b't' | b'l' if line.starts_with("time=") || line.starts_with("level=") => return true,
        b'[' => return line.starts_with("[GIN]"),
        b'|' => return true,
        b'+' => return b.get(1) == Some(&b'-'),
        b'=' => return b.get(1) == Some(&b'='),
        b'0'..=b'9' => {
            // Go std log `2024/06/27 19:00:53 `.
            let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
            return (0..4).all(d)
                && b.get(4) == Some(&b'/')
                && d(5)
                && d(6)
                && b.get(7) == Some(&b'/');
        }
        c if !(c.is_ascii_alphabetic() || c == b'_') => return false,
        _ => {}
    }
    // `function_name:` or `Device 0:`, then a space or the end.
    let word = |i: usize, ok: fn(&u8) -> bool| b[i..].iter().take_while(|c| ok(c)).count();
    let mut i = word(0, |c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'));
    if b.get(i) == Some(&b' ') {
        let digits = word(i + 1, u8::is_ascii_digit);
        if digits > 0 {
            i += 1 + digits;
        }
    }
    if b.get(i) == Some(&b':') && matches!(b.get(i + 1), None | Some(b' ' | b'\t')) {
        return true;
    }
    // `INFO [main] starting c++ runner | …` (llama.cpp's old server, corpus 008).
    let upper = word(0, u8::is_ascii_uppercase);
    if upper >= 4 && b[upper..].starts_with(b" [") {
        return true;
    }
    // syslog `Nov 30 06:05:00 ` / `Nov  1 06:05:00 `.
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    b.len() > 15
        && b[..3].iter().all(u8::is_ascii_alphabetic)
        && b[3] == b' '
        && (d(4) || b[4] == b' ')
        && d(5)
        && b[6] == b' '
        && d(7)
        && d(8)
        && b[9] == b':'
}

/// True when `record` is a Go slog record whose quoting is still open (an odd number of unescaped quotes).
pub fn has_open_quote(record: &str) -> bool {
    let b = record.as_bytes();
    let mut open = false;
    // A backslash escapes the byte after it, whatever it is.
    let mut escaped_until = 0;
    for i in memchr::memchr2_iter(b'"', b'\\', b) {
        if i < escaped_until {
            continue;
        }
        if b[i] == b'\\' {
            escaped_until = i + 2;
        } else {
            open = !open;
        }
    }
    open
}

/// True when `line` begins with a slog `key=` (bare or quoted key).
fn starts_with_pair(line: &str) -> bool {
    let key_end = if let Some(rest) = line.strip_prefix('"') {
        rest.find('"').map(|i| i + 2)
    } else {
        line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
    };
    matches!(key_end, Some(i) if i > 0 && line.as_bytes().get(i) == Some(&b'='))
}

/// The end of the slog `key=value` pair starting at `i` (bare or quoted key and value), or `None`.
fn pair_end(b: &[u8], i: usize) -> Option<usize> {
    let i = token_end(b, i)?;
    if b.get(i) != Some(&b'=') {
        return None;
    }
    token_end(b, i + 1)
}

/// The end of a slog key or value at `i`: a quoted string (with backslash escapes) or a bare run without
/// space, `=` or `"` (slog quotes any value that has one).
fn token_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'"') {
        let mut j = i + 1;
        while j < b.len() {
            match b[j] {
                b'\\' => j += 2,
                b'"' => return Some(j + 1),
                _ => j += 1,
            }
        }
        return None;
    }
    let n = b[i.min(b.len())..]
        .iter()
        .take_while(|c| !matches!(c, b' ' | b'=' | b'"'))
        .count();
    (n > 0).then_some(i + n)
}

/// The last space-separated token of a slog record whose quotes are balanced, a quoted value with its key
/// (`memory.available="[11.5 GiB 4.6 GiB]"`, not `GiB]"`).
fn last_token(record: &str) -> &str {
    let b = record.as_bytes();
    let (mut start, mut quoted, mut i) = (0, false, 0);
    while i < b.len() {
        match b[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b' ' if !quoted => start = i + 1,
            _ => {}
        }
        i += 1;
    }
    &record[start..]
}

/// True when `raw`, a whole physical line, is what follows a terminal cut in the slog record `previous`
/// (which has no open quote): the two meet inside a pair, or at its space, and `raw` runs on as ` key=value`
/// pairs to its end, and the cut shows.
///
/// Where they meet tells how `raw` must start: after a space, with a pair; before one, with a single space;
/// after a `=`, with the value; inside a key (`memory.gpu_o` / `verhead="0 B" …`: the last token of
/// `previous` has no `=`), with the rest of the key and its value; inside a bare value (`layers.offload=4` /
/// `0 layers.split=…`), with the rest of the value. The cut shows when `previous` cannot end a record (it
/// ends in `=` or in a key) or `raw` holds a pair. A complete pair on each side with no space between
/// (`layers.requested=-1` / `layers.model=63`) is a paste that dropped the space, not a cut; a line that is
/// only the end of a value (`30dc41dc…`) says nothing.
pub fn slog_cut(previous: &str, raw: &str) -> bool {
    let b = raw.as_bytes();
    if !previous.ends_with('=') && memchr::memchr(b'=', b).is_none() {
        // Nothing shows the cut (the common case: a line of plain text after a record).
        return false;
    }
    let last = last_token(previous);
    let complete = last.contains('=') && !last.ends_with('=');
    let mut shows = false;
    let mut i = 0;
    if previous.ends_with(' ') {
        // After the space: a pair.
        if b.first() == Some(&b' ') {
            return false;
        }
        let Some(end) = pair_end(b, 0) else {
            return false;
        };
        (shows, i) = (true, end);
    } else if b.first() == Some(&b' ') {
        // Before the space: the pair before it is complete.
        if !complete {
            return false;
        }
    } else if b.first() == Some(&b'=') || last.ends_with('=') {
        // Between a key and its value, or after the `=`: the value.
        let at = usize::from(b.first() == Some(&b'='));
        if at == 1 && last.contains('=') {
            return false;
        }
        let Some(end) = token_end(b, at) else {
            return false;
        };
        (shows, i) = (true, end);
    } else {
        if previous.ends_with('"') {
            // A closing quote is followed by a space or the end of the record.
            return false;
        }
        let piece = b
            .iter()
            .take_while(|c| !matches!(c, b' ' | b'=' | b'"'))
            .count();
        match b.get(piece) {
            // Inside a key: the rest of it, then its value.
            Some(b'=') if !last.contains('=') => {
                let Some(end) = token_end(b, piece + 1) else {
                    return false;
                };
                (shows, i) = (true, end);
            }
            // Inside a bare value: the rest of it.
            None | Some(b' ') if piece > 0 && complete => i = piece,
            _ => return false,
        }
    }
    while i < b.len() {
        if b[i] != b' ' {
            return false;
        }
        let Some(end) = pair_end(b, i + 1) else {
            return false;
        };
        (shows, i) = (true, end);
    }
    shows
}

/// Whether the physical line `raw` can be the next piece of a terminal hard wrap of the slog record
/// `previous`, whatever the widths: `None` when it starts a record of its own, otherwise whether `previous`
/// has an open quote (see [`hard_wrap`]).
///
/// `line` is `raw` with its prefixes stripped, `prefixed` whether a collector prefix (not just indentation)
/// was stripped from it. Inside an open quote only a slog record, a `[GIN]` line or a collector prefix count
/// as a record start (the quoted text may read `error: …`), as in [`continuation`].
pub fn wrap_piece(previous: &str, raw: &str, line: &str, prefixed: bool) -> Option<bool> {
    if raw.is_empty() || line.starts_with("time=") || line.starts_with("[GIN]") {
        return None;
    }
    // A stripped prefix makes a record (in a journald dump, every line), except `[37] ` (a one-element list
    // cut before its value, which the stripper takes for a router's `[pid] `) when what follows it is no
    // record start.
    if prefixed && (!raw.trim_start_matches([' ', '\t']).starts_with('[') || is_record_start(line))
    {
        return None;
    }
    // No record is a lone `time=` token: a `level=` after one is the same record, cut where a collector
    // prefix in front of the first piece pushed it (`Aug 22 17:36:22 amobile ollama[30907]: time=… ` / `level=…`).
    let level = line.starts_with("level=");
    if level && previous.trim_end().contains(' ') && !previous.ends_with(['_', '.']) {
        // (After `_` or `.` it ends a key: `… log_` / `level=0, …`.)
        return None;
    }
    let open = has_open_quote(previous);
    if !level && !open && is_record_start(line) {
        return None;
    }
    Some(open)
}

/// True when `raw`, a possible piece of `previous` ([`wrap_piece`]; `open` if `previous` has an open quote),
/// is the next piece of a terminal hard wrap at `width` characters (see the module doc). `raw_chars` is its
/// length in characters, `known_width` whether this input already wrapped at `width`.
pub fn hard_wrap(
    previous: &str,
    width: usize,
    known_width: bool,
    raw: &str,
    raw_chars: usize,
    open: bool,
) -> bool {
    if width < MIN_WRAP_WIDTH || raw_chars > width {
        return false;
    }
    raw_chars == width || known_width || open || slog_cut(previous, raw)
}

/// The widths terminals open at and users set (`COLUMNS`), at which a line of exactly that many characters
/// followed by the rest of a line is taken for a cut without other evidence.
pub const TERMINAL_WIDTHS: [usize; 7] = [80, 100, 120, 132, 150, 160, 200];

/// True when `raw` is the next piece of a terminal hard wrap at `width` characters of `previous`, a record
/// that is no Go slog record (a llama.cpp, vLLM or SGLang line: nothing else joins onto it), `raw` being no
/// record start ([`wrap_piece`]). Without slog's `key=value` pairs to show the cut, the piece must read as
/// the rest of a line ([`plain_cut`]) and the width must be evidence: the piece is as wide as the first (more
/// follow), or this input already wrapped at `width`, or `width` is a terminal's ([`TERMINAL_WIDTHS`]).
pub fn plain_wrap(
    previous: &str,
    width: usize,
    known_width: bool,
    raw: &str,
    raw_chars: usize,
) -> bool {
    if width < MIN_WRAP_WIDTH || raw_chars > width {
        return false;
    }
    (raw_chars == width || known_width || TERMINAL_WIDTHS.contains(&width))
        && plain_cut(previous, raw)
}

/// Whether the physical line `raw` (`line` once stripped, `prefixed` if a collector prefix was stripped from
/// it) can be the next piece of a terminal hard wrap of `previous`, a record that is no slog record (see
/// [`PlainPiece`]): not a prefixed line (only a slog value or a table's cell begins like a prefix, see
/// [`wrap_piece`] and [`table_cut`]), no line
/// that begins as `previous` does, and no record start, unless the record start is what a cut left: the
/// rest of a table's row or border ([`table_cut`]), or a word and a colon (no function name: those hold `_`)
/// cut at the space before it (` ID: GPU-…` after `… VMM: yes,`; `memory: 6.87 GiB` after `… Available KV
/// cache `) or, where this input already wrapped at the width, inside it (`locks: 6241` after `… # CPU b`).
pub fn plain_piece(previous: &str, raw: &str, line: &str, prefixed: bool) -> PlainPiece {
    if raw.is_empty() || prefixed && !table_cut(previous, raw) {
        return PlainPiece::No;
    }
    // A line that begins as the record did is the record printed again (a progress line, a repeated
    // warning), as wide as it by nature, not its rest.
    let head = &line.as_bytes()[..line.len().min(12)];
    if head.len() >= 4 && previous.as_bytes().starts_with(head) {
        return PlainPiece::No;
    }
    if !is_record_start(line) || table_cut(previous, raw) {
        return PlainPiece::Yes;
    }
    if !previous.is_empty()
        && previous
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        // A collector's prefix left room for a word only, cut inside a function name (`llama_kv_cach` /
        // `e_unified: …`): a lone fragment is no record.
        return PlainPiece::Yes;
    }
    if previous.ends_with('_') && raw.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        // A name cut after its `_` (`…, log_` / `level=0, show_time_cost=False, …`, SGLang's `server_args`
        // at 80 columns): no record begins right after one.
        return PlainPiece::Yes;
    }
    if raw.starts_with('_') && previous.ends_with(|c: char| c.is_ascii_alphanumeric()) {
        // A function name cut inside (`common_param: common_params` / `_print_info: build 1 …`, the
        // founding-today log under journald at 80 columns): no function name begins with `_`.
        return PlainPiece::Yes;
    }
    let word = line.split_once(": ").map_or(line, |(head, _)| head);
    let word = word.strip_suffix(':').unwrap_or(word);
    // A word and a number read like llama.cpp's `Device 0: ` as much as a word alone reads like a function
    // name: the same evidence decides (`… allocating 560.00 MiB on ` / `device 0: cudaMalloc failed…`,
    // corpus 001 under `docker logs -t` at 100 columns).
    let word = match word.rsplit_once(' ') {
        Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => word,
    };
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_alphabetic()) {
        return PlainPiece::No;
    }
    let ends_in_word = previous.ends_with(|c: char| c.is_ascii_alphanumeric());
    match raw.strip_prefix(' ') {
        Some(rest) if !rest.starts_with([' ', '\t']) && !previous.ends_with(' ') => PlainPiece::Yes,
        None if previous.ends_with(' ') => PlainPiece::Yes,
        None if ends_in_word => PlainPiece::IfWidthKnown,
        _ => PlainPiece::No,
    }
}

/// What [`plain_piece`] says of a line after a record that is no slog record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainPiece {
    /// It starts a record of its own.
    No,
    /// It may be the next piece (the widths decide, [`plain_wrap`]).
    Yes,
    /// It may be the next piece only where this input already wrapped at the width.
    IfWidthKnown,
}

/// True when `raw` is the rest of the table row or border that `previous` cut: a border's rest after a
/// border without its closing corner (`+-----` / `-----+`, `|=====` / `=====|`), or, after a row not closed yet (it starts
/// with `|` or `…: |` and does not end in one: nvidia-smi's rows, llama.cpp's `memory_breakdown_print` rows), a piece with a `|`
/// (`|  7807 = 7627 + … |`, `   |`, `REPACK         |   1404 = …`, which reads like a compose prefix).
pub fn table_cut(previous: &str, raw: &str) -> bool {
    let border =
        |s: &str| !s.is_empty() && s.bytes().all(|b| matches!(b, b'-' | b'=' | b'+' | b'|'));
    let piece = raw.trim();
    let previous = previous.trim_end();
    if border(piece) && border(previous.trim_start()) {
        // A border ends with its corner: one that does not was cut.
        return !previous.ends_with(['+', '|']);
    }
    // A row: nvidia-smi's (`| …`) or llama.cpp's (`…_print: | …`), not a line with `|` between fields.
    let row = previous.trim_start().starts_with('|') || previous.contains(": |");
    // A llama.cpp row's bar after its function name opens it (`common_memory_breakdown_print: |`, cut there
    // by a terminal whose collector prefix took the rest of the row: corpus founding-today's breakdown under
    // journald at 80 columns); any other last bar closes it.
    let closed = previous.ends_with(['|', '+']) && !previous.ends_with(": |");
    row && !border(previous.trim_start()) && !closed && piece.contains('|')
}

/// True when `raw`, after a line as wide as a terminal, reads as the rest of that line: it has a letter or
/// digit (progress dots are a line of their own), and once its blanks are skipped (a cut inside a table's
/// aligned columns leaves many) it is not a table's row or border (`|`, `+-`), a list item (`- `), a
/// Python traceback's `File "…"` or an XML element after another; unless it is the rest of a table's row or border ([`table_cut`]).
pub fn plain_cut(previous: &str, raw: &str) -> bool {
    let rest = raw.trim_start_matches([' ', '\t']);
    let Some(&first) = rest.as_bytes().first() else {
        return false;
    };
    if table_cut(previous, raw) {
        return true;
    }
    if matches!(first, b'|' | b'+') || rest.starts_with("- ") || rest.starts_with("File \"") {
        return false;
    }
    if first == b'<' && previous.trim_end().ends_with('>') {
        // The next element of an XML capture (`nvidia-smi -q -x`).
        return false;
    }
    rest.bytes().any(|b| b.is_ascii_alphanumeric())
}

/// The columns `text` takes on a terminal: its characters, raw escape sequences (`ESC [ … letter`, a colour)
/// taking none. Caret-form colours (`^[[32m`) are characters a terminal shows, and count.
pub fn columns(text: &str) -> usize {
    let b = text.as_bytes();
    if text.is_ascii() && memchr::memchr(0x1b, b).is_none() {
        return b.len();
    }
    let mut n = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for e in chars.by_ref() {
                if e.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        n += 1;
    }
    n
}

/// True when a terminal's cut between the row `previous` (the end of a held record, exactly as wide as the
/// terminal) and the next row `raw` (as printed, a paste's markup removed), which the joiner did not take for
/// the record's rest, fell inside a figure: `previous` ends inside a number or its unit and `raw` begins with
/// what would go on with it.
///
/// The rule, from how the servers print sizes (`1234.56 MiB`, `62.4 GiB`, `0 B`, `= 5`): `previous` ends
/// with a digit (or a digit and a `.`) and `raw` begins with a digit, a `.`, or a unit (`MiB`, ` GiB`, `B`);
/// or `previous` ends with a number and a space, or with the first letters of a unit (`12.5 G`, `512 Mi`),
/// and `raw` begins with the unit's rest (`iB`, `B`, `GiB`). Such a line cannot be read without a guess:
/// whether the digits of the next row are the number's rest or another line's (a line numbered `12:` or a
/// piece of another record) is what the joiner could not tell.
pub fn figure_cut(previous: &str, raw: &str) -> bool {
    let p = previous.as_bytes();
    let r = raw.as_bytes();
    let Some(&last) = p.last() else {
        return false;
    };
    let digit_before = |end: usize| end > 0 && p[end - 1].is_ascii_digit();
    // The rest of a unit: `B`, `iB`, or a whole one (`KiB`, `MB`), then no letter.
    let unit_rest = |r: &[u8], prefixes: &[u8]| {
        let mut i = 0;
        if r.first().is_some_and(|c| prefixes.contains(c)) {
            i += 1;
        }
        if r.get(i) == Some(&b'i') {
            i += 1;
        }
        r.get(i) == Some(&b'B') && !r.get(i + 1).is_some_and(u8::is_ascii_alphanumeric)
    };
    const PREFIXES: &[u8] = b"KMGTP";
    match last {
        b'0'..=b'9' => {
            matches!(r.first(), Some(b'0'..=b'9' | b'.'))
                || unit_rest(r.strip_prefix(b" ").unwrap_or(r), PREFIXES)
        }
        b'.' => digit_before(p.len() - 1) && r.first().is_some_and(u8::is_ascii_digit),
        b' ' => digit_before(p.len() - 1) && unit_rest(r, PREFIXES),
        b'i' => {
            let end = p.len() - 1;
            end > 0
                && PREFIXES.contains(&p[end - 1])
                && (digit_before(end - 1)
                    || end >= 2 && p[end - 2] == b' ' && digit_before(end - 2))
                && unit_rest(r, &[])
        }
        c if PREFIXES.contains(&c) => {
            let end = p.len() - 1;
            (digit_before(end) || end >= 1 && p[end - 1] == b' ' && digit_before(end - 1))
                && unit_rest(r, b"")
        }
        _ => false,
    }
}

/// True when `previous` ends with the first characters of a caret-form colour (`^[[0` of `^[[0m`) and `raw`
/// begins with the rest (`m`): a terminal that showed the colour cut it at its width.
pub fn caret_cut(previous: &str, raw: &str) -> bool {
    let tail_start = previous.len().saturating_sub(12);
    let Some(at) = previous.as_bytes()[tail_start..]
        .iter()
        .rposition(|&b| b == b'^')
        .map(|i| tail_start + i)
    else {
        return false;
    };
    let tail = &previous.as_bytes()[at..];
    let head = &raw.as_bytes()[..raw.len().min(12)];
    // `^[[`, digits and `;`, a letter: the tail is a proper start of it and the head its rest.
    let joined: Vec<u8> = tail.iter().chain(head).copied().collect();
    if !joined.starts_with(b"^[[") {
        return false;
    }
    let params = joined[3..]
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b';')
        .count();
    let end = 3 + params;
    joined.get(end).is_some_and(u8::is_ascii_alphabetic) && tail.len() <= end
}

/// How a physical line continues the previous logical line, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// It is a record of its own.
    No,
    /// Append with a single space between.
    WithSpace,
    /// Append directly (the paste cut a token in two).
    Glued,
    /// A shell command line continued with ` \`: drop the backslash, append with a single space.
    Shell,
}

/// True when a later line may be joined onto `record`: Go slog records, with their framing or as a
/// [`bare_message`], and a shell command line that ends in ` \` ([`shell_continued`]).
pub fn can_be_continued(record: &str) -> bool {
    record.starts_with("time=")
        || record.starts_with("level=")
        || shell_continued(record)
        || bare_message(record)
}

/// True when `record` ends in a blank and a backslash: a command line the shell continues on the next line
/// (`$ llama-server \` / `  -m model.gguf \` / `  -c 8192`), as users paste the command above a log. Two
/// byte compares per line.
pub fn shell_continued(record: &str) -> bool {
    let b = record.as_bytes();
    b.len() >= 2 && b[b.len() - 1] == b'\\' && matches!(b[b.len() - 2], b' ' | b'\t')
}

/// True when `record` is a Go slog message whose framing a paste dropped (`time=`, `level=`, `source=` and the
/// quotes of `msg="…"`): a few lower-case words, then nothing but `key=value` pairs
/// (`gpu memory id=0 library=ROCm available="7.5 GiB" free="7.9 GiB"`, `sample-logs/722-…:5`, the user's "key log
/// entries" re-wrapped by hand). No llama.cpp line is one: their first word ends in `:` or holds `_`.
pub fn bare_message(record: &str) -> bool {
    let b = record.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_lowercase) {
        return false;
    }
    // The words: lower-case letters, digits and `-`, single spaces between them; at most six of them.
    let mut i = 0;
    let mut words = 0;
    loop {
        let start = i;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        {
            i += 1;
        }
        if i == start || b.get(i) != Some(&b' ') {
            // A word that is no plain word (`n_ctx`, `load_tensors:`), or the end of the line: no pairs follow.
            if b.get(i) == Some(&b'=') && words > 0 {
                // The last "word" was the first key: step back to it.
                i = start;
                break;
            }
            return false;
        }
        words += 1;
        i += 1;
        if words > 6 {
            return false;
        }
        if starts_with_pair(&record[i..]) {
            break;
        }
    }
    // Then pairs to the end, one space between.
    let mut pairs = 0;
    while i < b.len() {
        let Some(end) = pair_end(b, i) else {
            return false;
        };
        pairs += 1;
        i = end;
        match b.get(i) {
            None => break,
            Some(b' ') => i += 1,
            Some(_) => return false,
        }
    }
    pairs > 0
}

/// Decide whether `line` (prefixes already stripped; `indented` if it was) continues `previous`.
pub fn continuation(previous: &str, line: &str, indented: bool) -> Continuation {
    if line.is_empty() || !can_be_continued(previous) {
        return Continuation::No;
    }
    if line.starts_with("time=") || line.starts_with("level=") || line.starts_with("[GIN]") {
        return Continuation::No;
    }
    if shell_continued(previous) {
        return Continuation::Shell;
    }
    if has_open_quote(previous) {
        let boundary_space = indented || previous.ends_with(' ');
        return if boundary_space {
            Continuation::WithSpace
        } else {
            Continuation::Glued
        };
    }
    if starts_with_pair(line) && (indented || previous.ends_with(' ') || !starts_record(line)) {
        return Continuation::WithSpace;
    }
    Continuation::No
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cut_inside_a_figure_is_told_from_a_cut_beside_one() {
        // Inside the number, between it and its unit, inside the unit (corpus 001's `1234.56 MiB` shapes).
        for (previous, raw) in [
            ("default_num_ctx=409", "6"),
            ("buffer size =  4403", ".49 MiB"),
            ("buffer size =  4403.", "49 MiB"),
            ("buffer size =  4403.49", " MiB"),
            ("buffer size =  4403.49 ", "MiB"),
            ("buffer size =  4403.49 M", "iB"),
            ("buffer size =  4403.49 Mi", "B"),
            ("required=\"62.4 G", "iB\""),
        ] {
            assert!(figure_cut(previous, raw), "{previous} / {raw}");
        }
        for (previous, raw) in [
            ("buffer size =  4403.49 MiB", "load_tensors: offloaded"),
            ("offloaded 33/33 layers to GPU", "12 MiB"),
            ("n_ctx = 4096", "load: x"),
            ("layers.split=", "37"),
            ("memory.gpu_o", "verhead=\"0 B\""),
            ("", "1"),
            ("size = 12 Mi", "ddle"),
        ] {
            assert!(!figure_cut(previous, raw), "{previous} / {raw}");
        }
    }

    use super::*;

    /// `sample-logs/803-…:1` (`vllm serve --trust-remote-code --tensor_parallel_size 2 …`) as a shell user
    /// continues it: each ` \` line is continued by the next, which starts no record of its own.
    #[test]
    fn a_shell_command_is_continued_after_its_backslash() {
        let first = "vllm serve --trust-remote-code \\";
        assert!(shell_continued(first) && can_be_continued(first));
        assert_eq!(
            continuation(
                first,
                "--tensor_parallel_size 2 --gpu_memory_utilization=0.98 \\",
                true
            ),
            Continuation::Shell
        );
        // A backslash that is part of a word (a Windows path) ends nothing; a log record after a ` \` line is
        // its own.
        assert!(!shell_continued(r"C:\Users\M\"));
        assert_eq!(
            continuation(first, "time=2025-08-24T08:26:00.311Z level=INFO", false),
            Continuation::No
        );
    }

    /// `sample-logs/722-ollama-030-rocm-w7500-rewrapped-key-lines-projector-cpu.log:5-6`: a `gpu memory`
    /// record pasted without its slog framing, its last two pairs wrapped onto the next line.
    #[test]
    fn a_bare_slog_message_is_continued_by_its_pairs() {
        let bare = r#"gpu memory id=0 library=ROCm available="7.5 GiB" free="7.9 GiB""#;
        assert!(bare_message(bare));
        assert!(can_be_continued(bare));
        assert_eq!(
            continuation(bare, r#"minimum="457.0 MiB" overhead="0 B""#, false),
            Continuation::WithSpace
        );
        // llama.cpp's lines, prose and a lone pair are none.
        for line in [
            "load_tensors: offloaded 33/33 layers to GPU",
            "llama_context: n_ctx = 4096",
            "clip_ctx: CLIP using CPU backend",
            "common_memory_breakdown_print:",
            "releasing nvml library",
            r#"minimum="457.0 MiB" overhead="0 B""#,
            "set a=b and go",
            "gpu memory id=0 library=ROCm available=\"7.5",
            "",
        ] {
            assert!(!bare_message(line), "{line}");
        }
        // Nothing that starts a record of its own joins it.
        assert_eq!(
            continuation(bare, "clip_ctx: CLIP using CPU backend", false),
            Continuation::No
        );
    }

    /// corpus 014:2's estimate line as `ansi-caret` shows it (`^[[32m…^[[0m`), its reset cut by a terminal.
    #[test]
    fn a_caret_colour_cut_by_a_wrap_is_told_and_counted() {
        let line = format!("^[[32m{OFFLOAD}^[[0m");
        assert_eq!(columns(&line), line.len());
        assert_eq!(columns(&format!("\x1b[32m{OFFLOAD}\x1b[0m")), OFFLOAD.len());
        for cut in 1..5 {
            let (previous, raw) = line.split_at(line.len() - 5 + cut);
            assert!(caret_cut(previous, raw), "{previous} / {raw}");
        }
        assert!(!caret_cut(OFFLOAD, "m"));
        assert!(!caret_cut(&line, "m"));
    }

    /// `sample-logs/founding-today-3090-4060-gemma4-31b.log`'s breakdown header under journald's 48-column
    /// prefix at 80 columns: the row is cut right after its opening bar.
    #[test]
    fn a_breakdown_row_cut_after_its_opening_bar_is_not_closed() {
        let previous = "common_memory_breakdown_print: |";
        let piece =
            " memory breakdown [MiB] | total    free     self   model   context   compute    ";
        assert!(table_cut(previous, piece));
        assert!(plain_cut(previous, piece));
        assert!(!table_cut(
            "common_memory_breakdown_print: |   - Host   |   1144 |",
            piece
        ));
    }

    /// The same log's `common_params_print_info` line, cut inside its function name.
    #[test]
    fn a_function_name_cut_inside_is_one_piece() {
        let previous = "common_param: common_params";
        let raw = "_print_info: build 1 (8c3a2b1f0) with MSVC 19.44.35215.0 for Windows AMD64";
        assert_eq!(plain_piece(previous, raw, raw, false), PlainPiece::Yes);
        assert_eq!(
            plain_piece("common_param: common_params ", raw, raw, false),
            PlainPiece::No
        );
    }

    #[test]
    fn rewrapped_offload_line_from_issue_9181() {
        let prev = "time=2025-02-18T02:29:51.627Z level=INFO source=server.go:130 msg=offload library=cuda layers.requested=-1 layers.model=81 ";
        assert_eq!(
            continuation(prev, "layers.offload=44 layers.split=11,11,11,11", true),
            Continuation::WithSpace
        );
    }

    #[test]
    fn a_cut_inside_a_quoted_value_is_glued() {
        let prev = "time=2025-10-01T10:00:00Z level=INFO msg=load request=\"{Operation:fit GPU";
        assert_eq!(
            continuation(prev, "Layers:[] MultiUserCache:false}\"", false),
            Continuation::Glued
        );
    }

    #[test]
    fn open_quotes_with_escapes() {
        assert!(!has_open_quote(r#"msg="a" b="c""#));
        assert!(has_open_quote(r#"msg="a \" b"#));
        assert!(!has_open_quote(r#"msg="a \\" b"#));
        assert!(!has_open_quote(r#"msg="a \\\" b""#));
        assert!(has_open_quote(r#"x=\\""#));
        assert!(!has_open_quote(r#"x=\""#));
    }

    /// corpus 014:2, cut by hand at the places named in each test.
    const OFFLOAD: &str = r#"time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload library=cuda layers.requested=49 layers.model=49 layers.offload=37 layers.split=37,0 memory.available="[11.5 GiB 4.6 GiB]" memory.gpu_overhead="0 B" memory.required.full="14.9 GiB""#;

    fn cut_after(needle: &str) -> (&'static str, &'static str) {
        OFFLOAD.split_at(OFFLOAD.find(needle).unwrap() + needle.len())
    }

    #[test]
    fn where_a_terminal_cut_falls_in_a_pair() {
        for needle in [
            "memory.gpu_o",                             // inside a key
            "layers.offload=3",                         // inside a bare value
            "layers.requested=",                        // after the `=`
            "memory.available=",                        // after the `=`, before a quoted value
            "layers.split=37,0 ",                       // after a space
            "layers.split=37,0",                        // before a space
            r#"memory.available="[11.5 GiB 4.6 GiB]""#, // before a space, after a quoted value
        ] {
            let (previous, raw) = cut_after(needle);
            assert!(slog_cut(previous, raw), "{needle}: {raw}");
        }
        // Only the end of a value says nothing; so does text that is no run of pairs.
        assert!(!slog_cut(
            "model=/usr/share/ollama/.ollama/models/blobs/sha256-6be6d66a",
            "3f546d8c19b1"
        ));
        let (previous, _) = cut_after("layers.split=37,0");
        assert!(!slog_cut(previous, "releasing nvml library"));
        assert!(!slog_cut(
            previous,
            r#"INFO [main] starting c++ runner | tid="0x1f9bab240" timestamp=1731008127"#
        ));
        // A complete pair on each side without a space is a paste that dropped it.
        assert!(!slog_cut(previous, "memory.available=1"));
        // A closing quote is followed by a space.
        assert!(!slog_cut(r#"msg="a b""#, "x=1"));
    }

    #[test]
    fn a_name_cut_after_its_underscore_goes_on_in_the_next_row() {
        // corpus 811:3, SGLang's `server_args`, cut inside `log_requests_level=0`: `level=` reads like a
        // Go slog record's start, but none begins right after a `_`.
        let previous = "[2025-03-08 12:29:04] server_args=ServerArgs(model_path='/home/model/Qwen/QwQ-32B', log_requests_";
        let raw = "level=0, show_time_cost=False, enable_metrics=True";
        assert_eq!(
            super::plain_piece(previous, raw, raw, false),
            super::PlainPiece::Yes
        );
        assert_eq!(
            super::plain_piece("msg=done", raw, raw, false),
            super::PlainPiece::No
        );
    }

    #[test]
    fn strict_record_starts() {
        for line in [
            "time=2025-05-23T17:16:43.377Z level=INFO",
            "level=INFO source=server.go:168",
            "[GIN] 2025/07/24 - 18:29:06 | 200 |            0s |       127.0.0.1 | HEAD     \"/\"",
            "load_tensors: offloaded 81/81 layers to GPU",
            "device_info:",
            "Device 0: Tesla K80, compute capability 3.7, VMM: yes",
            "INFO [main] starting c++ runner | tid=\"0x1f9bab240\" timestamp=1731008127",
            "2024/06/27 19:00:53 routes.go:1060: INFO server config",
            "Nov 30 06:05:00 host kernel: NVRM: loading",
            "|   0  NVIDIA GeForce RTX 3060        On  |   00000000:01:00.0 Off |                  N/A |",
            "+-----------------------------------------------------------------------------------------+",
        ] {
            assert!(is_record_start(line), "{line}");
        }
        // Pieces of slog records (corpus 014:2 and 009:1).
        for piece in [
            r#"verhead="0 B" memory.required.full="14.9 GiB""#,
            "0 layers.split=37,0",
            "-1 layers.model=81",
            "[37] memory.available=",
            r#""[11.5 GiB 4.6 GiB]" memory.gpu_overhead="0 B""#,
            " GiB]\"",
            "Layers:[] MultiUserCache:false}\"",
            "server.go:168 msg=offload",
            "",
        ] {
            assert!(!is_record_start(piece), "{piece}");
        }
        // Inside a quoted value a piece may read like a llama.cpp line: there only slog, [GIN] and collector
        // prefixes start records (corpus 009:1 cut before `ProjectorPath: `).
        let previous = r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false "#;
        let piece = r#"ProjectorPath: MainGPU:0 UseMmap:false}""#;
        assert!(is_record_start(piece));
        assert_eq!(wrap_piece(previous, piece, piece, false), Some(true));
        assert_eq!(wrap_piece(previous, "time=x", "time=x", false), None);
        assert!(hard_wrap(
            previous,
            previous.len(),
            false,
            piece,
            piece.len(),
            true
        ));
    }

    #[test]
    fn records_and_llama_cpp_lines_stand_alone() {
        let prev = "time=2025-08-24T08:26:00.310Z level=INFO msg=\"kv cache\" device=CUDA0 size=\"936.0 MiB\"";
        assert_eq!(
            continuation(prev, "time=2025-08-24T08:26:00.311Z level=INFO", false),
            Continuation::No
        );
        assert_eq!(
            continuation(prev, "load_tensors: offloaded 33/33 layers to GPU", false),
            Continuation::No
        );
        assert_eq!(
            continuation(prev, "releasing nvml library", false),
            Continuation::No
        );
        assert_eq!(
            continuation("llama_context: n_ctx = 4096", "size=1", true),
            Continuation::No
        );
    }
}
