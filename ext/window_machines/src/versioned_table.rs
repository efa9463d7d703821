//! `WindowMachines::VersionedTable`: the class, converting and delegating.
//! Keys are found by key_lookup.rs, keys and values held by held.rs, and
//! checkpoints read and written by versioned_table_checkpoint.rs.

use std::num::NonZeroU64;

use magnus::{
    gc, method, prelude::*, rb_sys::AsRawValue, rb_sys::FromRawValue, scan_args::get_kwargs,
    scan_args::scan_args, typed_data::Obj, value::Opaque, DataTypeFunctions, Error, RArray, RHash,
    RModule, Ruby, TypedData, Value,
};
use rb_sys::VALUE;
use window_machines_core::{
    Error as CoreError, KeyLookup, KeySlot, Placed, Prefetch, Record, VersionedTable,
};

use crate::aggregating::OnLate;
use crate::convert::{optional, to_u64};
use crate::errors::{late_event, OrRaise};
use crate::guard::Guard;
use crate::held::{self, hold, HoldsObjects};
use crate::key_lookup::{file_under, find};
use crate::receiver::{define_class, unfrozen, unwrap};
use crate::restore::{self, Stateful};
use crate::versioned_table_checkpoint as saved;

type Held = Opaque<Value>;
pub type Table = VersionedTable<Held, StoredValue>;

/// A value the table holds, stored with a niche so that a version (a value
/// or a tombstone, `Option<StoredValue>`) takes 8 bytes rather than 16.
/// The VALUE is kept XORed with `Qundef`, which no Ruby object is, so the
/// stored word is never zero.
#[derive(Clone, Copy)]
pub struct StoredValue(NonZeroU64);

impl StoredValue {
    const UNDEF: VALUE = rb_sys::Qundef as VALUE;

    /// `None` only for `Qundef`, which Ruby never hands a method.
    pub fn new(value: Value) -> Option<StoredValue> {
        let raw: VALUE = value.as_raw();
        NonZeroU64::new(raw ^ Self::UNDEF).map(StoredValue)
    }

    pub fn value(self) -> Value {
        // SAFETY: the word was made by `new` from a live VALUE, and the
        // table that stores it marks it (so it is alive and unmoved) for as
        // long as it holds it; callers read it while the table holds it.
        unsafe { Value::from_raw(self.0.get() ^ Self::UNDEF) }
    }

    pub fn held(self) -> Held {
        self.value().into()
    }
}

/// The table and what to do with a change older than its retention.
#[derive(Clone)]
pub struct State {
    pub table: Table,
    pub on_late: OnLate,
}

impl Default for State {
    fn default() -> Self {
        State {
            table: Table::default(),
            on_late: OnLate::Raise,
        }
    }
}

impl KeyLookup for State {
    type Key = Held;

    fn first_with_hash(&self, hash: u64) -> Option<KeySlot> {
        self.table.first_with_hash(hash)
    }

    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot> {
        self.table.next_with_same_hash(slot)
    }

    fn key(&self, slot: KeySlot) -> Option<&Held> {
        self.table.key(slot)
    }

    fn prefetch(&self, hash: u64, stage: Prefetch) {
        self.table.prefetch(hash, stage);
    }
}

impl HoldsObjects for State {
    fn each_object(&self, f: &mut dyn FnMut(Held)) {
        self.on_late.each_object(f);
        self.table.each_held(|key, versions| {
            f(*key);
            for value in versions.iter().filter_map(|version| version.value) {
                f(value.held());
            }
        });
    }
}

#[derive(TypedData, Default)]
#[magnus(
    class = "WindowMachines::VersionedTable",
    free_immediately,
    mark,
    size,
    wb_protected
)]
pub struct RbVersionedTable(pub Guard<State>);

impl DataTypeFunctions for RbVersionedTable {
    fn mark(&self, marker: &gc::Marker) {
        held::mark(&self.0, marker);
    }

    fn size(&self) -> usize {
        let heap = self.0.peek().map_or(0, |state| state.table.heap_bytes());
        std::mem::size_of::<Self>() + heap
    }
}

impl Stateful for RbVersionedTable {
    type State = State;

    fn copy_state(&self, ruby: &Ruby) -> Result<State, Error> {
        self.0.read(ruby, Clone::clone)
    }

    fn take_state(&self, ruby: &Ruby) -> Result<State, Error> {
        self.0.write(ruby, std::mem::take)
    }

    fn put_state(&self, ruby: &Ruby, owner: Value, state: State) -> Result<(), Error> {
        self.0.write(ruby, |held| {
            held::hold_all(ruby, owner, &state);
            *held = state;
        })
    }

    fn restore(ruby: &Ruby, fresh: Obj<Self>, checkpoint: Value) -> Result<(), Error> {
        saved::restore(ruby, fresh, checkpoint)
    }
}

/// `[value, valid_from, valid_to]`, valid_to nil for the latest.
pub fn record_array(ruby: &Ruby, record: Record<Value>) -> RArray {
    ruby.ary_new_from_values(&[
        record.value,
        ruby.integer_from_u64(record.valid_from).as_value(),
        record.valid_to.map_or_else(
            || ruby.qnil().as_value(),
            |to| ruby.integer_from_u64(to).as_value(),
        ),
    ])
}

/// A record with its value as a local, which the GC's stack scan keeps
/// alive (and in place) even once the table lets go of it.
fn local(record: Record<&StoredValue>) -> Record<Value> {
    record.map(|value| value.value())
}

/// What a put or delete did.
enum Changed {
    Put(Placed),
    /// The version valid at the delete's time before it, if any.
    Deleted(Option<Record<Value>>),
    /// Too old for the retention; `on_late` has had it.
    Refused,
}

/// `(key, timestamp = nil)`, read without scan_args: a lookup is short
/// enough that its cost shows.
fn key_and_timestamp(ruby: &Ruby, args: &[Value]) -> Result<(Value, Option<Value>), Error> {
    match *args {
        [key] => Ok((key, None)),
        [key, timestamp] => Ok((key, Some(timestamp))),
        _ => Err(Error::new(
            ruby.exception_arg_error(),
            format!(
                "wrong number of arguments (given {}, expected 1..2)",
                args.len()
            ),
        )),
    }
}

/// A query's timestamp: omitted or nil asks for the latest version.
fn optional_timestamp(ruby: &Ruby, timestamp: Option<Value>) -> Result<Option<u64>, Error> {
    timestamp
        .filter(|timestamp| !timestamp.is_nil())
        .map(|timestamp| to_u64(ruby, "timestamp", timestamp))
        .transpose()
}

impl RbVersionedTable {
    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        let kwargs = get_kwargs::<_, (), (Option<Value>,), ()>(args.keywords, &[], &["on_late"])?;
        let retention = to_u64(ruby, "history_retention", args.required.0)?;
        let on_late = OnLate::new(ruby, kwargs.optional.0)?;
        let state = State {
            table: Table::new(retention),
            on_late,
        };
        restore::replace::<Self>(ruby, rb_self, state)
    }

    /// Puts `value` (a tombstone for `None`) under `key` at `timestamp`,
    /// or hands a change too old for the retention to `on_late`.
    fn change(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        value: Option<Value>,
        timestamp: u64,
    ) -> Result<Changed, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let changed = file_under(ruby, rb_self, &this.0, key, |state, found, make_key| {
            let table = &mut state.table;
            match value {
                Some(value) => {
                    hold(rb_self, value);
                    match StoredValue::new(value) {
                        Some(value) => table
                            .put(found.slot, found.hash, make_key, Some(value), timestamp)
                            .map(Changed::Put),
                        None => Ok(Changed::Refused),
                    }
                }
                None => table
                    .delete(found.slot, found.hash, make_key, timestamp)
                    .map(|before| {
                        // The replaced value may no longer be held: from
                        // here on it is a local, which the stack scan keeps.
                        Changed::Deleted(before.map(|record| record.map(StoredValue::value)))
                    }),
            }
        })?;
        let Err(CoreError::Late {
            timestamp,
            watermark,
        }) = changed
        else {
            return changed.or_raise(ruby);
        };
        let (on_late, stream_time) = this
            .0
            .read(ruby, |state| (state.on_late, state.table.stream_time()))?;
        match on_late {
            OnLate::Raise => Err(late_event(ruby, timestamp, watermark, Some(key))),
            OnLate::Drop => Ok(Changed::Refused),
            OnLate::Call(callable) => {
                let value = value.unwrap_or_else(|| ruby.qnil().as_value());
                let _: Value = ruby
                    .get_inner(callable)
                    .funcall("call", (key, value, timestamp, stream_time))?;
                Ok(Changed::Refused)
            }
        }
    }

    fn put(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        value: Value,
        timestamp: Value,
    ) -> Result<Value, Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        Ok(
            match Self::change(ruby, rb_self, key, Some(value), timestamp)? {
                Changed::Put(Placed::History { valid_to }) => {
                    ruby.integer_from_u64(valid_to).as_value()
                }
                Changed::Refused => ruby.qfalse().as_value(),
                Changed::Put(Placed::Latest) | Changed::Deleted(_) => ruby.qnil().as_value(),
            },
        )
    }

    fn delete(ruby: &Ruby, rb_self: Value, key: Value, timestamp: Value) -> Result<Value, Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        Ok(match Self::change(ruby, rb_self, key, None, timestamp)? {
            Changed::Deleted(Some(record)) => record_array(ruby, record).as_value(),
            _ => ruby.qnil().as_value(),
        })
    }

    /// The record of `key` at `timestamp` (the latest for nil).
    fn record(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        timestamp: Option<Value>,
    ) -> Result<Option<Record<Value>>, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let timestamp = optional_timestamp(ruby, timestamp)?;
        let Some(slot) = find(ruby, &this.0, key)?.slot else {
            return Ok(None);
        };
        this.0.read(ruby, |state| {
            state
                .table
                .version(slot, timestamp)
                .map(|record| local(record))
        })
    }

    fn get(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<Value, Error> {
        let (key, timestamp) = key_and_timestamp(ruby, args)?;
        let record = Self::record(ruby, rb_self, key, timestamp)?;
        Ok(record.map_or_else(|| ruby.qnil().as_value(), |record| record.value))
    }

    fn version(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<Option<RArray>, Error> {
        let (key, timestamp) = key_and_timestamp(ruby, args)?;
        let record = Self::record(ruby, rb_self, key, timestamp)?;
        Ok(record.map(|record| record_array(ruby, record)))
    }

    fn history(ruby: &Ruby, rb_self: Value, key: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let Some(slot) = find(ruby, &this.0, key)?.slot else {
            return Ok(ruby.ary_new());
        };
        // Copied out first; the table keeps holding (and marking) the values
        // while the Arrays are made.
        let records: Vec<Record<Value>> = this.0.read(ruby, |state| {
            state
                .table
                .history(slot)
                .map(|record| local(record))
                .collect()
        })?;
        let array = ruby.ary_new_capa(records.len());
        for record in records {
            array.push(record_array(ruby, record))?;
        }
        Ok(array)
    }

    /// `[[key, value, valid_from, valid_to], ...]`: every key in the order
    /// it was first held, each version a query can reach, oldest first.
    fn to_a(ruby: &Ruby, rb_self: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let rows: Vec<(Value, Record<Value>)> = this.0.read(ruby, |state| {
            let table = &state.table;
            table
                .slots()
                .into_iter()
                .filter_map(|slot| Some((ruby.get_inner(*table.key(slot)?), slot)))
                .flat_map(|(key, slot)| table.history(slot).map(move |record| (key, local(record))))
                .collect()
        })?;
        let array = ruby.ary_new_capa(rows.len());
        for (key, record) in rows {
            array.push(ruby.ary_new_from_values(&[
                key,
                record.value,
                ruby.integer_from_u64(record.valid_from).as_value(),
                record.valid_to.map_or_else(
                    || ruby.qnil().as_value(),
                    |to| ruby.integer_from_u64(to).as_value(),
                ),
            ]))?;
        }
        Ok(array)
    }

    fn read<R>(ruby: &Ruby, rb_self: Value, f: impl FnOnce(&Table) -> R) -> Result<R, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, |state| f(&state.table))
    }

    fn history_retention(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Self::read(ruby, rb_self, Table::retention)
    }

    fn stream_time(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        Self::read(ruby, rb_self, Table::stream_time)
    }

    fn late_count(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Self::read(ruby, rb_self, Table::late_count)
    }

    fn size(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        Self::read(ruby, rb_self, Table::len)
    }

    fn version_count(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        Self::read(ruby, rb_self, Table::version_count)
    }

    fn on_late(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let on_late = unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, |state| state.on_late)?;
        Ok(on_late.value(ruby))
    }

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        saved::dump(ruby, unwrap::<Self>(ruby, rb_self)?, saved::Form::Json)
    }

    fn marshal_dump(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        saved::dump(ruby, unwrap::<Self>(ruby, rb_self)?, saved::Form::Marshal)
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let (retention, stream_time, keys, versions) = Self::read(ruby, rb_self, |table| {
            (
                table.retention(),
                table.stream_time(),
                table.len(),
                table.version_count(),
            )
        })?;
        Ok(format!(
            "#<{} history_retention={retention} stream_time={} keys={keys} versions={versions}>",
            crate::identity::class_of(rb_self),
            optional(stream_time)
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbVersionedTable>(ruby, module, "VersionedTable")?;
    class.define_singleton_method(
        "restore_checkpoint",
        method!(restore::from_h::<RbVersionedTable>, 1),
    )?;
    let _: Value = class.funcall(
        "private_class_method",
        (ruby.to_symbol("restore_checkpoint"),),
    )?;
    class.define_method("initialize", method!(RbVersionedTable::initialize, -1))?;
    class.define_method(
        "initialize_copy",
        method!(restore::initialize_copy::<RbVersionedTable>, 1),
    )?;
    class.define_method("put", method!(RbVersionedTable::put, 3))?;
    class.define_method("delete", method!(RbVersionedTable::delete, 2))?;
    class.define_method("get", method!(RbVersionedTable::get, -1))?;
    class.define_method("version", method!(RbVersionedTable::version, -1))?;
    class.define_method("history", method!(RbVersionedTable::history, 1))?;
    class.define_method("to_a", method!(RbVersionedTable::to_a, 0))?;
    class.define_method(
        "history_retention",
        method!(RbVersionedTable::history_retention, 0),
    )?;
    class.define_method("stream_time", method!(RbVersionedTable::stream_time, 0))?;
    class.define_method("late_count", method!(RbVersionedTable::late_count, 0))?;
    class.define_method("size", method!(RbVersionedTable::size, 0))?;
    class.define_method("version_count", method!(RbVersionedTable::version_count, 0))?;
    class.define_method("on_late", method!(RbVersionedTable::on_late, 0))?;
    class.define_method("to_h", method!(RbVersionedTable::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbVersionedTable::marshal_dump, 0))?;
    class.define_method(
        "marshal_load",
        method!(restore::marshal_load::<RbVersionedTable>, 1),
    )?;
    class.define_method("inspect", method!(RbVersionedTable::inspect, 0))?;
    Ok(())
}
