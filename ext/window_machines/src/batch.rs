//! The frame every batch call shares (`tumbling_starts`, `insert_all`,
//! `add_all`): many events in one call, each applied exactly as its single
//! call would apply it, in order.
//!
//! The arguments are Arrays, or objects `to_ary` converts, all of one
//! length, checked before anything is applied. Each is read from a private
//! copy, so a block, a key's `hash` or a trap handler that changes the
//! caller's Array cannot change what the batch applies. Every
//! [`INTERRUPT_EVERY`] elements pending interrupts (Ctrl-C, `Thread#raise`,
//! trap handlers) get their chance, so a long batch stops promptly. An
//! element that is refused raises its single call's error, named with the
//! element's index; the elements before it stay applied.
//!
//! What a batch gains beyond the calls it saves: it knows the keys to come.
//! A keyed batch starts loading each key, then its index bucket, then its
//! entry, a few elements before its turn, so that the cache misses of many
//! keys overlap instead of following one another. And most elements need
//! no Ruby code at all (a Fixnum timestamp; a String, Symbol or Integer
//! key): a keyed call applies those in runs under one borrow of its state,
//! each key hashed once, and hands any other element to its single call.

use std::ops::Range;

use magnus::{prelude::*, value::Opaque, Error, RArray, Ruby, Value};
use window_machines_core::{KeyLookup, Prefetch};

use crate::errors::{at_index, described, invalid_argument, wrong_type};
use crate::guard::Guard;
use crate::hash_key::{hash_without_ruby, prefetch_key};
use crate::key_lookup::{event_without_ruby, Found};

/// How many elements a batch applies between two checks for interrupts:
/// well under a millisecond of work even for the slowest batch call.
pub const INTERRUPT_EVERY: usize = 16_384;

/// How many elements ahead a keyed batch starts loading a key; its bucket
/// and entry follow at half and a quarter of that. Far enough ahead for a
/// miss to complete meanwhile, near enough that what was loaded is still
/// cached when its turn comes.
const LOOKAHEAD: usize = 16;

/// The column that holds a keyed batch's keys: the first, in every call.
const KEYS: usize = 0;

/// The column that holds a keyed batch's timestamps: the second.
const TIMESTAMPS: usize = 1;

/// What loads a keyed batch's keys ahead: [`KeyLookup::prefetch`] on the
/// state `guard` holds, skipped while the state is in use (it is a hint).
pub fn loading_keys<'a, S: KeyLookup>(
    ruby: &'a Ruby,
    guard: &'a Guard<S>,
) -> impl Fn(u64, Prefetch) + 'a {
    move |hash, stage| {
        guard
            .read(ruby, |state| state.prefetch(hash, stage))
            .unwrap_or(());
    }
}

/// The hashes of the keys a keyed batch is loading ahead, each with its
/// element's index and the stretch it was computed in. A stretch ends when
/// Ruby code may run (a key's `hash`, a block, a trap handler), which could
/// change a String key; so a hash from an earlier stretch is only good for
/// loading ahead, a hint.
#[derive(Default)]
pub struct Lookahead {
    hashes: [Option<(usize, u64, u64)>; LOOKAHEAD],
    stretch: u64,
    /// The last element loaded for: a run that stops at an element has
    /// loaded for it already.
    loaded: Option<usize>,
}

impl Lookahead {
    /// The hash of the key at `index`, if it was computed since Ruby code
    /// last ran.
    pub fn hash(&self, index: usize) -> Option<u64> {
        self.hashed(index)
            .filter(|(stretch, _)| *stretch == self.stretch)
            .map(|(_, hash)| hash)
    }

    fn hashed(&self, index: usize) -> Option<(u64, u64)> {
        match self.hashes.get(index % LOOKAHEAD) {
            Some(Some((hashed, stretch, hash))) if *hashed == index => Some((*stretch, *hash)),
            _ => None,
        }
    }

    fn remember(&mut self, index: usize, hash: Option<u64>) {
        let stretch = self.stretch;
        if let Some(slot) = self.hashes.get_mut(index % LOOKAHEAD) {
            *slot = hash.map(|hash| (index, stretch, hash));
        }
    }

    /// Ruby code may have run.
    fn end_stretch(&mut self) {
        self.stretch += 1;
    }
}

/// The Arrays a batch call reads, all of one length; a column given as
/// `nil` where that is allowed reads as `nil` at every index. Kept on the
/// stack, where Ruby's GC finds (and pins) the copies.
pub struct Batch<const N: usize> {
    columns: [Option<RArray>; N],
    len: usize,
}

impl<const N: usize> Batch<N> {
    /// The named arguments, each an Array (or converted with `to_ary`) or,
    /// given as `None`, absent; ArgumentError unless all have one length.
    pub fn new(ruby: &Ruby, arguments: [(&str, Option<Value>); N]) -> Result<Self, Error> {
        let mut columns = [None; N];
        for (column, (name, value)) in columns.iter_mut().zip(arguments) {
            if let Some(value) = value {
                *column = Some(private_copy(ruby, name, value)?);
            }
        }
        let lengths: Vec<(&str, usize)> = arguments
            .iter()
            .zip(&columns)
            .filter_map(|((name, _), column)| Some((*name, column.as_ref()?.len())))
            .collect();
        let len = lengths.first().map_or(0, |(_, len)| *len);
        if lengths.iter().any(|(_, other)| *other != len) {
            let described: Vec<String> = lengths
                .iter()
                .map(|(name, len)| format!("{name} has {len}"))
                .collect();
            return Err(invalid_argument(
                ruby,
                format!(
                    "a batch needs Arrays of one length, but {}",
                    described.join(", ")
                ),
            ));
        }
        Ok(Batch { columns, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Applies each row in order with `apply`, then hands what it returned
    /// to `after` (which yields to the caller's block, if any). An error
    /// from `apply` refused the element and is named with its index; an
    /// error from `after` is the block's own and passes through as it is.
    /// With `ahead` (from [`loading_keys`]), each key in the first column
    /// is loaded before its turn (see the module's notes); of a key whose
    /// hash runs Ruby code, only the object.
    pub fn each<T>(
        &self,
        ruby: &Ruby,
        ahead: Option<&dyn Fn(u64, Prefetch)>,
        apply: impl FnMut([Value; N]) -> Result<T, Error>,
        after: impl FnMut(T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.each_by_runs(ruby, |range, _| Ok(range.start), ahead, apply, after)
    }

    /// [`Batch::each`] for a call that can apply a run of elements in one
    /// go, with no Ruby code between them. `run` applies the elements of
    /// the range it is given, from its start, for as long as it can (loading
    /// keys ahead with [`Batch::load_ahead`] and the [`Lookahead`] it is
    /// lent), and returns the index it stopped at, having changed nothing
    /// for that element; the element then goes through `apply` and `after`.
    /// Ranges end where interrupts are checked.
    pub fn each_by_runs<T>(
        &self,
        ruby: &Ruby,
        mut run: impl FnMut(Range<usize>, &mut Lookahead) -> Result<usize, Error>,
        ahead: Option<&dyn Fn(u64, Prefetch)>,
        mut apply: impl FnMut([Value; N]) -> Result<T, Error>,
        mut after: impl FnMut(T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut lookahead = Lookahead::default();
        let mut index = 0;
        while index < self.len {
            if index > 0 && index % INTERRUPT_EVERY == 0 {
                ruby.thread_check_ints()?;
                lookahead.end_stretch();
            }
            let checked_at = (index / INTERRUPT_EVERY + 1) * INTERRUPT_EVERY;
            let bound = checked_at.min(self.len);
            let stopped =
                run(index..bound, &mut lookahead).map_err(|error| at_index(ruby, error, index))?;
            index = stopped.clamp(index, bound);
            if index == bound {
                continue;
            }
            if let Some(ahead) = ahead {
                self.load_ahead(ahead, index, &mut lookahead);
            }
            let applied =
                apply(self.row(ruby, index)).map_err(|error| at_index(ruby, error, index))?;
            after(applied)?;
            lookahead.end_stretch();
            index += 1;
        }
        Ok(())
    }

    /// Loads the key `LOOKAHEAD` elements on; hashes the one half as far
    /// on (its object loaded by now) and loads its bucket; and loads the
    /// entry of the one a quarter as far on (its bucket loaded by now).
    pub fn load_ahead(
        &self,
        ahead: &dyn Fn(u64, Prefetch),
        index: usize,
        lookahead: &mut Lookahead,
    ) {
        if lookahead.loaded.replace(index) == Some(index) {
            return;
        }
        if let Some(key) = self.element(KEYS, index + LOOKAHEAD) {
            prefetch_key(key);
        }
        let hashed = index + LOOKAHEAD / 2;
        let hash = self.element(KEYS, hashed).and_then(hash_without_ruby);
        if let Some(hash) = hash {
            ahead(hash, Prefetch::Bucket);
        }
        lookahead.remember(hashed, hash);
        if let Some((_, hash)) = lookahead.hashed(index + LOOKAHEAD / 4) {
            ahead(hash, Prefetch::Entry);
        }
    }

    /// Files the elements of `range` under their keys in `tracker`, in
    /// order, with no Ruby code run: each is read by
    /// [`event_without_ruby`], and `file` is given the tracker, the row, the
    /// timestamp and what was found, and says whether it filed the element
    /// (changing nothing if not). Stops at the first element that needs
    /// Ruby, or that `file` did not file, and returns its index;
    /// `range.end` if none.
    pub fn file_without_ruby<S>(
        &self,
        ruby: &Ruby,
        tracker: &mut S,
        range: Range<usize>,
        lookahead: &mut Lookahead,
        mut file: impl FnMut(&mut S, [Value; N], u64, Found) -> bool,
    ) -> usize
    where
        S: KeyLookup<Key = Opaque<Value>>,
    {
        for index in range.clone() {
            self.load_ahead(
                &|hash, stage| tracker.prefetch(hash, stage),
                index,
                lookahead,
            );
            let row = self.row(ruby, index);
            let (Some(key), Some(timestamp)) = (row.get(KEYS), row.get(TIMESTAMPS)) else {
                return index;
            };
            let hashed = lookahead.hash(index);
            let Some((timestamp, found)) =
                event_without_ruby(ruby, &*tracker, *key, *timestamp, hashed)
            else {
                return index;
            };
            if !file(tracker, row, timestamp, found) {
                return index;
            }
        }
        range.end
    }

    /// The elements at `index`, one per column (`nil` past a column's end,
    /// which only code reaching the private copy through ObjectSpace could
    /// cause).
    pub fn row(&self, ruby: &Ruby, index: usize) -> [Value; N] {
        let nil = ruby.qnil().as_value();
        let mut row = [nil; N];
        for (column, element) in row.iter_mut().enumerate() {
            *element = self.element(column, index).unwrap_or(nil);
        }
        row
    }

    fn element(&self, column: usize, index: usize) -> Option<Value> {
        let column = self.columns.get(column)?.as_ref()?;
        // SAFETY: the slice is read at once, before any Ruby code runs, so
        // the Array cannot change or move while it is borrowed; `get`
        // bounds the read by its current length.
        unsafe { column.as_slice() }.get(index).copied()
    }
}

/// A copy of the Array `value` is or converts to, no one else can change.
fn private_copy(ruby: &Ruby, name: &str, value: Value) -> Result<RArray, Error> {
    let array = match RArray::from_value(value) {
        Some(array) => Some(array),
        None if value.respond_to("to_ary", false)? => {
            RArray::from_value(value.funcall::<_, _, Value>("to_ary", ())?)
        }
        None => None,
    };
    let Some(array) = array else {
        return Err(wrong_type(
            ruby,
            format!("{name} must be an Array, got {}", described(value)),
        ));
    };
    Ok(array.dup())
}
