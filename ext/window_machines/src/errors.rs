//! The Ruby classes the gem raises, looked up once from what lib/ defines.

use std::sync::OnceLock;

use magnus::{
    error::ErrorType, gc, kwargs, prelude::*, rb_sys::AsRawValue, rb_sys::FromRawValue,
    value::Opaque, Error, Exception, ExceptionClass, RBignum, RModule, RString, Ruby, Value,
};
use window_machines_core::{Error as CoreError, ErrorKind};

struct Classes {
    argument: Opaque<ExceptionClass>,
    type_error: Opaque<ExceptionClass>,
    range: Opaque<ExceptionClass>,
    late_event: Opaque<ExceptionClass>,
    capacity: Opaque<ExceptionClass>,
    batch_element: Opaque<RModule>,
}

static CLASSES: OnceLock<Classes> = OnceLock::new();

fn fetch(module: RModule, name: &str) -> Result<Opaque<ExceptionClass>, Error> {
    let class: ExceptionClass = module.const_get(name)?;
    // Pinned, so the stored reference stays valid through GC and compaction.
    gc::register_mark_object(class);
    Ok(class.into())
}

/// Looks the error classes up; lib/window_machines/errors.rb must be loaded first.
pub fn load(module: RModule) -> Result<(), Error> {
    let classes = Classes {
        argument: fetch(module, "ArgumentError")?,
        type_error: fetch(module, "TypeError")?,
        range: fetch(module, "RangeError")?,
        late_event: fetch(module, "LateEventError")?,
        capacity: fetch(module, "CapacityError")?,
        batch_element: {
            let batch_element: RModule = module.const_get("BatchElement")?;
            gc::register_mark_object(batch_element);
            batch_element.into()
        },
    };
    // Set once per process; a second init (which Ruby never does) keeps the first.
    CLASSES.get_or_init(|| classes);
    Ok(())
}

fn class(ruby: &Ruby, pick: impl Fn(&Classes) -> Opaque<ExceptionClass>) -> ExceptionClass {
    match CLASSES.get() {
        Some(classes) => ruby.get_inner(pick(classes)),
        // Unreachable once init has run; a plain error beats a panic.
        None => ruby.exception_runtime_error(),
    }
}

/// Turns the core's refusals into the gem's Ruby errors: `result.or_raise(ruby)?`.
pub trait OrRaise<T> {
    fn or_raise(self, ruby: &Ruby) -> Result<T, Error>;
}

impl<T> OrRaise<T> for Result<T, CoreError> {
    fn or_raise(self, ruby: &Ruby) -> Result<T, Error> {
        self.map_err(|error| refused(ruby, error))
    }
}

/// [`OrRaise`] for a call about one event: a LateEventError or
/// CapacityError names the event's timestamp and key (nil for a tracker
/// without keys); a CapacityError also the tracker's `watermark`, read
/// only then.
pub fn or_raise_event<T>(
    result: Result<T, CoreError>,
    ruby: &Ruby,
    timestamp: u64,
    key: Option<Value>,
    watermark: impl FnOnce() -> Option<u64>,
) -> Result<T, Error> {
    result.map_err(|error| match error {
        CoreError::Late {
            timestamp,
            watermark,
        } => late_event(ruby, timestamp, watermark, key),
        other if other.kind() == ErrorKind::Capacity => {
            let event = Event {
                timestamp,
                key,
                watermark: watermark(),
            };
            capacity(ruby, other, Some(event))
        }
        other => refused(ruby, other),
    })
}

/// The event a CapacityError was raised for.
struct Event {
    timestamp: u64,
    key: Option<Value>,
    watermark: Option<u64>,
}

/// `error`, raised for the element at `index` of a batch, as the error
/// that names it (see `WindowMachines::BatchElement`). A `break` or
/// `throw`, and an exception that is no StandardError (an Interrupt from
/// Ctrl-C, a SystemExit), pass through as they are: they stop the batch,
/// they do not refuse an element.
pub fn at_index(ruby: &Ruby, error: Error, index: usize) -> Error {
    if !error.is_kind_of(ruby.exception_standard_error()) {
        return error;
    }
    let Some(batch_element) = CLASSES
        .get()
        .map(|classes| ruby.get_inner(classes.batch_element))
    else {
        return error;
    };
    let exception = match error.error_type() {
        ErrorType::Jump(_) => return error,
        ErrorType::Error(class, message) => match class.new_instance((message.as_ref(),)) {
            Ok(exception) => exception,
            Err(error) => return error,
        },
        ErrorType::Exception(exception) => *exception,
    };
    // Should naming fail (a `message` method that raises), the error is
    // raised as it came.
    batch_element
        .funcall::<_, _, Exception>("named", (exception, index))
        .unwrap_or(exception)
        .into()
}

/// The Ruby error for a call the core refused.
fn refused(ruby: &Ruby, error: CoreError) -> Error {
    let class = match error.kind() {
        ErrorKind::Argument => class(ruby, |c| c.argument),
        ErrorKind::Range => class(ruby, |c| c.range),
        ErrorKind::Late => {
            if let CoreError::Late {
                timestamp,
                watermark,
            } = error
            {
                return late_event(ruby, timestamp, watermark, None);
            }
            class(ruby, |c| c.late_event)
        }
        ErrorKind::Capacity => return capacity(ruby, error, None),
    };
    Error::new(class, error.to_string())
}

/// A LateEventError whose `timestamp`, `watermark` and `key` readers say
/// which event was refused and why.
pub fn late_event(ruby: &Ruby, timestamp: u64, watermark: u64, key: Option<Value>) -> Error {
    let message = CoreError::Late {
        timestamp,
        watermark,
    }
    .to_string();
    with_readers(
        ruby,
        class(ruby, |c| c.late_event),
        message,
        &[
            ("@timestamp", ruby.integer_from_u64(timestamp).as_value()),
            ("@watermark", ruby.integer_from_u64(watermark).as_value()),
            ("@key", key.unwrap_or_else(|| ruby.qnil().as_value())),
        ],
    )
}

/// A CapacityError whose `limit` reader says what would have been
/// exceeded, and `timestamp`, `key` and `watermark` which event did it and
/// when, if one did.
fn capacity(ruby: &Ruby, error: CoreError, event: Option<Event>) -> Error {
    let nil = ruby.qnil().as_value();
    let integer =
        |value: Option<u64>| value.map_or(nil, |value| ruby.integer_from_u64(value).as_value());
    let (timestamp, key, watermark) = event.map_or((None, None, None), |event| {
        (Some(event.timestamp), event.key, event.watermark)
    });
    with_readers(
        ruby,
        class(ruby, |c| c.capacity),
        error.to_string(),
        &[
            ("@limit", integer(error.limit())),
            ("@timestamp", integer(timestamp)),
            ("@watermark", integer(watermark)),
            ("@key", key.unwrap_or(nil)),
        ],
    )
}

/// An instance of `class` with `message`, its instance variables set.
fn with_readers(
    ruby: &Ruby,
    class: ExceptionClass,
    message: String,
    ivars: &[(&str, Value)],
) -> Error {
    let made = class.new_instance((message,));
    let Ok(error) = made else {
        return made
            .err()
            .unwrap_or_else(|| Error::new(ruby.exception_runtime_error(), "refused"));
    };
    let set = ivars.iter().try_for_each(|(name, value)| {
        error
            .funcall::<_, _, Value>("instance_variable_set", (ruby.to_symbol(name), *value))
            .map(drop)
    });
    match set {
        Ok(()) => error.into(),
        Err(error) => error,
    }
}

/// How much of a value's inspect a message shows.
const SHOWN_CHARS: usize = 60;
#[allow(clippy::cast_possible_wrap)] // 60 fits every integer type
const SHOWN_CHARS_LONG: std::os::raw::c_long = SHOWN_CHARS as std::os::raw::c_long;

/// `1.5 (Float)`: a value and its class, for messages.
pub fn described(value: Value) -> String {
    // SAFETY: the class name is copied out before Ruby runs again (inspect
    // may run Ruby code), so the borrowed C string cannot be freed under us.
    let class = unsafe { value.classname() }.into_owned();
    format!("{} ({class})", shown(value))
}

/// The value's inspect, cut short: a message never grows with its input.
/// A long String is cut before it is inspected, and a huge Integer is not
/// written out, so a 50 MB argument costs no more than a small one.
pub fn shown(value: Value) -> String {
    if let Some(string) = RString::from_value(value) {
        if string.len() > SHOWN_CHARS {
            // SAFETY: a String; rb_str_substr makes a new String of its first
            // characters (it allocates, and raises for nothing here).
            let head = unsafe {
                Value::from_raw(rb_sys::rb_str_substr(value.as_raw(), 0, SHOWN_CHARS_LONG))
            };
            return format!("{}... ({} bytes)", cut(head.inspect()), string.len());
        }
    }
    if RBignum::from_value(value).is_some() {
        // SAFETY: a Bignum; rb_absint_size counts its bytes and cannot raise.
        let bytes = unsafe { rb_sys::rb_absint_size(value.as_raw(), std::ptr::null_mut()) };
        if bytes > 16 {
            let sign = if RBignum::from_value(value).is_some_and(|big| big.is_negative()) {
                "-"
            } else {
                ""
            };
            return format!("an Integer of {sign}{bytes} bytes");
        }
    }
    cut(value.inspect())
}

fn cut(text: String) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text,
    }
}

/// A WindowMachines::TypeError.
pub fn wrong_type(ruby: &Ruby, message: String) -> Error {
    Error::new(class(ruby, |c| c.type_error), message)
}

/// A WindowMachines::ArgumentError.
pub fn invalid_argument(ruby: &Ruby, message: String) -> Error {
    Error::new(class(ruby, |c| c.argument), message)
}

/// `name must be an Integer, got 1.5 (Float)`.
pub fn not_an_integer(ruby: &Ruby, name: &str, value: Value) -> Error {
    wrong_type(
        ruby,
        format!("{name} must be an Integer, got {}", described(value)),
    )
}

/// `name must be in 0..2**64-1, got -1`.
pub fn out_of_range(ruby: &Ruby, name: &str, value: Value) -> Error {
    Error::new(
        class(ruby, |c| c.range),
        format!("{name} must be in 0..2**64-1, got {}", shown(value)),
    )
}

/// Ruby's own FrozenError, with `receiver` set as Ruby sets it.
pub fn check_frozen(ruby: &Ruby, receiver: Value) -> Result<(), Error> {
    if !receiver.is_frozen() {
        return Ok(());
    }
    let message = format!(
        "can't modify frozen {}: {}",
        receiver.class(),
        receiver.inspect()
    );
    let error = ruby
        .exception_frozen_error()
        .new_instance((message, kwargs!("receiver" => receiver)))?;
    Err(error.into())
}
