//! Keys as a Ruby Hash treats them: how a key is hashed and compared, the
//! copy a tracker stores, and whether JSON can carry it exactly.
//!
//! The rules mirror `rb_any_hash` and `rb_any_cmp` in Ruby's hash.c, so a
//! key finds what a Hash would find:
//! - every String, of any class, is hashed by its bytes and encoding (a
//!   subclass's own `hash` method is not consulted, as Hash does not);
//! - two plain Strings (class String, no singleton class) are compared by
//!   bytes; any other pair by `key.eql?(held)`, after identity;
//! - Integers that fit a Fixnum, static Symbols, nil, true and false are
//!   hashed by identity and equal only to themselves; Floats are not among
//!   them, since `0.0.eql?(-0.0)`;
//! - anything else is hashed by its `hash` method.

use magnus::{
    prelude::*, rb_sys::AsRawValue, rb_sys::FromRawValue, Error, Integer, RArray, Ruby, Value,
};
use rb_sys::ruby_value_type::{RUBY_T_ARRAY, RUBY_T_BIGNUM, RUBY_T_STRING};
use rb_sys::{INTEGER_PACK_2COMP, INTEGER_PACK_LSBYTE_FIRST, INTEGER_PACK_LSWORD_FIRST};

const NOT_JSON: &str = "not a String, Integer, true, false, nil or Array of them";

/// How deep a key's Arrays may nest for [`json_problem`]: deeper nesting,
/// or an Array that contains itself, has no JSON form worth checking.
const MAX_JSON_DEPTH: usize = 64;

enum Kind {
    /// Equal only to itself: Fixnums, static Symbols, nil, true, false.
    Immediate,
    /// Any String, plain or not.
    String,
    /// Anything else.
    Object,
}

fn kind_of(key: Value) -> Kind {
    let raw = key.as_raw();
    if rb_sys::SPECIAL_CONST_P(raw) && !rb_sys::FLONUM_P(raw) {
        Kind::Immediate
    // SAFETY: `raw` is not a special constant (checked above), so reading
    // its type from its RBasic header is valid.
    } else if unsafe { rb_sys::RB_TYPE_P(raw, RUBY_T_STRING) } {
        Kind::String
    } else {
        Kind::Object
    }
}

/// The key's hash as Ruby's Hash computes it, spread over 64 bits.
pub fn hash_of(key: Value) -> Result<u64, Error> {
    if let Some(hash) = hash_without_ruby(key) {
        return Ok(hash);
    }
    Ok(spread(like_any_hash(hash_method(key)?)))
}

/// What the key's `hash` method returns, as 64 bits (a Bignum keeps its
/// low ones). Called directly, as a Hash calls it: `rb_hash`, behind
/// magnus's `hash`, guards against recursion for Arrays that contain
/// themselves, and would abandon a `hash` that uses the tracker with this
/// same key, handing the outer call a placeholder.
fn hash_method(key: Value) -> Result<i64, Error> {
    let returned: Value = key.funcall("hash", ())?;
    // Anything else is made an Integer by `to_int`, as `rb_hash` does.
    let integer = Integer::try_convert(returned)?;
    if let Ok(hash) = integer.to_i64() {
        return Ok(hash);
    }
    let mut low = [0_u8; 8];
    let flags = INTEGER_PACK_2COMP | INTEGER_PACK_LSWORD_FIRST | INTEGER_PACK_LSBYTE_FIRST;
    // SAFETY: `integer` is an Integer, so rb_integer_pack calls no `to_int`
    // and cannot raise or allocate; it writes exactly one 8-byte word into
    // `low`, the Integer's lowest 64 bits in two's complement.
    unsafe {
        rb_sys::rb_integer_pack(
            integer.as_raw(),
            low.as_mut_ptr().cast(),
            1,
            8,
            0,
            flags.cast_signed(),
        );
    }
    Ok(i64::from_le_bytes(low))
}

/// [`hash_of`] for the keys whose hash runs no Ruby code (Strings and
/// immediates); `None` for the rest.
pub fn hash_without_ruby(key: Value) -> Option<u64> {
    let raw = key.as_raw();
    let hash = match kind_of(key) {
        Kind::Immediate => i64::from_ne_bytes(raw.to_ne_bytes()),
        // SAFETY: `key` is a String (its kind says so); rb_str_hash reads its
        // bytes and encoding, and neither allocates nor raises.
        Kind::String => i64::from_ne_bytes(unsafe { rb_sys::rb_str_hash(raw) }.to_ne_bytes()),
        Kind::Object => return None,
    };
    Some(spread(like_any_hash(hash)))
}

/// Starts loading the key's object (for a short String, its bytes too)
/// into the CPU's caches, ahead of hashing it.
pub fn prefetch_key(key: Value) {
    let raw = key.as_raw();
    if !rb_sys::SPECIAL_CONST_P(raw) {
        // A heap object's VALUE is its address.
        window_machines_core::prefetch_address(raw as *const u8);
    }
}

/// The last step of `rb_any_hash`: the sign decides which top bits are set,
/// so hashes from `rb_str_hash` and from `hash` methods land alike.
fn like_any_hash(hash: i64) -> i64 {
    const FIXNUM_MAX: i64 = i64::MAX >> 1;
    const FIXNUM_MIN: i64 = -FIXNUM_MAX - 1;
    if hash > 0 {
        hash & FIXNUM_MAX
    } else {
        hash | FIXNUM_MIN
    }
}

/// Spreads a hash over all 64 bits (splitmix64's finaliser), so that a
/// `hash` method returning small numbers still fills a table evenly.
fn spread(hash: i64) -> u64 {
    let mut z = u64::from_ne_bytes(hash.to_ne_bytes());
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether `key` is the held key, as Hash decides it. May run the key's
/// `eql?`, that is, any Ruby code.
pub fn same_key(ruby: &Ruby, key: Value, held: Value) -> Result<bool, Error> {
    match same_key_without_ruby(ruby, key, held) {
        Some(same) => Ok(same),
        None => key.eql(held),
    }
}

/// [`same_key`] where no Ruby code decides it (the same object, two plain
/// Strings, two Symbols); `None` where the key's `eql?` must.
pub fn same_key_without_ruby(ruby: &Ruby, key: Value, held: Value) -> Option<bool> {
    if key.as_raw() == held.as_raw() {
        return Some(true);
    }
    if is_plain_string(ruby, key) && is_plain_string(ruby, held) {
        // SAFETY: both are Strings; rb_str_hash_cmp compares bytes and
        // encodings, and neither allocates nor raises.
        return Some(unsafe { rb_sys::rb_str_hash_cmp(key.as_raw(), held.as_raw()) } == 0);
    }
    if is_symbol(key) && is_symbol(held) {
        return Some(false);
    }
    None
}

/// Whether a Hash stores and finds `key` with no Ruby code run: an
/// immediate, or a plain String (which compares to another by its bytes).
pub fn in_hash_without_ruby(ruby: &Ruby, key: Value) -> bool {
    matches!(kind_of(key), Kind::Immediate) || is_plain_string(ruby, key)
}

/// A String whose class is String itself, with no singleton class.
fn is_plain_string(ruby: &Ruby, value: Value) -> bool {
    matches!(kind_of(value), Kind::String) && value.class().as_raw() == ruby.class_string().as_raw()
}

fn is_symbol(value: Value) -> bool {
    let raw = value.as_raw();
    // SAFETY: RB_SYMBOL_P checks for a static Symbol before reading the
    // header of a heap object.
    rb_sys::STATIC_SYM_P(raw) || unsafe { rb_sys::RB_SYMBOL_P(raw) }
}

/// The key as a Hash stores it: an unfrozen String of class String becomes
/// a frozen copy, so changing the caller's String cannot change a held key.
/// May allocate, so the GC may run; no other Ruby code runs.
pub fn stored(ruby: &Ruby, key: Value) -> Value {
    if !stored_as_copy(ruby, key) {
        return key;
    }
    // SAFETY: `key` is a String; rb_str_new_frozen only allocates (a failed
    // allocation is fatal in Ruby, not an exception).
    unsafe { Value::from_raw(rb_sys::rb_str_new_frozen(key.as_raw())) }
}

/// Whether [`stored`] makes a copy of `key` (and so allocates).
pub fn stored_as_copy(ruby: &Ruby, key: Value) -> bool {
    matches!(kind_of(key), Kind::String)
        && !key.is_frozen()
        // SAFETY: `key` is a heap object (a String); rb_obj_class reads its
        // class chain past any singleton class and cannot raise.
        && unsafe { rb_sys::rb_obj_class(key.as_raw()) } == ruby.class_string().as_raw()
}

/// Why `key` would not come back from JSON as an equal key; `None` when it
/// would. Strings must be valid UTF-8, or ASCII only in an ASCII-compatible
/// encoding; Integers, true, false, nil and Arrays of these are fine.
pub fn json_problem(ruby: &Ruby, key: Value) -> Option<&'static str> {
    json_problem_within(ruby, key, MAX_JSON_DEPTH)
}

fn json_problem_within(ruby: &Ruby, value: Value, depth: usize) -> Option<&'static str> {
    let raw = value.as_raw();
    if value.is_nil() || raw == ruby.qtrue().as_raw() || raw == ruby.qfalse().as_raw() {
        return None;
    }
    if rb_sys::FIXNUM_P(raw) {
        return None;
    }
    if rb_sys::SPECIAL_CONST_P(raw) {
        return Some(NOT_JSON);
    }
    // SAFETY: not a special constant (checked above), so its header can be read.
    let (is_bignum, is_string, is_array) = unsafe {
        (
            rb_sys::RB_TYPE_P(raw, RUBY_T_BIGNUM),
            rb_sys::RB_TYPE_P(raw, RUBY_T_STRING),
            rb_sys::RB_TYPE_P(raw, RUBY_T_ARRAY),
        )
    };
    // SAFETY: a heap object; rb_obj_class cannot raise.
    let class = unsafe { rb_sys::rb_obj_class(raw) };
    if is_bignum {
        None
    } else if is_string && class == ruby.class_string().as_raw() {
        string_problem(value)
    } else if is_array && class == ruby.class_array().as_raw() {
        if depth == 0 {
            return Some("its Arrays nest too deep or contain themselves");
        }
        let array = RArray::from_value(value)?;
        // By index: entries stay in the Array, where the GC sees them.
        (0..array.len()).find_map(|index| {
            let index = isize::try_from(index).ok()?;
            let entry = array.entry::<Value>(index).ok()?;
            json_problem_within(ruby, entry, depth - 1)
        })
    } else {
        Some(NOT_JSON)
    }
}

fn string_problem(string: Value) -> Option<&'static str> {
    let raw = string.as_raw();
    // SAFETY: `string` is a String; these read its encoding and bytes (the
    // code range may be computed and cached), and none allocates or raises.
    let (ascii_only, utf8, valid) = unsafe {
        (
            rb_sys::rb_enc_str_asciionly_p(raw) != 0,
            rb_sys::rb_enc_get_index(raw) == rb_sys::rb_utf8_encindex(),
            i64::from(rb_sys::rb_enc_str_coderange(raw))
                == rb_sys::ruby_coderange_type::RUBY_ENC_CODERANGE_VALID as i64,
        )
    };
    if ascii_only || (utf8 && valid) {
        None
    } else {
        Some("not valid UTF-8 nor ASCII")
    }
}
