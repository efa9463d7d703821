//! `WindowMachines::Sessions`.

use std::cell::RefCell;

use magnus::{
    method, prelude::*, typed_data::Obj, DataTypeFunctions, Error, RArray, RModule, Ruby,
    TypedData, Value,
};
use window_machines_core::Sessions;

use crate::convert::{optional_span, optional_u64, span_array, spans_array, to_u64};
use crate::errors::{check_frozen, refused};
use crate::receiver::unwrap;

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
    /// Runs `f` on the tracker. Borrows never outlive a call into the core
    /// and no Ruby code runs under one, so the borrow cannot be taken twice;
    /// should that ever change, Ruby gets an error rather than a panic.
    fn with<R>(&self, ruby: &Ruby, f: impl FnOnce(&mut Sessions) -> R) -> Result<R, Error> {
        match self.0.try_borrow_mut() {
            Ok(mut sessions) => Ok(f(&mut sessions)),
            Err(_) => Err(Error::new(
                ruby.exception_runtime_error(),
                "WindowMachines::Sessions re-entered while in use",
            )),
        }
    }

    fn initialize(ruby: &Ruby, rb_self: Obj<Self>, gap: Value) -> Result<(), Error> {
        check_frozen(ruby, rb_self.as_value())?;
        let gap = to_u64(ruby, "gap", gap)?;
        let fresh = Sessions::new(gap).map_err(|error| refused(ruby, error))?;
        rb_self.with(ruby, |sessions| *sessions = fresh)
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        check_frozen(ruby, rb_self.as_value())?;
        let copy = other.with(ruby, |sessions| sessions.clone())?;
        rb_self.with(ruby, |sessions| *sessions = copy)
    }

    fn insert(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let insertion = this
            .with(ruby, |sessions| sessions.insert(timestamp))?
            .map_err(|error| refused(ruby, error))?;
        Ok(span_array(ruby, insertion.span))
    }

    fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.with(ruby, |sessions| sessions.advance_watermark(timestamp))
    }

    fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        let closed = this.with(ruby, |sessions| sessions.take_closed())?;
        Ok(optional_span(ruby, closed))
    }

    fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let watermark =
            unwrap::<Self>(ruby, rb_self)?.with(ruby, |sessions| sessions.watermark())?;
        Ok(optional_u64(ruby, watermark))
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

    fn inspect(ruby: &Ruby, rb_self: Obj<Self>) -> Result<String, Error> {
        let (gap, watermark, spans) = rb_self.with(ruby, |sessions| {
            (
                sessions.gap(),
                sessions.watermark(),
                sessions.spans().to_vec(),
            )
        })?;
        let watermark = watermark.map_or_else(|| "nil".to_owned(), |value| value.to_string());
        let spans: Vec<String> = spans
            .iter()
            .map(|span| format!("[{}, {}]", span.first, span.last))
            .collect();
        Ok(format!(
            "#<{} gap={gap} watermark={watermark} sessions=[{}]>",
            rb_self.class(),
            spans.join(", ")
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = module.define_class("Sessions", ruby.class_object())?;
    class.define_alloc_func::<RbSessions>();
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
    class.define_method("inspect", method!(RbSessions::inspect, 0))?;
    Ok(())
}
