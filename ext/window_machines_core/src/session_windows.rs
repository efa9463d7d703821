//! Sessions per key that carry their accumulators: [`KeyedSessions`] for
//! the spans, closing order and limits, under an [`EventClock`], with one
//! set of accumulators per held session. A growing session adds to its
//! accumulators; two sessions bridged by an event merge theirs.

use crate::aggregate::{
    Accumulator, Accumulators, Aggregation, Input, NeedsHost, NoOps, Ops, Refusal,
};
use crate::aggregating::{Aggregating, Checkpoint, Handover, Open, Pending, Planned, Taken};
use crate::error::{Error, Result};
use crate::event_clock::EventClock;
use crate::front_vec::FrontVec;
use crate::heap::accs_heap_bytes;
use crate::key_slots::{KeyLookup, KeySlot, Prefetch};
use crate::keyed::KeyedSessions;
use crate::span::Span;
use crate::span_list::Placement;
use crate::watermark::Watermark;

/// Where an event goes among its key's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionPlan {
    placement: Placement,
    watermark: Option<u64>,
}

/// A key's accumulators, one set per session, oldest first; kept with its
/// sessions, and the one set most keys have kept inline.
type HeldAccs<V> = FrontVec<Accumulators<V>>;

#[derive(Debug, Clone)]
pub struct SessionWindows<K, V> {
    sessions: KeyedSessions<K, HeldAccs<V>>,
    clock: EventClock,
    aggregation: Aggregation,
    late_count: u64,
}

impl<K, V> KeyLookup for SessionWindows<K, V> {
    type Key = K;

    fn first_with_hash(&self, hash: u64) -> Option<KeySlot> {
        self.sessions.first_with_hash(hash)
    }

    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot> {
        self.sessions.next_with_same_hash(slot)
    }

    fn key(&self, slot: KeySlot) -> Option<&K> {
        self.sessions.key(slot)
    }

    fn prefetch(&self, hash: u64, stage: Prefetch) {
        self.sessions.prefetch(hash, stage);
    }
}

impl<K: Clone, V: Clone> SessionWindows<K, V> {
    pub fn new(
        gap: u64,
        max_sessions: Option<u64>,
        clock: EventClock,
        aggregation: Aggregation,
    ) -> Result<Self> {
        Ok(SessionWindows {
            sessions: KeyedSessions::new(gap, max_sessions)?,
            clock,
            aggregation,
            late_count: 0,
        })
    }

    /// See [`KeyedSessions::with_per_key_limit`].
    #[must_use]
    pub fn with_per_key_limit(mut self, limit: usize) -> Self {
        self.sessions = self.sessions.with_per_key_limit(limit);
        self
    }

    #[must_use]
    pub fn gap(&self) -> u64 {
        self.sessions.gap()
    }

    #[must_use]
    pub fn max_sessions(&self) -> Option<usize> {
        self.sessions.max_sessions()
    }

    fn accs_of(&self, slot: Option<KeySlot>) -> &[Accumulators<V>] {
        slot.and_then(|slot| self.sessions.extra(slot))
            .map_or(&[], FrontVec::as_slice)
    }

    /// The accumulators the placement starts from: none for a new session,
    /// one for an event inside or growing a session, two for a bridge.
    fn starting(&self, slot: Option<KeySlot>, placement: Placement) -> &[Accumulators<V>] {
        let accs = self.accs_of(slot);
        let index = match placement {
            Placement::Open(_) => return &[],
            Placement::Inside(span) => {
                slot.and_then(|slot| self.sessions.spans(slot).binary_search(&span).ok())
            }
            Placement::Grow { index, .. } => Some(index),
            Placement::Merge { index, .. } => {
                return accs.get(index..index + 2).unwrap_or_default()
            }
        };
        index
            .and_then(|index| accs.get(index..=index))
            .unwrap_or_default()
    }

    /// Inserts the event and files `accs` as its session's accumulators;
    /// without them, a session that stays one keeps those it holds. Returns
    /// where the session's accumulators are: the key, and the session's
    /// place among the key's.
    fn commit(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: SessionPlan,
        accs: Option<Accumulators<V>>,
    ) -> Result<(KeySlot, usize)> {
        if let Some(watermark) = plan.watermark {
            self.sessions.advance_watermark(watermark);
        }
        let inserted = self.sessions.insert(slot, hash, key, timestamp)?;
        let slot = inserted.slot;
        let index = self
            .sessions
            .spans(slot)
            .binary_search(&inserted.insertion.span)
            .unwrap_or_default();
        let Some(held) = self.sessions.extra_mut(slot) else {
            debug_assert!(false, "a key just inserted is not held");
            return Err(Error::TooManyKeys { limit: 0 });
        };
        match (plan.placement, accs) {
            (Placement::Open(_), accs) => held.insert(index, accs.unwrap_or_default()),
            (Placement::Merge { .. }, accs) => held.join(index, accs.unwrap_or_default()),
            (Placement::Inside(_) | Placement::Grow { .. }, Some(accs)) => {
                held.replace(index, accs);
            }
            (Placement::Inside(_) | Placement::Grow { .. }, None) => {}
        }
        self.clock.observe(timestamp);
        Ok((slot, index))
    }
}

/// The accumulators an event adds to: fresh ones, its session's, or the
/// two sessions it bridges merged (older first).
fn start_from<V: Clone, O: Ops<V>>(
    aggregation: &Aggregation,
    mut starting: impl Iterator<Item = Accumulators<V>>,
    ops: &mut O,
) -> std::result::Result<Accumulators<V>, O::Error> {
    match (starting.next(), starting.next()) {
        (Some(older), Some(newer)) => aggregation.merge(older, newer, ops),
        (Some(one), None) => Ok(one),
        _ => aggregation.initial(ops),
    }
}

impl<K: Clone, V: Clone> Aggregating<K, V> for SessionWindows<K, V> {
    type Plan = SessionPlan;

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
        self.sessions.len()
    }

    fn key_count(&self) -> usize {
        self.sessions.key_count()
    }

    fn heap_bytes(&self) -> usize {
        let accs: usize = self
            .sessions
            .held_extras()
            .map(|(_, held)| {
                held.heap_bytes() + held.as_slice().iter().map(accs_heap_bytes).sum::<usize>()
            })
            .sum();
        self.sessions.heap_bytes() + accs
    }

    fn plan(&self, slot: Option<KeySlot>, timestamp: u64) -> Result<Planned<SessionPlan>> {
        let watermark = self.clock.watermark_after(timestamp);
        if let Some(watermark) = watermark.filter(|watermark| timestamp <= *watermark) {
            return Ok(Planned::Late { watermark });
        }
        let placement = self
            .sessions
            .placement(slot, timestamp, Watermark::new(watermark))?;
        Ok(Planned::Go(SessionPlan {
            placement,
            watermark,
        }))
    }

    fn count_late(&mut self) {
        self.late_count = self.late_count.saturating_add(1);
    }

    fn needs_ops(&self, slot: Option<KeySlot>, plan: SessionPlan, inputs: &[Input<V>]) -> bool {
        match self.starting(slot, plan.placement) {
            [] => self.aggregation.fresh_needs_ops(inputs),
            [one] => self.aggregation.add_needs_ops(one, inputs),
            [older, newer, ..] => {
                // Merged first, then added to. Merging without the host is
                // the one exact test: two sums that each fit may not fit
                // together, nor with the input. Bridging events are rare.
                match self
                    .aggregation
                    .merge(older.clone(), newer.clone(), &mut NoOps)
                {
                    Ok(merged) => self.aggregation.add_needs_ops(&merged, inputs),
                    Err(NeedsHost) => true,
                }
            }
        }
    }

    fn planned_accs(
        &self,
        slot: Option<KeySlot>,
        plan: SessionPlan,
        _: &[Input<V>],
    ) -> Vec<Option<Accumulators<V>>> {
        self.starting(slot, plan.placement)
            .iter()
            .map(|accs| Some(accs.clone()))
            .collect()
    }

    fn compute<O: Ops<V>>(
        aggregation: &Aggregation,
        _: SessionPlan,
        planned: Vec<Option<Accumulators<V>>>,
        timestamp: u64,
        inputs: &[Input<V>],
        ops: &mut O,
    ) -> std::result::Result<Vec<Accumulators<V>>, Refusal<O::Error>> {
        aggregation.check(inputs)?;
        let mut accs = start_from(aggregation, planned.into_iter().flatten(), ops)?;
        aggregation.add(&mut accs, timestamp, inputs, ops)?;
        Ok(vec![accs])
    }

    fn apply(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: SessionPlan,
        inputs: &[Input<V>],
    ) -> std::result::Result<KeySlot, Refusal<Error>> {
        self.aggregation.check(inputs)?;
        // Known not to need the host (see needs_ops).
        let unreachable = |_| Refusal::Host(Error::TooManyKeys { limit: 0 });
        if let [held] = self.starting(slot, plan.placement) {
            // A session that stays one is added to where it is held, with
            // no copy: an add that needs no host cannot fail half-way.
            if self.aggregation.add_needs_ops(held, inputs) {
                return Err(unreachable(NeedsHost));
            }
            let (slot, index) = self
                .commit(slot, hash, key, timestamp, plan, None)
                .map_err(Refusal::Host)?;
            if let Some(held) = self
                .sessions
                .extra_mut(slot)
                .and_then(|held| held.as_mut_slice().get_mut(index))
            {
                let added = self.aggregation.add(held, timestamp, inputs, &mut NoOps);
                debug_assert!(added.is_ok(), "an add that needs no host was refused");
            }
            return Ok(slot);
        }
        let starting = self.starting(slot, plan.placement).iter().cloned();
        let mut accs = start_from(&self.aggregation, starting, &mut NoOps).map_err(unreachable)?;
        self.aggregation
            .add(&mut accs, timestamp, inputs, &mut NoOps)
            .map_err(|refused| match refused {
                Refusal::NotNumeric { kind } => Refusal::NotNumeric { kind },
                Refusal::Host(host) => unreachable(host),
            })?;
        self.commit(slot, hash, key, timestamp, plan, Some(accs))
            .map(|(slot, _)| slot)
            .map_err(Refusal::Host)
    }

    fn apply_computed(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: SessionPlan,
        computed: Vec<Accumulators<V>>,
    ) -> Result<KeySlot> {
        let accs = computed.into_iter().next().unwrap_or_default();
        self.commit(slot, hash, key, timestamp, plan, Some(accs))
            .map(|(slot, _)| slot)
    }

    fn advance(&mut self, time: u64) -> Option<bool> {
        let moved = self.clock.advance(time)?;
        if let Some(watermark) = self.clock.watermark() {
            self.sessions.advance_watermark(watermark);
        }
        Some(moved)
    }

    fn finish(&mut self) {
        self.clock.finish();
        self.sessions.advance_watermark(u64::MAX);
    }

    fn take(&mut self, closed_only: bool) -> Option<Taken<K, V>> {
        let (handover, accs) = self
            .sessions
            .take_first_with(closed_only, |held| held.remove(0).unwrap_or_default())?;
        Some(Taken::Ready(Handover {
            key: handover.key,
            start: handover.span.first,
            end: handover.span.last,
            accs,
        }))
    }

    fn take_merged(&mut self, _: &Pending<V>, _: Accumulators<V>) -> Option<Handover<K, V>> {
        // A session's aggregate is one accumulator: take never leaves one
        // pending.
        None
    }

    fn open_of(&self, slot: KeySlot) -> Open<'_, V> {
        let watermark = self.clock.watermark();
        let gap = self.sessions.gap();
        self.sessions
            .spans(slot)
            .iter()
            .zip(self.accs_of(Some(slot)))
            .filter(|(span, _)| {
                watermark.is_none_or(|watermark| span.last.saturating_add(gap) > watermark)
            })
            .map(|(span, accs)| (span.first, span.last, vec![accs.as_slice()]))
            .collect()
    }

    fn each_key(&self, f: &mut dyn FnMut(&K)) {
        self.sessions.held_keys().for_each(f);
    }

    fn checkpoint(&self) -> Checkpoint<'_, K, V> {
        self.sessions
            .slots_in_held_order()
            .into_iter()
            .map(|(slot, key)| {
                let sessions = self
                    .sessions
                    .spans(slot)
                    .iter()
                    .zip(self.accs_of(Some(slot)))
                    .map(|(span, accs)| (span.first, span.last, None, accs.as_slice()))
                    .collect();
                (key, sessions)
            })
            .collect()
    }

    fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        (first, last, pane_from): (u64, u64, Option<u64>),
        accs: Accumulators<V>,
    ) -> Result<KeySlot> {
        if pane_from.is_some() {
            // Only panes of hopping windows name a first window.
            return Err(Error::MisalignedWindow { start: first });
        }
        if !self.aggregation.fits_session(&accs, first, last) {
            return Err(Error::BadAccumulators { start: first });
        }
        let slot = self
            .sessions
            .restore(slot, hash, key, Span { first, last })?;
        if let Some(held) = self.sessions.extra_mut(slot) {
            held.push(accs);
        }
        Ok(slot)
    }

    fn finish_restore(&mut self) -> Result<()> {
        // Sessions are counted once their closing order is rebuilt.
        self.sessions.finish_restore()?;
        self.clock
            .check_restored(self.len(), self.sessions.latest_last(), self.late_count)
    }

    fn restore_counts(&mut self, time: Option<u64>, late_count: u64) {
        self.clock = self.clock.at(time);
        if let Some(watermark) = self.clock.watermark() {
            self.sessions.advance_watermark(watermark);
        }
        self.late_count = late_count;
    }

    fn each_held(&self, f: &mut dyn FnMut(&K, &[Accumulator<V>])) {
        for (key, held) in self.sessions.held_extras() {
            for accs in held.as_slice() {
                f(key, accs);
            }
        }
    }
}
