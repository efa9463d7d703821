//! Finding a Ruby key among the keys a tracker holds, and filing a change
//! under it, safely although the key's `hash` and `eql?` may run any Ruby
//! code.
//!
//! A key's `hash` or `eql?` may use the tracker (insert, take, freeze), let
//! another Fiber or Thread use it, or run the GC. So the hash is computed
//! before anything is read from the tracker; each `eql?` runs with no borrow
//! held, after which the guard's epoch tells whether the tracker changed,
//! and if it did the lookup starts over; the change itself is applied only
//! if the epoch is still the one the lookup ended on, right after a fresh
//! frozen check, with no Ruby code in between. An event is therefore filed
//! under the key it was given, and a frozen tracker never changes.

use magnus::{value::Opaque, Error, Ruby, Value};
use window_machines_core::{KeyLookup, KeySlot};

use crate::convert::fixnum_u64;
use crate::errors::check_frozen;
use crate::guard::Guard;
use crate::hash_key::{
    hash_of, hash_without_ruby, same_key, same_key_without_ruby, stored, stored_as_copy,
};
use crate::held::hold;

/// How many times in a row a lookup may start over because the tracker
/// changed under it before the call gives up.
pub const MAX_TRIES: usize = 8;

/// A key looked up: its hash and, if the tracker holds it, its slot.
#[derive(Clone, Copy)]
pub struct Found {
    pub hash: u64,
    pub slot: Option<KeySlot>,
}

/// Looks `key` up in the state `guard` holds. The answer is only good until
/// Ruby code next runs.
pub fn find<S>(ruby: &Ruby, guard: &Guard<S>, key: Value) -> Result<Found, Error>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    let hash = hash_of(key)?;
    let (slot, _) = find_hashed(ruby, guard, key, hash)?;
    Ok(Found { hash, slot })
}

/// [`find`] on a state already borrowed, for a key whose hash and
/// comparisons run no Ruby code (see [`hash_without_ruby`] and
/// [`same_key_without_ruby`]); `None` if any of them would, and the key is
/// then looked up with [`file_under`]. So a batch can look up many keys
/// under one borrow. `hashed` is the key's hash if already known, computed
/// since Ruby code last ran.
fn find_without_ruby<S>(ruby: &Ruby, state: &S, key: Value, hashed: Option<u64>) -> Option<Found>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    let hash = hashed.or_else(|| hash_without_ruby(key))?;
    let mut needs_ruby = false;
    let slot = state.find_key(hash, |held| {
        same_key_without_ruby(ruby, key, ruby.get_inner(*held)).unwrap_or_else(|| {
            // Stops the search: this key may be the one.
            needs_ruby = true;
            true
        })
    });
    (!needs_ruby).then_some(Found { hash, slot })
}

/// What filing an event for `key` at `timestamp` needs, found with no Ruby
/// code run on a state already borrowed: the timestamp, a Fixnum of 0 or
/// more, and the key, found by [`find_without_ruby`] (`hashed` as there).
/// `None` if either needs Ruby, or the key is new and would be held as a
/// copy (which allocates); the event then goes through [`file_under`].
pub fn event_without_ruby<S>(
    ruby: &Ruby,
    state: &S,
    key: Value,
    timestamp: Value,
    hashed: Option<u64>,
) -> Option<(u64, Found)>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    let timestamp = fixnum_u64(timestamp)?;
    let found = find_without_ruby(ruby, state, key, hashed)?;
    if found.slot.is_none() && stored_as_copy(ruby, key) {
        return None;
    }
    Some((timestamp, found))
}

/// The slot holding `key` (hashed to `hash`) and the epoch at which that
/// answer held.
fn find_hashed<S>(
    ruby: &Ruby,
    guard: &Guard<S>,
    key: Value,
    hash: u64,
) -> Result<(Option<KeySlot>, u64), Error>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    'lookup: for _ in 0..MAX_TRIES {
        let epoch = guard.epoch();
        let mut candidate = guard.read(ruby, |state| state.first_with_hash(hash))?;
        while let Some(slot) = candidate {
            let Some(held) = guard.read(ruby, |state| state.key(slot).copied())? else {
                debug_assert!(false, "a chained slot holds no key");
                continue 'lookup;
            };
            // A local: the GC's stack scan keeps it alive (and in place)
            // even if `eql?` makes the tracker let go of it.
            let held = ruby.get_inner(held);
            let same = same_key(ruby, key, held)?;
            if guard.epoch() != epoch {
                continue 'lookup;
            }
            if same {
                return Ok((Some(slot), epoch));
            }
            candidate = guard.read(ruby, |state| state.next_with_same_hash(slot))?;
        }
        return Ok((None, epoch));
    }
    Err(kept_changing(ruby))
}

/// Looks `key` up in `owner`'s state and runs `apply` on the state with what
/// was found, the state unchanged since the lookup. `apply` gets a maker for
/// the key's stored form (see [`stored`]), held through the write barrier,
/// to call if it starts holding the key. Raises FrozenError if the lookup's
/// callbacks froze `owner`.
pub fn file_under<S, R>(
    ruby: &Ruby,
    owner: Value,
    guard: &Guard<S>,
    key: Value,
    mut apply: impl FnMut(&mut S, Found, &mut dyn FnMut() -> Opaque<Value>) -> R,
) -> Result<R, Error>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    let hash = hash_of(key)?;
    for _ in 0..MAX_TRIES {
        let (slot, epoch) = find_hashed(ruby, guard, key, hash)?;
        check_frozen(ruby, owner)?;
        // Made before borrowing: it may allocate, and so run the GC.
        let kept = if slot.is_some() {
            key
        } else {
            stored(ruby, key)
        };
        let found = Found { hash, slot };
        let applied = guard.write_unchanged(ruby, epoch, |state| {
            apply(state, found, &mut || hold(owner, kept))
        })?;
        if let Some(result) = applied {
            return Ok(result);
        }
    }
    Err(kept_changing(ruby))
}

/// [`file_under`] for a change that needs Ruby to compute (a custom
/// aggregator, a big number): `prepare` copies what the change starts from
/// out of the state found for `key`, `compute` runs Ruby on it with the
/// state free, and `apply` commits the result only if the state has not
/// changed since `prepare`; otherwise the whole lookup starts over. What
/// `compute` makes must be kept alive by it until `apply` holds it.
pub fn file_under_computed<S, P, Q, R>(
    ruby: &Ruby,
    owner: Value,
    guard: &Guard<S>,
    key: Value,
    mut prepare: impl FnMut(&S, Found) -> P,
    mut compute: impl FnMut(P) -> Result<Q, Error>,
    mut apply: impl FnMut(&mut S, Found, Q, &mut dyn FnMut() -> Opaque<Value>) -> R,
) -> Result<R, Error>
where
    S: KeyLookup<Key = Opaque<Value>>,
{
    let hash = hash_of(key)?;
    for _ in 0..MAX_TRIES {
        let (slot, epoch) = find_hashed(ruby, guard, key, hash)?;
        let found = Found { hash, slot };
        let prepared = guard.read(ruby, |state| prepare(state, found))?;
        let computed = compute(prepared)?;
        check_frozen(ruby, owner)?;
        let kept = if slot.is_some() {
            key
        } else {
            stored(ruby, key)
        };
        let mut computed = Some(computed);
        let applied = guard.write_unchanged(ruby, epoch, |state| {
            computed
                .take()
                .map(|computed| apply(state, found, computed, &mut || hold(owner, kept)))
        })?;
        if let Some(Some(result)) = applied {
            return Ok(result);
        }
    }
    Err(kept_changing(ruby))
}

fn kept_changing(ruby: &Ruby) -> Error {
    Error::new(
        ruby.exception_runtime_error(),
        format!(
            "the tracker changed during each of {MAX_TRIES} tries to look a key up (its hash or \
             eql?, a field's [] or a custom aggregator changes it, or lets another Fiber or Thread \
             do so); nothing was changed"
        ),
    )
}
