//! The order held windows and sessions close in, across keys, kept without
//! re-indexing on every event.
//!
//! Entries sit in buckets by the time they close from (`at`: a window's
//! end, a session's last event), `2**shift` ticks to a bucket. Pushing
//! appends to a bucket (buckets live in an ordered map, usually small), and a
//! bucket is sorted once, when the earliest time it can hold comes due.
//! Nothing is removed when what an entry names changes: the tracker that
//! owns the queue pushes a new entry and says, when an entry comes due,
//! whether it is still live; stale ones are skipped then. The tracker
//! rebuilds the queue from its live entries once stale entries outnumber
//! them, so memory follows what is held, not what happened.
//!
//! A bucket no wider than the time an entry waits to close (a session's
//! gap) never receives an entry once it is due: anything pushed then is
//! newer than the watermark, and so belongs to a later bucket. Pushing into
//! a bucket that is being handed over still works (what came is merged into
//! the rest of it), as when everything is flushed regardless of the
//! watermark.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::heap::spilled_bytes;

/// How many entries ahead of the one being decided
/// [`ClosingQueue::peek_closed`] names to its caller for loading: enough
/// that the cache misses of entries coming due (each names a key's state,
/// which was last touched long before) overlap rather than follow each
/// other.
const LOAD_AHEAD: usize = 16;

/// What the tracker says of an entry whose bucket is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Live and closed: hand it over.
    Closed,
    /// Live and not closed yet: neither is anything after it.
    Open,
    /// Names what no longer exists: dropped.
    Stale,
}

/// The entries whose times share a bucket, in the order pushed until the
/// bucket comes due; then sorted from `next` on. One entry is kept inline:
/// when many sessions are open over a long time and the gap is short, most
/// buckets hold one.
#[derive(Debug, Clone)]
struct Bucket<E> {
    entries: SmallVec<[E; 1]>,
    next: usize,
    /// The entries from `next` up to here are in order; any after were
    /// pushed since.
    sorted_to: usize,
}

/// Entries by the time they close from.
#[derive(Debug, Clone)]
pub struct ClosingQueue<E> {
    buckets: BTreeMap<u64, Bucket<E>>,
    len: usize,
    shift: u32,
    /// The memory of the last bucket handed over, emptied, for the next
    /// one made, if it has room for no more than twice what is queued.
    /// Buckets come and go one by one (a minute's windows each); each grew
    /// from nothing by doubling, and freeing one that large made the
    /// allocator sort through every small block freed since.
    spare: SmallVec<[E; 1]>,
}

impl<E> Default for ClosingQueue<E> {
    /// A queue with a bucket to each tick.
    fn default() -> Self {
        ClosingQueue::new(0)
    }
}

impl<E> ClosingQueue<E> {
    /// An empty queue with buckets `2**shift` ticks wide.
    #[must_use]
    pub fn new(shift: u32) -> Self {
        ClosingQueue {
            buckets: BTreeMap::new(),
            len: 0,
            shift: shift.min(63),
            spare: SmallVec::new(),
        }
    }

    /// Files `entry` as closing from `at`.
    pub fn push(&mut self, at: u64, entry: E) {
        let bucket = self
            .buckets
            .entry(at >> self.shift)
            .or_insert_with(|| Bucket {
                entries: std::mem::take(&mut self.spare),
                next: 0,
                sorted_to: 0,
            });
        bucket.entries.push(entry);
        if bucket.entries.len() - bucket.next == 1 {
            bucket.sorted_to = bucket.entries.len();
        }
        self.len += 1;
    }

    /// The first entry, in the entries' own order within a bucket, that
    /// `fate` says has closed, from a bucket whose earliest time `closes`;
    /// left in place until [`ClosingQueue::remove_first`] (a caller may have
    /// to ask the host something first). Returned with its bucket's
    /// earliest time. Stale entries before it are dropped. Before deciding
    /// an entry it hands `load_ahead` the one [`LOAD_AHEAD`] places after
    /// it in the bucket, for the caller to start loading what that names.
    pub fn peek_closed(
        &mut self,
        closes: impl Fn(u64) -> bool,
        mut fate: impl FnMut(u64, E) -> Fate,
        load_ahead: impl Fn(&E),
    ) -> Option<(u64, E)>
    where
        E: Copy + Ord,
    {
        loop {
            let mut due = self.buckets.first_entry()?;
            let from = *due.key() << self.shift;
            if !closes(from) {
                return None;
            }
            let bucket = due.get_mut();
            if bucket.sorted_to < bucket.entries.len() {
                // A stable sort finds the sorted runs: those of a bucket
                // sorted before that received a few entries since
                // (everything being flushed while events still come), and
                // those of entries pushed as their times came, mostly in
                // order.
                bucket.entries[bucket.next..].sort();
                bucket.sorted_to = bucket.entries.len();
            }
            while let Some(&entry) = bucket.entries.get(bucket.next) {
                if let Some(ahead) = bucket.entries.get(bucket.next + LOAD_AHEAD) {
                    load_ahead(ahead);
                }
                match fate(from, entry) {
                    Fate::Closed => return Some((from, entry)),
                    Fate::Open => return None,
                    Fate::Stale => {
                        bucket.next += 1;
                        self.len -= 1;
                    }
                }
            }
            let emptied = due.remove();
            self.keep_spare(emptied);
        }
    }

    /// Keeps `bucket`'s memory for the next bucket, unless it has room for
    /// more than twice what is queued (a burst handed over, a trickle after
    /// it).
    fn keep_spare(&mut self, bucket: Bucket<E>) {
        let mut entries = bucket.entries;
        entries.clear();
        self.spare = if entries.capacity() <= 2 * self.len {
            entries
        } else {
            SmallVec::new()
        };
    }

    /// Removes the entry [`ClosingQueue::peek_closed`] returned.
    pub fn remove_first(&mut self) {
        if let Some(mut first) = self.buckets.first_entry() {
            let bucket = first.get_mut();
            bucket.next += 1;
            self.len = self.len.saturating_sub(1);
            if bucket.next >= bucket.entries.len() {
                let emptied = first.remove();
                self.keep_spare(emptied);
            }
        }
    }

    /// The entries after the first, in the order they come due as far as
    /// that is known (a bucket is sorted when it comes due): for loading
    /// ahead, nothing more.
    pub fn upcoming(&self) -> impl Iterator<Item = &E> + '_ {
        self.buckets
            .values()
            .flat_map(|bucket| bucket.entries.get(bucket.next..).unwrap_or_default())
    }

    /// Whether stale entries outnumber the `live` ones enough to rebuild.
    #[must_use]
    pub fn is_mostly_stale(&self, live: usize) -> bool {
        self.len > 2 * live + 64
    }

    /// Replaces every entry with the live ones.
    pub fn rebuild(&mut self, live: Vec<(u64, E)>) {
        self.buckets.clear();
        self.spare = SmallVec::new();
        self.len = 0;
        for (at, entry) in live {
            self.push(at, entry);
        }
    }

    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        let node = std::mem::size_of::<(u64, Bucket<E>)>();
        self.buckets
            .values()
            .map(|bucket| spilled_bytes(&bucket.entries) + node)
            .sum::<usize>()
            + spilled_bytes(&self.spare)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes every entry due by `watermark` (live unless in `stale`), each
    /// entry being the time it closes from.
    fn take_due(queue: &mut ClosingQueue<u64>, watermark: u64, stale: &[u64]) -> Vec<u64> {
        let mut taken = Vec::new();
        while let Some((_, at)) = queue.peek_closed(
            |from| from <= watermark,
            |_, at| {
                if stale.contains(&at) {
                    Fate::Stale
                } else if at <= watermark {
                    Fate::Closed
                } else {
                    Fate::Open
                }
            },
            |_| {},
        ) {
            taken.push(at);
            queue.remove_first();
        }
        taken
    }

    #[test]
    fn each_entry_decided_names_the_one_load_ahead_places_after_it() {
        let mut queue = ClosingQueue::new(8);
        let count = 3 * LOAD_AHEAD as u64;
        for at in (0..count).rev() {
            queue.push(at, at);
        }
        let named = std::cell::RefCell::new(Vec::new());
        let mut decided = Vec::new();
        while let Some((_, at)) = queue.peek_closed(
            |_| true,
            |_, at| {
                decided.push(at);
                if at % 2 == 0 {
                    Fate::Stale
                } else {
                    Fate::Closed
                }
            },
            |ahead| named.borrow_mut().push(*ahead),
        ) {
            queue.remove_first();
            assert_eq!(at % 2, 1);
        }
        // Stale entries name theirs too, and the bucket was sorted first.
        let expected: Vec<u64> = decided
            .iter()
            .map(|at| at + LOAD_AHEAD as u64)
            .filter(|ahead| *ahead < count)
            .collect();
        assert_eq!(decided, (0..count).collect::<Vec<_>>());
        assert_eq!(named.into_inner(), expected);
    }

    #[test]
    fn a_bucket_handed_over_lends_its_memory_to_the_next_until_the_queue_empties() {
        // Buckets of 16 ticks, each of 1,000 entries.
        let mut queue = ClosingQueue::new(4);
        let fill = |queue: &mut ClosingQueue<u64>, bucket: u64| {
            (0..1_000).for_each(|n| queue.push(bucket * 16 + n % 16, bucket * 16 + n % 16));
        };
        fill(&mut queue, 0);
        fill(&mut queue, 1);
        assert_eq!(take_due(&mut queue, 15, &[]).len(), 1_000);
        let kept = queue.spare.capacity();
        assert!(kept >= 1_000);
        let held = queue.heap_bytes();
        fill(&mut queue, 2);
        assert_eq!(queue.spare.capacity(), 1, "the next bucket took it");
        let node = std::mem::size_of::<(u64, Bucket<u64>)>();
        assert_eq!(
            queue.heap_bytes(),
            held + node,
            "no more than one more bucket's node"
        );
        let mut taken = take_due(&mut queue, 47, &[]);
        assert_eq!(taken.len(), 2_000);
        assert!(taken.windows(2).all(|pair| pair[0] <= pair[1]));
        taken.dedup();
        assert_eq!(taken, (16..48).collect::<Vec<_>>());
        assert_eq!(queue.heap_bytes(), 0, "nothing kept once nothing is queued");
        // A burst handed over while a trickle is queued leaves nothing.
        fill(&mut queue, 3);
        queue.push(100, 100);
        assert_eq!(take_due(&mut queue, 63, &[]).len(), 1_000);
        assert_eq!(queue.spare.capacity(), 1);
        let one = std::mem::size_of::<(u64, Bucket<u64>)>();
        assert_eq!(queue.heap_bytes(), one);
    }

    #[test]
    fn wide_buckets_hand_over_in_order_and_only_what_has_closed() {
        let mut queue = ClosingQueue::new(3);
        for at in [21, 3, 17, 5, 16, 9] {
            queue.push(at, at);
        }
        assert_eq!(take_due(&mut queue, 4, &[]), [3]);
        // 5 shares 3's bucket, 9 starts the next one.
        assert_eq!(take_due(&mut queue, 16, &[]), [5, 9, 16]);
        assert_eq!(take_due(&mut queue, 100, &[]), [17, 21]);
        assert_eq!(queue.upcoming().count(), 0);
    }

    #[test]
    fn an_entry_pushed_into_a_bucket_being_handed_over_takes_its_place() {
        let mut queue = ClosingQueue::new(4);
        for at in [1, 4, 9] {
            queue.push(at, at);
        }
        assert_eq!(take_due(&mut queue, 1, &[]), [1]);
        queue.push(2, 2);
        assert_eq!(take_due(&mut queue, 100, &[]), [2, 4, 9]);
    }

    #[test]
    fn stale_entries_are_dropped_when_they_come_due_and_counted_until_then() {
        let mut queue = ClosingQueue::new(0);
        for at in 0..100 {
            queue.push(at, at);
        }
        assert!(queue.is_mostly_stale(10));
        assert!(!queue.is_mostly_stale(20));
        let stale: Vec<u64> = (0..100).filter(|at| at % 10 != 0).collect();
        assert_eq!(take_due(&mut queue, 49, &stale), [0, 10, 20, 30, 40]);
        assert!(!queue.is_mostly_stale(0));
        queue.rebuild(vec![(70, 70), (60, 60)]);
        assert_eq!(queue.upcoming().count(), 2);
        assert_eq!(take_due(&mut queue, 100, &[]), [60, 70]);
    }
}
