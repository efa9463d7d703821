//! `WindowMachines::HoppingWindows` (and, through a Ruby subclass,
//! `TumblingWindows`): construction and the readers of its shape; the rest
//! is aggregating.rs.

use magnus::{
    method, prelude::*, scan_args::get_kwargs, scan_args::scan_args, Error, RHash, RModule, Ruby,
    TypedData, Value,
};
use window_machines_core::{ClockMode, EventClock, KeyedWindows, Shape, Trail};

use crate::aggregating::{
    aggregating_class_impls, clock_mode, define_aggregating_methods, Methods, OnLate, State,
};
use crate::aggregating_checkpoint::Shaped;
use crate::aggregation::{Held, RubyAggregation};
use crate::convert::to_u64;
use crate::errors::{invalid_argument, OrRaise};
use crate::guard::Guard;
use crate::receiver::{define_class, unfrozen};
use crate::restore;

type Tracker = KeyedWindows<Held, Held>;

#[derive(TypedData)]
#[magnus(
    class = "WindowMachines::HoppingWindows",
    free_immediately,
    mark,
    size,
    wb_protected
)]
pub struct RbKeyedWindows(Guard<State<Tracker>>);

impl Default for RbKeyedWindows {
    /// A placeholder until `initialize` runs.
    fn default() -> Self {
        let tracker = KeyedWindows::new(
            Shape::new(1, 1, 0).unwrap_or_else(|_| unreachable!("a 1/1/0 shape is valid")),
            EventClock::new(ClockMode::Stream, Trail::Windows, 0, None),
            window_machines_core::Aggregation::new(Vec::new()),
        );
        let state = State::new(tracker, RubyAggregation::placeholder(), OnLate::Raise);
        RbKeyedWindows(Guard::new(state))
    }
}

aggregating_class_impls!(RbKeyedWindows, Tracker);

impl Shaped for RbKeyedWindows {
    const FIELDS: &'static [&'static str] = &["size", "advance", "offset"];

    fn shape_of(tracker: &Tracker) -> Vec<Option<u64>> {
        let shape = tracker.shape();
        vec![Some(shape.size()), Some(shape.step()), Some(shape.offset())]
    }

    fn with_shape(
        ruby: &Ruby,
        shape: &[Value],
        (mode, grace): (ClockMode, u64),
        aggregate: Value,
    ) -> Result<(Tracker, RubyAggregation), Error> {
        let [size, advance, offset] = shape else {
            return Err(invalid_argument(
                ruby,
                "a windows checkpoint needs size, advance and offset".into(),
            ));
        };
        let size = to_u64(ruby, "size", *size)?;
        let advance = to_u64(ruby, "advance", *advance)?;
        let offset = to_u64(ruby, "offset", *offset)?;
        let shape = Shape::new(size, advance, offset).or_raise(ruby)?;
        let aggregation = RubyAggregation::new(ruby, aggregate, advance < size)?;
        let tracker = KeyedWindows::new(
            shape,
            EventClock::new(mode, Trail::Windows, grace, None),
            aggregation.core().clone(),
        );
        Ok((tracker, aggregation))
    }
}

impl RbKeyedWindows {
    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let args = scan_args::<(Value, Value), (), (), (), RHash, ()>(args)?;
        type Optional = (Option<Value>, Option<Value>, Option<Value>, Option<Value>);
        let kwargs = get_kwargs::<_, (Value,), Optional, ()>(
            args.keywords,
            &["aggregate"],
            &["grace", "offset", "on_late", "watermark"],
        )?;
        let size = to_u64(ruby, "size", args.required.0)?;
        let advance = to_u64(ruby, "advance", args.required.1)?;
        let (grace, offset, on_late, mode) = kwargs.optional;
        let grace = grace.map_or(Ok(0), |grace| to_u64(ruby, "grace", grace))?;
        let offset = offset.map_or(Ok(0), |offset| to_u64(ruby, "offset", offset))?;
        let shape = Shape::new(size, advance, offset).or_raise(ruby)?;
        let mode = clock_mode(ruby, mode)?;
        let on_late = OnLate::new(ruby, on_late)?;
        let aggregation = RubyAggregation::new(ruby, kwargs.required.0, advance < size)?;
        let tracker = KeyedWindows::new(
            shape,
            EventClock::new(mode, Trail::Windows, grace, None),
            aggregation.core().clone(),
        );
        restore::replace::<Self>(ruby, rb_self, State::new(tracker, aggregation, on_late))
    }

    fn shape(ruby: &Ruby, rb_self: Value) -> Result<Shape, Error> {
        Methods::<Self>::read(ruby, rb_self, |state| state.tracker.shape())
    }

    fn window_size(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Ok(Self::shape(ruby, rb_self)?.size())
    }

    fn advance(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Ok(Self::shape(ruby, rb_self)?.step())
    }

    fn offset(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Ok(Self::shape(ruby, rb_self)?.offset())
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        let shape = Self::shape(ruby, rb_self)?;
        Ok(format!(
            "#<{} size={} advance={} offset={} {}>",
            crate::identity::class_of(rb_self),
            shape.size(),
            shape.step(),
            shape.offset(),
            Methods::<Self>::inspect_counts(ruby, rb_self, "windows")?
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbKeyedWindows>(ruby, module, "HoppingWindows")?;
    define_aggregating_methods!(ruby, class, RbKeyedWindows);
    class.define_method("initialize", method!(RbKeyedWindows::initialize, -1))?;
    class.define_method("window_size", method!(RbKeyedWindows::window_size, 0))?;
    class.define_method("advance", method!(RbKeyedWindows::advance, 0))?;
    class.define_method("offset", method!(RbKeyedWindows::offset, 0))?;
    class.define_method("inspect", method!(RbKeyedWindows::inspect, 0))?;
    Ok(())
}
