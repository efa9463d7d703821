//! `WindowMachines::KeyedSessions`.
//!
//! Keys are matched the way a Ruby Hash matches them, by `hash` and then
//! `eql?`. The core holds each key object with its hash; they are marked
//! here, pinned, so neither the GC nor compaction can take them away.

use std::cell::RefCell;

use magnus::{
    gc, method,
    prelude::*,
    rb_sys::{AsRawValue, FromRawValue},
    scan_args::get_kwargs,
    scan_args::scan_args,
    value::Opaque,
    DataTypeFunctions, Error, Fixnum, RArray, RClass, RHash, RModule, RString, Ruby, TypedData,
    Value,
};
use window_machines_core::{KeySlot, KeyedSessions, Span};

use crate::checkpoint;
use crate::convert::{span_array, spans_array, to_u64};
use crate::errors::{check_frozen, described, refused, wrong_type};
use crate::key_table::{spread, KeyTable};
use crate::receiver::{define_class, unwrap};

/// A held key and its spread Ruby hash, kept so that releasing the key
/// needs neither its `hash` method nor a look at the key object.
#[derive(Clone, Copy)]
struct Key {
    value: Opaque<Value>,
    hash: u64,
}

#[derive(TypedData, Default)]
#[magnus(class = "WindowMachines::KeyedSessions", free_immediately, mark, size)]
pub struct RbKeyedSessions {
    tracker: RefCell<KeyedSessions<Key>>,
    keys: RefCell<KeyTable>,
}

impl DataTypeFunctions for RbKeyedSessions {
    fn mark(&self, marker: &gc::Marker) {
        // The tracker is only ever borrowed while no Ruby object is being
        // allocated, so a GC never finds it borrowed.
        if let Ok(tracker) = self.tracker.try_borrow() {
            for (_, key) in tracker.slots() {
                // Pinned: the core's copy of the key must not move.
                marker.mark(key.value);
            }
        }
    }

    fn size(&self) -> usize {
        let tracker = self.tracker.try_borrow().map_or(0, |t| t.heap_bytes());
        let keys = self.keys.try_borrow().map_or(0, |k| k.heap_bytes());
        std::mem::size_of::<Self>() + tracker + keys
    }
}

/// The key as a Hash stores it: an unfrozen String becomes a frozen copy,
/// so that changing the caller's String cannot change a held key.
fn stored_key(key: Value) -> Value {
    match RString::from_value(key) {
        Some(string) if !key.is_frozen() => {
            // SAFETY: key is a String; rb_str_new_frozen only allocates.
            unsafe { Value::from_raw(rb_sys::rb_str_new_frozen(string.as_raw())) }
        }
        _ => key,
    }
}

/// Unreachable while no Ruby code runs under a borrow; an error, not a panic.
fn reentered(ruby: &Ruby) -> Error {
    Error::new(
        ruby.exception_runtime_error(),
        "WindowMachines::KeyedSessions re-entered while in use",
    )
}

/// How a key is hashed and compared, following what Ruby's Hash does for
/// the common cases without calling back into Ruby.
enum KeyKind {
    /// Immediates that are equal only to themselves (Integers that fit a
    /// Fixnum, static Symbols, nil, true, false). Floats are not among them:
    /// 0.0 and -0.0 are eql?.
    Immediate,
    /// An instance of String itself (not a subclass, no singleton class):
    /// Hash hashes and compares its bytes directly.
    PlainString,
    /// Anything else: its own `hash` and `eql?` methods.
    Object,
}

fn kind_of(ruby: &Ruby, key: Value) -> KeyKind {
    let raw = key.as_raw();
    if rb_sys::SPECIAL_CONST_P(raw) && !rb_sys::FLONUM_P(raw) {
        KeyKind::Immediate
    } else if RString::from_value(key).is_some()
        && key.class().as_raw() == ruby.class_string().as_raw()
    {
        KeyKind::PlainString
    } else {
        KeyKind::Object
    }
}

/// The key's hash, spread for the key table.
fn hash_of(ruby: &Ruby, key: Value) -> Result<u64, Error> {
    let hash = match kind_of(ruby, key) {
        KeyKind::Immediate => key.as_raw() as i64,
        // SAFETY: a String; rb_str_hash reads its bytes and cannot raise.
        KeyKind::PlainString => unsafe { rb_sys::rb_str_hash(key.as_raw()) as i64 },
        KeyKind::Object => {
            let hash = key.hash()?;
            match hash.to_i64() {
                Ok(hash) => hash,
                // A Bignum from a user's `hash` method: hash it down, as Hash does.
                Err(_) => hash.as_value().hash()?.to_i64()?,
            }
        }
    };
    Ok(spread(hash))
}

/// Whether `key` is the held key, as Hash decides it (identity, then eql?).
fn same_key(ruby: &Ruby, key: Value, held: Value) -> Result<bool, Error> {
    if key.as_raw() == held.as_raw() {
        return Ok(true);
    }
    match (kind_of(ruby, key), kind_of(ruby, held)) {
        (KeyKind::Immediate, _) | (_, KeyKind::Immediate) => Ok(false),
        // SAFETY: both are Strings; rb_str_hash_cmp compares and cannot raise.
        (KeyKind::PlainString, KeyKind::PlainString) => {
            Ok(unsafe { rb_sys::rb_str_hash_cmp(key.as_raw(), held.as_raw()) } == 0)
        }
        _ => key.eql(held),
    }
}

/// `[key, first, last]`.
fn keyed_span(ruby: &Ruby, key: Value, span: Span) -> RArray {
    ruby.ary_new_from_values(&[
        key,
        ruby.integer_from_u64(span.first).as_value(),
        ruby.integer_from_u64(span.last).as_value(),
    ])
}

impl RbKeyedSessions {
    /// Runs `f` on the tracker. No Ruby code runs and nothing is allocated
    /// while it is borrowed; should that ever change, Ruby gets an error
    /// rather than a panic.
    fn with<R>(
        &self,
        ruby: &Ruby,
        f: impl FnOnce(&mut KeyedSessions<Key>) -> R,
    ) -> Result<R, Error> {
        let mut tracker = self.tracker.try_borrow_mut().map_err(|_| reentered(ruby))?;
        Ok(f(&mut tracker))
    }

    fn table<R>(&self, ruby: &Ruby, f: impl FnOnce(&mut KeyTable) -> R) -> Result<R, Error> {
        let mut keys = self.keys.try_borrow_mut().map_err(|_| reentered(ruby))?;
        Ok(f(&mut keys))
    }

    /// The key's hash, and its slot if it is held. Candidates are compared
    /// with `eql?` (which may run Ruby code) outside any borrow.
    fn find(&self, ruby: &Ruby, key: Value) -> Result<(u64, Option<KeySlot>), Error> {
        let hash = hash_of(ruby, key)?;
        for nth in 0.. {
            let Some(slot) = self.table(ruby, |keys| keys.candidate(hash, nth))? else {
                break;
            };
            let held = self.with(ruby, |tracker| tracker.key(slot).copied())?;
            // A stale entry: its slot was released, or reused by another key.
            let Some(held) = held.filter(|held| held.hash == hash) else {
                continue;
            };
            let held = ruby.get_inner(held.value);
            if same_key(ruby, key, held)? {
                return Ok((hash, Some(slot)));
            }
        }
        Ok((hash, None))
    }

    fn unfrozen(ruby: &Ruby, rb_self: Value) -> Result<&Self, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        check_frozen(ruby, rb_self)?;
        Ok(this)
    }

    /// Replaces the whole state, indexing every held key.
    fn install(&self, ruby: &Ruby, tracker: KeyedSessions<Key>) -> Result<(), Error> {
        let mut keys = KeyTable::default();
        for (slot, key) in tracker.slots() {
            keys.insert(key.hash, slot, |_, _| true);
        }
        self.with(ruby, |held| *held = tracker)?;
        self.table(ruby, |table| *table = keys)
    }

    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        let kwargs =
            get_kwargs::<_, (), (Option<Value>,), ()>(args.keywords, &[], &["max_sessions"])?;
        let gap = to_u64(ruby, "gap", args.required.0)?;
        let max_sessions = match kwargs.optional.0 {
            Some(limit) => checkpoint::optional_u64(ruby, "max_sessions", limit)?,
            None => None,
        };
        let tracker =
            KeyedSessions::new(gap, max_sessions).map_err(|error| refused(ruby, error))?;
        this.install(ruby, tracker)
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Value, other: Value) -> Result<(), Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let other = unwrap::<Self>(ruby, other)?;
        let tracker = other.with(ruby, |tracker| tracker.clone())?;
        let keys = other.table(ruby, |keys| keys.clone())?;
        this.with(ruby, |held| *held = tracker)?;
        this.table(ruby, |table| *table = keys)
    }

    /// With a block, yields `(old_span, new_span)` for each of the key's
    /// spans the insert replaced, oldest first, once the tracker is updated.
    fn insert(ruby: &Ruby, rb_self: Value, key: Value, timestamp: Value) -> Result<RArray, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let (hash, slot) = this.find(ruby, key)?;
        let key = Key {
            value: if slot.is_some() { key } else { stored_key(key) }.into(),
            hash,
        };
        let done = this
            .with(ruby, |tracker| tracker.insert(slot, || key, timestamp))?
            .map_err(|error| refused(ruby, error))?;
        if done.new_key {
            let tracker = this.tracker.try_borrow().map_err(|_| reentered(ruby))?;
            let holds = |hash, slot| tracker.key(slot).is_some_and(|key| key.hash == hash);
            this.table(ruby, |keys| keys.insert(hash, done.slot, holds))?;
        }
        let span = done.insertion.span;
        if ruby.block_given() {
            for old in done.insertion.replaced.spans() {
                ruby.yield_values::<_, Value>((span_array(ruby, old), span_array(ruby, span)))?;
            }
        }
        Ok(span_array(ruby, span))
    }

    fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.with(ruby, |tracker| tracker.advance_watermark(timestamp))
    }

    fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let Some(handover) = this.with(ruby, |tracker| tracker.take_closed())? else {
            return Ok(ruby.qnil().as_value());
        };
        let key = ruby.get_inner(handover.key.value);
        Ok(keyed_span(ruby, key, handover.span).as_value())
    }

    fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |tracker| tracker.watermark())
    }

    fn gap(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |tracker| tracker.gap())
    }

    fn max_sessions(ruby: &Ruby, rb_self: Value) -> Result<Option<usize>, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |tracker| tracker.max_sessions())
    }

    fn held(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |tracker| tracker.len())
    }

    fn key_count(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        unwrap::<Self>(ruby, rb_self)?.with(ruby, |tracker| tracker.key_count())
    }

    fn sessions_for(ruby: &Ruby, rb_self: Value, key: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let Some(slot) = this.find(ruby, key)?.1 else {
            return Ok(ruby.ary_new());
        };
        let spans = this.with(ruby, |tracker| tracker.spans(slot).to_vec())?;
        Ok(spans_array(ruby, &spans))
    }

    /// `[[key, first, last], ...]`, in the order the sessions close.
    fn to_a(ruby: &Ruby, rb_self: Value) -> Result<RArray, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        // Copied out first; the keys stay held (and marked) meanwhile.
        let sessions: Vec<(Key, Span)> = this.with(ruby, |tracker| {
            tracker.sessions().map(|(key, span)| (*key, span)).collect()
        })?;
        let array = ruby.ary_new_capa(sessions.len());
        for (key, span) in sessions {
            array.push(keyed_span(ruby, ruby.get_inner(key.value), span))?;
        }
        Ok(array)
    }

    /// The checkpoint: sessions grouped by key, keys in the order they
    /// started being held (which breaks ties in the closing order).
    fn checkpoint(ruby: &Ruby, rb_self: Value, json_keys: bool) -> Result<RHash, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let (gap, max_sessions, watermark, keys) = this.with(ruby, |tracker| {
            let keys: Vec<(Key, Vec<Span>)> = tracker
                .keys()
                .into_iter()
                .map(|(key, spans)| (*key, spans.to_vec()))
                .collect();
            (
                tracker.gap(),
                tracker.max_sessions(),
                tracker.watermark(),
                keys,
            )
        })?;
        let sessions = ruby.ary_new_capa(keys.len());
        for (key, spans) in keys {
            let key = ruby.get_inner(key.value);
            if json_keys && !json_representable(ruby, key) {
                return Err(wrong_type(
                    ruby,
                    format!(
                        "key {} has no exact JSON form (Strings, Integers, true, false, nil and \
                         Arrays of them do); use Marshal to checkpoint such keys",
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

    fn to_h(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        Self::checkpoint(ruby, rb_self, true)
    }

    fn marshal_dump(ruby: &Ruby, rb_self: Value) -> Result<RHash, Error> {
        Self::checkpoint(ruby, rb_self, false)
    }

    /// The tracker a checkpoint describes, checked as untrusted input.
    fn restore(ruby: &Ruby, input: Value) -> Result<KeyedSessions<Key>, Error> {
        let [gap, max_sessions, watermark, sessions] = checkpoint::fields(
            ruby,
            input,
            ["gap", "max_sessions", "watermark", "sessions"],
        )?;
        let gap = to_u64(ruby, "gap", gap)?;
        let max_sessions = checkpoint::optional_u64(ruby, "max_sessions", max_sessions)?;
        let watermark = checkpoint::optional_u64(ruby, "watermark", watermark)?;
        let keys = keyed_spans(ruby, sessions)?;
        KeyedSessions::from_parts(gap, max_sessions, watermark, keys)
            .map_err(|error| refused(ruby, error))
    }

    fn from_h(ruby: &Ruby, class: RClass, input: Value) -> Result<Value, Error> {
        // Made first: nothing may be allocated between restore and install.
        let object = ruby.obj_wrap_as(Self::default(), class);
        let tracker = Self::restore(ruby, input)?;
        object.install(ruby, tracker)?;
        Ok(object.as_value())
    }

    fn marshal_load(ruby: &Ruby, rb_self: Value, input: Value) -> Result<(), Error> {
        let this = Self::unfrozen(ruby, rb_self)?;
        let tracker = Self::restore(ruby, input)?;
        this.install(ruby, tracker)
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let this = unwrap::<Self>(ruby, rb_self)?;
        let (gap, watermark, held, keys) = this.with(ruby, |tracker| {
            (
                tracker.gap(),
                tracker.watermark(),
                tracker.len(),
                tracker.key_count(),
            )
        })?;
        let watermark = watermark.map_or_else(|| "nil".to_owned(), |value| value.to_string());
        Ok(format!(
            "#<{} gap={gap} watermark={watermark} sessions={held} keys={keys}>",
            rb_self.class()
        ))
    }
}

/// Whether `value` comes back from JSON as an equal key.
fn json_representable(ruby: &Ruby, value: Value) -> bool {
    let literal = [
        ruby.qnil().as_value(),
        ruby.qtrue().as_value(),
        ruby.qfalse().as_value(),
    ];
    if literal
        .iter()
        .any(|literal| literal.as_raw() == value.as_raw())
    {
        return true;
    }
    if Fixnum::from_value(value).is_some() || magnus::RBignum::from_value(value).is_some() {
        return true;
    }
    if RString::from_value(value).is_some() {
        return true;
    }
    match RArray::from_value(value) {
        Some(array) => (0..array.len()).all(|index| {
            array
                .entry::<Value>(index as isize)
                .is_ok_and(|entry| json_representable(ruby, entry))
        }),
        None => false,
    }
}

/// `[[key, first, last], ...]` grouped by key (as a Hash groups keys), keys
/// in the order they first appear.
fn keyed_spans(ruby: &Ruby, value: Value) -> Result<Vec<(Key, Vec<Span>)>, Error> {
    let array = RArray::from_value(value).ok_or_else(|| {
        wrong_type(
            ruby,
            format!(
                "sessions must be an Array of [key, first, last], got {}",
                described(value)
            ),
        )
    })?;
    // Key => index into `keys`. It also keeps the frozen copies of String
    // keys alive until the caller installs the tracker (allocating nothing
    // in between), after which the tracker marks them.
    let index_of = ruby.hash_new();
    let mut keys: Vec<(Key, Vec<Span>)> = Vec::new();
    for index in 0..array.len() {
        let entry: Value = array.entry(index as isize)?;
        let triple = RArray::from_value(entry)
            .filter(|triple| triple.len() == 3)
            .ok_or_else(|| {
                wrong_type(
                    ruby,
                    format!(
                        "sessions[{index}] must be an Array of [key, first, last], got {}",
                        described(entry)
                    ),
                )
            })?;
        let key = stored_key(triple.entry(0)?);
        let first = to_u64(ruby, &format!("sessions[{index}] first"), triple.entry(1)?)?;
        let last = to_u64(ruby, &format!("sessions[{index}] last"), triple.entry(2)?)?;
        let known = index_of.get(key).and_then(Fixnum::from_value);
        let position = match known.and_then(|found| usize::try_from(found.to_i64()).ok()) {
            Some(found) => found,
            None => {
                index_of.aset(key, keys.len())?;
                keys.push((
                    Key {
                        value: key.into(),
                        hash: hash_of(ruby, key)?,
                    },
                    Vec::new(),
                ));
                keys.len() - 1
            }
        };
        if let Some((_, spans)) = keys.get_mut(position) {
            spans.push(Span { first, last });
        }
    }
    Ok(keys)
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbKeyedSessions>(ruby, module, "KeyedSessions")?;
    class.define_singleton_method("from_h", method!(RbKeyedSessions::from_h, 1))?;
    class.define_method("initialize", method!(RbKeyedSessions::initialize, -1))?;
    class.define_method(
        "initialize_copy",
        method!(RbKeyedSessions::initialize_copy, 1),
    )?;
    class.define_method("insert", method!(RbKeyedSessions::insert, 2))?;
    class.define_method(
        "advance_watermark",
        method!(RbKeyedSessions::advance_watermark, 1),
    )?;
    class.define_method("take_closed", method!(RbKeyedSessions::take_closed, 0))?;
    class.define_method("watermark", method!(RbKeyedSessions::watermark, 0))?;
    class.define_method("gap", method!(RbKeyedSessions::gap, 0))?;
    class.define_method("max_sessions", method!(RbKeyedSessions::max_sessions, 0))?;
    class.define_method("size", method!(RbKeyedSessions::held, 0))?;
    class.define_method("key_count", method!(RbKeyedSessions::key_count, 0))?;
    class.define_method("sessions_for", method!(RbKeyedSessions::sessions_for, 1))?;
    class.define_method("to_a", method!(RbKeyedSessions::to_a, 0))?;
    class.define_method("to_h", method!(RbKeyedSessions::to_h, 0))?;
    class.define_method("marshal_dump", method!(RbKeyedSessions::marshal_dump, 0))?;
    class.define_method("marshal_load", method!(RbKeyedSessions::marshal_load, 1))?;
    class.define_method("inspect", method!(RbKeyedSessions::inspect, 0))?;
    Ok(())
}
