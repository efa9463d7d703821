//! Whether the run was asked to stop, and how long it may still wait on its
//! output once it was.

use std::time::{Duration, Instant};

/// How long a stopping run waits for its output to take what it was given
/// (and for its last checkpoint), before it gives up and the checkpoint
/// saved before stands. Only an output nobody reads (a pipe whose reader
/// does not read) takes that long.
const PATIENCE_WHEN_STOPPING: Duration = Duration::from_secs(2);

pub(super) struct Stopper<'s> {
    /// The host's question (a pending signal, say); it answers yes once.
    ask: &'s mut dyn FnMut() -> bool,
    asked_at: Option<Instant>,
}

impl<'s> Stopper<'s> {
    pub(super) fn new(ask: &'s mut dyn FnMut() -> bool) -> Self {
        Stopper {
            ask,
            asked_at: None,
        }
    }

    /// Whether the run was asked to stop, now or before.
    pub(super) fn asked(&mut self) -> bool {
        if self.asked_at.is_none() && (self.ask)() {
            self.asked_at = Some(Instant::now());
        }
        self.asked_at.is_some()
    }

    /// [`Stopper::may_wait`] as the writer asks it.
    pub(super) fn waits(&mut self) -> impl FnMut() -> bool + use<'_, 's> {
        || self.may_wait()
    }

    /// Whether waiting for the output may go on: always, unless the run
    /// was asked to stop longer ago than it may wait.
    fn may_wait(&mut self) -> bool {
        !self.asked()
            || self
                .asked_at
                .is_some_and(|asked_at| asked_at.elapsed() < PATIENCE_WHEN_STOPPING)
    }
}
