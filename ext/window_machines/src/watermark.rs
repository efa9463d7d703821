//! `WindowMachines::Watermark`.

use std::cell::Cell;

use magnus::{
    method, prelude::*, scan_args::scan_args, typed_data::Obj, Error, RModule, Ruby, Value,
};
use window_machines_core::Watermark;

use crate::convert::{optional_u64, to_u64};
use crate::errors::{check_frozen, refused};
use crate::receiver::unwrap;

/// The core watermark is `Copy`, so a `Cell` suffices: no borrow to hold.
#[magnus::wrap(class = "WindowMachines::Watermark", free_immediately, size)]
#[derive(Default)]
pub struct RbWatermark(Cell<Watermark>);

impl RbWatermark {
    fn initialize(ruby: &Ruby, rb_self: Obj<Self>, args: &[Value]) -> Result<(), Error> {
        check_frozen(ruby, rb_self.as_value())?;
        let args = scan_args::<(), (Option<Value>,), (), (), (), ()>(args)?;
        let start = match args.optional.0 {
            Some(value) => Some(to_u64(ruby, "timestamp", value)?),
            None => None,
        };
        rb_self.0.set(Watermark::new(start));
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        check_frozen(ruby, rb_self.as_value())?;
        rb_self.0.set(other.0.get());
        Ok(())
    }

    fn value(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let watermark = unwrap::<Self>(ruby, rb_self)?.0.get();
        Ok(optional_u64(ruby, watermark.value()))
    }

    fn advance(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let cell = &unwrap::<Self>(ruby, rb_self)?.0;
        check_frozen(ruby, rb_self)?;
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
        let watermark = unwrap::<Self>(ruby, rb_self)?.0.get();
        let start = to_u64(ruby, "start", start)?;
        let finish = to_u64(ruby, "finish", finish)?;
        let lateness = to_u64(ruby, "lateness", lateness)?;
        watermark
            .closes(start, finish, lateness)
            .map_err(|error| refused(ruby, error))
    }

    fn inspect(rb_self: Obj<Self>) -> String {
        let value = match rb_self.0.get().value() {
            Some(value) => value.to_string(),
            None => "nil".to_owned(),
        };
        format!("#<{} value={value}>", rb_self.class())
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = module.define_class("Watermark", ruby.class_object())?;
    class.define_alloc_func::<RbWatermark>();
    class.define_method("initialize", method!(RbWatermark::initialize, -1))?;
    class.define_method("initialize_copy", method!(RbWatermark::initialize_copy, 1))?;
    class.define_method("value", method!(RbWatermark::value, 0))?;
    class.define_method("advance", method!(RbWatermark::advance, 1))?;
    class.define_method("closes?", method!(RbWatermark::closes, 3))?;
    class.define_method("inspect", method!(RbWatermark::inspect, 0))?;
    Ok(())
}
