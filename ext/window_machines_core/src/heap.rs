//! The heap memory a tracker owns, for `ObjectSpace.memsize_of`.

use smallvec::{Array, SmallVec};

use crate::aggregate::Accumulator;
use crate::front_vec::FrontVec;

/// Bytes the buffer of `items` takes on the heap: none while it fits
/// inline.
pub(crate) fn spilled_bytes<A: Array>(items: &SmallVec<A>) -> usize {
    if items.spilled() {
        items.capacity() * std::mem::size_of::<A::Item>()
    } else {
        0
    }
}

/// Bytes a window's or session's accumulators hold on the heap: their
/// buffer, once spilled, and what each accumulator holds.
pub(crate) fn accs_heap_bytes<V: Clone, A: Array<Item = Accumulator<V>>>(
    accs: &SmallVec<A>,
) -> usize {
    spilled_bytes(accs) + accs.iter().map(Accumulator::heap_bytes).sum::<usize>()
}

/// [`accs_heap_bytes`] for accumulators kept in a [`FrontVec`].
pub(crate) fn front_accs_heap_bytes<V: Clone>(accs: &FrontVec<Accumulator<V>>) -> usize {
    accs.heap_bytes() + accs.iter().map(Accumulator::heap_bytes).sum::<usize>()
}
