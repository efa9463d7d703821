//! Checkpoints: Hashes made only of Integers, Arrays and nil, so that JSON,
//! YAML, MessagePack or a database column can hold them. Reading one back
//! treats it as untrusted input: every key, type and range is checked here,
//! every invariant by the core.

use magnus::{
    prelude::*, r_hash::ForEach, rb_sys::AsRawValue, Error, RArray, RHash, RString, Ruby, Symbol,
    Value,
};
use window_machines_core::Span;

use crate::convert::{entry, to_u64};
use crate::errors::{described, invalid_argument, shown, wrong_type};

/// The values stored under `names` in `input`, each keyed by a Symbol or a
/// String (so a JSON round trip works), each exactly once, with no other key.
pub fn fields<const N: usize>(
    ruby: &Ruby,
    input: Value,
    names: [&str; N],
) -> Result<[Value; N], Error> {
    let mut values = [ruby.qnil().as_value(); N];
    read_fields(ruby, input, &names, &[], &mut values)?;
    Ok(values)
}

/// [`fields`] for a list of names known at run time, into `values` (as
/// long as `names`), which the caller keeps where the GC sees it. A name
/// in `optional` may be left out, and reads as nil: a field added to a
/// checkpoint later, so that older checkpoints still read.
pub fn read_fields(
    ruby: &Ruby,
    input: Value,
    names: &[&str],
    optional: &[&str],
    values: &mut [Value],
) -> Result<(), Error> {
    let hash = RHash::from_value(input).ok_or_else(|| {
        wrong_type(
            ruby,
            format!("checkpoint must be a Hash, got {}", described(input)),
        )
    })?;
    let mut found: Vec<Option<Value>> = vec![None; names.len()];
    hash.foreach(|key: Value, value: Value| {
        let index = key_name(key)
            .and_then(|name| names.iter().position(|known| *known == name))
            .ok_or_else(|| {
                invalid_argument(
                    ruby,
                    format!("checkpoint has an unknown key {}", shown(key)),
                )
            })?;
        match found.get_mut(index) {
            Some(slot) if slot.is_none() => *slot = Some(value),
            _ => {
                return Err(invalid_argument(
                    ruby,
                    format!("checkpoint gives {} twice", shown(key)),
                ))
            }
        }
        Ok(ForEach::Continue)
    })?;
    for ((value, found), name) in values.iter_mut().zip(found).zip(names) {
        *value = match found {
            Some(found) => found,
            None if optional.contains(name) => ruby.qnil().as_value(),
            None => {
                return Err(invalid_argument(
                    ruby,
                    format!("checkpoint is missing {name}"),
                ))
            }
        };
    }
    Ok(())
}

fn key_name(key: Value) -> Option<String> {
    if let Some(symbol) = Symbol::from_value(key) {
        return symbol.name().ok().map(|name| name.into_owned());
    }
    RString::from_value(key).and_then(|string| string.to_string().ok())
}

/// `nil` or false (false), or true: a flag a checkpoint may leave out.
pub fn optional_flag(ruby: &Ruby, name: &str, value: Value) -> Result<bool, Error> {
    if value.is_nil() || value.as_raw() == ruby.qfalse().as_raw() {
        return Ok(false);
    }
    if value.as_raw() == ruby.qtrue().as_raw() {
        return Ok(true);
    }
    Err(wrong_type(
        ruby,
        format!("{name} must be true or false, got {}", described(value)),
    ))
}

/// `nil` or a u64.
pub fn optional_u64(ruby: &Ruby, name: &str, value: Value) -> Result<Option<u64>, Error> {
    if value.is_nil() {
        return Ok(None);
    }
    to_u64(ruby, name, value).map(Some)
}

/// `[[first, last], ...]`.
pub fn spans(ruby: &Ruby, value: Value) -> Result<Vec<Span>, Error> {
    let array = RArray::from_value(value).ok_or_else(|| {
        wrong_type(
            ruby,
            format!(
                "sessions must be an Array of [first, last] pairs, got {}",
                described(value)
            ),
        )
    })?;
    let mut spans = Vec::with_capacity(array.len());
    // By index, not copied out: the entries stay where Ruby's GC sees them.
    for index in 0..array.len() {
        let entry = entry(ruby, array, index)?;
        let pair = RArray::from_value(entry)
            .filter(|pair| pair.len() == 2)
            .ok_or_else(|| {
                wrong_type(
                    ruby,
                    format!(
                        "sessions[{index}] must be an Array of [first, last], got {}",
                        described(entry)
                    ),
                )
            })?;
        let first = to_u64(ruby, &format!("sessions[{index}] first"), pair.entry(0)?)?;
        let last = to_u64(ruby, &format!("sessions[{index}] last"), pair.entry(1)?)?;
        spans.push(Span { first, last });
    }
    Ok(spans)
}
