//! `WindowMachines::Sessions`.

use std::cell::RefCell;

use magnus::{
    method, prelude::*, DataTypeFunctions, Error, RArray, RClass, RHash, RModule, Ruby, TypedData,
    Value,
};
use window_machines_core::Sessions;

use crate::checkpoint;
use crate::convert::{optional_span, span_array, spans_array, to_u64};
use crate::errors::{check_frozen, refused};
use crate::identity::{same_class, state_hash};
use crate::receiver::{define_class, unwrap};

#[derive(TypedData, Default)]
#[magnus(class = "WindowMachines::Sessions", free_immediately, size)]
pub struct RbSessions(RefCell<Sessions>);

impl DataTypeFunctions for RbSessions {
    fn size(&self) -> usize {
        let heap = self
            .0
            .try_borrow()
            .map_or(0, |sessions| sessions.heap_bytes());
        std::mem::size_of::<Self>() + heap
    }
}

impl RbSessions {
    /// Runs `f` on the tracker. No Ruby code runs while it is borrowed (not
    /// even a block: blocks run after the borrow ends), so the borrow cannot
    /// be taken twice; should that ever change, Ruby gets an error rather
    /// than a panic.
    fn with<R>(&self, ruby: &Ruby, f: impl FnOnce(&mut Sessions) -> R) -> Result<R, Error> {
        match self.0.try_borrow_mut() {
            Ok(mut sessions) => Ok(f(&mut sessions)),
            Err(_) => Err(Error::new(
                ruby.exception_runtime_error(),
                "WindowMachines::Sessions re-entered while in use",
            )),
        }
    }

    /// The receiver's tracker, after the frozen check every mutator makes.
    fn unfrozen(ruby: &Ruby, rb_self: Value) -> Result<&Self, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        Ok(this)
    }

    fn snapshot(ruby: &Ruby, rb_self: Value) -> Result<Sessions, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.clone())
    }

    fn replace(ruby: &Ruby, rb_self: Value, state: Sessions) -> Result<(), Error> {
        Self::unfrozen(ruby, rb_self)?.with(ruby, |sessions| *sessions = state)
    }

    fn initialize(ruby: &Ruby, rb_self: Value, gap: Value) -> Result<(), Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let gap = to_u64(ruby, "gap", gap)?;
        let fresh = Sessions::new(gap).map_err(|error| refused(ruby, error))?;
        this.with(ruby, |sessions| *sessions = fresh)
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Value, other: Value) -> Result<(), Error> {
        Self::unfrozen(ruby, rb_self)?;
        let copy = Self::snapshot(ruby, other)?;
        Self::replace(ruby, rb_self, copy)
    }

    /// With a block, yields `(old_span, new_span)` for each held span the
    /// insert replaced, oldest first, once the tracker is updated.
    fn insert(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<RArray, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let insertion = this
            .with(ruby, |sessions| sessions.insert(timestamp))?
            .map_err(|error| refused(ruby, error))?;
        if ruby.block_given() {
            for old in insertion.replaced.spans() {
                let yielded = (span_array(ruby, old), span_array(ruby, insertion.span));
                ruby.yield_values::<_, Value>(yielded)?;
            }
        }
        Ok(span_array(ruby, insertion.span))
    }

    fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.with(ruby, |sessions| sessions.advance_watermark(timestamp))
    }

    fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let closed = this.with(ruby, |sessions| sessions.take_closed())?;
        Ok(optional_span(ruby, closed))
    }

    fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.watermark())
    }

    fn gap(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.gap())
    }

    fn size(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.spans().len())
    }

    fn to_a(ruby: &Ruby, rb_self: Value) -> Result<RArray, Error> {
        // Copied out first: no borrow is held while Ruby allocates.
        let spans =
            unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.spans().to_vec())?;
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

    /// The tracker a checkpoint describes, checked as untrusted input.
    fn restore(ruby: &Ruby, input: Value) -> Result<Sessions, Error> {
        let [gap, watermark, spans] =
            checkpoint::fields(ruby, input, ["gap", "watermark", "sessions"])?;
        let gap = to_u64(ruby, "gap", gap)?;
        let watermark = checkpoint::optional_u64(ruby, "watermark", watermark)?;
        let spans = checkpoint::spans(ruby, spans)?;
        Sessions::from_parts(gap, watermark, &spans).map_err(|error| refused(ruby, error))
    }

    fn from_h(ruby: &Ruby, class: RClass, input: Value) -> Result<Value, Error> {
        let state = Self::restore(ruby, input)?;
        Ok(ruby
            .obj_wrap_as(Self(RefCell::new(state)), class)
            .as_value())
    }

    fn marshal_load(ruby: &Ruby, rb_self: Value, input: Value) -> Result<(), Error> {
        Self::unfrozen(ruby, rb_self)?;
        let state = Self::restore(ruby, input)?;
        Self::replace(ruby, rb_self, state)
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
        let watermark = state
            .watermark()
            .map_or_else(|| "nil".to_owned(), |value| value.to_string());
        let spans: Vec<String> = state
            .spans()
            .iter()
            .map(|span| format!("[{}, {}]", span.first, span.last))
            .collect();
        Ok(format!(
            "#<{} gap={} watermark={watermark} sessions=[{}]>",
            rb_self.class(),
            state.gap(),
            spans.join(", ")
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbSessions>(ruby, module, "Sessions")?;
    class.define_singleton_method("from_h", method!(RbSessions::from_h, 1))?;
    class.define_method("initialize", method!(RbSessions::initialize, 1))?;
    class.define_method("initialize_copy", method!(RbSessions::initialize_copy, 1))?;
    class.define_method("insert", method!(RbSessions::insert, 1))?;
    class.define_method(
        "advance_watermark",
        method!(RbSessions::advance_watermark, 1),
    )?;
    class.define_method("take_closed", method!(RbSessions::take_closed, 0))?;
    class.define_method("watermark", method!(RbSessions::watermark, 0))?;
    class.define_method("gap", method!(RbSessions::gap, 0))?;
    class.define_method("size", method!(RbSessions::size, 0))?;
    class.define_method("to_a", method!(RbSessions::to_a, 0))?;
    class.define_method("to_h", method!(RbSessions::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbSessions::to_h, 0))?;
    class.define_method("marshal_load", method!(RbSessions::marshal_load, 1))?;
    class.define_method("==", method!(RbSessions::equal, 1))?;
    class.define_method("eql?", method!(RbSessions::equal, 1))?;
    class.define_method("hash", method!(RbSessions::hash, 0))?;
    class.define_method("inspect", method!(RbSessions::inspect, 0))?;
    Ok(())
}
