//! Event-time windowing rules: which windows a timestamp belongs to, when a
//! window has waited long enough for stragglers, and how bursts of events
//! group into sessions. Plain Rust, no I/O, no clock, no payloads.

mod error;
mod key_slots;
mod keyed;
mod sessions;
mod span;
mod span_list;
mod watermark;
mod window;

pub use error::{Error, ErrorKind, Result};
pub use key_slots::{KeyLookup, KeySlot, KeySlots};
pub use keyed::{Handover, KeyedInsertion, KeyedSessions};
pub use sessions::Sessions;
pub use span::{Insertion, Replaced, Span};
pub use span_list::MAX_SESSIONS;
pub use watermark::Watermark;
pub use window::{sliding, tumbling, SlidingWindows, Window, MAX_SLIDING_WINDOWS};
