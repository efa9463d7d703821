//! Sessions per key under one shared watermark. Every held session, across
//! all keys, sits in one index ordered by when it closes, so handing over
//! closed sessions never sweeps keys, and a key's state is released the
//! moment its last session is handed over.

use std::collections::{BTreeMap, VecDeque};

use crate::error::{Error, Result};
use crate::span::{Insertion, Span};
use crate::span_list::{Placement, SpanList, MAX_SESSIONS};
use crate::watermark::Watermark;

/// Where a key's state lives; bindings keep it beside the key (in a hash
/// table of their own) to find the state again without hashing in here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySlot(u32);

/// The order sessions close and are handed over in: by last event, then by
/// first, then by the key that has been held longest (`seen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ClosingOrder {
    last: u64,
    first: u64,
    seen: u64,
}

impl ClosingOrder {
    fn of(span: Span, seen: u64) -> ClosingOrder {
        ClosingOrder {
            last: span.last,
            first: span.first,
            seen,
        }
    }
}

#[derive(Debug, Clone)]
struct KeyState<K> {
    key: K,
    /// Order in which keys started being held, for ties in [`ClosingOrder`].
    seen: u64,
    spans: SpanList,
}

/// What a keyed insert did, and where its key lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyedInsertion {
    pub slot: KeySlot,
    /// Whether the key was not held before this insert.
    pub new_key: bool,
    pub insertion: Insertion,
}

/// A closed session handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handover<K> {
    pub key: K,
    /// Where the key was held; vacant once `released`.
    pub slot: KeySlot,
    pub span: Span,
    /// Whether this was the key's last session, so the key is no longer held.
    pub released: bool,
}

/// Sessions per key, at most [`MAX_SESSIONS`] per key and optionally
/// `max_sessions` in all, under one watermark.
#[derive(Debug, Clone)]
pub struct KeyedSessions<K> {
    gap: u64,
    max_sessions: Option<usize>,
    watermark: Watermark,
    slots: Vec<Option<KeyState<K>>>,
    /// Released slots, reused oldest first: keys then sit in the slot
    /// table roughly in the order they arrive and close, so consecutive
    /// hand-overs and inserts touch nearby memory.
    free_slots: VecDeque<u32>,
    closing: BTreeMap<ClosingOrder, KeySlot>,
    next_seen: u64,
    span_heap_bytes: usize,
}

impl<K> Default for KeyedSessions<K> {
    /// An empty tracker with gap 1: a placeholder for bindings that allocate
    /// before they initialise.
    fn default() -> Self {
        KeyedSessions {
            gap: 1,
            max_sessions: None,
            watermark: Watermark::default(),
            slots: Vec::new(),
            free_slots: VecDeque::new(),
            closing: BTreeMap::new(),
            next_seen: 0,
            span_heap_bytes: 0,
        }
    }
}

impl<K: Clone> KeyedSessions<K> {
    pub fn new(gap: u64, max_sessions: Option<u64>) -> Result<Self> {
        if gap == 0 {
            return Err(Error::ZeroLength { name: "gap" });
        }
        let max_sessions = match max_sessions {
            Some(0) => {
                return Err(Error::ZeroLength {
                    name: "max_sessions",
                })
            }
            Some(limit) => Some(usize::try_from(limit).unwrap_or(usize::MAX)),
            None => None,
        };
        Ok(KeyedSessions {
            gap,
            max_sessions,
            ..KeyedSessions::default()
        })
    }

    /// A tracker restored from its parts: each key with its spans, keys in
    /// the order they were first held. Every invariant is checked.
    pub fn from_parts(
        gap: u64,
        max_sessions: Option<u64>,
        watermark: Option<u64>,
        keys: Vec<(K, Vec<Span>)>,
    ) -> Result<Self> {
        let mut tracker = KeyedSessions::new(gap, max_sessions)?;
        tracker.watermark = Watermark::new(watermark);
        let total: usize = keys.iter().map(|(_, spans)| spans.len()).sum();
        if let Some(limit) = tracker.max_sessions.filter(|limit| total > *limit) {
            return Err(Error::TooManySpans {
                count: total,
                limit,
            });
        }
        for (key, spans) in keys {
            let spans = SpanList::validated(spans, gap)?;
            if spans.is_empty() {
                continue;
            }
            let slot = tracker.vacant_slot();
            let seen = tracker.next_seen;
            tracker.next_seen += 1;
            tracker.span_heap_bytes += spans.heap_bytes();
            for span in spans.as_slice() {
                tracker.closing.insert(ClosingOrder::of(*span, seen), slot);
            }
            tracker.slots[slot.0 as usize] = Some(KeyState { key, seen, spans });
        }
        Ok(tracker)
    }

    pub fn gap(&self) -> u64 {
        self.gap
    }

    pub fn max_sessions(&self) -> Option<usize> {
        self.max_sessions
    }

    pub fn watermark(&self) -> Option<u64> {
        self.watermark.value()
    }

    /// Sessions held, across all keys.
    pub fn len(&self) -> usize {
        self.closing.len()
    }

    pub fn is_empty(&self) -> bool {
        self.closing.is_empty()
    }

    /// Keys holding at least one session.
    pub fn key_count(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    /// Heap memory the tracker owns. The index's share is estimated from
    /// its entries (B-tree nodes are not exposed); the rest is exact.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let index_entry = size_of::<ClosingOrder>() + size_of::<KeySlot>();
        self.slots.capacity() * size_of::<Option<KeyState<K>>>()
            + self.free_slots.capacity() * size_of::<u32>()
            + self.closing.len() * index_entry * 3 / 2
            + self.span_heap_bytes
    }

    fn state(&self, slot: KeySlot) -> Option<&KeyState<K>> {
        self.slots.get(slot.0 as usize)?.as_ref()
    }

    /// The key held at `slot`, if any.
    pub fn key(&self, slot: KeySlot) -> Option<&K> {
        self.state(slot).map(|state| &state.key)
    }

    /// The spans held for the key at `slot`, oldest first.
    pub fn spans(&self, slot: KeySlot) -> &[Span] {
        self.state(slot).map_or(&[], |state| state.spans.as_slice())
    }

    /// Every held key once, in the order keys started being held, with its spans.
    pub fn keys(&self) -> Vec<(&K, &[Span])> {
        let mut held: Vec<&KeyState<K>> = self.slots.iter().flatten().collect();
        held.sort_by_key(|state| state.seen);
        held.into_iter()
            .map(|state| (&state.key, state.spans.as_slice()))
            .collect()
    }

    /// Every held key with its slot, in no particular order.
    pub fn slots(&self) -> impl Iterator<Item = (KeySlot, &K)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(index, state)| Some((KeySlot(index as u32), &state.as_ref()?.key)))
    }

    /// Every held session in the order they close, with its key.
    pub fn sessions(&self) -> impl Iterator<Item = (&K, Span)> {
        self.closing.iter().filter_map(|(order, slot)| {
            let span = Span {
                first: order.first,
                last: order.last,
            };
            Some((self.key(*slot)?, span))
        })
    }

    /// Puts an event for the key held at `slot` (or, without a slot, for a
    /// new key made by `key`) into that key's sessions. A refused insert
    /// changes nothing and does not call `key`.
    pub fn insert(
        &mut self,
        slot: Option<KeySlot>,
        key: impl FnOnce() -> K,
        timestamp: u64,
    ) -> Result<KeyedInsertion> {
        self.watermark.admit(timestamp)?;
        let held = slot.filter(|slot| self.state(*slot).is_some());
        let placement = match held.and_then(|slot| self.state(slot)) {
            Some(state) => state.spans.place(timestamp, self.gap),
            None => Placement::Open(0),
        };
        if placement.opens() {
            let per_key = held.map_or(0, |slot| self.spans(slot).len());
            if per_key >= MAX_SESSIONS {
                return Err(Error::TooManySessions {
                    limit: MAX_SESSIONS,
                });
            }
            if let Some(limit) = self.max_sessions.filter(|limit| self.len() >= *limit) {
                return Err(Error::TooManySessions { limit });
            }
        }
        let slot = match held {
            Some(slot) => slot,
            None => self.vacant_slot(),
        };
        let seen = self.next_seen;
        // The slot is either held (checked above) or was just made vacant,
        // so the index is in bounds.
        let state = self.slots[slot.0 as usize].get_or_insert_with(|| KeyState {
            key: key(),
            seen,
            spans: SpanList::default(),
        });
        let heap_before = state.spans.heap_bytes();
        let insertion = state.spans.apply(placement, timestamp);
        let heap_after = state.spans.heap_bytes();
        let seen = state.seen;
        if held.is_none() {
            self.next_seen += 1;
        }
        self.span_heap_bytes = self.span_heap_bytes + heap_after - heap_before;
        if !matches!(placement, Placement::Inside(_)) {
            for old in insertion.replaced.spans() {
                self.closing.remove(&ClosingOrder::of(old, seen));
            }
            self.closing
                .insert(ClosingOrder::of(insertion.span, seen), slot);
        }
        Ok(KeyedInsertion {
            slot,
            new_key: held.is_none(),
            insertion,
        })
    }

    /// An empty slot, reused if one was released.
    fn vacant_slot(&mut self) -> KeySlot {
        if let Some(index) = self.free_slots.pop_front() {
            return KeySlot(index);
        }
        self.slots.push(None);
        KeySlot((self.slots.len() - 1) as u32)
    }

    /// Moves the watermark forward; says whether it moved.
    pub fn advance_watermark(&mut self, timestamp: u64) -> bool {
        self.watermark.advance(timestamp)
    }

    /// Asks the CPU to start loading a slot that is about to be needed, so
    /// that handing over many sessions in a row overlaps their cache misses.
    fn prefetch(&self, slot: KeySlot) {
        #[cfg(target_arch = "x86_64")]
        if let Some(state) = self.slots.get(slot.0 as usize) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch never faults and has no visible effect.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((state as *const Option<KeyState<K>>).cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Removes and returns the session that closed first, across all keys.
    pub fn take_closed(&mut self) -> Option<Handover<K>> {
        let (order, slot) = self.closing.first_key_value()?;
        if !self.watermark.has_passed(order.last, self.gap) {
            return None;
        }
        let (order, slot) = (*order, *slot);
        self.closing.pop_first();
        if let Some((_, next)) = self.closing.first_key_value() {
            self.prefetch(*next);
        }
        let span = Span {
            first: order.first,
            last: order.last,
        };
        let entry = self.slots.get_mut(slot.0 as usize)?;
        let state = entry.as_mut()?;
        // A key's sessions close in their own order, so this is its first.
        let heap_before = state.spans.heap_bytes();
        state.spans.remove_first();
        self.span_heap_bytes = self.span_heap_bytes + state.spans.heap_bytes() - heap_before;
        if !state.spans.is_empty() {
            return Some(Handover {
                key: state.key.clone(),
                slot,
                span,
                released: false,
            });
        }
        let state = entry.take()?;
        self.free_slots.push_back(slot.0);
        Some(Handover {
            key: state.key,
            slot,
            span,
            released: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Replaced;
    use std::collections::HashMap;

    fn span(first: u64, last: u64) -> Span {
        Span { first, last }
    }

    /// A tracker keyed by &str, with the slot table a binding would keep.
    struct Harness {
        tracker: KeyedSessions<&'static str>,
        slots: HashMap<&'static str, KeySlot>,
    }

    impl Harness {
        fn new(gap: u64, max_sessions: Option<u64>) -> Harness {
            Harness {
                tracker: KeyedSessions::new(gap, max_sessions).unwrap(),
                slots: HashMap::new(),
            }
        }

        fn insert(&mut self, key: &'static str, timestamp: u64) -> Result<KeyedInsertion> {
            let slot = self.slots.get(key).copied();
            let done = self.tracker.insert(slot, || key, timestamp)?;
            self.slots.insert(key, done.slot);
            Ok(done)
        }

        fn take(&mut self) -> Option<(&'static str, Span)> {
            let handover = self.tracker.take_closed()?;
            if handover.released {
                self.slots.remove(handover.key);
            }
            Some((handover.key, handover.span))
        }
    }

    #[test]
    fn keys_have_their_own_sessions_under_one_watermark() {
        let mut keyed = Harness::new(5, None);
        keyed.insert("a", 10).unwrap();
        keyed.insert("b", 12).unwrap();
        assert_eq!(keyed.insert("a", 14).unwrap().insertion.span, span(10, 14));
        assert_eq!(keyed.insert("b", 30).unwrap().insertion.span, span(30, 30));
        assert_eq!(keyed.tracker.len(), 3);
        assert_eq!(keyed.tracker.key_count(), 2);
        keyed.tracker.advance_watermark(20);
        assert_eq!(
            keyed.insert("c", 20),
            Err(Error::Late {
                timestamp: 20,
                watermark: 20
            })
        );
        assert_eq!(keyed.tracker.key_count(), 2);
    }

    #[test]
    fn hands_over_by_last_then_first_then_key_held_longest() {
        let mut keyed = Harness::new(2, None);
        for (key, timestamp) in [("b", 10), ("a", 10), ("a", 40), ("c", 8), ("c", 10)] {
            keyed.insert(key, timestamp).unwrap();
        }
        keyed.tracker.advance_watermark(100);
        let order: Vec<_> = std::iter::from_fn(|| keyed.take()).collect();
        assert_eq!(
            order,
            [
                ("c", span(8, 10)),
                ("b", span(10, 10)),
                ("a", span(10, 10)),
                ("a", span(40, 40))
            ]
        );
        assert!(keyed.tracker.is_empty());
        assert_eq!(keyed.tracker.key_count(), 0);
    }

    #[test]
    fn only_closed_sessions_are_handed_over() {
        let mut keyed = Harness::new(5, None);
        keyed.insert("a", 10).unwrap();
        keyed.insert("b", 11).unwrap();
        keyed.tracker.advance_watermark(15);
        assert_eq!(keyed.take(), Some(("a", span(10, 10))));
        assert_eq!(keyed.take(), None);
        keyed.tracker.advance_watermark(16);
        assert_eq!(keyed.take(), Some(("b", span(11, 11))));
    }

    #[test]
    fn a_key_is_released_with_its_last_session_and_held_anew_later() {
        let mut keyed = Harness::new(5, None);
        keyed.insert("a", 10).unwrap();
        keyed.insert("a", 30).unwrap();
        keyed.tracker.advance_watermark(16);
        let first = keyed.tracker.take_closed().unwrap();
        assert!(!first.released);
        keyed.tracker.advance_watermark(40);
        let last = keyed.tracker.take_closed().unwrap();
        assert!(last.released);
        assert_eq!(keyed.tracker.key_count(), 0);
        keyed.slots.clear();
        assert!(keyed.insert("a", 50).unwrap().new_key);
        assert_eq!(keyed.tracker.key_count(), 1);
        assert!(keyed.tracker.heap_bytes() > 0);
    }

    #[test]
    fn merges_and_growth_update_the_closing_order() {
        let mut keyed = Harness::new(5, None);
        keyed.insert("a", 10).unwrap();
        keyed.insert("a", 20).unwrap();
        let merged = keyed.insert("a", 15).unwrap().insertion;
        assert_eq!(merged.replaced, Replaced::Two(span(10, 10), span(20, 20)));
        assert_eq!(keyed.tracker.len(), 1);
        keyed.tracker.advance_watermark(24);
        assert_eq!(keyed.take(), None);
        keyed.tracker.advance_watermark(25);
        assert_eq!(keyed.take(), Some(("a", span(10, 20))));
    }

    #[test]
    fn per_key_and_total_capacity() {
        let mut keyed = Harness::new(1, Some(40));
        for n in 0..MAX_SESSIONS as u64 {
            keyed.insert("a", n * 10).unwrap();
        }
        assert_eq!(
            keyed.insert("a", 1000),
            Err(Error::TooManySessions {
                limit: MAX_SESSIONS
            })
        );
        assert_eq!(keyed.insert("a", 1).unwrap().insertion.span, span(0, 1));
        for n in 0..8 {
            keyed.insert("b", n * 10).unwrap();
        }
        assert_eq!(
            keyed.insert("c", 5),
            Err(Error::TooManySessions { limit: 40 })
        );
        assert_eq!(keyed.tracker.key_count(), 2);
        assert_eq!(keyed.insert("b", 1).unwrap().insertion.span, span(0, 1));
    }

    #[test]
    fn zero_lengths_are_refused() {
        assert_eq!(
            KeyedSessions::<u8>::new(0, None).unwrap_err(),
            Error::ZeroLength { name: "gap" }
        );
        assert_eq!(
            KeyedSessions::<u8>::new(1, Some(0)).unwrap_err(),
            Error::ZeroLength {
                name: "max_sessions"
            }
        );
    }

    #[test]
    fn from_parts_round_trips_and_keeps_the_held_longest_order() {
        let mut keyed = Harness::new(5, Some(10));
        for (key, timestamp) in [("b", 10), ("a", 10), ("a", 30), ("b", 31)] {
            keyed.insert(key, timestamp).unwrap();
        }
        keyed.tracker.advance_watermark(3);
        let parts: Vec<(&str, Vec<Span>)> = keyed
            .tracker
            .keys()
            .into_iter()
            .map(|(key, spans)| (*key, spans.to_vec()))
            .collect();
        assert_eq!(parts[0].0, "b");
        let restored = KeyedSessions::from_parts(5, Some(10), Some(3), parts).unwrap();
        let before: Vec<_> = keyed.tracker.sessions().collect();
        let after: Vec<_> = restored.sessions().collect();
        assert_eq!(before, after);
        assert_eq!(restored.watermark(), Some(3));
        assert_eq!(restored.key_count(), 2);
    }

    #[test]
    fn from_parts_refuses_bad_spans_and_too_many_sessions() {
        let bad =
            KeyedSessions::from_parts(5, None, None, vec![("a", vec![span(1, 10), span(12, 20)])]);
        assert!(matches!(bad, Err(Error::SpansTooClose { .. })));
        let too_many = KeyedSessions::from_parts(
            5,
            Some(1),
            None,
            vec![("a", vec![span(1, 1)]), ("b", vec![span(1, 1)])],
        );
        assert_eq!(
            too_many.unwrap_err(),
            Error::TooManySpans { count: 2, limit: 1 }
        );
    }
}
