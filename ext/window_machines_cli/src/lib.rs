//! The per-event path of the `window_machines` command: event files (JSON
//! Lines or CSV, plain or gzip) read line by line, the few fields needed
//! picked out, windowed by window_machines_core, and each window or session
//! written the moment it closes; checkpoints make a run resumable. Plain
//! Rust: the gem's binding calls [`run`] with options Ruby parsed.

mod csv_rows;
mod event;
mod gzip_members;
mod job;
mod json_fields;
mod keys;
mod parse;
mod records;
mod run;
mod sink;
mod source;
mod state;
mod threads;
mod timestamps;
mod values;
mod writer;

pub use job::{Aggregate, Duration, InputFormat, Job, OutputFormat, Source, StateFiles, Windows};
pub use run::{run, Failure, Summary};
pub use timestamps::TimeFormat;
