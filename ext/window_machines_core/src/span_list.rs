//! The sorted spans of one tracker (or of one key), and the joining and
//! merging rules, shared by [`crate::Sessions`] and [`crate::KeyedSessions`].

use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::front_vec::FrontVec;
use crate::span::{Insertion, Replaced, Span};

/// The most sessions one tracker, or one key, holds until they are handed over.
pub const MAX_SESSIONS: usize = 32;

/// Spans sorted, disjoint and more than a gap apart; at most [`MAX_SESSIONS`].
///
/// Most trackers, and most keys of a keyed tracker, hold one session at a
/// time, so one span is kept inline and only two or more take the heap.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpanList(FrontVec<Span>);

impl PartialEq for SpanList {
    fn eq(&self, other: &SpanList) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SpanList {}

impl Hash for SpanList {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

/// Where an event goes, worked out before anything changes, so that a
/// caller can refuse a new session without having touched the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// A new session at this index.
    Open(usize),
    /// Inside this held span: nothing changes.
    Inside(Span),
    /// The span at `index` grows to `span`.
    Grow {
        index: usize,
        held: Span,
        span: Span,
    },
    /// The spans at `index` and `index + 1` merge into `span`.
    Merge {
        index: usize,
        older: Span,
        newer: Span,
        span: Span,
    },
}

impl Placement {
    pub(crate) fn opens(&self) -> bool {
        matches!(self, Placement::Open(_))
    }
}

impl SpanList {
    /// Spans from outside, checked: sorted, each first at or before its
    /// last, any two more than `gap` apart, at most [`MAX_SESSIONS`].
    pub(crate) fn validated(spans: Vec<Span>, gap: u64) -> Result<SpanList> {
        SpanList::check(&spans, gap, MAX_SESSIONS)?;
        Ok(SpanList(FrontVec::from_vec(spans)))
    }

    /// Whether `spans` could have been built by inserts under `gap`, with
    /// at most `limit` spans held at once.
    pub(crate) fn check(spans: &[Span], gap: u64, limit: usize) -> Result<()> {
        if spans.len() > limit {
            return Err(Error::TooManySpans {
                count: spans.len(),
                limit,
            });
        }
        if let Some(span) = spans.iter().find(|span| span.first > span.last) {
            return Err(Error::ReversedSpan {
                first: span.first,
                last: span.last,
            });
        }
        let too_close = |pair: &&[Span]| match pair {
            [earlier, later] => later.first.saturating_sub(earlier.last) <= gap,
            _ => false,
        };
        if let Some([earlier, later]) = spans.windows(2).find(too_close) {
            return Err(Error::SpansTooClose {
                earlier: (earlier.first, earlier.last),
                later: (later.first, later.last),
                gap,
            });
        }
        Ok(())
    }

    /// Appends a span from a checkpoint without checking it; a restore
    /// checks the whole list with [`SpanList::check`] before use.
    pub(crate) fn push_unchecked(&mut self, span: Span) {
        self.0.push(span);
    }

    pub(crate) fn as_slice(&self) -> &[Span] {
        self.0.as_slice()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn first(&self) -> Option<Span> {
        self.as_slice().first().copied()
    }

    pub(crate) fn remove_first(&mut self) {
        self.0.remove(0);
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    /// Where an event at `timestamp` goes under `gap`.
    pub(crate) fn place(&self, timestamp: u64, gap: u64) -> Placement {
        // Spans are sorted and more than gap apart, so their reaches are too:
        // only the first span reaching up to timestamp and its successor can
        // take the event in.
        let spans = self.as_slice();
        let index = spans.partition_point(|span| span.last.saturating_add(gap) < timestamp);
        let joins = |index: usize| {
            spans
                .get(index)
                .copied()
                .filter(|span| span.reaches(timestamp, gap))
        };
        match (joins(index), joins(index + 1)) {
            (None, _) => Placement::Open(index),
            (Some(older), Some(newer)) => Placement::Merge {
                index,
                older,
                newer,
                span: Span {
                    first: older.first,
                    last: newer.last,
                },
            },
            (Some(held), None) => {
                let span = held.covering(timestamp);
                if span == held {
                    Placement::Inside(held)
                } else {
                    Placement::Grow { index, held, span }
                }
            }
        }
    }

    /// Carries out a placement made by [`SpanList::place`] for `timestamp`
    /// on this unchanged list. The caller has checked capacity.
    pub(crate) fn apply(&mut self, placement: Placement, timestamp: u64) -> Insertion {
        match placement {
            Placement::Open(index) => {
                let span = Span::at(timestamp);
                self.0.insert(index, span);
                Insertion {
                    span,
                    replaced: Replaced::Nothing,
                }
            }
            Placement::Inside(span) => Insertion {
                span,
                replaced: Replaced::Nothing,
            },
            Placement::Grow { index, held, span } => {
                self.0.replace(index, span);
                Insertion {
                    span,
                    replaced: Replaced::One(held),
                }
            }
            Placement::Merge {
                index,
                older,
                newer,
                span,
            } => {
                self.0.join(index, span);
                Insertion {
                    span,
                    replaced: Replaced::Two(older, newer),
                }
            }
        }
    }
}
