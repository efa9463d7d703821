//! Event-time windowing rules: which windows a timestamp belongs to, when a
//! window has waited long enough for stragglers, and how bursts of events
//! group into sessions. Plain Rust, no I/O, no clock, no payloads.

mod aggregate;
mod aggregating;
mod closing_queue;
mod error;
mod event_clock;
mod front_vec;
mod hash_index;
mod heap;
mod key_slots;
mod keyed;
mod keyed_windows;
mod session_windows;
mod sessions;
mod span;
mod span_list;
mod versioned_table;
mod watermark;
mod window;

pub use aggregate::{
    compare_int_float, in_time_order, Accumulator, Accumulators, Aggregation, Input, Inputs, Kind,
    NeedsHost, NoOps, Number, Ops, Part, Refusal, Stamped,
};
pub use aggregating::{Aggregating, Handover as AggregateHandover, Open, Pending, Planned, Taken};
pub use error::{Error, ErrorKind, Result};
pub use event_clock::{ClockMode, EventClock, Trail};
pub use key_slots::{prefetch_address, KeyLookup, KeySlot, KeySlots, Prefetch};
pub use keyed::{Handover, KeyedInsertion, KeyedSessions};
pub use keyed_windows::{KeyedWindows, Shape, WindowPlan};
pub use session_windows::{SessionPlan, SessionWindows};
pub use sessions::Sessions;
pub use span::{Insertion, Replaced, Span};
pub use span_list::MAX_SESSIONS;
pub use versioned_table::{Placed, Record, Version, VersionedTable};
pub use watermark::Watermark;
pub use window::{sliding, tumbling, SlidingWindows, Tumbling, Window, MAX_SLIDING_WINDOWS};
