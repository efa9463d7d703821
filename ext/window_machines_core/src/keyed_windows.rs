//! Tumbling and hopping windows per key, each carrying its accumulators,
//! under one event clock.
//!
//! Windows are `[offset + k * step, + size)`; only those starting at or
//! after 0 exist, as in Kafka Streams and Quix. A window closes once its end
//! is at or below the watermark, and an event enters each of its windows
//! that has not: it is late only where all of them have. A window's end is
//! fixed when it opens, so each key has one entry in the closing queue, for
//! its earliest window, pushed when that window changes.

use smallvec::SmallVec;

use crate::aggregate::{Accumulators, Aggregation, Input, NoOps, Ops, Refusal};
use crate::aggregating::{Aggregating, Checkpoint, Handover, Planned};
use crate::closing_queue::{Closing, ClosingQueue};
use crate::error::{Error, Result};
use crate::event_clock::EventClock;
use crate::key_slots::{KeyLookup, KeySlot, KeySlots};

/// The most windows one event may fall in: each holds its own accumulators
/// until panes (slices shared by overlapping windows) replace them.
pub const MAX_HOPPING_WINDOWS: u64 = 4096;

/// Where windows fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    size: u64,
    step: u64,
    offset: u64,
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
        Ok(Shape { size, step, offset })
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

#[derive(Debug, Clone)]
struct Window<V> {
    start: u64,
    accs: Accumulators<V>,
}

/// A key's open windows, oldest first. Most keys hold one window at a
/// time, kept inline; windows handed over from the front are skipped by
/// `head` and dropped in bulk, so a pop never shifts the rest one by one.
#[derive(Debug, Clone)]
struct KeyWindows<V> {
    held: SmallVec<[Window<V>; 1]>,
    head: usize,
}

impl<V> Default for KeyWindows<V> {
    fn default() -> Self {
        KeyWindows {
            held: SmallVec::new(),
            head: 0,
        }
    }
}

impl<V> KeyWindows<V> {
    fn windows(&self) -> &[Window<V>] {
        self.held.get(self.head..).unwrap_or_default()
    }

    fn front(&self) -> Option<&Window<V>> {
        self.windows().first()
    }

    fn back(&self) -> Option<&Window<V>> {
        self.windows().last()
    }

    fn get_mut(&mut self, at: usize) -> Option<&mut Window<V>> {
        self.held.get_mut(self.head + at)
    }

    fn insert(&mut self, at: usize, window: Window<V>) {
        self.held.insert(self.head + at, window);
    }

    fn push_back(&mut self, window: Window<V>) {
        self.held.push(window);
    }

    fn pop_front(&mut self) -> Option<Window<V>> {
        let placeholder = Window {
            start: 0,
            accs: Accumulators::new(),
        };
        let window = std::mem::replace(self.held.get_mut(self.head)?, placeholder);
        self.head += 1;
        if self.head == self.held.len() {
            self.held.clear();
            self.head = 0;
        } else if self.head * 2 > self.held.len() {
            self.held.drain(..self.head);
            self.head = 0;
        }
        Some(window)
    }

    fn heap_bytes(&self) -> usize {
        let spilled = if self.held.spilled() {
            self.held.capacity()
        } else {
            0
        };
        spilled * std::mem::size_of::<Window<V>>()
    }

    fn position(&self, start: u64) -> std::result::Result<usize, usize> {
        let windows = self.windows();
        // Events mostly land in the newest windows.
        match windows.last() {
            Some(last) if last.start < start => Err(windows.len()),
            _ => windows.binary_search_by_key(&start, |window| window.start),
        }
    }
}

/// The windows an event goes into: `count` of them, `step` apart, the
/// latest starting at `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowPlan {
    last: u64,
    count: usize,
}

/// Windows per key with their accumulators.
#[derive(Debug, Clone)]
pub struct KeyedWindows<K, V> {
    shape: Shape,
    clock: EventClock,
    aggregation: Aggregation,
    keys: KeySlots<K, KeyWindows<V>>,
    closing: ClosingQueue,
    windows: usize,
    late_count: u64,
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
            windows: 0,
            late_count: 0,
        }
    }

    #[must_use]
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The planned windows' starts, oldest first (the order `update`
    /// visits them and computed accumulators come in).
    fn starts(&self, plan: WindowPlan) -> impl Iterator<Item = u64> {
        let step = self.shape.step;
        let count = plan.count as u64;
        (0..count).map(move |n| plan.last - step * (count - 1 - n))
    }

    fn held_accs(&self, slot: Option<KeySlot>, start: u64) -> Option<&Accumulators<V>> {
        let held = self.keys.state(slot?)?;
        held.position(start)
            .ok()
            .and_then(|at| held.windows().get(at))
            .map(|window| &window.accs)
    }

    /// Puts `accs_for(held)` into each planned window, holding the key and
    /// opening windows as needed, and records the event's time.
    fn update(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: WindowPlan,
        mut accs_for: impl FnMut(Option<Accumulators<V>>) -> Accumulators<V>,
    ) -> Result<KeySlot> {
        let held = slot.filter(|slot| self.keys.state(*slot).is_some());
        let slot = match held {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyWindows::default())?,
        };
        let seen = self.keys.seen(slot).unwrap_or_default();
        let step = self.shape.step;
        let Some(windows) = self.keys.state_mut(slot) else {
            return Err(Error::TooManyKeys { limit: 0 });
        };
        let front_before = windows.front().map(|window| window.start);
        let mut opened = 0;
        // The planned windows are consecutive: one search, then a walk, in
        // the order of `starts`.
        let first = plan.last - step * (plan.count as u64).saturating_sub(1);
        let from = windows.position(first).unwrap_or_else(|at| at);
        for (at, n) in (from..).zip(0..plan.count as u64) {
            let start = first + step * n;
            match windows.get_mut(at) {
                Some(window) if window.start == start => {
                    let accs = std::mem::take(&mut window.accs);
                    window.accs = accs_for(Some(accs));
                }
                _ => {
                    let accs = accs_for(None);
                    windows.insert(at, Window { start, accs });
                    opened += 1;
                }
            }
        }
        let front_after = windows.front().map(|window| window.start);
        self.windows += opened;
        if let Some(start) = front_after.filter(|start| front_before != Some(*start)) {
            self.closing.push(self.closing_of(start, seen), slot);
        }
        self.clock.observe(timestamp);
        Ok(slot)
    }

    fn closing_of(&self, start: u64, seen: u64) -> Closing {
        Closing {
            at: self.shape.end(start),
            seen,
            start,
        }
    }

    fn live_entries(&self) -> Vec<(Closing, KeySlot)> {
        self.keys
            .iter()
            .filter_map(|(slot, _, held)| {
                let start = held.front()?.start;
                Some((self.closing_of(start, self.keys.seen(slot)?), slot))
            })
            .collect()
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
        self.windows
    }

    fn key_count(&self) -> usize {
        self.keys.len()
    }

    fn heap_bytes(&self) -> usize {
        let windows: usize = self
            .keys
            .iter()
            .map(|(_, _, held)| {
                held.heap_bytes()
                    + held
                        .windows()
                        .iter()
                        .map(|window| accs_heap_bytes(&window.accs))
                        .sum::<usize>()
            })
            .sum();
        self.keys.heap_bytes() + self.closing.heap_bytes() + windows
    }

    fn plan(&self, _: Option<KeySlot>, timestamp: u64) -> Result<Planned<WindowPlan>> {
        let Some(last) = self.shape.last_start(timestamp)? else {
            return Ok(Planned::Nowhere);
        };
        let watermark = self.clock.watermark_after(timestamp);
        let count = self.shape.open_count(timestamp, last, watermark);
        Ok(match (count, watermark) {
            (0, Some(watermark)) => Planned::Late { watermark },
            _ => Planned::Go(WindowPlan { last, count }),
        })
    }

    fn count_late(&mut self) {
        self.late_count += 1;
    }

    fn needs_ops(&self, slot: Option<KeySlot>, plan: WindowPlan, inputs: &[Input<V>]) -> bool {
        self.starts(plan)
            .any(|start| match self.held_accs(slot, start) {
                Some(accs) => self.aggregation.add_needs_ops(accs, inputs),
                None => self.aggregation.fresh_needs_ops(inputs),
            })
    }

    fn planned_accs(
        &self,
        slot: Option<KeySlot>,
        plan: WindowPlan,
    ) -> Vec<Option<Accumulators<V>>> {
        self.starts(plan)
            .map(|start| self.held_accs(slot, start).cloned())
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
        planned
            .into_iter()
            .map(|held| {
                let mut accs = match held {
                    Some(accs) => accs,
                    None => aggregation.initial(ops)?,
                };
                aggregation.add(&mut accs, timestamp, inputs, ops)?;
                Ok(accs)
            })
            .collect()
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
        // No custom part (see needs_ops), so fresh accumulators need no host.
        let fresh: Accumulators<V> = aggregation.initial(&mut NoOps).unwrap_or_default();
        let updated = self.update(slot, hash, key, timestamp, plan, |accs| {
            let mut accs = accs.unwrap_or_else(|| fresh.clone());
            // Checked above, and known not to need the host.
            let added = aggregation.add(&mut accs, timestamp, inputs, &mut NoOps);
            debug_assert!(added.is_ok());
            accs
        });
        self.aggregation = aggregation;
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
        let mut computed = computed.into_iter();
        self.update(slot, hash, key, timestamp, plan, |_| {
            computed.next().unwrap_or_default()
        })
    }

    fn advance(&mut self, time: u64) -> Option<bool> {
        self.clock.advance(time)
    }

    fn take(&mut self, closed_only: bool) -> Option<Handover<K, V>> {
        let watermark = if closed_only {
            self.clock.watermark()
        } else {
            Some(u64::MAX)
        };
        let (closing, slot) = {
            let keys = &self.keys;
            self.closing.pop_closed(watermark, |closing, slot| {
                keys.seen(slot) == Some(closing.seen)
                    && keys
                        .state(slot)
                        .and_then(|held| held.front())
                        .is_some_and(|window| window.start == closing.start)
            })?
        };
        let windows = self.keys.state_mut(slot)?;
        let window = windows.pop_front()?;
        let next = windows.front().map(|window| window.start);
        self.windows -= 1;
        let key = match next {
            Some(start) => {
                self.closing
                    .push(self.closing_of(start, closing.seen), slot);
                self.keys.key(slot)?.clone()
            }
            None => self.keys.release(slot)?.0,
        };
        if self.closing.is_mostly_stale(self.keys.len()) {
            let live = self.live_entries();
            self.closing.rebuild(live);
        }
        Some(Handover {
            key,
            start: window.start,
            end: closing.at,
            accs: window.accs,
        })
    }

    fn open_of(&self, slot: KeySlot) -> Vec<(u64, u64, &Accumulators<V>)> {
        let watermark = self.clock.watermark();
        self.keys
            .state(slot)
            .into_iter()
            .flat_map(|held| held.windows().iter())
            .map(|window| (window.start, self.shape.end(window.start), &window.accs))
            .filter(|(_, end, _)| watermark.is_none_or(|watermark| *end > watermark))
            .collect()
    }

    fn each_key(&self, f: &mut dyn FnMut(&K)) {
        self.keys.iter().for_each(|(_, key, _)| f(key));
    }

    fn checkpoint(&self) -> Checkpoint<'_, K, V> {
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(_, key, held)| {
                let windows = held
                    .windows()
                    .iter()
                    .map(|window| (window.start, self.shape.end(window.start), &window.accs))
                    .collect();
                (key, windows)
            })
            .collect()
    }

    fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        (start, end): (u64, u64),
        accs: Accumulators<V>,
    ) -> Result<KeySlot> {
        let shape = self.shape;
        let aligned = start >= shape.offset
            && (start - shape.offset).is_multiple_of(shape.step)
            && start.checked_add(shape.size) == Some(end);
        if !aligned {
            return Err(Error::MisalignedWindow { start });
        }
        if !self.aggregation.fits(&accs, start, end - 1) {
            return Err(Error::BadAccumulators { start });
        }
        let held = slot.filter(|slot| self.keys.state(*slot).is_some());
        if let Some(last) = held
            .and_then(|slot| self.keys.state(slot))
            .and_then(|held| held.back())
            .filter(|last| last.start >= start)
        {
            return Err(Error::WindowsOutOfOrder {
                earlier: last.start,
                later: start,
            });
        }
        let slot = match held {
            Some(slot) => slot,
            None => self.keys.hold(hash, key(), KeyWindows::default())?,
        };
        if let Some(held) = self.keys.state_mut(slot) {
            held.push_back(Window { start, accs });
            self.windows += 1;
        }
        Ok(slot)
    }

    fn finish_restore(&mut self) -> Result<()> {
        let live = self.live_entries();
        self.closing.rebuild(live);
        Ok(())
    }

    fn restore_counts(&mut self, time: Option<u64>, late_count: u64) {
        self.clock = self.clock.at(time);
        self.late_count = late_count;
    }

    fn each_held(&self, f: &mut dyn FnMut(&K, &Accumulators<V>)) {
        for (_, key, held) in self.keys.iter() {
            for window in held.windows() {
                f(key, &window.accs);
            }
        }
    }
}

/// Bytes a window's accumulators hold on the heap.
pub(crate) fn accs_heap_bytes<V: Clone>(accs: &Accumulators<V>) -> usize {
    let spilled = if accs.spilled() { accs.capacity() } else { 0 };
    spilled * std::mem::size_of::<crate::aggregate::Accumulator<V>>()
        + accs
            .iter()
            .map(crate::aggregate::Accumulator::heap_bytes)
            .sum::<usize>()
}
