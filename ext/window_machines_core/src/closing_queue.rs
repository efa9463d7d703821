//! The order held windows close in, across keys, kept without re-indexing
//! on every event.
//!
//! An entry is pushed when a key gains a window (or session) that may close
//! before everything already queued for it; entries go stale as windows grow,
//! merge or are handed over, and are skipped when they reach the front. The
//! tracker that owns the queue says which entries are still live. Stale
//! entries are dropped wholesale once they outnumber live windows, so memory
//! follows what is held, not what happened.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::key_slots::KeySlot;

/// When a window closes and how it ranks among windows that close together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Closing {
    /// The time the watermark must reach.
    pub at: u64,
    /// The key held longest goes first among equals.
    pub seen: u64,
    /// Then the earlier window of that key.
    pub start: u64,
}

#[derive(Debug, Clone, Default)]
pub struct ClosingQueue {
    heap: BinaryHeap<Reverse<(Closing, KeySlot)>>,
}

impl ClosingQueue {
    pub fn push(&mut self, closing: Closing, slot: KeySlot) {
        self.heap.push(Reverse((closing, slot)));
    }

    /// The first entry that closes at or before `watermark` and that
    /// `is_live` accepts, removed; stale entries before it are dropped.
    pub fn pop_closed(
        &mut self,
        watermark: Option<u64>,
        mut is_live: impl FnMut(Closing, KeySlot) -> bool,
    ) -> Option<(Closing, KeySlot)> {
        let watermark = watermark?;
        while let Some(Reverse((closing, slot))) = self.heap.peek().copied() {
            if closing.at > watermark {
                return None;
            }
            self.heap.pop();
            if is_live(closing, slot) {
                return Some((closing, slot));
            }
        }
        None
    }

    /// Whether stale entries outnumber the `live` ones enough to rebuild.
    #[must_use]
    pub fn is_mostly_stale(&self, live: usize) -> bool {
        self.heap.len() > 2 * live + 64
    }

    /// Replaces every entry with the live ones.
    pub fn rebuild(&mut self, live: Vec<(Closing, KeySlot)>) {
        self.heap = live.into_iter().map(Reverse).collect();
    }

    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<Reverse<(Closing, KeySlot)>>()
    }
}
