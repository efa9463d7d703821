//! `WindowMachines.tumbling`, `WindowMachines.tumbling_starts` and
//! `WindowMachines.sliding`.

use magnus::{function, Error, RArray, RModule, Ruby, Value};
use window_machines_core::{sliding, tumbling, Tumbling};

use crate::batch::Batch;
use crate::convert::{integers_array, to_u64, window_array, windows_array};
use crate::errors::OrRaise;

fn tumbling_window(ruby: &Ruby, timestamp: Value, size: Value) -> Result<RArray, Error> {
    let timestamp = to_u64(ruby, "timestamp", timestamp)?;
    let size = to_u64(ruby, "size", size)?;
    let window = tumbling(timestamp, size).or_raise(ruby)?;
    Ok(window_array(ruby, window))
}

/// The start of each timestamp's tumbling window. The size is checked
/// first, once, so a zero size is refused even for no timestamps.
fn tumbling_starts(ruby: &Ruby, timestamps: Value, size: Value) -> Result<RArray, Error> {
    let batch = Batch::new(ruby, [("timestamps", Some(timestamps))])?;
    let windows = Tumbling::new(to_u64(ruby, "size", size)?).or_raise(ruby)?;
    let mut starts = Vec::with_capacity(batch.len());
    batch.each(
        ruby,
        None,
        |[timestamp]| {
            let timestamp = to_u64(ruby, "timestamp", timestamp)?;
            Ok(windows.window(timestamp).or_raise(ruby)?.start)
        },
        |start| {
            starts.push(start);
            Ok(())
        },
    )?;
    integers_array(ruby, &starts)
}

fn sliding_windows(
    ruby: &Ruby,
    timestamp: Value,
    width: Value,
    slide: Value,
) -> Result<RArray, Error> {
    let timestamp = to_u64(ruby, "timestamp", timestamp)?;
    let width = to_u64(ruby, "width", width)?;
    let slide = to_u64(ruby, "slide", slide)?;
    let windows = sliding(timestamp, width, slide).or_raise(ruby)?;
    Ok(windows_array(ruby, windows))
}

pub fn define(module: RModule) -> Result<(), Error> {
    module.define_module_function("tumbling", function!(tumbling_window, 2))?;
    module.define_module_function("tumbling_starts", function!(tumbling_starts, 2))?;
    module.define_module_function("sliding", function!(sliding_windows, 3))?;
    Ok(())
}
