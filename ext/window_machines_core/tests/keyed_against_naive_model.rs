//! KeyedSessions against a naive model: a map of keys to span lists, scanned
//! in full to find what closes first.

use std::collections::HashMap;

use proptest::prelude::*;
use window_machines_core::{
    Error, KeyLookup, KeySlot, KeyedSessions, Sessions, Span, MAX_SESSIONS,
};

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u64),
    Advance(u64),
    Take,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..6, 0u64..400).prop_map(|(key, ts)| Op::Insert(key, ts)),
        1 => (0u64..400).prop_map(Op::Advance),
        3 => Just(Op::Take),
    ]
}

/// One plain Sessions per key (already checked against its own naive model),
/// plus the order keys were first held in.
#[derive(Default)]
struct Model {
    gap: u64,
    max_sessions: Option<usize>,
    watermark: Option<u64>,
    keys: HashMap<u8, (u64, Sessions)>,
    next_seen: u64,
}

impl Model {
    fn held(&self) -> usize {
        self.keys
            .values()
            .map(|(_, sessions)| sessions.spans().len())
            .sum()
    }

    fn insert(&mut self, key: u8, ts: u64) -> std::result::Result<Span, ()> {
        if self.watermark.is_some_and(|w| ts <= w) {
            return Err(());
        }
        let (gap, watermark) = (self.gap, self.watermark);
        let mut sessions = self
            .keys
            .get(&key)
            .map(|(_, sessions)| sessions.clone())
            .unwrap_or_else(|| Sessions::from_parts(gap, watermark, &[]).unwrap());
        let before = sessions.spans().len();
        let span = sessions.insert(ts).map_err(|_| ())?.span;
        let opened = sessions.spans().len() > before;
        if opened && self.max_sessions.is_some_and(|limit| self.held() >= limit) {
            return Err(());
        }
        let seen = match self.keys.get(&key) {
            Some((seen, _)) => *seen,
            None => {
                self.next_seen += 1;
                self.next_seen - 1
            }
        };
        self.keys.insert(key, (seen, sessions));
        Ok(span)
    }

    fn advance(&mut self, ts: u64) -> bool {
        let moves = self.watermark.is_none_or(|w| ts > w);
        if moves {
            self.watermark = Some(ts);
            for (_, sessions) in self.keys.values_mut() {
                sessions.advance_watermark(ts);
            }
        }
        moves
    }

    fn take(&mut self) -> Option<(u8, Span)> {
        let watermark = self.watermark?;
        let (key, span, _) = self
            .keys
            .iter()
            .flat_map(|(key, (seen, sessions))| {
                sessions
                    .spans()
                    .iter()
                    .map(move |span| (*key, *span, *seen))
            })
            .filter(|(_, span, _)| span.last.saturating_add(self.gap) <= watermark)
            .min_by_key(|(_, span, seen)| (span.last, span.first, *seen))?;
        let (_, sessions) = self.keys.get_mut(&key)?;
        assert_eq!(sessions.take_closed(), Some(span));
        if sessions.spans().is_empty() {
            self.keys.remove(&key);
        }
        Some((key, span))
    }
}

/// A weak hash, so that keys collide and the lookup's equality decides.
fn hash(key: u8) -> u64 {
    u64::from(key % 3)
}

/// The tracker's own lookup: the slot holding `key`, walking its hash chain.
fn lookup(tracker: &KeyedSessions<u8>, key: u8) -> Option<KeySlot> {
    let mut at = tracker.first_with_hash(hash(key));
    while let Some(slot) = at {
        if tracker.key(slot) == Some(&key) {
            return Some(slot);
        }
        at = tracker.next_with_same_hash(slot);
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn keyed_sessions_match_the_naive_model(
        gap in 1u64..30,
        max_sessions in prop::option::of(1u64..80),
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let mut tracker = KeyedSessions::new(gap, max_sessions).unwrap();
        let mut slots: HashMap<u8, KeySlot> = HashMap::new();
        let mut model = Model { gap, max_sessions: max_sessions.map(|m| usize::try_from(m).unwrap()), ..Model::default() };
        for op in ops {
            match op {
                Op::Insert(key, ts) => {
                    let expected = model.insert(key, ts);
                    prop_assert_eq!(lookup(&tracker, key), slots.get(&key).copied());
                    match tracker.insert(lookup(&tracker, key), hash(key), || key, ts) {
                        Ok(done) => {
                            prop_assert_eq!(Ok(done.insertion.span), expected);
                            prop_assert_eq!(done.new_key, !slots.contains_key(&key));
                            slots.insert(key, done.slot);
                        }
                        Err(error) => {
                            prop_assert!(matches!(error, Error::Late { .. } | Error::TooManySessions { .. }), "unexpected {:?}", error);
                            prop_assert_eq!(expected, Err(()));
                        }
                    }
                }
                Op::Advance(ts) => prop_assert_eq!(tracker.advance_watermark(ts), model.advance(ts)),
                Op::Take => {
                    let handover = tracker.take_closed();
                    let got = handover.as_ref().map(|h| (h.key, h.span));
                    prop_assert_eq!(got, model.take());
                    if let Some(h) = handover.filter(|h| h.released) {
                        prop_assert!(!model.keys.contains_key(&h.key));
                        slots.remove(&h.key);
                    }
                }
            }
            prop_assert_eq!(tracker.len(), model.held());
            prop_assert_eq!(tracker.key_count(), model.keys.len());
            for (key, slot) in &slots {
                prop_assert_eq!(lookup(&tracker, *key), Some(*slot));
                let expected = model.keys.get(key).map(|(_, s)| s.spans().to_vec()).unwrap_or_default();
                prop_assert_eq!(tracker.spans(*slot), &expected[..]);
                prop_assert!(expected.len() <= MAX_SESSIONS);
            }
        }
        // Checkpoint round trip: same sessions in the same closing order.
        let parts: Vec<(u8, u64, Vec<Span>)> =
            tracker.keys().into_iter().map(|(k, s)| (*k, hash(*k), s.to_vec())).collect();
        let mut restored = KeyedSessions::from_parts(gap, max_sessions, tracker.watermark(), parts).unwrap();
        prop_assert_eq!(restored.sessions().collect::<Vec<_>>(), tracker.sessions().collect::<Vec<_>>());
        // Everything handed over, closed or not, in the model's closing
        // order, by the tracker and by its restored copy alike.
        model.advance(1_000);
        let expected: Vec<(u8, Span)> = std::iter::from_fn(|| model.take()).collect();
        let drain = |tracker: &mut KeyedSessions<u8>| -> Vec<(u8, Span)> {
            std::iter::from_fn(|| tracker.take_first(false).map(|h| (h.key, h.span))).collect()
        };
        prop_assert_eq!(drain(&mut tracker), expected.clone());
        prop_assert_eq!(drain(&mut restored), expected);
    }
}
