//! Closed windows and sessions written out: JSON Lines, CSV with a header,
//! or an aligned table for a person at a terminal.

use std::io;

use window_machines_core::Accumulator;

use crate::job::OutputFormat;
use crate::json_fields::{decode_string, write_string};
use crate::keys;
use crate::sink::Sink;
use crate::timestamps::TimeFormat;
use crate::values::{write_result, Value};

/// Rows a table holds back to size its columns before printing any.
const TABLE_SAMPLE: usize = 100;

pub struct RecordWriter {
    format: OutputFormat,
    names: Vec<String>,
    key_count: usize,
    /// Each column's name as a JSON object member (`"name":`).
    members: Vec<Vec<u8>>,
    line: Vec<u8>,
    cell: Vec<u8>,
    table: Table,
    /// The two times as last written.
    times_written: [WrittenTime; 2],
}

/// A time as last written, for the next record's: windows closing together
/// share their start and end, which are then copied rather than written
/// again digit by digit.
#[derive(Default)]
struct WrittenTime {
    ticks: u64,
    format: Option<TimeFormat>,
    text: Vec<u8>,
}

impl WrittenTime {
    /// Writes `ticks` in `format`, quoted if a string, as JSON does.
    fn write_json(&mut self, ticks: u64, format: TimeFormat, out: &mut Vec<u8>) {
        if self.format != Some(format) || self.ticks != ticks {
            self.text.clear();
            format.write(ticks, true, &mut self.text);
            self.ticks = ticks;
            self.format = Some(format);
        }
        out.extend_from_slice(&self.text);
    }
}

#[derive(Default)]
struct Table {
    widths: Vec<usize>,
    held: Vec<Vec<String>>,
    started: bool,
}

impl RecordWriter {
    /// Columns: `keys`, the two times, then `aggregates`.
    #[must_use]
    pub fn new(
        format: OutputFormat,
        keys: &[String],
        times: [&str; 2],
        aggregates: &[String],
    ) -> RecordWriter {
        let names: Vec<String> = keys
            .iter()
            .map(String::as_str)
            .chain(times)
            .chain(aggregates.iter().map(String::as_str))
            .map(str::to_owned)
            .collect();
        let members = names
            .iter()
            .map(|name| {
                let mut member = Vec::new();
                write_string(name.as_bytes(), &mut member);
                member.push(b':');
                member
            })
            .collect();
        RecordWriter {
            format,
            key_count: keys.len(),
            names,
            members,
            line: Vec::new(),
            cell: Vec::new(),
            table: Table::default(),
            times_written: Default::default(),
        }
    }

    /// Writes one closed window or session.
    pub fn write(
        &mut self,
        sink: &mut Sink,
        key: &[u8],
        times: [u64; 2],
        time_format: TimeFormat,
        accs: &[Accumulator<Value>],
    ) -> io::Result<()> {
        let key_fields = keys::fields(key);
        match self.format {
            OutputFormat::Jsonl => {
                self.line.clear();
                self.line.push(b'{');
                let mut column = 0;
                let member = |line: &mut Vec<u8>, column: &mut usize| {
                    if *column > 0 {
                        line.push(b',');
                    }
                    line.extend_from_slice(&self.members[*column]);
                    *column += 1;
                };
                for field in key_fields.take(self.key_count) {
                    member(&mut self.line, &mut column);
                    keys::write_json(field, &mut self.line);
                }
                for (time, written) in times.into_iter().zip(&mut self.times_written) {
                    member(&mut self.line, &mut column);
                    written.write_json(time, time_format, &mut self.line);
                }
                for acc in accs {
                    member(&mut self.line, &mut column);
                    write_result(acc, &mut self.line);
                }
                self.line.extend_from_slice(b"}\n");
                sink.write(&self.line)
            }
            OutputFormat::Csv => {
                if sink.is_empty() {
                    self.line.clear();
                    for (index, name) in self.names.iter().enumerate() {
                        if index > 0 {
                            self.line.push(b',');
                        }
                        crate::csv_rows::write_cell(name.as_bytes(), &mut self.line);
                    }
                    self.line.push(b'\n');
                    sink.write(&self.line)?;
                }
                self.line.clear();
                let cells = self.cells(key_fields, times, time_format, accs);
                for (index, cell) in cells.iter().enumerate() {
                    if index > 0 {
                        self.line.push(b',');
                    }
                    // Null is an empty cell.
                    if let Some(cell) = cell {
                        crate::csv_rows::write_cell(cell.as_bytes(), &mut self.line);
                    }
                }
                self.line.push(b'\n');
                sink.write(&self.line)
            }
            OutputFormat::Table => {
                let cells = self.cells(key_fields, times, time_format, accs);
                self.table.held.push(cells.into_iter().map(shown).collect());
                if self.table.started || self.table.held.len() >= TABLE_SAMPLE {
                    self.print_table(sink)?;
                }
                Ok(())
            }
        }
    }

    /// Writes what a table still holds back to size its columns.
    pub fn release(&mut self, sink: &mut Sink) -> io::Result<()> {
        if self.format == OutputFormat::Table && !self.table.held.is_empty() {
            self.print_table(sink)?;
        }
        Ok(())
    }

    /// A record's cells as text: strings unquoted, `None` for null.
    fn cells(
        &mut self,
        key_fields: keys::Fields,
        times: [u64; 2],
        time_format: TimeFormat,
        accs: &[Accumulator<Value>],
    ) -> Vec<Option<String>> {
        let mut cells = Vec::with_capacity(self.names.len());
        for field in key_fields.take(self.key_count) {
            cells.push(keys::text(field).map(|text| String::from_utf8_lossy(text).into_owned()));
        }
        for time in times {
            self.cell.clear();
            time_format.write(time, false, &mut self.cell);
            cells.push(Some(String::from_utf8_lossy(&self.cell).into_owned()));
        }
        for acc in accs {
            cells.push(self.result_text(acc));
        }
        cells
    }

    fn result_text(&mut self, acc: &Accumulator<Value>) -> Option<String> {
        self.cell.clear();
        write_result(acc, &mut self.cell);
        let text: &[u8] = &self.cell;
        if text == b"null" {
            return None;
        }
        if text.first() == Some(&b'"') {
            if let Ok(decoded) = decode_string(&text[1..text.len() - 1]) {
                return Some(String::from_utf8_lossy(&decoded).into_owned());
            }
        }
        Some(String::from_utf8_lossy(text).into_owned())
    }

    fn print_table(&mut self, sink: &mut Sink) -> io::Result<()> {
        let table = &mut self.table;
        if !table.started {
            table.widths = self.names.iter().map(|name| name.chars().count()).collect();
            for row in &table.held {
                for (width, cell) in table.widths.iter_mut().zip(row) {
                    *width = (*width).max(cell.chars().count());
                }
            }
            let header = self.names.clone();
            write_row(sink, &table.widths, &header)?;
            table.started = true;
        }
        for row in std::mem::take(&mut table.held) {
            write_row(sink, &table.widths, &row)?;
        }
        Ok(())
    }
}

/// `cell` as a terminal may show it: null as nothing, an empty string as
/// `""`, control characters and line or paragraph separators escaped
/// (`\n`, `\u{1b}`, `\u{2028}`), so that data can neither break a row nor
/// send the terminal a command.
fn shown(cell: Option<String>) -> String {
    let Some(cell) = cell else {
        return String::new();
    };
    if cell.is_empty() {
        return r#""""#.to_owned();
    }
    let hidden = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !cell.chars().any(hidden) {
        return cell;
    }
    cell.chars()
        .map(|c| {
            if hidden(c) {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn write_row(sink: &mut Sink, widths: &[usize], cells: &[String]) -> io::Result<()> {
    let mut line = String::new();
    // Where the last cell with something in it ends: a row ends there,
    // not in the padding before empty cells.
    let mut end = 0;
    for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if index > 0 {
            line.push_str("  ");
        }
        line.push_str(cell);
        if !cell.is_empty() {
            end = line.len();
        }
        line.extend(std::iter::repeat_n(
            ' ',
            width.saturating_sub(cell.chars().count()),
        ));
    }
    line.truncate(end);
    line.push('\n');
    sink.write(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_table_cell_shows_control_characters_escaped() {
        let shown = |cell: &str| shown(Some(cell.to_owned()));
        assert_eq!(shown("plain café"), "plain café");
        assert_eq!(shown("a\u{1b}[2Jb\r\n\t"), "a\\u{1b}[2Jb\\r\\n\\t");
        // C1 controls (a terminal may read U+009B as the start of a command) too.
        assert_eq!(shown("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(shown("a\u{2028}b"), "a\\u{2028}b");
    }

    #[test]
    fn a_table_cell_tells_null_from_an_empty_string() {
        assert_eq!(shown(None), "");
        assert_eq!(shown(Some(String::new())), r#""""#);
    }
}
