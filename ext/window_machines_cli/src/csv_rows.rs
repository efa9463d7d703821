//! CSV with a header row (RFC 4180): which columns hold the wanted fields,
//! and each row's cells. A record is one line: a quoted cell may hold
//! commas and doubled quotes, not line breaks. As Ruby's CSV reads a row,
//! an empty cell is null and a quoted empty one (`""`) an empty string.

use std::borrow::Cow;

/// Where each wanted field is among a file's columns.
#[derive(Debug, Clone)]
pub struct Columns {
    /// By wanted field: its column, if the header has it.
    wanted: Vec<Option<usize>>,
    width: usize,
}

impl Columns {
    /// Reads the header `line` for `fields` (matched whole, dots and all);
    /// refuses one that names a field twice, which would be ambiguous.
    pub fn from_header(line: &[u8], fields: &[String]) -> Result<Columns, String> {
        let mut cells = Vec::new();
        split(line, &mut cells)?;
        // A column's name is its text, null or not.
        let names: Vec<&[u8]> = cells
            .iter()
            .map(|cell| cell.as_deref().unwrap_or_default())
            .collect();
        if let Some(field) = fields.iter().find(|field| {
            names
                .iter()
                .filter(|name| **name == field.as_bytes())
                .count()
                > 1
        }) {
            return Err(format!("the header names the column {field:?} twice"));
        }
        Ok(Columns {
            wanted: fields
                .iter()
                .map(|field| names.iter().position(|name| *name == field.as_bytes()))
                .collect(),
            width: names.len(),
        })
    }

    /// Whether the header has the `field`th wanted field.
    #[must_use]
    pub fn has(&self, field: usize) -> bool {
        self.wanted.get(field).is_some_and(Option::is_some)
    }

    /// Fills `found` with the wanted fields' cells of the row on `line`; a
    /// null cell, or a field missing from the header, is `None`.
    pub fn read<'a>(
        &self,
        line: &'a [u8],
        cells: &mut Vec<Option<Cow<'a, [u8]>>>,
        found: &mut Vec<Option<Cow<'a, [u8]>>>,
    ) -> Result<(), String> {
        split(line, cells)?;
        if cells.len() != self.width {
            return Err(format!(
                "{} cells where the header has {}",
                cells.len(),
                self.width
            ));
        }
        found.clear();
        found.extend(
            self.wanted
                .iter()
                .map(|column| column.and_then(|column| cells[column].clone())),
        );
        Ok(())
    }
}

/// Splits one record into its cells, unquoted; an empty cell that was not
/// quoted is `None`.
fn split<'a>(line: &'a [u8], cells: &mut Vec<Option<Cow<'a, [u8]>>>) -> Result<(), String> {
    cells.clear();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut at = 0;
    loop {
        if line.get(at) == Some(&b'"') {
            let mut cell = Vec::new();
            let mut from = at + 1;
            loop {
                let Some(quote) = memchr::memchr(b'"', &line[from..]) else {
                    return Err("unterminated quoted cell (a cell may not span lines)".to_owned());
                };
                cell.extend_from_slice(&line[from..from + quote]);
                from += quote + 1;
                if line.get(from) == Some(&b'"') {
                    cell.push(b'"');
                    from += 1;
                } else {
                    break;
                }
            }
            cells.push(Some(Cow::Owned(cell)));
            at = from;
            match line.get(at) {
                None => return Ok(()),
                Some(b',') => at += 1,
                Some(_) => return Err("text after a quoted cell".to_owned()),
            }
        } else {
            let end = memchr::memchr(b',', &line[at..]).map_or(line.len(), |comma| at + comma);
            let cell = &line[at..end];
            match memchr::memchr2(b'"', b'\r', cell).map(|at| cell[at]) {
                Some(b'"') => return Err("a quote inside an unquoted cell".to_owned()),
                // Lines that end with a lone CR (old Mac files) read as one
                // line: refused here, rather than the rows lost in a header.
                Some(_) => return Err(
                    "a carriage return inside an unquoted cell (lines must end with \\n or \\r\\n)"
                        .to_owned(),
                ),
                None => {}
            }
            cells.push((!cell.is_empty()).then_some(Cow::Borrowed(cell)));
            if end == line.len() {
                return Ok(());
            }
            at = end + 1;
        }
    }
}

/// Writes `cell` as a CSV cell, quoted only when it must be: an empty
/// one is quoted, since an empty cell is a null.
pub fn write_cell(cell: &[u8], out: &mut Vec<u8>) {
    if cell.is_empty()
        || cell
            .iter()
            .any(|&byte| matches!(byte, b',' | b'"' | b'\n' | b'\r'))
    {
        out.push(b'"');
        for &byte in cell {
            if byte == b'"' {
                out.push(b'"');
            }
            out.push(byte);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(cell);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells of `line`, a null one as `<null>`.
    fn cells(line: &str) -> Result<Vec<String>, String> {
        let mut cells = Vec::new();
        split(line.as_bytes(), &mut cells)?;
        Ok(cells
            .iter()
            .map(|cell| match cell {
                Some(cell) => String::from_utf8(cell.to_vec()).unwrap(),
                None => "<null>".to_owned(),
            })
            .collect())
    }

    #[test]
    fn splits_quoted_and_plain_cells() {
        assert_eq!(
            cells(r#"a,"b,""c""",,"d"#).unwrap_err(),
            "unterminated quoted cell (a cell may not span lines)"
        );
        assert_eq!(
            cells(r#"a,"b,""c""",,d"#).unwrap(),
            ["a", "b,\"c\"", "<null>", "d"]
        );
        assert_eq!(cells(r#","",a,"#).unwrap(), ["<null>", "", "a", "<null>"]);
        assert_eq!(cells("a,b\r").unwrap(), ["a", "b"]);
        assert!(cells("ts,k\r1,a\r")
            .unwrap_err()
            .starts_with("a carriage return inside an unquoted cell"));
        assert_eq!(cells("\"a\rb\",c").unwrap(), ["a\rb", "c"]);
        assert_eq!(cells("").unwrap(), ["<null>"]);
        assert!(cells(r#""a"b"#).is_err());
        assert!(cells(r#"a"b"#).is_err());
    }

    #[test]
    fn finds_wanted_columns() {
        let columns =
            Columns::from_header(b"user,ts,,amount", &["ts".into(), "nope".into(), "".into()])
                .unwrap();
        let (mut cells, mut found) = (Vec::new(), Vec::new());
        columns.read(b"u1,17,x,5", &mut cells, &mut found).unwrap();
        let x = Some(Cow::Borrowed(&b"x"[..]));
        assert_eq!(found, [Some(Cow::Borrowed(&b"17"[..])), None, x]);
        columns.read(br#","",,"#, &mut cells, &mut found).unwrap();
        assert_eq!(found, [Some(Cow::Borrowed(&b""[..])), None, None]);
        assert!(columns.read(b"u1,17", &mut cells, &mut found).is_err());
    }

    #[test]
    fn quotes_only_when_needed() {
        let mut out = Vec::new();
        write_cell(b"plain", &mut out);
        out.push(b',');
        write_cell(b"a,\"b\"", &mut out);
        out.push(b',');
        write_cell(b"", &mut out);
        assert_eq!(out, br#"plain,"a,""b""","""#);
    }
}
