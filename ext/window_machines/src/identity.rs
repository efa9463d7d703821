//! Value equality for the wrapped types: same class, same state.

use std::hash::{DefaultHasher, Hash, Hasher};

use magnus::{prelude::*, Value};

pub fn same_class(a: Value, b: Value) -> bool {
    a.class().equal(b.class()).unwrap_or(false)
}

/// A hash of `state`, folded into a Fixnum-sized Integer for Ruby's `#hash`.
pub fn state_hash(state: &impl Hash) -> i64 {
    let mut hasher = DefaultHasher::new();
    state.hash(&mut hasher);
    // Two bits dropped: the result fits a Fixnum, so Ruby allocates nothing.
    i64::try_from(hasher.finish() >> 2).unwrap_or_default()
}
