//! The one way the binding reaches a class's mutable state.
//!
//! The state sits in a `RefCell`. No Ruby code runs and nothing is allocated
//! on Ruby's heap while it is borrowed: methods copy out what they need,
//! release the borrow, then call back into Ruby. So a borrow can never be
//! taken twice, and the GC's mark function always finds the state free;
//! should that ever change, Ruby gets an error rather than a panic.
//!
//! Every mutable borrow moves an epoch forward. Code that runs Ruby between
//! looking something up and acting on it (a key's `eql?`) compares epochs
//! to learn whether the state changed meanwhile.

use std::cell::{Cell, Ref, RefCell};

use magnus::{Error, Ruby};

#[derive(Default)]
pub struct Guard<S> {
    state: RefCell<S>,
    epoch: Cell<u64>,
}

impl<S> Guard<S> {
    pub fn new(state: S) -> Self {
        Guard {
            state: RefCell::new(state),
            epoch: Cell::new(0),
        }
    }

    /// The state, for a guard being discarded.
    pub fn into_inner(self) -> S {
        self.state.into_inner()
    }

    /// Runs `f` on the state, which it must not change.
    pub fn read<R>(&self, ruby: &Ruby, f: impl FnOnce(&S) -> R) -> Result<R, Error> {
        let state = self.state.try_borrow().map_err(|_| reentered(ruby))?;
        Ok(f(&state))
    }

    /// Runs `f` on the state, which it may change.
    pub fn write<R>(&self, ruby: &Ruby, f: impl FnOnce(&mut S) -> R) -> Result<R, Error> {
        let mut state = self.state.try_borrow_mut().map_err(|_| reentered(ruby))?;
        self.epoch.set(self.epoch.get().wrapping_add(1));
        Ok(f(&mut state))
    }

    /// Runs `f` as [`Guard::write`] does, but only if nothing changed the
    /// state since `epoch` was read; `None` otherwise.
    pub fn write_unchanged<R>(
        &self,
        ruby: &Ruby,
        epoch: u64,
        f: impl FnOnce(&mut S) -> R,
    ) -> Result<Option<R>, Error> {
        if self.epoch.get() != epoch {
            return Ok(None);
        }
        self.write(ruby, f).map(Some)
    }

    /// Changes with every mutable borrow.
    pub fn epoch(&self) -> u64 {
        self.epoch.get()
    }

    /// The state for the GC's mark and size functions, which cannot raise.
    pub fn peek(&self) -> Option<Ref<'_, S>> {
        let state = self.state.try_borrow().ok();
        debug_assert!(state.is_some(), "the GC found a state borrowed");
        state
    }
}

fn reentered(ruby: &Ruby) -> Error {
    Error::new(
        ruby.exception_runtime_error(),
        "WindowMachines tracker re-entered while in use",
    )
}
