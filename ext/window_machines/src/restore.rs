//! The one path by which a class's whole state is replaced: a checkpoint
//! read back (`from_h`, `marshal_load`) or a copy (`dup`, `clone`).
//!
//! A checkpoint is always read into a fresh object that no Ruby code can
//! reach, so that objects it names are held (marked and pinned) from the
//! moment they are read, and a refused checkpoint leaves the receiver as it
//! was. The finished state then moves into the receiver without a Ruby
//! allocation in between.

use magnus::{typed_data::Obj, Error, RClass, Ruby, TypedData, Value};

use crate::receiver::{unfrozen, unwrap};

/// A class whose state is replaced whole.
pub trait Stateful: TypedData + Default {
    type State;

    /// A copy of the state, for `dup` and `clone`.
    fn copy_state(&self, ruby: &Ruby) -> Result<Self::State, Error>;

    /// The state, moved out; a default one is left behind.
    fn take_state(&self, ruby: &Ruby) -> Result<Self::State, Error>;

    /// Replaces the state. `owner` is the object wrapping `self`: the state
    /// may hold objects younger than it, which the write barrier must learn.
    fn put_state(&self, ruby: &Ruby, owner: Value, state: Self::State) -> Result<(), Error>;

    /// Fills `fresh`, a new object no Ruby code can reach, from a checkpoint
    /// read as untrusted input.
    fn restore(ruby: &Ruby, fresh: Obj<Self>, checkpoint: Value) -> Result<(), Error>;
}

/// Moves `state` into `owner`, the last step of `initialize`, `dup` and
/// `marshal_load`: checked for a freeze again here, since user code run
/// while the state was made (a key's `hash`, an aggregator's
/// `respond_to?`) may have frozen `owner`, which then must not change.
pub fn replace<T: Stateful>(ruby: &Ruby, owner: Value, state: T::State) -> Result<(), Error> {
    unfrozen::<T>(ruby, owner)?.put_state(ruby, owner, state)
}

/// `Class.from_h(checkpoint)`.
pub fn from_h<T: Stateful>(ruby: &Ruby, class: RClass, checkpoint: Value) -> Result<Obj<T>, Error> {
    let fresh = ruby.obj_wrap_as(T::default(), class);
    T::restore(ruby, fresh, checkpoint)?;
    Ok(fresh)
}

/// `#marshal_load(checkpoint)`, called by `Marshal.load` on an allocated
/// object, or by anyone on any object.
pub fn marshal_load<T: Stateful>(
    ruby: &Ruby,
    rb_self: Value,
    checkpoint: Value,
) -> Result<(), Error> {
    unfrozen::<T>(ruby, rb_self)?;
    let fresh = from_h::<T>(ruby, T::class(ruby), checkpoint)?;
    let state = fresh.take_state(ruby)?;
    replace::<T>(ruby, rb_self, state)
}

/// `#initialize_copy(other)`, behind `dup` and `clone`.
pub fn initialize_copy<T: Stateful>(
    ruby: &Ruby,
    rb_self: Value,
    other: Value,
) -> Result<(), Error> {
    unfrozen::<T>(ruby, rb_self)?;
    let state = unwrap::<T>(ruby, other)?.copy_state(ruby)?;
    replace::<T>(ruby, rb_self, state)
}
