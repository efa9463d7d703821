//! Strict conversion between Ruby Integers and u64: no coercion through
//! `to_int`, no truncation of Floats.

use magnus::{prelude::*, rb_sys::AsRawValue, Error, Fixnum, RArray, RBignum, Ruby, Value};

use rb_sys::{FIX2LONG, FIXNUM_P};
use window_machines_core::{Insertion, Span, Window, MAX_SESSIONS, MAX_SLIDING_WINDOWS};

use crate::errors::{not_an_integer, out_of_range};

/// The u64 in `value`, or a TypeError / RangeError naming the argument.
#[inline(always)]
pub fn to_u64(ruby: &Ruby, name: &str, value: Value) -> Result<u64, Error> {
    match fixnum_u64(value) {
        Some(unsigned) => Ok(unsigned),
        None => to_u64_uncommon(ruby, name, value),
    }
}

/// The common case of [`to_u64`]: a Fixnum of 0 or more; `None` for
/// anything else.
#[inline]
pub fn fixnum_u64(value: Value) -> Option<u64> {
    let raw = value.as_raw();
    if !FIXNUM_P(raw) {
        return None;
    }
    // SAFETY: raw was just checked to be a Fixnum.
    u64::try_from(unsafe { FIX2LONG(raw) }).ok()
}

/// Bignums, negative numbers and non-Integers: kept out of line so the
/// common Fixnum path stays small enough to inline into every method.
#[cold]
#[inline(never)]
fn to_u64_uncommon(ruby: &Ruby, name: &str, value: Value) -> Result<u64, Error> {
    if Fixnum::from_value(value).is_some() {
        return Err(out_of_range(ruby, name, value));
    }
    match RBignum::from_value(value) {
        Some(bignum) => bignum.to_u64().map_err(|_| out_of_range(ruby, name, value)),
        None => Err(not_an_integer(ruby, name, value)),
    }
}

fn pair(ruby: &Ruby, a: u64, b: u64) -> RArray {
    ruby.ary_new_from_values(&[ruby.integer_from_u64(a), ruby.integer_from_u64(b)])
}

/// The most pairs [`pairs_array`] holds: the larger of the sliding and
/// session caps, which the core defines.
const MAX_PAIRS: usize = if MAX_SESSIONS > MAX_SLIDING_WINDOWS {
    MAX_SESSIONS
} else {
    MAX_SLIDING_WINDOWS
};
const _: () = assert!(MAX_PAIRS >= MAX_SESSIONS && MAX_PAIRS >= MAX_SLIDING_WINDOWS);

/// `[[a, b], ...]` of at most 32 pairs, built without a protected push per
/// element: the inner arrays wait on the stack, where Ruby's GC sees them.
fn pairs_array(ruby: &Ruby, pairs: impl Iterator<Item = (u64, u64)>) -> RArray {
    debug_assert!(pairs.size_hint().0 <= MAX_PAIRS);
    let mut buffer = [ruby.qnil().as_value(); MAX_PAIRS];
    let mut len = 0;
    for (slot, (a, b)) in buffer.iter_mut().zip(pairs) {
        *slot = pair(ruby, a, b).as_value();
        len += 1;
    }
    ruby.ary_new_from_values(&buffer[..len])
}

/// `[a, b, ...]`: one memory copy when every number is a Fixnum (no
/// object to allocate, so none the GC could miss in a Rust buffer);
/// otherwise pushed one by one.
pub fn integers_array(ruby: &Ruby, numbers: &[u64]) -> Result<RArray, Error> {
    if numbers.iter().all(|&number| number <= FIXNUM_MAX) {
        let fixnums: Vec<Value> = numbers
            .iter()
            .map(|&number| ruby.integer_from_u64(number).as_value())
            .collect();
        return Ok(ruby.ary_new_from_values(&fixnums));
    }
    let array = ruby.ary_new_capa(numbers.len());
    for &number in numbers {
        array.push(ruby.integer_from_u64(number))?;
    }
    Ok(array)
}

/// The largest Integer Ruby holds without allocating.
const FIXNUM_MAX: u64 = rb_sys::FIXNUM_MAX.unsigned_abs();

/// `[start, end]`.
pub fn window_array(ruby: &Ruby, window: Window) -> RArray {
    pair(ruby, window.start, window.end)
}

/// `[[start, end], ...]`.
pub fn windows_array(ruby: &Ruby, windows: impl Iterator<Item = Window>) -> RArray {
    pairs_array(ruby, windows.map(|window| (window.start, window.end)))
}

/// `[first, last]`.
pub fn span_array(ruby: &Ruby, span: Span) -> RArray {
    pair(ruby, span.first, span.last)
}

/// `[[first, last], ...]`.
pub fn spans_array(ruby: &Ruby, spans: &[Span]) -> RArray {
    pairs_array(ruby, spans.iter().map(|span| (span.first, span.last)))
}

/// `nil` or `[first, last]`.
pub fn optional_span(ruby: &Ruby, span: Option<Span>) -> Value {
    match span {
        Some(span) => span_array(ruby, span).as_value(),
        None => ruby.qnil().as_value(),
    }
}

/// `array[index]`; an index past what Ruby can address is an IndexError.
pub fn entry(ruby: &Ruby, array: RArray, index: usize) -> Result<Value, Error> {
    let index = isize::try_from(index).map_err(|_| {
        Error::new(
            ruby.exception_index_error(),
            format!("index {index} is past what an Array holds"),
        )
    })?;
    array.entry(index)
}

/// An optional Integer as `inspect` shows it: the number, or `nil`.
pub fn optional(value: Option<u64>) -> String {
    value.map_or_else(|| "nil".to_owned(), |value| value.to_string())
}

/// What an insert returns: `[first, last]` of the session the event ended
/// up in. Given a block, first yields `(old_span, new_span)` for each span
/// the insert replaced, oldest first; the tracker is already updated and no
/// longer borrowed, so the block may use it.
pub fn inserted(ruby: &Ruby, insertion: Insertion) -> Result<RArray, Error> {
    if ruby.block_given() {
        yield_merges(ruby, &insertion, None)?;
    }
    Ok(span_array(ruby, insertion.span))
}

/// Yields `(old_span, new_span)` for each span `insertion` replaced,
/// oldest first, followed by `key` when one is given (a batch of many
/// keys). The block must have been given.
pub fn yield_merges(ruby: &Ruby, insertion: &Insertion, key: Option<Value>) -> Result<(), Error> {
    for old in insertion.replaced.spans() {
        let old = span_array(ruby, old);
        let new = span_array(ruby, insertion.span);
        match key {
            None => ruby.yield_values::<_, Value>((old, new))?,
            Some(key) => ruby.yield_values::<_, Value>((old, new, key))?,
        };
    }
    Ok(())
}
