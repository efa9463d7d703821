//! Reads the few fields an event needs out of one JSON Lines line, without
//! building the rest: a validating scan that records where the wanted
//! values are and steps over everything else.

use std::borrow::Cow;

/// What a JSON value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    String,
    Number,
    Bool,
    Null,
    Object,
    Array,
}

/// A value found in a line: its kind, its text as written (a string with
/// its quotes) and where that starts on the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonValue<'a> {
    pub kind: JsonKind,
    pub raw: &'a [u8],
    pub start: usize,
}

/// Why a string's contents do not decode, and from which of their bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    pub at: usize,
    pub what: String,
}

/// Where a wanted value is on its line, kept without borrowing the line
/// so one buffer serves every line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    kind: JsonKind,
    start: usize,
    end: usize,
}

impl Found {
    /// The value on `line`, the line it was found on.
    #[must_use]
    pub fn on<'a>(&self, line: &'a [u8]) -> JsonValue<'a> {
        JsonValue {
            kind: self.kind,
            raw: &line[self.start..self.end],
            start: self.start,
        }
    }
}

impl<'a> JsonValue<'a> {
    /// A string's contents with escapes decoded (borrowed when it has
    /// none, as most keys and times do); the text of anything else.
    pub fn text(&self) -> Result<Cow<'a, [u8]>, String> {
        match self.kind {
            JsonKind::String => {
                let contents = &self.raw[1..self.raw.len() - 1];
                // Most are short: a byte at a time is sooner done than a
                // vector search is set up.
                if !contents.contains(&b'\\') {
                    Ok(Cow::Borrowed(contents))
                } else {
                    // The contents start after the quote.
                    decode_string(contents).map(Cow::Owned).map_err(|error| {
                        let column = self.start + 1 + error.at + 1;
                        format!("malformed JSON at column {column}: {}", error.what)
                    })
                }
            }
            _ => Ok(Cow::Borrowed(self.raw)),
        }
    }
}

/// Dotted field paths, each split into its names; at most [`MAX_FIELDS`].
#[derive(Debug, Clone)]
pub struct FieldPaths {
    paths: Vec<Vec<Vec<u8>>>,
}

const MAX_DEPTH: usize = 128;
/// The most fields a line is read for (keys, time and aggregators).
pub const MAX_FIELDS: usize = 64;

impl FieldPaths {
    #[must_use]
    pub fn new(paths: &[String]) -> FieldPaths {
        FieldPaths {
            paths: paths
                .iter()
                .map(|path| {
                    path.split('.')
                        .map(|name| name.as_bytes().to_vec())
                        .collect()
                })
                .collect(),
        }
    }

    /// Fills `found` (one slot per path) from the object on `line`; a path
    /// not there stays `None`. Refuses a line that is not one JSON object.
    pub fn read(&self, line: &[u8], found: &mut Vec<Option<Found>>) -> Result<(), String> {
        found.clear();
        found.resize(self.paths.len(), None);
        let mut scan = Scan { text: line, at: 0 };
        scan.skip_space();
        if scan.peek() != Some(b'{') {
            return Err("the line is not a JSON object".to_owned());
        }
        let active = (0..self.paths.len()).fold(0, |set: u64, path| set | 1 << path);
        self.object(&mut scan, active, 0, found)?;
        scan.skip_space();
        if scan.at != line.len() {
            return Err(scan.problem("more after the JSON object"));
        }
        Ok(())
    }

    /// Scans the object at the cursor, recording the paths in `active` (a
    /// set of path indexes) whose names so far lead here (`depth` names
    /// matched).
    fn object<'a>(
        &self,
        scan: &mut Scan<'a>,
        active: u64,
        depth: usize,
        found: &mut [Option<Found>],
    ) -> Result<(), String> {
        if depth >= MAX_DEPTH {
            return Err(scan.problem("nested too deeply"));
        }
        scan.at += 1;
        scan.skip_space();
        if scan.peek() == Some(b'}') {
            scan.at += 1;
            return Ok(());
        }
        loop {
            scan.skip_space();
            let (name_start, name_end, escaped) = scan.string()?;
            let raw_name = &scan.text[name_start + 1..name_end - 1];
            let decoded;
            // A name that does not decode (a lone surrogate) is no field's:
            // like a value no field asks for, it is stepped over.
            let name: Option<&[u8]> = if escaped {
                decoded = decode_string(raw_name).ok();
                decoded.as_deref()
            } else {
                Some(raw_name)
            };
            scan.skip_space();
            if scan.peek() != Some(b':') {
                return Err(scan.problem("expected ':' after a name"));
            }
            scan.at += 1;
            scan.skip_space();
            let (mut ending, mut deeper) = (0_u64, 0_u64);
            if let Some(name) = name {
                for index in bits(active) {
                    match self.paths[index].get(depth) {
                        Some(part) if part.as_slice() == name => {
                            if self.paths[index].len() == depth + 1 {
                                ending |= 1 << index;
                            } else {
                                deeper |= 1 << index;
                            }
                        }
                        _ => {}
                    }
                }
            }
            // A name given twice means its last value, as JSON.parse
            // reads it: what an earlier value held below it goes.
            for index in bits(deeper) {
                found[index] = None;
            }
            let start = scan.at;
            if deeper != 0 && scan.peek() == Some(b'{') {
                self.object(scan, deeper, depth + 1, found)?;
            } else {
                scan.value(depth + 1)?;
            }
            let value = Found {
                kind: kind_of(scan.text[start]),
                start,
                end: scan.at,
            };
            for index in bits(ending) {
                found[index] = Some(value);
            }
            scan.skip_space();
            match scan.peek() {
                Some(b',') => scan.at += 1,
                Some(b'}') => {
                    scan.at += 1;
                    return Ok(());
                }
                _ => return Err(scan.problem("expected ',' or '}' in an object")),
            }
        }
    }
}

/// The members of a set of path indexes, lowest first.
fn bits(mut set: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let index = set.trailing_zeros() as usize;
            set &= set - 1;
            index
        })
    })
}

/// The kind of `text` if it is exactly one well-formed JSON value: what a
/// state file, read as untrusted, may hold where a value was kept.
#[must_use]
pub fn kind_of_value(text: &[u8]) -> Option<JsonKind> {
    let mut scan = Scan { text, at: 0 };
    scan.value(0).ok()?;
    (scan.at == text.len()).then(|| kind_of(text[0]))
}

fn kind_of(first: u8) -> JsonKind {
    match first {
        b'"' => JsonKind::String,
        b'{' => JsonKind::Object,
        b'[' => JsonKind::Array,
        b't' | b'f' => JsonKind::Bool,
        b'n' => JsonKind::Null,
        _ => JsonKind::Number,
    }
}

/// A byte of one in each byte of a word, and its high bit in each.
const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// Words of a string looked at before a vector search.
const SHORT_WORDS: usize = 4;

/// Where the plain characters at the start of `text` end (at a quote, a
/// backslash or a control character), if within its first
/// [`SHORT_WORDS`] words of eight bytes; `None` when not found there.
fn plain_run(text: &[u8]) -> Option<usize> {
    let mut words = text.chunks_exact(8);
    for (index, chunk) in words.by_ref().take(SHORT_WORDS).enumerate() {
        let stops = string_stops(chunk);
        if stops != 0 {
            return Some(index * 8 + stops.trailing_zeros() as usize / 8);
        }
    }
    // A short string's last few bytes.
    let rest = text.len() / 8 * 8;
    if rest > SHORT_WORDS * 8 {
        return None;
    }
    text[rest..]
        .iter()
        .position(|&byte| ends_plain_run(byte))
        .map(|offset| rest + offset)
}

/// Whether `byte` ends a run of a string's plain characters: a quote, a
/// backslash or a control character.
fn ends_plain_run(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// The high bit of each of the eight bytes of `chunk` that ends a run of
/// plain characters, exact up to the first of them (which is all that is
/// read of it): none is set when no byte does.
fn string_stops(chunk: &[u8]) -> u64 {
    // The high bit of each byte below `n` (at most 0x80); a byte's
    // borrow reaches only the bytes after it.
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let mut bytes = [0; 8];
    bytes.copy_from_slice(chunk);
    let word = u64::from_le_bytes(bytes);
    below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
        | below(word, 0x20)
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn problem(&self, what: &str) -> String {
        format!("malformed JSON at column {}: {what}", self.at + 1)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// Steps over a string: its start and end (quotes included) and whether
    /// it has escapes.
    fn string(&mut self) -> Result<(usize, usize, bool), String> {
        if self.peek() != Some(b'"') {
            return Err(self.problem("expected a string"));
        }
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            // Most strings (names, ids) are short: eight bytes at a time
            // find their end sooner than a vector search is set up. A
            // control character is left to the search, which reports it.
            let quick = plain_run(&self.text[self.at..])
                .map(|offset| self.at + offset)
                .filter(|&stop| self.text[stop] >= 0x20);
            if let Some(stop) = quick {
                self.at = stop;
            } else {
                let rest = &self.text[self.at..];
                let stop = memchr::memchr3(b'"', b'\\', b'\n', rest);
                // The first fault from the left is the one reported.
                if let Some(control) = rest[..stop.unwrap_or(rest.len())]
                    .iter()
                    .position(|&byte| byte < 0x20)
                {
                    self.at += control;
                    return Err(self.problem("control character in a string"));
                }
                let Some(stop) = stop else {
                    self.at = self.text.len();
                    return Err(self.problem("unterminated string"));
                };
                self.at += stop;
            }
            match self.text[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok((start, self.at, escaped));
                }
                b'\\' => {
                    escaped = true;
                    let width = match self.text.get(self.at + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                        Some(b'u')
                            if hex4(self.text.get(self.at + 2..).unwrap_or(&[])).is_some() =>
                        {
                            6
                        }
                        _ => return Err(self.problem("bad escape in a string")),
                    };
                    self.at += width;
                }
                _ => return Err(self.problem("control character in a string")),
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), String> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.problem("unknown word"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        // Times and ids run to a dozen digits or more: eight at a time.
        while let Some(chunk) = self.text.get(self.at..self.at + 8) {
            let mut bytes = [0; 8];
            bytes.copy_from_slice(chunk);
            let word = u64::from_le_bytes(bytes);
            // The high bit of each byte that is not a digit: below b'0', the
            // subtraction borrows; above b'9', the addition carries into it.
            let not_digits = (word.wrapping_sub(ONES * u64::from(b'0'))
                | word.wrapping_add(ONES * u64::from(0x7f - b'9')))
                & HIGHS
                | word & HIGHS;
            if not_digits != 0 {
                self.at += not_digits.trailing_zeros() as usize / 8;
                return self.at - start;
            }
            self.at += 8;
        }
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let leading_zero = self.peek() == Some(b'0');
        let whole = self.digits();
        if whole == 0 || (leading_zero && whole > 1) {
            return Err(self.problem("bad number"));
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.problem("bad number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.problem("bad number"));
            }
        }
        Ok(())
    }

    /// Steps over any value, checking it is well formed.
    fn value(&mut self, depth: usize) -> Result<(), String> {
        match self.peek() {
            Some(b'"') => self.string().map(|_| ()),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(open @ (b'{' | b'[')) => {
                // `depth` containers hold this one: past MAX_DEPTH levels?
                if depth >= MAX_DEPTH {
                    return Err(self.problem("nested too deeply"));
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.at += 1;
                self.skip_space();
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.skip_space();
                    if open == b'{' {
                        self.string()?;
                        self.skip_space();
                        if self.peek() != Some(b':') {
                            return Err(self.problem("expected ':' after a name"));
                        }
                        self.at += 1;
                        self.skip_space();
                    }
                    self.value(depth + 1)?;
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(byte) if byte == close => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(self.problem("expected ',' or a closing bracket")),
                    }
                }
            }
            _ => Err(self.problem("expected a value")),
        }
    }
}

fn hex4(text: &[u8]) -> Option<u32> {
    let digits = text.get(..4)?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// The contents of a JSON string (between its quotes) with escapes decoded;
/// refused unless valid UTF-8.
pub fn decode_string(raw: &[u8]) -> Result<Vec<u8>, Undecodable> {
    if let Err(error) = std::str::from_utf8(raw) {
        // Escapes are ASCII and decode to whole characters, so the
        // contents are valid UTF-8 exactly when the decoded string is.
        return Err(Undecodable {
            at: error.valid_up_to(),
            what: "a string is not valid UTF-8".to_owned(),
        });
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < raw.len() {
        let byte = raw[at];
        if byte != b'\\' {
            out.push(byte);
            at += 1;
            continue;
        }
        let escaped_at = at;
        let bad = || Undecodable {
            at: escaped_at,
            what: "bad escape in a string".to_owned(),
        };
        let escape = *raw.get(at + 1).ok_or_else(bad)?;
        at += 2;
        let decoded = match escape {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = hex4(&raw[at..]).ok_or_else(bad)?;
                at += 4;
                // Ruby's JSON would make such a string invalid UTF-8, which
                // no key or output can carry.
                let unpaired = || Undecodable {
                    at: escaped_at,
                    what: format!("unpaired surrogate \\u{high:04x} in a string"),
                };
                let code = if (0xD800..0xDC00).contains(&high) {
                    if raw.get(at..at + 2) != Some(b"\\u") {
                        return Err(unpaired());
                    }
                    let low = hex4(&raw[at + 2..]).ok_or_else(bad)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(unpaired());
                    }
                    at += 6;
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                char::from_u32(code).ok_or_else(unpaired)?
            }
            _ => return Err(bad()),
        };
        let mut buffer = [0; 4];
        out.extend_from_slice(decoded.encode_utf8(&mut buffer).as_bytes());
    }
    Ok(out)
}

/// `text` as a JSON string, quotes included.
pub fn write_string(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    // Most strings (keys, ids) need no escape: eight bytes at a time say so.
    let mut words = text.chunks_exact(8);
    if words.by_ref().all(|chunk| string_stops(chunk) == 0)
        && !words.remainder().iter().any(|&byte| ends_plain_run(byte))
    {
        out.extend_from_slice(text);
        out.push(b'"');
        return;
    }
    let mut plain_from = 0;
    for (at, &byte) in text.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&text[plain_from..at]);
        if escape.is_empty() {
            out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
        } else {
            out.extend_from_slice(escape);
        }
        plain_from = at + 1;
    }
    out.extend_from_slice(&text[plain_from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Scan::string` as it was before short strings were looked at a
    /// word at a time: one vector search per run of plain characters.
    fn string_by_search(text: &[u8]) -> Result<(usize, usize, bool), String> {
        let mut scan = Scan { text, at: 1 };
        let mut escaped = false;
        loop {
            let rest = &scan.text[scan.at..];
            let stop = memchr::memchr3(b'"', b'\\', b'\n', rest);
            if let Some(control) = rest[..stop.unwrap_or(rest.len())]
                .iter()
                .position(|&byte| byte < 0x20)
            {
                scan.at += control;
                return Err(scan.problem("control character in a string"));
            }
            let Some(stop) = stop else {
                scan.at = text.len();
                return Err(scan.problem("unterminated string"));
            };
            scan.at += stop;
            match text[scan.at] {
                b'"' => return Ok((0, scan.at + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    scan.at += match text.get(scan.at + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                        Some(b'u') if hex4(text.get(scan.at + 2..).unwrap_or(&[])).is_some() => 6,
                        _ => return Err(scan.problem("bad escape in a string")),
                    };
                }
                _ => return Err(scan.problem("control character in a string")),
            }
        }
    }

    #[test]
    fn strings_short_and_long_end_where_a_search_would_end_them() {
        // Bytes past 0x7f (UTF-8) and DEL are plain, 0x1f is not.
        let specials: [&[u8]; 11] = [
            b"\"",
            b"\\n",
            b"\\u00e9",
            b"\\x",
            b"\t",
            b"\n",
            b"\\",
            b"\x1f",
            "\u{e9}\"".as_bytes(),
            "\u{1f600}\x7f".as_bytes(),
            b"\xff\x80\x20\"",
        ];
        for length in [
            0_usize, 1, 5, 7, 8, 9, 15, 16, 17, 24, 30, 31, 32, 33, 39, 40, 41, 70,
        ] {
            for special in specials {
                for at in [0, 1, length / 2, length.saturating_sub(1), length] {
                    let mut text = b"\"".to_vec();
                    text.extend(std::iter::repeat_n(b'a', at));
                    text.extend_from_slice(special);
                    text.extend(std::iter::repeat_n(b'b', length - at.min(length)));
                    for ending in [&b"\""[..], b""] {
                        let mut text = text.clone();
                        text.extend_from_slice(ending);
                        let mut scan = Scan { text: &text, at: 0 };
                        assert_eq!(scan.string(), string_by_search(&text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn strings_are_written_escaped_wherever_the_byte_to_escape_is() {
        // Each byte as JSON writes it, one at a time.
        let by_byte = |text: &[u8]| {
            let mut out = b"\"".to_vec();
            for &byte in text {
                match byte {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    0..=0x1f => out.extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
                    _ => out.push(byte),
                }
            }
            out.push(b'"');
            out
        };
        for length in [0_usize, 1, 7, 8, 9, 16, 17, 33] {
            for special in [b'"', b'\\', b'\n', 0x01, 0x1f, b' ', 0x7f, 0x80, 0xff] {
                for at in 0..=length {
                    let mut text = vec![b'a'; length];
                    text.insert(at, special);
                    let mut out = Vec::new();
                    write_string(&text, &mut out);
                    assert_eq!(out, by_byte(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn digits_end_at_the_first_byte_that_is_not_one() {
        let after: [&[u8]; 10] = [
            b"", b",", b"}", b".5", b"e3", b":", b"/", b"\x80", b"\xff9", b" 1",
        ];
        for length in 0..=20 {
            for ending in after {
                for lead in [0_usize, 1, 3] {
                    let mut text = vec![b'"'; lead];
                    text.extend((0..length).map(|at| b"0123456789"[at % 10]));
                    if !ending.is_empty() {
                        // Digits after the end, within the same word.
                        text.extend_from_slice(ending);
                        text.extend_from_slice(b"12345678");
                    }
                    let mut scan = Scan {
                        text: &text,
                        at: lead,
                    };
                    assert_eq!(scan.digits(), length, "{text:?}");
                    assert_eq!(scan.at, lead + length);
                }
            }
        }
    }

    #[test]
    fn a_control_character_is_reported_at_its_own_column_before_a_missing_quote() {
        for before in [1_usize, 31, 40] {
            for ending in [&b"bc\""[..], b"bc"] {
                let mut text = b"\"".to_vec();
                text.extend(std::iter::repeat_n(b'a', before));
                text.push(1);
                text.extend_from_slice(ending);
                let mut scan = Scan { text: &text, at: 0 };
                let column = before + 2;
                assert_eq!(
                    scan.string(),
                    Err(format!(
                        "malformed JSON at column {column}: control character in a string"
                    ))
                );
            }
        }
    }

    #[test]
    fn surrogates_decode_in_pairs_and_are_refused_alone_where_they_stand() {
        assert_eq!(
            decode_string(br"a\ud83d\ude00"),
            Ok("a\u{1f600}".as_bytes().to_vec())
        );
        for (raw, at, named) in [
            (&br"\ud800"[..], 0, "d800"),
            (br"ab\ud800x", 2, "d800"),
            (br"\n\ud800\u0041", 2, "d800"),
            (br"\udc00", 0, "dc00"),
        ] {
            assert_eq!(
                decode_string(raw),
                Err(Undecodable {
                    at,
                    what: format!("unpaired surrogate \\u{named} in a string")
                })
            );
        }
    }

    #[test]
    fn an_undecodable_value_is_reported_at_its_column_and_an_undecodable_name_matches_nothing() {
        let line = r#"{"ts":1,"user":"ab\ud800"}"#;
        let paths = FieldPaths::new(&["user".to_owned()]);
        let mut found = Vec::new();
        paths.read(line.as_bytes(), &mut found).unwrap();
        let value = found[0].unwrap().on(line.as_bytes());
        assert_eq!(value.raw, br#""ab\ud800""#);
        assert_eq!(
            value.text(),
            Err("malformed JSON at column 19: unpaired surrogate \\ud800 in a string".to_owned())
        );
        assert_eq!(
            read(&["user"], r#"{"us\ud800er":"a","user":"b"}"#),
            Ok(vec![Some(r#""b""#.to_owned())])
        );
        assert_eq!(
            read(&["user"], r#"{"user":"b","us\ud800er":"a"}"#),
            Ok(vec![Some(r#""b""#.to_owned())])
        );
    }

    fn read(paths: &[&str], line: &str) -> Result<Vec<Option<String>>, String> {
        let paths = FieldPaths::new(&paths.iter().map(|&p| p.to_owned()).collect::<Vec<_>>());
        let mut found = Vec::new();
        paths.read(line.as_bytes(), &mut found)?;
        Ok(found
            .iter()
            .map(|found| {
                found
                    .map(|found| String::from_utf8(found.on(line.as_bytes()).raw.to_vec()).unwrap())
            })
            .collect())
    }

    #[test]
    fn a_name_given_twice_means_its_last_value_all_the_way_down() {
        let line = r#"{"u": {"id": 1, "n": 2}, "k": 3, "u": {"id": 4}, "k": 5}"#;
        assert_eq!(
            read(&["u.id", "u.n", "k"], line).unwrap(),
            vec![Some("4".into()), None, Some("5".into())]
        );
        let line = r#"{"u": {"id": 1}, "u": 7}"#;
        assert_eq!(
            read(&["u.id", "u"], line).unwrap(),
            vec![None, Some("7".into())]
        );
    }

    #[test]
    fn finds_top_level_and_nested_fields() {
        let line =
            r#" {"a": 1, "skip": [1, {"x": "}"}], "u": {"id": "x\"y", "n": null}, "t": 1.5e3} "#;
        assert_eq!(
            read(&["a", "u.id", "t", "u.n", "u.missing", "u"], line).unwrap(),
            vec![
                Some("1".into()),
                Some(r#""x\"y""#.into()),
                Some("1.5e3".into()),
                Some("null".into()),
                None,
                Some(r#"{"id": "x\"y", "n": null}"#.into()),
            ]
        );
    }

    #[test]
    fn takes_lines_nested_up_to_128_levels() {
        // Levels of Arrays under the top-level object, itself one level.
        let nested = |levels: usize| {
            format!(
                r#"{{"a": 1, "n": {}1{}}}"#,
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        assert_eq!(
            read(&["a"], &nested(MAX_DEPTH)).unwrap(),
            vec![Some("1".into())]
        );
        assert!(read(&["a"], &nested(MAX_DEPTH + 1)).is_err());
        let objects =
            |levels: usize| format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
        let path = vec!["a"; MAX_DEPTH].join(".");
        assert_eq!(
            read(&[path.as_str()], &objects(MAX_DEPTH)).unwrap(),
            vec![Some("1".into())]
        );
        assert!(read(&["a"], &objects(MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn escaped_names_match() {
        assert_eq!(
            read(&["user"], r#"{"\u0075ser": "a"}"#).unwrap(),
            vec![Some(r#""a""#.into())]
        );
    }

    #[test]
    fn refuses_malformed_lines() {
        for line in [
            "",
            "[1]",
            r#"{"a": 1"#,
            r#"{"a": tru}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1} x"#,
            r#"{"a" 1}"#,
            r#"{"a": "b}"#,
            r#"{"a": [1,]}"#,
            r#"{"a": "\q"}"#,
            r#"{"a": "\u12"}"#,
            r#"{"a": "\u+123"}"#,
            "{\"a\": \"\u{1}\"}",
        ] {
            assert!(read(&["a"], line).is_err(), "{line}");
        }
    }

    #[test]
    fn strings_decode_and_encode() {
        assert_eq!(
            decode_string(br#"a\"b\\c\u00e9\ud83d\ude00\n"#).unwrap(),
            "a\"b\\cé😀\n".as_bytes()
        );
        assert!(decode_string(br"\ud83d").is_err());
        let mut out = Vec::new();
        write_string("a\"b\\\u{1}é".as_bytes(), &mut out);
        assert_eq!(out, r#""a\"b\\\u0001é""#.as_bytes());
    }
}
