//! One line of input read into an event: its key, its time in ticks, and
//! each aggregator's input.

use std::borrow::Cow;
use std::cmp::Ordering;

use smallvec::SmallVec;
use window_machines_core::{Input, Kind};

use crate::csv_rows::Columns;
use crate::job::{Aggregate, InputFormat};
use crate::json_fields::{FieldPaths, Found, JsonKind, JsonValue};
use crate::keys::KeyWriter;
use crate::timestamps::TimeFormat;
use crate::values::{is_number, json_of_text, number_input, written_input, Value};

/// Fields a line's are kept inline for: a key or two, the time, a few
/// aggregators' fields.
const INLINE_FIELDS: usize = 8;

/// A field of one line, from either format.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Json(JsonValue<'a>),
    Cell(&'a [u8]),
}

/// Reads lines into events; learns the time format from the first event
/// when not told.
pub struct EventReader {
    /// The distinct fields' paths: several aggregators of one field (a
    /// sum and a max of the amount) read it once.
    paths: FieldPaths,
    distinct: Vec<String>,
    /// The fields asked for, keys first, then the time, then the
    /// aggregators' fields; and each one's place among the distinct.
    fields: Vec<String>,
    slots: Vec<usize>,
    key_count: usize,
    time_field: String,
    aggregates: Vec<Aggregate>,
    time_format: Option<TimeFormat>,
    columns: Option<Columns>,
    key: KeyWriter,
    /// Reused from line to line.
    found: Vec<Option<Found>>,
    cells: Vec<Option<Cow<'static, [u8]>>>,
    cells_found: Vec<Option<Cow<'static, [u8]>>>,
}

/// What a line held, but its key: [`EventReader::key`].
pub struct Event {
    pub timestamp: u64,
    /// How the time was written (learnt from the first event).
    pub time_format: TimeFormat,
}

impl EventReader {
    #[must_use]
    pub fn new(
        fields: Vec<String>,
        key_count: usize,
        aggregates: Vec<Aggregate>,
        time_format: Option<TimeFormat>,
    ) -> EventReader {
        let mut distinct: Vec<String> = Vec::new();
        let slots = fields
            .iter()
            .map(|field| {
                distinct
                    .iter()
                    .position(|seen| seen == field)
                    .unwrap_or_else(|| {
                        distinct.push(field.clone());
                        distinct.len() - 1
                    })
            })
            .collect();
        EventReader {
            paths: FieldPaths::new(&distinct),
            distinct,
            time_field: fields[key_count].clone(),
            fields,
            slots,
            key_count,
            aggregates,
            time_format,
            columns: None,
            key: KeyWriter::default(),
            found: Vec::new(),
            cells: Vec::new(),
            cells_found: Vec::new(),
        }
    }

    /// Starts a CSV file: `header` names its columns, which must include
    /// every field asked for (a misspelt one would read as null throughout).
    pub fn csv_header(&mut self, header: &[u8]) -> Result<(), String> {
        let columns = Columns::from_header(header, &self.distinct)?;
        if let Some(missing) = (0..self.fields.len()).find(|&field| !columns.has(self.slots[field]))
        {
            let name = &self.fields[missing];
            return Err(match missing.cmp(&self.key_count) {
                Ordering::Less => format!("the header has no column {name:?} for --key"),
                Ordering::Equal => format!("the header has no time column {name:?}"),
                Ordering::Greater => format!("the header has no column {name:?} for --agg"),
            });
        }
        self.columns = Some(columns);
        Ok(())
    }

    /// Reads `line` of a file in `format`, appending its aggregators' inputs
    /// to `inputs` (nothing, if the line is refused).
    pub fn read(
        &mut self,
        format: InputFormat,
        line: &[u8],
        inputs: &mut Vec<Input<Value>>,
    ) -> Result<Event, String> {
        let before = inputs.len();
        let read = self.read_fields(format, line, inputs);
        if read.is_err() {
            inputs.truncate(before);
        }
        read
    }

    /// The key of the line last read.
    #[must_use]
    pub fn key(&self) -> &[u8] {
        self.key.bytes()
    }

    fn read_fields(
        &mut self,
        format: InputFormat,
        line: &[u8],
        inputs: &mut Vec<Input<Value>>,
    ) -> Result<Event, String> {
        // Whatever is copied to the output must be text. Most lines are
        // ASCII, which a word at a time finds sooner.
        if !line.is_ascii() {
            if let Err(error) = std::str::from_utf8(line) {
                let column = error.valid_up_to() + 1;
                return Err(format!("the line is not valid UTF-8 at column {column}"));
            }
        }
        match format {
            InputFormat::Jsonl => {
                let mut found = std::mem::take(&mut self.found);
                let read = self.paths.read(line, &mut found);
                // Only as many as asked for: an array of MAX_FIELDS would be
                // filled in for every line.
                let fields: SmallVec<[Option<Field>; INLINE_FIELDS]> = self
                    .slots
                    .iter()
                    .map(|&slot| found[slot].map(|found| Field::Json(found.on(line))))
                    .collect();
                self.found = found;
                read?;
                self.event(&fields, inputs)
            }
            InputFormat::Csv => {
                let columns = self
                    .columns
                    .as_ref()
                    .ok_or_else(|| "a CSV file needs a header".to_owned())?;
                let mut cells = recycled(std::mem::take(&mut self.cells));
                let mut found = recycled(std::mem::take(&mut self.cells_found));
                let event = columns.read(line, &mut cells, &mut found).and_then(|()| {
                    let fields: SmallVec<[Option<Field>; INLINE_FIELDS]> = self
                        .slots
                        .iter()
                        .map(|&slot| found[slot].as_deref().map(Field::Cell))
                        .collect();
                    self.event(&fields, inputs)
                });
                self.cells = recycled(cells);
                self.cells_found = recycled(found);
                event
            }
        }
    }

    fn event(
        &mut self,
        fields: &[Option<Field>],
        inputs: &mut Vec<Input<Value>>,
    ) -> Result<Event, String> {
        let (timestamp, time_format) = self.timestamp(fields[self.key_count])?;
        let mut next_field = self.key_count + 1;
        for aggregate in &self.aggregates {
            let field = if aggregate.field.is_some() {
                next_field += 1;
                fields[next_field - 1]
            } else {
                None
            };
            inputs.push(input_of(aggregate, field)?);
        }
        self.key.clear();
        for field in &fields[..self.key_count] {
            match field {
                None => self.key.null(),
                Some(Field::Cell(cell)) => self.key.text(cell),
                Some(Field::Json(value)) => match value.kind {
                    JsonKind::Null => self.key.null(),
                    JsonKind::String => self.key.text(&value.text()?),
                    _ => self.key.json(value.raw),
                },
            }
        }
        Ok(Event {
            timestamp,
            time_format,
        })
    }

    fn timestamp(&mut self, field: Option<Field>) -> Result<(u64, TimeFormat), String> {
        let missing = || format!("time field {:?} is missing", self.time_field);
        let mut number = false;
        let text: Cow<[u8]> = match field.ok_or_else(missing)? {
            // A cell written as a JSON number is one, as it is for the
            // aggregators: `1e3` is a number the epoch format refuses.
            Field::Cell(cell) => {
                number = is_number(cell);
                Cow::Borrowed(cell)
            }
            Field::Json(value) => match value.kind {
                JsonKind::Null => return Err(missing()),
                JsonKind::Number => {
                    number = true;
                    Cow::Borrowed(value.raw)
                }
                JsonKind::String => value.text()?,
                _ => {
                    return Err(format!(
                        "time field {:?} is neither a number nor a string",
                        self.time_field
                    ))
                }
            },
        };
        let format = self
            .time_format
            .unwrap_or_else(|| TimeFormat::detect(&text, number));
        let timestamp = format.parse(&text)?;
        self.time_format = Some(format);
        Ok((timestamp, format))
    }
}

/// An empty list with `cells`' memory, for the cells of another line:
/// collected in place (the items are the same size), it keeps the memory,
/// and reading a row allocates nothing but its quoted cells.
fn recycled<'b>(mut cells: Vec<Option<Cow<'_, [u8]>>>) -> Vec<Option<Cow<'b, [u8]>>> {
    cells.clear();
    cells.into_iter().map(|_| None).collect()
}

/// What `aggregate` takes from `field`: numbers for the ones that add or
/// compare, anything for the rest.
fn input_of(aggregate: &Aggregate, field: Option<Field>) -> Result<Input<Value>, String> {
    let numeric = matches!(
        aggregate.kind,
        Kind::Sum | Kind::Mean | Kind::Min | Kind::Max
    );
    let not_number = || {
        format!(
            "field {:?} is not a number, which {} needs",
            aggregate.field.as_deref().unwrap_or_default(),
            aggregate.kind.name()
        )
    };
    // The others pass what they take on as it was written: a number keeps
    // its digits however many there are (`1.50` stays `1.50`), and a CSV
    // cell written as a JSON number is one.
    let input = match field {
        None => Input::Nil,
        Some(Field::Cell(cell)) if numeric => number_input(cell).ok_or_else(not_number)?,
        Some(Field::Cell(cell)) if is_number(cell) => written_input(cell),
        Some(Field::Cell(cell)) => Input::Object(json_of_text(cell)),
        Some(Field::Json(value)) => match value.kind {
            JsonKind::Null => Input::Nil,
            JsonKind::Number if numeric => number_input(value.raw).ok_or_else(not_number)?,
            _ if numeric => return Err(not_number()),
            _ => written_input(value.raw),
        },
    };
    Ok(input)
}
