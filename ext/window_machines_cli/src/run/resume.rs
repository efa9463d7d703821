//! Taking up a stopped run from its state file, and writing that file.

use std::path::{Path, PathBuf};

use window_machines_core::Aggregating;

use super::events::find;
use super::{Failure, Key, Runner};
use crate::keys;
use crate::state::{self, Saved, Tracked};
use crate::timestamps::TimeFormat;
use crate::values::Value;

/// The options a run was given otherwise than another, by name: each
/// fingerprint holds a line per option, `name=value`.
pub(super) fn options_changed<'a>(saved: &'a str, now: &'a str) -> Vec<&'a str> {
    let options = |fingerprint: &'a str| -> Vec<(&'a str, &'a str)> {
        fingerprint
            .lines()
            .map(|line| line.split_once('=').unwrap_or((line, "")))
            .collect()
    };
    let (saved, now) = (options(saved), options(now));
    let value = |options: &[(&'a str, &'a str)], name: &str| {
        options
            .iter()
            .find(|(named, _)| *named == name)
            .map(|(_, value)| *value)
    };
    let mut changed: Vec<&str> = now
        .iter()
        .filter(|(name, now_value)| value(&saved, name) != Some(*now_value))
        .chain(saved.iter().filter(|(name, _)| value(&now, name).is_none()))
        .map(|(name, _)| *name)
        .collect();
    if changed.is_empty() {
        changed.push("its options");
    }
    changed
}

impl<T, F> Runner<'_, T, F>
where
    T: Aggregating<Key, Value>,
    F: Fn(TimeFormat) -> Result<T, String>,
{
    pub(super) fn restore(&mut self, saved: Saved) -> Result<(), Failure> {
        let damaged = |why: String| {
            Failure::BadInput(format!(
                "{}: the state file does not fit these options: {why}",
                self.job.state_path().unwrap_or(Path::new("")).display()
            ))
        };
        let Some(format) = saved.time_format else {
            return if saved.keys.is_empty() {
                Ok(())
            } else {
                Err(damaged("windows held before any event".to_owned()))
            };
        };
        let key_count = self.job.keys.len();
        let tracker = self.tracker(format)?;
        tracker.restore_counts(saved.clock_time, saved.tracker_late);
        for (key, parts) in saved.keys {
            if !keys::is_key(&key, key_count) {
                return Err(damaged("a key that is not one".to_owned()));
            }
            let hash = keys::hash(&key);
            if find(tracker, hash, &key).is_some() {
                return Err(damaged("a key given twice".to_owned()));
            }
            let mut slot = None;
            for (start, end, from, accs) in parts {
                let restored = tracker
                    .restore(
                        slot,
                        hash,
                        || Key::from_slice(&key),
                        (start, end, from),
                        accs,
                    )
                    .map_err(|error| damaged(error.to_string()))?;
                slot = Some(restored);
            }
        }
        tracker
            .finish_restore()
            .map_err(|error| damaged(error.to_string()))
    }

    /// Saves the state, with every output handed to the system first so
    /// the lengths it records are on disk.
    pub(super) fn checkpoint(&mut self) -> Result<(), Failure> {
        let Some(files) = self.job.state.clone() else {
            return self.flush();
        };
        self.flush()?;
        self.progress.events = self.summary.events;
        self.progress.late = self.summary.late;
        self.progress.outside = self.summary.outside;
        self.progress.bad = self.summary.bad;
        self.progress.first_bad.clone_from(&self.summary.first_bad);
        let lengths = self.results.lengths().clone();
        self.progress.output = lengths.output;
        self.progress.late_file = lengths.late;
        self.progress.bad_file = lengths.bad;
        self.progress.late_header = lengths.late_header;
        let kept = |length: Option<u64>, path: &Option<PathBuf>| {
            length.and(path.as_deref()).map(state::recorded_path)
        };
        self.progress.late_path = kept(lengths.late, &self.job.late);
        self.progress.bad_path = kept(lengths.bad, &self.job.bad);
        self.progress.bad_header = lengths.bad_header;
        let checkpoint = self.tracker.as_ref().map(|tracker| Tracked {
            clock_time: tracker.clock().time(),
            late: tracker.late_count(),
            keys: tracker
                .checkpoint()
                .into_iter()
                .map(|(key, parts)| {
                    let key: &[u8] = key;
                    (key, parts)
                })
                .collect(),
        });
        state::save(
            &files,
            &self.job.fingerprint,
            self.time_format,
            &self.progress,
            checkpoint.as_ref(),
        )
        .map_err(|error| Failure::Output {
            message: format!("{}: {error}", files.path.display()),
            broken_pipe: false,
        })
    }
}
