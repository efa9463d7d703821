//! What one key keeps per session (its span, its accumulators) and per
//! part of a window (its accumulators): items in order, usually one, and
//! for sessions opened anywhere but mostly at the end, and handed over
//! from the front as they close.

use std::mem::size_of;
use std::ops::{Deref, DerefMut};

use thin_vec::ThinVec;

/// Items in order. One is kept inline; more go to the heap, in one
/// allocation (its length and capacity at its head), where the first is
/// taken out in constant time: a taken item is left behind, emptied, until
/// the taken ones are half of what is kept, and then all are dropped at
/// once. A key holding thousands of sessions (a long lag, a short gap) so
/// pays no shift of all of them for each one handed over. An item with
/// spare values in its own layout (an enum's tag) leaves room for the
/// other variants: a `FrontVec` of accumulators is no bigger than one
/// accumulator.
///
/// Two or more items once took two allocations (a box holding a `Vec`),
/// and reading them followed two pointers.
#[derive(Debug, Clone, Default)]
pub(crate) enum FrontVec<T> {
    #[default]
    Empty,
    One(T),
    Many(Spilled<T>),
}

/// The heap memory a [`FrontVec`] of two items or more keeps them in,
/// which [`FrontVec::drain_into`] hands back emptied, for
/// [`FrontVec::from_iter_in`] to reuse.
pub(crate) type Buffer<T> = ThinVec<T>;

/// Bytes of heap `buffer` keeps, not counting what its items own.
fn buffer_bytes<T>(buffer: &Buffer<T>) -> usize {
    // The head: a length and a capacity.
    2 * size_of::<usize>() + buffer.capacity() * size_of::<T>()
}

/// Emptied buffers kept for reuse, no more than their keeper allows. A
/// copy of the keeper starts without any.
#[derive(Debug)]
pub(crate) struct SpareBuffers<T>(Vec<Buffer<T>>);

impl<T> Default for SpareBuffers<T> {
    fn default() -> Self {
        SpareBuffers(Vec::new())
    }
}

impl<T> Clone for SpareBuffers<T> {
    fn clone(&self) -> Self {
        SpareBuffers::default()
    }
}

impl<T> SpareBuffers<T> {
    pub(crate) fn take(&mut self) -> Option<Buffer<T>> {
        self.0.pop()
    }

    /// Keeps `buffer` (emptied) if fewer than `at_most` are kept.
    pub(crate) fn keep(&mut self, buffer: Buffer<T>, at_most: usize) {
        if self.0.len() < at_most {
            self.0.push(buffer);
        }
    }

    /// Frees those beyond `at_most`.
    pub(crate) fn trim(&mut self, at_most: usize) {
        if self.0.len() > at_most {
            self.0.truncate(at_most);
            if self.0.capacity() > 2 * at_most {
                self.0.shrink_to(at_most);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.capacity() * size_of::<Buffer<T>>() + self.0.iter().map(buffer_bytes).sum::<usize>()
    }
}

/// The heap part of a [`FrontVec`]: always two items or more from `from`.
#[derive(Debug, Clone)]
pub(crate) struct Spilled<T> {
    items: ThinVec<T>,
    /// The items before it were taken out.
    from: usize,
}

impl<T> FrontVec<T> {
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            FrontVec::Empty => &[],
            FrontVec::One(item) => std::slice::from_ref(item),
            FrontVec::Many(spilled) => spilled.items.get(spilled.from..).unwrap_or_default(),
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            FrontVec::Empty => &mut [],
            FrontVec::One(item) => std::slice::from_mut(item),
            FrontVec::Many(spilled) => spilled.items.get_mut(spilled.from..).unwrap_or_default(),
        }
    }

    pub(crate) fn from_vec(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, FrontVec::Empty)
    }

    pub(crate) fn push(&mut self, item: T) {
        self.insert(self.len(), item);
    }

    /// Puts `item` in place of the one at `index`, if there is one.
    pub(crate) fn replace(&mut self, index: usize, item: T) {
        if let Some(slot) = self.as_mut_slice().get_mut(index) {
            *slot = item;
        }
    }

    /// Puts `item` at `index` (at most the length), shifting those after.
    pub(crate) fn insert(&mut self, index: usize, item: T) {
        match self {
            FrontVec::Empty => *self = FrontVec::One(item),
            FrontVec::One(_) => {
                let FrontVec::One(held) = std::mem::take(self) else {
                    return;
                };
                let mut items = ThinVec::with_capacity(2);
                items.push(held);
                items.insert(index.min(1), item);
                *self = FrontVec::Many(Spilled { items, from: 0 });
            }
            FrontVec::Many(spilled) => {
                // Room left by taken items is used before the heap grows.
                if spilled.items.len() == spilled.items.capacity() && spilled.from > 0 {
                    spilled.drop_taken();
                }
                let at = (spilled.from + index).min(spilled.items.len());
                spilled.items.insert(at, item);
            }
        }
    }

    /// Asks the CPU to start loading the first `items` kept on the heap, if
    /// any, with the length and capacity at their head. The caller says how
    /// many: the length is in that head, and reading it would wait for the
    /// load this starts.
    pub(crate) fn prefetch_heap(&self, items: usize) {
        if let FrontVec::Many(spilled) = self {
            let head = 2 * size_of::<usize>();
            let start = spilled.items.as_ptr().cast::<u8>().wrapping_sub(head);
            crate::key_slots::prefetch_bytes(start, head + items * size_of::<T>());
        }
    }

    /// Heap memory kept, not counting what the items own.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            FrontVec::Many(spilled) => buffer_bytes(&spilled.items),
            _ => 0,
        }
    }

    /// `items`, kept in `buffer` (emptied by [`FrontVec::drain_into`]) if
    /// there are two or more, where `buffer` gives one.
    pub(crate) fn from_iter_in(
        items: impl IntoIterator<Item = T>,
        buffer: impl FnOnce() -> Option<Buffer<T>>,
    ) -> Self {
        let mut items = items.into_iter();
        let Some(first) = items.next() else {
            return FrontVec::Empty;
        };
        let Some(second) = items.next() else {
            return FrontVec::One(first);
        };
        // The most the rest may hold: what a filter leaves is usually all.
        let (least, most) = items.size_hint();
        let mut all = buffer().unwrap_or_else(|| ThinVec::with_capacity(2 + most.unwrap_or(least)));
        all.clear();
        all.extend([first, second]);
        all.extend(items);
        all.shrink_to_fit();
        FrontVec::Many(Spilled {
            items: all,
            from: 0,
        })
    }

    /// Moves the items, in order, to the end of `into`, and hands back the
    /// heap buffer they were kept in, emptied, if there was one.
    pub(crate) fn drain_into(self, into: &mut impl Extend<T>) -> Option<Buffer<T>> {
        match self {
            FrontVec::Empty => None,
            FrontVec::One(item) => {
                into.extend(Some(item));
                None
            }
            FrontVec::Many(Spilled { mut items, from }) => {
                items.drain(..from);
                into.extend(items.drain(..));
                Some(items)
            }
        }
    }
}

impl<T: Default> FrontVec<T> {
    /// Puts `item` in place of the two at `index` and `index + 1`: two
    /// sessions an event bridged.
    pub(crate) fn join(&mut self, index: usize, item: T) {
        self.remove(index + 1);
        self.replace(index, item);
    }

    /// Takes out the item at `index`, shifting those after; the first in
    /// constant time.
    pub(crate) fn remove(&mut self, index: usize) -> Option<T> {
        let removed = match self {
            FrontVec::Empty => None,
            FrontVec::One(_) if index == 0 => match std::mem::take(self) {
                FrontVec::One(item) => Some(item),
                _ => None,
            },
            FrontVec::One(_) => None,
            FrontVec::Many(spilled) if index == 0 => {
                let item = spilled.items.get_mut(spilled.from).map(std::mem::take);
                spilled.from += 1;
                if spilled.from * 2 >= spilled.items.len() {
                    spilled.drop_taken();
                }
                item
            }
            FrontVec::Many(spilled) => {
                let at = spilled.from + index;
                (at < spilled.items.len()).then(|| spilled.items.remove(at))
            }
        };
        if let FrontVec::Many(spilled) = self {
            if spilled.items.len() - spilled.from == 1 {
                *self = spilled.items.pop().map_or(FrontVec::Empty, FrontVec::One);
            }
        }
        removed
    }
}

impl<T> Deref for FrontVec<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for FrontVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> FromIterator<T> for FrontVec<T> {
    /// One item (a window's one accumulator) is kept without touching the
    /// heap: a `Vec` made and freed for it cost every window opened.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        FrontVec::from_iter_in(items, || None)
    }
}

impl<T> IntoIterator for FrontVec<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    /// The items, in order; one kept inline is moved out without touching
    /// the heap.
    fn into_iter(self) -> IntoIter<T> {
        match self {
            FrontVec::Empty => IntoIter::Inline(None.into_iter()),
            FrontVec::One(item) => IntoIter::Inline(Some(item).into_iter()),
            FrontVec::Many(spilled) => {
                let Spilled { mut items, from } = spilled;
                items.drain(..from);
                IntoIter::Spilled(items.into_iter())
            }
        }
    }
}

/// The iterator of a [`FrontVec`] taken apart.
pub(crate) enum IntoIter<T> {
    Inline(std::option::IntoIter<T>),
    Spilled(thin_vec::IntoIter<T>),
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            IntoIter::Inline(items) => items.next(),
            IntoIter::Spilled(items) => items.next(),
        }
    }
}

impl<T> Spilled<T> {
    fn drop_taken(&mut self) {
        self.items.drain(..self.from);
        self.from = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_vec_through_inserts_removals_joins_and_iteration() {
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            usize::try_from(rng % below as u64).unwrap_or_default()
        };
        let (mut front, mut model) = (FrontVec::default(), Vec::new());
        for step in 0..20_000_u64 {
            match next(7) {
                0 | 1 => {
                    let at = next(model.len() + 1);
                    front.insert(at, step);
                    model.insert(at, step);
                }
                2 => {
                    front.push(step);
                    model.push(step);
                }
                3 => {
                    let expected = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(front.remove(0), expected);
                }
                4 => {
                    let at = next(model.len() + 1);
                    front.replace(at, step);
                    if let Some(slot) = model.get_mut(at) {
                        *slot = step;
                    }
                }
                5 if model.len() >= 2 => {
                    let at = next(model.len() - 1);
                    front.join(at, step);
                    model.splice(at..=at + 1, [step]);
                }
                _ => {
                    let at = next(model.len() + 2);
                    let expected = (at < model.len()).then(|| model.remove(at));
                    assert_eq!(front.remove(at), expected);
                }
            }
            assert_eq!(front.as_slice(), model.as_slice());
            assert_eq!(front.is_empty(), model.is_empty());
            assert_eq!(matches!(front, FrontVec::Many(_)), model.len() > 1);
            if step % 100 == 0 {
                assert_eq!(front.clone().into_iter().collect::<Vec<_>>(), model);
                let collected = front.iter().collect::<FrontVec<_>>();
                assert_eq!(collected.as_slice(), model.iter().collect::<Vec<_>>());
                assert_eq!(matches!(collected, FrontVec::Many(_)), model.len() > 1);
            }
        }
    }

    #[test]
    fn hands_its_heap_buffer_back_for_the_next_to_reuse() {
        let mut moved = Vec::new();
        let mut three = FrontVec::from_vec(vec![0_u64, 1, 2, 3]);
        three.remove(0);
        let buffer = three
            .drain_into(&mut moved)
            .expect("three items are on the heap");
        assert_eq!(moved, [1, 2, 3]);
        assert!(buffer.is_empty());
        let memory = buffer.as_ptr();
        let reused = FrontVec::from_iter_in([4_u64, 5], || Some(buffer));
        assert_eq!(reused.as_slice(), [4, 5]);
        assert_eq!(reused.as_ptr(), memory);
        let one = FrontVec::from_iter_in([6_u64], || panic!("one item needs no buffer"));
        assert!(one.drain_into(&mut moved).is_none());
        assert_eq!(moved, [1, 2, 3, 6]);
    }

    #[test]
    fn taking_the_first_of_many_keeps_memory_bounded() {
        let mut front = FrontVec::from_vec((0..4_096_u64).collect());
        let capacity = front.heap_bytes();
        for next in 4_096..1_000_000 {
            assert_eq!(front.remove(0), Some(next - 4_096));
            front.push(next);
        }
        assert_eq!(front.len(), 4_096);
        assert!(front.heap_bytes() <= 2 * capacity + size_of::<Spilled<u64>>());
        for item in front.as_mut_slice() {
            *item += 1;
        }
        assert_eq!(front.as_slice().first(), Some(&(1_000_000 - 4_096 + 1)));
    }
}
