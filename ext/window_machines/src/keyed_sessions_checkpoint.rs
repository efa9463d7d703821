//! KeyedSessions checkpoints: `{gap:, max_sessions:, watermark:, sessions:
//! [[key, first, last], ...]}`, sessions grouped by key, keys in the order
//! they started being held (which breaks ties in the closing order).

use magnus::{prelude::*, typed_data::Obj, value::Opaque, Error, RArray, RHash, Ruby, Value};
use window_machines_core::{KeyedSessions, Span};

use crate::checkpoint;
use crate::convert::{entry, to_u64};
use crate::errors::{described, wrong_type, OrRaise};
use crate::hash_key::json_problem;
use crate::key_lookup::file_under;
use crate::keyed_sessions::{keyed_span, RbKeyedSessions};

/// Which keys a dump accepts.
pub enum Keys {
    /// Only keys that come back from JSON as equal keys (`to_h`).
    JsonOnly,
    /// Any key (`marshal_dump`: Marshal decides what it can carry).
    Any,
}

pub fn dump(ruby: &Ruby, this: &RbKeyedSessions, keys: Keys) -> Result<RHash, Error> {
    // Copied out first; no Ruby code runs while the checkpoint is built, so
    // the keys stay held (and marked) by the tracker meanwhile.
    let (gap, max_sessions, watermark, held) = this.0.read(ruby, |tracker| {
        let held: Vec<(Opaque<Value>, Vec<Span>)> = tracker
            .keys()
            .into_iter()
            .map(|(key, spans)| (*key, spans.to_vec()))
            .collect();
        (
            tracker.gap(),
            tracker.max_sessions(),
            tracker.watermark(),
            held,
        )
    })?;
    let sessions = ruby.ary_new_capa(held.len());
    for (key, spans) in held {
        let key = ruby.get_inner(key);
        if let (Keys::JsonOnly, Some(problem)) = (&keys, json_problem(ruby, key)) {
            return Err(wrong_type(
                ruby,
                format!(
                    "key {} has no exact JSON form ({problem}); use Marshal",
                    described(key)
                ),
            ));
        }
        for span in spans {
            sessions.push(keyed_span(ruby, key, span))?;
        }
    }
    let hash = ruby.hash_new();
    hash.aset(ruby.to_symbol("gap"), gap)?;
    hash.aset(ruby.to_symbol("max_sessions"), max_sessions)?;
    hash.aset(ruby.to_symbol("watermark"), watermark)?;
    hash.aset(ruby.to_symbol("sessions"), sessions)?;
    Ok(hash)
}

/// Reads a checkpoint into `fresh`. Each key goes straight into the
/// tracker, found and held exactly as `insert` finds and holds keys, so the
/// GC sees it from the moment it is read.
pub fn restore(ruby: &Ruby, fresh: Obj<RbKeyedSessions>, input: Value) -> Result<(), Error> {
    let [gap, max_sessions, watermark, sessions] = checkpoint::fields(
        ruby,
        input,
        ["gap", "max_sessions", "watermark", "sessions"],
    )?;
    let gap = to_u64(ruby, "gap", gap)?;
    let max_sessions = checkpoint::optional_u64(ruby, "max_sessions", max_sessions)?;
    let watermark = checkpoint::optional_u64(ruby, "watermark", watermark)?;
    let array = RArray::from_value(sessions).ok_or_else(|| {
        wrong_type(
            ruby,
            format!(
                "sessions must be an Array of [key, first, last], got {}",
                described(sessions)
            ),
        )
    })?;
    let tracker = KeyedSessions::restoring(gap, max_sessions, watermark).or_raise(ruby)?;
    fresh.0.write(ruby, |held| *held = tracker)?;
    let owner = fresh.as_value();
    // By index: a user's `hash` may change the Array; its length is read anew.
    let mut index = 0;
    while index < array.len() {
        let triple = entry(ruby, array, index)?;
        let (key, span) = keyed_span_at(ruby, index, triple)?;
        file_under(ruby, owner, &fresh.0, key, |tracker, found, make_key| {
            tracker.restore(found.slot, found.hash, make_key, span)
        })?
        .or_raise(ruby)?;
        index += 1;
    }
    fresh
        .0
        .write(ruby, KeyedSessions::finish_restore)?
        .or_raise(ruby)
}

/// `[key, first, last]` at `sessions[index]`.
fn keyed_span_at(ruby: &Ruby, index: usize, triple: Value) -> Result<(Value, Span), Error> {
    let array = RArray::from_value(triple)
        .filter(|array| array.len() == 3)
        .ok_or_else(|| {
            wrong_type(
                ruby,
                format!(
                    "sessions[{index}] must be an Array of [key, first, last], got {}",
                    described(triple)
                ),
            )
        })?;
    let key = entry(ruby, array, 0)?;
    let first = to_u64(
        ruby,
        &format!("sessions[{index}] first"),
        entry(ruby, array, 1)?,
    )?;
    let last = to_u64(
        ruby,
        &format!("sessions[{index}] last"),
        entry(ruby, array, 2)?,
    )?;
    Ok((key, Span { first, last }))
}
