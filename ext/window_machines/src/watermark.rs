//! `WindowMachines::Watermark`.

use std::cell::Cell;

use magnus::{
    method, prelude::*, scan_args::scan_args, typed_data::Obj, Error, RHash, RModule, Ruby, Value,
};
use window_machines_core::Watermark;

use crate::checkpoint;
use crate::convert::{optional, to_u64};
use crate::errors::OrRaise;
use crate::identity::{same_class, state_hash};
use crate::receiver::{define_class, unfrozen, unwrap};
use crate::restore::{self, Stateful};

/// The core watermark is `Copy`, so a `Cell` suffices: no borrow to hold,
/// and `advance`, the hottest call of the gem, pays for no guard.
#[magnus::wrap(class = "WindowMachines::Watermark", free_immediately, size)]
#[derive(Default)]
pub struct RbWatermark(Cell<Watermark>);

impl Stateful for RbWatermark {
    type State = Watermark;

    fn copy_state(&self, _ruby: &Ruby) -> Result<Watermark, Error> {
        Ok(self.0.get())
    }

    fn take_state(&self, _ruby: &Ruby) -> Result<Watermark, Error> {
        Ok(self.0.take())
    }

    fn put_state(&self, _ruby: &Ruby, _owner: Value, state: Watermark) -> Result<(), Error> {
        self.0.set(state);
        Ok(())
    }

    /// The watermark a checkpoint describes, checked as untrusted input.
    fn restore(ruby: &Ruby, fresh: Obj<Self>, checkpoint: Value) -> Result<(), Error> {
        let [value] = checkpoint::fields(ruby, checkpoint, ["value"])?;
        let value = checkpoint::optional_u64(ruby, "value", value)?;
        fresh.0.set(Watermark::new(value));
        Ok(())
    }
}

impl RbWatermark {
    fn state(ruby: &Ruby, rb_self: Value) -> Result<Watermark, Error> {
        Ok(unwrap::<Self>(ruby, rb_self)?.0.get())
    }

    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let args = scan_args::<(), (Option<Value>,), (), (), (), ()>(args)?;
        let start = match args.optional.0 {
            Some(value) => Some(to_u64(ruby, "timestamp", value)?),
            None => None,
        };
        this.0.set(Watermark::new(start));
        Ok(())
    }

    fn value(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        Ok(Self::state(ruby, rb_self)?.value())
    }

    fn advance(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = unfrozen::<Self>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let mut watermark = this.0.get();
        let moved = watermark.advance(timestamp);
        this.0.set(watermark);
        Ok(moved)
    }

    fn closes(
        ruby: &Ruby,
        rb_self: Value,
        start: Value,
        finish: Value,
        lateness: Value,
    ) -> Result<bool, Error> {
        let watermark = Self::state(ruby, rb_self)?;
        let start = to_u64(ruby, "start", start)?;
        let finish = to_u64(ruby, "finish", finish)?;
        let lateness = to_u64(ruby, "lateness", lateness)?;
        watermark.closes(start, finish, lateness).or_raise(ruby)
    }

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        let hash = ruby.hash_new();
        hash.aset(ruby.to_symbol("value"), Self::state(ruby, rb_self)?.value())?;
        Ok(hash)
    }

    fn equal(ruby: &Ruby, rb_self: Value, other: Value) -> Result<bool, Error> {
        if !same_class(rb_self, other) {
            return Ok(false);
        }
        Ok(Self::state(ruby, rb_self)? == Self::state(ruby, other)?)
    }

    fn hash(ruby: &Ruby, rb_self: Value) -> Result<i64, Error> {
        Ok(state_hash(&Self::state(ruby, rb_self)?))
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let value = optional(Self::state(ruby, rb_self)?.value());
        Ok(format!(
            "#<{} value={value}>",
            crate::identity::class_of(rb_self)
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbWatermark>(ruby, module, "Watermark")?;
    class.define_singleton_method("from_h", method!(restore::from_h::<RbWatermark>, 1))?;
    class.define_method("initialize", method!(RbWatermark::initialize, -1))?;
    class.define_method(
        "initialize_copy",
        method!(restore::initialize_copy::<RbWatermark>, 1),
    )?;
    class.define_method("value", method!(RbWatermark::value, 0))?;
    class.define_method("advance", method!(RbWatermark::advance, 1))?;
    class.define_method("closes?", method!(RbWatermark::closes, 3))?;
    class.define_method("to_h", method!(RbWatermark::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbWatermark::to_h, 0))?;
    class.define_method(
        "marshal_load",
        method!(restore::marshal_load::<RbWatermark>, 1),
    )?;
    class.define_method("==", method!(RbWatermark::equal, 1))?;
    class.define_method("eql?", method!(RbWatermark::equal, 1))?;
    class.define_method("hash", method!(RbWatermark::hash, 0))?;
    class.define_method("inspect", method!(RbWatermark::inspect, 0))?;
    Ok(())
}
