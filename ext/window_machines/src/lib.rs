//! The Ruby face of window_machines_core: converts values, maps the core's
//! errors onto the gem's Ruby classes and checks frozen state. Every
//! windowing rule lives in the core.

mod accumulator_state;
mod aggregating;
mod aggregating_checkpoint;
mod aggregation;
mod batch;
mod checkpoint;
mod command;
mod convert;
mod errors;
mod guard;
mod hash_key;
mod held;
mod identity;
mod key_lookup;
mod keyed_sessions;
mod keyed_sessions_checkpoint;
mod keyed_windows;
mod receiver;
mod restore;
mod session_windows;
mod sessions;
mod versioned_table;
mod versioned_table_checkpoint;
mod watermark;
mod windows;

use magnus::{Error, Ruby};

#[magnus::init]
fn init(ruby: &Ruby) -> Result<(), Error> {
    // SAFETY: called during the extension's init, as Ruby requires. The
    // claim holds: there is no global mutable state (the error classes are
    // written once, here), and every object's state belongs to its Ractor.
    unsafe { rb_sys::rb_ext_ractor_safe(true) };
    let module = ruby.define_module("WindowMachines")?;
    errors::load(module)?;
    held::define(ruby, module)?;
    windows::define(module)?;
    watermark::define(ruby, module)?;
    sessions::define(ruby, module)?;
    keyed_sessions::define(ruby, module)?;
    keyed_windows::define(ruby, module)?;
    session_windows::define(ruby, module)?;
    versioned_table::define(ruby, module)?;
    command::define(module)?;
    Ok(())
}
