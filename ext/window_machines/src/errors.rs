//! The Ruby classes the gem raises, looked up once from what lib/ defines.

use std::sync::OnceLock;

use magnus::{gc, kwargs, prelude::*, value::Opaque, Error, ExceptionClass, RModule, Ruby, Value};
use window_machines_core::{Error as CoreError, ErrorKind};

struct Classes {
    argument: Opaque<ExceptionClass>,
    type_error: Opaque<ExceptionClass>,
    range: Opaque<ExceptionClass>,
    late_event: Opaque<ExceptionClass>,
    capacity: Opaque<ExceptionClass>,
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
    };
    let _ = CLASSES.set(classes);
    Ok(())
}

fn class(ruby: &Ruby, pick: impl Fn(&Classes) -> Opaque<ExceptionClass>) -> ExceptionClass {
    match CLASSES.get() {
        Some(classes) => ruby.get_inner(pick(classes)),
        // Unreachable once init has run; a plain error beats a panic.
        None => ruby.exception_runtime_error(),
    }
}

/// The Ruby error for a call the core refused.
pub fn refused(ruby: &Ruby, error: CoreError) -> Error {
    let class = match error.kind() {
        ErrorKind::Argument => class(ruby, |c| c.argument),
        ErrorKind::Range => class(ruby, |c| c.range),
        ErrorKind::Late => class(ruby, |c| c.late_event),
        ErrorKind::Capacity => class(ruby, |c| c.capacity),
    };
    Error::new(class, error.to_string())
}

/// `1.5 (Float)`: a value and its class, for messages.
pub fn described(value: Value) -> String {
    // SAFETY: the class name is copied out before Ruby runs again (inspect
    // may run Ruby code), so the borrowed C string cannot be freed under us.
    let class = unsafe { value.classname() }.into_owned();
    format!("{} ({class})", value.inspect())
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
        format!("{name} must be in 0..2**64-1, got {}", value.inspect()),
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
