//! `WindowMachines.tumbling` and `WindowMachines.sliding`.

use magnus::{function, Error, RArray, RModule, Ruby, Value};
use window_machines_core::{sliding, tumbling};

use crate::convert::{to_u64, window_array, windows_array};
use crate::errors::OrRaise;

fn tumbling_window(ruby: &Ruby, timestamp: Value, size: Value) -> Result<RArray, Error> {
    let timestamp = to_u64(ruby, "timestamp", timestamp)?;
    let size = to_u64(ruby, "size", size)?;
    let window = tumbling(timestamp, size).or_raise(ruby)?;
    Ok(window_array(ruby, window))
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
    module.define_module_function("sliding", function!(sliding_windows, 3))?;
    Ok(())
}
