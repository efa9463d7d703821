//! `WindowMachines::SessionWindows`: construction and its readers; the
//! rest is aggregating.rs.

use magnus::{
    method, prelude::*, scan_args::get_kwargs, scan_args::scan_args, Error, RHash, RModule, Ruby,
    TypedData, Value,
};
use window_machines_core::{ClockMode, EventClock, SessionWindows, Trail};

use crate::aggregating::{
    aggregating_class_impls, clock_mode, define_aggregating_methods, Methods, OnLate, State,
};
use crate::aggregating_checkpoint::Shaped;
use crate::aggregation::{Held, RubyAggregation};
use crate::checkpoint;
use crate::convert::to_u64;
use crate::errors::{invalid_argument, OrRaise};
use crate::guard::Guard;
use crate::receiver::{define_class, unfrozen};
use crate::restore;

type Tracker = SessionWindows<Held, Held>;

#[derive(TypedData)]
#[magnus(
    class = "WindowMachines::SessionWindows",
    free_immediately,
    mark,
    size,
    wb_protected
)]
pub struct RbSessionWindows(Guard<State<Tracker>>);

impl Default for RbSessionWindows {
    /// A placeholder until `initialize` runs.
    fn default() -> Self {
        let tracker = SessionWindows::new(
            1,
            None,
            EventClock::new(ClockMode::Stream, Trail::Sessions, 0, None),
            window_machines_core::Aggregation::new(Vec::new()),
        )
        .unwrap_or_else(|_| unreachable!("gap 1 is valid"));
        let state = State::new(tracker, RubyAggregation::placeholder(), OnLate::Raise);
        RbSessionWindows(Guard::new(state))
    }
}

aggregating_class_impls!(RbSessionWindows, Tracker);

impl Shaped for RbSessionWindows {
    const FIELDS: &'static [&'static str] = &["gap", "max_sessions"];

    fn shape_of(tracker: &Tracker) -> Vec<Option<u64>> {
        let max_sessions = tracker
            .max_sessions()
            .map(|limit| u64::try_from(limit).unwrap_or(u64::MAX));
        vec![Some(tracker.gap()), max_sessions]
    }

    fn with_shape(
        ruby: &Ruby,
        shape: &[Value],
        (mode, grace): (ClockMode, u64),
        aggregate: Value,
    ) -> Result<(Tracker, RubyAggregation), Error> {
        let [gap, max_sessions] = shape else {
            return Err(invalid_argument(
                ruby,
                "a sessions checkpoint needs gap and max_sessions".into(),
            ));
        };
        let gap = to_u64(ruby, "gap", *gap)?;
        let max_sessions = checkpoint::optional_u64(ruby, "max_sessions", *max_sessions)?;
        let clock = EventClock::new(mode, Trail::Sessions, grace, None);
        let placeholder = window_machines_core::Aggregation::new(Vec::new());
        SessionWindows::<Held, Held>::new(gap, max_sessions, clock, placeholder).or_raise(ruby)?;
        let aggregation = RubyAggregation::new(ruby, aggregate, true)?;
        let tracker = SessionWindows::new(gap, max_sessions, clock, aggregation.core().clone())
            .or_raise(ruby)?;
        Ok((tracker, aggregation))
    }
}

impl RbSessionWindows {
    fn initialize(ruby: &Ruby, rb_self: Value, args: &[Value]) -> Result<(), Error> {
        unfrozen::<Self>(ruby, rb_self)?;
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        type Optional = (Option<Value>, Option<Value>, Option<Value>, Option<Value>);
        let kwargs = get_kwargs::<_, (Value,), Optional, ()>(
            args.keywords,
            &["aggregate"],
            &["grace", "on_late", "watermark", "max_sessions"],
        )?;
        let gap = to_u64(ruby, "gap", args.required.0)?;
        let (grace, on_late, mode, max_sessions) = kwargs.optional;
        let grace = grace.map_or(Ok(0), |grace| to_u64(ruby, "grace", grace))?;
        let max_sessions = match max_sessions {
            Some(limit) => checkpoint::optional_u64(ruby, "max_sessions", limit)?,
            None => None,
        };
        let mode = clock_mode(ruby, mode)?;
        let on_late = OnLate::new(ruby, on_late)?;
        let clock = EventClock::new(mode, Trail::Sessions, grace, None);
        let placeholder = window_machines_core::Aggregation::new(Vec::new());
        // Limits are checked before the aggregators are read.
        SessionWindows::<Held, Held>::new(gap, max_sessions, clock, placeholder).or_raise(ruby)?;
        let aggregation = RubyAggregation::new(ruby, kwargs.required.0, true)?;
        let tracker = SessionWindows::new(gap, max_sessions, clock, aggregation.core().clone())
            .or_raise(ruby)?;
        restore::replace::<Self>(ruby, rb_self, State::new(tracker, aggregation, on_late))
    }

    fn gap(ruby: &Ruby, rb_self: Value) -> Result<u64, Error> {
        Methods::<Self>::read(ruby, rb_self, |state| state.tracker.gap())
    }

    fn max_sessions(ruby: &Ruby, rb_self: Value) -> Result<Option<usize>, Error> {
        Methods::<Self>::read(ruby, rb_self, |state| state.tracker.max_sessions())
    }

    fn inspect(ruby: &Ruby, rb_self: Value) -> Result<String, Error> {
        Ok(format!(
            "#<{} gap={} {}>",
            crate::identity::class_of(rb_self),
            Self::gap(ruby, rb_self)?,
            Methods::<Self>::inspect_counts(ruby, rb_self, "sessions")?
        ))
    }
}

pub fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = define_class::<RbSessionWindows>(ruby, module, "SessionWindows")?;
    define_aggregating_methods!(ruby, class, RbSessionWindows);
    class.define_method("initialize", method!(RbSessionWindows::initialize, -1))?;
    class.define_method("gap", method!(RbSessionWindows::gap, 0))?;
    class.define_method("max_sessions", method!(RbSessionWindows::max_sessions, 0))?;
    class.define_method("inspect", method!(RbSessionWindows::inspect, 0))?;
    Ok(())
}
