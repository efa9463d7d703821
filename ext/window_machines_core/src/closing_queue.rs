//! The order held windows close in, across keys, kept without re-indexing
//! on every event.
//!
//! A window's end is fixed when it opens, so entries sit in buckets by the
//! time the watermark must reach: pushing appends to a bucket (the few
//! distinct ends live in a small ordered map), and a bucket is sorted once,
//! when it comes due. An entry is pushed when a key gains a window that may
//! close before everything already queued for it; entries go stale as
//! windows are handed over, and are skipped when they come due. The tracker
//! that owns the queue says which entries are still live, and rebuilds the
//! queue from its live windows once stale entries outnumber them, so memory
//! follows what is held, not what happened.

use std::collections::BTreeMap;

use crate::key_slots::KeySlot;

/// The keys whose windows close at one time, in the order pushed until the
/// bucket comes due; then sorted from `next` on.
#[derive(Debug, Clone, Default)]
struct Bucket {
    entries: Vec<KeySlot>,
    next: usize,
    sorted: bool,
}

/// Keys by the time their next window closes. An entry is only a key's
/// slot: what it ranks by (when the key started being held) is read from
/// the tracker when its bucket comes due, so an entry costs four bytes.
#[derive(Debug, Clone, Default)]
pub struct ClosingQueue {
    buckets: BTreeMap<u64, Bucket>,
    len: usize,
}

impl ClosingQueue {
    /// Files the key at `slot` as having a window that closes at `at`.
    pub fn push(&mut self, at: u64, slot: KeySlot) {
        let bucket = self.buckets.entry(at).or_default();
        bucket.sorted = bucket.entries.len() == bucket.next;
        bucket.entries.push(slot);
        self.len += 1;
    }

    /// The first entry that closes at or before `watermark`, in `rank`
    /// order among those closing together, that `is_live` accepts; left in
    /// place until [`ClosingQueue::remove_first`] (a caller may have to ask
    /// the host something first). Stale entries before it are dropped.
    pub fn peek_closed(
        &mut self,
        watermark: Option<u64>,
        mut is_live: impl FnMut(u64, KeySlot) -> bool,
        rank: impl Fn(KeySlot) -> u64,
    ) -> Option<(u64, KeySlot)> {
        let watermark = watermark?;
        loop {
            let mut due = self.buckets.first_entry()?;
            let at = *due.key();
            if at > watermark {
                return None;
            }
            let bucket = due.get_mut();
            if !bucket.sorted {
                bucket.entries[bucket.next..].sort_unstable_by_key(|slot| (rank(*slot), *slot));
                bucket.sorted = true;
            }
            while let Some(&slot) = bucket.entries.get(bucket.next) {
                if is_live(at, slot) {
                    return Some((at, slot));
                }
                bucket.next += 1;
                self.len -= 1;
            }
            due.remove();
        }
    }

    /// Removes the entry [`ClosingQueue::peek_closed`] returned.
    pub fn remove_first(&mut self) {
        if let Some(mut first) = self.buckets.first_entry() {
            let bucket = first.get_mut();
            bucket.next += 1;
            self.len = self.len.saturating_sub(1);
            if bucket.next >= bucket.entries.len() {
                first.remove();
            }
        }
    }

    /// The entries after the first, in the order they come due as far as
    /// that is known (a bucket is sorted when it comes due): for loading
    /// ahead, nothing more.
    pub fn upcoming(&self) -> impl Iterator<Item = KeySlot> + '_ {
        self.buckets
            .values()
            .flat_map(|bucket| bucket.entries.get(bucket.next..).unwrap_or_default())
            .copied()
    }

    /// Whether stale entries outnumber the `live` ones enough to rebuild.
    #[must_use]
    pub fn is_mostly_stale(&self, live: usize) -> bool {
        self.len > 2 * live + 64
    }

    /// Replaces every entry with the live ones.
    pub fn rebuild(&mut self, live: Vec<(u64, KeySlot)>) {
        self.buckets.clear();
        self.len = 0;
        for (at, slot) in live {
            self.push(at, slot);
        }
    }

    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<KeySlot>();
        let node = std::mem::size_of::<(u64, Bucket)>();
        self.buckets
            .values()
            .map(|bucket| bucket.entries.capacity() * entry + node)
            .sum()
    }
}
