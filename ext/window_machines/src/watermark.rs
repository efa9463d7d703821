//! `WindowMachines::Watermark`.

use std::cell::Cell;

use magnus::{
    method, prelude::*, scan_args::scan_args, Error, RClass, RHash, RModule, Ruby, Value,
};
use window_machines_core::Watermark;

use crate::checkpoint;
use crate::convert::to_u64;
use crate::errors::{check_frozen, refused};
use crate::identity::{same_class, state_hash};
use crate::receiver::{define_class, unwrap};

/// The core watermark is `Copy`, so a `Cell` suffices: no borrow to hold.
#[magnus::wrap(class = "WindowMachines::Watermark", free_immediately, size)]
#[derive(Default)]
pub struct RbWatermark(Cell<Watermark>);

impl RbWatermark {
    fn state(ruby: &Ruby, rb_self: Value) -> Result<Watermark, Error> {
        Ok(unwrap::<Self>(ruby, rb_self)?.0.get())
    }

    /// The receiver's cell, after the frozen check every mutator makes.
    fn unfrozen(ruby: &Ruby, rb_self: Value) -> Result<&Cell<Watermark>, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        Ok(&this.0)
    }

    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        let cell = Self::unfrozen(ruby, rb_self)?;
        let args = scan_args::<(), (Option<Value>,), (), (), (), ()>(args)?;
        let start = match args.optional.0 {
            Some(value) => Some(to_u64(ruby, "timestamp", value)?),
            None => None,
        };
        cell.set(Watermark::new(start));
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Value, other: Value) -> Result<(), Error> {
        let cell = Self::unfrozen(ruby, rb_self)?;
        cell.set(Self::state(ruby, other)?);
        Ok(())
    }

    fn value(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        Ok(Self::state(ruby, rb_self)?.value())
    }

    fn advance(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let cell = Self::unfrozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let mut watermark = cell.get();
        let moved = watermark.advance(timestamp);
        cell.set(watermark);
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
        watermark
            .closes(start, finish, lateness)
            .map_err(|error| refused(ruby, error))
    }

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        let hash = ruby.hash_new();
        hash.aset(ruby.to_symbol("value"), Self::state(ruby, rb_self)?.value())?;
        Ok(hash)
    }

    /// The watermark a checkpoint describes, checked as untrusted input.
    fn restore(ruby: &Ruby, input: Value) -> Result<Watermark, Error> {
        let [value] = checkpoint::fields(ruby, input, ["value"])?;
        Ok(Watermark::new(checkpoint::optional_u64(
            ruby, "value", value,
        )?))
    }

    fn from_h(ruby: &Ruby, class: RClass, input: Value) -> Result<Value, Error> {
        let state = Self::restore(ruby, input)?;
        Ok(ruby.obj_wrap_as(Self(Cell::new(state)), class).as_value())
    }

    fn marshal_load(ruby: &Ruby, rb_self: Value, input: Value) -> Result<(), Error> {
        let cell = Self::unfrozen(ruby, rb_self)?;
        cell.set(Self::restore(ruby, input)?);
        Ok(())
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
        let value = match Self::state(ruby, rb_self)?.value() {
            Some(value) => value.to_string(),
            None => "nil".to_owned(),
        };
        Ok(format!("#<{} value={value}>", rb_self.class()))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbWatermark>(ruby, module, "Watermark")?;
    class.define_singleton_method("from_h", method!(RbWatermark::from_h, 1))?;
    class.define_method("initialize", method!(RbWatermark::initialize, -1))?;
    class.define_method("initialize_copy", method!(RbWatermark::initialize_copy, 1))?;
    class.define_method("value", method!(RbWatermark::value, 0))?;
    class.define_method("advance", method!(RbWatermark::advance, 1))?;
    class.define_method("closes?", method!(RbWatermark::closes, 3))?;
    class.define_method("to_h", method!(RbWatermark::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbWatermark::to_h, 0))?;
    class.define_method("marshal_load", method!(RbWatermark::marshal_load, 1))?;
    class.define_method("==", method!(RbWatermark::equal, 1))?;
    class.define_method("eql?", method!(RbWatermark::equal, 1))?;
    class.define_method("hash", method!(RbWatermark::hash, 0))?;
    class.define_method("inspect", method!(RbWatermark::inspect, 0))?;
    Ok(())
}
