//! `WindowMachines::Sessions`.

use magnus::{
    method, prelude::*, typed_data::Obj, DataTypeFunctions, Error, RArray, RHash, RModule, Ruby,
    TypedData, Value,
};
use window_machines_core::{Insertion, Sessions, Span};

use crate::batch::Batch;
use crate::checkpoint;
use crate::convert::{inserted, optional, optional_span, spans_array, to_u64, yield_merges};
use crate::errors::{or_raise_event, OrRaise};
use crate::guard::Guard;
use crate::identity::{same_class, state_hash};
use crate::receiver::{define_class, unfrozen, unwrap};
use crate::restore::{self, Stateful};

#[derive(TypedData, Default)]
#[magnus(class = "WindowMachines::Sessions", free_immediately, size)]
pub struct RbSessions(Guard<Sessions>);

impl DataTypeFunctions for RbSessions {
    fn size(&self) -> usize {
        let heap = self.0.peek().map_or(0, |sessions| sessions.heap_bytes());
        std::mem::size_of::<Self>() + heap
    }
}

impl Stateful for RbSessions {
    type State = Sessions;

    fn copy_state(&self, ruby: &Ruby) -> Result<Sessions, Error> {
        self.0.read(ruby, Clone::clone)
    }

    fn take_state(&self, ruby: &Ruby) -> Result<Sessions, Error> {
        self.0.write(ruby, std::mem::take)
    }

    fn put_state(&self, ruby: &Ruby, _owner: Value, state: Sessions) -> Result<(), Error> {
        self.0.write(ruby, |sessions| *sessions = state)
    }

    /// The tracker a checkpoint describes, checked as untrusted input.
    fn restore(ruby: &Ruby, fresh: Obj<Self>, checkpoint: Value) -> Result<(), Error> {
        let [gap, watermark, spans] =
            checkpoint::fields(ruby, checkpoint, ["gap", "watermark", "sessions"])?;
        let gap = to_u64(ruby, "gap", gap)?;
        let watermark = checkpoint::optional_u64(ruby, "watermark", watermark)?;
        let spans = checkpoint::spans(ruby, spans)?;
        let state = Sessions::from_parts(gap, watermark, &spans).or_raise(ruby)?;
        fresh.put_state(ruby, fresh.as_value(), state)
    }
}

impl RbSessions {
    fn snapshot(ruby: &Ruby, rb_self: Value) -> Result<Sessions, Error> {
        unwrap::<Self>(ruby, rb_self)?.copy_state(ruby)
    }

    fn initialize(ruby: &Ruby, rb_self: Value, gap: Value) -> Result<(), Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let gap = to_u64(ruby, "gap", gap)?;
        let fresh = Sessions::new(gap).or_raise(ruby)?;
        this.0.write(ruby, |sessions| *sessions = fresh)
    }

    fn insert(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<RArray, Error> {
        inserted(ruby, Self::apply(ruby, rb_self, timestamp)?)
    }

    /// `insert` for each timestamp in order: how many were applied.
    fn insert_all(ruby: &Ruby, rb_self: Value, timestamps: Value) -> Result<usize, Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let batch = Batch::new(ruby, [("timestamps", Some(timestamps))])?;
        let block_given = ruby.block_given();
        let mut applied = 0;
        batch.each(
            ruby,
            None,
            |[timestamp]| Self::apply(ruby, rb_self, timestamp),
            |insertion| {
                applied += 1;
                if block_given {
                    yield_merges(ruby, &insertion, None)?;
                }
                Ok(())
            },
        )?;
        Ok(applied)
    }

    /// One event applied, as `insert` and `insert_all` apply it.
    fn apply(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<Insertion, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        or_raise_event(
            this.0.write(ruby, |sessions| sessions.insert(timestamp))?,
            ruby,
            timestamp,
            None,
            || Self::watermark(ruby, rb_self).ok().flatten(),
        )
    }

    fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.0
            .write(ruby, |sessions| sessions.advance_watermark(timestamp))
    }

    fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        Ok(optional_span(ruby, Self::take_one(ruby, rb_self)?))
    }

    /// Yields `first, last` of each closed session, oldest first, each
    /// taken out of the tracker just before: `each_closed`'s work, with no
    /// Array made per session.
    fn take_each_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        while let Some(span) = Self::take_one(ruby, rb_self)? {
            let _: Value = ruby.yield_values((span.first, span.last))?;
        }
        Ok(rb_self)
    }

    /// The oldest closed session, taken out of the tracker.
    fn take_one(ruby: &Ruby, rb_self: Value) -> Result<Option<Span>, Error> {
        unfrozen::<Self>(ruby, rb_self)?
            .0
            .write(ruby, Sessions::take_closed)
    }

    fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, Sessions::watermark)
    }

    fn gap(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        unwrap::<Self>(ruby, rb_self)?.0.read(ruby, Sessions::gap)
    }

    fn size(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, |sessions| sessions.spans().len())
    }

    fn to_a(ruby: &Ruby, rb_self: Value) -> Result<RArray, Error> {
        // Copied out first: no borrow is held while Ruby allocates.
        let spans = unwrap::<Self>(ruby, rb_self)?
            .0
            .read(ruby, |sessions| sessions.spans().to_vec())?;
        Ok(spans_array(ruby, &spans))
    }

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        let state = Self::snapshot(ruby, rb_self)?;
        let hash = ruby.hash_new();
        hash.aset(ruby.to_symbol("gap"), state.gap())?;
        hash.aset(ruby.to_symbol("watermark"), state.watermark())?;
        hash.aset(ruby.to_symbol("sessions"), spans_array(ruby, state.spans()))?;
        Ok(hash)
    }

    fn equal(ruby: &Ruby, rb_self: Value, other: Value) -> Result<bool, Error> {
        if !same_class(rb_self, other) {
            return Ok(false);
        }
        Ok(Self::snapshot(ruby, rb_self)? == Self::snapshot(ruby, other)?)
    }

    fn hash(ruby: &Ruby, rb_self: Value) -> Result<i64, Error> {
        Ok(state_hash(&Self::snapshot(ruby, rb_self)?))
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let state = Self::snapshot(ruby, rb_self)?;
        let spans: Vec<String> = state
            .spans()
            .iter()
            .map(|span| format!("[{}, {}]", span.first, span.last))
            .collect();
        Ok(format!(
            "#<{} gap={} watermark={} sessions=[{}]>",
            crate::identity::class_of(rb_self),
            state.gap(),
            optional(state.watermark()),
            spans.join(", ")
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbSessions>(ruby, module, "Sessions")?;
    class.define_singleton_method("from_h", method!(restore::from_h::<RbSessions>, 1))?;
    class.define_method("initialize", method!(RbSessions::initialize, 1))?;
    class.define_method(
        "initialize_copy",
        method!(restore::initialize_copy::<RbSessions>, 1),
    )?;
    class.define_method("insert", method!(RbSessions::insert, 1))?;
    class.define_method("insert_all", method!(RbSessions::insert_all, 1))?;
    class.define_method(
        "advance_watermark",
        method!(RbSessions::advance_watermark, 1),
    )?;
    class.define_method("take_closed", method!(RbSessions::take_closed, 0))?;
    class.define_private_method("take_each_closed", method!(RbSessions::take_each_closed, 0))?;
    class.define_method("watermark", method!(RbSessions::watermark, 0))?;
    class.define_method("gap", method!(RbSessions::gap, 0))?;
    class.define_method("size", method!(RbSessions::size, 0))?;
    class.define_method("to_a", method!(RbSessions::to_a, 0))?;
    class.define_method("to_h", method!(RbSessions::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbSessions::to_h, 0))?;
    class.define_method(
        "marshal_load",
        method!(restore::marshal_load::<RbSessions>, 1),
    )?;
    class.define_method("==", method!(RbSessions::equal, 1))?;
    class.define_method("eql?", method!(RbSessions::equal, 1))?;
    class.define_method("hash", method!(RbSessions::hash, 0))?;
    class.define_method("inspect", method!(RbSessions::inspect, 0))?;
    Ok(())
}
