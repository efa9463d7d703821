//! Threads the command starts beside the one that called it.

use std::thread::{self, JoinHandle};

/// Runs `f` on a new thread that never has a signal delivered to it.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _signals_blocked = SignalsBlocked::here();
    thread::spawn(f)
}

/// Signals blocked on the calling thread until dropped, so that a thread
/// spawned meanwhile (which inherits the mask) never has one delivered to
/// it: the host's signal handlers (Ruby's) expect to run on its own
/// threads, and run on this one they corrupt its state.
struct SignalsBlocked {
    #[cfg(unix)]
    previous: libc::sigset_t,
}

impl SignalsBlocked {
    fn here() -> SignalsBlocked {
        #[cfg(unix)]
        {
            // SAFETY: sigfillset and pthread_sigmask only write the sets
            // they are given, both valid and owned here; a zeroed sigset_t
            // is a valid value to overwrite.
            unsafe {
                let mut all: libc::sigset_t = std::mem::zeroed();
                let mut previous: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&raw mut all);
                libc::pthread_sigmask(libc::SIG_BLOCK, &raw const all, &raw mut previous);
                SignalsBlocked { previous }
            }
        }
        #[cfg(not(unix))]
        SignalsBlocked {}
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `here`, a valid set owned by
        // self, on the thread that saved it (the value never leaves it).
        #[cfg(unix)]
        unsafe {
            libc::pthread_sigmask(
                libc::SIG_SETMASK,
                &raw const self.previous,
                std::ptr::null_mut(),
            );
        }
    }
}
