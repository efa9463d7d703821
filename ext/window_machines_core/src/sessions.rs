use crate::error::{Error, Result};
use crate::span::{Insertion, Span};
use crate::span_list::{SpanList, MAX_SESSIONS};
use crate::watermark::Watermark;

/// Sessions of activity separated by more than `gap` of silence, under a watermark.
///
/// Held spans are sorted, disjoint and more than `gap` apart. A span is
/// closed once `last + gap` is at or below the watermark; since only events
/// above the watermark are admitted, a closed span can never grow again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sessions {
    gap: u64,
    watermark: Watermark,
    spans: SpanList,
}

impl Default for Sessions {
    /// An empty tracker with gap 1: a placeholder for bindings that allocate
    /// before they initialise.
    fn default() -> Sessions {
        Sessions {
            gap: 1,
            watermark: Watermark::default(),
            spans: SpanList::default(),
        }
    }
}

impl Sessions {
    pub fn new(gap: u64) -> Result<Sessions> {
        if gap == 0 {
            return Err(Error::ZeroLength { name: "gap" });
        }
        Ok(Sessions {
            gap,
            ..Sessions::default()
        })
    }

    /// A tracker restored from its parts, as saved from [`Sessions::gap`],
    /// [`Sessions::watermark`] and [`Sessions::spans`]. The parts may come
    /// from anywhere, so every invariant is checked: a restored tracker is
    /// one that inserts could have built.
    pub fn from_parts(gap: u64, watermark: Option<u64>, spans: &[Span]) -> Result<Sessions> {
        Ok(Sessions {
            spans: SpanList::validated(spans.to_vec(), gap)?,
            watermark: Watermark::new(watermark),
            ..Sessions::new(gap)?
        })
    }

    #[must_use]
    pub fn gap(&self) -> u64 {
        self.gap
    }

    #[must_use]
    pub fn watermark(&self) -> Option<u64> {
        self.watermark.value()
    }

    /// Held spans, oldest first.
    #[must_use]
    pub fn spans(&self) -> &[Span] {
        self.spans.as_slice()
    }

    /// Heap memory the tracker owns, beyond its own size.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.spans.heap_bytes()
    }

    /// Puts an event at `timestamp` into its session: a new one, one that
    /// grows, or two that merge. A refused insert changes nothing.
    pub fn insert(&mut self, timestamp: u64) -> Result<Insertion> {
        self.watermark.admit(timestamp)?;
        let placement = self.spans.place(timestamp, self.gap);
        if placement.opens() && self.spans.len() >= MAX_SESSIONS {
            return Err(Error::TooManySessions {
                limit: MAX_SESSIONS,
            });
        }
        Ok(self.spans.apply(placement, timestamp))
    }

    /// Moves the watermark forward; says whether it moved.
    pub fn advance_watermark(&mut self, timestamp: u64) -> bool {
        self.watermark.advance(timestamp)
    }

    /// Removes and returns the oldest closed span.
    pub fn take_closed(&mut self) -> Option<Span> {
        // Spans close in order (last + gap grows with the index), so a closed
        // span, if any, is the first.
        let oldest = self.spans.first()?;
        if !self.watermark.has_passed(oldest.last, self.gap) {
            return None;
        }
        self.spans.remove_first();
        Some(oldest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Replaced;

    const MAX: u64 = u64::MAX;

    fn span(first: u64, last: u64) -> Span {
        Span { first, last }
    }

    fn inserted(sessions: &mut Sessions, timestamp: u64) -> Span {
        sessions.insert(timestamp).unwrap().span
    }

    #[test]
    fn readme_walkthrough() {
        let mut sessions = Sessions::new(5).unwrap();
        assert_eq!(inserted(&mut sessions, 10), span(10, 10));
        assert_eq!(inserted(&mut sessions, 15), span(10, 15));
        assert_eq!(inserted(&mut sessions, 30), span(30, 30));
        assert_eq!(inserted(&mut sessions, 21), span(21, 21));
        assert_eq!(inserted(&mut sessions, 26), span(21, 30));
        assert!(sessions.advance_watermark(25));
        assert_eq!(sessions.take_closed(), Some(span(10, 15)));
        assert_eq!(sessions.take_closed(), None);
        assert!(sessions.advance_watermark(40));
        assert_eq!(sessions.take_closed(), Some(span(21, 30)));
        assert_eq!(
            sessions.insert(40),
            Err(Error::Late {
                timestamp: 40,
                watermark: 40
            })
        );
    }

    #[test]
    fn zero_gap_is_refused() {
        assert_eq!(Sessions::new(0), Err(Error::ZeroLength { name: "gap" }));
    }

    #[test]
    fn insert_reports_what_it_replaced() {
        let mut sessions = Sessions::new(5).unwrap();
        assert_eq!(sessions.insert(10).unwrap().replaced, Replaced::Nothing);
        assert_eq!(
            sessions.insert(14).unwrap().replaced,
            Replaced::One(span(10, 10))
        );
        assert_eq!(
            sessions.insert(6).unwrap().replaced,
            Replaced::One(span(10, 14))
        );
        assert_eq!(sessions.insert(12).unwrap().replaced, Replaced::Nothing);
        sessions.insert(20).unwrap();
        assert_eq!(
            sessions.insert(17),
            Ok(Insertion {
                span: span(6, 20),
                replaced: Replaced::Two(span(6, 14), span(20, 20))
            })
        );
        assert_eq!(sessions.spans(), &[span(6, 20)]);
    }

    #[test]
    fn exactly_one_gap_apart_joins_and_one_more_does_not() {
        let mut sessions = Sessions::new(5).unwrap();
        sessions.insert(10).unwrap();
        assert_eq!(inserted(&mut sessions, 5), span(5, 10));
        assert_eq!(inserted(&mut sessions, 16), span(16, 16));
        assert_eq!(sessions.spans(), &[span(5, 10), span(16, 16)]);
    }

    #[test]
    fn gap_one_joins_neighbours_only() {
        let mut sessions = Sessions::new(1).unwrap();
        sessions.insert(0).unwrap();
        sessions.insert(2).unwrap();
        assert_eq!(sessions.spans().len(), 2);
        assert_eq!(inserted(&mut sessions, 1), span(0, 2));
    }

    #[test]
    fn gap_of_the_whole_domain_joins_everything() {
        let mut sessions = Sessions::new(MAX).unwrap();
        sessions.insert(MAX).unwrap();
        assert_eq!(inserted(&mut sessions, 0), span(0, MAX));
        assert_eq!(sessions.spans().len(), 1);
        assert!(sessions.advance_watermark(MAX - 1));
        assert_eq!(sessions.take_closed(), None);
        assert!(sessions.advance_watermark(MAX));
        assert_eq!(sessions.take_closed(), Some(span(0, MAX)));
    }

    #[test]
    fn timestamps_at_both_ends_of_the_domain() {
        let mut sessions = Sessions::new(3).unwrap();
        assert_eq!(inserted(&mut sessions, 0), span(0, 0));
        assert_eq!(inserted(&mut sessions, MAX), span(MAX, MAX));
        assert_eq!(inserted(&mut sessions, MAX - 3), span(MAX - 3, MAX));
        assert!(sessions.advance_watermark(MAX - 1));
        assert_eq!(sessions.take_closed(), Some(span(0, 0)));
        // MAX + 3 counts as MAX, which the watermark has not reached.
        assert_eq!(sessions.take_closed(), None);
        assert!(sessions.advance_watermark(MAX));
        assert_eq!(sessions.take_closed(), Some(span(MAX - 3, MAX)));
    }

    #[test]
    fn closing_is_exact_near_the_top() {
        let mut sessions = Sessions::new(10).unwrap();
        sessions.insert(MAX - 20).unwrap();
        sessions.advance_watermark(MAX - 11);
        assert_eq!(sessions.take_closed(), None);
        sessions.advance_watermark(MAX - 10);
        assert_eq!(sessions.take_closed(), Some(span(MAX - 20, MAX - 20)));
    }

    #[test]
    fn capacity_refuses_a_new_session_but_not_growth() {
        let mut sessions = Sessions::new(5).unwrap();
        for n in 0..MAX_SESSIONS as u64 {
            sessions.insert(n * 10).unwrap();
        }
        let before = sessions.clone();
        assert_eq!(
            sessions.insert(1000),
            Err(Error::TooManySessions {
                limit: MAX_SESSIONS
            })
        );
        assert_eq!(sessions, before);
        assert_eq!(inserted(&mut sessions, 1), span(0, 1));
        assert_eq!(inserted(&mut sessions, 310), span(310, 310));
        assert_eq!(inserted(&mut sessions, 15), span(10, 20));
        assert_eq!(sessions.spans().len(), MAX_SESSIONS - 1);
        assert_eq!(inserted(&mut sessions, 1000), span(1000, 1000));
        assert!(sessions.insert(2000).is_err());
        sessions.advance_watermark(6);
        assert_eq!(sessions.take_closed(), Some(span(0, 1)));
        assert_eq!(inserted(&mut sessions, 2000), span(2000, 2000));
    }

    #[test]
    fn late_insert_changes_nothing() {
        let mut sessions = Sessions::new(5).unwrap();
        sessions.insert(10).unwrap();
        sessions.advance_watermark(12);
        let before = sessions.clone();
        assert!(sessions.insert(12).is_err());
        assert!(sessions.insert(0).is_err());
        assert_eq!(sessions, before);
        // Still open: 10 + 5 is past 12, and 13 may still join it.
        assert_eq!(inserted(&mut sessions, 13), span(10, 13));
    }

    #[test]
    fn take_closed_hands_over_oldest_first_until_none() {
        let mut sessions = Sessions::new(2).unwrap();
        for timestamp in [1, 10, 20, 30] {
            sessions.insert(timestamp).unwrap();
        }
        sessions.advance_watermark(22);
        assert_eq!(sessions.take_closed(), Some(span(1, 1)));
        assert_eq!(sessions.take_closed(), Some(span(10, 10)));
        assert_eq!(sessions.take_closed(), Some(span(20, 20)));
        assert_eq!(sessions.take_closed(), None);
        assert_eq!(sessions.spans(), &[span(30, 30)]);
    }

    #[test]
    fn nothing_closes_without_a_watermark() {
        let mut sessions = Sessions::new(1).unwrap();
        sessions.insert(0).unwrap();
        assert_eq!(sessions.take_closed(), None);
    }

    #[test]
    fn from_parts_round_trips() {
        let mut sessions = Sessions::new(5).unwrap();
        for timestamp in [3, 10, 30, 50] {
            sessions.insert(timestamp).unwrap();
        }
        sessions.advance_watermark(20);
        let restored =
            Sessions::from_parts(sessions.gap(), sessions.watermark(), sessions.spans()).unwrap();
        assert_eq!(restored, sessions);
    }

    #[test]
    fn from_parts_refuses_what_inserts_cannot_build() {
        assert_eq!(
            Sessions::from_parts(0, None, &[]),
            Err(Error::ZeroLength { name: "gap" })
        );
        assert_eq!(
            Sessions::from_parts(5, None, &[span(4, 3)]),
            Err(Error::ReversedSpan { first: 4, last: 3 })
        );
        let too_close = |earlier: Span, later: Span| Error::SpansTooClose {
            earlier: (earlier.first, earlier.last),
            later: (later.first, later.last),
            gap: 5,
        };
        for (earlier, later) in [
            (span(10, 20), span(25, 30)),
            (span(10, 20), span(15, 30)),
            (span(20, 30), span(0, 1)),
            (span(10, 20), span(10, 20)),
        ] {
            assert_eq!(
                Sessions::from_parts(5, None, &[earlier, later]),
                Err(too_close(earlier, later))
            );
        }
        assert!(Sessions::from_parts(5, None, &[span(10, 20), span(26, 30)]).is_ok());
        assert!(Sessions::from_parts(MAX, None, &[span(0, 0), span(MAX, MAX)]).is_err());
        let spans: Vec<Span> = (0..=MAX_SESSIONS as u64)
            .map(|n| span(n * 10, n * 10))
            .collect();
        assert_eq!(
            Sessions::from_parts(1, None, &spans),
            Err(Error::TooManySpans {
                count: MAX_SESSIONS + 1,
                limit: MAX_SESSIONS
            })
        );
        assert!(Sessions::from_parts(1, None, &spans[..MAX_SESSIONS]).is_ok());
    }

    #[test]
    fn one_session_lives_inline_and_more_double_on_the_heap() {
        let span_bytes = std::mem::size_of::<Span>();
        let header = std::mem::size_of::<crate::front_vec::Spilled<Span>>();
        let mut sessions = Sessions::new(1).unwrap();
        sessions.insert(0).unwrap();
        assert_eq!(sessions.heap_bytes(), 0);
        sessions.insert(10).unwrap();
        assert_eq!(sessions.heap_bytes(), header + 2 * span_bytes);
        sessions.insert(20).unwrap();
        assert_eq!(sessions.heap_bytes(), header + 4 * span_bytes);
        for n in 3..MAX_SESSIONS as u64 {
            sessions.insert(n * 10).unwrap();
        }
        assert_eq!(sessions.heap_bytes(), header + MAX_SESSIONS * span_bytes);
        sessions.advance_watermark(u64::MAX);
        while sessions.take_closed().is_some() {}
        assert_eq!(sessions.heap_bytes(), 0);
    }
}
