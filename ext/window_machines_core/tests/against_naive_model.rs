//! Random operation sequences against naive models written from the contract
//! in u128 arithmetic, so no saturating shortcut of the core is reused.

use proptest::prelude::*;
use window_machines_core::{
    sliding, tumbling, Error, Sessions, Span, Window, MAX_SESSIONS, MAX_SLIDING_WINDOWS,
};

const TOP: u128 = u64::MAX as u128;

/// A session as `(first, last)`, wide enough that `last + gap` never overflows.
type WideSpan = (u128, u128);

#[derive(Debug, Default)]
struct NaiveSessions {
    gap: u128,
    watermark: Option<u128>,
    spans: Vec<WideSpan>,
}

impl NaiveSessions {
    fn insert(&mut self, ts: u128) -> Option<WideSpan> {
        if self.watermark.is_some_and(|w| ts <= w) {
            return None;
        }
        let gap = self.gap;
        let (joined, kept): (Vec<WideSpan>, Vec<WideSpan>) = self
            .spans
            .iter()
            .partition(|&&(first, last)| first <= ts + gap && ts <= last + gap);
        if joined.is_empty() && self.spans.len() >= MAX_SESSIONS {
            return None;
        }
        let first = joined.iter().map(|s| s.0).chain([ts]).min()?;
        let last = joined.iter().map(|s| s.1).chain([ts]).max()?;
        self.spans = kept;
        self.spans.push((first, last));
        self.spans.sort();
        Some((first, last))
    }

    fn take_closed(&mut self) -> Option<WideSpan> {
        let watermark = self.watermark?;
        let position = self
            .spans
            .iter()
            .position(|&(_, last)| (last + self.gap).min(TOP) <= watermark)?;
        Some(self.spans.remove(position))
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Advance(u64),
    Take,
}

/// Timestamps that cluster (so sessions grow and merge) at both ends of the domain.
fn timestamp() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..200,
        (0u64..200).prop_map(|d| u64::MAX - d),
        (0u64..200).prop_map(|d| (1 << 40) + d),
        any::<u64>(),
    ]
}

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(1u64),
        Just(2u64),
        1u64..40,
        Just(u64::MAX),
        (0u64..3).prop_map(|d| u64::MAX - d),
        (1u64..3).prop_map(|d| 1 << 63 >> d),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => timestamp().prop_map(Op::Insert),
        1 => timestamp().prop_map(Op::Advance),
        2 => Just(Op::Take),
    ]
}

fn wide(span: Span) -> WideSpan {
    (u128::from(span.first), u128::from(span.last))
}

fn assert_invariants(sessions: &Sessions) {
    let spans = sessions.spans();
    let gap = u128::from(sessions.gap());
    assert!(spans.len() <= MAX_SESSIONS);
    for span in spans {
        assert!(span.first <= span.last);
    }
    for pair in spans.windows(2) {
        assert!(
            u128::from(pair[1].first) > u128::from(pair[0].last) + gap,
            "{pair:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn sessions_match_the_naive_model(gap in gap(), ops in prop::collection::vec(op(), 1..200)) {
        let mut sessions = Sessions::new(gap).unwrap();
        let mut model = NaiveSessions { gap: u128::from(gap), ..NaiveSessions::default() };
        for op in ops {
            match op {
                Op::Insert(ts) => {
                    let before = sessions.clone();
                    match sessions.insert(ts) {
                        Ok(insertion) => {
                            prop_assert_eq!(Some(wide(insertion.span)), model.insert(u128::from(ts)));
                            let replaced: Vec<Span> = insertion.replaced.spans().collect();
                            prop_assert!(replaced.windows(2).all(|pair| pair[0] < pair[1]));
                            for span in &replaced {
                                prop_assert!(before.spans().contains(span));
                                prop_assert!(!sessions.spans().contains(span));
                            }
                        }
                        Err(error) => {
                            prop_assert!(matches!(error, Error::Late { .. } | Error::TooManySessions { .. }), "unexpected error");
                            prop_assert_eq!(model.insert(u128::from(ts)), None);
                            prop_assert_eq!(&sessions, &before);
                        }
                    }
                }
                Op::Advance(ts) => {
                    let moves = model.watermark.is_none_or(|w| u128::from(ts) > w);
                    if moves {
                        model.watermark = Some(u128::from(ts));
                    }
                    prop_assert_eq!(sessions.advance_watermark(ts), moves);
                }
                Op::Take => {
                    prop_assert_eq!(sessions.take_closed().map(wide), model.take_closed());
                }
            }
            assert_invariants(&sessions);
            let held: Vec<_> = sessions.spans().iter().copied().map(wide).collect();
            prop_assert_eq!(held, model.spans.clone());
            prop_assert_eq!(sessions.watermark().map(u128::from), model.watermark);
        }
        let restored = Sessions::from_parts(sessions.gap(), sessions.watermark(), sessions.spans());
        prop_assert_eq!(restored, Ok(sessions));
    }

    #[test]
    fn from_parts_builds_only_valid_trackers(
        gap in gap(),
        watermark in prop::option::of(timestamp()),
        parts in prop::collection::vec((timestamp(), timestamp()), 0..40),
    ) {
        let spans: Vec<Span> = parts.into_iter().map(|(first, last)| Span { first, last }).collect();
        if let Ok(sessions) = Sessions::from_parts(gap, watermark, &spans) {
            assert_invariants(&sessions);
            prop_assert_eq!(sessions.spans(), &spans[..]);
            prop_assert_eq!(sessions.watermark(), watermark);
        }
    }

    #[test]
    fn tumbling_matches_the_definition(ts in timestamp(), size in gap()) {
        let start = u128::from(ts) / u128::from(size) * u128::from(size);
        let end = start + u128::from(size);
        match tumbling(ts, size) {
            Ok(window) => prop_assert_eq!((u128::from(window.start), u128::from(window.end)), (start, end)),
            Err(error) => {
                prop_assert!(matches!(error, Error::EndOverflow { .. }), "unexpected error");
                prop_assert!(end > TOP);
            }
        }
    }

    #[test]
    fn sliding_matches_enumeration(ts in timestamp(), slide in 1u64..50, width in 1u64..1700) {
        let result = sliding(ts, width, slide);
        if width.div_ceil(slide) > MAX_SLIDING_WINDOWS as u64 {
            prop_assert!(matches!(result, Err(Error::TooManyWindows { .. })), "unexpected error");
            return Ok(());
        }
        // Every multiple of slide that could start a window holding ts, newest first.
        let (ts, width, slide) = (u128::from(ts), u128::from(width), u128::from(slide));
        let newest = ts / slide * slide;
        let expected: Vec<(u128, u128)> = (0..=MAX_SLIDING_WINDOWS as u128)
            .filter_map(|k| newest.checked_sub(k * slide))
            .filter(|&start| ts < start + width)
            .map(|start| (start, start + width))
            .collect();
        match result {
            Ok(windows) => {
                let got: Vec<(u128, u128)> = windows
                    .map(|Window { start, end }| (u128::from(start), u128::from(end)))
                    .collect();
                prop_assert_eq!(got, expected);
            }
            Err(error) => {
                prop_assert!(matches!(error, Error::EndOverflow { .. }), "unexpected error");
                prop_assert!(expected.iter().any(|&(_, end)| end > TOP));
            }
        }
    }
}
