//! VersionedTable checkpoints: `{history_retention:, stream_time:,
//! late_count:, versions: [[key, timestamp, value], [key, timestamp], ...]}`,
//! a two-element entry being a tombstone; grouped by key, keys in the order
//! they started being held, each key's versions oldest first. `marshal_dump`
//! adds `on_late:`; `from_h` takes it as an argument, since a callable is
//! code, not state.

use magnus::{prelude::*, typed_data::Obj, Error, RArray, RHash, Ruby, Value};
use window_machines_core::Version;

use crate::aggregating::OnLate;
use crate::checkpoint::{optional_u64, read_fields};
use crate::convert::{entry, to_u64};
use crate::errors::{described, wrong_type, OrRaise};
use crate::hash_key::json_problem;
use crate::held::{hold, Keep};
use crate::key_lookup::file_under;
use crate::restore::Stateful;
use crate::versioned_table::{RbVersionedTable, State, StoredValue, Table};

const FIELDS: [&str; 5] = [
    "history_retention",
    "stream_time",
    "late_count",
    "versions",
    "on_late",
];

/// Which checkpoint to write.
pub enum Form {
    /// `to_h`: only keys that come back from JSON as equal keys, no on_late.
    Json,
    /// `marshal_dump`: any key, and on_late.
    Marshal,
}

pub fn dump(ruby: &Ruby, this: &RbVersionedTable, form: Form) -> Result<RHash, Error> {
    type Versions = Vec<(Value, Vec<(u64, Option<Value>)>)>;
    // Copied out first; the table keeps holding (and marking) every key and
    // value while the checkpoint is built.
    let (retention, stream_time, late_count, on_late, keys): (_, _, _, _, Versions) =
        this.0.read(ruby, |state| {
            let table = &state.table;
            let keys = table
                .keys()
                .into_iter()
                .map(|(key, versions)| {
                    let versions = versions
                        .iter()
                        .map(|version| {
                            let value = version.value.map(StoredValue::value);
                            (version.timestamp, value)
                        })
                        .collect();
                    (ruby.get_inner(*key), versions)
                })
                .collect();
            (
                table.retention(),
                table.stream_time(),
                table.late_count(),
                state.on_late,
                keys,
            )
        })?;
    let entries = ruby.ary_new();
    for (key, versions) in keys {
        if let (Form::Json, Some(problem)) = (&form, json_problem(ruby, key)) {
            return Err(wrong_type(
                ruby,
                format!(
                    "key {} has no exact JSON form ({problem}); use Marshal",
                    described(key)
                ),
            ));
        }
        for (timestamp, value) in versions {
            let timestamp = ruby.integer_from_u64(timestamp).as_value();
            let entry = match value {
                Some(value) => ruby.ary_new_from_values(&[key, timestamp, value]),
                None => ruby.ary_new_from_values(&[key, timestamp]),
            };
            entries.push(entry)?;
        }
    }
    let hash = ruby.hash_new();
    hash.aset(ruby.to_symbol("history_retention"), retention)?;
    hash.aset(ruby.to_symbol("stream_time"), stream_time)?;
    hash.aset(ruby.to_symbol("late_count"), late_count)?;
    hash.aset(ruby.to_symbol("versions"), entries)?;
    if let Form::Marshal = form {
        hash.aset(ruby.to_symbol("on_late"), on_late.value(ruby))?;
    }
    Ok(hash)
}

/// Reads a checkpoint (with `on_late:`) into `fresh`. Each key and value
/// goes straight into the table, found and held as `put` finds and holds
/// them, so the GC sees it from the moment it is read.
pub fn restore(ruby: &Ruby, fresh: Obj<RbVersionedTable>, input: Value) -> Result<(), Error> {
    // Pinned as soon as they are read, whatever the input becomes: the
    // holder is made first, so reading and pinning allocate nothing.
    let mut keep = Keep::ready(ruby);
    let mut values = [ruby.qnil().as_value(); FIELDS.len()];
    read_fields(ruby, input, &FIELDS, &[], &mut values)?;
    for value in &values {
        keep.push(ruby, *value)?;
    }
    let [retention, stream_time, late_count, versions, on_late] = values;
    let retention = to_u64(ruby, "history_retention", retention)?;
    let stream_time = optional_u64(ruby, "stream_time", stream_time)?;
    let late_count = to_u64(ruby, "late_count", late_count)?;
    let versions = RArray::from_value(versions).ok_or_else(|| {
        wrong_type(
            ruby,
            format!(
                "versions must be an Array of [key, timestamp, value] or [key, timestamp], got {}",
                described(versions)
            ),
        )
    })?;
    let on_late = OnLate::new(ruby, Some(on_late))?;
    let owner = fresh.as_value();
    let state = State {
        table: Table::restoring(retention, stream_time, late_count),
        on_late,
    };
    fresh.put_state(ruby, owner, state)?;
    // By index: a user's `hash` may change the Array; its length is read anew.
    let mut index = 0;
    while index < versions.len() {
        let (key, timestamp, value) = version_at(ruby, versions, index)?;
        // Read with nothing allocated since; `hash`, `eql?` and storing the
        // key may run the GC before the table holds them.
        keep.push(ruby, key)?;
        if let Some(value) = value {
            keep.push(ruby, value)?;
        }
        file_under(ruby, owner, &fresh.0, key, |state, found, make_key| {
            let value = value.and_then(|value| {
                hold(owner, value);
                StoredValue::new(value)
            });
            let version = Version { timestamp, value };
            state
                .table
                .restore(found.slot, found.hash, make_key, version)
        })?
        .or_raise(ruby)?;
        index += 1;
    }
    fresh
        .0
        .write(ruby, |state| state.table.finish_restore())?
        .or_raise(ruby)
}

/// `[key, timestamp, value]` or `[key, timestamp]` at `versions[index]`.
fn version_at(
    ruby: &Ruby,
    versions: RArray,
    index: usize,
) -> Result<(Value, u64, Option<Value>), Error> {
    let given = entry(ruby, versions, index)?;
    let array = RArray::from_value(given)
        .filter(|array| matches!(array.len(), 2 | 3))
        .ok_or_else(|| {
            wrong_type(
                ruby,
                format!(
                    "versions[{index}] must be an Array of [key, timestamp, value] or \
                     [key, timestamp], got {}",
                    described(given)
                ),
            )
        })?;
    let key = entry(ruby, array, 0)?;
    let timestamp = to_u64(
        ruby,
        &format!("versions[{index}] timestamp"),
        entry(ruby, array, 1)?,
    )?;
    let value = if array.len() == 3 {
        Some(entry(ruby, array, 2)?)
    } else {
        None
    };
    Ok((key, timestamp, value))
}
