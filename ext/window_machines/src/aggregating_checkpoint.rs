//! Checkpoints of the aggregating classes: `{<shape>, grace:, watermark:,
//! time:, late_count:, windows: [[key, start, end, aggregate], ...]}`,
//! grouped by key, keys in the order they started being held. Windows
//! list their panes (a tumbling window is one), and a pane that no longer
//! goes into its first window adds the first it does: `[key, start, end,
//! aggregate, first_window]`.
//! `marshal_dump` adds `aggregate:` and `on_late:`; `from_h` takes them as
//! arguments, since aggregators are code, not state (`to_h` carries only
//! what JSON carries exactly).

use std::sync::Arc;

use magnus::{prelude::*, typed_data::Obj, value::Opaque, Error, RArray, RHash, Ruby, Value};
use window_machines_core::{Accumulators, Aggregating, ClockMode, EventClock, Input, Ops};

use crate::accumulator_state::Form;
use crate::aggregating::{clock_mode, OnLate, State, Wraps};
use crate::aggregation::{Held, Keep, RubyAggregation};
use crate::checkpoint::{optional_flag, optional_u64, read_fields};
use crate::convert::{entry, to_u64};
use crate::errors::{described, invalid_argument, wrong_type, OrRaise};
use crate::hash_key::json_problem;
use crate::held::hold;
use crate::key_lookup::file_under;

/// What every aggregating checkpoint holds after the class's own fields.
const COMMON: [&str; 6] = ["grace", "watermark", "time", "late_count", "windows", ENDED];

/// Written only once the input has ended (`finish`), so checkpoints from
/// before it was written still read.
const ENDED: &str = "ended";
/// What only Marshal's form holds.
const CODE: [&str; 2] = ["aggregate", "on_late"];

/// A class's own part of its checkpoint.
pub trait Shaped: Wraps {
    /// Its fields' names.
    const FIELDS: &'static [&'static str];
    /// Its fields' values, in that order (nil for `None`).
    fn shape_of(tracker: &Self::Tracker) -> Vec<Option<u64>>;
    /// A tracker for `shape` (values in `FIELDS` order).
    fn with_shape(
        ruby: &Ruby,
        shape: &[Value],
        clock: (ClockMode, u64),
        aggregate: Value,
    ) -> Result<(Self::Tracker, RubyAggregation), Error>;
}

pub fn dump<W: Shaped>(ruby: &Ruby, this: &W, form: Form) -> Result<RHash, Error> {
    // Copied out first; the tracker keeps holding (and marking) every
    // object while the checkpoint is built.
    type Windows = Vec<(Held, Vec<(u64, u64, Option<u64>, Accumulators<Held>)>)>;
    let (windows, aggregation, on_late, clock, late_count): (Windows, _, _, EventClock, u64) =
        this.guard().read(ruby, |state: &State<W::Tracker>| {
            let windows = state
                .tracker
                .checkpoint()
                .into_iter()
                .map(|(key, windows)| {
                    let windows = windows
                        .into_iter()
                        .map(|(start, end, from, accs)| {
                            (start, end, from, Accumulators::from(accs))
                        })
                        .collect();
                    (*key, windows)
                })
                .collect();
            (
                windows,
                Arc::clone(&state.aggregation),
                state.on_late,
                *state.tracker.clock(),
                state.tracker.late_count(),
            )
        })?;
    let shape = this
        .guard()
        .read(ruby, |state| W::shape_of(&state.tracker))?;
    let array = ruby.ary_new();
    for (key, held) in windows {
        let key = ruby.get_inner(key);
        if let (Form::Json, Some(problem)) = (form, json_problem(ruby, key)) {
            return Err(wrong_type(
                ruby,
                format!(
                    "key {} has no exact JSON form ({problem}); use Marshal",
                    described(key)
                ),
            ));
        }
        for (start, end, from, accs) in held {
            let entry = ruby.ary_new_from_values(&[
                key,
                ruby.integer_from_u64(start).as_value(),
                ruby.integer_from_u64(end).as_value(),
                aggregation.state(ruby, &accs, form)?,
            ]);
            if let Some(from) = from {
                entry.push(from)?;
            }
            array.push(entry)?;
        }
    }
    let hash = ruby.hash_new();
    for (name, value) in W::FIELDS.iter().zip(shape) {
        hash.aset(ruby.to_symbol(name), value)?;
    }
    let mode = match clock.mode() {
        ClockMode::Stream => "stream",
        ClockMode::Manual => "manual",
    };
    hash.aset(ruby.to_symbol("grace"), clock.grace())?;
    hash.aset(ruby.to_symbol("watermark"), mode)?;
    hash.aset(ruby.to_symbol("time"), clock.time())?;
    hash.aset(ruby.to_symbol("late_count"), late_count)?;
    hash.aset(ruby.to_symbol("windows"), array)?;
    if clock.ended() {
        hash.aset(ruby.to_symbol(ENDED), true)?;
    }
    if form == Form::Any {
        hash.aset(ruby.to_symbol("aggregate"), aggregation.argument(ruby))?;
        hash.aset(ruby.to_symbol("on_late"), on_late.value(ruby))?;
    }
    Ok(hash)
}

/// Reads a checkpoint (with `aggregate:` and `on_late:`) into `fresh`,
/// holding each key as `add` would, so the GC sees it from the start.
pub fn restore<W: Shaped>(ruby: &Ruby, fresh: Obj<W>, input: Value) -> Result<(), Error> {
    let names: Vec<&str> = W::FIELDS
        .iter()
        .copied()
        .chain(COMMON)
        .chain(CODE)
        .collect();
    // Pinned as soon as they are read, whatever the input becomes: the
    // holder is made first, so reading and pinning allocate nothing.
    let mut keep = Keep::ready(ruby);
    let mut values = vec![ruby.qnil().as_value(); names.len()];
    read_fields(ruby, input, &names, &[ENDED], &mut values)?;
    for value in &values {
        keep.push(ruby, *value)?;
    }
    let field = |name: &str| -> Result<Value, Error> {
        let index = names
            .iter()
            .position(|known| *known == name)
            .unwrap_or_default();
        Ok(values
            .get(index)
            .copied()
            .unwrap_or_else(|| ruby.qnil().as_value()))
    };
    let shape = &values[..W::FIELDS.len()];
    let grace = to_u64(ruby, "grace", field("grace")?)?;
    let mode = field("watermark")?;
    let mode = match magnus::RString::from_value(mode) {
        Some(name) => clock_mode(ruby, Some(ruby.to_symbol(name.to_string()?).as_value()))?,
        None => clock_mode(ruby, Some(mode))?,
    };
    let time = optional_u64(ruby, "time", field("time")?)?;
    let late_count = to_u64(ruby, "late_count", field("late_count")?)?;
    let windows = field("windows")?;
    let windows = RArray::from_value(windows).ok_or_else(|| {
        wrong_type(
            ruby,
            format!(
                "windows must be an Array of [key, start, end, aggregate], got {}",
                described(windows)
            ),
        )
    })?;
    let ended = optional_flag(ruby, ENDED, field(ENDED)?)?;
    let on_late = OnLate::new(ruby, Some(field("on_late")?))?;
    let (mut tracker, aggregation) =
        W::with_shape(ruby, shape, (mode, grace), field("aggregate")?)?;
    tracker.restore_counts(time, late_count);
    if ended {
        tracker.finish();
    }
    let owner = fresh.as_value();
    fresh.put_state(ruby, owner, State::new(tracker, aggregation, on_late))?;
    let aggregation = fresh
        .guard()
        .read(ruby, |state| Arc::clone(&state.aggregation))?;
    // By index: a user's `hash` may change the Array; its length is read anew.
    let mut index = 0;
    while index < windows.len() {
        let (key, window, accs, _keep) = window_at(ruby, &aggregation, windows, index)?;
        let mut accs = Some(accs);
        file_under(ruby, owner, fresh.guard(), key, |state, found, make_key| {
            let accs = accs.take().unwrap_or_default();
            for acc in &accs {
                acc.each_object(&mut |object| {
                    hold(owner, ruby.get_inner(*object));
                });
            }
            state
                .tracker
                .restore(found.slot, found.hash, make_key, window, accs)
        })?
        .or_raise(ruby)?;
        index += 1;
    }
    fresh
        .guard()
        .write(ruby, |state| state.tracker.finish_restore())?
        .or_raise(ruby)?;
    // No Ruby code can reach `fresh`, which holds every object compared.
    let pairs: Vec<(Input<Held>, Input<Held>)> = fresh.guard().read(ruby, |state| {
        state
            .tracker
            .restored_comparisons()
            .into_iter()
            .map(|(one, other)| (one.clone(), other.clone()))
            .collect()
    })?;
    let mut keep = Keep::default();
    let mut ops = aggregation.ops(ruby, &mut keep);
    for (one, other) in pairs {
        ops.compare(&one, &other).map_err(|error| {
            invalid_argument(
                ruby,
                format!(
                    "windows hold extremes no stream of events could have left together: {}",
                    error
                ),
            )
        })?;
    }
    Ok(())
}

/// A key, what it holds (start and end, or first and last event, and a
/// pane's first window), the accumulators, and what keeps their objects
/// alive until they are held.
type RestoredWindow = (
    Value,
    (u64, u64, Option<u64>),
    Accumulators<Opaque<Value>>,
    Keep,
);

/// `[key, start, end, aggregate]` (or `[..., first_window]`) at
/// `windows[index]`, its objects kept.
fn window_at(
    ruby: &Ruby,
    aggregation: &RubyAggregation,
    windows: RArray,
    index: usize,
) -> Result<RestoredWindow, Error> {
    let held = entry(ruby, windows, index)?;
    let array = RArray::from_value(held)
        .filter(|array| (4..=5).contains(&array.len()))
        .ok_or_else(|| {
            wrong_type(
                ruby,
                format!(
                    "windows[{index}] must be an Array of [key, start, end, aggregate] \
                     or [key, start, end, aggregate, first_window], got {}",
                    described(held)
                ),
            )
        })?;
    let key = entry(ruby, array, 0)?;
    let start = to_u64(
        ruby,
        &format!("windows[{index}] start"),
        entry(ruby, array, 1)?,
    )?;
    let end = to_u64(
        ruby,
        &format!("windows[{index}] end"),
        entry(ruby, array, 2)?,
    )?;
    let from = if array.len() == 5 {
        Some(to_u64(
            ruby,
            &format!("windows[{index}] first_window"),
            entry(ruby, array, 4)?,
        )?)
    } else {
        None
    };
    // Made before the state is read, so nothing allocates between reading
    // its objects and pinning them.
    let mut keep = Keep::ready(ruby);
    let accs = aggregation.read_state(ruby, entry(ruby, array, 3)?)?;
    keep.accs(ruby, &accs)?;
    Ok((key, (start, end, from), accs, keep))
}
