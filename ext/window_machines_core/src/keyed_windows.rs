//! Tumbling and hopping windows per key, aggregated by panes, under one
//! event clock.
//!
//! Windows are `[offset + k * step, + size)`; only those starting at or
//! after 0 exist, as in Kafka Streams and Quix. A window closes once its end
//! is at or below the watermark, and an event enters each of its windows
//! that has not: it is late only where all of them have.
//!
//! Time is cut into panes of `gcd(size, step)`, each inside the same
//! windows; an event updates the accumulators of one pane, and a window's
//! aggregate is merged from its panes when it is handed over. So that an
//! event never reaches a window that had closed when it came, a key holds
//! a pane as parts, each with the first window it goes into (`from`): an
//! event joins the part of its pane whose `from` is its first open window.
//! Handing over window `s` merges the parts whose `from` is `s` (none has a
//! smaller one) and moves them on to the next window, dropping those whose
//! pane it was the last window of. A tumbling window is one pane of one
//! part. Each key has one entry in the closing queue, for its next window,
//! pushed when that changes.

use std::collections::btree_map::{self, BTreeMap};

use crate::front_vec::{FrontVec, SpareBuffers};

use crate::aggregate::{Accumulator, Accumulators, Aggregation, Input, NoOps, Ops, Refusal};
use crate::aggregating::{Aggregating, Checkpoint, Handover, Open, Pending, Planned, Taken};
use crate::closing_queue::{ClosingQueue, Fate};
use crate::error::{Error, Result};
use crate::event_clock::{ClockMode, EventClock};
use crate::heap::front_accs_heap_bytes;
use crate::key_slots::{KeyLookup, KeySlot, KeySlots, Prefetch};

/// The most windows one event may fall in. An event costs the same however
/// many there are, but handing a window over merges up to this many panes.
pub const MAX_HOPPING_WINDOWS: u64 = 4096;

/// Where windows fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    size: u64,
    step: u64,
    offset: u64,
    pane: u64,
}

impl Shape {
    /// Windows of `size` every `step`, shifted by `offset`.
    pub fn new(size: u64, step: u64, offset: u64) -> Result<Shape> {
        if size == 0 {
            return Err(Error::ZeroLength { name: "size" });
        }
        if step == 0 {
            return Err(Error::ZeroLength { name: "advance" });
        }
        if step > size {
            return Err(Error::AdvancePastSize {
                size,
                advance: step,
            });
        }
        if offset >= step {
            return Err(Error::OffsetPastStep { offset, step });
        }
        if size.div_ceil(step) > MAX_HOPPING_WINDOWS {
            return Err(Error::TooManyHoppingWindows {
                size,
                advance: step,
                limit: MAX_HOPPING_WINDOWS,
            });
        }
        Ok(Shape {
            size,
            step,
            offset,
            pane: gcd(size, step),
        })
    }

    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    #[must_use]
    pub fn step(&self) -> u64 {
        self.step
    }

    #[must_use]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The start of the latest window holding `timestamp`, if any window
    /// does; its end must fit.
    fn last_start(&self, timestamp: u64) -> Result<Option<u64>> {
        let Some(since) = timestamp.checked_sub(self.offset) else {
            return Ok(None);
        };
        let start = timestamp - since % self.step;
        start.checked_add(self.size).ok_or(Error::EndOverflow {
            start,
            length: self.size,
        })?;
        Ok(Some(start))
    }

    fn end(&self, start: u64) -> u64 {
        // Checked when the window was planned.
        start.saturating_add(self.size)
    }

    /// The start of the pane holding `timestamp`, which is at or after
    /// `offset`.
    fn pane_of(&self, timestamp: u64) -> u64 {
        timestamp - (timestamp - self.offset) % self.pane
    }

    /// Whether `start` begins a pane.
    fn is_pane(&self, start: u64) -> bool {
        start >= self.offset && (start - self.offset).is_multiple_of(self.pane)
    }

    /// Whether `start` begins a window.
    fn is_window(&self, start: u64) -> bool {
        start >= self.offset && (start - self.offset).is_multiple_of(self.step)
    }

    /// The first window holding the pane at `pane`.
    fn first_window(&self, pane: u64) -> u64 {
        if self.size == self.step {
            // Tumbling: the pane is the window (and no division is needed).
            return pane;
        }
        let since = pane - self.offset;
        let skipped = if since < self.size {
            0
        } else {
            (since - self.size) / self.step + 1
        };
        self.offset + skipped * self.step
    }

    /// Whether two parts, each a pane and the first window it goes into,
    /// go into a window together.
    fn share_a_window(&self, (one, one_from): (u64, u64), (other, other_from): (u64, u64)) -> bool {
        let (earlier, later) = if one < other {
            (one, other)
        } else {
            (other, one)
        };
        let lowest = one_from.max(other_from).max(self.first_window(later));
        lowest <= self.last_window(earlier)
    }

    /// The last window holding the pane at `pane`.
    fn last_window(&self, pane: u64) -> u64 {
        if self.size == self.step {
            return pane;
        }
        pane - (pane - self.offset) % self.step
    }

    /// How many windows hold `timestamp` and are still open under
    /// `watermark`: consecutive ones, the latest starting at `last`.
    fn open_count(&self, timestamp: u64, last: u64, watermark: Option<u64>) -> usize {
        // The earliest start that still holds the event and is still open.
        let holds_from = timestamp.saturating_add(1).saturating_sub(self.size);
        let open_from = watermark.map_or(0, |watermark| {
            watermark.saturating_add(1).saturating_sub(self.size)
        });
        let lowest = holds_from.max(open_from).max(self.offset);
        if lowest > last {
            return 0;
        }
        let windows = (last - lowest) / self.step + 1;
        usize::try_from(windows).unwrap_or(usize::MAX)
    }
}

/// A part's accumulators: one kept inline where a hand-over's keep two,
/// since open windows (a part each) are most of this tracker's memory, and
/// in no more room than that one takes.
type PartAccs<V> = FrontVec<Accumulator<V>>;

/// Part of a pane: the events that joined it while `from` was their first
/// open window.
#[derive(Debug, Clone)]
struct Part<V> {
    start: u64,
    from: u64,
    accs: PartAccs<V>,
}

/// Parts a key keeps in a sorted `Vec`; more go to an ordered map.
const FEW_PARTS: usize = 32;

/// How many windows ahead of a hand-over the heap accumulators of one are
/// loaded: nearer than the closing queue loads keys' entries (16), which
/// say where the accumulators are.
const ACCS_AHEAD: usize = 8;

/// A key's parts, by pane, and within a pane in the order they were made
/// (see `newest_in_pane`). Two parts of a pane may come to share a `from`
/// when a hand-over moves the earlier one on; they stay apart. Most keys
/// hold one at a time, kept inline, and a few in a sorted `Vec`; beyond
/// [`FEW_PARTS`] they go to an ordered map, so that an event opening a
/// pane among very many others (out of order, under a long grace) costs a
/// logarithm of them, not a shift of those after it.
#[derive(Debug, Clone, Default)]
enum KeyParts<V> {
    #[default]
    Empty,
    One(Part<V>),
    Few(Vec<Part<V>>),
    Lots(LotsOfParts<V>),
}

/// Parts by pane start, then by when they were made.
#[derive(Debug, Clone)]
struct LotsOfParts<V> {
    parts: BTreeMap<(u64, u64), Part<V>>,
    /// Parts made so far: the next one's place among its pane's.
    made: u64,
}

/// A key's parts in order, from wherever it keeps them: one match per
/// step. A chain of a slice's iterator and a map's (one of them always
/// empty) cost the command about 100 instructions an event more.
#[derive(Clone)]
enum Parts<'a, V> {
    Slice(std::slice::Iter<'a, Part<V>>),
    Map(btree_map::Values<'a, (u64, u64), Part<V>>),
}

impl<'a, V> Iterator for Parts<'a, V> {
    type Item = &'a Part<V>;

    fn next(&mut self) -> Option<&'a Part<V>> {
        match self {
            Parts::Slice(parts) => parts.next(),
            Parts::Map(parts) => parts.next(),
        }
    }
}

impl<'a, V> DoubleEndedIterator for Parts<'a, V> {
    fn next_back(&mut self) -> Option<&'a Part<V>> {
        match self {
            Parts::Slice(parts) => parts.next_back(),
            Parts::Map(parts) => parts.next_back(),
        }
    }
}

enum PartsMut<'a, V> {
    Slice(std::slice::IterMut<'a, Part<V>>),
    Map(btree_map::ValuesMut<'a, (u64, u64), Part<V>>),
}

impl<'a, V> Iterator for PartsMut<'a, V> {
    type Item = &'a mut Part<V>;

    fn next(&mut self) -> Option<&'a mut Part<V>> {
        match self {
            PartsMut::Slice(parts) => parts.next(),
            PartsMut::Map(parts) => parts.next(),
        }
    }
}

impl<V> KeyParts<V> {
    /// The parts held in a slice, and those held in a map.
    fn split(&self) -> (&[Part<V>], Option<&LotsOfParts<V>>) {
        match self {
            KeyParts::Empty => (&[], None),
            KeyParts::One(part) => (std::slice::from_ref(part), None),
            KeyParts::Few(parts) => (parts, None),
            KeyParts::Lots(lots) => (&[], Some(lots)),
        }
    }

    /// The parts, oldest pane first.
    fn parts(&self) -> Parts<'_, V> {
        match self.split() {
            (_, Some(lots)) => Parts::Map(lots.parts.values()),
            (slice, None) => Parts::Slice(slice.iter()),
        }
    }

    fn parts_mut(&mut self) -> PartsMut<'_, V> {
        match self {
            KeyParts::Empty => PartsMut::Slice([].iter_mut()),
            KeyParts::One(part) => PartsMut::Slice(std::slice::from_mut(part).iter_mut()),
            KeyParts::Few(parts) => PartsMut::Slice(parts.iter_mut()),
            KeyParts::Lots(lots) => PartsMut::Map(lots.parts.values_mut()),
        }
    }

    fn first(&self) -> Option<&Part<V>> {
        self.parts().next()
    }

    /// Starts loading the `accs` accumulators of the first part, the one a
    /// hand-over reads, where they are on the heap (two or more).
    fn prefetch_first_accs(&self, accs: usize) {
        if let Some(part) = self.first() {
            part.accs.prefetch_heap(accs);
        }
    }

    fn back(&self) -> Option<&Part<V>> {
        self.parts().next_back()
    }

    /// The parts of panes from `from` up to `to` (both included).
    fn in_panes(&self, from: u64, to: u64) -> impl Iterator<Item = &Part<V>> {
        let (slice, lots) = self.split();
        let low = slice.partition_point(|part| part.start < from);
        let high = slice.partition_point(|part| part.start <= to).max(low);
        // A range whose ends cross would panic.
        let lots = lots
            .filter(|_| from <= to)
            .map(|lots| lots.parts.range((from, 0)..=(to, u64::MAX)));
        slice[low..high]
            .iter()
            .chain(lots.into_iter().flatten().map(|(_, part)| part))
    }

    /// The newest part of the pane at `start`: where an event goes if its
    /// `from` is that part's (see `KeyedWindows::update`).
    fn newest_in_pane(&self, start: u64) -> Option<&Part<V>> {
        let (slice, lots) = self.split();
        match lots {
            Some(lots) => lots
                .parts
                .range((start, 0)..=(start, u64::MAX))
                .next_back()
                .map(|(_, part)| part),
            None => newest_in_pane_at(slice, start).and_then(|at| slice.get(at)),
        }
    }

    fn newest_in_pane_mut(&mut self, start: u64) -> Option<&mut Part<V>> {
        let slice: &mut [Part<V>] = match self {
            KeyParts::Empty => return None,
            KeyParts::One(part) => std::slice::from_mut(part),
            KeyParts::Few(parts) => parts,
            KeyParts::Lots(lots) => {
                return lots
                    .parts
                    .range_mut((start, 0)..=(start, u64::MAX))
                    .next_back()
                    .map(|(_, part)| part)
            }
        };
        newest_in_pane_at(slice, start).and_then(|at| slice.get_mut(at))
    }

    /// Adds `part` after every part of its pane made before it.
    fn insert(&mut self, part: Part<V>) {
        *self = match std::mem::take(self) {
            KeyParts::Empty => KeyParts::One(part),
            KeyParts::One(held) => KeyParts::Few(if part.start < held.start {
                vec![part, held]
            } else {
                vec![held, part]
            }),
            KeyParts::Few(mut parts) if parts.len() < FEW_PARTS => {
                let at = parts.partition_point(|held| held.start <= part.start);
                parts.insert(at, part);
                KeyParts::Few(parts)
            }
            KeyParts::Few(parts) => {
                let mut lots = LotsOfParts {
                    parts: BTreeMap::new(),
                    made: 0,
                };
                for held in parts.into_iter().chain([part]) {
                    lots.insert(held);
                }
                KeyParts::Lots(lots)
            }
            KeyParts::Lots(mut lots) => {
                lots.insert(part);
                KeyParts::Lots(lots)
            }
        };
    }

    /// The next window the key hands over: the smallest `from`. A part's
    /// `from` is never below its pane's first window, which grows with the
    /// pane, so the search stops at the first pane that cannot beat it.
    fn next_window(&self, shape: &Shape) -> Option<u64> {
        let mut next: Option<u64> = None;
        for part in self.parts() {
            if next.is_some_and(|next| shape.first_window(part.start) > next) {
                break;
            }
            next = Some(next.map_or(part.from, |next| next.min(part.from)));
        }
        next
    }

    /// The parts that go into window `start`, the next one handed over.
    fn going_into(&self, shape: Shape, start: u64) -> impl Iterator<Item = &Part<V>> {
        self.parts()
            .take_while(move |part| shape.first_window(part.start) <= start)
            .filter(move |part| part.from == start)
    }

    fn pop_front(&mut self) -> Option<Part<V>> {
        let (first, rest) = match std::mem::take(self) {
            KeyParts::Empty => (None, KeyParts::Empty),
            KeyParts::One(part) => (Some(part), KeyParts::Empty),
            KeyParts::Few(mut parts) => {
                let first = (!parts.is_empty()).then(|| parts.remove(0));
                let rest = match parts.len() {
                    0 => KeyParts::Empty,
                    1 => parts.pop().map_or(KeyParts::Empty, KeyParts::One),
                    _ => KeyParts::Few(parts),
                };
                (first, rest)
            }
            KeyParts::Lots(mut lots) => {
                let first = lots.parts.pop_first().map(|(_, part)| part);
                let rest = match lots.parts.len() {
                    0 => KeyParts::Empty,
                    1 => lots
                        .parts
                        .pop_first()
                        .map_or(KeyParts::Empty, |(_, part)| KeyParts::One(part)),
                    _ => KeyParts::Lots(lots),
                };
                (first, rest)
            }
        };
        *self = rest;
        first
    }

    fn heap_bytes(&self) -> usize {
        match self {
            KeyParts::Few(parts) => parts.capacity() * std::mem::size_of::<Part<V>>(),
            // An estimate: a B-tree's leaves are at least half full.
            KeyParts::Lots(lots) => {
                lots.parts.len() * std::mem::size_of::<((u64, u64), Part<V>)>() * 2
            }
            _ => 0,
        }
    }

    /// How many windows the key will hand over: those from some part's
    /// `from` to its pane's last window.
    fn window_count(&self, shape: &Shape) -> usize {
        let mut spans: Vec<(u64, u64)> = self
            .parts()
            .map(|part| (part.from, shape.last_window(part.start)))
            .collect();
        spans.sort_unstable();
        let mut count = 0;
        let mut covered: Option<u64> = None;
        for (from, last) in spans {
            let from = covered.map_or(from, |covered| from.max(covered + shape.step));
            if from <= last {
                count += (last - from) / shape.step + 1;
                covered = Some(last);
            }
        }
        usize::try_from(count).unwrap_or(usize::MAX)
    }
}

/// Where in `parts` (sorted by pane) the newest part of the pane at
/// `start` is. Events mostly land in the newest pane, checked first.
fn newest_in_pane_at<V>(parts: &[Part<V>], start: u64) -> Option<usize> {
    let end = match parts.last() {
        Some(last) if last.start <= start => parts.len(),
        _ => parts.partition_point(|part| part.start <= start),
    };
    end.checked_sub(1)
        .filter(|&at| parts.get(at).is_some_and(|part| part.start == start))
}

impl<V> LotsOfParts<V> {
    /// Adds `part` after every part of its pane made before it.
    fn insert(&mut self, part: Part<V>) {
        self.parts.insert((part.start, self.made), part);
        self.made += 1;
    }
}

/// Where an event goes: the pane holding it, and its first open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowPlan {
    pane: u64,
    from: u64,
}

/// Fold step for [`Shape`]'s pane width.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A key's next window in the closing queue, with when the key started
/// being held: windows that close together go in that order, read off the
/// entry rather than looked up in the key's. Packed to 12 bytes: a queue
/// holds one for every key with an open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
struct Due {
    seen: u64,
    slot: KeySlot,
}

/// Windows per key, aggregated by panes.
#[derive(Debug, Clone)]
pub struct KeyedWindows<K, V> {
    shape: Shape,
    clock: EventClock,
    aggregation: Aggregation,
    keys: KeySlots<K, KeyParts<V>>,
    closing: ClosingQueue<Due>,
    parts: usize,
    late_count: u64,
    /// Heap buffers of accumulators (two or more a part) that windows
    /// handed over left, for parts opened next: a window otherwise
    /// allocated and freed one. No more than the parts held, so that they
    /// at most double what accumulators take, and none once nothing is.
    spare_accs: SpareBuffers<Accumulator<V>>,
}

impl<K, V> KeyLookup for KeyedWindows<K, V> {
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

impl<K: Clone, V: Clone> KeyedWindows<K, V> {
    #[must_use]
    pub fn new(shape: Shape, clock: EventClock, aggregation: Aggregation) -> Self {
        KeyedWindows {
            shape,
            clock,
            aggregation,
            keys: KeySlots::default(),
            closing: ClosingQueue::default(),
            parts: 0,
            late_count: 0,
            spare_accs: SpareBuffers::default(),
        }
    }

    #[must_use]
    pub fn shape(&self) -> Shape {
        self.shape
    }

    fn held_accs(&self, slot: Option<KeySlot>, plan: WindowPlan) -> Option<&[Accumulator<V>]> {
        let held = self.keys.state(slot?)?;
        held.newest_in_pane(plan.pane)
            .filter(|part| part.from == plan.from)
            .map(|part| part.accs.as_slice())
    }

    /// The accumulators of the key's parts that share a window with
    /// the planned one, when `inputs` may have to be compared with their
    /// extremes: a Min or Max input the host cannot compare is refused
    /// when it comes, as it would be without panes.
    fn sharing_windows(
        &self,
        slot: Option<KeySlot>,
        plan: WindowPlan,
        inputs: &[Input<V>],
    ) -> impl Iterator<Item = &[Accumulator<V>]> {
        let shape = self.shape;
        let held = slot
            .filter(|_| self.aggregation.compares(inputs))
            .and_then(|slot| self.keys.state(slot));
        // Only panes inside the windows holding the planned one can share
        // one with it.
        let from = shape.first_window(plan.pane);
        let to = shape
            .end(shape.last_window(plan.pane))
            .saturating_sub(shape.pane);
        held.into_iter()
            .flat_map(move |held| held.in_panes(from, to))
            .filter(move |part| {
                // The event's own part too: a hand-over may have brought
                // another part of its pane to the same first window.
                shape.share_a_window((part.start, part.from), (plan.pane, plan.from))
            })
            .map(|part| part.accs.as_slice())
    }

    /// Puts `accs_for(held)` into the planned part, holding the key and
    /// opening the part as needed, and records the event's time.
    fn update(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: WindowPlan,
        accs_for: impl FnOnce(Option<PartAccs<V>>) -> PartAccs<V>,
    ) -> Result<KeySlot> {
        let held = slot.filter(|slot| self.keys.state(*slot).is_some());
        let slot = match held {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyParts::default())?,
        };
        let shape = self.shape;
        let Some(parts) = self.keys.state_mut(slot) else {
            return Err(Error::TooManyKeys { limit: 0 });
        };
        let next_before = parts.next_window(&shape);
        // Into the pane's newest part if that has the same `from`, or else
        // a new part after it. A pane's parts thus hold its events in
        // arrival order, the order they merge in, so equal timestamps keep
        // arrival order.
        match parts
            .newest_in_pane_mut(plan.pane)
            .filter(|part| part.from == plan.from)
        {
            Some(part) => {
                let accs = std::mem::take(&mut part.accs);
                part.accs = accs_for(Some(accs));
            }
            None => {
                let accs = accs_for(None);
                parts.insert(Part {
                    start: plan.pane,
                    from: plan.from,
                    accs,
                });
                self.parts += 1;
            }
        }
        if next_before.is_none_or(|next| plan.from < next) {
            self.push_due(shape.end(plan.from), slot);
        }
        self.clock.observe(timestamp);
        Ok(slot)
    }

    /// Starts loading the heap accumulators (two or more) of the window
    /// [`ACCS_AHEAD`] into `later`, the keys of the windows closing after
    /// the next: its key's entry, loaded further ahead already, says where
    /// they are. Read first at its hand-over, they were half of what
    /// handing over a window that counts and sums cost at a million keys.
    fn prefetch_accs_ahead(&self, mut later: impl Iterator<Item = KeySlot>) {
        let accs = self.aggregation.parts().len();
        if accs < 2 {
            return;
        }
        if let Some(parts) = later
            .nth(ACCS_AHEAD - 1)
            .and_then(|slot| self.keys.state(slot))
        {
            parts.prefetch_first_accs(accs);
        }
    }

    /// Files the key at `slot` as next closing at `at`.
    fn push_due(&mut self, at: u64, slot: KeySlot) {
        let seen = self.keys.seen(slot).unwrap_or_default();
        self.closing.push(at, Due { seen, slot });
    }

    fn live_entries(&self) -> Vec<(u64, Due)> {
        self.keys
            .iter()
            .filter_map(|(slot, _, held)| {
                let start = held.next_window(&self.shape)?;
                let seen = self.keys.seen(slot)?;
                Some((self.shape.end(start), Due { seen, slot }))
            })
            .collect()
    }

    /// Hands over the key at `slot`'s window that ends `at`, with `merged`
    /// as its aggregate, or its one part's if `None`; the queue entry has
    /// been removed.
    fn hand_over(
        &mut self,
        at: u64,
        slot: KeySlot,
        merged: Option<Accumulators<V>>,
    ) -> Option<Handover<K, V>> {
        let shape = self.shape;
        let start = at - shape.size;
        let parts = self.keys.state_mut(slot)?;
        let mut accs = merged;
        // Parts whose pane this was the last window of are at the front.
        while parts
            .first()
            .is_some_and(|part| part.from == start && shape.last_window(part.start) == start)
        {
            let part = parts.pop_front()?;
            self.parts -= 1;
            if accs.is_none() {
                let mut moved = Accumulators::new();
                if let Some(buffer) = part.accs.drain_into(&mut moved) {
                    self.spare_accs.keep(buffer, self.parts);
                }
                accs = Some(moved);
            }
        }
        for part in parts.parts_mut() {
            if shape.first_window(part.start) > start {
                break;
            }
            if part.from == start {
                part.from = start + shape.step;
                if accs.is_none() {
                    accs = Some(Accumulators::from(part.accs.as_slice()));
                }
            }
        }
        let next = parts.next_window(&shape);
        let key = match next {
            Some(next) => {
                self.push_due(shape.end(next), slot);
                self.keys.key(slot)?.clone()
            }
            None => self.keys.release(slot)?.0,
        };
        self.spare_accs.trim(self.parts);
        if self.closing.is_mostly_stale(self.keys.len()) {
            let live = self.live_entries();
            self.closing.rebuild(live);
        }
        Some(Handover {
            key,
            start,
            end: at,
            accs: accs.unwrap_or_default(),
        })
    }
}

impl<K: Clone, V: Clone> Aggregating<K, V> for KeyedWindows<K, V> {
    type Plan = WindowPlan;

    fn aggregation(&self) -> &Aggregation {
        &self.aggregation
    }

    fn clock(&self) -> &EventClock {
        &self.clock
    }

    fn late_count(&self) -> u64 {
        self.late_count
    }

    fn len(&self) -> usize {
        if self.shape.step == self.shape.size {
            return self.parts;
        }
        self.keys
            .iter()
            .map(|(_, _, held)| held.window_count(&self.shape))
            .sum()
    }

    fn key_count(&self) -> usize {
        self.keys.len()
    }

    fn heap_bytes(&self) -> usize {
        let parts: usize = self
            .keys
            .iter()
            .map(|(_, _, held)| {
                held.heap_bytes()
                    + held
                        .parts()
                        .map(|part| front_accs_heap_bytes(&part.accs))
                        .sum::<usize>()
            })
            .sum();
        self.keys.heap_bytes() + self.closing.heap_bytes() + parts + self.spare_accs.heap_bytes()
    }

    fn plan(&self, _: Option<KeySlot>, timestamp: u64) -> Result<Planned<WindowPlan>> {
        let Some(last) = self.shape.last_start(timestamp)? else {
            return Ok(Planned::Nowhere);
        };
        let watermark = self.clock.watermark_after(timestamp);
        let count = self.shape.open_count(timestamp, last, watermark);
        Ok(match (count, watermark) {
            (0, Some(watermark)) => Planned::Late { watermark },
            _ => Planned::Go(WindowPlan {
                pane: self.shape.pane_of(timestamp),
                from: last - self.shape.step * (count as u64).saturating_sub(1),
            }),
        })
    }

    fn count_late(&mut self) {
        self.late_count = self.late_count.saturating_add(1);
    }

    fn needs_ops(&self, slot: Option<KeySlot>, plan: WindowPlan, inputs: &[Input<V>]) -> bool {
        let own = match self.held_accs(slot, plan) {
            Some(accs) => self.aggregation.add_needs_ops(accs, inputs),
            None => self.aggregation.fresh_needs_ops(inputs),
        };
        own || self
            .sharing_windows(slot, plan, inputs)
            .any(|other| self.aggregation.compare_needs_ops(other, inputs))
    }

    /// The planned part's accumulators, then those it must be comparable
    /// with (see `sharing_windows`).
    fn planned_accs(
        &self,
        slot: Option<KeySlot>,
        plan: WindowPlan,
        inputs: &[Input<V>],
    ) -> Vec<Option<Accumulators<V>>> {
        std::iter::once(self.held_accs(slot, plan).map(Accumulators::from))
            .chain(
                self.sharing_windows(slot, plan, inputs)
                    .map(|other| Some(Accumulators::from(other))),
            )
            .collect()
    }

    fn compute<O: Ops<V>>(
        aggregation: &Aggregation,
        _: WindowPlan,
        planned: Vec<Option<Accumulators<V>>>,
        timestamp: u64,
        inputs: &[Input<V>],
        ops: &mut O,
    ) -> std::result::Result<Vec<Accumulators<V>>, Refusal<O::Error>> {
        aggregation.check(inputs)?;
        let mut planned = planned.into_iter();
        let held = planned.next().flatten();
        for other in planned.flatten() {
            aggregation
                .compare_with(&other, inputs, ops)
                .map_err(Refusal::Host)?;
        }
        let mut accs = match held {
            Some(accs) => accs,
            None => aggregation.initial(ops)?,
        };
        aggregation.add(&mut accs, timestamp, inputs, ops)?;
        Ok(vec![accs])
    }

    fn apply(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: WindowPlan,
        inputs: &[Input<V>],
    ) -> std::result::Result<KeySlot, Refusal<Error>> {
        self.aggregation.check(inputs)?;
        // Lent out for the update, which needs the rest of the tracker.
        let aggregation = std::mem::take(&mut self.aggregation);
        let mut spare_accs = std::mem::take(&mut self.spare_accs);
        let updated = self.update(slot, hash, key, timestamp, plan, |accs| {
            // No custom part (see needs_ops), so fresh accumulators need no host.
            let mut accs = accs.unwrap_or_else(|| {
                FrontVec::from_iter_in(aggregation.initial_built_in(), || spare_accs.take())
            });
            // Checked above, and known not to need the host.
            let added = aggregation.add(&mut accs, timestamp, inputs, &mut NoOps);
            debug_assert!(added.is_ok());
            accs
        });
        self.aggregation = aggregation;
        self.spare_accs = spare_accs;
        updated.map_err(Refusal::Host)
    }

    fn apply_computed(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: WindowPlan,
        computed: Vec<Accumulators<V>>,
    ) -> Result<KeySlot> {
        let computed = computed.into_iter().next().unwrap_or_default();
        self.update(slot, hash, key, timestamp, plan, |_| {
            computed.into_iter().collect()
        })
    }

    fn advance(&mut self, time: u64) -> Option<bool> {
        self.clock.advance(time)
    }

    fn finish(&mut self) {
        self.clock.finish();
    }

    fn take(&mut self, closed_only: bool) -> Option<Taken<K, V>> {
        let watermark = if closed_only {
            self.clock.watermark()
        } else {
            Some(u64::MAX)
        };
        let shape = self.shape;
        let (at, Due { slot, .. }) = {
            let keys = &self.keys;
            self.closing.peek_closed(
                |at| watermark.is_some_and(|watermark| at <= watermark),
                |at, due| {
                    // An entry left behind by a key whose slot another key
                    // now holds names another holding of the slot; one the
                    // key left behind names a window it no longer has next.
                    let live = keys.seen(due.slot) == Some(due.seen)
                        && keys
                            .state(due.slot)
                            .and_then(|held| held.next_window(&shape))
                            .is_some_and(|start| shape.end(start) == at);
                    if live {
                        Fate::Closed
                    } else {
                        Fate::Stale
                    }
                },
                |ahead| keys.prefetch_slot(ahead.slot),
            )?
        };
        let start = at - shape.size;
        let held = self.keys.state(slot)?;
        let merged = if held.going_into(shape, start).nth(1).is_none() {
            // One part: handed over as it is, moved rather than copied
            // where this is its last window.
            None
        } else {
            let parts: Vec<Accumulators<V>> = held
                .going_into(shape, start)
                .map(|part| Accumulators::from(part.accs.as_slice()))
                .collect();
            match self.aggregation.merge_all(parts.clone(), &mut NoOps) {
                Ok(merged) => merged,
                Err(_) => return Some(Taken::NeedsHost(Pending { parts, at, slot })),
            }
        };
        self.closing.remove_first();
        let mut upcoming = self.closing.upcoming().map(|due| due.slot);
        self.keys.prefetch_bucket_of(upcoming.next());
        self.prefetch_accs_ahead(upcoming);
        self.hand_over(at, slot, merged).map(Taken::Ready)
    }

    fn take_merged(
        &mut self,
        pending: &Pending<V>,
        merged: Accumulators<V>,
    ) -> Option<Handover<K, V>> {
        // The tracker has not changed since take described `pending`, so
        // its queue entry is still the first.
        self.closing.remove_first();
        self.hand_over(pending.at, pending.slot, Some(merged))
    }

    fn open_of(&self, slot: KeySlot) -> Open<'_, V> {
        let shape = self.shape;
        let watermark = self.clock.watermark();
        let Some(held) = self.keys.state(slot) else {
            return Vec::new();
        };
        let mut starts: Vec<u64> = held
            .parts()
            .flat_map(|part| {
                let last = shape.last_window(part.start);
                (0..=(last.saturating_sub(part.from) / shape.step))
                    .map(move |n| part.from + n * shape.step)
            })
            .filter(|start| watermark.is_none_or(|watermark| shape.end(*start) > watermark))
            .collect();
        starts.sort_unstable();
        starts.dedup();
        starts
            .into_iter()
            .map(|start| {
                // The panes inside the window, looked up rather than
                // searched for among all the key's.
                let last_pane = shape.end(start).saturating_sub(shape.pane);
                let parts = held
                    .in_panes(start, last_pane)
                    .filter(|part| part.from <= start)
                    .map(|part| part.accs.as_slice())
                    .collect();
                (start, shape.end(start), parts)
            })
            .collect()
    }

    fn each_key(&self, f: &mut dyn FnMut(&K)) {
        self.keys.iter().for_each(|(_, key, _)| f(key));
    }

    fn checkpoint(&self) -> Checkpoint<'_, K, V> {
        let shape = self.shape;
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(_, key, held)| {
                let parts = held
                    .parts()
                    .map(|part| {
                        let from =
                            Some(part.from).filter(|from| *from != shape.first_window(part.start));
                        (
                            part.start,
                            part.start + shape.pane,
                            from,
                            part.accs.as_slice(),
                        )
                    })
                    .collect();
                (key, parts)
            })
            .collect()
    }

    fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        (start, end, from): (u64, u64, Option<u64>),
        accs: Accumulators<V>,
    ) -> Result<KeySlot> {
        let shape = self.shape;
        let aligned = shape.is_pane(start) && start.checked_add(shape.pane) == Some(end);
        let from = from.unwrap_or_else(|| {
            if aligned {
                shape.first_window(start)
            } else {
                start
            }
        });
        let in_pane_windows = aligned
            && shape.is_window(from)
            && from >= shape.first_window(start)
            && from <= shape.last_window(start);
        if !in_pane_windows {
            return Err(Error::MisalignedWindow { start });
        }
        // Under stream time no event held is newer than the stream time.
        let newest = match (self.clock.mode(), self.clock.time()) {
            (ClockMode::Stream, Some(time)) => time.min(end - 1),
            _ => end - 1,
        };
        if !self.aggregation.fits(&accs, start, newest) {
            return Err(Error::BadAccumulators { start });
        }
        let held = slot.filter(|slot| self.keys.state(*slot).is_some());
        if let Some(last) = held
            .and_then(|slot| self.keys.state(slot))
            .and_then(|held| held.back())
            .filter(|last| {
                // A pane's parts follow one another in the order they were
                // made; two in a row share a `from` only once a hand-over
                // moved the earlier one on, past the pane's first window.
                let repeated =
                    (last.start, last.from) == (start, from) && from == shape.first_window(start);
                last.start > start || repeated
            })
        {
            return Err(Error::WindowsOutOfOrder {
                earlier: last.start,
                later: start,
            });
        }
        let slot = match held {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyParts::default())?,
        };
        if let Some(held) = self.keys.state_mut(slot) {
            held.insert(Part {
                start,
                from,
                accs: accs.into_iter().collect(),
            });
            self.parts += 1;
        }
        Ok(slot)
    }

    fn finish_restore(&mut self) -> Result<()> {
        let latest = self
            .keys
            .iter()
            .filter_map(|(_, _, held)| held.back().map(|part| part.start))
            .max();
        self.clock
            .check_restored(self.len(), latest, self.late_count)?;
        let live = self.live_entries();
        self.closing.rebuild(live);
        Ok(())
    }

    fn restored_comparisons(&self) -> Vec<(&Input<V>, &Input<V>)> {
        let shape = self.shape;
        let mut pairs = Vec::new();
        for (_, _, held) in self.keys.iter() {
            let mut parts = held.parts();
            while let Some(one) = parts.next() {
                // Parts come by pane: past the last window of `one`'s, none
                // shares a window with it.
                let later = parts.clone().take_while(|other| {
                    shape.first_window(other.start) <= shape.last_window(one.start)
                });
                for other in later {
                    if shape.share_a_window((one.start, one.from), (other.start, other.from)) {
                        pairs.extend(self.aggregation.host_comparisons(&one.accs, &other.accs));
                    }
                }
            }
        }
        pairs
    }

    fn restore_counts(&mut self, time: Option<u64>, late_count: u64) {
        self.clock = self.clock.at(time);
        self.late_count = late_count;
    }

    fn each_held(&self, f: &mut dyn FnMut(&K, &[Accumulator<V>])) {
        for (_, key, held) in self.keys.iter() {
            for part in held.parts() {
                f(key, &part.accs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::{Kind, Part as AggregatePart};
    use crate::event_clock::{ClockMode, Trail};

    /// One-tick tumbling windows with `accs` counts each, under a manual
    /// clock.
    fn counting(accs: usize) -> KeyedWindows<u64, u8> {
        let part = AggregatePart {
            kind: Kind::Count,
            reads_field: false,
        };
        let clock = EventClock::new(ClockMode::Manual, Trail::Windows, 0, None);
        let shape = Shape::new(1, 1, 0).unwrap();
        KeyedWindows::new(shape, clock, Aggregation::new(vec![part; accs]))
    }

    fn add(windows: &mut KeyedWindows<u64, u8>, key: u64, at: u64) {
        let slot = windows.find_key(key, |held| *held == key);
        let Ok(Planned::Go(plan)) = windows.plan(slot, at) else {
            panic!("the event at {at} has no window");
        };
        let inputs = vec![Input::Nil; windows.aggregation().parts().len()];
        assert!(windows.apply(slot, key, || key, at, plan, &inputs).is_ok());
    }

    /// Hands over every window that closed by `at`: key, start, counts.
    fn hand_over(windows: &mut KeyedWindows<u64, u8>, at: u64) -> Vec<(u64, u64, Vec<u64>)> {
        windows.advance(at);
        std::iter::from_fn(|| match windows.take(true)? {
            Taken::Ready(handover) => Some(handover),
            Taken::NeedsHost(_) => panic!("counts need no host"),
        })
        .map(|handover| {
            let counts = handover.accs.iter().map(|acc| match acc {
                Accumulator::Count(count) => *count,
                other => panic!("not a count: {other:?}"),
            });
            (handover.key, handover.start, counts.collect())
        })
        .collect()
    }

    #[test]
    fn windows_opened_after_others_closed_reuse_their_accumulators_memory() {
        let mut windows = counting(2);
        let count = 4_096;
        let keys = u64::try_from(count).unwrap();
        let open = |windows: &mut KeyedWindows<u64, u8>, at: u64| {
            for key in 0..keys {
                add(windows, key, at);
                add(windows, key, at);
            }
        };
        open(&mut windows, 0);
        let fresh = windows.heap_bytes();
        for round in 0..3 {
            open(&mut windows, round + 1);
            assert_eq!(windows.spare_accs.len(), 0, "the buffers kept were used");
            let handed = hand_over(&mut windows, round + 1);
            assert_eq!(handed.len(), count);
            assert!(handed
                .iter()
                .all(|(_, start, counts)| *start == round && counts == &[2, 2]));
            // Every buffer freed is kept while as many windows are held.
            assert_eq!(windows.spare_accs.len(), count);
        }
        // None beyond what is held: a dup starts without, and once
        // nothing is held, none.
        assert_eq!(windows.clone().spare_accs.len(), 0);
        let tail = hand_over(&mut windows, 4);
        assert_eq!(tail.len(), count);
        assert_eq!(windows.spare_accs.len(), 0);
        assert!(
            windows.heap_bytes() < fresh / 16,
            "{} of {fresh}",
            windows.heap_bytes()
        );
    }

    #[test]
    fn one_accumulator_keeps_no_buffers() {
        let mut windows = counting(1);
        for key in 0..100 {
            add(&mut windows, key, 0);
        }
        assert_eq!(hand_over(&mut windows, 1).len(), 100);
        assert_eq!(windows.spare_accs.len(), 0);
    }
}
