//! Sessions per key under one shared watermark. Every held session, across
//! all keys, has an entry in one queue ordered by when it closes, so
//! handing over closed sessions never sweeps keys, and a key's state is
//! released the moment its last session is handed over. A session that
//! grows or merges gets a new entry and leaves its old ones to go stale:
//! an insert never searches the queue.

use crate::closing_queue::{ClosingQueue, Fate};
use crate::error::{Error, Result};
use crate::key_slots::{KeyLookup, KeySlot, KeySlots, Prefetch};
use crate::span::{Insertion, Span};
use crate::span_list::{Placement, SpanList, MAX_SESSIONS};
use crate::watermark::Watermark;

/// A session's entry in the closing queue, in the order sessions close and
/// are handed over: by last event, then by first, then by the key that has
/// been held longest (`seen`, which also tells a key from a later one held
/// at the same slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ClosingOrder {
    last: u64,
    first: u64,
    seen: u64,
    slot: KeySlot,
}

impl ClosingOrder {
    fn of(span: Span, seen: u64, slot: KeySlot) -> ClosingOrder {
        ClosingOrder {
            last: span.last,
            first: span.first,
            seen,
            slot,
        }
    }

    fn span(self) -> Span {
        Span {
            first: self.first,
            last: self.last,
        }
    }
}

/// A held key's sessions, and what the tracker's owner keeps with them (a
/// [`crate::SessionWindows`] its accumulators), in the key's own entry so
/// that one cache miss finds both.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyState<X> {
    spans: SpanList,
    extra: X,
}

/// Whether `entry` names a session held now.
fn is_live<K, X>(keys: &KeySlots<K, KeyState<X>>, entry: ClosingOrder) -> bool {
    keys.seen(entry.slot) == Some(entry.seen)
        && keys
            .state(entry.slot)
            .is_some_and(|state| state.spans.as_slice().binary_search(&entry.span()).is_ok())
}

/// How many ticks of last events share a bucket of the closing queue, as a
/// power of two: at most an eighth of the gap (and so never more than the
/// gap, which keeps a bucket from receiving entries once it is due).
fn bucket_shift(gap: u64) -> u32 {
    (gap / 8).max(1).ilog2()
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

/// How many sessions one key may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PerKeyLimit {
    /// Held, open or closed and not yet handed over: the Ruby classes' 32.
    Held(usize),
    /// Open under the watermark: for an owner that hands what closed over
    /// after each event.
    Open(usize),
}

impl PerKeyLimit {
    fn limit(self) -> usize {
        match self {
            PerKeyLimit::Held(limit) | PerKeyLimit::Open(limit) => limit,
        }
    }

    /// How many of `spans` count against the limit under `watermark`.
    fn counted(self, spans: &[Span], gap: u64, watermark: Watermark) -> usize {
        match self {
            PerKeyLimit::Held(_) => spans.len(),
            // Sessions close oldest first.
            PerKeyLimit::Open(_) => {
                spans.len() - spans.partition_point(|span| watermark.has_passed(span.last, gap))
            }
        }
    }
}

/// Sessions per key, at most [`MAX_SESSIONS`] per key (unless an owner
/// sets another limit) and optionally `max_sessions` in all, under one
/// watermark. An owner in this crate may keep an `X` with each key's
/// sessions.
///
/// Keys are found by a hash and an equality the caller supplies (see
/// [`KeyLookup`]): a binding compares keys its own way.
#[derive(Debug)]
pub struct KeyedSessions<K, X = ()> {
    gap: u64,
    max_sessions: Option<usize>,
    /// [`MAX_SESSIONS`] held unless set (see
    /// [`KeyedSessions::with_per_key_limit`]).
    per_key_limit: PerKeyLimit,
    watermark: Watermark,
    keys: KeySlots<K, KeyState<X>>,
    closing: ClosingQueue<ClosingOrder>,
    /// Sessions held, across all keys.
    held: usize,
    /// The heap the keys' span lists own, kept up to date as they change.
    span_heap_bytes: usize,
}

/// The heap the span lists of `keys` own.
fn span_heap_bytes<K, X>(keys: &KeySlots<K, KeyState<X>>) -> usize {
    keys.iter()
        .map(|(_, _, state)| state.spans.heap_bytes())
        .sum()
}

impl<K: Clone, X: Clone> Clone for KeyedSessions<K, X> {
    fn clone(&self) -> Self {
        let keys = self.keys.clone();
        KeyedSessions {
            gap: self.gap,
            max_sessions: self.max_sessions,
            per_key_limit: self.per_key_limit,
            watermark: self.watermark,
            // A copied list has room for what it holds only, whatever
            // room the original had.
            span_heap_bytes: span_heap_bytes(&keys),
            keys,
            closing: self.closing.clone(),
            held: self.held,
        }
    }
}

impl<K, X> Default for KeyedSessions<K, X> {
    /// An empty tracker with gap 1: a placeholder for bindings that allocate
    /// before they initialise.
    fn default() -> Self {
        KeyedSessions {
            gap: 1,
            max_sessions: None,
            per_key_limit: PerKeyLimit::Held(MAX_SESSIONS),
            watermark: Watermark::default(),
            keys: KeySlots::default(),
            closing: ClosingQueue::default(),
            held: 0,
            span_heap_bytes: 0,
        }
    }
}

impl<K, X> KeyLookup for KeyedSessions<K, X> {
    type Key = K;

    fn first_with_hash(&self, hash: u64) -> Option<KeySlot> {
        self.keys.first_with_hash(hash)
    }

    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot> {
        self.keys.next_with_same_hash(slot)
    }

    fn key(&self, slot: KeySlot) -> Option<&K> {
        self.keys.key(slot)
    }

    fn prefetch(&self, hash: u64, stage: Prefetch) {
        self.keys.prefetch(hash, stage);
    }
}

impl<K: Clone, X: Default> KeyedSessions<K, X> {
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
            closing: ClosingQueue::new(bucket_shift(gap)),
            ..KeyedSessions::default()
        })
    }

    /// The tracker letting a key have up to `limit` sessions open rather
    /// than [`MAX_SESSIONS`] held, for an owner that hands closed sessions
    /// over after each event and whose users need more open at once: an
    /// event that closes older sessions of its key while it opens one is
    /// refused only if more than `limit` stay open. A hand-over shifts the
    /// rest of its key's sessions, so the limit also bounds what one
    /// costs. `max_sessions`, if given, still bounds the total.
    #[must_use]
    pub fn with_per_key_limit(mut self, limit: usize) -> Self {
        self.per_key_limit = PerKeyLimit::Open(limit);
        self
    }

    /// An empty tracker to restore a checkpoint into: give it every session
    /// with [`KeyedSessions::restore`], then check it with
    /// [`KeyedSessions::finish_restore`]. Until then it holds the keys (so a
    /// binding can keep them alive) but answers nothing else.
    pub fn restoring(gap: u64, max_sessions: Option<u64>, watermark: Option<u64>) -> Result<Self> {
        let mut tracker = KeyedSessions::new(gap, max_sessions)?;
        tracker.watermark = Watermark::new(watermark);
        Ok(tracker)
    }

    /// Adds one session of a checkpoint for the key held at `slot` (or,
    /// without a slot, a new key made by `key`, held under `hash`). Keys are
    /// held in the order they first appear, which breaks closing ties.
    pub fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        span: Span,
    ) -> Result<KeySlot> {
        let slot = match slot.filter(|slot| self.keys.state(*slot).is_some()) {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyState::default())?,
        };
        if let Some(state) = self.keys.state_mut(slot) {
            state.spans.push_unchecked(span);
        }
        Ok(slot)
    }

    /// Checks a restored tracker as untrusted input: every invariant that
    /// inserts keep, in the order keys were first given. On success the
    /// tracker works as if inserts had built it.
    pub fn finish_restore(&mut self) -> Result<()> {
        let total: usize = self
            .keys
            .iter()
            .map(|(_, _, state)| state.spans.len())
            .sum();
        if let Some(limit) = self.max_sessions.filter(|limit| total > *limit) {
            return Err(Error::TooManySpans {
                count: total,
                limit,
            });
        }
        for (_, _, state) in self.keys.in_held_order() {
            SpanList::check(state.spans.as_slice(), self.gap, self.per_key_limit.limit())?;
        }
        self.held = total;
        self.span_heap_bytes = span_heap_bytes(&self.keys);
        self.rebuild_closing();
        Ok(())
    }

    /// The last event of the latest session held.
    pub(crate) fn latest_last(&self) -> Option<u64> {
        self.keys
            .iter()
            .filter_map(|(_, _, state)| state.spans.as_slice().last())
            .map(|span| span.last)
            .max()
    }

    /// Every held session's entry, in no particular order.
    fn live_entries(&self) -> Vec<ClosingOrder> {
        let mut live = Vec::with_capacity(self.held);
        for (slot, _, state) in self.keys.iter() {
            let seen = self.keys.seen(slot).unwrap_or_default();
            live.extend(
                state
                    .spans
                    .as_slice()
                    .iter()
                    .map(|span| ClosingOrder::of(*span, seen, slot)),
            );
        }
        live
    }

    fn rebuild_closing(&mut self) {
        let live = self.live_entries();
        self.closing
            .rebuild(live.into_iter().map(|entry| (entry.last, entry)).collect());
    }

    #[must_use]
    pub fn gap(&self) -> u64 {
        self.gap
    }

    #[must_use]
    pub fn max_sessions(&self) -> Option<usize> {
        self.max_sessions
    }

    #[must_use]
    pub fn watermark(&self) -> Option<u64> {
        self.watermark.value()
    }

    /// Sessions held, across all keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.held
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Keys holding at least one session.
    #[must_use]
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Heap memory the tracker owns.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.keys.heap_bytes() + self.closing.heap_bytes() + self.span_heap_bytes
    }

    /// The spans held for the key at `slot`, oldest first.
    #[must_use]
    pub fn spans(&self, slot: KeySlot) -> &[Span] {
        self.keys
            .state(slot)
            .map_or(&[], |state| state.spans.as_slice())
    }

    /// What the owner keeps with the sessions of the key at `slot`.
    pub(crate) fn extra(&self, slot: KeySlot) -> Option<&X> {
        self.keys.state(slot).map(|state| &state.extra)
    }

    pub(crate) fn extra_mut(&mut self, slot: KeySlot) -> Option<&mut X> {
        self.keys.state_mut(slot).map(|state| &mut state.extra)
    }

    /// Every held key with what the owner keeps with it, in no particular
    /// order.
    pub(crate) fn held_extras(&self) -> impl Iterator<Item = (&K, &X)> {
        self.keys.iter().map(|(_, key, state)| (key, &state.extra))
    }

    /// Every held key once, in the order keys started being held, with its spans.
    #[must_use]
    pub fn keys(&self) -> Vec<(&K, &[Span])> {
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(_, key, state)| (key, state.spans.as_slice()))
            .collect()
    }

    /// Every held key with its slot, in the order keys started being held.
    pub(crate) fn slots_in_held_order(&self) -> Vec<(KeySlot, &K)> {
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(slot, key, _)| (slot, key))
            .collect()
    }

    /// Every held key, in no particular order.
    pub fn held_keys(&self) -> impl Iterator<Item = &K> {
        self.keys.iter().map(|(_, key, _)| key)
    }

    /// Every held session in the order they close, with its key.
    pub fn sessions(&self) -> impl Iterator<Item = (&K, Span)> {
        let mut live = self.live_entries();
        live.sort_unstable();
        live.into_iter()
            .filter_map(|entry| Some((self.keys.key(entry.slot)?, entry.span())))
    }

    /// Puts an event for the key held at `slot` (or, without a slot, for a
    /// new key made by `key` and held under `hash`) into that key's
    /// sessions. A refused insert changes nothing and does not call `key`.
    pub fn insert(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
    ) -> Result<KeyedInsertion> {
        self.watermark.admit(timestamp)?;
        let held = slot.filter(|slot| self.keys.state(*slot).is_some());
        let placement = self.placement(held, timestamp, self.watermark)?;
        let slot = match held {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyState::default())?,
        };
        let seen = self.keys.seen(slot).unwrap_or_default();
        let Some(spans) = self.keys.state_mut(slot).map(|state| &mut state.spans) else {
            debug_assert!(false, "a key just found or held has no state");
            return Err(Error::TooManyKeys { limit: 0 });
        };
        let heap_before = spans.heap_bytes();
        let insertion = spans.apply(placement, timestamp);
        let heap_after = spans.heap_bytes();
        self.span_heap_bytes = self.span_heap_bytes + heap_after - heap_before;
        if !matches!(placement, Placement::Inside(_)) {
            // The replaced spans' entries go stale where they are.
            self.held = self.held + 1 - insertion.replaced.spans().count();
            let entry = ClosingOrder::of(insertion.span, seen, slot);
            self.closing.push(entry.last, entry);
            if self.closing.is_mostly_stale(self.held) {
                self.rebuild_closing();
            }
        }
        Ok(KeyedInsertion {
            slot,
            new_key: held.is_none(),
            insertion,
        })
    }

    /// Where an event at `timestamp` would go among the sessions of the key
    /// held at `slot` (a new key without one), refused if it would open a
    /// session past a limit under `watermark` (the one the event leaves).
    /// Lateness is the caller's to check.
    pub(crate) fn placement(
        &self,
        slot: Option<KeySlot>,
        timestamp: u64,
        watermark: Watermark,
    ) -> Result<Placement> {
        debug_assert!(
            slot.is_none_or(|slot| self.keys.state(slot).is_some()),
            "given a slot that holds no key"
        );
        let placement = match slot.and_then(|slot| self.keys.state(slot)) {
            Some(state) => state.spans.place(timestamp, self.gap),
            None => Placement::Open(0),
        };
        if placement.opens() {
            let per_key = slot.map_or(0, |slot| {
                self.per_key_limit
                    .counted(self.spans(slot), self.gap, watermark)
            });
            let limit = self.per_key_limit.limit();
            if per_key >= limit {
                return Err(Error::TooManySessions { limit });
            }
            if let Some(limit) = self.max_sessions.filter(|limit| self.len() >= *limit) {
                return Err(Error::TooManySessions { limit });
            }
        }
        Ok(placement)
    }

    /// Moves the watermark forward; says whether it moved.
    pub fn advance_watermark(&mut self, timestamp: u64) -> bool {
        self.watermark.advance(timestamp)
    }

    /// Removes and returns the session that closed first, across all keys.
    pub fn take_closed(&mut self) -> Option<Handover<K>> {
        self.take_first(true)
    }

    /// Removes and returns the session that closes first, across all keys;
    /// only if it has closed when `closed_only`.
    pub fn take_first(&mut self, closed_only: bool) -> Option<Handover<K>> {
        self.take_first_with(closed_only, |_| ())
            .map(|(handover, ())| handover)
    }

    /// [`KeyedSessions::take_first`], giving `take` what the owner keeps
    /// with the key's sessions (the session handed over is the key's
    /// first) before a key whose last session this was is released.
    pub(crate) fn take_first_with<T>(
        &mut self,
        closed_only: bool,
        take: impl FnOnce(&mut X) -> T,
    ) -> Option<(Handover<K>, T)> {
        let (watermark, gap) = (self.watermark, self.gap);
        let closes = |last: u64| !closed_only || watermark.has_passed(last, gap);
        let keys = &self.keys;
        let (_, entry) = self.closing.peek_closed(
            closes,
            |_, entry| {
                if !is_live(keys, entry) {
                    Fate::Stale
                } else if closes(entry.last) {
                    Fate::Closed
                } else {
                    Fate::Open
                }
            },
            |ahead| keys.prefetch_slot(ahead.slot),
        )?;
        self.closing.remove_first();
        self.held -= 1;
        // In closing order as far as the queue knows it: for loading
        // ahead, nothing more.
        self.keys
            .prefetch_bucket_of(self.closing.upcoming().next().map(|entry| entry.slot));
        let (slot, span) = (entry.slot, entry.span());
        let Some(state) = self.keys.state_mut(slot) else {
            debug_assert!(false, "an indexed session's key is not held");
            return None;
        };
        let spans = &mut state.spans;
        // A key's sessions close in their own order, so this is its first.
        debug_assert_eq!(spans.first(), Some(span));
        let heap_before = spans.heap_bytes();
        spans.remove_first();
        let (heap_after, emptied) = (spans.heap_bytes(), spans.is_empty());
        let taken = take(&mut state.extra);
        self.span_heap_bytes = self.span_heap_bytes + heap_after - heap_before;
        let key = if emptied {
            self.keys.release(slot)?.0
        } else {
            self.keys.key(slot)?.clone()
        };
        let handover = Handover {
            key,
            slot,
            span,
            released: emptied,
        };
        Some((handover, taken))
    }
}

impl<K: Clone> KeyedSessions<K> {
    /// A tracker restored from its parts: each key with its hash and spans,
    /// keys in the order they were first held; checked as
    /// [`KeyedSessions::finish_restore`] checks. Keys must be distinct.
    pub fn from_parts(
        gap: u64,
        max_sessions: Option<u64>,
        watermark: Option<u64>,
        keys: Vec<(K, u64, Vec<Span>)>,
    ) -> Result<Self> {
        let mut tracker = KeyedSessions::restoring(gap, max_sessions, watermark)?;
        for (key, hash, spans) in keys {
            let mut slot = None;
            for span in spans {
                let key = key.clone();
                slot = Some(tracker.restore(slot, hash, || key, span)?);
            }
        }
        tracker.finish_restore()?;
        Ok(tracker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Replaced;

    fn span(first: u64, last: u64) -> Span {
        Span { first, last }
    }

    /// A deliberately weak hash, so that keys collide and equality decides.
    fn hash(key: &str) -> u64 {
        key.len() as u64
    }

    /// A tracker keyed by &str, found through the tracker's own key lookup.
    struct Harness {
        tracker: KeyedSessions<&'static str>,
    }

    impl Harness {
        fn new(gap: u64, max_sessions: Option<u64>) -> Harness {
            Harness {
                tracker: KeyedSessions::new(gap, max_sessions).unwrap(),
            }
        }

        fn slot(&self, key: &str) -> Option<KeySlot> {
            self.tracker.find_key(hash(key), |held| *held == key)
        }

        fn insert(&mut self, key: &'static str, timestamp: u64) -> Result<KeyedInsertion> {
            let slot = self.slot(key);
            self.tracker.insert(slot, hash(key), || key, timestamp)
        }

        fn take(&mut self) -> Option<(&'static str, Span)> {
            let handover = self.tracker.take_closed()?;
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
        assert_eq!(keyed.slot("a"), None);
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
    fn an_entry_left_by_a_released_key_never_names_the_key_after_it() {
        let mut keyed = Harness::new(5, None);
        // Grown to the left, "a" leaves its entry for [10, 12] in the
        // queue, behind the one for [8, 12].
        for (key, timestamp) in [("a", 10), ("a", 12), ("a", 8), ("c", 10), ("c", 12)] {
            keyed.insert(key, timestamp).unwrap();
        }
        let first = keyed.tracker.take_first(false).unwrap();
        assert_eq!(
            (first.key, first.span, first.released),
            ("a", span(8, 12), true)
        );
        // "b" takes the slot "a" left, with the span of a's stale entry:
        // it was held after "c", so it ties after "c".
        keyed.insert("b", 10).unwrap();
        keyed.insert("b", 12).unwrap();
        let order: Vec<_> = std::iter::from_fn(|| keyed.tracker.take_first(false))
            .map(|handover| (handover.key, handover.span))
            .collect();
        assert_eq!(order, [("c", span(10, 12)), ("b", span(10, 12))]);
        assert!(keyed.tracker.is_empty());
    }

    #[test]
    fn a_growing_session_keeps_the_queue_as_small_as_what_is_held() {
        let mut keyed = Harness::new(1_000_000, None);
        keyed.insert("b", 0).unwrap();
        keyed.insert("a", 1).unwrap();
        let bytes = keyed.tracker.heap_bytes();
        for timestamp in 1..100_000 {
            keyed.insert("a", timestamp).unwrap();
            keyed.insert("b", timestamp).unwrap();
        }
        assert_eq!(keyed.tracker.len(), 2);
        let grown = keyed.tracker.heap_bytes() - bytes;
        assert!(grown < 16 * 1024, "the queue grew by {grown} bytes");
        keyed.tracker.advance_watermark(u64::MAX);
        assert_eq!(keyed.take(), Some(("b", span(0, 99_999))));
        assert_eq!(keyed.take(), Some(("a", span(1, 99_999))));
        assert_eq!(keyed.take(), None);
    }

    #[test]
    fn a_copy_counts_the_heap_its_own_span_lists_own() {
        let mut keyed = Harness::new(1, None);
        let empty = keyed.tracker.heap_bytes();
        for round in 0..20 {
            for n in 0..20 {
                keyed.insert("a", round * 1000 + n * 10).unwrap();
            }
            keyed.tracker = keyed.tracker.clone();
            keyed.tracker.advance_watermark(round * 1000 + 999);
            while keyed.take().is_some() {}
        }
        assert!(keyed.tracker.heap_bytes() <= empty + 1024);
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
    fn a_raised_limit_lets_a_key_hold_more_sessions() {
        let per_key = MAX_SESSIONS + 8;
        let mut keyed = Harness::new(1, None);
        keyed.tracker = keyed.tracker.with_per_key_limit(per_key);
        for n in 0..per_key as u64 {
            keyed.insert("a", n * 10).unwrap();
        }
        assert_eq!(keyed.tracker.len(), per_key);
        assert_eq!(
            keyed.insert("a", 10_000),
            Err(Error::TooManySessions { limit: per_key })
        );
        keyed.insert("b", 0).unwrap();
        // The raised limit counts open sessions: one the watermark has
        // closed, not yet handed over, leaves room.
        let mut closing = keyed.tracker.clone();
        closing.advance_watermark(1);
        let slot = closing.find_key(hash("a"), |held| *held == "a");
        assert!(closing.insert(slot, hash("a"), || "a", 10_000).is_ok());
        assert_eq!(closing.spans(slot.unwrap()).len(), per_key + 1);
        // A checkpoint of such a key restores only under the raised limit.
        let spans: Vec<Span> = keyed.tracker.spans(keyed.slot("a").unwrap()).to_vec();
        let restore = |raised: bool| {
            let mut tracker: KeyedSessions<&str> = KeyedSessions::restoring(1, None, None).unwrap();
            if raised {
                tracker = tracker.with_per_key_limit(per_key);
            }
            let mut slot = None;
            for span in &spans {
                slot = Some(tracker.restore(slot, hash("a"), || "a", *span).unwrap());
            }
            tracker.finish_restore().map(|()| tracker.len())
        };
        assert_eq!(restore(true), Ok(spans.len()));
        assert_eq!(
            restore(false),
            Err(Error::TooManySpans {
                count: spans.len(),
                limit: MAX_SESSIONS
            })
        );
        keyed.tracker.advance_watermark(u64::MAX);
        let handed: Vec<Span> = std::iter::from_fn(|| keyed.take())
            .filter(|(key, _)| *key == "a")
            .map(|(_, span)| span)
            .collect();
        assert_eq!(handed, spans);
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
        let parts: Vec<(&str, u64, Vec<Span>)> = keyed
            .tracker
            .keys()
            .into_iter()
            .map(|(key, spans)| (*key, hash(key), spans.to_vec()))
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
        let bad = KeyedSessions::from_parts(
            5,
            None,
            None,
            vec![("a", 1, vec![span(1, 10), span(12, 20)])],
        );
        assert!(matches!(bad, Err(Error::SpansTooClose { .. })));
        let too_many = KeyedSessions::from_parts(
            5,
            Some(1),
            None,
            vec![("a", 1, vec![span(1, 1)]), ("b", 1, vec![span(1, 1)])],
        );
        assert_eq!(
            too_many.unwrap_err(),
            Error::TooManySpans { count: 2, limit: 1 }
        );
    }
}
