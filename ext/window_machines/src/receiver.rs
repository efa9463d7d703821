//! The Rust value behind `self` (or behind an argument of the same class).
//!
//! magnus's own conversion wraps `rb_check_typeddata` in `rb_protect`, a
//! setjmp on every call that costs more than all the rest of a call such as
//! `Watermark#advance`. Comparing the object's data type with `T`'s (our
//! types have no parent types, so equality is the whole kind check) reads
//! two words and cannot raise.

use magnus::{
    prelude::*, rb_sys::AsRawValue, DataType, Error, RClass, RModule, Ruby, TypedData, Value,
};
use rb_sys::{
    rb_data_type_t, ruby_value_type::RUBY_T_DATA, RB_TYPE_P, RTYPEDDATA_GET_DATA, RTYPEDDATA_P,
    RTYPEDDATA_TYPE,
};

use crate::errors::check_frozen;

/// The `T` wrapped by `value`, borrowed for the current call (as long as
/// the call's `Ruby` handle). `value` must be the call's receiver or one of
/// its arguments.
#[inline]
pub fn unwrap<T: TypedData>(ruby: &Ruby, value: Value) -> Result<&T, Error> {
    // magnus's DataType is #[repr(transparent)] over rb_data_type_t.
    let data_type = std::ptr::from_ref::<DataType>(T::data_type()).cast::<rb_data_type_t>();
    let raw = value.as_raw();
    // SAFETY: each read is guarded by the one before it (an object, of
    // T_DATA, typed), so every header read is of a live object's header.
    let wraps_t = unsafe {
        RB_TYPE_P(raw, RUBY_T_DATA)
            && RTYPEDDATA_P(raw)
            && std::ptr::eq(RTYPEDDATA_TYPE(raw), data_type)
    };
    if !wraps_t {
        // SAFETY: the borrowed class name is copied out at once, before any
        // Ruby code can run and free it.
        let got = unsafe { value.classname() }.into_owned();
        // Outside any unsafe block: displaying a class may run Ruby code.
        let expected = T::class(ruby);
        return Err(Error::new(
            ruby.exception_type_error(),
            format!("expected {expected}, got {got}"),
        ));
    }
    // SAFETY: a matching data type guarantees the object wraps a T, which
    // Ruby never moves (the data pointer is fixed). The object stays alive
    // for the whole call: the VM stack holds the call's receiver and
    // arguments until it returns, and the returned borrow lives no longer
    // than the call's `Ruby` handle.
    Ok(unsafe { &*RTYPEDDATA_GET_DATA(raw).cast::<T>() })
}

/// The receiver's `T`, after the frozen check every mutator makes first.
#[inline]
pub fn unfrozen<T: TypedData>(ruby: &Ruby, rb_self: Value) -> Result<&T, Error> {
    let this = unwrap::<T>(ruby, rb_self)?;
    check_frozen(ruby, rb_self)?;
    Ok(this)
}

/// Defines the class that wraps `T`. Objects come from new, from_h, dup,
/// clone or Marshal; a bare `allocate` would skip initialize and hand out a
/// placeholder state, so it is private.
pub fn define_class<T: TypedData + Default>(
    ruby: &Ruby,
    module: RModule,
    name: &str,
) -> Result<RClass, Error> {
    let class = module.define_class(name, ruby.class_object())?;
    class.define_alloc_func::<T>();
    class.funcall::<_, _, Value>("private_class_method", (ruby.to_symbol("allocate"),))?;
    Ok(class)
}
