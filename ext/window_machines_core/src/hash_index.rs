//! The index of [`KeySlots`](crate::KeySlots): from a hash to one slot
//! holding a key with that hash.
//!
//! Open addressing with linear probing, one `u64` a bucket: the top 32 bits
//! of the hash beside the slot. A lookup reads one bucket (rarely a second
//! one on the same cache line) and goes straight on to the slot's entry, so
//! at a million keys it costs one cache miss, where an index that keeps
//! control bytes apart from its buckets costs two. A bucket's home is
//! taken from the same top bits, so growing never needs the full hash.
//! Removal shifts the buckets after it back instead of leaving tombstones,
//! so keys may come and go forever without lookups slowing down.

use crate::key_slots::KeySlot;

/// An empty bucket; a full one never is, since it stores `slot + 1`.
const EMPTY: u64 = 0;
const FRAGMENT: u64 = 0xFFFF_FFFF_0000_0000;
const SMALLEST: usize = 8;

/// The most entries the index holds: three quarters of 2**32 buckets,
/// the most whose home the 32 stored bits of a hash can name.
pub const MAX_ENTRIES: usize = 3 << 30;

#[derive(Debug, Clone, Default)]
pub struct HashIndex {
    buckets: Vec<u64>,
    len: usize,
}

impl HashIndex {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[must_use]
    pub fn capacity(&self) -> usize {
        self.buckets.len()
    }

    /// The slot of the first entry for `hash` that `matches` accepts.
    pub fn find(&self, hash: u64, matches: impl FnMut(KeySlot) -> bool) -> Option<KeySlot> {
        let at = self.position(hash, matches)?;
        self.buckets.get(at).copied().map(slot_of)
    }

    /// Points the entry for `hash` that `matches` accepts at `slot`,
    /// handing back the slot it had; `None` if there is no such entry.
    pub fn replace(
        &mut self,
        hash: u64,
        matches: impl FnMut(KeySlot) -> bool,
        slot: KeySlot,
    ) -> Option<KeySlot> {
        let at = self.position(hash, matches)?;
        let bucket = self.buckets.get_mut(at)?;
        let old = slot_of(*bucket);
        *bucket = packed(hash, slot);
        Some(old)
    }

    /// Adds an entry for `hash`, which has none; `slot` must be below
    /// `u32::MAX` and the index must hold fewer than [`MAX_ENTRIES`].
    pub fn insert(&mut self, hash: u64, slot: KeySlot) {
        if (self.len + 1) * 4 > self.buckets.len() * 3 {
            self.resize((self.buckets.len() * 2).max(SMALLEST));
        }
        let mask = self.buckets.len() - 1;
        let mut at = self.home(hash);
        while self.buckets.get(at).is_some_and(|bucket| *bucket != EMPTY) {
            at = (at + 1) & mask;
        }
        if let Some(bucket) = self.buckets.get_mut(at) {
            *bucket = packed(hash, slot);
            self.len += 1;
        }
    }

    /// Removes the entry for `hash` that `matches` accepts, if any.
    pub fn remove(&mut self, hash: u64, matches: impl FnMut(KeySlot) -> bool) -> Option<KeySlot> {
        let mut hole = self.position(hash, matches)?;
        let removed = slot_of(*self.buckets.get(hole)?);
        let mask = self.buckets.len() - 1;
        // Each entry after the hole, up to the next empty bucket, moves
        // back into it unless its home lies after the hole (cyclically).
        let mut at = (hole + 1) & mask;
        while let Some(&bucket) = self.buckets.get(at).filter(|bucket| **bucket != EMPTY) {
            let home = self.home(bucket);
            let stays = if hole <= at {
                hole < home && home <= at
            } else {
                hole < home || home <= at
            };
            if !stays {
                self.buckets[hole] = bucket;
                hole = at;
            }
            at = (at + 1) & mask;
        }
        self.buckets[hole] = EMPTY;
        self.len -= 1;
        self.shrink_if_sparse();
        Some(removed)
    }

    /// Asks the CPU to start loading the bucket `hash` is looked up from,
    /// so that work on many keys in a row overlaps their cache misses.
    pub fn prefetch(&self, hash: u64) {
        if let Some(bucket) = self.buckets.get(self.home(hash)) {
            crate::key_slots::prefetch(bucket);
        }
    }

    /// The slot in `hash`'s home bucket if its stored bits match `hash`:
    /// where a lookup most likely ends, read without probing further.
    pub fn first_candidate(&self, hash: u64) -> Option<KeySlot> {
        let bucket = *self.buckets.get(self.home(hash))?;
        (bucket != EMPTY && bucket & FRAGMENT == hash & FRAGMENT).then(|| slot_of(bucket))
    }

    /// Gives memory back once a quarter or less of the room is in use:
    /// each shrink halves the room at least, so this is amortised O(1).
    fn shrink_if_sparse(&mut self) {
        if self.len == 0 {
            self.buckets = Vec::new();
        } else if self.buckets.len() > SMALLEST && self.len * 4 < self.buckets.len() {
            self.resize((self.len * 2).next_power_of_two().max(SMALLEST));
        }
    }

    fn resize(&mut self, capacity: usize) {
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; capacity]);
        let mask = capacity - 1;
        for bucket in old.into_iter().filter(|bucket| *bucket != EMPTY) {
            let mut at = self.home(bucket);
            while self.buckets[at] != EMPTY {
                at = (at + 1) & mask;
            }
            self.buckets[at] = bucket;
        }
    }

    /// Where the entry for `hash` that `matches` accepts sits.
    fn position(&self, hash: u64, mut matches: impl FnMut(KeySlot) -> bool) -> Option<usize> {
        if self.buckets.is_empty() {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let fragment = hash & FRAGMENT;
        let mut at = self.home(hash);
        loop {
            let bucket = *self.buckets.get(at)?;
            if bucket == EMPTY {
                return None;
            }
            if bucket & FRAGMENT == fragment && matches(slot_of(bucket)) {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// The first bucket probed for `hash` (or for a stored bucket, whose
    /// top bits are its hash's): from the top bits, so that the low bits,
    /// which may be all a poor hash varies, need not be spread over them.
    fn home(&self, hash: u64) -> usize {
        let bits = self.buckets.len().trailing_zeros();
        if bits == 0 {
            return 0;
        }
        // At most 2**32 buckets, so the shift keeps at most 32 bits.
        usize::try_from((hash & FRAGMENT) >> (64 - bits)).unwrap_or(0)
    }
}

fn packed(hash: u64, slot: KeySlot) -> u64 {
    (hash & FRAGMENT) | (u64::from(slot.raw()) + 1)
}

fn slot_of(bucket: u64) -> KeySlot {
    // The low 32 bits hold slot + 1, at least 1 in a full bucket.
    KeySlot::from_raw(u32::try_from((bucket & !FRAGMENT) - 1).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(n: u32) -> KeySlot {
        KeySlot::from_raw(n)
    }

    #[test]
    fn finds_what_it_holds_and_forgets_what_it_removes() {
        let mut index = HashIndex::default();
        // Hashes sharing their top bits probe the same buckets.
        let hashes: Vec<u64> = (0..1000u64)
            .map(|n| (n % 7) << 61 | (n << 32) | n)
            .collect();
        for (n, hash) in hashes.iter().enumerate() {
            index.insert(*hash, slot(u32::try_from(n).unwrap()));
        }
        assert_eq!(index.len(), 1000);
        for (n, hash) in hashes.iter().enumerate() {
            let want = slot(u32::try_from(n).unwrap());
            assert_eq!(index.find(*hash, |found| found == want), Some(want));
        }
        for (n, hash) in hashes.iter().enumerate().filter(|(n, _)| n % 3 == 0) {
            let gone = slot(u32::try_from(n).unwrap());
            assert_eq!(index.remove(*hash, |found| found == gone), Some(gone));
        }
        for (n, hash) in hashes.iter().enumerate() {
            let want = slot(u32::try_from(n).unwrap());
            let found = index.find(*hash, |found| found == want);
            assert_eq!(found, (n % 3 != 0).then_some(want));
        }
    }

    #[test]
    fn hashes_alike_in_their_top_bits_share_one_probe_run() {
        // Small hashes all have the same stored bits and home: one long run
        // of buckets, which removals from its middle must keep intact.
        let mut index = HashIndex::default();
        for n in 0..300u32 {
            index.insert(u64::from(n), slot(n));
        }
        for n in (0..300u32).filter(|n| n % 4 == 1 || n % 7 == 0) {
            assert_eq!(
                index.remove(u64::from(n), |found| found == slot(n)),
                Some(slot(n))
            );
        }
        for n in 0..300u32 {
            let kept = !(n % 4 == 1 || n % 7 == 0);
            let found = index.find(u64::from(n), |found| found == slot(n));
            assert_eq!(found, kept.then_some(slot(n)));
        }
    }

    #[test]
    fn replace_repoints_an_entry() {
        let mut index = HashIndex::default();
        index.insert(5 << 40, slot(1));
        assert_eq!(index.replace(5 << 40, |_| true, slot(9)), Some(slot(1)));
        assert_eq!(index.find(5 << 40, |_| true), Some(slot(9)));
        assert_eq!(index.replace(6 << 40, |_| true, slot(2)), None);
    }

    #[test]
    fn churn_keeps_the_room_it_needs_and_no_more() {
        let mut index = HashIndex::default();
        for n in 0..100u32 {
            index.insert(u64::from(n) << 40, slot(n));
        }
        let room = index.capacity();
        for round in 0..100_000u64 {
            let hash = round.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            index.insert(hash, slot(500));
            assert_eq!(
                index.remove(hash, |found| found == slot(500)),
                Some(slot(500))
            );
        }
        assert_eq!(index.capacity(), room);
        for n in 0..100u32 {
            assert_eq!(index.find(u64::from(n) << 40, |_| true), Some(slot(n)));
        }
        for n in 0..100u32 {
            index.remove(u64::from(n) << 40, |_| true);
        }
        assert_eq!(index.capacity(), 0);
    }
}
