//! The Rust value behind `self`.
//!
//! magnus's own conversion wraps `rb_check_typeddata` in `rb_protect`, a
//! setjmp on every call that costs more than all the rest of a call such as
//! `Watermark#advance`. Asking `rb_typeddata_is_kind_of` first cannot raise,
//! so no protection is needed.

use magnus::{
    prelude::*, rb_sys::AsRawValue, DataType, Error, RClass, RModule, Ruby, TypedData, Value,
};
use rb_sys::{rb_data_type_t, rb_typeddata_is_kind_of, RTYPEDDATA_GET_DATA};

/// The `T` wrapped by `value`, borrowed for the current call (as long as
/// the call's `Ruby` handle).
#[inline]
pub fn unwrap<T: TypedData>(ruby: &Ruby, value: Value) -> Result<&T, Error> {
    // magnus's DataType is #[repr(transparent)] over rb_data_type_t.
    let data_type = T::data_type() as *const DataType as *const rb_data_type_t;
    // SAFETY: the kind check guarantees the object wraps a T; the object is
    // alive for the whole call because it is the call's receiver, and Ruby
    // never moves the boxed T.
    unsafe {
        if rb_typeddata_is_kind_of(value.as_raw(), data_type) == 0 {
            return Err(Error::new(
                ruby.exception_type_error(),
                format!("expected {}, got {}", T::class(ruby), value.classname()),
            ));
        }
        Ok(&*(RTYPEDDATA_GET_DATA(value.as_raw()) as *const T))
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
