//! Where each held key's state lives, found by the key's Ruby `hash`.
//!
//! Only hashes and slots are stored here; whether a candidate really is the
//! key (`eql?`) is decided by the caller, outside any borrow.
//!
//! Releasing a key does not touch this table: at a million keys that random
//! access would cost more than the rest of `take_closed` together. An entry
//! whose slot was released (or reused by another key) is skipped by lookups
//! and swept out the next time the table would have to grow, so it costs
//! 16 bytes for a while and nothing lasting.

use hashbrown::HashTable;
use window_machines_core::KeySlot;

#[derive(Clone, Copy)]
struct Entry {
    hash: u64,
    slot: KeySlot,
}

#[derive(Clone, Default)]
pub struct KeyTable {
    entries: HashTable<Entry>,
}

/// Spreads a Ruby hash value over all 64 bits (splitmix64's finaliser), so
/// that a `hash` method returning small numbers still fills the table evenly.
pub fn spread(ruby_hash: i64) -> u64 {
    let mut z = ruby_hash as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl KeyTable {
    /// The `nth` held slot whose key has this hash (usually there is at most one).
    pub fn candidate(&self, hash: u64, nth: usize) -> Option<KeySlot> {
        self.entries
            .iter_hash(hash)
            .filter(|entry| entry.hash == hash)
            .nth(nth)
            .map(|entry| entry.slot)
    }

    /// Indexes a newly held key. `holds(hash, slot)` says whether an
    /// existing entry is still current; stale ones are swept before growing.
    pub fn insert(&mut self, hash: u64, slot: KeySlot, holds: impl Fn(u64, KeySlot) -> bool) {
        if self.entries.len() == self.entries.capacity() {
            self.entries.retain(|entry| holds(entry.hash, entry.slot));
        }
        self.entries
            .insert_unique(hash, Entry { hash, slot }, |entry| entry.hash);
    }

    pub fn heap_bytes(&self) -> usize {
        self.entries.allocation_size()
    }
}
