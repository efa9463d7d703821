//! Sessions as spans of event time, and what an insert did to them.

/// A session: the timestamps of its first and last events, both inclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub first: u64,
    pub last: u64,
}

impl Span {
    #[must_use]
    pub fn at(timestamp: u64) -> Span {
        Span {
            first: timestamp,
            last: timestamp,
        }
    }

    /// Whether an event at `timestamp` is at most `gap` away from this span.
    pub(crate) fn reaches(&self, timestamp: u64, gap: u64) -> bool {
        self.first.saturating_sub(gap) <= timestamp && timestamp <= self.last.saturating_add(gap)
    }

    pub(crate) fn covering(self, timestamp: u64) -> Span {
        Span {
            first: self.first.min(timestamp),
            last: self.last.max(timestamp),
        }
    }
}

/// The held spans an insert replaced, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    /// A new session, or an event inside an existing one.
    Nothing,
    /// One session grew to take the event in.
    One(Span),
    /// The event bridged two sessions, which merged.
    Two(Span, Span),
}

impl Replaced {
    /// The replaced spans, oldest first.
    pub fn spans(self) -> impl Iterator<Item = Span> {
        let (older, newer) = match self {
            Replaced::Nothing => (None, None),
            Replaced::One(span) => (Some(span), None),
            Replaced::Two(older, newer) => (Some(older), Some(newer)),
        };
        older.into_iter().chain(newer)
    }
}

/// What an insert did: the span the event ended up in, and what it replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insertion {
    pub span: Span,
    pub replaced: Replaced,
}
