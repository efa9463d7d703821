//! Each parsed line through the tracker, and what it closes written out.

use window_machines_core::{
    Aggregating, Error, KeyLookup, KeySlot, Planned, Prefetch, Refusal, Taken,
};

use super::{output_failure, Failure, Fate, Key, Runner, BUCKET_AHEAD, ENTRY_AHEAD};
use crate::parse;
use crate::timestamps::TimeFormat;
use crate::values::{FileOps, Value};
use crate::writer::LineFile;

impl<T, F> Runner<'_, T, F>
where
    T: Aggregating<Key, Value>,
    F: Fn(TimeFormat) -> Result<T, String>,
{
    /// Keeps an input line in the late or bad file, if there is one.
    fn keep_line(&mut self, to: LineFile, text: &[u8]) -> Result<(), Failure> {
        let kept = match to {
            LineFile::Late => self.job.late.is_some(),
            LineFile::Bad => self.job.bad.is_some(),
        };
        if !kept {
            return Ok(());
        }
        self.results
            .write_line(to, self.csv_header.as_ref(), text, &mut self.stop.waits())
            .map_err(|error| output_failure(&error))
    }

    /// Takes a batch of parsed lines in order; stops at a bad line unless
    /// bad lines are skipped.
    pub(super) fn take_lines(
        &mut self,
        batch: &parse::Batch,
        source_name: &str,
    ) -> Result<(), Failure> {
        for (index, line) in batch.lines.iter().enumerate() {
            self.prefetch(&batch.lines, index);
            let text = &batch.bytes[line.text.clone()];
            let fate = match &line.outcome {
                parse::Outcome::Blank => None,
                parse::Outcome::Bad(reason) => Some(Fate::Bad(reason.clone())),
                parse::Outcome::Event(event) => Some(self.take(batch, event)?),
            };
            match fate {
                None => {}
                Some(Fate::Taken) => self.summary.events += 1,
                Some(fate @ (Fate::Late | Fate::Outside)) => {
                    self.summary.events += 1;
                    if matches!(fate, Fate::Late) {
                        self.summary.late += 1;
                    } else {
                        self.summary.outside += 1;
                    }
                    self.keep_line(LineFile::Late, text)?;
                }
                Some(Fate::Bad(reason)) => {
                    let at = format!("{source_name}:{}: {reason}", line.number);
                    if !self.job.skip_bad {
                        self.checkpoint()?;
                        return Err(Failure::BadLine(at));
                    }
                    self.summary.bad += 1;
                    self.summary.first_bad.get_or_insert(at);
                    self.keep_line(LineFile::Bad, text)?;
                }
            }
            self.progress.offset = line.offset;
            self.progress.line = line.number;
            self.progress.crc = line.crc;
        }
        Ok(())
    }

    /// Starts loading what the events a few lines on will look up, so their
    /// cache misses overlap this one's work.
    pub(super) fn prefetch(&self, lines: &[parse::Line], index: usize) {
        let Some(tracker) = &self.tracker else {
            return;
        };
        let hash_at = |ahead: usize| match lines.get(index + ahead).map(|line| &line.outcome) {
            Some(parse::Outcome::Event(event)) => Some(event.hash),
            _ => None,
        };
        if let Some(hash) = hash_at(BUCKET_AHEAD) {
            tracker.prefetch(hash, Prefetch::Bucket);
        }
        if let Some(hash) = hash_at(ENTRY_AHEAD) {
            tracker.prefetch(hash, Prefetch::Entry);
        }
    }

    /// Puts one parsed event into the tracker, then writes whatever that
    /// closed.
    pub(super) fn take(
        &mut self,
        batch: &parse::Batch,
        event: &parse::Parsed,
    ) -> Result<Fate, Failure> {
        let key = &batch.bytes[event.key.clone()];
        let inputs = &batch.inputs[event.inputs.clone()];
        let (timestamp, hash) = (event.timestamp, event.hash);
        self.time_format = Some(event.time_format);
        let tracker = self.tracker(event.time_format)?;
        let slot = find(tracker, hash, key);
        let fate = match tracker.plan(slot, timestamp) {
            Err(error) => Fate::Bad(error_text(&error)),
            Ok(Planned::Nowhere) => Fate::Outside,
            Ok(Planned::Late { .. }) => {
                tracker.count_late();
                Fate::Late
            }
            Ok(Planned::Go(plan)) => {
                let applied = if tracker.needs_ops(slot, plan, inputs) {
                    let planned = tracker.planned_accs(slot, plan, inputs);
                    T::compute(
                        tracker.aggregation(),
                        plan,
                        planned,
                        timestamp,
                        inputs,
                        &mut FileOps,
                    )
                    .map_err(|refusal| refusal_text(&refusal))
                    .and_then(|computed| {
                        tracker
                            .apply_computed(
                                slot,
                                hash,
                                || Key::from_slice(key),
                                timestamp,
                                plan,
                                computed,
                            )
                            .map_err(|error| error_text(&error))
                    })
                } else {
                    tracker
                        .apply(slot, hash, || Key::from_slice(key), timestamp, plan, inputs)
                        .map_err(|refusal| match refusal {
                            Refusal::Host(error) => error_text(&error),
                            refusal => refusal_text(&refusal),
                        })
                };
                match applied {
                    Ok(_) => Fate::Taken,
                    Err(reason) => Fate::Bad(reason),
                }
            }
        };
        if matches!(fate, Fate::Taken) {
            self.hand_over(true)?;
        }
        Ok(fate)
    }

    /// Writes every closed window (every window, unless `closed_only`).
    pub(super) fn hand_over(&mut self, closed_only: bool) -> Result<(), Failure> {
        let Some(tracker) = self.tracker.as_mut() else {
            return Ok(());
        };
        let Some(format) = self.time_format else {
            return Ok(());
        };
        while let Some(taken) = tracker.take(closed_only) {
            let handover = match taken {
                Taken::Ready(handover) => handover,
                Taken::NeedsHost(pending) => {
                    let merged = tracker
                        .aggregation()
                        .merge_all(pending.parts.clone(), &mut FileOps)
                        .map_err(Failure::BadInput)?
                        .unwrap_or_default();
                    tracker.take_merged(&pending, merged).ok_or_else(|| {
                        Failure::BadInput("a window changed while merged".to_owned())
                    })?
                }
            };
            self.results
                .write(format, handover, &mut self.stop.waits())
                .map_err(|error| output_failure(&error))?;
            self.summary.results += 1;
        }
        Ok(())
    }
}

/// The slot of `key`, if the tracker holds it.
pub(super) fn find<T: KeyLookup<Key = Key>>(tracker: &T, hash: u64, key: &[u8]) -> Option<KeySlot> {
    tracker.find_key(hash, |held| held.as_slice() == key)
}

/// A tracker's refusal as the command's user reads it: the Ruby classes'
/// advice for too many sessions (`take_closed`) means nothing here.
fn error_text(error: &Error) -> String {
    match error {
        Error::TooManySessions { limit } => format!(
            "a key would hold more than {limit} sessions open at once; a shorter --lag \
             closes them sooner"
        ),
        error => error.to_string(),
    }
}

fn refusal_text<E: std::fmt::Display>(refusal: &Refusal<E>) -> String {
    match refusal {
        Refusal::NotNumeric { kind } => format!("{} takes numbers only", kind.name()),
        Refusal::Host(error) => error.to_string(),
    }
}
