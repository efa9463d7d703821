//! Values by key and time: "what was the value of this key at time t", with
//! the semantics of Kafka Streams' versioned key-value stores (KIP-889) and
//! the put result KIP-914 adds.
//!
//! Each key holds its versions sorted by timestamp; a version is valid from
//! its own timestamp until the next one's. The history retention is also
//! the grace period: a change older than the stream time (the largest
//! timestamp put or deleted) by more than the retention is refused, and a
//! query that old is answered only by the latest version. So no query can
//! reach a version whose validity ended at or before `stream time -
//! retention`, nor a latest tombstone that old; such versions are dropped as
//! the stream time passes them, through a heap of each key's next expiry,
//! never by a sweep over the keys. A key left with nothing is released.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{Error, Result};
use crate::key_slots::{KeyLookup, KeySlot, KeySlots, Prefetch};

/// A value at a time; `None` is a tombstone (the key deleted then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version<V> {
    pub timestamp: u64,
    pub value: Option<V>,
}

/// One key's versions, oldest first. Expiry drops from the front and most
/// puts land at the back, so both ends are cheap: with a `Vec`, every
/// expiry shifted all of a busy key's history (51 µs a put for a key
/// updated every tick under a retention of 160,000 ticks).
pub type Versions<V> = VecDeque<Version<V>>;

/// A version as a query answers it: the value and when it is valid,
/// `valid_to` excluded and `None` for the latest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<V> {
    pub value: V,
    pub valid_from: u64,
    pub valid_to: Option<u64>,
}

impl<V> Record<V> {
    /// The same record with its value passed through `f`.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Record<W> {
        Record {
            value: f(self.value),
            valid_from: self.valid_from,
            valid_to: self.valid_to,
        }
    }
}

/// Where a put landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// It is now its key's latest version.
    Latest,
    /// It went into the history, valid until the next newer version.
    History { valid_to: u64 },
}

/// The table, generic over the host's key and value types.
#[derive(Debug, Clone)]
pub struct VersionedTable<K, V> {
    retention: u64,
    stream_time: Option<u64>,
    late_count: u64,
    keys: KeySlots<K, Versions<V>>,
    /// Each key under the stream-time cutoff at which its oldest version
    /// (or its latest tombstone) stops being reachable, earliest first. A
    /// heap rather than the windowed trackers' closing queue: expiry times
    /// are as many as the versions, not a few window ends, and a heap
    /// entry is 16 bytes with no bucket around it. Entries go stale when a
    /// key's next expiry moves, and are skipped when they come due.
    expiring: BinaryHeap<Reverse<(u64, KeySlot)>>,
    versions: usize,
    /// The key restored last, while a checkpoint is read.
    restoring: Option<KeySlot>,
}

impl<K, V> KeyLookup for VersionedTable<K, V> {
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

impl<K, V> Default for VersionedTable<K, V> {
    fn default() -> Self {
        VersionedTable::new(0)
    }
}

/// The cutoff at which `versions` next lose something: when the oldest
/// stops being valid, or, for a lone tombstone, its own time.
fn next_expiry<V>(versions: &Versions<V>) -> Option<u64> {
    match (versions.front(), versions.get(1)) {
        (_, Some(next)) => Some(next.timestamp),
        (Some(only), None) if only.value.is_none() => Some(only.timestamp),
        _ => None,
    }
}

fn record<V>(versions: &Versions<V>, at: usize) -> Option<Record<&V>> {
    let version = versions.get(at)?;
    Some(Record {
        value: version.value.as_ref()?,
        valid_from: version.timestamp,
        valid_to: versions.get(at + 1).map(|next| next.timestamp),
    })
}

impl<K, V> VersionedTable<K, V> {
    /// An empty table keeping history for `retention` ticks of stream time.
    #[must_use]
    pub fn new(retention: u64) -> Self {
        VersionedTable {
            retention,
            stream_time: None,
            late_count: 0,
            keys: KeySlots::default(),
            expiring: BinaryHeap::new(),
            versions: 0,
            restoring: None,
        }
    }

    #[must_use]
    pub fn retention(&self) -> u64 {
        self.retention
    }

    #[must_use]
    pub fn stream_time(&self) -> Option<u64> {
        self.stream_time
    }

    #[must_use]
    pub fn late_count(&self) -> u64 {
        self.late_count
    }

    /// Keys held, those whose latest version is a tombstone included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Versions held, tombstones included.
    #[must_use]
    pub fn version_count(&self) -> usize {
        self.versions
    }

    /// The oldest timestamp a change may have and a query is fully answered
    /// for: the stream time less the retention.
    fn cutoff(&self) -> Option<u64> {
        self.stream_time
            .map(|time| time.saturating_sub(self.retention))
    }

    /// Refuses (and counts) a change at `timestamp` older than the cutoff.
    /// The watermark it reports is the newest refused time.
    fn admit(&mut self, timestamp: u64) -> Result<()> {
        match self.cutoff() {
            Some(cutoff) if timestamp < cutoff => {
                self.late_count = self.late_count.saturating_add(1);
                Err(Error::Late {
                    timestamp,
                    watermark: cutoff - 1,
                })
            }
            _ => Ok(()),
        }
    }

    /// Puts `value` (a tombstone for `None`) for the key at `slot`, or for
    /// a new key made by `make_key` under `hash`.
    pub fn put(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        make_key: &mut dyn FnMut() -> K,
        value: Option<V>,
        timestamp: u64,
    ) -> Result<Placed> {
        self.admit(timestamp)?;
        let slot = match slot {
            Some(slot) => slot,
            None => self.keys.hold(hash, make_key(), Versions::new())?,
        };
        let placed = self.place(slot, Version { timestamp, value })?;
        self.stream_time = Some(
            self.stream_time
                .map_or(timestamp, |time| time.max(timestamp)),
        );
        self.expire();
        Ok(placed)
    }

    /// Deletes the key at `slot` (or a key not held yet) from `timestamp`
    /// on, answering what was valid then.
    pub fn delete(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        make_key: &mut dyn FnMut() -> K,
        timestamp: u64,
    ) -> Result<Option<Record<V>>>
    where
        V: Clone,
    {
        self.admit(timestamp)?;
        let before = slot
            .and_then(|slot| self.version(slot, Some(timestamp)))
            .map(|record| record.map(Clone::clone));
        self.put(slot, hash, make_key, None, timestamp)?;
        Ok(before)
    }

    /// Files `version` among the key's versions, replacing one at the same
    /// time, and re-files the key's expiry if that moved.
    fn place(&mut self, slot: KeySlot, version: Version<V>) -> Result<Placed> {
        let Some(versions) = self.keys.state_mut(slot) else {
            debug_assert!(false, "a key just found or held has no state");
            return Err(Error::TooManyKeys { limit: 0 });
        };
        let expiry = next_expiry(versions);
        let at = match versions.binary_search_by_key(&version.timestamp, |held| held.timestamp) {
            Ok(at) => {
                if let Some(held) = versions.get_mut(at) {
                    *held = version;
                }
                at
            }
            Err(at) => {
                versions.insert(at, version);
                self.versions += 1;
                at
            }
        };
        let placed = match versions.get(at + 1) {
            Some(next) => Placed::History {
                valid_to: next.timestamp,
            },
            None => Placed::Latest,
        };
        let moved = next_expiry(versions);
        if moved != expiry {
            if let Some(due) = moved {
                self.expiring.push(Reverse((due, slot)));
            }
        }
        Ok(placed)
    }

    /// Drops what the cutoff has passed, key by key as each comes due.
    fn expire(&mut self) {
        let Some(cutoff) = self.cutoff() else {
            return;
        };
        while let Some(&Reverse((due, slot))) = self.expiring.peek() {
            if due > cutoff {
                break;
            }
            self.expiring.pop();
            let live = self.keys.state(slot).and_then(|held| next_expiry(held)) == Some(due);
            if live {
                self.expire_key(slot, cutoff);
            }
        }
        if self.expiring.len() > 2 * self.keys.len() + 64 {
            self.expiring = self
                .keys
                .iter()
                .filter_map(|(slot, _, versions)| Some(Reverse((next_expiry(versions)?, slot))))
                .collect();
        }
    }

    fn expire_key(&mut self, slot: KeySlot, cutoff: u64) {
        let Some(versions) = self.keys.state_mut(slot) else {
            return;
        };
        // The versions valid at or after the cutoff start with the last one
        // at or before it.
        let reachable_from = versions
            .partition_point(|version| version.timestamp <= cutoff)
            .saturating_sub(1);
        versions.drain(..reachable_from);
        self.versions -= reachable_from;
        // A key that once held many versions gives the memory back once it
        // holds few; halving at a quarter keeps this amortized constant.
        if versions.capacity() > 4 * versions.len().max(8) {
            versions.shrink_to(2 * versions.len());
        }
        let lone_old_tombstone = versions.len() == 1
            && versions
                .front()
                .is_some_and(|only| only.value.is_none() && only.timestamp <= cutoff);
        if lone_old_tombstone {
            self.keys.release(slot);
            self.versions -= 1;
        } else if let Some(due) = next_expiry(versions) {
            self.expiring.push(Reverse((due, slot)));
        }
    }

    /// The version of the key at `slot` valid at `timestamp` (the latest for
    /// `None`), if a query may still see it and it is not a tombstone.
    #[must_use]
    pub fn version(&self, slot: KeySlot, timestamp: Option<u64>) -> Option<Record<&V>> {
        let versions = self.keys.state(slot)?;
        let latest = versions.len().checked_sub(1)?;
        let Some(timestamp) = timestamp else {
            return record(versions, latest);
        };
        let at = versions
            .partition_point(|version| version.timestamp <= timestamp)
            .checked_sub(1)?;
        let too_old = self.cutoff().is_some_and(|cutoff| timestamp < cutoff);
        if too_old && at != latest {
            // Beyond the retention only the latest version answers.
            return None;
        }
        record(versions, at)
    }

    /// Every version of the key at `slot` a query can reach, oldest first,
    /// tombstones left out.
    pub fn history(&self, slot: KeySlot) -> impl Iterator<Item = Record<&V>> {
        self.keys
            .state(slot)
            .into_iter()
            .flat_map(|versions| (0..versions.len()).filter_map(move |at| record(versions, at)))
    }

    /// Every key in the order it started being held, with its versions
    /// (tombstones included), oldest first.
    #[must_use]
    pub fn keys(&self) -> Vec<(&K, &Versions<V>)> {
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(_, key, versions)| (key, versions))
            .collect()
    }

    /// The slots of every key held, in the order keys started being held.
    #[must_use]
    pub fn slots(&self) -> Vec<KeySlot> {
        self.keys
            .in_held_order()
            .into_iter()
            .map(|(slot, _, _)| slot)
            .collect()
    }

    /// Every key held with its versions, in no particular order: for a host
    /// that must account for each key and value.
    pub fn each_held(&self, mut f: impl FnMut(&K, &Versions<V>)) {
        for (_, key, versions) in self.keys.iter() {
            f(key, versions);
        }
    }

    /// Heap memory owned, not counting what keys and values own.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        let versions: usize = self
            .keys
            .iter()
            .map(|(_, _, versions)| versions.capacity() * std::mem::size_of::<Version<V>>())
            .sum();
        self.keys.heap_bytes()
            + self.expiring.capacity() * std::mem::size_of::<Reverse<(u64, KeySlot)>>()
            + versions
    }

    /// An empty table to read a checkpoint into: [`VersionedTable::restore`]
    /// each version, then [`VersionedTable::finish_restore`].
    #[must_use]
    pub fn restoring(retention: u64, stream_time: Option<u64>, late_count: u64) -> Self {
        VersionedTable {
            stream_time,
            late_count,
            ..VersionedTable::new(retention)
        }
    }

    /// Adds a checkpointed version. A key's versions come together, oldest
    /// first; a version no table could hold is refused.
    pub fn restore(
        &mut self,
        slot: Option<KeySlot>,
        hash: u64,
        make_key: &mut dyn FnMut() -> K,
        version: Version<V>,
    ) -> Result<()> {
        let stream_time = self.stream_time.ok_or(Error::VersionsWithoutStreamTime)?;
        if version.timestamp > stream_time {
            return Err(Error::VersionAfterStreamTime {
                timestamp: version.timestamp,
                stream_time,
            });
        }
        let slot = match slot {
            None => self.keys.hold(hash, make_key(), Versions::new())?,
            Some(slot) if Some(slot) == self.restoring => slot,
            Some(_) => return Err(Error::KeyRepeated),
        };
        self.restoring = Some(slot);
        let Some(versions) = self.keys.state_mut(slot) else {
            debug_assert!(false, "a key just found or held has no state");
            return Err(Error::TooManyKeys { limit: 0 });
        };
        if let Some(last) = versions.back() {
            if last.timestamp >= version.timestamp {
                return Err(Error::VersionsOutOfOrder {
                    earlier: last.timestamp,
                    later: version.timestamp,
                });
            }
        }
        versions.push_back(version);
        self.versions += 1;
        Ok(())
    }

    /// Checks that every restored version is still reachable and that late
    /// puts had a stream time to be late by, and indexes the keys' expiry.
    pub fn finish_restore(&mut self) -> Result<()> {
        self.restoring = None;
        if self.late_count > 0 && self.stream_time.is_none() {
            return Err(Error::LateWithoutWatermark {
                late_count: self.late_count,
            });
        }
        let cutoff = self.cutoff();
        let mut live = Vec::new();
        for (slot, _, versions) in self.keys.iter() {
            let Some(due) = next_expiry(versions) else {
                continue;
            };
            if cutoff.is_some_and(|cutoff| due <= cutoff) {
                return Err(Error::ExpiredVersion {
                    timestamp: versions.front().map_or(due, |first| first.timestamp),
                    cutoff: cutoff.unwrap_or_default(),
                });
            }
            live.push(Reverse((due, slot)));
        }
        self.expiring = BinaryHeap::from(live);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are strings hashed by their first byte, so tests can collide them.
    struct Table(VersionedTable<&'static str, i64>);

    impl Table {
        fn new(retention: u64) -> Table {
            Table(VersionedTable::new(retention))
        }

        fn slot(&self, key: &str) -> Option<KeySlot> {
            self.0.keys.find_key(hash(key), |held| *held == key)
        }

        fn put(&mut self, key: &'static str, value: i64, at: u64) -> Result<Placed> {
            let slot = self.slot(key);
            self.0.put(slot, hash(key), &mut || key, Some(value), at)
        }

        fn delete(&mut self, key: &'static str, at: u64) -> Result<Option<Record<i64>>> {
            let slot = self.slot(key);
            self.0.delete(slot, hash(key), &mut || key, at)
        }

        fn get(&self, key: &str, at: Option<u64>) -> Option<i64> {
            self.0
                .version(self.slot(key)?, at)
                .map(|record| *record.value)
        }

        fn history(&self, key: &str) -> Vec<(i64, u64, Option<u64>)> {
            self.slot(key).map_or_else(Vec::new, |slot| {
                self.0
                    .history(slot)
                    .map(|record| (*record.value, record.valid_from, record.valid_to))
                    .collect()
            })
        }
    }

    fn hash(key: &str) -> u64 {
        u64::from(key.as_bytes().first().copied().unwrap_or_default())
    }

    #[test]
    fn answers_as_of_a_time_and_says_where_a_put_landed() {
        let mut table = Table::new(100);
        assert_eq!(table.put("eur", 10, 50), Ok(Placed::Latest));
        assert_eq!(table.put("eur", 12, 80), Ok(Placed::Latest));
        assert_eq!(
            table.put("eur", 11, 60),
            Ok(Placed::History { valid_to: 80 })
        );
        assert_eq!(table.get("eur", None), Some(12));
        assert_eq!(table.get("eur", Some(49)), None);
        assert_eq!(table.get("eur", Some(59)), Some(10));
        assert_eq!(table.get("eur", Some(60)), Some(11));
        assert_eq!(table.get("eur", Some(u64::MAX)), Some(12));
        assert_eq!(
            table.history("eur"),
            [(10, 50, Some(60)), (11, 60, Some(80)), (12, 80, None)]
        );
        assert_eq!(
            table.put("eur", 13, 60),
            Ok(Placed::History { valid_to: 80 })
        );
        assert_eq!(table.0.version_count(), 3);
    }

    #[test]
    fn refuses_changes_older_than_the_retention_and_counts_them() {
        let mut table = Table::new(10);
        table.put("a", 1, 100).unwrap();
        assert_eq!(table.put("a", 2, 90), Ok(Placed::History { valid_to: 100 }));
        assert_eq!(
            table.put("a", 3, 89),
            Err(Error::Late {
                timestamp: 89,
                watermark: 89
            })
        );
        assert_eq!(
            table.delete("b", 89).map(|_| ()),
            table.put("a", 3, 89).map(|_| ())
        );
        assert_eq!(table.0.late_count(), 3);
        assert_eq!(table.0.len(), 1);
    }

    #[test]
    fn beyond_the_retention_only_the_latest_answers() {
        let mut table = Table::new(10);
        table.put("a", 1, 0).unwrap();
        table.put("a", 2, 5).unwrap();
        table.put("b", 1, 100).unwrap();
        // Cutoff 90: a's versions are valid from 0 and 5; 5 is the latest.
        assert_eq!(table.get("a", Some(4)), None);
        assert_eq!(table.get("a", Some(5)), Some(2));
        assert_eq!(table.history("a"), [(2, 5, None)]);
        assert_eq!(table.0.version_count(), 2);
    }

    #[test]
    fn tombstones_hide_values_and_expire_with_their_key() {
        let mut table = Table::new(10);
        table.put("a", 1, 10).unwrap();
        assert_eq!(
            table.delete("a", 20),
            Ok(Some(Record {
                value: 1,
                valid_from: 10,
                valid_to: None
            }))
        );
        assert_eq!(table.get("a", None), None);
        assert_eq!(table.get("a", Some(15)), Some(1));
        // An older put lands before the tombstone, not after it.
        assert_eq!(table.put("a", 2, 15), Ok(Placed::History { valid_to: 20 }));
        assert_eq!(table.delete("a", 20), Ok(None));
        table.put("b", 1, 29).unwrap();
        assert_eq!(table.0.len(), 2);
        table.put("b", 1, 30).unwrap();
        assert_eq!(table.0.len(), 1);
        assert_eq!(table.0.version_count(), 2);
    }

    #[test]
    fn zero_retention_keeps_only_the_latest() {
        let mut table = Table::new(0);
        for at in 0..1000 {
            table.put("a", 1, at).unwrap();
        }
        assert_eq!(table.0.version_count(), 1);
        assert!(table.put("a", 1, 998).is_err());
        assert_eq!(table.put("a", 2, 999), Ok(Placed::Latest));
    }

    /// One busy key, its ring buffer wrapped around many times, against
    /// every version ever put: the history is the versions still valid at
    /// or after the cutoff, in order, whatever the puts' order.
    #[test]
    fn a_busy_key_keeps_its_reachable_history_in_order() {
        let retention = 7;
        let mut table = Table::new(retention);
        let mut all = std::collections::BTreeMap::new();
        for step in 0..2_000_u64 {
            // In order, with every fifth put 1 to 6 ticks behind the
            // newest (replacing it, or into the history's middle), never
            // older than the retention allows.
            let at = if step % 5 == 4 {
                step - 1 - (step / 5) % 6
            } else {
                step
            };
            let value = i64::try_from(step).unwrap();
            table.put("k", value, at).unwrap();
            all.insert(at, value);
            let cutoff = table.0.cutoff().unwrap();
            let times: Vec<u64> = all.keys().copied().collect();
            let expected: Vec<(i64, u64, Option<u64>)> = times
                .iter()
                .enumerate()
                .map(|(n, &from)| (all[&from], from, times.get(n + 1).copied()))
                .filter(|&(_, _, to)| to.is_none_or(|to| to > cutoff))
                .collect();
            assert_eq!(table.history("k"), expected, "after the put at {at}");
        }
        assert!(table.0.version_count() <= usize::try_from(retention).unwrap() + 2);
    }

    #[test]
    fn a_key_that_held_many_versions_gives_the_memory_back() {
        let mut table = Table::new(100_000);
        for at in 0..100_000 {
            table.put("k", 1, at).unwrap();
        }
        let full = table.0.heap_bytes();
        // Far past the retention: all but the newest two expire.
        table.put("k", 2, 1_000_000).unwrap();
        assert_eq!(table.0.version_count(), 2);
        assert!(
            table.0.heap_bytes() < full / 100,
            "{} of {full} bytes",
            table.0.heap_bytes()
        );
    }

    #[test]
    fn churn_leaves_nothing_behind() {
        let mut table = Table::new(5);
        for at in 0..200_000_u64 {
            let key = if at % 2 == 0 { "x" } else { "y" };
            table.put(key, 1, at).unwrap();
            table.delete(key, at + 1).unwrap();
        }
        assert!(table.0.len() <= 2);
        assert!(table.0.version_count() <= 12);
        assert!(table.0.heap_bytes() < 4096);
    }

    #[test]
    fn restore_checks_what_no_table_could_hold() {
        let restored = |versions: &[(&'static str, u64, Option<i64>)]| {
            let mut table: VersionedTable<&str, i64> = VersionedTable::restoring(10, Some(100), 0);
            let mut slots: Vec<(&str, KeySlot)> = Vec::new();
            for (key, timestamp, value) in versions {
                let slot = slots
                    .iter()
                    .find(|(held, _)| held == key)
                    .map(|(_, slot)| *slot);
                table.restore(
                    slot,
                    hash(key),
                    &mut || *key,
                    Version {
                        timestamp: *timestamp,
                        value: *value,
                    },
                )?;
                if slot.is_none() {
                    slots.push((*key, table.restoring.unwrap()));
                }
            }
            table.finish_restore().map(|()| table)
        };
        assert!(restored(&[("a", 80, Some(1)), ("a", 95, Some(2)), ("b", 91, None)]).is_ok());
        assert_eq!(
            restored(&[("a", 95, Some(1)), ("a", 80, Some(2))]).err(),
            Some(Error::VersionsOutOfOrder {
                earlier: 95,
                later: 80
            })
        );
        assert_eq!(
            restored(&[("a", 80, Some(1)), ("b", 80, Some(1)), ("a", 95, Some(2))]).err(),
            Some(Error::KeyRepeated)
        );
        assert!(matches!(
            restored(&[("a", 101, Some(1))]),
            Err(Error::VersionAfterStreamTime { .. })
        ));
        assert!(matches!(
            restored(&[("a", 80, Some(1)), ("a", 90, Some(2))]),
            Err(Error::ExpiredVersion { .. })
        ));
        assert!(matches!(
            restored(&[("a", 90, None)]),
            Err(Error::ExpiredVersion { .. })
        ));
    }
}
