//! The heap memory a tracker owns, for `ObjectSpace.memsize_of`.

use smallvec::{Array, SmallVec};

/// Bytes the buffer of `items` takes on the heap: none while it fits
/// inline.
pub(crate) fn spilled_bytes<A: Array>(items: &SmallVec<A>) -> usize {
    if items.spilled() {
        items.capacity() * std::mem::size_of::<A::Item>()
    } else {
        0
    }
}
