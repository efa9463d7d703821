//! What the aggregating trackers (windows, sessions) share, so that a
//! binding drives them all one way: plan an event, apply it alone or with
//! accumulators the host computed, hand results over.

use crate::aggregate::{Accumulator, Accumulators, Aggregation, Input, Ops, Refusal};
use crate::error::{Error, Result};
use crate::event_clock::EventClock;
use crate::key_slots::{KeyLookup, KeySlot};

/// Where an event goes, worked out before anything changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planned<P> {
    /// Into the tracker, as `P` says.
    Go(P),
    /// Every window or session it could join has closed.
    Late { watermark: u64 },
    /// No window holds it (it is before the windows' offset).
    Nowhere,
}

/// A window or session handed over: `[start, end)` for windows, first and
/// last event for sessions.
#[derive(Debug, Clone)]
pub struct Handover<K, V> {
    pub key: K,
    pub start: u64,
    pub end: u64,
    pub accs: Accumulators<V>,
}

/// A window whose result merges parts only the host can merge, left in
/// place: merge `parts` in order, then hand it over with
/// [`Aggregating::take_merged`], if nothing changed meanwhile.
#[derive(Debug, Clone)]
pub struct Pending<V> {
    pub parts: Vec<Accumulators<V>>,
    /// When the window closes (its end), and whose it is.
    pub(crate) at: u64,
    pub(crate) slot: KeySlot,
}

/// What [`Aggregating::take`] came to.
#[derive(Debug, Clone)]
pub enum Taken<K, V> {
    Ready(Handover<K, V>),
    NeedsHost(Pending<V>),
}

/// A held part of a checkpoint: start, end (or last event), for a pane the
/// first window it still goes into when that is not the first window
/// holding it, and accumulators.
pub type Held<'a, V> = (u64, u64, Option<u64>, &'a [Accumulator<V>]);

/// Every held key with what it holds, oldest first.
pub type Checkpoint<'a, K, V> = Vec<(&'a K, Vec<Held<'a, V>>)>;

/// A key's open windows: start, end (or last event), and the parts whose
/// merge, in order, is the window's aggregate.
pub type Open<'a, V> = Vec<(u64, u64, Vec<&'a [Accumulator<V>]>)>;

/// A keyed tracker whose windows carry accumulators.
pub trait Aggregating<K, V>: KeyLookup<Key = K> {
    type Plan: Copy + PartialEq;

    fn aggregation(&self) -> &Aggregation;
    fn clock(&self) -> &EventClock;
    fn late_count(&self) -> u64;
    /// Windows (or sessions) held.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn key_count(&self) -> usize;
    fn heap_bytes(&self) -> usize;

    /// Where an event at `timestamp` for the key at `slot` goes; refused if
    /// it would break a limit.
    fn plan(&self, slot: Option<KeySlot>, timestamp: u64) -> Result<Planned<Self::Plan>>;
    /// Counts a late event, whatever the caller then does with it.
    fn count_late(&mut self);
    /// Ends the input: the watermark moves to `u64::MAX`, so every window
    /// (or session) held has closed.
    fn finish(&mut self);
    /// Whether applying the event needs the host.
    fn needs_ops(&self, slot: Option<KeySlot>, plan: Self::Plan, inputs: &[Input<V>]) -> bool;
    /// Copies of the accumulators the event with `inputs` starts from (and
    /// any it must be checked against).
    fn planned_accs(
        &self,
        slot: Option<KeySlot>,
        plan: Self::Plan,
        inputs: &[Input<V>],
    ) -> Vec<Option<Accumulators<V>>>;
    /// The accumulators after the event, from [`Aggregating::planned_accs`]
    /// and the tracker's `aggregation`; reads nothing else of the tracker,
    /// so a binding can run it with the tracker free.
    fn compute<O: Ops<V>>(
        aggregation: &Aggregation,
        plan: Self::Plan,
        planned: Vec<Option<Accumulators<V>>>,
        timestamp: u64,
        inputs: &[Input<V>],
        ops: &mut O,
    ) -> std::result::Result<Vec<Accumulators<V>>, Refusal<O::Error>>;
    /// Applies an event that needs no host.
    fn apply(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: Self::Plan,
        inputs: &[Input<V>],
    ) -> std::result::Result<KeySlot, Refusal<Error>>;
    /// Applies an event with accumulators from [`Aggregating::compute`], the
    /// tracker unchanged since the plan.
    fn apply_computed(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        timestamp: u64,
        plan: Self::Plan,
        computed: Vec<Accumulators<V>>,
    ) -> Result<KeySlot>;
    /// Moves a manual clock forward: whether it moved; `None` for a stream clock.
    fn advance(&mut self, time: u64) -> Option<bool>;
    /// The window that closes first, removed; only a closed one if
    /// `closed_only`. One whose parts only the host can merge is left in
    /// place and described instead.
    fn take(&mut self, closed_only: bool) -> Option<Taken<K, V>>;
    /// Hands over `pending` with its parts merged into `merged`, the
    /// tracker unchanged since [`Aggregating::take`] described it.
    fn take_merged(
        &mut self,
        pending: &Pending<V>,
        merged: Accumulators<V>,
    ) -> Option<Handover<K, V>>;
    /// A key's windows that have not closed, oldest first.
    fn open_of(&self, slot: KeySlot) -> Open<'_, V>;
    /// Every held key and accumulator, for marking.
    fn each_held(&self, f: &mut dyn FnMut(&K, &[Accumulator<V>]));
    /// Every held key, for marking.
    fn each_key(&self, f: &mut dyn FnMut(&K));

    /// Every held key in the order keys started being held, each with what
    /// it holds oldest first: what a checkpoint holds.
    fn checkpoint(&self) -> Checkpoint<'_, K, V>;
    /// Adds one part of a checkpoint (start, end, a pane's first window)
    /// for the key at `slot` (or a new key made by `key`, held under
    /// `hash`); a key's parts come oldest first.
    fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        key: impl FnOnce() -> K,
        part: (u64, u64, Option<u64>),
        accs: Accumulators<V>,
    ) -> Result<KeySlot>;
    /// Checks what [`Aggregating::restore`] gave as untrusted input, with
    /// what [`Aggregating::restore_counts`] set, and makes the tracker
    /// ready.
    fn finish_restore(&mut self) -> Result<()>;
    /// Pairs of restored inputs only the host can compare, which handing
    /// a window over will (extremes of parts merged into one window): for
    /// the host to check, since no stream of events leaves a pair it
    /// cannot compare.
    fn restored_comparisons(&self) -> Vec<(&Input<V>, &Input<V>)> {
        Vec::new()
    }
    /// Sets what a checkpoint says of the clock and late events.
    fn restore_counts(&mut self, time: Option<u64>, late_count: u64);
}
