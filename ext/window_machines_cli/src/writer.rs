//! Closed windows and sessions formatted and written on a thread of their
//! own: the windowing thread only moves each one into a batch, and the
//! formatting and the writes overlap its work on the other core. Late and
//! bad input lines are written there too, so that the windowing thread
//! never blocks in a write, where no signal would reach it.

use std::io;
use std::mem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{
    channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError,
};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use window_machines_core::{Accumulator, AggregateHandover};

use crate::records::RecordWriter;
use crate::run::Key;
use crate::sink::{self, MayWait, Sink};
use crate::threads;
use crate::timestamps::TimeFormat;
use crate::values::Value;

/// Results per batch, and batches in flight: enough to keep the writer
/// busy, few enough that a result reaches the output soon after it closed
/// (a few milliseconds at full speed; a batch goes early whenever the
/// input waits). Each batch wakes the writer thread, which costs the
/// windowing thread a system call: at 512 a batch, waking it took 7,600
/// switches and about 6% of the windowing thread's time on the benchmark's
/// tumbling counts, at 4,096 about 1,000.
const BATCH_RESULTS: usize = 4096;
const BATCH_LINES: usize = 256;
const BATCHES_AHEAD: usize = 8;
/// How often a wait for the writer thread to take a batch, or to answer,
/// asks whether it may go on.
const POLL: Duration = Duration::from_micros(250);
const ANSWER_POLL: Duration = Duration::from_millis(20);

type Result = AggregateHandover<Key, Value>;

/// Closed windows or sessions on their way to the writer thread. The
/// accumulators of three aggregators or more, which a result holds on the
/// heap, are moved into a list of the batch's own, in order, and their
/// memory freed on the windowing thread, where the next window's
/// allocation takes it up again: freed on the writer thread, each went
/// back to the windowing thread's arena under its lock, and each new
/// window's came from the arena's bins rather than the thread's cache
/// (about a tenth of the windowing thread's time with four aggregators).
/// A result whose accumulators were moved is left with none (a result
/// always has one or more).
#[derive(Default)]
struct Batch {
    results: Vec<Result>,
    spilled: Vec<Accumulator<Value>>,
    /// Where each moved result's accumulators end in `spilled`.
    spilled_ends: Vec<usize>,
}

impl Batch {
    fn with_capacity(results: usize) -> Batch {
        Batch {
            results: Vec::with_capacity(results),
            ..Batch::default()
        }
    }

    fn push(&mut self, mut result: Result) {
        if result.accs.spilled() {
            self.spilled.extend(mem::take(&mut result.accs));
            self.spilled_ends.push(self.spilled.len());
        }
        self.results.push(result);
    }

    /// Each result with its accumulators, in order.
    fn each(&self) -> impl Iterator<Item = (&Result, &[Accumulator<Value>])> {
        let mut ends = self.spilled_ends.iter();
        let mut start = 0;
        self.results.iter().map(move |result| {
            let accs = if result.accs.is_empty() {
                let end = ends.next().copied().unwrap_or(start);
                let accs = self.spilled.get(start..end).unwrap_or_default();
                start = end;
                accs
            } else {
                &result.accs[..]
            };
            (result, accs)
        })
    }

    fn len(&self) -> usize {
        self.results.len()
    }

    fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    fn clear(&mut self) {
        self.results.clear();
        self.spilled.clear();
        self.spilled_ends.clear();
    }
}

/// The file an input line is kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineFile {
    Late,
    Bad,
}

/// An input line for the late or bad file, with its input's CSV header
/// (none for JSON Lines).
struct Line {
    to: LineFile,
    csv_header: Option<Arc<[u8]>>,
    bytes: Vec<u8>,
}

enum Request {
    Write(TimeFormat, Batch),
    Lines(Vec<Line>),
    /// Hand everything written so far to the system; `answer` to have the
    /// outputs' lengths (or the first failure) sent back.
    Flush {
        answer: bool,
    },
}

/// The outputs as last flushed: what a checkpoint records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lengths {
    /// `None` for standard output.
    pub output: Option<u64>,
    pub late: Option<u64>,
    pub bad: Option<u64>,
    /// The CSV header the rows at the end of the late and bad files are
    /// under.
    pub late_header: Option<Vec<u8>>,
    pub bad_header: Option<Vec<u8>>,
}

/// The outputs the writer thread writes.
pub struct Outputs {
    pub results: Sink,
    pub late: Option<Sink>,
    pub bad: Option<Sink>,
}

/// The windowing thread's end of the writer.
pub struct ResultWriter {
    batch: Batch,
    format: Option<TimeFormat>,
    lines: Vec<Line>,
    requests: Option<SyncSender<Request>>,
    answers: Receiver<io::Result<Lengths>>,
    spent: Receiver<Batch>,
    failed: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    lengths: Lengths,
    /// A wait was given up on: the writer thread may be blocked in a write
    /// for good, and is left to end with the process.
    gave_up: bool,
}

impl ResultWriter {
    /// Starts writing results to `outputs.results` with `records`' format,
    /// and input lines to the late and bad files.
    #[must_use]
    pub fn start(records: RecordWriter, outputs: Outputs) -> ResultWriter {
        let (requests, received) = sync_channel(BATCHES_AHEAD);
        let (answer, answers) = channel();
        let (spend, spent) = channel();
        let failed = Arc::new(AtomicBool::new(false));
        let writer = Writer {
            records,
            outputs,
            failure: None,
            failed: Arc::clone(&failed),
        };
        let lengths = writer.lengths();
        let thread = threads::spawn(move || writer.serve(&received, &answer, &spend));
        ResultWriter {
            batch: Batch::with_capacity(BATCH_RESULTS),
            format: None,
            lines: Vec::new(),
            requests: Some(requests),
            answers,
            spent,
            failed,
            thread: Some(thread),
            lengths,
            gave_up: false,
        }
    }

    /// Queues an input line for the late or bad file, under `csv_header`
    /// for a CSV input. Waits and fails as [`ResultWriter::write`] does.
    pub fn write_line(
        &mut self,
        to: LineFile,
        csv_header: Option<&Arc<[u8]>>,
        bytes: &[u8],
        may_wait: MayWait,
    ) -> io::Result<()> {
        self.lines.push(Line {
            to,
            csv_header: csv_header.cloned(),
            bytes: bytes.to_vec(),
        });
        if self.lines.len() >= BATCH_LINES {
            self.send_lines(may_wait)?;
            return self.earlier_failure(may_wait);
        }
        Ok(())
    }

    /// Queues one closed window or session, its times written in `format`.
    /// A failure to write an earlier one is returned here, soon after it
    /// happened, so that a run into a closed pipe stops early.
    /// While the writer thread is behind, `may_wait` is asked now and then
    /// whether to go on waiting, as in every method here that waits.
    pub fn write(
        &mut self,
        format: TimeFormat,
        result: Result,
        may_wait: MayWait,
    ) -> io::Result<()> {
        if self.format != Some(format) {
            self.send(may_wait)?;
            self.format = Some(format);
        }
        self.batch.push(result);
        if self.batch.len() >= BATCH_RESULTS {
            self.send(may_wait)?;
            return self.earlier_failure(may_wait);
        }
        Ok(())
    }

    /// Has everything queued handed to the system, without waiting; a
    /// failure since is returned by the next call (made while the input is
    /// idle, it stops a run whose reader went away).
    pub fn flush_soon(&mut self, may_wait: MayWait) -> io::Result<()> {
        self.earlier_failure(may_wait)?;
        self.send(may_wait)?;
        self.send_lines(may_wait)?;
        self.request(Request::Flush { answer: false }, may_wait)
    }

    /// Has everything queued written and handed to the system, and waits
    /// for it: the outputs' lengths are then [`ResultWriter::lengths`].
    pub fn flush(&mut self, may_wait: MayWait) -> io::Result<()> {
        self.send(may_wait)?;
        self.send_lines(may_wait)?;
        self.request(Request::Flush { answer: true }, may_wait)?;
        loop {
            match self.answers.recv_timeout(ANSWER_POLL) {
                Ok(answer) => {
                    self.lengths = answer?;
                    return Ok(());
                }
                Err(RecvTimeoutError::Timeout) => self.may_wait(may_wait)?,
                Err(RecvTimeoutError::Disconnected) => return Err(self.gone()),
            }
        }
    }

    /// The failure of a write made earlier, if the writer thread had one:
    /// it is returned by the flush that waits for the thread to say what.
    fn earlier_failure(&mut self, may_wait: MayWait) -> io::Result<()> {
        if self.failed.load(Ordering::Relaxed) {
            return self.flush(may_wait);
        }
        Ok(())
    }

    /// The outputs when last flushed.
    #[must_use]
    pub fn lengths(&self) -> &Lengths {
        &self.lengths
    }

    fn send(&mut self, may_wait: MayWait) -> io::Result<()> {
        let Some(format) = self.format.filter(|_| !self.batch.is_empty()) else {
            return Ok(());
        };
        let next = self
            .spent
            .try_recv()
            .unwrap_or_else(|_| Batch::with_capacity(BATCH_RESULTS));
        let batch = mem::replace(&mut self.batch, next);
        self.request(Request::Write(format, batch), may_wait)
    }

    fn send_lines(&mut self, may_wait: MayWait) -> io::Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let lines = mem::take(&mut self.lines);
        self.request(Request::Lines(lines), may_wait)
    }

    fn request(&mut self, mut request: Request, may_wait: MayWait) -> io::Result<()> {
        loop {
            let Some(requests) = self.requests.as_ref() else {
                return Err(self.gone());
            };
            // A blocking send would not hear of a signal while the output
            // takes nothing.
            match requests.try_send(request) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Full(unsent)) => {
                    request = unsent;
                    thread::sleep(POLL);
                    self.may_wait(may_wait)?;
                }
                Err(TrySendError::Disconnected(_)) => return Err(self.gone()),
            }
        }
    }

    fn may_wait(&mut self, may_wait: MayWait) -> io::Result<()> {
        if may_wait() {
            return Ok(());
        }
        self.gave_up = true;
        Err(sink::gave_up())
    }

    /// The writer thread ended before it was asked to, which only a panic
    /// makes it do.
    fn gone(&mut self) -> io::Error {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ignored = thread.join();
        }
        io::Error::other("the thread writing the results stopped unexpectedly")
    }
}

impl Drop for ResultWriter {
    /// Ends the writer thread once it has written what it was given,
    /// unless it was given up on.
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take().filter(|_| !self.gave_up) {
            let _ignored = thread.join();
        }
    }
}

/// The writer thread's end.
struct Writer {
    records: RecordWriter,
    outputs: Outputs,
    /// The first write that failed; nothing is written after it.
    failure: Option<io::Error>,
    failed: Arc<AtomicBool>,
}

impl Writer {
    fn serve(
        mut self,
        requests: &Receiver<Request>,
        answers: &Sender<io::Result<Lengths>>,
        spent: &Sender<Batch>,
    ) {
        for request in requests {
            match request {
                Request::Write(format, mut batch) => {
                    for (result, accs) in batch.each() {
                        if self.failure.is_none() {
                            let written = self.records.write(
                                &mut self.outputs.results,
                                &result.key,
                                [result.start, result.end],
                                format,
                                accs,
                            );
                            self.fail(written);
                        }
                    }
                    batch.clear();
                    // Gone only when the run is: nothing more to fill.
                    let _ignored = spent.send(batch);
                }
                Request::Lines(lines) => {
                    for line in &lines {
                        if self.failure.is_none() {
                            let written = self.write_line(line);
                            self.fail(written);
                        }
                    }
                }
                Request::Flush { answer } => {
                    if self.failure.is_none() {
                        let flushed = self.flush();
                        self.fail(flushed);
                    }
                    if answer {
                        let answered = match &self.failure {
                            Some(error) => Err(io::Error::new(error.kind(), error.to_string())),
                            None => Ok(self.lengths()),
                        };
                        // Gone only when the run is: nobody is waiting.
                        let _ignored = answers.send(answered);
                    }
                }
            }
        }
    }

    /// Writes an input line to its file, a CSV file's header first.
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        let sink = match line.to {
            LineFile::Late => self.outputs.late.as_mut(),
            LineFile::Bad => self.outputs.bad.as_mut(),
        };
        let Some(sink) = sink else {
            return Ok(());
        };
        // A CSV row goes under its input's header: written first unless
        // the rows above are under the same one (several inputs, some of
        // them JSON Lines, may share the file).
        match &line.csv_header {
            Some(header) if sink.csv_header() != Some(&header[..]) => {
                sink.write(header)?;
                sink.write(b"\n")?;
                sink.set_csv_header(Some(header));
            }
            Some(_) => {}
            None => sink.set_csv_header(None),
        }
        // A CSV row ends as its header does, so that the file keeps one
        // line ending, as CSV readers need: an input may mix them, and its
        // last line may have none of its own.
        let (row, ending): (&[u8], &[u8]) = match &line.csv_header {
            Some(header) => (
                line.bytes.strip_suffix(b"\r").unwrap_or(&line.bytes),
                if header.ends_with(b"\r") {
                    b"\r\n"
                } else {
                    b"\n"
                },
            ),
            None => (&line.bytes, b"\n"),
        };
        sink.write(row)?;
        sink.write(ending)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.records.release(&mut self.outputs.results)?;
        self.outputs.results.flush()?;
        for sink in [self.outputs.late.as_mut(), self.outputs.bad.as_mut()]
            .into_iter()
            .flatten()
        {
            sink.flush()?;
        }
        Ok(())
    }

    fn lengths(&self) -> Lengths {
        let late = self.outputs.late.as_ref();
        let bad = self.outputs.bad.as_ref();
        Lengths {
            output: self.outputs.results.length(),
            late: late.and_then(Sink::length),
            bad: bad.and_then(Sink::length),
            late_header: late.and_then(Sink::csv_header).map(<[u8]>::to_vec),
            bad_header: bad.and_then(Sink::csv_header).map(<[u8]>::to_vec),
        }
    }

    fn fail(&mut self, outcome: io::Result<()>) {
        if let Err(error) = outcome {
            self.failure = Some(error);
            self.failed.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(start: u64, parts: u64) -> Result {
        Result {
            key: Key::from_slice(&start.to_le_bytes()),
            start,
            end: start + 1,
            accs: (0..parts)
                .map(|part| Accumulator::Count(start * 10 + part))
                .collect(),
        }
    }

    #[test]
    fn a_batch_gives_each_result_its_own_accumulators_however_they_travel() {
        let parts = [1, 4, 2, 3, 3, 1, 5, 2];
        let mut batch = Batch::with_capacity(parts.len());
        for (start, &count) in (0..).zip(&parts) {
            batch.push(result(start, count));
        }
        // Three accumulators or more travel apart from their result.
        assert_eq!(batch.spilled.len(), 4 + 3 + 3 + 5);
        let seen: Vec<(u64, Vec<Accumulator<Value>>)> = batch
            .each()
            .map(|(result, accs)| (result.start, accs.to_vec()))
            .collect();
        let expected: Vec<(u64, Vec<Accumulator<Value>>)> = (0..)
            .zip(&parts)
            .map(|(start, &count)| (start, result(start, count).accs.to_vec()))
            .collect();
        assert_eq!(seen, expected);
        batch.clear();
        assert!(batch.is_empty() && batch.spilled.is_empty() && batch.spilled_ends.is_empty());
    }
}
