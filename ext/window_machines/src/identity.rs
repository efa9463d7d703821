//! Value equality for the wrapped types: same class, same state.

use std::hash::{DefaultHasher, Hash, Hasher};

use magnus::{rb_sys::AsRawValue, rb_sys::FromRawValue, Value};

/// The class `value` is an instance of, past any singleton class (a
/// tracker built with a clock has one).
pub fn class_of(value: Value) -> Value {
    // SAFETY: rb_obj_class reads the class chain of a live object (the
    // call's receiver or argument) and cannot raise; what it returns is a
    // class, which the GC keeps (classes are reachable from their constant).
    unsafe { Value::from_raw(rb_sys::rb_obj_class(value.as_raw())) }
}

pub fn same_class(a: Value, b: Value) -> bool {
    class_of(a).as_raw() == class_of(b).as_raw()
}

/// A hash of `state`, folded into a Fixnum-sized Integer for Ruby's `#hash`.
pub fn state_hash(state: &impl Hash) -> i64 {
    let mut hasher = DefaultHasher::new();
    state.hash(&mut hasher);
    // Two bits dropped: the result fits a Fixnum, so Ruby allocates nothing.
    i64::try_from(hasher.finish() >> 2).unwrap_or_default()
}
