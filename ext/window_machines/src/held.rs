//! Ruby objects held from native memory: keys now, and values or
//! accumulators for the classes that will hold them.
//!
//! A `VALUE` kept only in Rust memory is invisible to the GC, so every class
//! that holds one:
//! - lists every held object through [`HoldsObjects`], and its mark function
//!   is [`mark`], which marks them all, every time. `rb_gc_mark` also pins
//!   them, so compaction never moves an object the Rust side points at;
//! - is write-barrier protected (`wb_protected`), so minor GCs need not
//!   re-mark it: each object it stores goes through [`hold`], which runs the
//!   barrier, and a state replaced wholesale goes through [`hold_all`];
//! - between reading an object from a Ruby Array or Hash and holding it,
//!   keeps it only in locals, where the GC's conservative stack scan finds
//!   and pins it, or in a [`Keep`]: never in a Rust collection alone. (A
//!   Ruby Array would not do: it lets compaction move what it holds, and
//!   the Rust copy would then point at whatever moves in.)

use std::cell::RefCell;

use magnus::{
    gc, prelude::*, rb_sys::AsRawValue, typed_data::Obj, value::Opaque, DataTypeFunctions, Error,
    RModule, Ruby, TypedData, Value,
};

use crate::guard::Guard;

/// A state that holds Ruby objects.
pub trait HoldsObjects {
    /// Calls `f` with every Ruby object the state holds.
    fn each_object(&self, f: &mut dyn FnMut(Opaque<Value>));
}

/// The body of a mark function for a class whose state is in `guard`.
pub fn mark<S: HoldsObjects>(guard: &Guard<S>, marker: &gc::Marker) {
    // The guard never lends the state out while Ruby can allocate, so it is
    // always free here (see guard.rs).
    if let Some(state) = guard.peek() {
        state.each_object(&mut |object| marker.mark(object));
    }
}

/// `value`, to be stored in `owner`'s state: the one place a class starts
/// holding an object, so the write barrier cannot be skipped.
pub fn hold(owner: Value, value: Value) -> Opaque<Value> {
    // Immediates (Integers, Floats, Symbols, nil, true, false) live in the
    // VALUE itself: the GC tracks nothing for them, and rb_gc_writebarrier
    // would read heap bits at their "address". Ruby's RB_OBJ_WRITTEN skips
    // them for the same reason.
    if !rb_sys::SPECIAL_CONST_P(value.as_raw()) {
        // SAFETY: both are live heap objects: `owner` is the receiver of the
        // running call (or a fresh object it made), and `value` is an
        // argument, an object made from one, or an object another live
        // tracker holds. rb_gc_writebarrier only records the reference; it
        // neither allocates nor raises.
        unsafe { rb_sys::rb_gc_writebarrier(owner.as_raw(), value.as_raw()) };
    }
    value.into()
}

/// Runs the write barrier for every object in `state`, which just replaced
/// `owner`'s state wholesale (restored, copied) and may hold objects younger
/// than `owner`.
pub fn hold_all<S: HoldsObjects>(ruby: &Ruby, owner: Value, state: &S) {
    state.each_object(&mut |object| {
        hold(owner, ruby.get_inner(object));
    });
}

/// Objects a call made or read that no tracker holds yet (a field read from
/// a value, an accumulator a custom aggregator returned), kept alive and in
/// place until the call ends. The list lives in a Ruby object made only
/// when needed; the `Keep` sits on the stack, where the GC's conservative
/// scan pins that object, and its mark function pins every object listed.
#[derive(Default)]
pub struct Keep(Option<Obj<Pins>>);

impl Keep {
    /// A keep whose holder already exists, so that pushing never allocates
    /// (and never runs the GC): for objects read into Rust memory, which
    /// compaction could otherwise move before they are pushed.
    pub fn ready(ruby: &Ruby) -> Keep {
        Keep(Some(ruby.obj_wrap(Pins::default())))
    }

    pub fn push(&mut self, ruby: &Ruby, value: Value) -> Result<(), Error> {
        if rb_sys::SPECIAL_CONST_P(value.as_raw()) {
            return Ok(());
        }
        let pins = match self.0 {
            Some(pins) => pins,
            // Allocates, so it may run the GC: `value` is a local meanwhile.
            None => *self.0.insert(ruby.obj_wrap(Pins::default())),
        };
        pins.0.borrow_mut().push(value.into());
        Ok(())
    }

    /// Keeps every object `accs` hold.
    pub fn accs(
        &mut self,
        ruby: &Ruby,
        accs: &[window_machines_core::Accumulator<Opaque<Value>>],
    ) -> Result<(), Error> {
        let mut objects: Vec<Opaque<Value>> = Vec::new();
        for acc in accs {
            acc.each_object(&mut |object| objects.push(*object));
        }
        // Collected first: the objects are held by the tracker until now,
        // and the first push may allocate.
        objects
            .into_iter()
            .try_for_each(|object| self.push(ruby, ruby.get_inner(object)))
    }
}

impl Drop for Keep {
    fn drop(&mut self) {
        // Keeps the holder in memory, where the stack scan finds it, until
        // here: a `Keep` bound but not used again would otherwise be
        // optimised away while the objects it lists are still needed.
        std::hint::black_box(&self.0);
    }
}

/// The list behind a [`Keep`].
#[derive(TypedData, Default)]
#[magnus(class = "WindowMachines::Pins", free_immediately, mark)]
pub struct Pins(RefCell<Vec<Opaque<Value>>>);

impl DataTypeFunctions for Pins {
    fn mark(&self, marker: &gc::Marker) {
        // `push` borrows only to append, which neither allocates on Ruby's
        // heap nor runs Ruby code, so the list is free here.
        if let Ok(objects) = self.0.try_borrow() {
            objects.iter().for_each(|object| marker.mark(*object));
        }
    }
}

/// Defines the class of [`Pins`], hidden from users.
pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = module.define_class("Pins", ruby.class_object())?;
    class.undef_default_alloc_func();
    let _: Value = module.funcall("private_constant", (ruby.to_symbol("Pins"),))?;
    Ok(())
}
