//! One run of the command: every input line through the tracker, each
//! window or session written as it closes, checkpoints along the way.

mod events;
mod resume;
mod stopper;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::mpsc::{RecvTimeoutError, TryRecvError};

use smallvec::SmallVec;

use window_machines_core::{
    Aggregating, Aggregation, ClockMode, Error, EventClock, KeyedWindows, Part, SessionWindows,
    Shape, Trail,
};

use crate::job::{InputFormat, Job, Windows};
use crate::json_fields::MAX_FIELDS;
use crate::parse;
use crate::records::RecordWriter;
use crate::sink::{self, Sink};
use crate::state::{self, Progress};
use crate::timestamps::TimeFormat;
use crate::values::Value;
use crate::writer::{Outputs, ResultWriter};

use stopper::Stopper;

/// How a run ended, when it did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The options contradict each other or the input (exit 2).
    Usage(String),
    /// An input or state file that cannot be read (exit 1).
    BadInput(String),
    /// A line that cannot be taken (exit 1); the state was saved, if kept.
    BadLine(String),
    /// Writing failed; `broken_pipe` when the reader went away.
    Output { message: String, broken_pipe: bool },
    /// Asked to stop (a signal); the state was saved, or, when the output
    /// was not being read, the one saved before stands.
    Stopped,
}

/// What a finished run counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub events: u64,
    pub late: u64,
    /// Events before the first window, which no window holds.
    pub outside: u64,
    pub bad: u64,
    /// Windows or sessions written.
    pub results: u64,
    /// The first bad line skipped, and why.
    pub first_bad: Option<String>,
    pub resumed: bool,
}

/// An event's key as the tracker holds it: short keys (most ids) inline,
/// so holding one allocates nothing and comparing one reads no more memory.
pub(crate) type Key = SmallVec<[u8; 24]>;

/// How long to wait for the parser before asking whether to stop.
const PATIENCE: Duration = Duration::from_millis(100);
/// How many events ahead to load the index bucket, then the key's entry.
const BUCKET_AHEAD: usize = 8;
const ENTRY_AHEAD: usize = 4;
/// The sessions one key may hold open at once: far more than the Ruby
/// classes' 32, which a command line never promised (a user active every
/// minute of a day's lag holds 1,440), and as many as the hopping windows
/// an event may fall in. The bound keeps a hand-over, which shifts the
/// rest of its key's sessions, cheap.
const SESSIONS_PER_KEY: usize = 4096;
/// The shortest time between checkpoints.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Runs `job`; `stop` is asked now and then whether to stop (say, on a
/// signal), in which case the state is saved and the run ends. It is asked
/// too while the run waits on its output, which may never take more.
pub fn run(job: &Job, stop: &mut dyn FnMut() -> bool) -> Result<Summary, Failure> {
    if job.fields().len() > MAX_FIELDS {
        return Err(Failure::Usage(format!(
            "at most {MAX_FIELDS} fields: keys, the time and the aggregators' fields"
        )));
    }
    let aggregation = Aggregation::new(
        job.aggregates
            .iter()
            .map(|agg| Part {
                kind: agg.kind,
                reads_field: agg.field.is_some(),
            })
            .collect(),
    );
    let lag = job.lag;
    match job.windows {
        Windows::Sessions { gap } => {
            Runner::start(job, ["first", "last"], stop, |format: TimeFormat| {
                let gap = gap.ticks(format, "gap")?;
                let lag = lag.ticks(format, "lag")?;
                let clock = EventClock::new(ClockMode::Stream, Trail::Sessions, lag, None);
                SessionWindows::new(gap, None, clock, aggregation.clone())
                    .map(|sessions| sessions.with_per_key_limit(SESSIONS_PER_KEY))
                    .map_err(|error| error.to_string())
            })?
            .run()
        }
        Windows::Hopping {
            size,
            advance,
            grace,
            offset,
        } => Runner::start(job, ["start", "end"], stop, |format: TimeFormat| {
            let shape = Shape::new(
                size.ticks(format, "size")?,
                advance.ticks(format, "advance")?,
                offset.ticks(format, "offset")?,
            )
            .map_err(|error| shape_refused(&error, format))?;
            let delay = grace
                .ticks(format, "grace")?
                .checked_add(lag.ticks(format, "lag")?)
                .ok_or_else(|| {
                    format!("--grace plus --lag is past 2**64-1 {}", format.tick_name())
                })?;
            let clock = EventClock::new(ClockMode::Stream, Trail::Windows, delay, None);
            Ok(KeyedWindows::new(shape, clock, aggregation.clone()))
        })?
        .run(),
    }
}

/// Why windows of these lengths cannot be, in the options' terms: lengths
/// written with a unit and bare ones can only be compared once the time
/// field's unit is known, so the options could not tell.
fn shape_refused(error: &Error, format: TimeFormat) -> String {
    let shown = |ticks: u64| shown_length(ticks, format);
    match *error {
        Error::AdvancePastSize { size, advance } => format!(
            "--advance ({}) is longer than --size ({})",
            shown(advance),
            shown(size)
        ),
        Error::OffsetPastStep { offset, step } => format!(
            "--offset ({}) must be shorter than the step windows start at ({})",
            shown(offset),
            shown(step)
        ),
        Error::TooManyHoppingWindows {
            size,
            advance,
            limit,
        } => format!(
            "--size ({}) over --advance ({}) puts an event in up to {} windows, more than {limit}",
            shown(size),
            shown(advance),
            size.div_ceil(advance)
        ),
        ref error => error.to_string(),
    }
}

/// A length of `ticks` as the options write one: in the largest unit that
/// holds it whole (`1500ms`, `2h`).
fn shown_length(ticks: u64, format: TimeFormat) -> String {
    const UNITS: [(&str, u128); 7] = [
        ("d", 86_400_000_000_000),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let nanos = u128::from(ticks) * u128::from(format.tick_nanos());
    UNITS
        .iter()
        .find(|(_, unit)| nanos != 0 && nanos % unit == 0)
        .map_or_else(
            || "0".to_owned(),
            |(name, unit)| format!("{}{name}", nanos / unit),
        )
}

/// Where a line's event went.
enum Fate {
    Taken,
    Late,
    /// Before the first window (below the offset): no window holds it.
    Outside,
    Bad(String),
}

struct Runner<'j, T, F> {
    job: &'j Job,
    make: F,
    tracker: Option<T>,
    /// How times are written: given, restored, or learnt from the first
    /// event.
    time_format: Option<TimeFormat>,
    /// Writes the results, late and bad lines.
    results: ResultWriter,
    stop: Stopper<'j>,
    /// The current CSV file's header, for late and bad files; `None` for
    /// JSON Lines.
    csv_header: Option<Arc<[u8]>>,
    progress: Progress,
    summary: Summary,
    /// Bytes of the inputs before the current one, for the progress line.
    bytes_before: u64,
    started: Instant,
    last_checkpoint: Instant,
    checkpoint_every: Duration,
    last_progress: Instant,
}

fn output_failure(error: &io::Error) -> Failure {
    if sink::is_gave_up(error) {
        return Failure::Stopped;
    }
    Failure::Output {
        message: error.to_string(),
        broken_pipe: error.kind() == io::ErrorKind::BrokenPipe,
    }
}

/// Refuses a `--late` or `--bad` file a stopped run did not keep once
/// lines it would hold have gone by (none have in a new run): they could
/// not be written now, and the file would pass for every one of them. And
/// refuses one other than the file it kept, which resuming would cut back
/// to the kept file's length.
fn check_lines_kept(job: &Job, progress: &Progress) -> Result<(), Failure> {
    let files = [
        (
            "late",
            &job.late,
            &progress.late_path,
            progress.late + progress.outside,
        ),
        ("bad", &job.bad, &progress.bad_path, progress.bad),
    ];
    for (name, path, kept, gone_by) in files {
        let Some(path) = path else { continue };
        match kept {
            None if gone_by > 0 => {
                return Err(Failure::Usage(format!(
                    "--{name} {}: the run that saved the state kept no --{name} file, and \
                     {gone_by} {name} lines have gone by that cannot be written now; resume \
                     without --{name}, or remove the state file to start over",
                    path.display()
                )))
            }
            Some(kept) if *kept != state::recorded_path(path) => {
                return Err(Failure::Usage(format!(
                    "--{name} {}: the run that saved the state wrote its {name} lines to {}; \
                     resume with that --{name} file (or none), or remove the state file to \
                     start over",
                    path.display(),
                    String::from_utf8_lossy(kept)
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn open_sink(path: &Path, length: Option<u64>, stop: &mut Stopper) -> Result<Sink, Failure> {
    Sink::file(path, length, &mut || !stop.asked()).map_err(|error| {
        if sink::is_gave_up(&error) {
            return Failure::Stopped;
        }
        Failure::Output {
            message: format!("{}: {error}", path.display()),
            broken_pipe: false,
        }
    })
}

impl<'j, T, F> Runner<'j, T, F>
where
    T: Aggregating<Key, Value>,
    F: Fn(TimeFormat) -> Result<T, String>,
{
    /// Opens the outputs and, when the state file has one, takes up a
    /// stopped run.
    fn start(
        job: &'j Job,
        times: [&str; 2],
        stop: &'j mut dyn FnMut() -> bool,
        make: F,
    ) -> Result<Self, Failure> {
        let saved = match job.state_path() {
            Some(path) => state::load(path)
                .map_err(|error| Failure::BadInput(format!("{}: {error}", path.display())))?,
            None => None,
        };
        if let Some(saved) = &saved {
            if saved.fingerprint != job.fingerprint {
                return Err(Failure::Usage(format!(
                    "the state file {} was written by a run with other options (this one differs \
                     in: {}); run with the options it was written with, or remove it to start over",
                    job.state_path().unwrap_or(Path::new("")).display(),
                    resume::options_changed(&saved.fingerprint, &job.fingerprint).join(", ")
                )));
            }
        }
        let progress = saved
            .as_ref()
            .map(|saved| saved.progress.clone())
            .unwrap_or_default();
        check_lines_kept(job, &progress)?;
        let mut stop = Stopper::new(stop);
        let output = match &job.output {
            Some(path) => open_sink(path, progress.output, &mut stop)?,
            None => Sink::stdout(),
        };
        let mut lines_sink = |path: &Path, length, header: &Option<Vec<u8>>| {
            let mut sink = open_sink(path, length, &mut stop)?;
            sink.set_csv_header(header.as_deref());
            Ok(sink)
        };
        let late = job
            .late
            .as_deref()
            .map(|path| lines_sink(path, progress.late_file, &progress.late_header))
            .transpose()?;
        let bad = job
            .bad
            .as_deref()
            .map(|path| lines_sink(path, progress.bad_file, &progress.bad_header))
            .transpose()?;
        let aggregate_names: Vec<String> =
            job.aggregates.iter().map(|agg| agg.name.clone()).collect();
        let time_format = saved
            .as_ref()
            .and_then(|saved| saved.time_format)
            .or(job.time_format);
        let now = Instant::now();
        let mut runner = Runner {
            job,
            make,
            tracker: None,
            time_format,
            results: ResultWriter::start(
                RecordWriter::new(job.output_format, &job.keys, times, &aggregate_names),
                Outputs {
                    results: output,
                    late,
                    bad,
                },
            ),
            stop,
            csv_header: None,
            summary: Summary {
                events: progress.events,
                late: progress.late,
                outside: progress.outside,
                bad: progress.bad,
                first_bad: progress.first_bad.clone(),
                resumed: saved.is_some(),
                ..Summary::default()
            },
            progress,
            bytes_before: 0,
            started: now,
            last_checkpoint: now,
            checkpoint_every: CHECKPOINT_EVERY,
            last_progress: now,
        };
        if let Some(saved) = saved {
            runner.restore(saved)?;
        }
        Ok(runner)
    }

    /// The tracker, made once the time format is known.
    fn tracker(&mut self, format: TimeFormat) -> Result<&mut T, Failure> {
        let make = &self.make;
        match &mut self.tracker {
            Some(tracker) => Ok(tracker),
            none => Ok(none.insert(make(format).map_err(Failure::Usage)?)),
        }
    }

    fn run(mut self) -> Result<Summary, Failure> {
        let parse::Parser { messages, spent } = parse::start(
            self.job,
            parse::Start {
                source: usize::try_from(self.progress.source).unwrap_or(usize::MAX),
                offset: self.progress.offset,
                line: self.progress.line,
                crc: self.progress.crc,
                read_before: self.progress.read_before.clone(),
                time_format: self.time_format,
            },
        );
        let mut source_name = String::new();
        let mut read = 0;
        loop {
            let message = match messages.try_recv() {
                Ok(message) => message,
                Err(TryRecvError::Empty) => {
                    // The parser may be waiting on a pipe: what has closed
                    // is written out first, as soon as it closed; and a
                    // signal is heeded even while nothing comes.
                    self.flush_soon()?;
                    match messages.recv_timeout(PATIENCE) {
                        Ok(message) => message,
                        Err(RecvTimeoutError::Timeout) => {
                            self.check(read)?;
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Err(TryRecvError::Disconnected) => break,
            };
            match message {
                parse::Message::Start {
                    source,
                    header,
                    offset,
                    line,
                    crc,
                } => {
                    let input = &self.job.sources[source];
                    source_name = input.name();
                    self.csv_header = (input.format == InputFormat::Csv).then(|| Arc::from(header));
                    self.progress.source = source as u64;
                    self.progress.offset = offset;
                    self.progress.line = line;
                    self.progress.crc = crc;
                }
                parse::Message::Lines {
                    batch,
                    read: now_read,
                } => {
                    read = now_read;
                    self.take_lines(&batch, &source_name)?;
                    // Gone only when the parser is: nothing more to fill.
                    let _ignored = spent.send(batch);
                    self.check(read)?;
                }
                parse::Message::End { offset, crc } => {
                    self.progress.read_before.push((offset, crc));
                    self.bytes_before += read;
                    read = 0;
                    self.progress.source += 1;
                    self.progress.offset = 0;
                    self.progress.line = 0;
                    self.progress.crc = 0;
                }
                parse::Message::Failed(message) => return Err(Failure::BadInput(message)),
            }
        }
        // The parser hangs up after the last input, or after saying why it
        // stopped; anything else must not pass for the end of the input.
        if self.progress.source < self.job.sources.len() as u64 {
            return Err(Failure::BadInput(
                "reading the input stopped unexpectedly".to_owned(),
            ));
        }
        self.finish()
    }

    /// Asks whether to stop, and checkpoints and shows progress when due.
    fn check(&mut self, read: u64) -> Result<(), Failure> {
        if self.stop.asked() {
            self.checkpoint()?;
            return Err(Failure::Stopped);
        }
        let now = Instant::now();
        if self.job.state.is_some() && now - self.last_checkpoint >= self.checkpoint_every {
            self.checkpoint()?;
            // A large state takes a while to write: keep that under a
            // tenth of the run.
            self.checkpoint_every = CHECKPOINT_EVERY.max(now.elapsed() * 10);
            self.last_checkpoint = Instant::now();
        }
        if self.job.progress && now - self.last_progress >= PROGRESS_EVERY {
            self.show_progress(self.bytes_before + read);
            self.last_progress = now;
        }
        Ok(())
    }

    /// Hands every output to the system, and waits for it: their lengths
    /// are then known.
    fn flush(&mut self) -> Result<(), Failure> {
        self.results
            .flush(&mut self.stop.waits())
            .map_err(|error| output_failure(&error))
    }

    /// Hands every output to the system, without waiting.
    fn flush_soon(&mut self) -> Result<(), Failure> {
        self.results
            .flush_soon(&mut self.stop.waits())
            .map_err(|error| output_failure(&error))
    }

    fn show_progress(&self, bytes: u64) {
        let seconds = self.started.elapsed().as_secs_f64().max(1e-9);
        #[allow(clippy::cast_precision_loss)]
        let (megabytes, rate) = (bytes as f64 / 1e6, self.summary.events as f64 / seconds);
        eprint!(
            "\r\x1b[Kwindow_machines: {megabytes:.1} MB read, {} events, {rate:.0} events/s",
            self.summary.events
        );
    }

    fn finish(mut self) -> Result<Summary, Failure> {
        if let Some(tracker) = self.tracker.as_mut() {
            tracker.finish();
        }
        self.hand_over(false)?;
        self.flush()?;
        if self.job.progress {
            eprint!("\r\x1b[K");
        }
        if let Some(files) = &self.job.state {
            state::remove(files).map_err(|error| Failure::Output {
                message: error.to_string(),
                broken_pipe: false,
            })?;
        }
        Ok(self.summary)
    }
}
