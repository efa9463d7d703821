//! Strict conversion between Ruby Integers and u64: no coercion through
//! `to_int`, no truncation of Floats.

use magnus::{prelude::*, Error, Fixnum, IntoValue, RArray, RBignum, Ruby, Value};
use window_machines_core::{Span, Window};

use crate::errors::{not_an_integer, out_of_range};

/// The u64 in `value`, or a TypeError / RangeError naming the argument.
#[inline]
pub fn to_u64(ruby: &Ruby, name: &str, value: Value) -> Result<u64, Error> {
    if let Some(fixnum) = Fixnum::from_value(value) {
        return u64::try_from(fixnum.to_i64()).map_err(|_| out_of_range(ruby, name, value));
    }
    match RBignum::from_value(value) {
        Some(bignum) => bignum
            .to_u64()
            .map_err(|_| out_of_range(ruby, name, value)),
        None => Err(not_an_integer(ruby, name, value)),
    }
}

pub fn optional_u64(ruby: &Ruby, value: Option<u64>) -> Value {
    value.into_value_with(ruby)
}

fn pair(ruby: &Ruby, a: u64, b: u64) -> RArray {
    ruby.ary_new_from_values(&[ruby.integer_from_u64(a), ruby.integer_from_u64(b)])
}

/// `[start, end]`.
pub fn window_array(ruby: &Ruby, window: Window) -> RArray {
    pair(ruby, window.start, window.end)
}

/// `[first, last]`.
pub fn span_array(ruby: &Ruby, span: Span) -> RArray {
    pair(ruby, span.first, span.last)
}

/// `nil` or `[first, last]`.
pub fn optional_span(ruby: &Ruby, span: Option<Span>) -> Value {
    match span {
        Some(span) => span_array(ruby, span).as_value(),
        None => ruby.qnil().as_value(),
    }
}
