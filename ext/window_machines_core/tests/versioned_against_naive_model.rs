//! VersionedTable against a naive model: a sorted map per key, pruned from
//! scratch after every change.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use window_machines_core::{KeyLookup, KeySlot, Placed, Record, VersionedTable};

#[derive(Debug, Clone)]
enum Op {
    Put(u8, i32, u64),
    Delete(u8, u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..5, any::<i32>(), 0u64..300).prop_map(|(key, value, ts)| Op::Put(key, value, ts)),
        1 => (0u8..5, 0u64..300).prop_map(|(key, ts)| Op::Delete(key, ts)),
    ]
}

/// Every version ever applied, by key and time (`None` a tombstone).
#[derive(Default)]
struct Model {
    retention: u64,
    stream_time: Option<u64>,
    versions: HashMap<u8, BTreeMap<u64, Option<i32>>>,
}

impl Model {
    fn cutoff(&self) -> Option<u64> {
        self.stream_time.map(|t| t.saturating_sub(self.retention))
    }

    fn late(&self, ts: u64) -> bool {
        self.cutoff().is_some_and(|cutoff| ts < cutoff)
    }

    fn record(&self, key: u8, ts: Option<u64>) -> Option<Record<i32>> {
        let versions = self.versions.get(&key)?;
        let (&latest, _) = versions.iter().next_back()?;
        let at = ts.unwrap_or(latest);
        let (&from, value) = versions.range(..=at).next_back()?;
        if self.late(at) && from != latest {
            return None;
        }
        let valid_to = versions.range(from + 1..).next().map(|(&to, _)| to);
        Some(Record {
            value: (*value)?,
            valid_from: from,
            valid_to,
        })
    }

    fn count(&self) -> usize {
        self.versions.values().map(BTreeMap::len).sum()
    }

    /// Drops, from scratch, what no query within the retention reaches: a
    /// version whose successor is at or before the cutoff, and a latest
    /// tombstone at or before it (with its key).
    fn prune(&mut self) {
        let Some(cutoff) = self.cutoff() else { return };
        for versions in self.versions.values_mut() {
            let times: Vec<u64> = versions.keys().copied().collect();
            for pair in times.windows(2) {
                if pair[1] <= cutoff {
                    versions.remove(&pair[0]);
                }
            }
            if versions.len() == 1
                && versions
                    .iter()
                    .all(|(&ts, value)| value.is_none() && ts <= cutoff)
            {
                versions.clear();
            }
        }
        self.versions.retain(|_, versions| !versions.is_empty());
    }

    fn apply(&mut self, key: u8, value: Option<i32>, ts: u64) -> Option<Placed> {
        if self.late(ts) {
            return None;
        }
        let versions = self.versions.entry(key).or_default();
        versions.insert(ts, value);
        let placed = match versions.range(ts + 1..).next() {
            Some((&valid_to, _)) => Placed::History { valid_to },
            None => Placed::Latest,
        };
        self.stream_time = Some(self.stream_time.map_or(ts, |t| t.max(ts)));
        self.prune();
        Some(placed)
    }
}

fn slot(table: &VersionedTable<u8, i32>, key: u8) -> Option<KeySlot> {
    let mut at = table.first_with_hash(u64::from(key % 2));
    while let Some(slot) = at {
        if table.key(slot) == Some(&key) {
            return Some(slot);
        }
        at = table.next_with_same_hash(slot);
    }
    None
}

proptest! {
    #[test]
    fn matches_the_model(retention in 0u64..80, ops in prop::collection::vec(op(), 1..200)) {
        let mut table: VersionedTable<u8, i32> = VersionedTable::new(retention);
        let mut model = Model { retention, ..Model::default() };
        for op in ops {
            match op {
                Op::Put(key, value, ts) => {
                    let found = slot(&table, key);
                    // Keys share hashes two by two, to exercise chains.
                    let got = table.put(found, u64::from(key % 2), &mut || key, Some(value), ts).ok();
                    prop_assert_eq!(got, model.apply(key, Some(value), ts));
                }
                Op::Delete(key, ts) => {
                    let expected = (!model.late(ts)).then(|| model.record(key, Some(ts))).flatten();
                    let found = slot(&table, key);
                    let got = table.delete(found, u64::from(key % 2), &mut || key, ts);
                    prop_assert_eq!(got.ok().flatten(), expected);
                    model.apply(key, None, ts);
                }
            }
            prop_assert_eq!(table.stream_time(), model.stream_time);
            prop_assert_eq!(table.version_count(), model.count());
            prop_assert_eq!(table.len(), model.versions.len());
            for key in 0u8..5 {
                for ts in (0..320).step_by(7).map(Some).chain([None]) {
                    let got = slot(&table, key).and_then(|slot| table.version(slot, ts)).map(|r| Record {
                        value: *r.value,
                        valid_from: r.valid_from,
                        valid_to: r.valid_to,
                    });
                    prop_assert_eq!(got, model.record(key, ts));
                }
            }
        }
    }
}
