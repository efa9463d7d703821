//! What the aggregating classes (HoppingWindows, TumblingWindows,
//! SessionWindows) share: their state, `add` with its fast and Ruby-calling
//! paths, hand-overs, and readers, over any core tracker that is
//! [`Aggregating`]. Keys are found by key_lookup.rs and held by held.rs;
//! aggregators are read and run by aggregation.rs.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;

use magnus::{prelude::*, value::Opaque, Error, RArray, Ruby, Symbol, TypedData, Value};
use window_machines_core::{
    Accumulator, Accumulators, AggregateHandover, Aggregating, ClockMode, Error as CoreError,
    Input, KeyLookup, KeySlot, Planned, Prefetch, Refusal, Taken,
};

use crate::aggregation::{refusal, Held, Keep, RubyAggregation};
use crate::batch::{loading_keys, Batch, Lookahead};
use crate::convert::{optional, to_u64};
use crate::errors::{invalid_argument, late_event, or_raise_event, OrRaise};
use crate::guard::Guard;
use crate::held::{hold, HoldsObjects};
use crate::key_lookup::{file_under, file_under_computed, find, Found, MAX_TRIES};
use crate::receiver::{unfrozen, unwrap};
use crate::restore::Stateful;

/// What to do with an event every window of which has closed.
#[derive(Clone, Copy)]
pub enum OnLate {
    Raise,
    Drop,
    Call(Held),
}

impl OnLate {
    pub fn new(ruby: &Ruby, given: Option<Value>) -> Result<OnLate, Error> {
        let Some(given) = given else {
            return Ok(OnLate::Raise);
        };
        if let Some(symbol) = Symbol::from_value(given) {
            match symbol.name()?.as_ref() {
                "raise" => return Ok(OnLate::Raise),
                "drop" => return Ok(OnLate::Drop),
                _ => {}
            }
        } else if given.respond_to("call", false)? {
            return Ok(OnLate::Call(given.into()));
        }
        Err(invalid_argument(
            ruby,
            format!(
                "on_late must be :raise, :drop or respond to call, got {}",
                crate::errors::shown(given)
            ),
        ))
    }

    /// As given: `:raise`, `:drop` or the callable.
    pub fn value(self, ruby: &Ruby) -> Value {
        match self {
            OnLate::Raise => ruby.to_symbol("raise").as_value(),
            OnLate::Drop => ruby.to_symbol("drop").as_value(),
            OnLate::Call(callable) => ruby.get_inner(callable),
        }
    }

    pub fn each_object(&self, f: &mut dyn FnMut(Held)) {
        if let OnLate::Call(callable) = self {
            f(*callable);
        }
    }
}

/// `watermark: :stream` or `:manual`.
pub fn clock_mode(ruby: &Ruby, given: Option<Value>) -> Result<ClockMode, Error> {
    let Some(given) = given else {
        return Ok(ClockMode::Stream);
    };
    match Symbol::from_value(given).map(|symbol| symbol.name()) {
        Some(Ok(name)) if name == "stream" => Ok(ClockMode::Stream),
        Some(Ok(name)) if name == "manual" => Ok(ClockMode::Manual),
        _ => Err(invalid_argument(
            ruby,
            format!(
                "watermark must be :stream or :manual, got {}",
                crate::errors::shown(given)
            ),
        )),
    }
}

/// A class's state: the core tracker and the Ruby objects configuring it.
pub struct State<T> {
    pub tracker: T,
    pub aggregation: Arc<RubyAggregation>,
    pub on_late: OnLate,
    /// Accumulators handed over and being turned into Ruby values: still
    /// marked until that is done.
    in_flight: Vec<(u64, Accumulators<Held>)>,
    tickets: u64,
}

impl<T> State<T> {
    pub fn new(tracker: T, aggregation: RubyAggregation, on_late: OnLate) -> Self {
        State {
            tracker,
            aggregation: Arc::new(aggregation),
            on_late,
            in_flight: Vec::new(),
            tickets: 0,
        }
    }
}

/// A window or session handed over, as Ruby sees it: key, start, end (or
/// last event), result.
type HandedOver = (Value, u64, u64, Value);

/// A window or session handed over, with the ticket under which its
/// accumulators stay marked in `in_flight`, if they hold objects.
type InFlight = (Option<u64>, AggregateHandover<Held, Held>);

impl<T> State<T> {
    /// Keeps `handover`'s objects marked until it is converted.
    fn in_flight(&mut self, handover: AggregateHandover<Held, Held>) -> InFlight {
        let holds_objects = handover.accs.iter().any(Accumulator::holds_objects);
        let ticket = holds_objects.then(|| {
            self.tickets += 1;
            self.in_flight.push((self.tickets, handover.accs.clone()));
            self.tickets
        });
        (ticket, handover)
    }
}

impl<T: Clone> Clone for State<T> {
    fn clone(&self) -> Self {
        State {
            tracker: self.tracker.clone(),
            aggregation: Arc::clone(&self.aggregation),
            on_late: self.on_late,
            in_flight: Vec::new(),
            tickets: 0,
        }
    }
}

impl<T: KeyLookup<Key = Held>> KeyLookup for State<T> {
    type Key = Held;

    fn first_with_hash(&self, hash: u64) -> Option<KeySlot> {
        self.tracker.first_with_hash(hash)
    }

    fn next_with_same_hash(&self, slot: KeySlot) -> Option<KeySlot> {
        self.tracker.next_with_same_hash(slot)
    }

    fn key(&self, slot: KeySlot) -> Option<&Held> {
        self.tracker.key(slot)
    }

    fn prefetch(&self, hash: u64, stage: Prefetch) {
        self.tracker.prefetch(hash, stage);
    }
}

impl<T: Aggregating<Held, Held>> HoldsObjects for State<T> {
    fn each_object(&self, f: &mut dyn FnMut(Opaque<Value>)) {
        self.aggregation.each_object(f);
        self.on_late.each_object(f);
        let mut each_acc = |accs: &[Accumulator<Held>]| {
            for acc in accs {
                acc.each_object(&mut |object| f(*object));
            }
        };
        // Restored accumulators are checked to be of the aggregation's kinds.
        if self.tracker.aggregation().may_hold_objects() {
            self.tracker.each_held(&mut |_, accs| each_acc(accs));
        }
        for (_, accs) in &self.in_flight {
            each_acc(accs);
        }
        self.tracker.each_key(&mut |key| f(*key));
    }
}

/// A Ruby class wrapping an aggregating tracker.
pub trait Wraps: TypedData + Default + Stateful<State = State<Self::Tracker>> {
    type Tracker: Aggregating<Held, Held> + Clone;
    fn guard(&self) -> &Guard<State<Self::Tracker>>;
}

/// What an attempt to add an event came to.
enum Outcome {
    Added,
    Nowhere,
    Late(u64),
    NeedsRuby,
    Refused(Refusal<CoreError>),
}

/// Holds (through the write barrier) every object `accs` refer to.
fn hold_accs<'a>(
    owner: Value,
    ruby: &Ruby,
    accs: impl IntoIterator<Item = &'a Accumulators<Held>>,
) {
    for accs in accs {
        for acc in accs {
            acc.each_object(&mut |object| {
                hold(owner, ruby.get_inner(*object));
            });
        }
    }
}

/// The arguments of `add` and `add_all`: two, or three with the last
/// optional. By hand: magnus's scan_args costs more than the rest of a
/// small add.
fn two_or_three(ruby: &Ruby, args: &[Value]) -> Result<(Value, Value, Option<Value>), Error> {
    match *args {
        [first, second] => Ok((first, second, None)),
        [first, second, third] => Ok((first, second, Some(third))),
        _ => Err(Error::new(
            ruby.exception_arg_error(),
            format!(
                "wrong number of arguments (given {}, expected 2..3)",
                args.len()
            ),
        )),
    }
}

/// Where an event for the key `found` goes and, if that needs no Ruby,
/// putting it there, holding what it brings: what `add` does with the
/// state borrowed. A late event is not counted here (a batch leaves it to
/// `add`).
fn place<T: Aggregating<Held, Held>>(
    ruby: &Ruby,
    owner: Value,
    tracker: &mut T,
    found: Found,
    make_key: &mut dyn FnMut() -> Held,
    timestamp: u64,
    inputs: &[Input<Held>],
) -> Outcome {
    match tracker.plan(found.slot, timestamp) {
        Err(error) => Outcome::Refused(Refusal::Host(error)),
        Ok(Planned::Nowhere) => Outcome::Nowhere,
        Ok(Planned::Late { watermark }) => Outcome::Late(watermark),
        Ok(Planned::Go(plan)) if tracker.needs_ops(found.slot, plan, inputs) => Outcome::NeedsRuby,
        Ok(Planned::Go(plan)) => {
            match tracker.apply(found.slot, found.hash, make_key, timestamp, plan, inputs) {
                Ok(_) => {
                    for object in inputs.iter().filter_map(Input::object) {
                        hold(owner, ruby.get_inner(*object));
                    }
                    Outcome::Added
                }
                Err(refused) => Outcome::Refused(refused),
            }
        }
    }
}

/// The methods every aggregating class has.
pub struct Methods<W>(std::marker::PhantomData<W>);

impl<W: Wraps> Methods<W> {
    pub fn add(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<bool, Error> {
        let (key, timestamp, value) = two_or_three(ruby, args)?;
        Self::add_one(
            ruby,
            rb_self,
            key,
            timestamp,
            value.unwrap_or_else(|| ruby.qnil().as_value()),
        )
    }

    /// `add` for each key, timestamp and value (all nil when `values` is
    /// nil or not given) in order: how many entered at least one window.
    pub fn add_all(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<usize, Error> {
        let (keys, timestamps, values) = two_or_three(ruby, args)?;
        let this = unfrozen::<W>(ruby, rb_self)?;
        let values = values.filter(|values| !values.is_nil());
        let batch = Batch::new(
            ruby,
            [
                ("keys", Some(keys)),
                ("timestamps", Some(timestamps)),
                ("values", values),
            ],
        )?;
        let entered = Cell::new(0);
        // Checked again by each run: user code may replace the state.
        let runs = this
            .guard()
            .read(ruby, |state| state.aggregation.adds_without_ruby())?;
        batch.each_by_runs(
            ruby,
            |range, lookahead| {
                if runs {
                    Self::add_run(ruby, rb_self, &batch, range, lookahead, &entered)
                } else {
                    Ok(range.start)
                }
            },
            Some(&loading_keys(ruby, this.guard())),
            |[key, timestamp, value]| Self::add_one(ruby, rb_self, key, timestamp, value),
            |added| {
                entered.set(entered.get() + usize::from(added));
                Ok(())
            },
        )?;
        Ok(entered.get())
    }

    /// Adds the elements of `batch` in `range`, in order, under one borrow
    /// of the state, for as long as each is added (or falls in no window)
    /// with no Ruby code run: filed by [`Batch::file_without_ruby`], its
    /// inputs read without Ruby. Stops at the first element that is
    /// anything else (late, refused, needing Ruby, or the receiver frozen),
    /// having changed nothing for it, and returns its index: `add` then
    /// takes it whole, so every element ends exactly as its single call
    /// would.
    fn add_run(
        ruby: &Ruby,
        rb_self: Value,
        batch: &Batch<3>,
        range: Range<usize>,
        lookahead: &mut Lookahead,
        entered: &Cell<usize>,
    ) -> Result<usize, Error> {
        if rb_self.is_frozen() {
            return Ok(range.start);
        }
        let this = unwrap::<W>(ruby, rb_self)?;
        this.guard().write(ruby, |state| {
            let State {
                tracker,
                aggregation,
                ..
            } = state;
            if !aggregation.adds_without_ruby() {
                return range.start;
            }
            // Read once: most events of a count carry no value.
            let nil = ruby.qnil().as_value();
            let Ok(nil_inputs) = aggregation.inputs(ruby, nil, &mut Keep::default()) else {
                return range.start;
            };
            batch.file_without_ruby(
                ruby,
                tracker,
                range,
                lookahead,
                |tracker, [key, _, value], timestamp, found| {
                    // Reads no field, so it neither runs Ruby nor keeps anything.
                    let read;
                    let inputs = if value.is_nil() {
                        &nil_inputs
                    } else if let Ok(inputs) = aggregation.inputs(ruby, value, &mut Keep::default())
                    {
                        read = inputs;
                        &read
                    } else {
                        return false;
                    };
                    let make_key = &mut || hold(rb_self, key);
                    match place(ruby, rb_self, tracker, found, make_key, timestamp, inputs) {
                        Outcome::Added => {
                            entered.set(entered.get() + 1);
                            true
                        }
                        Outcome::Nowhere => true,
                        Outcome::Late(_) | Outcome::NeedsRuby | Outcome::Refused(_) => false,
                    }
                },
            )
        })
    }

    /// One event added, as `add` and `add_all` add it.
    fn add_one(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        timestamp: Value,
        value: Value,
    ) -> Result<bool, Error> {
        let this = unfrozen::<W>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        let aggregation = this
            .guard()
            .read(ruby, |state| Arc::clone(&state.aggregation))?;
        let mut keep = Keep::default();
        let _pinned = if aggregation.add_needs_pins(ruby) {
            Some(aggregation.pin_for_call(ruby, &mut keep)?)
        } else {
            None
        };
        let inputs = aggregation.inputs(ruby, value, &mut keep)?;
        let mut outcome = file_under(
            ruby,
            rb_self,
            this.guard(),
            key,
            |state, found, make_key| {
                let outcome = place(
                    ruby,
                    rb_self,
                    &mut state.tracker,
                    found,
                    make_key,
                    timestamp,
                    &inputs,
                );
                if matches!(outcome, Outcome::Late(_)) {
                    state.tracker.count_late();
                }
                outcome
            },
        )?;
        if matches!(outcome, Outcome::NeedsRuby) {
            outcome = Self::add_with_ruby(
                ruby,
                rb_self,
                key,
                timestamp,
                &aggregation,
                &inputs,
                &mut keep,
            )?;
        }
        match outcome {
            Outcome::Added => Ok(true),
            Outcome::Nowhere | Outcome::NeedsRuby => Ok(false),
            Outcome::Refused(Refusal::Host(error)) => {
                or_raise_event(Err(error), ruby, timestamp, Some(key), || {
                    Self::watermark(ruby, rb_self).ok().flatten()
                })
            }
            Outcome::Refused(Refusal::NotNumeric { kind }) => {
                Err(refusal(ruby, Refusal::NotNumeric { kind }))
            }
            Outcome::Late(watermark) => match this.guard().read(ruby, |state| state.on_late)? {
                OnLate::Raise => Err(late_event(ruby, timestamp, watermark, Some(key))),
                OnLate::Drop => Ok(false),
                OnLate::Call(callable) => {
                    let _: Value = ruby
                        .get_inner(callable)
                        .funcall("call", (key, timestamp, value, watermark))?;
                    Ok(false)
                }
            },
        }
    }

    /// The slow path of `add`: accumulators computed with Ruby, from a copy,
    /// then committed if nothing changed meanwhile.
    fn add_with_ruby(
        ruby: &Ruby,
        rb_self: Value,
        key: Value,
        timestamp: u64,
        aggregation: &RubyAggregation,
        inputs: &[Input<Held>],
        keep: &mut Keep,
    ) -> Result<Outcome, Error> {
        let this = unwrap::<W>(ruby, rb_self)?;
        file_under_computed(
            ruby,
            rb_self,
            this.guard(),
            key,
            |state, found| {
                let plan = state.tracker.plan(found.slot, timestamp);
                let planned = match plan {
                    Ok(Planned::Go(plan)) => state.tracker.planned_accs(found.slot, plan, inputs),
                    _ => Vec::new(),
                };
                (plan, planned)
            },
            |(plan, planned)| {
                let plan = plan.or_raise(ruby)?;
                for accs in planned.iter().flatten() {
                    keep.accs(ruby, accs)?;
                }
                let Planned::Go(go) = plan else {
                    return Ok((plan, Vec::new()));
                };
                let mut ops = aggregation.ops(ruby, keep);
                let computed = W::Tracker::compute(
                    aggregation.core(),
                    go,
                    planned,
                    timestamp,
                    inputs,
                    &mut ops,
                )
                .map_err(|refused| refusal(ruby, refused))?;
                Ok((plan, computed))
            },
            |state, found, (plan, computed), make_key| {
                let tracker = &mut state.tracker;
                match plan {
                    Planned::Nowhere => Outcome::Nowhere,
                    Planned::Late { watermark } => {
                        tracker.count_late();
                        Outcome::Late(watermark)
                    }
                    Planned::Go(plan) => {
                        hold_accs(rb_self, ruby, &computed);
                        match tracker.apply_computed(
                            found.slot, found.hash, make_key, timestamp, plan, computed,
                        ) {
                            Ok(_) => Outcome::Added,
                            Err(error) => Outcome::Refused(Refusal::Host(error)),
                        }
                    }
                }
            },
        )
    }

    /// Hands over one window or session: `[key, start, end, result]`.
    fn hand_over(
        ruby: &Ruby,
        rb_self: Value,
        closed_only: bool,
    ) -> Result<Option<HandedOver>, Error> {
        let this = unfrozen::<W>(ruby, rb_self)?;
        let mut keep = Keep::default();
        for _ in 0..MAX_TRIES {
            // One borrow takes the window and the aggregation that converts
            // it (a merge that re-enters may replace both before a retry).
            let taken = this.guard().write(ruby, |state| {
                let aggregation = Arc::clone(&state.aggregation);
                Some(match state.tracker.take(closed_only)? {
                    Taken::Ready(handover) => (Ok(state.in_flight(handover)), aggregation),
                    Taken::NeedsHost(pending) => (Err(pending), aggregation),
                })
            })?;
            let (pending, aggregation) = match taken {
                None => return Ok(None),
                Some((Ok(ready), aggregation)) => {
                    return Self::handed_over(ruby, this, &aggregation, ready)
                }
                Some((Err(pending), aggregation)) => (pending, aggregation),
            };
            // The parts' objects are the tracker's until it hands the window
            // over, which a merge that re-enters may make it do.
            let epoch = this.guard().epoch();
            let _pinned = aggregation.pin_for_call(ruby, &mut keep)?;
            let mut parts_kept = Keep::ready(ruby);
            for part in &pending.parts {
                parts_kept.accs(ruby, part)?;
            }
            let merged = aggregation
                .core()
                .merge_all(pending.parts.clone(), &mut aggregation.ops(ruby, &mut keep))?
                .unwrap_or_default();
            // The merge may have frozen the tracker.
            unfrozen::<W>(ruby, rb_self)?;
            let done = this.guard().write_unchanged(ruby, epoch, |state| {
                hold_accs(rb_self, ruby, [&merged]);
                state
                    .tracker
                    .take_merged(&pending, merged)
                    .map(|handover| state.in_flight(handover))
            })?;
            match done {
                None => continue,
                Some(None) => return Ok(None),
                Some(Some(ready)) => return Self::handed_over(ruby, this, &aggregation, ready),
            }
        }
        Err(Error::new(
            ruby.exception_runtime_error(),
            format!(
                "the tracker changed during each of {MAX_TRIES} tries to merge a window's panes \
                 (its aggregator's merge changes it, or lets another Fiber or Thread do so); \
                 nothing was handed over"
            ),
        ))
    }

    /// Key, start, end and result of a window or session handed over.
    fn handed_over(
        ruby: &Ruby,
        this: &W,
        aggregation: &RubyAggregation,
        (ticket, handover): InFlight,
    ) -> Result<Option<HandedOver>, Error> {
        // The key is a local from here on (the GC's stack scan keeps it);
        // the accumulators' objects stay marked in `in_flight` until converted.
        let key = ruby.get_inner(handover.key);
        let result = aggregation.result(ruby, &handover.accs);
        if let Some(ticket) = ticket {
            this.guard().write(ruby, |state| {
                state.in_flight.retain(|(held, _)| *held != ticket);
            })?;
        }
        Ok(Some((key, handover.start, handover.end, result?)))
    }

    /// `take_closed`: `[key, start, end, result]` of the window that
    /// closes first, if it has closed.
    pub fn take_closed(ruby: &Ruby, rb_self: Value) -> Result<Option<RArray>, Error> {
        Ok(
            Self::hand_over(ruby, rb_self, true)?.map(|(key, start, end, result)| {
                ruby.ary_new_from_values(&[
                    key,
                    ruby.integer_from_u64(start).as_value(),
                    ruby.integer_from_u64(end).as_value(),
                    result,
                ])
            }),
        )
    }

    /// Yields key, start, end and result of every window handed over (only
    /// closed ones if `closed_only`) until there is none: the loop behind
    /// `each_closed` and `flush`, with no Array made per window.
    pub fn hand_over_each(ruby: &Ruby, rb_self: Value, closed_only: bool) -> Result<Value, Error> {
        while let Some((key, start, end, result)) = Self::hand_over(ruby, rb_self, closed_only)? {
            let _: Value = ruby.yield_values((key, start, end, result))?;
        }
        Ok(rb_self)
    }

    pub fn current(ruby: &Ruby, rb_self: Value, key: Value) -> Result<RArray, Error> {
        let this = unwrap::<W>(ruby, rb_self)?;
        let array = ruby.ary_new();
        let Some(slot) = find(ruby, this.guard(), key)?.slot else {
            return Ok(array);
        };
        // Made before the copy, so that nothing allocates between copying
        // the parts out and keeping their objects: a merge may re-enter and
        // make the tracker let them go.
        let mut kept = Keep::ready(ruby);
        type Parts = Vec<Accumulators<Held>>;
        let (open, aggregation) = this.guard().read(ruby, |state| {
            let open: Vec<(u64, u64, Parts)> = state
                .tracker
                .open_of(slot)
                .into_iter()
                .map(|(start, end, parts)| {
                    (
                        start,
                        end,
                        parts.into_iter().map(Accumulators::from).collect(),
                    )
                })
                .collect();
            (open, Arc::clone(&state.aggregation))
        })?;
        for (_, _, parts) in &open {
            for part in parts {
                kept.accs(ruby, part)?;
            }
        }
        let _pinned = aggregation.pin_for_call(ruby, &mut kept)?;
        for (start, end, parts) in open {
            let merged = aggregation
                .core()
                .merge_all(parts, &mut aggregation.ops(ruby, &mut kept))?
                .unwrap_or_default();
            array.push(ruby.ary_new_from_values(&[
                ruby.integer_from_u64(start).as_value(),
                ruby.integer_from_u64(end).as_value(),
                aggregation.result(ruby, &merged)?,
            ]))?;
        }
        Ok(array)
    }

    /// Ends the input (see [`Aggregating::finish`]); `finish` in Ruby then
    /// hands everything over.
    pub fn end_input(ruby: &Ruby, rb_self: Value) -> Result<(), Error> {
        let this = unfrozen::<W>(ruby, rb_self)?;
        this.guard().write(ruby, |state| state.tracker.finish())
    }

    pub fn advance_watermark(ruby: &Ruby, rb_self: Value, timestamp: Value) -> Result<bool, Error> {
        let this = unfrozen::<W>(ruby, rb_self)?;
        let timestamp = to_u64(ruby, "timestamp", timestamp)?;
        this.guard()
            .write(ruby, |state| state.tracker.advance(timestamp))?
            .ok_or_else(|| {
                invalid_argument(
                    ruby,
                    "the watermark follows the events (watermark: :stream); build the tracker \
                     with watermark: :manual to advance it"
                        .into(),
                )
            })
    }

    /// Reads the receiver's state.
    pub fn read<R>(
        ruby: &Ruby,
        rb_self: Value,
        f: impl FnOnce(&State<W::Tracker>) -> R,
    ) -> Result<R, Error> {
        unwrap::<W>(ruby, rb_self)?.guard().read(ruby, f)
    }

    pub fn watermark(ruby: &Ruby, rb_self: Value) -> Result<Option<u64>, Error> {
        Self::read(ruby, rb_self, |state| state.tracker.clock().watermark())
    }

    pub fn late_count(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Self::read(ruby, rb_self, |state| state.tracker.late_count())
    }

    pub fn held(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        Self::read(ruby, rb_self, |state| state.tracker.len())
    }

    pub fn key_count(ruby: &Ruby, rb_self: Value) -> Result<usize, Error> {
        Self::read(ruby, rb_self, |state| state.tracker.key_count())
    }

    pub fn grace(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Self::read(ruby, rb_self, |state| state.tracker.clock().grace())
    }

    pub fn aggregate(ruby: &Ruby, rb_self: Value) -> Result<Value, Error> {
        let aggregation = Self::read(ruby, rb_self, |state| Arc::clone(&state.aggregation))?;
        Ok(aggregation.argument(ruby))
    }

    pub fn to_h(ruby: &Ruby, rb_self: Value) -> Result<magnus::RHash, Error>
    where
        W: crate::aggregating_checkpoint::Shaped,
    {
        crate::aggregating_checkpoint::dump(
            ruby,
            unwrap::<W>(ruby, rb_self)?,
            crate::accumulator_state::Form::Json,
        )
    }

    pub fn marshal_dump(ruby: &Ruby, rb_self: Value) -> Result<magnus::RHash, Error>
    where
        W: crate::aggregating_checkpoint::Shaped,
    {
        crate::aggregating_checkpoint::dump(
            ruby,
            unwrap::<W>(ruby, rb_self)?,
            crate::accumulator_state::Form::Any,
        )
    }

    /// `grace=.. watermark=.. windows=.. keys=..` (or `sessions=..`), for
    /// the class's inspect.
    pub fn inspect_counts(ruby: &Ruby, rb_self: Value, held_name: &str) -> Result<String, Error> {
        let (grace, watermark, held, keys) = Self::read(ruby, rb_self, |state| {
            let tracker = &state.tracker;
            (
                tracker.clock().grace(),
                tracker.clock().watermark(),
                tracker.len(),
                tracker.key_count(),
            )
        })?;
        Ok(format!(
            "grace={grace} watermark={} {held_name}={held} keys={keys}",
            optional(watermark)
        ))
    }
}

/// Defines the methods of [`Methods`] on `class` for the wrapping type
/// `wraps` (magnus's `method!` needs a concrete type).
macro_rules! define_aggregating_methods {
    ($ruby:expr, $class:expr, $wraps:ty) => {{
        use magnus::{method, prelude::*, Module};
        use $crate::aggregating::Methods;
        let class = $class;
        class.define_method(
            "initialize_copy",
            method!($crate::restore::initialize_copy::<$wraps>, 1),
        )?;
        class.define_method("add", method!(Methods::<$wraps>::add, -1))?;
        class.define_method("add_all", method!(Methods::<$wraps>::add_all, -1))?;
        class.define_method("take_closed", method!(Methods::<$wraps>::take_closed, 0))?;
        class.define_private_method(
            "hand_over_each",
            method!(Methods::<$wraps>::hand_over_each, 1),
        )?;
        class.define_method("current", method!(Methods::<$wraps>::current, 1))?;
        class.define_method(
            "advance_watermark",
            method!(Methods::<$wraps>::advance_watermark, 1),
        )?;
        class.define_method("watermark", method!(Methods::<$wraps>::watermark, 0))?;
        class.define_private_method("end_input", method!(Methods::<$wraps>::end_input, 0))?;
        class.define_method("late_count", method!(Methods::<$wraps>::late_count, 0))?;
        class.define_method("size", method!(Methods::<$wraps>::held, 0))?;
        class.define_method("key_count", method!(Methods::<$wraps>::key_count, 0))?;
        class.define_method("grace", method!(Methods::<$wraps>::grace, 0))?;
        class.define_method("aggregate", method!(Methods::<$wraps>::aggregate, 0))?;
        class.define_method("to_h", method!(Methods::<$wraps>::to_h, 0))?;
        class.define_method("marshal_dump", method!(Methods::<$wraps>::marshal_dump, 0))?;
        class.define_method(
            "marshal_load",
            method!($crate::restore::marshal_load::<$wraps>, 1),
        )?;
        class.define_singleton_method(
            "restore_checkpoint",
            method!($crate::restore::from_h::<$wraps>, 1),
        )?;
        let _: magnus::Value = class.funcall(
            "private_class_method",
            ($ruby.to_symbol("restore_checkpoint"),),
        )?;
    }};
}
pub(crate) use define_aggregating_methods;

/// The impls every aggregating class has, for `$class` wrapping a
/// `Guard<State<$tracker>>`: marking and size for the GC, the state
/// replaced whole (copies, checkpoints), and [`Wraps`].
macro_rules! aggregating_class_impls {
    ($class:ty, $tracker:ty) => {
        impl $crate::aggregating::Wraps for $class {
            type Tracker = $tracker;

            fn guard(&self) -> &$crate::guard::Guard<$crate::aggregating::State<$tracker>> {
                &self.0
            }
        }

        impl magnus::DataTypeFunctions for $class {
            fn mark(&self, marker: &magnus::gc::Marker) {
                $crate::held::mark(&self.0, marker);
            }

            fn size(&self) -> usize {
                use window_machines_core::Aggregating;
                let heap = self.0.peek().map_or(0, |state| state.tracker.heap_bytes());
                std::mem::size_of::<Self>() + heap
            }
        }

        impl $crate::restore::Stateful for $class {
            type State = $crate::aggregating::State<$tracker>;

            fn copy_state(&self, ruby: &magnus::Ruby) -> Result<Self::State, magnus::Error> {
                self.0.read(ruby, Clone::clone)
            }

            fn take_state(&self, ruby: &magnus::Ruby) -> Result<Self::State, magnus::Error> {
                self.0.write(ruby, |state| {
                    std::mem::replace(state, Self::default().0.into_inner())
                })
            }

            fn put_state(
                &self,
                ruby: &magnus::Ruby,
                owner: magnus::Value,
                state: Self::State,
            ) -> Result<(), magnus::Error> {
                self.0.write(ruby, |held| {
                    $crate::held::hold_all(ruby, owner, &state);
                    *held = state;
                })
            }

            fn restore(
                ruby: &magnus::Ruby,
                fresh: magnus::typed_data::Obj<Self>,
                checkpoint: magnus::Value,
            ) -> Result<(), magnus::Error> {
                $crate::aggregating_checkpoint::restore(ruby, fresh, checkpoint)
            }
        }
    };
}
pub(crate) use aggregating_class_impls;
