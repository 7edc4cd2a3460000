//! Framing: physical byte lines in, logical text lines out, each with the 1-based number of the physical
//! line it starts on.
//!
//! The framer decodes UTF-8 lossily (a bad byte costs one character, never the line), strips collector
//! prefixes and ANSI codes (see [`prefix`]), and joins lines that a paste re-wrapped or a terminal hard-wrapped
//! (see [`join`]). It holds at most one logical line, so memory does not grow with the input; a line nothing
//! can join onto is passed on at once, without a copy.
//!
//! A paste of several files (grep output over several logs, Markdown blocks each headed by its file's name:
//! see [`source_file`]) is one input but several logs. The framer says where each named file starts
//! ([`Framed::FileStarts`], before the file's first line), and never joins a line onto a line of another
//! file, so the stages after it can split the input where a file starts.
//!
//! A llama-server router (`--models-preset`, `--models-max`) forwards each child process's lines with the
//! child's pid before them (`[34353] `, `docs/log-formats.md` §5.7). Each child loads its own model, and
//! children may run (and print) at the same time: the framer says which process each line comes from
//! ([`Framed::Process`], whenever it changes), and never joins the lines of two processes, so the stages
//! after it keep one load per child, never one child's buffers in another's load.

pub mod envelope;
pub mod join;
mod pieces;
pub mod prefix;
pub mod read;
pub mod skim;
pub mod source_file;

use join::Continuation;

/// The length of a paste's markup before a physical line, as `prefix::Stripped::markup` counts it, read
/// from the bytes alone for the skim ([`Framer::holds_for_wrap`]): Markdown quote markers (`> `), comment
/// markers (`# `), an editor's line number (`  12 | `) and `grep -n`'s (`12:`).
fn markup_len(b: &[u8]) -> usize {
    let mut i = 0;
    loop {
        match b.get(i) {
            Some(b'>') => i += 1 + usize::from(b.get(i + 1) == Some(&b' ')),
            Some(b'#') if b.get(i + 1) == Some(&b' ') => i += 2,
            Some(c) if c.is_ascii_digit() || *c == b' ' => {
                let spaces = b[i..].iter().take_while(|&&c| c == b' ').count();
                let digits = b[i + spaces..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                let j = i + spaces + digits;
                if digits == 0 || digits > 7 {
                    return i;
                } else if b[j..].starts_with(b" | ") {
                    i = j + 3;
                } else if spaces == 0 && b.get(j) == Some(&b':') {
                    i = j + 1;
                } else {
                    return i;
                }
            }
            _ => return i,
        }
    }
}

/// The columns a physical row takes on a terminal ([`join::columns`]), its bytes decoded lossily.
fn row_columns(row: &[u8]) -> usize {
    // Borrowed, no copy, when the row is valid UTF-8.
    join::columns(&String::from_utf8_lossy(row))
}

/// The most blanks a terminal's row after a collector's prefixed row begins with and still be its rest (the
/// cut fell in a padded column: `[GIN] … | 500 |       ` / `   1m0s | …`, Gin pads a duration to 13
/// columns); journald indents the next lines of a message of several lines by its prefix's width, more.
const MAX_CUT_BLANKS: usize = 16;

/// A logical line bigger than this is not extended further by joining.
const MAX_JOINED_BYTES: usize = 1 << 20;

/// Turns physical lines into logical lines, one behind.
#[derive(Debug, Default)]
pub struct Framer {
    pending: String,
    pending_line: u64,
    has_pending: bool,
    /// The pending record as the first pieces of a terminal hard wrap.
    wrap: Wrap,
    /// The width (in characters) at which a record of this input was seen hard-wrapped, 0 if none: a later
    /// record cut at the same width needs no other evidence ([`join::hard_wrap`]). A longer line resets it.
    wrap_width: usize,
    /// Number of physical lines joined onto a previous one.
    pub joined_lines: u64,
    /// The file the lines come from, as the paste last named it (a grep prefix or a header); `None` until one
    /// is named.
    file: Option<String>,
    /// A grep prefix was seen in this input: its `--` lines are grep's separators.
    grep: bool,
    /// The router's child process the lines come from (`None`: the router itself), once a router's `[pid] `
    /// prefix was seen in this input; `routed` says one was.
    process: Option<String>,
    routed: bool,
    /// The held record's last piece was partial (a container runtime's `P` line, a `json-file` piece without
    /// its `\n`): the next piece is glued onto it as it is.
    glue: bool,
    /// The held record is no slog record (nothing joins onto it by the re-wrap rules): it is held only as
    /// the first piece of a possible hard wrap, which needs the evidence of [`join::plain_wrap`].
    plain: bool,
    /// The `grep -n` number (`12:`) the last physical row began with, if it began with one.
    line_number: Option<u64>,
    /// Caret-form colours (`^[[32m`) were seen in this input: a terminal's cut may fall inside one.
    carets: bool,
    /// The collector whose prefix the held record's first row carried (`prefix::Stripped::collector`): a row
    /// that does not begin with the same, where the terminal cut it, is its rest whatever it reads like
    /// ([`Framer::hard_wrap`]).
    held_collector: Option<prefix::Collector>,
    /// The paste's markup the held record's first row began with (`prefix::Stripped::markup`), if any.
    held_markup: String,
    /// The held record's last row ended with a colour's reset (`^[[0m`): a terminal that coloured the
    /// record whole reset it at its end, so a row after it that sets a colour is another record.
    held_reset: bool,
    /// The rows of a container runtime's stored line that a terminal hard-wrapped, glued as they came
    /// ([`Framer::feed`]); empty when none is held.
    rows: Vec<u8>,
    /// The physical line the held rows start on, their width in columns, how many were glued on.
    rows_line: u64,
    rows_width: usize,
    /// How many bytes of the held rows' first are a paste's markup.
    rows_markup: usize,
    rows_glued: u64,
    /// What this input's CRI `P` pieces show: their size, and whether a trim took blanks off them.
    pieces: pieces::Pieces,
}

/// What the framer hands out, in input order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framed<'a> {
    /// A logical line and the physical line it starts on.
    Line(u64, &'a str),
    /// The paste names a file other than the one its lines came from so far, at physical line `line` (a grep
    /// prefix or a header line, see [`source_file`]): the lines from here on are that file's.
    FileStarts { line: u64, name: &'a str },
    /// The lines from physical line `line` on come from another process of a llama-server router: the child
    /// whose pid is `pid`, or the router itself (`None`). Said only once a router's prefix was seen, and
    /// each time the process changes.
    Process { line: u64, pid: Option<&'a str> },
    /// The logical line handed out next (the one starting on physical line `line`) ends where a terminal cut
    /// it at `width` columns inside a figure, and the next row was not joined onto it
    /// ([`join::figure_cut`]): what it prints there cannot be read without a guess.
    Cut { line: u64, width: usize },
}

/// Where the paste's markup `held` (a held row's) ends in `markup` (a later row's), the two having the same
/// shape there: the same bytes, a line number (with the blanks aligning it) standing for any (`31:` and
/// `32:8 | `: 3; `  9 | ` and ` 10 | 2:28`: 6). `None`
/// when `markup` does not begin as `held` does.
fn same_markup_end(markup: &[u8], held: &[u8]) -> Option<usize> {
    let (m, h) = (markup, held);
    // A number with the blanks that align it (`  9 | ` and ` 10 | `).
    let number = |b: &[u8], k: usize| {
        let run = b[k..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b' ')
            .count();
        let digit = b[k..k + run].iter().any(u8::is_ascii_digit);
        digit.then_some(run)
    };
    let (mut i, mut j) = (0, 0);
    while j < h.len() {
        if let Some(dh) = number(h, j) {
            let dm = number(m, i)?;
            (i, j) = (i + dm, j + dh);
        } else if m.get(i) == Some(&h[j]) {
            (i, j) = (i + 1, j + 1);
        } else {
            return None;
        }
    }
    Some(i)
}

/// True when the physical row `decoded` ends with a colour's reset, raw or in caret form (`ESC[0m`, `^[[m`).
fn ends_with_reset(decoded: &str) -> bool {
    let row = decoded.trim_end();
    ["\x1b[0m", "\x1b[m", "^[[0m", "^[[m"]
        .iter()
        .any(|reset| row.ends_with(reset))
}

/// A physical row offered to a held record as the next piece of a hard wrap ([`Framer::hard_wrap`]).
#[derive(Debug, Clone, Copy)]
struct Row<'a> {
    /// The row as the terminal printed it (a paste's markup removed).
    raw: &'a str,
    /// `raw` with its prefixes stripped.
    line: &'a str,
    /// The collector whose prefix `raw` begins with.
    collector: Option<prefix::Collector>,
    /// A server's logger prefixed `raw` (`prefix::Stripped::logger`): a record of its own.
    logger: bool,
}

/// Where the pending record stands as a hard-wrap candidate. Its width is measured only when a line that
/// could continue it arrives, so the usual record followed by another record costs no character count.
#[derive(Debug, Default, Clone, Copy)]
enum Wrap {
    /// Not a candidate: too short, or joined by the re-wrap rules.
    #[default]
    No,
    /// Not measured yet; the collector prefix stripped from its first piece was this many characters.
    Unmeasured { prefix_chars: usize },
    /// Every physical piece so far was this many characters long, prefix included.
    Width(usize),
}

impl Framer {
    /// A framer for one input (the wrap width it learns belongs to that input).
    pub fn new() -> Self {
        Framer::default()
    }

    /// True when a line that the framer would hand out unchanged, without holding it, leaves the framer as it
    /// is: no record is held (a line could continue it) and no hard-wrap width is known (a longer line
    /// resets it). Lines holding none of `skim`'s literals may then be skipped (see [`skim`]).
    pub fn is_quiet(&self) -> bool {
        !self.has_pending && self.wrap_width == 0 && self.rows.is_empty()
    }

    /// Feed one physical line. When it completes the previous logical line, `emit` receives that line.
    /// Where a file of a paste starts is not said: [`Framer::feed`] says it.
    pub fn push(&mut self, number: u64, bytes: &[u8], mut emit: impl FnMut(u64, &str)) {
        self.feed(number, bytes, |framed| match framed {
            Framed::Line(n, text) => emit(n, text),
            Framed::FileStarts { .. } | Framed::Process { .. } | Framed::Cut { .. } => {}
        });
    }

    /// Feed one physical line. When it completes the previous logical line, `emit` receives that line; when
    /// it starts another file of a paste, `emit` receives [`Framed::FileStarts`] first (after the last line
    /// of the previous file).
    pub fn feed(&mut self, number: u64, bytes: &[u8], mut emit: impl FnMut(Framed<'_>)) {
        if !self.rows.is_empty() {
            // The paste's markup is the first row's, on every row: more than that is the line's text (`01:`
            // of `pci_id=0000:` / `01:00.0 …`, which reads like a line number).
            let markup = markup_len(bytes);
            let held = &self.rows[..self.rows_markup];
            let markup =
                same_markup_end(&bytes[..markup], held).map_or(markup, |end| end.min(markup));
            let row = &bytes[markup..];
            if self.envelope_row_continues(row) {
                self.rows.extend_from_slice(row);
                self.rows_glued += 1;
                if row_columns(row) < self.rows_width {
                    self.flush_rows(&mut emit);
                }
                return;
            }
            self.flush_rows(&mut emit);
        }
        if let Some(width) = self.envelope_row_starts(bytes) {
            self.rows.extend_from_slice(bytes);
            self.rows_line = number;
            self.rows_width = width;
            self.rows_markup = markup_len(bytes);
            return;
        }
        self.frame(number, bytes, emit);
    }

    /// The width of the physical line `bytes` when it is the first row of a container runtime's stored line
    /// that a terminal hard-wrapped, and the rows after it are to be glued on before the line is framed
    /// ([`Framer::envelope_row_continues`]): it begins the envelope (after a paste's markup and colours) and
    /// is exactly as wide as a terminal or as this input's known wrap width, and the envelope needs the rest
    /// of the line: a `json-file` object that does not close, or a CRI piece that is partial (`P`) or
    /// completes a partial one (the rows of a CRI line written whole are left to [`join::hard_wrap`]).
    fn envelope_row_starts(&self, bytes: &[u8]) -> Option<usize> {
        if bytes.len() < join::TERMINAL_WIDTHS[0] {
            return None;
        }
        let row = &bytes[markup_len(bytes)..];
        if !matches!(row.first(), Some(b'0'..=b'9' | b'{' | 0x1b | b'^')) {
            return None;
        }
        let row = std::str::from_utf8(row).ok()?;
        let width = join::columns(row);
        if !(join::TERMINAL_WIDTHS.contains(&width) || width == self.wrap_width) {
            return None;
        }
        let plain = prefix::strip_ansi(row);
        let cri_partial = prefix::starts_envelope(&plain)?;
        let needs_rest = if plain.starts_with('{') {
            // The object closes its line: a row that does not end with `}` was cut.
            !plain.trim_end().ends_with('}')
        } else {
            cri_partial || self.glue
        };
        needs_rest.then_some(width)
    }

    /// True when `row` (its markup removed) is the next row of the held rows: no wider than they are, and no
    /// envelope of its own (each stored line begins with one; a terminal's cut never leaves one).
    fn envelope_row_continues(&self, row: &[u8]) -> bool {
        if row.is_empty() || row_columns(row) > self.rows_width {
            return false;
        }
        match std::str::from_utf8(row) {
            Ok(text) => prefix::starts_envelope(&prefix::strip_ansi(text)).is_none(),
            Err(_) => true,
        }
    }

    /// Frame the held rows as the one physical line they were before the terminal cut them.
    fn flush_rows(&mut self, emit: &mut impl FnMut(Framed<'_>)) {
        let rows = std::mem::take(&mut self.rows);
        self.joined_lines += std::mem::take(&mut self.rows_glued);
        self.frame(self.rows_line, &rows, &mut *emit);
        self.rows = rows;
        self.rows.clear();
    }

    /// Frame one physical line (or the rows of one, glued back by [`Framer::feed`]).
    fn frame(&mut self, number: u64, bytes: &[u8], mut emit: impl FnMut(Framed<'_>)) {
        // Checking first is much faster than the lossy decoder on the (usual) valid line.
        let text = match std::str::from_utf8(bytes) {
            Ok(valid) => std::borrow::Cow::Borrowed(valid),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        let decoded = text;
        let text = prefix::strip_ansi(&decoded);
        // The bytes as the writer stored them: valid, no colour (a container runtime's piece is measured).
        let as_stored = matches!(decoded, std::borrow::Cow::Borrowed(_))
            && matches!(text, std::borrow::Cow::Borrowed(_));
        // A terminal that shows caret-form colours counts them in its width: the columns they took.
        let carets = match text {
            std::borrow::Cow::Owned(_) => prefix::caret_columns(&decoded),
            std::borrow::Cow::Borrowed(_) => 0,
        };
        self.carets |= carets > 0;
        // Docker's json-file envelope changes the line itself (its escapes): opened before any prefix is
        // stripped (see [`envelope`]), and the colours its text held removed after.
        let (text, json_markup, json_partial) = match envelope::open(&text) {
            Some((opened, markup, partial)) => {
                let opened = match prefix::strip_ansi(&opened) {
                    std::borrow::Cow::Owned(plain) => plain,
                    std::borrow::Cow::Borrowed(_) => opened,
                };
                (std::borrow::Cow::Owned(opened), Some(markup), partial)
            }
            None => (text, None, false),
        };
        // `grep -n`'s number that follows the previous row's (`2:` after `1:`) is markup, whatever follows it:
        // a terminal's row that begins with digits (`2:11,11 memory…`, the rest of `layers.split=11,11,`) can
        // read like a time after it, which `prefix::strip_prefixes` alone leaves in the line.
        let numbered = self.next_line_number(&text, json_markup.is_none());
        let (mut line, mut stripped) = prefix::strip_prefixes(&text[numbered..]);
        if numbered > 0 {
            stripped.markup += numbered;
            stripped.envelope_end = stripped.envelope_end.map(|end| end + numbered);
        }
        // The line as the terminal printed it: a paste's markup came after any wrap (see `Stripped::markup`).
        let printed = &text[stripped.markup..];
        let partial = json_partial || stripped.partial;
        let cri_piece = (as_stored && json_markup.is_none())
            .then_some(stripped.envelope_end)
            .flatten()
            .and_then(|end| self.cri_piece(&text, end, stripped.partial));
        if std::mem::take(&mut self.glue) && self.has_pending {
            if let Some(start) = json_markup.or(stripped.envelope_end) {
                // The rest of a partial line: its text as the runtime stored it, nothing else stripped.
                let piece = &text[start.min(text.len())..];
                if json_markup.is_none() {
                    let lost = self.pieces.lost_blanks(piece);
                    self.pending.extend(std::iter::repeat_n(' ', lost));
                }
                self.pieces.hold(cri_piece.filter(|_| partial));
                self.pending.push_str(piece);
                self.joined_lines += 1;
                self.wrap = Wrap::No;
                self.glue = partial;
                if !partial && !join::can_be_continued(&self.pending) {
                    self.has_pending = false;
                    emit(Framed::Line(self.pending_line, &self.pending));
                }
                return;
            }
        }
        if let Some(name) = stripped.file {
            self.grep = true;
            if self.file.as_deref() != Some(name) {
                self.start_file(number, name, &mut emit);
            }
        } else if self.grep && source_file::is_grep_separator(line) {
            line = "";
        }
        // Another process's line: in a router's log it never joins the held line; before any router prefix
        // was seen, `[37] ` may still be the piece of a wrapped line (then it is no process).
        let other_process =
            (stripped.pid.is_some() || self.routed) && self.process.as_deref() != stripped.pid;
        if other_process && self.routed {
            self.start_process(number, stripped.pid, &mut emit);
        }
        if self.wrap_width > 0
            && printed.len() + carets > self.wrap_width
            && printed.chars().count() + carets > self.wrap_width
        {
            // A terminal never prints a line longer than its width: this input is not wrapped there.
            self.wrap_width = 0;
        }
        if let Some(rank) = stripped.rank {
            // A vLLM or SGLang line naming its rank is a record of its own: nothing joins onto it or it onto
            // anything, and its rank stays before the payload (`prefix::rank_tag`).
            if self.has_pending {
                self.hand_out_held(printed, line, &mut emit);
            }
            self.wrap = Wrap::No;
            if partial {
                self.hold(number, &prefix::rank_tag(rank, line));
                self.pieces.hold(cri_piece);
                self.held_collector = stripped.collector;
                return;
            }
            if self.terminal_wide(printed, carets) {
                // Held as the first piece of a possible hard wrap; its width is the line as printed (the
                // rank tag replaced the prefix).
                self.hold(number, &prefix::rank_tag(rank, line));
                self.glue = false;
                self.plain = true;
                self.held_row(&stripped, &text, &decoded);
                self.wrap = Wrap::Width(printed.chars().count() + carets);
                return;
            }
            emit(Framed::Line(number, &prefix::rank_tag(rank, line)));
            return;
        }
        if self.has_pending && self.pending.len() < MAX_JOINED_BYTES {
            // The usual next line is the next record: no hard-wrap check for it.
            let record = line.starts_with("time=") || line.starts_with("[GIN]");
            if self.carets
                && (join::caret_cut(&self.pending, printed) || carets > 0 && printed.is_empty())
                && !matches!(self.wrap, Wrap::No)
            {
                // The rest of a colour's reset that the terminal cut, or the reset alone on the last row: the
                // record ends with it.
                self.pending.push_str(printed);
                self.joined_lines += 1;
                self.remove_carets();
                self.has_pending = false;
                self.wrap = Wrap::No;
                emit(Framed::Line(self.pending_line, &self.pending));
                return;
            }
            // A row that begins with a colour is a record the terminal coloured, not the rest of one: never
            // after a row that reset the colour at its end, and never the rest of a collector's row.
            let coloured = !record
                && json_markup.is_none()
                && decoded
                    .get(stripped.markup..)
                    .is_some_and(|row| row.starts_with('\x1b') || row.starts_with("^[["));
            let wrapped = if record || coloured && self.held_reset {
                None
            } else {
                let row = match self.markup_misread(&text, stripped.markup) {
                    Some(rest) => Row {
                        raw: rest,
                        line: rest,
                        collector: None,
                        logger: false,
                    },
                    None => Row {
                        raw: printed,
                        line,
                        collector: stripped.collector,
                        logger: stripped.logger,
                    },
                };
                self.hard_wrap(row, carets, coloured)
                    .map(|full| (full, row.raw))
            };
            if let Some((full, raw)) = wrapped {
                // The piece as printed, prefix-like text and spaces included: the cut was mid-record.
                self.pending.push_str(raw);
                self.joined_lines += 1;
                self.held_reset = ends_with_reset(&decoded);
                if self.carets {
                    self.remove_carets();
                }
                if self.plain {
                    self.strip_joined_prefix();
                }
                if !full {
                    // A piece shorter than the width ends the terminal's rows of the record; a slog record
                    // stays held, as one never cut is, for the lines a paste re-wrapped it into (corpus 722's
                    // `level=INFO source=…` / `msg="…"` under `kubectl --prefix` at 80 columns).
                    self.wrap = Wrap::No;
                    if !join::can_be_continued(&self.pending) || join::has_open_quote(&self.pending)
                    {
                        self.has_pending = false;
                        emit(Framed::Line(self.pending_line, &self.pending));
                    }
                }
                return;
            }
            match self.continuation(line, &stripped) {
                Continuation::No => {}
                Continuation::WithSpace => {
                    let keep = self.pending.trim_end().len();
                    self.pending.truncate(keep);
                    self.pending.push(' ');
                    self.pending.push_str(line);
                    self.joined_lines += 1;
                    self.continued_by(printed, carets, &text, &stripped, &decoded);
                    return;
                }
                Continuation::Glued => {
                    self.pending.push_str(line);
                    self.joined_lines += 1;
                    self.continued_by(printed, carets, &text, &stripped, &decoded);
                    return;
                }
                Continuation::Shell => {
                    // `… \` then `  -c 8192`: the backslash and the blanks around the break become one space.
                    let keep = self.pending[..self.pending.len() - 1].trim_end().len();
                    self.pending.truncate(keep);
                    self.pending.push(' ');
                    self.pending.push_str(line.trim_start());
                    self.joined_lines += 1;
                    self.wrap = Wrap::No;
                    return;
                }
            }
        }
        if other_process && !self.routed {
            self.start_process(number, stripped.pid, &mut emit);
        }
        if self.has_pending {
            self.hand_out_held(printed, line, &mut emit);
        }
        if let Some(name) = source_file::header(line) {
            // A header stands on a line of its own: a line joined onto the record above is no header.
            if self.file.as_deref() != Some(name) {
                self.start_file(number, name, &mut emit);
            }
        }
        if partial {
            // The line goes on in the next piece: held, whatever it is.
            self.hold(number, line);
            self.pieces.hold(cri_piece);
            self.held_collector = stripped.collector;
            self.wrap = Wrap::No;
        } else if join::can_be_continued(line) || self.terminal_wide(printed, carets) {
            // A slog record, which later lines may continue; or any other line as wide as a terminal, the
            // first piece of a hard wrap, perhaps, held only for that (`plain`).
            self.plain = !join::can_be_continued(line);
            self.held_row(&stripped, &text, &decoded);
            self.pending.clear();
            self.pending.push_str(line);
            self.pending_line = number;
            self.has_pending = true;
            // Bytes bound characters from above: a line shorter in bytes cannot be a wide enough piece.
            self.wrap = if printed.len() + carets >= join::MIN_WRAP_WIDTH {
                let prefix = &printed[..printed.len() - line.len()];
                let prefix_chars = if prefix.is_ascii() {
                    prefix.len()
                } else {
                    prefix.chars().count()
                };
                Wrap::Unmeasured {
                    prefix_chars: prefix_chars + carets,
                }
            } else {
                Wrap::No
            };
        } else {
            // Nothing can join onto it, so it need not wait (or be copied) for the next line.
            self.has_pending = false;
            emit(Framed::Line(number, line));
        }
    }

    /// The held record was continued by the row `printed` (a paste re-wrapped it): a terminal may have cut
    /// that row too, so when it is as wide as a terminal the next piece of a hard wrap is looked for after it,
    /// with the collector, markup and colour it began and ended with ([`Framer::held_row`]).
    fn continued_by(
        &mut self,
        printed: &str,
        carets: usize,
        text: &str,
        stripped: &prefix::Stripped<'_>,
        decoded: &str,
    ) {
        self.wrap = if self.terminal_wide(printed, carets) {
            self.held_row(stripped, text, decoded);
            Wrap::Width(join::columns(printed) + carets)
        } else {
            Wrap::No
        };
    }

    /// Remember what the row the held record's next piece follows began and ended with: its collector's
    /// prefix and paste markup (`stripped`, `text` as framed), and whether it reset its colour (`decoded`,
    /// the row as read) — what [`Framer::hard_wrap`] compares the next row with.
    fn held_row(&mut self, stripped: &prefix::Stripped<'_>, text: &str, decoded: &str) {
        self.held_collector = stripped.collector;
        self.held_reset = ends_with_reset(decoded);
        self.held_markup.clear();
        self.held_markup.push_str(&text[..stripped.markup]);
    }

    /// How `line` (stripped as `stripped` says) continues the held record by the re-wrap rules
    /// ([`join::continuation`]). A line a collector stamped (journald, a container runtime's envelope,
    /// kubectl…) is no rest of a held record that came without a collector's prefix: a collector writes
    /// every line it stores with its own prefix, and a paste's re-wrap leaves the rest of a record without
    /// one, so the two lines come from two writers (another process's `level=info …` line between a
    /// container's pieces, corpus 1038 under the CRI format). A line a server's logger prefixed (SGLang's
    /// time, vLLM's level and source) is a record of its own.
    fn continuation(&self, line: &str, stripped: &prefix::Stripped<'_>) -> Continuation {
        if stripped.logger || stripped.collector.is_some() && self.held_collector.is_none() {
            return Continuation::No;
        }
        join::continuation(&self.pending, line, stripped.indented)
    }

    /// The length of the CRI piece whose text (after `stderr P `) starts at `end` of `text`, a line as the
    /// runtime stored it, after telling [`pieces::Pieces`] what it shows (`partial`: a `P` piece).
    fn cri_piece(&mut self, text: &str, end: usize, partial: bool) -> Option<usize> {
        let piece = text.get(end..)?;
        self.pieces.seen(piece, partial);
        Some(piece.len())
    }

    /// The length of the `grep -n` number (`12:`, after a Markdown quote's `> ` if any) `text` begins with
    /// when it follows the number the previous physical row began with (`11:`), else 0; the number is
    /// remembered for the next row either way.
    fn next_line_number(&mut self, text: &str, counted: bool) -> usize {
        let b = text.as_bytes();
        // A Markdown quote goes around the numbered rows (`> 3:59 MiB`).
        let quote = b.iter().take_while(|&&c| c == b'>' || c == b' ').count();
        let digits = b[quote..]
            .iter()
            .take(8)
            .take_while(|c| c.is_ascii_digit())
            .count();
        let end = quote + digits;
        let number = (counted && (1..=7).contains(&digits) && b.get(end) == Some(&b':'))
            .then(|| text[quote..end].parse::<u64>().ok())
            .flatten();
        let follows = number.is_some() && number == self.line_number.map(|n| n + 1);
        self.line_number = number;
        if follows {
            end + 1
        } else {
            0
        }
    }

    /// Hand out the held record because the row `printed` (a paste's markup removed; `line` once prefixes
    /// are stripped too) does not continue it; first [`Framed::Cut`] when the record's last row was exactly
    /// as wide as a terminal, the row carries no prefix of its own (a collector's or a server's prefix starts
    /// a record: the held one was complete) and the cut between the two fell inside a figure
    /// ([`join::figure_cut`]): the joiner could not tell the row for the figure's rest.
    fn hand_out_held(&mut self, printed: &str, line: &str, emit: &mut impl FnMut(Framed<'_>)) {
        self.has_pending = false;
        // The last byte first: most records end in no figure, and their width is never counted.
        if line.len() == printed.len() && join::figure_cut(&self.pending, printed) {
            if let Some(width) = self.held_row_width() {
                emit(Framed::Cut {
                    line: self.pending_line,
                    width,
                });
            }
        }
        emit(Framed::Line(self.pending_line, &self.pending));
    }

    /// The width of the held record's last row when it is exactly as wide as a terminal
    /// ([`join::TERMINAL_WIDTHS`]) or as this input's known wrap width; `None` otherwise, or when the record
    /// was joined by the re-wrap rules (no terminal's row).
    fn held_row_width(&self) -> Option<usize> {
        let width = match self.wrap {
            Wrap::No => return None,
            Wrap::Width(width) => width,
            Wrap::Unmeasured { prefix_chars } => prefix_chars + self.pending.chars().count(),
        };
        (join::TERMINAL_WIDTHS.contains(&width) || width == self.wrap_width).then_some(width)
    }

    /// True when the physical line `text` is exactly as wide as a terminal ([`join::TERMINAL_WIDTHS`]) or as
    /// this input's known wrap width: a line that is no slog record is held for a hard wrap only then.
    fn terminal_wide(&self, text: &str, carets: usize) -> bool {
        if text.len() + carets < join::MIN_WRAP_WIDTH {
            return false;
        }
        let chars = carets
            + if text.is_ascii() {
                text.len()
            } else {
                text.chars().count()
            };
        join::TERMINAL_WIDTHS.contains(&chars) || chars == self.wrap_width
    }

    /// True when the framer, quiet ([`Framer::is_quiet`]), may hold the physical line `bytes` for a hard
    /// wrap (`Framer::terminal_wide`, the known width being none when quiet): as many bytes as a
    /// terminal's width (and a paste's markup), or more, up to four per character, with a byte past ASCII
    /// in its first 64 (a month in another script; a line whose only such bytes come later is missed). A line for which this is
    /// false is handed out at once if it holds no literal, so the skim may skip it (`super::read`).
    pub fn holds_for_wrap(bytes: &[u8]) -> bool {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let n = bytes.len();
        if n < join::TERMINAL_WIDTHS[0] {
            return false;
        }
        if join::TERMINAL_WIDTHS.contains(&(n - markup_len(bytes))) {
            return true;
        }
        // More bytes than characters: a line past ASCII, looked for in its first bytes only (where a
        // collector's prefix writes a month in another script), so a skipped line is never read in full.
        n > join::TERMINAL_WIDTHS[0]
            && n <= 4 * join::TERMINAL_WIDTHS[join::TERMINAL_WIDTHS.len() - 1]
            && !bytes[..64].is_ascii()
    }

    /// Hold `line` (physical line `number`) as a partial line whose next piece is glued on.
    fn hold(&mut self, number: u64, line: &str) {
        self.plain = false;
        self.pending.clear();
        self.pending.push_str(line);
        self.pending_line = number;
        self.has_pending = true;
        self.glue = true;
    }

    /// When `raw` (whose stripped form is `line`) is the next piece of the pending record's hard wrap:
    /// `Some(true)` if it is as wide as the others (more may follow), `Some(false)` if it is the last. `coloured`:
    /// the row as printed begins with a colour.
    fn hard_wrap(&mut self, row: Row<'_>, carets: usize, coloured: bool) -> Option<bool> {
        if matches!(self.wrap, Wrap::No) {
            return None;
        }
        let Row { raw, line, .. } = row;
        if row.logger && !self.plain {
            // The rest of a slog record never begins with a server logger's prefix.
            return None;
        }
        // What the line is, first: the usual next record is rejected here, before anything is measured.
        let blanks = raw.len() - raw.trim_start_matches([' ', '\t']).len();
        let prefixed = line.len() + blanks < raw.len();
        // Every row a collector wrote begins with its prefix, in the same shape; a terminal's next row does
        // not. After a prefixed row as wide as the terminal, a row without it is that row's rest, even when it
        // reads like a record (`… common_param: common_params_p` / `rint_info: build 1 …`, corpus 511 under
        // journald at 80 columns) or begins like another prefix (`… | 200 |  37.34` / `666911s |      172…`,
        // a compose prefix of another width); the widths still decide below. A row that reads like a record
        // is taken only where this input was already seen cut at the held row's width, or where it may be a
        // piece by the rules for lines without a collector (`join::plain_piece`: `… VMM: yes, V` / `RAM:
        // 24159 MiB`): a line of another source without the collector's prefix (a server's own lines pasted
        // between journald's, `srv         start: …`) may follow a prefixed line that is as wide as a
        // terminal by chance.
        let collector_cut = self
            .held_collector
            .is_some_and(|held| row.collector != Some(held) && !held.begins(raw))
            && blanks < MAX_CUT_BLANKS
            && !raw.is_empty()
            && !coloured
            // A Markdown fence closing the paste is the paste's, not the record's.
            && !(raw.starts_with("```") || raw.starts_with("~~~"))
            && (row.collector.is_none() && !join::is_record_start(line.trim_start())
                || self.held_width() == Some(self.wrap_width)
                || join::plain_piece(&self.pending, raw, line, prefixed) != join::PlainPiece::No);
        let piece = if self.plain {
            if collector_cut || prefixed && self.completes_a_prefix(raw) {
                join::PlainPiece::Yes
            } else {
                join::plain_piece(&self.pending, raw, line, prefixed)
            }
        } else {
            join::PlainPiece::Yes
        };
        let open = match piece {
            join::PlainPiece::No => return None,
            _ if self.plain => false,
            _ if collector_cut => join::has_open_quote(&self.pending),
            _ => join::wrap_piece(&self.pending, raw, line, prefixed)?,
        };
        let width = self.held_width()?;
        // Exact when it can matter: fewer bytes than `width` is fewer characters, and only the comparison
        // with `width` is used.
        let raw_chars = carets
            + if raw.len() + carets < width {
                raw.len()
            } else {
                raw.chars().count()
            };
        let known = self.wrap_width == width;
        if piece == join::PlainPiece::IfWidthKnown && !known {
            return None;
        }
        let collector_wrap = collector_cut
            && width >= join::MIN_WRAP_WIDTH
            && (join::TERMINAL_WIDTHS.contains(&width) || known)
            && raw_chars <= width;
        let wrapped = collector_wrap
            || if self.plain {
                join::plain_wrap(&self.pending, width, known, raw, raw_chars)
            } else {
                join::hard_wrap(&self.pending, width, known, raw, raw_chars, open)
            };
        if !wrapped {
            return None;
        }
        self.wrap_width = width;
        Some(raw_chars == width)
    }

    /// The width of the held record's pieces so far (measured once), `None` when it is no hard-wrap candidate.
    fn held_width(&mut self) -> Option<usize> {
        match self.wrap {
            Wrap::No => None,
            Wrap::Width(width) => Some(width),
            Wrap::Unmeasured { prefix_chars } => {
                let width = prefix_chars + self.pending.chars().count();
                self.wrap = Wrap::Width(width);
                Some(width)
            }
        }
    }

    /// The row `text` as the terminal printed it when what was read as its markup (its first `markup` bytes)
    /// is more than the paste's: a paste puts the same markup on every row (a quote marker, a comment marker,
    /// a line number), so after a collector's row, what this row's markup has beyond the held row's is the
    /// record's text (`… | task 133` / `8 | processing task…`, `… INFO 05-03 17:` / `> 49:37 [utils.py:233]
    /// …`, `31:… task 133` / `32:8 | processing…`). `None` when the markup is the held row's.
    fn markup_misread<'t>(&self, text: &'t str, markup: usize) -> Option<&'t str> {
        self.held_collector?;
        let end = same_markup_end(&text.as_bytes()[..markup], self.held_markup.as_bytes())?;
        (end < markup).then(|| &text[end..])
    }

    /// Remove the caret-form colours of the held record that the pieces joined so far completed (a terminal
    /// cut one: `^[[0` / `m`).
    fn remove_carets(&mut self) {
        if let std::borrow::Cow::Owned(plain) = prefix::strip_ansi(&self.pending) {
            self.pending = plain;
        }
    }

    /// The held record's payload (after a rank tag), whatever prefix it still begins with.
    fn held_payload(&self) -> (&str, &str) {
        let tag_end = if self.pending.starts_with("[rank=") {
            self.pending.find("] ").map_or(0, |i| i + 2)
        } else {
            0
        };
        self.pending.split_at(tag_end)
    }

    /// True when the held plain record and the physical line `raw`, whose start reads as a prefix, are one
    /// prefix cut by a terminal: the server's prefix the record begins with runs on into `raw` (`… INFO
    /// 03-17 17:07:06` / ` [gpu_worker.py:452] Available KV cache memory: …`, the source field alone being a
    /// prefix too).
    fn completes_a_prefix(&self, raw: &str) -> bool {
        let (_, payload) = self.held_payload();
        // Only a server's prefix begins the held record: vLLM's process (`(Worker_TP0 p`) or logger level
        // (`INFO 03-1`), SGLang's bracket. Any other text may be followed by a collector's next record, whose
        // prefix reads after a few words of it too (journald's allows words before its time).
        let level = payload
            .split(' ')
            .next()
            .is_some_and(|w| matches!(w, "DEBUG" | "INFO" | "WARNING" | "ERROR" | "CRITICAL"));
        if !(level || payload.starts_with(['(', '['])) {
            return false;
        }
        let joined = format!("{payload}{raw}");
        let (line, _) = prefix::strip_prefixes(&joined);
        joined.len() - line.len() > payload.len()
    }

    /// Strip the prefixes the joined pieces of a held plain record completed: a narrow terminal leaves a
    /// collector's prefix so little of the row that the server's own prefix (vLLM's `(Worker_TP0 pid=…)
    /// INFO … [gpu_worker.py:452] `) is cut across rows and read only once they are joined. A rank it names
    /// stays before the payload, as on a line that was never cut.
    fn strip_joined_prefix(&mut self) {
        // A rank the first piece named is already before the payload (`[rank=TP0] INFO 03-1` / `7-17 …`).
        let (tag, payload) = self.held_payload();
        let (line, stripped) = prefix::strip_prefixes(payload);
        if line.len() == payload.len() {
            return;
        }
        self.pending = match stripped.rank {
            Some(rank) if tag.is_empty() => prefix::rank_tag(rank, line),
            _ => format!("{tag}{line}"),
        };
    }

    /// The lines from physical line `number` on are the file `name`'s: the held line (the previous file's)
    /// is handed out first, and nothing learnt of the previous file's wrapping carries over.
    fn start_file(&mut self, number: u64, name: &str, emit: &mut impl FnMut(Framed<'_>)) {
        if self.has_pending {
            self.has_pending = false;
            emit(Framed::Line(self.pending_line, &self.pending));
        }
        self.wrap = Wrap::No;
        self.wrap_width = 0;
        let file = self.file.get_or_insert_with(String::new);
        file.clear();
        file.push_str(name);
        // Another log: its router, if it has one, is another.
        self.process = None;
        self.routed = false;
        emit(Framed::FileStarts { line: number, name });
    }

    /// The lines from physical line `number` on come from the router's child `pid` (or the router itself):
    /// the held line (the previous process's) is handed out first, and nothing learnt of its wrapping
    /// carries over.
    fn start_process(&mut self, number: u64, pid: Option<&str>, emit: &mut impl FnMut(Framed<'_>)) {
        if self.has_pending {
            self.has_pending = false;
            emit(Framed::Line(self.pending_line, &self.pending));
        }
        self.wrap = Wrap::No;
        self.wrap_width = 0;
        self.routed = true;
        self.process = pid.map(str::to_string);
        emit(Framed::Process { line: number, pid });
    }

    /// Flush the last logical line at the end of the input.
    pub fn finish(&mut self, mut emit: impl FnMut(u64, &str)) {
        if !self.rows.is_empty() {
            self.flush_rows(&mut |framed| {
                if let Framed::Line(n, text) = framed {
                    emit(n, text);
                }
            });
        }
        if self.has_pending {
            emit(self.pending_line, &self.pending);
        }
        self.has_pending = false;
        self.glue = false;
        self.wrap = Wrap::No;
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(input: &[&[u8]]) -> Vec<(u64, String)> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for (i, l) in input.iter().enumerate() {
            f.push(i as u64 + 1, l, |n, s| out.push((n, s.to_string())));
        }
        f.finish(|n, s| out.push((n, s.to_string())));
        out
    }

    #[test]
    fn rewrapped_record_becomes_one_line_numbered_from_its_start() {
        let out = frame(&[
            b"time=2025-05-22T17:59:04.662-07:00 level=INFO source=server.go:168 msg=offload library=cuda layers.requested=-1",
            b" layers.model=63 layers.offload=49",
            b"load_tensors: offloaded 33/33 layers to GPU",
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0, 1);
        assert!(out[0]
            .1
            .ends_with("layers.requested=-1 layers.model=63 layers.offload=49"));
        assert_eq!(
            out[1],
            (3, "load_tensors: offloaded 33/33 layers to GPU".to_string())
        );
    }

    /// corpus 014:2, the `msg=offload` estimate line (582 characters).
    const OFFLOAD_014: &str = r#"time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload library=cuda layers.requested=49 layers.model=49 layers.offload=37 layers.split=37,0 memory.available="[11.5 GiB 4.6 GiB]" memory.gpu_overhead="0 B" memory.required.full="14.9 GiB" memory.required.partial="11.4 GiB" memory.required.kv="2.0 GiB" memory.required.allocations="[11.4 GiB 0 B]" memory.weights.total="7.5 GiB" memory.weights.repeating="5.6 GiB" memory.weights.nonrepeating="1.9 GiB" memory.graph.full="1.3 GiB" memory.graph.partial="1.3 GiB" projector.weights="806.2 MiB" projector.graph="1.0 GiB""#;
    /// corpus 015:1, another estimate line (four GPUs, bare `layers.split=11,11,11,11`).
    const OFFLOAD_015: &str = r#"time=2025-02-18T02:21:25.646Z level=INFO source=server.go:130 msg=offload library=cuda layers.requested=-1 layers.model=81 layers.offload=44 layers.split=11,11,11,11 memory.available="[22.0 GiB 22.0 GiB 22.0 GiB 22.0 GiB]" memory.gpu_overhead="0 B" memory.required.full="127.4 GiB" memory.required.partial="87.1 GiB" memory.required.kv="19.5 GiB" memory.required.allocations="[21.8 GiB 21.8 GiB 21.8 GiB 21.8 GiB]" memory.weights.total="87.3 GiB" memory.weights.repeating="86.2 GiB" memory.weights.nonrepeating="1.0 GiB" memory.graph.full="8.2 GiB" memory.graph.partial="8.2 GiB""#;
    /// corpus 009:1, a `load request` struct in one quoted value (`KvCacheType: NumThreads:8` inside it).
    const LOAD_REQUEST_009: &str = r#"time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}""#;
    /// corpus 016:2, with its journald prefix (which only the first piece of a wrap carries).
    const JOURNALD_016: &str = r#"Aug 22 17:36:22 amobile ollama[30907]: time=2025-08-22T17:36:22.027-04:00 level=INFO source=server.go:175 msg=offload library=cuda layers.requested=-1 layers.model=49 layers.offload=48 layers.split="" memory.available="[11.1 GiB]" memory.gpu_overhead="0 B" memory.required.full="11.4 GiB" memory.required.partial="8.9 GiB" memory.required.kv="992.0 MiB" memory.required.allocations="[8.9 GiB]" memory.weights.total="6.8 GiB" memory.weights.repeating="6.0 GiB" memory.weights.nonrepeating="787.5 MiB" memory.graph.full="519.5 MiB" memory.graph.partial="1.3 GiB" projector.weights="795.9 MiB" projector.graph="1.0 GiB""#;
    /// corpus 012:4, journald, with an int-list `layers.split=[37]` (a piece can begin with `[37] `).
    const JOURNALD_012: &str = r#"Sep 11 00:42:49 ai ollama[3110]: time=2025-09-11T00:42:49.545+02:00 level=INFO source=server.go:543 msg=offload library=rocm layers.requested=-1 layers.model=37 layers.offload=37 layers.split=[37] memory.available="[63.8 GiB]" memory.gpu_overhead="0 B" memory.required.full="62.4 GiB" memory.required.partial="62.4 GiB" memory.required.kv="450.0 MiB" memory.required.allocations="[62.4 GiB]" memory.weights.total="59.7 GiB" memory.weights.repeating="58.6 GiB" memory.weights.nonrepeating="1.1 GiB" memory.graph.full="122.0 MiB" memory.graph.partial="122.0 MiB""#;
    /// The terminal widths the hard-wrap tests use.
    const WIDTHS: [usize; 6] = [80, 100, 120, 132, 160, 200];

    /// `line` cut every `width` characters, as a terminal or `fold -w` prints it.
    fn wrap(line: &str, width: usize) -> Vec<String> {
        let chars: Vec<char> = line.chars().collect();
        chars.chunks(width).map(|c| c.iter().collect()).collect()
    }

    fn frame_all(lines: &[String]) -> Vec<(u64, String)> {
        let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        frame(&bytes)
    }

    fn strip(line: &str) -> &str {
        prefix::strip_prefixes(line).0
    }

    #[test]
    fn hard_wrapped_records_come_back_byte_for_byte() {
        for line in [
            OFFLOAD_014,
            OFFLOAD_015,
            LOAD_REQUEST_009,
            JOURNALD_016,
            JOURNALD_012,
        ] {
            for width in WIDTHS {
                let pieces = wrap(line, width);
                assert!(pieces.len() > 1);
                let out = frame_all(&pieces);
                assert_eq!(out, vec![(1, strip(line).to_string())], "width {width}");
            }
        }
    }

    #[test]
    fn every_cut_of_an_estimate_line_comes_back() {
        // Every width from the narrowest wrapped one to one short of the line: every cut position, two pieces
        // (no other piece to compare lengths with) for the widths past half the line. With 016's journald
        // prefix on the first piece only, a cut can fall right before `level=` (widths 73 and 74).
        let mut starts = std::collections::BTreeSet::new();
        let (mut after_space, mut in_quotes, mut two_pieces) = (0, 0, 0);
        for line in [
            OFFLOAD_014,
            OFFLOAD_015,
            LOAD_REQUEST_009,
            JOURNALD_016,
            JOURNALD_012,
        ] {
            for width in join::MIN_WRAP_WIDTH..line.len() {
                let pieces = wrap(line, width);
                let out = frame_all(&pieces);
                assert_eq!(out, vec![(1, strip(line).to_string())], "width {width}");
                let first = pieces[1].as_bytes()[0];
                starts.insert(match first {
                    b'0'..=b'9' => '0',
                    b'a'..=b'z' | b'A'..=b'Z' => 'a',
                    c => c as char,
                });
                after_space += usize::from(pieces[0].ends_with(' '));
                in_quotes += usize::from(join::has_open_quote(&pieces[0]));
                two_pieces += usize::from(pieces.len() == 2);
            }
        }
        // Continuations beginning with digits, `-`, `[`, `"`, a space, a letter; cuts after a space, inside
        // quoted values, and in two pieces.
        for c in ['0', '-', '[', '"', ' ', 'a'] {
            assert!(
                starts.contains(&c),
                "no continuation starting with {c:?}: {starts:?}"
            );
        }
        assert!(after_space > 10 && in_quotes > 100 && two_pieces > 400);
    }

    #[test]
    fn a_key_cut_in_two_is_glued_without_a_space() {
        // The cut of the brief, `memory.gpu_o` / `verhead="0 B"`, on corpus 016's estimate.
        let cut = JOURNALD_016.find("memory.gpu_o").unwrap() + "memory.gpu_o".len();
        let pieces = wrap(JOURNALD_016, cut);
        assert!(pieces[1].starts_with(r#"verhead="0 B" memory.required.full="11.4 GiB""#));
        assert_eq!(
            frame_all(&pieces),
            vec![(1, strip(JOURNALD_016).to_string())]
        );
        // A key cut in two pieces only (no second full piece to compare): the cut key is the evidence.
        let cut = OFFLOAD_014.find("memory.graph.par").unwrap() + "memory.graph.par".len();
        let pieces = wrap(OFFLOAD_014, cut);
        assert_eq!(pieces.len(), 2);
        assert!(pieces[1].starts_with(r#"tial="1.3 GiB" projector.weights="#));
        assert!(join::slog_cut(&pieces[0], &pieces[1]));
        assert_eq!(frame_all(&pieces), vec![(1, OFFLOAD_014.to_string())]);
    }

    #[test]
    fn a_piece_beginning_like_a_router_pid_is_still_a_piece() {
        // `[37] ` is what the prefix stripper removes as llama-swap's `[pid] `; here it is a cut list value.
        let cut = JOURNALD_012.find("[37] ").unwrap();
        let pieces = wrap(JOURNALD_012, cut);
        assert!(pieces[1].starts_with("[37] memory.available="));
        assert_eq!(
            frame_all(&pieces),
            vec![(1, strip(JOURNALD_012).to_string())]
        );
    }

    #[test]
    fn a_hard_wrapped_log_keeps_its_records_apart() {
        // corpus 014, lines 1 to 5, then llama.cpp lines (024:5, 511:175; not slog, so not wrapped here: only
        // slog records are rejoined) and 015's truncated record (lines 5, 6).
        let log = [
            r#"time=2025-05-23T17:16:43.374Z level=INFO source=server.go:135 msg="system memory" total="31.2 GiB" free="20.9 GiB" free_swap="0 B""#,
            OFFLOAD_014,
            r#"time=2025-05-23T17:16:43.431Z level=INFO source=server.go:431 msg="starting llama server" cmd="/usr/bin/ollama runner --ollama-engine --model /root/.ollama/models/blobs/sha256-1fb99eda86dc48a736567406253769fdc75f01e65cde7c65fa5563e4bdf156e0 --ctx-size 24576 --batch-size 512 --n-gpu-layers 49 --threads 6 --parallel 1 --tensor-split 37,0 --port 42751""#,
            r#"time=2025-05-23T17:16:43.432Z level=INFO source=sched.go:472 msg="loaded runners" count=1"#,
            r#"time=2025-05-23T17:16:43.432Z level=INFO source=server.go:591 msg="waiting for llama runner to start responding""#,
            "load_tensors: offloaded 81/81 layers to GPU",
            "llama_context: n_ctx                 = 8192",
            r#"time=2025-02-18T02:21:25.648Z level=INFO source=sched.go:450 msg="loaded runners" count=1"#,
            r#"time=2025-02-18T02:21:25.648Z level=INFO source=server.go:557 msg="waiting for llama"#,
        ];
        for width in WIDTHS {
            let mut physical = Vec::new();
            let mut starts = Vec::new();
            for line in log {
                starts.push(physical.len() as u64 + 1);
                physical.extend(wrap(line, width));
            }
            let want: Vec<(u64, String)> = starts
                .into_iter()
                .zip(log.iter().map(|l| l.to_string()))
                .collect();
            assert_eq!(frame_all(&physical), want, "width {width}");
        }
    }

    #[test]
    fn a_record_cut_only_inside_its_last_bare_value_needs_the_width_seen_before() {
        // corpus 503:3: the model path is bare, so a cut in it leaves a piece with no pair and no quote.
        let line = "time=2026-09-10T23:59:32.922Z level=INFO source=llama_server.go:1048 msg=\"loading model via llama-server\" model=/usr/share/ollama/.ollama/models/blobs/sha256-6be6d66a3f546d8c19b130dc41dc24b2fc159f84ffbc76a0ee0676205083cf5a";
        let width = line.len() - 30;
        let pieces = wrap(line, width);
        assert_eq!(pieces.len(), 2);
        // Alone, it could as well be a record followed by a line of its own: it is left as two lines.
        assert_eq!(frame_all(&pieces).len(), 2);
        // After a record wrapped at the same width in the same input, it is taken for a wrap too.
        let mut physical = wrap(OFFLOAD_014, width);
        let next = physical.len() as u64 + 1;
        physical.extend(pieces.iter().cloned());
        let out = frame_all(&physical);
        assert_eq!(
            out,
            vec![(1, OFFLOAD_014.to_string()), (next, line.to_string())]
        );
        // A line longer than that width shows the input is not wrapped there after all.
        let mut physical = wrap(OFFLOAD_014, width);
        physical.push(OFFLOAD_015.to_string());
        physical.extend(pieces);
        assert_eq!(frame_all(&physical).len(), 4);
    }

    #[test]
    fn records_followed_by_lines_of_their_own_are_not_glued() {
        // Each pair is real and consecutive: peer vector 310 (lines 1-2), corpus 036:4-5, 002:4-5, 008:16-17.
        let pairs = [
            (
                r#"time=2025-07-01T19:33:43.162Z level=DEBUG source=amd_linux.go:419 msg="amdgpu driver not detected /sys/module/amdgpu""#,
                "releasing cuda driver library",
            ),
            (
                r#"time=2025-09-27T19:30:12.517+02:00 level=DEBUG source=gpu.go:460 msg="updating cuda memory data" gpu=GPU-d0f9ed85-a082-2e7e-f1ca-ec56c347fcb0 name="NVIDIA GeForce RTX 4060 Ti" overhead="0 B" before.total="16.0 GiB" before.free="14.7 GiB" now.total="16.0 GiB" now.free="14.7 GiB" now.used="1.3 GiB""#,
                "releasing nvml library",
            ),
            (
                r#"time=2025-12-01T20:28:45.760Z level=INFO source=types.go:131 msg="inference compute" id=GPU-93e08bff-19ea-9448-3848-d2ab3d687e30 library=cuda variant=v12 compute=8.9 driver=12.4 name="NVIDIA GeForce RTX 4090" total="23.6 GiB" available="23.3 GiB""#,
                "Checking if server is running...",
            ),
            (
                r#"time=2024-11-08T01:05:27.415+05:30 level=INFO source=server.go:621 msg="waiting for server to become available" status="llm server error""#,
                r#"INFO [main] starting c++ runner | tid="0x1f9bab240" timestamp=1731008127"#,
            ),
        ];
        for (record, next) in pairs {
            let out = frame(&[record.as_bytes(), next.as_bytes()]);
            assert_eq!(out.len(), 2, "{next}");
            assert_eq!(out[0].1, record);
        }
        // A wrapped record ends with its short last piece: what follows stands alone.
        let mut physical = wrap(OFFLOAD_014, 100);
        physical.push("releasing nvml library".to_string());
        let out = frame_all(&physical);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].1, "releasing nvml library");
    }

    #[test]
    fn a_paste_that_dropped_the_space_still_gets_one() {
        // The re-wrap of the first test, without indentation: a complete pair on both sides is no cut.
        let out = frame(&[
            b"time=2025-05-22T17:59:04.662-07:00 level=INFO source=server.go:168 msg=offload library=cuda layers.requested=-1",
            b"layers.model=63 layers.offload=49",
        ]);
        assert_eq!(out.len(), 1);
        assert!(out[0]
            .1
            .ends_with("layers.requested=-1 layers.model=63 layers.offload=49"));
    }

    #[test]
    fn a_log_pasted_as_comments_frames_like_the_log() {
        // corpus 020:6-8 as shell comments, with a bare `#` and a dmon header (docs/log-formats.md §7.4) between.
        let out = frame(&[
            br#"# time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA0 size="11.5 GiB""#,
            br#"# time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA1 size="11.9 GiB""#,
            b"#",
            b"# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk",
            br#"# time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CPU size="680.0 MiB""#,
        ]);
        let texts: Vec<&str> = out.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                r#"time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA0 size="11.5 GiB""#,
                r#"time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA1 size="11.9 GiB""#,
                "",
                "# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk",
                r#"time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CPU size="680.0 MiB""#,
            ]
        );
    }

    /// corpus 703 (`sample-logs/703-md-ollama-03213-deepseek-coder-v2-3loads-buffer-grep.log`): three files'
    /// `grep 'buffer size'` output in Markdown, each block headed by its file's name in a code span.
    const CORPUS_703: &str = include_str!(
        "../../sample-logs/703-md-ollama-03213-deepseek-coder-v2-3loads-buffer-grep.log"
    );

    /// What the framer hands out for `input`, a file start as `file <line> <name>`.
    fn feed_all<'a>(input: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        let mut on = |framed: Framed<'_>| {
            out.push(match framed {
                Framed::Line(n, text) => format!("{n} {text}"),
                Framed::FileStarts { line, name } => format!("file {line} {name}"),
                Framed::Process { line, pid } => format!("process {line} {pid:?}"),
                Framed::Cut { line, width } => format!("cut {line} at {width}"),
            })
        };
        for (i, line) in input.into_iter().enumerate() {
            f.feed(i as u64 + 1, line.as_bytes(), &mut on);
        }
        f.finish(|n, text| on(Framed::Line(n, text)));
        out
    }

    #[test]
    fn a_router_says_which_child_each_line_comes_from() {
        // A llama-server router's log (docs/log-formats.md §5.7: `[34353] ` before a child's lines; no corpus
        // log shows router mode, so these are corpus 707's lines, `sample-logs/707-…`, behind two children's
        // pids, interleaved, with the router's own line between).
        let out = feed_all([
            "srv   load_models: spawning server instance with name=gemma on port 8081",
            "[34353] I load_tensors: offloaded 43/43 layers to GPU",
            "[34353] I load_tensors:      Vulkan0 model buffer size =  2883.51 MiB",
            "[34360] 0.00.078.516 I load_tensors:      Vulkan0 model buffer size =  1200.00 MiB",
            "[34353] I llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB",
            "srv   load_models: instance gemma ready",
        ]);
        assert_eq!(
            out,
            [
                "1 load_models: spawning server instance with name=gemma on port 8081",
                "process 2 Some(\"34353\")",
                "2 load_tensors: offloaded 43/43 layers to GPU",
                "3 load_tensors:      Vulkan0 model buffer size =  2883.51 MiB",
                "process 4 Some(\"34360\")",
                "4 load_tensors:      Vulkan0 model buffer size =  1200.00 MiB",
                "process 5 Some(\"34353\")",
                "5 llama_kv_cache:    Vulkan0 KV buffer size =   544.00 MiB",
                "process 6 None",
                "6 load_models: instance gemma ready",
            ]
        );
        // A log without a router says nothing of processes.
        assert!(feed_all(CORPUS_703.lines())
            .iter()
            .all(|l| !l.starts_with("process")));
    }

    #[test]
    fn a_markdown_paste_says_where_each_named_file_starts() {
        let out = feed_all(CORPUS_703.lines());
        let files: Vec<&String> = out.iter().filter(|l| l.starts_with("file ")).collect();
        assert_eq!(
            files,
            [
                "file 1 raw-log-ctx2048.txt",
                "file 11 raw-log-ctx4096.txt",
                "file 21 raw-log-ctx8192.txt"
            ]
        );
        // Each file starts before its header line, which is handed out as it is; every line is handed out.
        let at = |s: &str| out.iter().position(|l| l == s).unwrap();
        assert_eq!(
            at("file 11 raw-log-ctx4096.txt") + 1,
            at("11 `raw-log-ctx4096.txt`")
        );
        assert_eq!(at("10 ") + 1, at("file 11 raw-log-ctx4096.txt"));
        assert_eq!(out.len(), CORPUS_703.lines().count() + 3);
        // `push` says nothing of files: the same lines, as before.
        let pushed = frame(&CORPUS_703.lines().map(str::as_bytes).collect::<Vec<_>>());
        assert_eq!(pushed.len(), CORPUS_703.lines().count());
    }

    #[test]
    fn grep_output_over_several_files_says_where_each_starts() {
        // corpus 703's buffer lines as `grep -A1 'buffer size' raw-log-ctx*.txt` prints them: each file's name
        // before its lines (`:` a match, `-` a context line), `--` between groups.
        let lines: Vec<&str> = CORPUS_703.lines().collect();
        let grep = [
            format!("raw-log-ctx2048.txt:{}", lines[2]),
            format!("raw-log-ctx2048.txt-{}", lines[3]),
            "--".to_string(),
            format!("raw-log-ctx2048.txt:{}", lines[5]),
            format!("raw-log-ctx4096.txt:{}", lines[12]),
            format!("raw-log-ctx4096.txt-{}", lines[13]),
        ];
        let out = feed_all(grep.iter().map(String::as_str));
        assert_eq!(
            out,
            [
                "file 1 raw-log-ctx2048.txt".to_string(),
                format!("1 {}", lines[2]),
                format!("2 {}", lines[3]),
                "3 ".to_string(),
                format!("4 {}", lines[5]),
                "file 5 raw-log-ctx4096.txt".to_string(),
                format!("5 {}", lines[12]),
                format!("6 {}", lines[13]),
            ]
        );
        // Without grep prefixes, `--` is a line like any other.
        assert_eq!(feed_all(["--"]), ["1 --"]);
    }

    #[test]
    fn no_line_of_one_file_joins_a_record_of_another() {
        // corpus 014:2's estimate re-wrapped (the first test's shape) across two files of a grep paste: the
        // indented pairs would join the record if they came from the same file.
        let first = format!(
            "a.log:{}",
            &OFFLOAD_014[..OFFLOAD_014.find(" memory.graph.full").unwrap()]
        );
        let out = feed_all([first.as_str(), "b.log:   memory.graph.full=\"1.3 GiB\""]);
        assert_eq!(out.len(), 4, "{out:?}");
        assert_eq!(out[2], "file 2 b.log");
        // In one file they join.
        let out = feed_all([first.as_str(), "a.log:   memory.graph.full=\"1.3 GiB\""]);
        assert_eq!(out.len(), 2, "{out:?}");
        // A header naming the file the lines already come from starts nothing.
        let out = feed_all([
            "==> a.log <==",
            "load_tensors: offloaded 43/43 layers to GPU",
            "`a.log`",
        ]);
        assert_eq!(out.iter().filter(|l| l.starts_with("file ")).count(), 1);
    }

    /// `line` as a terminal `width` columns wide shows it: cut every `width` columns, a raw escape sequence
    /// in none (caret-form colours are characters and count).
    fn terminal(line: &str, width: usize) -> Vec<String> {
        let mut rows = vec![String::new()];
        let mut columns = 0;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                rows.last_mut().unwrap().push(c);
                for e in chars.by_ref() {
                    rows.last_mut().unwrap().push(e);
                    if e.is_ascii_alphabetic() {
                        break;
                    }
                }
                continue;
            }
            if columns == width {
                rows.push(String::new());
                columns = 0;
            }
            rows.last_mut().unwrap().push(c);
            columns += 1;
        }
        rows
    }

    /// corpus 1032:5 (`sample-logs/1032-vllm-2026-03-tp2-graph-estimate-430-vs-438-ranks-kv-2546gib.log`).
    const KV_1032: &str = "(Worker_TP0 pid=646817) INFO 03-17 17:07:06 [gpu_worker.py:452] Available KV cache memory: 25.46 GiB";

    #[test]
    fn a_collector_prefix_under_a_narrow_wrap_leaves_the_servers_prefix_cut_across_rows() {
        // `kubectl logs --timestamps --prefix` put 67 columns before the line: a terminal 80 wide leaves it
        // `(Worker_TP0 p` on the first row, and vLLM's prefix is whole only once the rows are joined.
        let line =
            format!("[pod/vllm-7d9f8c6b5-x2kqp/vllm] 2026-12-07T03:14:19.000418113Z {KV_1032}");
        for width in [80, 100] {
            let rows = terminal(&line, width);
            assert!(rows.len() > 1);
            assert_eq!(
                frame_all(&rows),
                vec![(
                    1,
                    "[rank=TP0] Available KV cache memory: 25.46 GiB".to_string()
                )],
                "width {width}"
            );
        }
        // journald's prefix, the same.
        let line = format!("Dec 07 03:14:19 gpu-node vllm[2841]: {KV_1032}");
        assert_eq!(
            frame_all(&terminal(&line, 80)),
            vec![(
                1,
                "[rank=TP0] Available KV cache memory: 25.46 GiB".to_string()
            )]
        );
    }

    /// `rows` after the rows of a record `collector` prefixed that a terminal `width` wide cut where nothing
    /// reads like a record: the input is known to be cut at `width`.
    fn after_a_wrap(collector: &str, width: usize, rows: &[String]) -> Vec<String> {
        let mut all = terminal(&format!("{collector}{}", "x ".repeat(width)), width);
        all.extend_from_slice(rows);
        all
    }

    fn texts(lines: &[(u64, String)]) -> Vec<&str> {
        lines.iter().map(|(_, text)| text.as_str()).collect()
    }

    /// corpus 511:21 (`sample-logs/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log`).
    const BUILD_511: &str =
        "cmn  common_param: common_params_print_info: build 1 (d222767c7) with GNU 13.3.1 for Linux x86_64";

    #[test]
    fn a_row_without_the_collectors_prefix_after_a_full_row_is_its_rest() {
        // journald's prefix leaves `… common_params_p` on an 80-column row; the next row, `rint_info: build 1 …`,
        // reads like a llama.cpp record, but every line journald wrote begins with its prefix: it is the rest.
        for collector in [
            "Dec 07 03:14:19 gpu-node ollama[2841]: ",
            "dec 07 03:14:19.740412 gpu-node ollama[2841]: ",
            "2026-12-07T03:14:19.740412+00:00 gpu-node ollama[2841]: ",
            "ollama-1  | ",
        ] {
            let line = format!("{collector}{BUILD_511}");
            for width in [80, 100] {
                let rows = terminal(&line, width);
                assert!(rows.len() > 1, "{rows:?}");
                assert_eq!(
                    texts(&frame_all(&after_a_wrap(collector, width, &rows))[1..]),
                    ["common_param: common_params_print_info: build 1 (d222767c7) with GNU 13.3.1 for Linux x86_64"],
                    "{collector:?} at {width}"
                );
            }
        }
        // A server's own line after a journald line as wide as a terminal by chance, where nothing showed the
        // input was cut at that width, is a record (benches/gen.py's mix: corpus 1203-like `srv  ` lines
        // between journald's).
        let systemd =
            "Nov  1 06:06:17 gpuhost systemd[1]: logrotate.service: Deactivated successfully.";
        assert_eq!(systemd.len(), 80);
        let srv = "srv         start: binding port with default address family";
        assert_eq!(frame_all(&[systemd.to_string(), srv.to_string()]).len(), 2);
        // A line another process wrote, as wide as a terminal by chance, is no cut: a bare `ident[pid]: ` is no
        // collector's prefix (a collector stamps a time), and a row a terminal coloured starts a record.
        let other = "dbus-daemon[812]: [system] Successfully activated service 'org.freedesktop.nm_dispatcher' (10.0.0.7)";
        assert_eq!(other.len(), 100);
        let next = "llama_context: n_batch               = 1024";
        assert_eq!(frame_all(&[other.to_string(), next.to_string()]).len(), 2);
        let wide =
            "Dec 07 03:14:19 gpu-node ollama[2841]: load_tensors: offloaded 3/33 layers to GP"
                .to_string();
        assert_eq!(wide.len(), 80);
        let coloured = format!("\x1b[36m{next}\x1b[0m");
        assert_eq!(frame_all(&[wide.clone(), coloured]).len(), 2);
        // Without the colour it is the rest, where the input was seen cut at 80 columns before.
        let rows = after_a_wrap(
            "Dec 07 03:14:19 gpu-node ollama[2841]: ",
            80,
            &[wide, next.to_string()],
        );
        assert_eq!(frame_all(&rows).len(), 2);
    }

    /// corpus 1203:60 and 1203:31 (`sample-logs/1203-docker-compose-ollama-llama-server-runner-…-timeout.log`),
    /// a compose log.
    const GIN_1203: &str = "rag-ollama       | [GIN] 2026/09/19 - 16:56:38 | 200 |  37.34666911s |      172.16.1.4 | POST     \"/v1/chat/completions\"";
    const TASK_1203: &str =
        "rag-ollama       | slot launch_slot_: id  0 | task 1338 | processing task, is_child = 0";

    #[test]
    fn a_row_that_begins_like_another_prefix_after_a_collectors_full_row_is_its_rest() {
        let journald = "dec 07 03:14:21.183412 gpu-node ollama[2841]: ";
        // `… | 200 |` / `  37.34666911s |      172.16.1.4 | POST …`: blanks of a padded column, then what reads
        // like a compose prefix of another width than the log's.
        let rows = terminal(&format!("{journald}{GIN_1203}"), 100);
        assert!(rows[1].starts_with("  37.34666911s |"), "{rows:?}");
        let (_, gin) = GIN_1203.split_once("| ").unwrap();
        let framed = frame_all(&after_a_wrap(journald, 100, &rows));
        assert_eq!(texts(&framed[1..]), [gin]);
        // The log's own compose prefix, with no journald before it: the same.
        let rows = terminal(GIN_1203, 80);
        assert!(rows[1].starts_with("16.1.4 | POST"), "{rows:?}");
        let framed = frame_all(&after_a_wrap("rag-ollama       | ", 80, &rows));
        assert_eq!(texts(&framed[1..]), [gin]);
        // `… task 133` / `8 | processing task…`: a line number's shape, where the log's rows have none.
        let rows = terminal(&format!("{journald}{TASK_1203}"), 100);
        assert!(rows[1].starts_with("8 | processing"), "{rows:?}");
        assert_eq!(
            frame_all(&rows),
            frame_all(&[format!("{journald}{TASK_1203}")])
        );
        assert!(frame_all(&rows)[0]
            .1
            .ends_with("task 1338 | processing task, is_child = 0"));
        // A record of the log after a full row still starts a record: the same collector's prefix.
        let full = terminal(&format!("{journald}{TASK_1203}"), 100)[0].clone();
        let next = format!("{journald}{GIN_1203}");
        assert_eq!(frame_all(&[full.clone(), next]).len(), 2);
        // So does a Markdown fence closing the paste.
        assert_eq!(frame_all(&[full, "```".to_string()]).len(), 2);
        // And a line journald wrote whose prefix the stripper does not take whole: the kernel's, without a
        // pid, after a row of 160 columns (benches/gen.py's journald noise).
        let wide = format!(
            "Nov  1 06:48:31 gpuhost ollama[1234]: {}ok",
            "word ".repeat(24)
        );
        assert_eq!(wide.len(), 160);
        let kernel = "Nov  1 06:48:31 gpuhost kernel: EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.";
        assert_eq!(frame_all(&[wide, kernel.to_string()]).len(), 2);
    }

    /// `rows` with a paste's markup: `mark(i)` before row `i`.
    fn marked(rows: &[String], mark: impl Fn(usize) -> String) -> Vec<String> {
        rows.iter()
            .enumerate()
            .map(|(i, row)| format!("{}{row}", mark(i)))
            .collect()
    }

    #[test]
    fn a_pastes_markup_is_the_same_on_every_row_and_more_is_the_lines_text() {
        // corpus 708:2 cut at 80 columns, numbered (`grep -n`) inside a Markdown quote: the third row,
        // `> 3:59 MiB`, reads like a time after the quote; its number is the paste's, its `59 MiB` the line's.
        let device = "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24159 MiB";
        let rows = marked(&terminal(device, 80), |i| format!("> {}:", i + 2));
        assert_eq!(rows[1], "> 3:59 MiB");
        assert_eq!(frame_all(&rows), frame_all(&[device.to_string()]));
        // corpus 034:4 in a container runtime's node log, cut at 100 columns and numbered `  9 | `, ` 10 | `:
        // the number's alignment changes, and the row's `2:28.102Z` (the time's rest) is no line number.
        let cri = "2026-12-07T03:14:19.111418113Z stderr F Nov 14 14:42:28 chenxilab ollama[2898]: time=2025-11-14T14:42:28.102Z level=INFO source=ggml.go:498 msg=\"offloaded 37/37 layers to GPU\"";
        let rows = marked(&terminal(cri, 100), |i| format!("{:>3} | ", i + 9));
        assert_eq!(
            rows[1],
            " 10 | 2:28.102Z level=INFO source=ggml.go:498 msg=\"offloaded 37/37 layers to GPU\""
        );
        assert_eq!(frame_all(&rows), frame_all(&[cri.to_string()]));
        // corpus founding-today-chain-gpu-overhead-1gib:4 as Docker's json-file stores it, cut at 80: the row
        // `01:00.0 type=discrete …` (the rest of `pci_id=0000:`) is no `grep -n` number either.
        let line = r#"time=2026-06-07T18:11:41.905+07:00 level=INFO source=types.go:50 msg="inference compute" id=0 filter_id=0 library=CUDA compute=8.6 name=CUDA0 description="NVIDIA GeForce RTX 3090" libdirs=ollama,cuda_v13 driver=13.0 pci_id=0000:01:00.0 type=discrete total="24.0 GiB" available="23.5 GiB""#;
        let object = format!(
            r#"{{"log":"{}\n","stream":"stderr","time":"2026-12-07T03:14:19.111418113Z"}}"#,
            line.replace('"', "\\\"")
        );
        let rows = terminal(&object, 80);
        assert!(
            rows.iter().any(|row| row.starts_with("01:00.0 ")),
            "{rows:?}"
        );
        assert_eq!(frame_all(&rows), vec![(1, line.to_string())]);
    }

    #[test]
    fn a_slog_record_a_terminal_cut_still_takes_the_lines_a_paste_rewrapped_it_into() {
        // corpus 722:1–3, a record a paste had re-wrapped into three lines, under `kubectl --prefix` at 80
        // columns: the first row's rest (`urce=llama_server.go:611`) ends the terminal's rows, not the record.
        let kubectl = "[pod/ollama-7d9f8c6b5-x2kqp/ollama] 2026-12-07T03:14:19.000418113Z ";
        let mut rows = Vec::new();
        for line in [
            "level=INFO source=llama_server.go:611",
            "msg=\"disabling multimodal projector offload\"",
            "reason=limited-vram",
        ] {
            rows.extend(terminal(&format!("{kubectl}{line}"), 80));
        }
        assert_eq!(rows[1], "urce=llama_server.go:611");
        assert_eq!(
            frame_all(&rows),
            vec![(
                1,
                "level=INFO source=llama_server.go:611 msg=\"disabling multimodal projector offload\" reason=limited-vram".to_string()
            )]
        );
    }

    #[test]
    fn a_line_a_servers_logger_prefixed_continues_no_record() {
        // Another process's slog line in a journal, then corpus 1038:3, whose `key=value, …` text after
        // SGLang's time would read as more pairs of it.
        let rows = [
            "containerd[1032]: level=info msg=\"cleaning up dead shim\" namespace=moby".to_string(),
            "[2025-11-30 11:18:05] max_total_num_tokens=2261377, chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=4096, context_len=128000, available_gpu_mem=37.06 GB".to_string(),
        ];
        assert_eq!(frame_all(&rows).len(), 2);
    }

    #[test]
    fn a_row_that_sets_a_colour_after_a_row_that_reset_one_is_another_record() {
        // Another process's line, coloured in caret form to exactly 100 columns, then corpus
        // founding-k80-gemma3-12b-ci-with-smi's CSV row, coloured too.
        let other = "^[[32mdbus-daemon[812]: [system] Successfully activated service 'org.freedesktop.nm_dispatcher'^[[0m";
        assert_eq!(join::columns(other), 100);
        let row = "^[[0;33m0, GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27, 617 MiB, 11441 MiB^[[0m";
        assert_eq!(frame_all(&[other.to_string(), row.to_string()]).len(), 2);
    }

    #[test]
    fn a_wrap_counts_caret_form_colours_as_the_columns_they_show() {
        // corpus 014:2 coloured in caret form (a terminal showing `^[[32m` as six characters), then cut: the
        // first row holds six columns less of the record, and the cut may fall inside the reset `^[[0m`.
        let line = format!("^[[32m{OFFLOAD_014}^[[0m");
        for width in join::MIN_WRAP_WIDTH..line.len() {
            let rows = terminal(&line, width);
            assert_eq!(
                frame_all(&rows),
                vec![(1, OFFLOAD_014.to_string())],
                "width {width}: {rows:?}"
            );
        }
        // A llama.cpp line (no slog pairs to show the cut), corpus 1032:5's kind, at a terminal's width.
        let line = format!("^[[0;33m{KV_1032}^[[0m");
        assert_eq!(
            frame_all(&terminal(&line, 80)),
            vec![(
                1,
                "[rank=TP0] Available KV cache memory: 25.46 GiB".to_string()
            )]
        );
    }

    #[test]
    fn a_wrap_of_a_container_runtimes_partial_pieces_is_undone_before_the_pieces_are_joined() {
        // corpus 014:2 stored by containerd in `P` pieces of 100 bytes and a last `F` one (a runtime with a
        // small buffer), each row then cut by a terminal: the envelope is read from the rows glued back.
        let stamp = "2026-12-07T03:14:19.000418113Z";
        let pieces: Vec<&str> = OFFLOAD_014
            .as_bytes()
            .chunks(100)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let last = pieces.len() - 1;
        let cri: Vec<String> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{stamp} stderr {} {p}", if i == last { 'F' } else { 'P' }))
            .collect();
        // Docker's json-file driver, the same pieces (a piece without `\n` is partial).
        let json: Vec<String> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let end = if i == last { "\\n" } else { "" };
                let p = p.replace('"', "\\\"");
                format!(r#"{{"log":"{p}{end}","stream":"stderr","time":"{stamp}"}}"#)
            })
            .collect();
        for stored in [&cri, &json] {
            for width in [80, 100, 120] {
                let rows: Vec<String> = stored.iter().flat_map(|l| terminal(l, width)).collect();
                assert!(rows.len() > stored.len());
                assert_eq!(
                    frame_all(&rows),
                    vec![(1, OFFLOAD_014.to_string())],
                    "width {width}: {rows:?}"
                );
            }
        }
        // A stored line that closes on a row of its own is not glued to the next line.
        let mut rows = terminal(&json[last], 80);
        rows.push("releasing nvml library".to_string());
        assert_eq!(frame_all(&rows).len(), 2);
    }

    #[test]
    fn a_container_runtimes_partial_piece_gets_back_the_blanks_a_trim_took() {
        // corpus 1032:1-3 (`sample-logs/1032-…log`) stored by containerd in pieces of 100 bytes (a runtime with
        // a small buffer), then trailing blanks trimmed by an editor: the pieces of lines 2 and 3 end with the
        // blank after `memory:`, which the trim took and the joined line lost (`memory:4.30 GiB`).
        let log = [
            "(Worker_TP0 pid=646817) INFO 03-17 17:07:05 [custom_all_reduce.py:216] Registering 212 cuda graph addresses",
            "(Worker_TP1 pid=646936) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.30 GiB total",
            "(Worker_TP0 pid=646817) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: 4.38 GiB total",
        ];
        let stamp = "2026-12-07T03:14:19.000418113Z";
        let stored: Vec<String> = log
            .iter()
            .flat_map(|line| {
                let (piece, rest) = line.split_at(100);
                [
                    format!("{stamp} stderr P {piece}"),
                    format!("{stamp} stderr F {rest}"),
                ]
            })
            .collect();
        let trimmed: Vec<String> = stored.iter().map(|l| l.trim_end().to_string()).collect();
        assert_ne!(stored, trimmed);
        let want = frame_all(&stored);
        assert_eq!(want.len(), 3);
        assert!(want[1].1.ends_with("memory: 4.30 GiB total"), "{want:?}");
        assert_eq!(frame_all(&trimmed), want);
        // An input whose pieces show no size yet (its first piece trimmed too) is left as it is; one whose
        // `P` pieces end in blanks was not trimmed, and a short piece there gets nothing.
        assert!(frame_all(&trimmed[2..])[0]
            .1
            .ends_with("memory:4.30 GiB total"));
        let kept = [
            &stored[4],
            &stored[5],
            &stored[0],
            &stored[1],
            &trimmed[2],
            &stored[3],
        ];
        let kept: Vec<String> = kept.into_iter().cloned().collect();
        assert!(
            frame_all(&kept)[2].1.ends_with("memory:4.30 GiB total"),
            "{kept:?}"
        );
    }

    #[test]
    fn a_stamped_line_is_no_rest_of_another_writers_record() {
        // corpus 1038:3 stored by containerd in pieces of 100 bytes, after another process's line (the paste
        // catalogue's containerd line, a slog record behind a bare `ident[pid]: `, which re-wrapped lines
        // could continue): the piece is a line of its own, and its rest is glued onto it.
        let line = "[2025-11-30 11:18:05] max_total_num_tokens=2261377, chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=4096, context_len=128000, available_gpu_mem=37.06 GB";
        let stamp = "2026-12-07T03:14:19.074418113Z";
        let (piece, rest) = line.split_at(100);
        let other = r#"containerd[1032]: level=info msg="cleaning up dead shim" namespace=moby"#;
        let out = frame_all(&[
            other.to_string(),
            format!("{stamp} stderr P {piece}"),
            format!("{stamp} stderr F {rest}"),
        ]);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].1.ends_with("namespace=moby"), "{out:?}");
        assert_eq!(out[1].0, 2);
        assert!(
            out[1].1.starts_with("max_total_num_tokens=2261377"),
            "{out:?}"
        );
        assert!(out[1].1.ends_with("available_gpu_mem=37.06 GB"), "{out:?}");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_dropped() {
        let out = frame(&[b"load_tensors: \xff CUDA0"]);
        assert_eq!(out[0].1, "load_tensors: \u{fffd} CUDA0");
    }

    /// Every item the framer hands out, a cut as `cut LINE at WIDTH`.
    fn framed_items(input: &[String]) -> Vec<String> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        let mut on = |framed: Framed<'_>| match framed {
            Framed::Line(n, text) => out.push(format!("{n}: {text}")),
            Framed::Cut { line, width } => out.push(format!("cut {line} at {width}")),
            Framed::FileStarts { .. } | Framed::Process { .. } => {}
        };
        for (i, l) in input.iter().enumerate() {
            f.feed(i as u64 + 1, l.as_bytes(), &mut on);
        }
        f.finish(|n, text| out.push(format!("{n}: {text}")));
        out
    }

    /// Corpus 511:13 (`sample-logs/511-…`), 133 characters, the first record of an input that a terminal 132
    /// columns wide cut: `default_num_ctx=409` / `6`. A lone `6` may be a line of its own (nothing in it is a
    /// slog pair, and no record of the input wrapped before), so the joiner does not take it; the cut fell
    /// inside the figure, and the framer says so before the line.
    const DEFAULT_CTX_511: &str = r#"time=2026-09-02T16:52:04.751Z level=INFO source=routes.go:2058 msg="vram-based default context" total_vram="0 B" default_num_ctx=4096"#;

    #[test]
    fn a_figure_cut_that_is_not_undone_is_said() {
        let rows = wrap(DEFAULT_CTX_511, 132);
        assert_eq!(rows[1], "6");
        let out = framed_items(&rows);
        assert_eq!(
            out,
            [
                "cut 1 at 132".to_string(),
                format!("1: {}", &DEFAULT_CTX_511[..132]),
                "2: 6".to_string()
            ]
        );
        // Not cut inside the figure (`…default_num_` / `ctx=4096`): no notice, whatever is joined.
        let rows = wrap(&format!("{DEFAULT_CTX_511}  "), 120);
        assert!(framed_items(&rows).iter().all(|l| !l.starts_with("cut")));
        // The same record whole, or followed by a record a collector prefixed: no notice.
        assert_eq!(
            framed_items(&[DEFAULT_CTX_511.to_string()]),
            [format!("1: {DEFAULT_CTX_511}")]
        );
        let row = &DEFAULT_CTX_511[..132];
        let next = "2026-09-02T16:52:04.752Z stderr F 6".to_string();
        assert!(framed_items(&[row.to_string(), next])
            .iter()
            .all(|l| !l.starts_with("cut")));
    }

    /// Rows a terminal cut, then numbered as a paste numbers lines (`numbered-bar`, `numbered-colon` of
    /// `tests/paste_transforms.rs`), come back as the record: corpus 012:4 under journald at 80 columns with
    /// `  12 | ` (the line number before a collector's prefix is markup, not part of the prefix), corpus 015:1
    /// at 160 with `12:` (a row `2:11,11 memory…` is the number 2 and the rest of `layers.split=11,11,`, not
    /// a time).
    #[test]
    fn numbered_rows_of_a_wrap_come_back_whole() {
        let bar: Vec<String> = wrap(JOURNALD_012, 80)
            .iter()
            .enumerate()
            .map(|(i, row)| format!("{:>3} | {row}", i + 11))
            .collect();
        let out = frame_all(&bar);
        assert_eq!(out, [(1, strip(JOURNALD_012).to_string())]);
        let colon: Vec<String> = wrap(OFFLOAD_015, 160)
            .iter()
            .enumerate()
            .map(|(i, row)| format!("{}:{row}", i + 1))
            .collect();
        assert!(colon[1].starts_with("2:11,11 memory"), "{}", colon[1]);
        assert_eq!(frame_all(&colon), [(1, OFFLOAD_015.to_string())]);
    }

    /// Corpus 001:114 (`tests/fixtures/001-…`) under `docker logs -t` at 100 columns: the row ends in a blank
    /// and the next begins `device 0: `, which reads like llama.cpp's `Device 0: ` record; the blank before
    /// it says the sentence goes on, as for a function name's shape.
    #[test]
    fn a_row_that_reads_like_a_device_line_after_a_blank_is_the_rest() {
        let line = "2026-12-07T03:14:23.181418113Z ggml_backend_cuda_buffer_type_alloc_buffer: allocating 560.00 MiB on device 0: cudaMalloc failed: out of memory";
        let rows = wrap(line, 100);
        assert!(rows[1].starts_with("device 0: "), "{}", rows[1]);
        assert_eq!(frame_all(&rows), [(1, strip(line).to_string())]);
    }
}
