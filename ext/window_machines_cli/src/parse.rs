//! Reading and parsing on a thread of its own, so that it overlaps the
//! windowing on the other core: lines go over in batches, each already
//! split into key, hash, time and inputs.

use std::ops::Range;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

use window_machines_core::Input;

use crate::event::EventReader;
use crate::job::{InputFormat, Job, Source};
use crate::keys;
use crate::source::{LineRead, Lines};
use crate::threads;
use crate::timestamps::TimeFormat;
use crate::values::Value;

/// Lines per batch, and batches in flight.
const BATCH_LINES: usize = 4096;
const BATCHES_AHEAD: usize = 4;

/// One line's event, ready for the tracker.
pub struct Parsed {
    /// The key's bytes, in the batch's `bytes`.
    pub key: Range<usize>,
    pub hash: u64,
    pub timestamp: u64,
    pub time_format: TimeFormat,
    /// Its aggregators' inputs, in the batch's `inputs`.
    pub inputs: Range<usize>,
}

/// A line as the parser left it.
pub enum Outcome {
    /// Nothing to read (see [`is_blank`]).
    Blank,
    Event(Parsed),
    /// Why the line cannot be taken.
    Bad(String),
}

pub struct Line {
    /// Its number in its input, from 1.
    pub number: u64,
    /// Bytes of the input consumed through it, and their CRC-32.
    pub offset: u64,
    pub crc: u32,
    /// Its text, in the batch's `bytes`; empty unless the run keeps late
    /// or bad lines.
    pub text: Range<usize>,
    pub outcome: Outcome,
}

/// What the parser sends.
pub enum Message {
    /// An input begins: its index, a CSV file's header, and where reading
    /// starts (a resumed input's position).
    Start {
        source: usize,
        header: Vec<u8>,
        offset: u64,
        line: u64,
        crc: u32,
    },
    /// Lines of the current input, and how many bytes of its file have been
    /// read so far.
    Lines { batch: Batch, read: u64 },
    /// The current input ended after `offset` bytes, whose CRC-32 is `crc`
    /// (0 without a checksum).
    End { offset: u64, crc: u32 },
    /// An input could not be read: the message says which and why.
    Failed(String),
}

/// Where reading starts: the first input to read and, when it was partly
/// read before, the position a checkpoint recorded.
pub struct Start {
    pub source: usize,
    pub offset: u64,
    pub line: u64,
    /// The CRC-32 of the input through `offset`, as first read.
    pub crc: u32,
    /// Each input before `source`: its length and CRC-32, as first read.
    pub read_before: Vec<(u64, u32)>,
    pub time_format: Option<TimeFormat>,
}

/// The two ends a run keeps: what the parser sends, and where batches go
/// back once taken, to be filled again rather than grown from nothing.
pub struct Parser {
    pub messages: Receiver<Message>,
    pub spent: Sender<Batch>,
}

/// Starts reading `job`'s inputs on a thread. The thread is not joined: it
/// may be waiting on standard input when the run stops, and it ends by
/// itself once the receiver is gone.
pub fn start(job: &Job, from: Start) -> Parser {
    let (sender, messages) = sync_channel(BATCHES_AHEAD);
    let (spent, recycled) = channel();
    let job = job.clone();
    let reading = Reading {
        // Only a run that keeps a state can be resumed, and only a resumed
        // one compares checksums.
        checksum: job.state.is_some(),
        // A line's text is written only to the late and bad files.
        keeps_text: job.late.is_some() || job.bad.is_some(),
    };
    threads::spawn(move || {
        // The inputs a resumed run skips must be what the stopped one read.
        let earlier = job.sources.iter().zip(&from.read_before);
        for (source, &(length, crc)) in earlier.take(from.source) {
            if let Err(message) = check_read_before(source, length, crc) {
                // Gone only when the run stopped: nobody is listening.
                let _ignored = sender.send(Message::Failed(message));
                return;
            }
        }
        let mut reader = EventReader::new(
            job.fields(),
            job.keys.len(),
            job.aggregates.clone(),
            from.time_format,
        );
        for (index, source) in job.sources.iter().enumerate().skip(from.source) {
            // Standard input, or a pipe, carries on with what it is given
            // next; a file is read on from where the checkpoint left it.
            let resume = (index == from.source && is_file(source) && from.offset > 0).then_some((
                from.offset,
                from.line,
                from.crc,
            ));
            let ends = (&sender, &recycled);
            if let Err(message) = read(ends, &mut reader, index, source, resume, reading) {
                // Gone only when the run stopped: nobody is listening.
                let _ignored = sender.send(Message::Failed(message));
                return;
            }
        }
    });
    Parser { messages, spent }
}

/// Whether `source` is a regular file, which can be read again.
fn is_file(source: &Source) -> bool {
    source
        .path
        .as_ref()
        .is_some_and(|path| std::fs::metadata(path).is_ok_and(|meta| meta.is_file()))
}

/// Refuses an input read to its end before a run stopped that is no longer
/// what it read: `length` bytes with the CRC-32 `crc`, and no more.
/// Standard input and pipes, which a resumed run cannot read again, pass.
fn check_read_before(source: &Source, length: u64, crc: u32) -> Result<(), String> {
    if !is_file(source) {
        return Ok(());
    }
    let failed = |error: std::io::Error| format!("{}: {error}", source.name());
    let mut lines = Lines::open(source.path.as_deref()).map_err(failed)?;
    lines.skip_to(length, 0).map_err(failed)?;
    if lines.crc() != crc || lines.next_line().map_err(failed)?.is_some() {
        return Err(format!(
            "{}: not what the state file's run read to its end; remove the state file to \
             start over",
            source.name()
        ));
    }
    Ok(())
}

/// The receiver hung up: the run is over.
struct HungUp;

/// What a run needs of the lines it reads besides their events.
#[derive(Clone, Copy)]
struct Reading {
    /// Their CRC-32, to check a resumed run's input against.
    checksum: bool,
    /// Their text, for the late and bad files.
    keeps_text: bool,
}

fn read(
    (sender, recycled): (&SyncSender<Message>, &Receiver<Batch>),
    reader: &mut EventReader,
    index: usize,
    source: &Source,
    resume: Option<(u64, u64, u32)>,
    reading: Reading,
) -> Result<(), String> {
    let failed = |error: std::io::Error| format!("{}: {error}", source.name());
    let mut lines = Lines::open(source.path.as_deref()).map_err(failed)?;
    if !reading.checksum {
        lines = lines.without_checksum();
    }
    let mut header = Vec::new();
    if source.format == InputFormat::Csv {
        // The header is the first line that is not blank.
        while let Some(line) = lines.next_line().map_err(failed)? {
            if is_blank(InputFormat::Csv, line.text) {
                continue;
            }
            header.extend_from_slice(line.text);
            reader
                .csv_header(line.text)
                .map_err(|reason| format!("{}:{}: {reason}", source.name(), line.number))?;
            break;
        }
    }
    if let Some((offset, line, crc)) = resume {
        lines.skip_to(offset, line).map_err(failed)?;
        if lines.crc() != crc {
            return Err(format!(
                "{}: the first {offset} bytes are not what the state file's run read; \
                 remove the state file to start over",
                source.name()
            ));
        }
    }
    let start = Message::Start {
        source: index,
        header,
        offset: lines.offset,
        line: lines.line,
        crc: lines.crc(),
    };
    if sender.send(start).is_err() {
        return Ok(());
    }
    let mut batch = Batch::reused(recycled);
    loop {
        // Reading may wait on a pipe: send what is parsed first, so that
        // what it closes is written as soon as it closes.
        if !batch.lines.is_empty()
            && (batch.lines.len() >= BATCH_LINES || !lines.has_line_ready())
            && batch.send(sender, recycled, &lines).is_err()
        {
            return Ok(());
        }
        let Some(line) = lines.next_line().map_err(failed)? else {
            break;
        };
        batch.add(reader, source.format, &line, reading.keeps_text);
    }
    if batch.send(sender, recycled, &lines).is_err() {
        return Ok(());
    }
    let _ignored = sender.send(Message::End {
        offset: lines.offset,
        crc: lines.crc(),
    });
    Ok(())
}

/// Whether `line` holds nothing to read. JSON allows white space around a
/// value; in CSV, as Ruby's CSV reads it, a line of spaces is a row whose
/// one cell is those spaces, and only an empty line is skipped.
fn is_blank(format: InputFormat, line: &[u8]) -> bool {
    match format {
        InputFormat::Jsonl => line.iter().all(u8::is_ascii_whitespace),
        InputFormat::Csv => matches!(line, b"" | b"\r"),
    }
}

/// Parsed lines, their text and keys in `bytes`, their events' inputs in
/// `inputs`: lists of the batch's own, reused from batch to batch, so that
/// a line allocates nothing, however many aggregators read it.
#[derive(Default)]
pub struct Batch {
    pub bytes: Vec<u8>,
    pub inputs: Vec<Input<Value>>,
    pub lines: Vec<Line>,
}

impl Batch {
    /// A batch the run is done with, emptied, or a new one.
    fn reused(recycled: &Receiver<Batch>) -> Batch {
        let mut batch = recycled.try_recv().unwrap_or_default();
        batch.bytes.clear();
        batch.inputs.clear();
        batch.lines.clear();
        batch
    }

    /// Parses `line` into the batch, and keeps its text if `keeps_text`.
    fn add(
        &mut self,
        reader: &mut EventReader,
        format: InputFormat,
        line: &LineRead,
        keeps_text: bool,
    ) {
        let text = line.text;
        let start = self.bytes.len();
        if keeps_text {
            self.bytes.extend_from_slice(text);
        }
        let text_range = start..self.bytes.len();
        let outcome = if is_blank(format, text) {
            Outcome::Blank
        } else {
            let inputs_from = self.inputs.len();
            match reader.read(format, text, &mut self.inputs) {
                Err(reason) => Outcome::Bad(reason),
                Ok(event) => {
                    let key = reader.key();
                    let key_start = self.bytes.len();
                    self.bytes.extend_from_slice(key);
                    Outcome::Event(Parsed {
                        key: key_start..self.bytes.len(),
                        hash: keys::hash(key),
                        timestamp: event.timestamp,
                        time_format: event.time_format,
                        inputs: inputs_from..self.inputs.len(),
                    })
                }
            }
        };
        self.lines.push(Line {
            number: line.number,
            offset: line.offset,
            crc: line.crc,
            text: text_range,
            outcome,
        });
    }

    fn send(
        &mut self,
        sender: &SyncSender<Message>,
        recycled: &Receiver<Batch>,
        lines: &Lines,
    ) -> Result<(), HungUp> {
        let full = std::mem::replace(self, Batch::reused(recycled));
        sender
            .send(Message::Lines {
                batch: full,
                read: lines.bytes_read(),
            })
            .map_err(|_| HungUp)
    }
}
