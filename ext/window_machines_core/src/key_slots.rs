//! Per-key state for every keyed tracker: where each held key lives, found
//! by a hash the caller computes, and released for good when the key goes.
//!
//! The table knows nothing of what makes two keys equal: callers walk the
//! slots whose key has a given hash ([`KeySlots::first_with_hash`],
//! [`KeySlots::next_with_same_hash`]) and decide with their own equality,
//! which for a binding may run foreign code between two steps. The index
//! holds one entry per distinct hash; keys that share a hash are chained
//! through their slots, so a lookup costs one probe plus one step per key
//! of that hash, however many keys collide. Releasing a key removes it from
//! the index at once, so cost and memory depend only on what is held now.

use std::collections::VecDeque;

use crate::error::{Error, Result};
use crate::hash_index::{HashIndex, MAX_ENTRIES};

/// Where a key's state lives while the key is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeySlot(u32);

impl KeySlot {
    pub(crate) fn index(self) -> usize {
        // u32 to usize is lossless on every target this crate builds for.
        self.0 as usize
    }

    pub(crate) fn raw(self) -> u32 {
        self.0
    }

    pub(crate) fn from_raw(raw: u32) -> KeySlot {
        KeySlot(raw)
    }
}

/// How a caller that decides key equality itself walks a keyed tracker's
/// keys: every held key whose hash is `hash` is reached from
/// [`KeyLookup::first_with_hash`] through [`KeyLookup::next_with_same_hash`],
/// provided nothing is held or released in between.
pub trait KeyLookup {
    type Key;
    /// The longest-held slot whose key has `hash`.
    fn first_with_hash(&self, hash: u64) -> Option<KeySlot>;
    /// The next held slot after `slot` whose key has the same hash, in
    /// the order they came to be held.
    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot>;
    /// The key held at `slot`, if any.
    fn key(&self, slot: KeySlot) -> Option<&Self::Key>;
    /// Starts loading what looking `hash` up will read, a stage at a
    /// time, so that a caller going through many keys overlaps their
    /// cache misses. Only a hint: it changes nothing.
    fn prefetch(&self, hash: u64, stage: Prefetch);

    /// The held slot whose key has `hash` and satisfies `is_key`.
    fn find_key(&self, hash: u64, mut is_key: impl FnMut(&Self::Key) -> bool) -> Option<KeySlot>
    where
        Self: Sized,
    {
        let mut slot = self.first_with_hash(hash);
        while let Some(candidate) = slot {
            if self.key(candidate).is_some_and(&mut is_key) {
                return Some(candidate);
            }
            slot = self.next_with_same_hash(candidate);
        }
        None
    }
}

/// What [`KeyLookup::prefetch`] loads. A caller asks for a key's
/// [`Prefetch::Bucket`] some time before its [`Prefetch::Entry`], which
/// reads the bucket to learn which entry to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefetch {
    /// The index bucket the lookup starts from.
    Bucket,
    /// The entry of the key that bucket names, if it names one for `hash`.
    Entry,
}

#[derive(Debug, Clone)]
struct Held<K, S> {
    key: K,
    hash: u64,
    /// When the key started being held, counted across the table's life:
    /// the order checkpoints list keys in, and a tie-breaker for trackers.
    seen: u64,
    /// The next held key with the same hash, held since later.
    next_same_hash: Option<KeySlot>,
    state: S,
}

/// Held keys, each with its hash and a state `S`.
#[derive(Debug, Clone)]
pub struct KeySlots<K, S> {
    held: Vec<Option<Held<K, S>>>,
    /// Released slots, reused oldest first: keys then sit in the table
    /// roughly in the order they arrive and leave, so consecutive
    /// operations touch nearby memory.
    vacant: VecDeque<u32>,
    /// The longest-held slot of each hash; the rest are chained after it
    /// in the order they came, so that a lookup tries keys oldest first,
    /// as a Hash does: with an `eql?` that is not symmetric (a String
    /// subclass that also compares classes), two held keys may both take
    /// a lookup, and a Hash answers with the older.
    by_hash: HashIndex,
    next_seen: u64,
}

impl<K, S> Default for KeySlots<K, S> {
    fn default() -> Self {
        KeySlots {
            held: Vec::new(),
            vacant: VecDeque::new(),
            by_hash: HashIndex::default(),
            next_seen: 0,
        }
    }
}

impl<K, S> KeyLookup for KeySlots<K, S> {
    type Key = K;

    fn first_with_hash(&self, hash: u64) -> Option<KeySlot> {
        let held = &self.held;
        self.by_hash
            .find(hash, |slot| hash_at(held, slot) == Some(hash))
    }

    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot> {
        self.entry(slot)?.next_same_hash
    }

    fn key(&self, slot: KeySlot) -> Option<&K> {
        self.entry(slot).map(|entry| &entry.key)
    }

    fn prefetch(&self, hash: u64, stage: Prefetch) {
        match stage {
            Prefetch::Bucket => self.by_hash.prefetch(hash),
            Prefetch::Entry => {
                if let Some(slot) = self.by_hash.first_candidate(hash) {
                    self.prefetch_slot(slot);
                }
            }
        }
    }
}

impl<K, S> KeySlots<K, S> {
    /// Keys held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.held.len() - self.vacant.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entry(&self, slot: KeySlot) -> Option<&Held<K, S>> {
        self.held.get(slot.index())?.as_ref()
    }

    fn entry_mut(&mut self, slot: KeySlot) -> Option<&mut Held<K, S>> {
        self.held.get_mut(slot.index())?.as_mut()
    }

    /// The hash the key at `slot` was held under.
    #[must_use]
    pub fn hash(&self, slot: KeySlot) -> Option<u64> {
        self.entry(slot).map(|entry| entry.hash)
    }

    /// When the key at `slot` started being held, relative to the others.
    #[must_use]
    pub fn seen(&self, slot: KeySlot) -> Option<u64> {
        self.entry(slot).map(|entry| entry.seen)
    }

    #[must_use]
    pub fn state(&self, slot: KeySlot) -> Option<&S> {
        self.entry(slot).map(|entry| &entry.state)
    }

    pub fn state_mut(&mut self, slot: KeySlot) -> Option<&mut S> {
        self.entry_mut(slot).map(|entry| &mut entry.state)
    }

    /// Starts holding `key` under `hash` with `state`. The caller has made
    /// sure no held key equals it.
    pub fn hold(&mut self, hash: u64, key: K, state: S) -> Result<KeySlot> {
        if self.len() >= MAX_ENTRIES {
            return Err(Error::TooManyKeys {
                limit: MAX_ENTRIES as u64,
            });
        }
        let slot = match self.vacant.pop_front() {
            Some(index) => {
                // The slot the next new key will take was released long
                // ago, and is no longer in the cache: start loading it.
                if let Some(&next) = self.vacant.front() {
                    self.prefetch_slot(KeySlot(next));
                }
                KeySlot(index)
            }
            None => {
                // Below MAX_ENTRIES, so below u32::MAX.
                let index = u32::try_from(self.held.len()).map_err(|_| Error::TooManyKeys {
                    limit: MAX_ENTRIES as u64,
                })?;
                self.held.push(None);
                KeySlot(index)
            }
        };
        match self.first_with_hash(hash) {
            None => self.by_hash.insert(hash, slot),
            Some(mut last) => {
                while let Some(next) = self.next_with_same_hash(last) {
                    last = next;
                }
                if let Some(entry) = self.entry_mut(last) {
                    entry.next_same_hash = Some(slot);
                }
            }
        }
        let seen = self.next_seen;
        self.next_seen += 1;
        let entry = self.held.get_mut(slot.index());
        debug_assert!(entry.as_ref().is_some_and(|entry| entry.is_none()));
        if let Some(entry) = entry {
            *entry = Some(Held {
                key,
                hash,
                seen,
                next_same_hash: None,
                state,
            });
        }
        Ok(slot)
    }

    /// Stops holding the key at `slot`, handing back the key and its state.
    pub fn release(&mut self, slot: KeySlot) -> Option<(K, S)> {
        let held = self.held.get_mut(slot.index())?.take()?;
        self.unchain(slot, held.hash, held.next_same_hash);
        self.vacant.push_back(slot.0);
        self.shrink_after_release();
        Some((held.key, held.state))
    }

    /// Gives the slots' memory back once no key is held, so that a burst
    /// of keys costs nothing after it is gone (the index shrinks itself as
    /// keys leave).
    fn shrink_after_release(&mut self) {
        const SMALL: usize = 64;
        if self.is_empty() {
            self.held.clear();
            self.vacant.clear();
            if self.held.capacity() > SMALL {
                self.held.shrink_to_fit();
                self.vacant.shrink_to_fit();
            }
        }
    }

    /// Removes `slot`, no longer in `held`, from the chain of keys with
    /// `hash`.
    fn unchain(&mut self, slot: KeySlot, hash: u64, next: Option<KeySlot>) {
        let held = &self.held;
        let is_head = |head: KeySlot| head == slot || hash_at(held, head) == Some(hash);
        if self.by_hash.find(hash, is_head) == Some(slot) {
            match next {
                Some(next) => self.by_hash.replace(hash, |head| head == slot, next),
                None => self.by_hash.remove(hash, |head| head == slot),
            };
            return;
        }
        let mut previous = self.first_with_hash(hash);
        while let Some(at) = previous {
            let Some(entry) = self.entry_mut(at) else {
                break;
            };
            if entry.next_same_hash == Some(slot) {
                entry.next_same_hash = next;
                return;
            }
            previous = entry.next_same_hash;
        }
        debug_assert!(false, "a held key was missing from its hash chain");
    }

    /// Asks the CPU to start loading a slot that is about to be needed, so
    /// that work on many keys in a row overlaps their cache misses.
    pub fn prefetch_slot(&self, slot: KeySlot) {
        if let Some(entry) = self.held.get(slot.index()) {
            prefetch(entry);
        }
    }

    /// For a caller that hands keys over in a known order: starts loading
    /// the index bucket of `next`, the key handed over next, which its
    /// release will read. Its entry, loaded ahead already, gives its hash.
    pub fn prefetch_bucket_of(&self, next: Option<KeySlot>) {
        if let Some(hash) = next.and_then(|next| self.hash(next)) {
            self.by_hash.prefetch(hash);
        }
    }

    /// Every held key with its slot and state, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (KeySlot, &K, &S)> {
        self.held.iter().enumerate().filter_map(|(index, entry)| {
            let entry = entry.as_ref()?;
            // Slot indexes were made from u32 in `hold`.
            let slot = KeySlot(u32::try_from(index).ok()?);
            Some((slot, &entry.key, &entry.state))
        })
    }

    /// Every held key with its slot and state, in the order keys started
    /// being held.
    #[must_use]
    pub fn in_held_order(&self) -> Vec<(KeySlot, &K, &S)> {
        let mut held: Vec<_> = self.iter().collect();
        held.sort_by_key(|(slot, _, _)| self.seen(*slot));
        held
    }

    /// Heap memory the table owns, not counting what `S` owns.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.held.capacity() * size_of::<Option<Held<K, S>>>()
            + self.vacant.capacity() * size_of::<u32>()
            + self.by_hash.capacity() * size_of::<u64>()
    }
}

/// Asks the CPU to start loading `value` into its caches: every cache line
/// it spans, since a key's entry (its key, hash and state) is read whole.
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_bytes(std::ptr::from_ref(value).cast(), std::mem::size_of::<T>());
}

/// Asks the CPU to start loading every cache line of the `len` bytes from
/// `start`, which need not be valid.
pub(crate) fn prefetch_bytes(start: *const u8, len: usize) {
    const LINE: usize = 64;
    let offset = start.addr() % LINE;
    let mut line = 0;
    while line < offset + len {
        prefetch_address(start.wrapping_add(line).wrapping_sub(offset));
        line += LINE;
    }
}

/// Asks the CPU to start loading the memory at `address`, which need not
/// be valid: the pointer is never read through.
pub fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults, whatever the address, and has no
        // effect a program can observe but timing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// The hash the key at `slot` is held under, if it is held.
fn hash_at<K, S>(held: &[Option<Held<K, S>>], slot: KeySlot) -> Option<u64> {
    Some(held.get(slot.index())?.as_ref()?.hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys as strings with a hash chosen by the test, equality by content.
    fn find(slots: &KeySlots<&'static str, u32>, hash: u64, key: &str) -> Option<KeySlot> {
        slots.find_key(hash, |held| *held == key)
    }

    #[test]
    fn holds_finds_and_releases() {
        let mut slots = KeySlots::default();
        let a = slots.hold(1, "a", 10).unwrap();
        let b = slots.hold(2, "b", 20).unwrap();
        assert_eq!(find(&slots, 1, "a"), Some(a));
        assert_eq!(find(&slots, 2, "b"), Some(b));
        assert_eq!(find(&slots, 1, "b"), None);
        assert_eq!(slots.state(b), Some(&20));
        assert_eq!(slots.release(a), Some(("a", 10)));
        assert_eq!(find(&slots, 1, "a"), None);
        assert_eq!(slots.release(a), None);
        assert_eq!(slots.len(), 1);
        assert_eq!(slots.key(b), Some(&"b"));
    }

    #[test]
    fn keys_sharing_a_hash_are_chained_and_unchained_in_any_order() {
        let mut slots = KeySlots::default();
        let names = ["a", "b", "c", "d", "e"];
        let held: Vec<KeySlot> = names
            .iter()
            .map(|name| slots.hold(7, *name, 0).unwrap())
            .collect();
        for (name, slot) in names.iter().zip(&held) {
            assert_eq!(find(&slots, 7, name), Some(*slot));
        }
        // Middle, tail (most recent), head.
        for gone in [2, 4, 0] {
            slots.release(held[gone]).unwrap();
            assert_eq!(find(&slots, 7, names[gone]), None);
        }
        for kept in [1, 3] {
            assert_eq!(find(&slots, 7, names[kept]), Some(held[kept]));
        }
        let mut walked = Vec::new();
        let mut at = slots.first_with_hash(7);
        while let Some(slot) = at {
            walked.push(*slots.key(slot).unwrap());
            at = slots.next_with_same_hash(slot);
        }
        assert_eq!(walked, ["b", "d"]);
        let f = slots.hold(7, "f", 0).unwrap();
        let a = slots.hold(7, "a", 0).unwrap();
        let mut walked = Vec::new();
        let mut at = slots.first_with_hash(7);
        while let Some(slot) = at {
            walked.push(slot);
            at = slots.next_with_same_hash(slot);
        }
        assert_eq!(walked, [held[1], held[3], f, a]);
    }

    #[test]
    fn churn_leaves_nothing_behind() {
        let mut slots = KeySlots::default();
        let steady: Vec<KeySlot> = (0..20)
            .map(|n| slots.hold(n, "steady", 0).unwrap())
            .collect();
        // One cycle first: the list of released slots takes its room once.
        for _ in 0..2 {
            let slot = slots.hold(99, "user", 0).unwrap();
            slots.release(slot).unwrap();
        }
        let fresh_bytes = slots.heap_bytes();
        for _ in 0..1_000_000 {
            let slot = slots.hold(99, "user", 0).unwrap();
            slots.release(slot).unwrap();
        }
        assert_eq!(slots.heap_bytes(), fresh_bytes);
        let slot = slots.hold(99, "user", 0).unwrap();
        assert_eq!(slots.by_hash.len(), 21);
        assert_eq!(slots.held.len(), 21);
        assert_eq!(find(&slots, 99, "user"), Some(slot));
        assert_eq!(steady.len() + 1, slots.len());
    }

    #[test]
    fn an_emptied_table_starts_afresh() {
        let mut slots = KeySlots::default();
        let held: Vec<KeySlot> = (0..1000).map(|n| slots.hold(n, "k", 0).unwrap()).collect();
        for slot in held {
            slots.release(slot);
        }
        assert!(slots.is_empty());
        assert_eq!(slots.held.len(), 0);
        assert!(slots.by_hash.is_empty());
        assert_eq!(slots.by_hash.capacity(), 0);
    }

    #[test]
    fn lists_keys_in_the_order_they_were_held() {
        let mut slots = KeySlots::default();
        let a = slots.hold(1, "a", 0).unwrap();
        slots.hold(2, "b", 0).unwrap();
        slots.release(a);
        slots.hold(3, "c", 0).unwrap();
        let order: Vec<&str> = slots
            .in_held_order()
            .into_iter()
            .map(|(_, key, _)| *key)
            .collect();
        assert_eq!(order, ["b", "c"]);
    }
}
