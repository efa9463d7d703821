//! The Rust value behind `self`.
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

/// The `T` wrapped by `value`, borrowed for the current call (as long as
/// the call's `Ruby` handle).
#[inline]
pub fn unwrap<T: TypedData>(ruby: &Ruby, value: Value) -> Result<&T, Error> {
    // magnus's DataType is #[repr(transparent)] over rb_data_type_t.
    let data_type = T::data_type() as *const DataType as *const rb_data_type_t;
    let raw = value.as_raw();
    // SAFETY: each read is guarded by the one before it; a matching type
    // guarantees the object wraps a T; the object is alive for the whole
    // call because it is the call's receiver, and Ruby never moves the T.
    unsafe {
        let wraps_t = RB_TYPE_P(raw, RUBY_T_DATA)
            && RTYPEDDATA_P(raw)
            && std::ptr::eq(RTYPEDDATA_TYPE(raw), data_type);
        if !wraps_t {
            return Err(Error::new(
                ruby.exception_type_error(),
                format!("expected {}, got {}", T::class(ruby), value.classname()),
            ));
        }
        Ok(&*(RTYPEDDATA_GET_DATA(raw) as *const T))
    }
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
