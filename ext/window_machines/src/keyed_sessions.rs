//! `WindowMachines::KeyedSessions`: the class, converting and delegating.
//! Keys are found by key_lookup.rs, held by held.rs, and checkpoints read
//! and written by keyed_sessions_checkpoint.rs.

use std::cell::Cell;
use std::ops::Range;

use magnus::{
    gc, method, prelude::*, scan_args::get_kwargs, scan_args::scan_args, typed_data::Obj,
    value::Opaque, DataTypeFunctions, Error, RArray, RHash, RModule, Ruby, TypedData, Value,
};
use window_machines_core::{Insertion, KeyedSessions, Span};

use crate::batch::{loading_keys, Batch, Lookahead};
use crate::checkpoint;
use crate::convert::{inserted, optional, spans_array, to_u64, yield_merges};
use crate::errors::{or_raise_event, OrRaise};
use crate::guard::Guard;
use crate::held::{self, HoldsObjects};
use crate::key_lookup::{file_under, find};
use crate::keyed_sessions_checkpoint as saved;
use crate::receiver::{define_class, unfrozen, unwrap};
use crate::restore::{self, Stateful};

pub type Tracker = KeyedSessions<Opaque<Value>>;

#[derive(TypedData, Default)]
#[magnus(
    class = "WindowMachines::KeyedSessions",
    free_immediately,
    mark,
    size,
    wb_protected
)]
pub struct RbKeyedSessions(pub Guard<Tracker>);

impl HoldsObjects for Tracker {
    fn each_object(&self, f: &mut dyn FnMut(Opaque<Value>)) {
        self.held_keys().for_each(|key| f(*key));
    }
}

impl DataTypeFunctions for RbKeyedSessions {
    fn mark(&self, marker: &gc::Marker) {
        held::mark(&self.0, marker);
    }

    fn size(&self) -> usize {
        let heap = self.0.peek().map_or(0, |tracker| tracker.heap_bytes());
        std::mem::size_of::<Self>() + heap
    }
}

impl Stateful for RbKeyedSessions {
    type State = Tracker;

    fn copy_state(&self, ruby: &Ruby) -> Result<Tracker, Error> {
        self.0.read(ruby, Clone::clone)
    }

    fn take_state(&self, ruby: &Ruby) -> Result<Tracker, Error> {
        self.0.write(ruby, std::mem::take)
    }

    fn put_state(&self, ruby: &Ruby, owner: Value, state: Tracker) -> Result<(), Error> {
        self.0.write(ruby, |tracker| {
            held::hold_all(ruby, owner, &state);
            *tracker = state;
        })
    }

    fn restore(ruby: &Ruby, fresh: Obj<Self>, checkpoint: Value) -> Result<(), Error> {
        saved::restore(ruby, fresh, checkpoint)
    }
}

/// `[key, first, last]`.
pub fn keyed_span(ruby: &Ruby, key: Value, span: Span) -> RArray {
    ruby.ary_new_from_values(&[
        key,
        ruby.integer_from_u64(span.first).as_value(),
        ruby.integer_from_u64(span.last).as_value(),
    ])
}

impl RbKeyedSessions {
    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        let kwargs =
            get_kwargs::<_, (), (Option<Value>,), ()>(args.keywords, &[], &["max_sessions"])?;
        let gap = to_u64(ruby, "gap", args.required.0)?;
        let max_sessions = match kwargs.optional.0 {
            Some(limit) => checkpoint::optional_u64(ruby, "max_sessions", limit)?,
            None => None,
        };
        let tracker = KeyedSessions::new(gap, max_sessions).or_raise(ruby)?;
        this.0.write(ruby, |held| *held = tracker)
    }

    fn insert(ruby: &Ruby, rb_self: Value, key: Value, timestamp: Value) -> Result<RArray, Error> {
        inserted(ruby, Self::apply(ruby, rb_self, key, timestamp)?)
    }

    /// `insert` for each key and timestamp in order: how many were
    /// applied. A block also gets the key after the two spans.
    fn insert_all(
        ruby: &Ruby,
        rb_self: Value,
        keys: Value,
        timestamps: Value,
    ) -> Result<usize, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let batch = Batch::new(
            ruby,
            [("keys", Some(keys)), ("timestamps", Some(timestamps))],
        )?;
        let block_given = ruby.block_given();
        let applied = Cell::new(0);
        batch.each_by_runs(
            ruby,
            |range, lookahead| {
                if block_given {
                    // Each insert may yield its merges.
                    Ok(range.start)
                } else {
                    Self::insert_run(ruby, rb_self, &batch, range, lookahead, &applied)
                }
            },
            Some(&loading_keys(ruby, &this.0)),
            |[key, timestamp]| Ok((key, Self::apply(ruby, rb_self, key, timestamp)?)),
            |(key, insertion)| {
                applied.set(applied.get() + 1);
                if block_given {
                    yield_merges(ruby, &insertion, Some(key))?;
                }
                Ok(())
            },
        )?;
        Ok(applied.get())
    }

    /// Inserts the elements of `batch` in `range`, in order, under one
    /// borrow of the tracker, for as long as each is filed by
    /// [`Batch::file_without_ruby`] and inserted; stops at the first that
    /// is not (late, refused, needing Ruby, or the receiver frozen), which
    /// `insert` then takes whole, and returns its index. A refused insert
    /// changes nothing.
    fn insert_run(
        ruby: &Ruby,
        rb_self: Value,
        batch: &Batch<2>,
        range: Range<usize>,
        lookahead: &mut Lookahead,
        applied: &Cell<usize>,
    ) -> Result<usize, Error> {
        if rb_self.is_frozen() {
            return Ok(range.start);
        }
        let this = unwrap::<Self>(ruby, rb_self)?;
        this.0.write(ruby, |tracker| {
            batch.file_without_ruby(
                ruby,
                tracker,
                range,
                lookahead,
                |tracker, [key, _], timestamp, found| {
                    let make_key = || held::hold(rb_self, key);
                    let inserted = tracker
                        .insert(found.slot, found.hash, make_key, timestamp)
                        .is_ok();
                    if inserted {
                        applied.set(applied.get() + 1);
                    }
                    inserted
                },
            )
        })
    }

    /// One event applied, as `insert` and `insert_all` apply it.
    fn apply(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        timestamp: Value,
    ) -> Result<Insertion, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let done = or_raise_event(
            file_under(ruby, rb_self, &this.0, key, |tracker, found, make_key| {
                tracker.insert(found.slot, found.hash, make_key, timestamp)
            })?,
            ruby,
            timestamp,
            Some(key),
            || Self::watermark(ruby, rb_self).ok().flatten(),
        )?;
        Ok(done.insertion)
    }

    fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.0
            .write(ruby, |tracker| tracker.advance_watermark(timestamp))
    }

    fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Option<RArray>, Error> {
        Ok(Self::take_one(ruby, rb_self)?.map(|(key, span)| keyed_span(ruby, key, span)))
    }

    /// Yields `key, first, last` of each closed session in closing order,
    /// each taken out of the tracker just before: `each_closed`'s work,
    /// with no Array made per session.
    fn take_each_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        while let Some((key, span)) = Self::take_one(ruby, rb_self)? {
            let _: Value = ruby.yield_values((key, span.first, span.last))?;
        }
        Ok(rb_self)
    }

    /// The session that closed first, taken out of the tracker, with its
    /// key. A released key is no longer marked by the tracker; the key
    /// returned is a local of the caller's, which the GC's stack scan
    /// keeps alive.
    fn take_one(ruby: &Ruby, rb_self: Value) -> Result<Option<(Value, Span)>, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let handover = this.0.write(ruby, Tracker::take_closed)?;
        Ok(handover.map(|handover| (ruby.get_inner(handover.key), handover.span)))
    }

    fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, Tracker::watermark)
    }

    fn gap(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        unwrap::<Self>(ruby, rb_self)?.0.read(ruby, Tracker::gap)
    }

    fn max_sessions(ruby: &Ruby, rb_self: Value) -> Result<Option<usize>, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, Tracker::max_sessions)
    }

    fn held(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?.0.read(ruby, Tracker::len)
    }

    fn key_count(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, Tracker::key_count)
    }

    fn sessions_for(ruby: &Ruby, rb_self: Value, key: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let Some(slot) = find(ruby, &this.0, key)?.slot else {
            return Ok(ruby.ary_new());
        };
        let spans = this.0.read(ruby, |tracker| tracker.spans(slot).to_vec())?;
        Ok(spans_array(ruby, &spans))
    }

    /// `[[key, first, last], ...]`, in the order the sessions close.
    fn to_a(ruby: &Ruby, rb_self: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        // Copied out first; no Ruby code runs until the Array is built, so
        // the keys stay held (and marked) by the tracker meanwhile.
        let sessions: Vec<(Opaque<Value>, Span)> = this.0.read(ruby, |tracker| {
            tracker.sessions().map(|(key, span)| (*key, span)).collect()
        })?;
        let array = ruby.ary_new_capa(sessions.len());
        for (key, span) in sessions {
            array.push(keyed_span(ruby, ruby.get_inner(key), span))?;
        }
        Ok(array)
    }

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        saved::dump(ruby, unwrap::<Self>(ruby, rb_self)?, saved::Keys::JsonOnly)
    }

    fn marshal_dump(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        saved::dump(ruby, unwrap::<Self>(ruby, rb_self)?, saved::Keys::Any)
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let (gap, watermark, held, keys) = this.0.read(ruby, |tracker| {
            (
                tracker.gap(),
                tracker.watermark(),
                tracker.len(),
                tracker.key_count(),
            )
        })?;
        Ok(format!(
            "#<{} gap={gap} watermark={} sessions={held} keys={keys}>",
            crate::identity::class_of(rb_self),
            optional(watermark)
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbKeyedSessions>(ruby, module, "KeyedSessions")?;
    class.define_singleton_method("from_h", method!(restore::from_h::<RbKeyedSessions>, 1))?;
    class.define_method("initialize", method!(RbKeyedSessions::initialize, -1))?;
    class.define_method(
        "initialize_copy",
        method!(restore::initialize_copy::<RbKeyedSessions>, 1),
    )?;
    class.define_method("insert", method!(RbKeyedSessions::insert, 2))?;
    class.define_method("insert_all", method!(RbKeyedSessions::insert_all, 2))?;
    class.define_method(
        "advance_watermark",
        method!(RbKeyedSessions::advance_watermark, 1),
    )?;
    class.define_method("take_closed", method!(RbKeyedSessions::take_closed, 0))?;
    class.define_private_method(
        "take_each_closed",
        method!(RbKeyedSessions::take_each_closed, 0),
    )?;
    class.define_method("watermark", method!(RbKeyedSessions::watermark, 0))?;
    class.define_method("gap", method!(RbKeyedSessions::gap, 0))?;
    class.define_method("max_sessions", method!(RbKeyedSessions::max_sessions, 0))?;
    class.define_method("size", method!(RbKeyedSessions::held, 0))?;
    class.define_method("key_count", method!(RbKeyedSessions::key_count, 0))?;
    class.define_method("sessions_for", method!(RbKeyedSessions::sessions_for, 1))?;
    class.define_method("to_a", method!(RbKeyedSessions::to_a, 0))?;
    class.define_method("to_h", method!(RbKeyedSessions::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbKeyedSessions::marshal_dump, 0))?;
    class.define_method(
        "marshal_load",
        method!(restore::marshal_load::<RbKeyedSessions>, 1),
    )?;
    class.define_method("inspect", method!(RbKeyedSessions::inspect, 0))?;
    Ok(())
}
