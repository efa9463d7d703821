//! Accumulators: what a window or session carries for the events it took
//! in, and the rules of each built-in aggregator.
//!
//! Values come from the binding already sorted into what Rust can do alone
//! (small Integers, Floats, nil) and what it cannot (`V`: an object of the
//! host language). Every step that needs the host (adding a big number,
//! comparing two objects, a custom aggregator) goes through [`Ops`], so a
//! binding can tell in advance, with [`Accumulator::needs_ops`], whether an
//! event can be applied in place without calling out.

use std::borrow::Cow;
use std::cmp::Ordering;

/// One event's input to one aggregator.
#[derive(Debug, Clone, PartialEq)]
pub enum Input<V> {
    Nil,
    Int(i64),
    Float(f64),
    /// A number Rust does not hold natively (a big Integer, a Rational).
    Numeric(V),
    /// Anything else.
    Object(V),
}

impl<V> Input<V> {
    fn is_nil(&self) -> bool {
        matches!(self, Input::Nil)
    }

    /// The host object it holds, if any.
    pub fn object(&self) -> Option<&V> {
        match self {
            Input::Numeric(value) | Input::Object(value) => Some(value),
            _ => None,
        }
    }
}

/// A running sum.
#[derive(Debug, Clone, PartialEq)]
pub enum Number<V> {
    /// Exact; a sum past 64 bits becomes the host's number.
    Int(i64),
    Float(f64),
    /// Past what Rust holds: the host's number.
    Host(V),
}

/// The built-in aggregators, and custom ones the host runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Count,
    Sum,
    Min,
    Max,
    Mean,
    Collect,
    First,
    Last,
    Custom,
}

impl Kind {
    /// The name checkpoints use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Count => "count",
            Kind::Sum => "sum",
            Kind::Min => "min",
            Kind::Max => "max",
            Kind::Mean => "mean",
            Kind::Collect => "collect",
            Kind::First => "first",
            Kind::Last => "last",
            Kind::Custom => "custom",
        }
    }

    /// Every kind but `Custom`.
    pub const BUILT_IN: [Kind; 8] = [
        Kind::Count,
        Kind::Sum,
        Kind::Min,
        Kind::Max,
        Kind::Mean,
        Kind::Collect,
        Kind::First,
        Kind::Last,
    ];

    #[must_use]
    pub fn named(name: &str) -> Option<Kind> {
        Kind::BUILT_IN.into_iter().find(|kind| kind.name() == name)
    }
}

/// One aggregator of a window's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub kind: Kind,
    /// Whether it reads a field of the value; a counter that does counts
    /// only the events where the field is present.
    pub reads_field: bool,
}

/// A timestamped input; `seq` orders equal timestamps by arrival.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped<V> {
    pub timestamp: u64,
    pub input: Input<V>,
}

/// The state of one aggregator in one window or session.
#[derive(Debug, Clone, PartialEq)]
pub enum Accumulator<V> {
    /// Counts stop at 2**64-1 (as a Mean's does), which no stream reaches,
    /// rather than wrap to nothing: only a checkpoint can start one there.
    Count(u64),
    Sum(Number<V>),
    Min(Option<Input<V>>),
    Max(Option<Input<V>>),
    Mean {
        sum: Number<V>,
        count: u64,
    },
    /// Inputs as they came (a merge puts the earlier part's first), so
    /// that one far out of order costs no more than one in order; read
    /// them through [`in_time_order`].
    Collect(Vec<Stamped<V>>),
    First(Option<Stamped<V>>),
    Last(Option<Stamped<V>>),
    Custom(V),
}

/// Why an aggregator refused an input, or what the host raised.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal<E> {
    /// Sum and Mean take numbers and nil only.
    NotNumeric {
        kind: Kind,
    },
    Host(E),
}

impl<E> From<E> for Refusal<E> {
    fn from(error: E) -> Self {
        Refusal::Host(error)
    }
}

/// What only the host can do.
pub trait Ops<V> {
    type Error;
    /// `a + b` where Rust cannot add them exactly.
    fn add(&mut self, a: Number<V>, b: Number<V>) -> Result<Number<V>, Self::Error>;
    /// How `a` compares to `b` where Rust cannot tell.
    fn compare(&mut self, a: &Input<V>, b: &Input<V>) -> Result<Ordering, Self::Error>;
    /// A custom aggregator's initial accumulator.
    fn initial(&mut self, part: usize) -> Result<V, Self::Error>;
    /// A custom aggregator's `add(acc, value)`.
    fn add_custom(&mut self, part: usize, acc: &V, value: &Input<V>) -> Result<V, Self::Error>;
    /// A custom aggregator's `merge(a, b)`.
    fn merge_custom(&mut self, part: usize, a: &V, b: &V) -> Result<V, Self::Error>;
    /// Refuses a mean's sum the host cannot divide into a Float, so that
    /// the event adding to it is refused rather than its window lost when
    /// handed over. Sums Rust holds always divide.
    fn check_mean(&mut self, _sum: &V) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn native_compare<V>(a: &Input<V>, b: &Input<V>) -> Option<Ordering> {
    match (a, b) {
        (Input::Int(a), Input::Int(b)) => Some(a.cmp(b)),
        (Input::Float(a), Input::Float(b)) => a.partial_cmp(b),
        (Input::Int(a), Input::Float(b)) => compare_int_float(i128::from(*a), *b),
        (Input::Float(a), Input::Int(b)) => {
            compare_int_float(i128::from(*b), *a).map(Ordering::reverse)
        }
        _ => None,
    }
}

/// Exactly, as Ruby compares an Integer with a Float; `None` for NaN.
/// Takes any Integer up to 128 bits, so a host holding wider Integers
/// natively compares them the same way.
#[must_use]
pub fn compare_int_float(int: i128, float: f64) -> Option<Ordering> {
    if float.is_nan() {
        return None;
    }
    // 2**127 as f64 is exact; every f64 at or past it is above any i128.
    const TWO_POW_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if float >= TWO_POW_127 {
        return Some(Ordering::Less);
    }
    if float < -TWO_POW_127 {
        return Some(Ordering::Greater);
    }
    let whole = float.trunc();
    // In range and whole: the conversion is exact.
    #[allow(clippy::cast_possible_truncation)]
    let whole_int = whole as i128;
    Some(int.cmp(&whole_int).then_with(|| {
        let fraction = float - whole;
        0.0_f64.partial_cmp(&fraction).unwrap_or(Ordering::Equal)
    }))
}

fn number_of<V>(input: Input<V>) -> Number<V>
where
    V: Clone,
{
    match input {
        Input::Int(int) => Number::Int(int),
        Input::Float(float) => Number::Float(float),
        Input::Numeric(value) | Input::Object(value) => Number::Host(value),
        Input::Nil => Number::Int(0),
    }
}

/// Adds, in Rust when that is exact: Integer + Float is a Float, as in Ruby.
fn add_numbers<V, O: Ops<V>>(
    a: Number<V>,
    b: Number<V>,
    ops: &mut O,
) -> Result<Number<V>, O::Error> {
    #[allow(clippy::cast_precision_loss)]
    match (a, b) {
        (Number::Int(a), Number::Int(b)) => match a.checked_add(b) {
            Some(sum) => Ok(Number::Int(sum)),
            None => ops.add(Number::Int(a), Number::Int(b)),
        },
        (Number::Float(a), Number::Float(b)) => Ok(Number::Float(a + b)),
        (Number::Int(a), Number::Float(b)) => Ok(Number::Float(a as f64 + b)),
        (Number::Float(a), Number::Int(b)) => Ok(Number::Float(a + b as f64)),
        (a, b) => ops.add(a, b),
    }
}

fn number_needs_ops<V>(sum: &Number<V>, input: &Input<V>) -> bool {
    match (sum, input) {
        (_, Input::Nil) => false,
        (Number::Host(_), _) | (_, Input::Numeric(_) | Input::Object(_)) => true,
        (Number::Int(sum), Input::Int(int)) => sum.checked_add(*int).is_none(),
        _ => false,
    }
}

fn numeric<V, E>(kind: Kind, input: &Input<V>) -> Result<(), Refusal<E>> {
    match input {
        Input::Object(_) => Err(Refusal::NotNumeric { kind }),
        _ => Ok(()),
    }
}

/// Whether `candidate` replaces `held` as the extreme: strictly beyond it,
/// so that equal values keep the earlier arrival.
fn beyond<V: Clone, O: Ops<V>>(
    held: &Input<V>,
    candidate: &Input<V>,
    want: Ordering,
    ops: &mut O,
) -> Result<bool, O::Error> {
    let order = match native_compare(candidate, held) {
        Some(order) => order,
        None => ops.compare(candidate, held)?,
    };
    Ok(order == want)
}

impl<V: Clone> Accumulator<V> {
    /// A fresh accumulator for `part` (the `index`th of its aggregation).
    pub fn initial<O: Ops<V>>(part: Part, index: usize, ops: &mut O) -> Result<Self, O::Error> {
        Ok(match part.kind {
            Kind::Count => Accumulator::Count(0),
            Kind::Sum => Accumulator::Sum(Number::Int(0)),
            Kind::Min => Accumulator::Min(None),
            Kind::Max => Accumulator::Max(None),
            Kind::Mean => Accumulator::Mean {
                sum: Number::Int(0),
                count: 0,
            },
            Kind::Collect => Accumulator::Collect(Vec::new()),
            Kind::First => Accumulator::First(None),
            Kind::Last => Accumulator::Last(None),
            Kind::Custom => Accumulator::Custom(ops.initial(index)?),
        })
    }

    /// Whether adding `input` needs the host.
    #[must_use]
    pub fn needs_ops(&self, input: &Input<V>) -> bool {
        match self {
            Accumulator::Count(_) | Accumulator::Collect(_) => false,
            Accumulator::First(_) | Accumulator::Last(_) => false,
            Accumulator::Sum(sum) | Accumulator::Mean { sum, .. } => number_needs_ops(sum, input),
            Accumulator::Min(held) | Accumulator::Max(held) => match held {
                Some(held) if !input.is_nil() => native_compare(input, held).is_none(),
                _ => false,
            },
            Accumulator::Custom(_) => true,
        }
    }

    /// Takes in one event's input for `part` (the `index`th), already
    /// checked by [`Aggregation::check`]. On error the accumulator is
    /// unchanged.
    pub(crate) fn add<O: Ops<V>>(
        &mut self,
        part: Part,
        index: usize,
        timestamp: u64,
        input: &Input<V>,
        ops: &mut O,
    ) -> Result<(), Refusal<O::Error>> {
        match self {
            Accumulator::Count(count) => {
                if !(part.reads_field && input.is_nil()) {
                    *count = count.saturating_add(1);
                }
            }
            Accumulator::Sum(sum) => {
                if !input.is_nil() {
                    *sum = add_numbers(sum.clone(), number_of(input.clone()), ops)?;
                }
            }
            Accumulator::Mean { sum, count } => {
                if !input.is_nil() {
                    *sum = add_numbers(sum.clone(), number_of(input.clone()), ops)?;
                    *count = count.saturating_add(1);
                    if let Number::Host(sum) = sum {
                        ops.check_mean(sum).map_err(Refusal::Host)?;
                    }
                }
            }
            Accumulator::Min(held) => extreme(held, input, Ordering::Less, ops)?,
            Accumulator::Max(held) => extreme(held, input, Ordering::Greater, ops)?,
            Accumulator::Collect(inputs) => inputs.push(Stamped {
                timestamp,
                input: input.clone(),
            }),
            Accumulator::First(held) => {
                if held.as_ref().is_none_or(|held| timestamp < held.timestamp) {
                    *held = Some(Stamped {
                        timestamp,
                        input: input.clone(),
                    });
                }
            }
            Accumulator::Last(held) => {
                if held.as_ref().is_none_or(|held| timestamp >= held.timestamp) {
                    *held = Some(Stamped {
                        timestamp,
                        input: input.clone(),
                    });
                }
            }
            Accumulator::Custom(acc) => *acc = ops.add_custom(index, acc, input)?,
        }
        Ok(())
    }

    /// Combines `self` with `later`, whose events arrived after `self`'s:
    /// adjacent panes or sessions, or two parts of one pane (whose event
    /// times interleave). Equal timestamps keep arrival order.
    pub fn merge<O: Ops<V>>(
        self,
        later: Self,
        index: usize,
        ops: &mut O,
    ) -> Result<Self, O::Error> {
        Ok(match (self, later) {
            (Accumulator::Count(a), Accumulator::Count(b)) => {
                Accumulator::Count(a.saturating_add(b))
            }
            (Accumulator::Sum(a), Accumulator::Sum(b)) => Accumulator::Sum(add_numbers(a, b, ops)?),
            (Accumulator::Mean { sum: a, count: m }, Accumulator::Mean { sum: b, count: n }) => {
                Accumulator::Mean {
                    sum: add_numbers(a, b, ops)?,
                    count: m.saturating_add(n),
                }
            }
            (Accumulator::Min(a), Accumulator::Min(b)) => {
                Accumulator::Min(merge_extreme(a, b, Ordering::Less, ops)?)
            }
            (Accumulator::Max(a), Accumulator::Max(b)) => {
                Accumulator::Max(merge_extreme(a, b, Ordering::Greater, ops)?)
            }
            (Accumulator::Collect(mut a), Accumulator::Collect(b)) => {
                a.extend(b);
                Accumulator::Collect(a)
            }
            (Accumulator::First(a), Accumulator::First(b)) => Accumulator::First(match (a, b) {
                (Some(a), Some(b)) if b.timestamp < a.timestamp => Some(b),
                (a, b) => a.or(b),
            }),
            (Accumulator::Last(a), Accumulator::Last(b)) => Accumulator::Last(match (a, b) {
                (Some(a), Some(b)) if a.timestamp > b.timestamp => Some(a),
                (a, b) => b.or(a),
            }),
            (Accumulator::Custom(a), Accumulator::Custom(b)) => {
                Accumulator::Custom(ops.merge_custom(index, &a, &b)?)
            }
            (held, _) => {
                debug_assert!(false, "merged accumulators of different aggregators");
                held
            }
        })
    }

    /// The aggregator it belongs to.
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            Accumulator::Count(_) => Kind::Count,
            Accumulator::Sum(_) => Kind::Sum,
            Accumulator::Min(_) => Kind::Min,
            Accumulator::Max(_) => Kind::Max,
            Accumulator::Mean { .. } => Kind::Mean,
            Accumulator::Collect(_) => Kind::Collect,
            Accumulator::First(_) => Kind::First,
            Accumulator::Last(_) => Kind::Last,
            Accumulator::Custom(_) => Kind::Custom,
        }
    }

    /// Whether a restored accumulator could have been built from events in
    /// `first..=last`: timestamps inside, inputs in event-time order.
    #[must_use]
    pub fn fits(&self, first: u64, last: u64) -> bool {
        let inside = |timestamp: u64| (first..=last).contains(&timestamp);
        match self {
            Accumulator::Collect(inputs) => {
                inputs.iter().all(|held| inside(held.timestamp))
                    && inputs
                        .windows(2)
                        .all(|pair| pair[0].timestamp <= pair[1].timestamp)
            }
            Accumulator::First(held) | Accumulator::Last(held) => {
                held.as_ref().is_none_or(|held| inside(held.timestamp))
            }
            Accumulator::Mean { sum, count: 0 } => matches!(sum, Number::Int(0)),
            _ => true,
        }
    }

    /// Whether it holds any host object.
    #[must_use]
    pub fn holds_objects(&self) -> bool {
        let mut any = false;
        self.each_object(&mut |_| any = true);
        any
    }

    /// Every host object it holds.
    pub fn each_object(&self, f: &mut dyn FnMut(&V)) {
        let mut input = |input: &Input<V>| {
            if let Some(object) = input.object() {
                f(object);
            }
        };
        match self {
            Accumulator::Count(_) => {}
            Accumulator::Sum(sum) | Accumulator::Mean { sum, .. } => {
                if let Number::Host(value) = sum {
                    f(value);
                }
            }
            Accumulator::Min(held) | Accumulator::Max(held) => held.iter().for_each(input),
            Accumulator::Collect(inputs) => inputs.iter().for_each(|held| input(&held.input)),
            Accumulator::First(held) | Accumulator::Last(held) => {
                held.iter().for_each(|held| input(&held.input));
            }
            Accumulator::Custom(acc) => f(acc),
        }
    }

    /// Bytes it holds on the heap.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        match self {
            Accumulator::Collect(inputs) => inputs.capacity() * std::mem::size_of::<Stamped<V>>(),
            _ => 0,
        }
    }
}

fn extreme<V: Clone, O: Ops<V>>(
    held: &mut Option<Input<V>>,
    input: &Input<V>,
    want: Ordering,
    ops: &mut O,
) -> Result<(), O::Error> {
    if input.is_nil() {
        return Ok(());
    }
    let replace = match held {
        None => true,
        Some(held) => beyond(held, input, want, ops)?,
    };
    if replace {
        *held = Some(input.clone());
    }
    Ok(())
}

fn merge_extreme<V: Clone, O: Ops<V>>(
    earlier: Option<Input<V>>,
    later: Option<Input<V>>,
    want: Ordering,
    ops: &mut O,
) -> Result<Option<Input<V>>, O::Error> {
    Ok(match (earlier, later) {
        (Some(a), Some(b)) => {
            if beyond(&a, &b, want, ops)? {
                Some(b)
            } else {
                Some(a)
            }
        }
        (a, b) => a.or(b),
    })
}

/// `earlier` and `later`, each in event-time order, as one list in event-time
/// order; on equal timestamps `earlier`'s inputs come first.
/// Collect's inputs in event-time order, equal timestamps in the order they
/// were added (an earlier part's before a later one's): a stable sort of
/// them as they came, and no copy when they came in order.
#[must_use]
pub fn in_time_order<V: Clone>(inputs: &[Stamped<V>]) -> Cow<'_, [Stamped<V>]> {
    if inputs.is_sorted_by_key(|held| held.timestamp) {
        return Cow::Borrowed(inputs);
    }
    let mut sorted = inputs.to_vec();
    sorted.sort_by_key(|held| held.timestamp);
    Cow::Owned(sorted)
}

/// One event's inputs, one per part: kept inline for up to two parts, so
/// an event allocates nothing for them.
pub type Inputs<V> = smallvec::SmallVec<[Input<V>; 2]>;

/// The accumulators of one window or session, one per part: up to two
/// (a count and a sum, say) are kept inline, so a session's sit in its
/// key's entry and a hand-over allocates nothing. Panes keep one inline
/// (see `keyed_windows`).
pub type Accumulators<V> = smallvec::SmallVec<[Accumulator<V>; 2]>;

/// What a tracker aggregates: its parts, in the order results list them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aggregation {
    parts: Vec<Part>,
}

impl Aggregation {
    #[must_use]
    pub fn new(parts: Vec<Part>) -> Aggregation {
        Aggregation { parts }
    }

    #[must_use]
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Whether its accumulators may hold host objects: all but counts can
    /// (a Bignum sum, a kept input, a custom accumulator), so a host that
    /// marks what a tracker holds can skip walking counts.
    #[must_use]
    pub fn may_hold_objects(&self) -> bool {
        self.parts.iter().any(|part| part.kind != Kind::Count)
    }

    /// Whether any part needs `merge` (custom ones run the host's).
    #[must_use]
    pub fn has_custom(&self) -> bool {
        self.parts.iter().any(|part| part.kind == Kind::Custom)
    }

    /// Fresh accumulators, in whichever collection holds them.
    pub fn initial<V: Clone, O: Ops<V>, C: FromIterator<Accumulator<V>>>(
        &self,
        ops: &mut O,
    ) -> Result<C, O::Error> {
        self.parts
            .iter()
            .enumerate()
            .map(|(index, part)| Accumulator::initial(*part, index, ops))
            .collect()
    }

    /// Fresh accumulators of an aggregation with no custom part, made one
    /// by one into whatever holds them: collected first, three or more
    /// would take an allocation of their own on the way.
    pub fn initial_built_in<V: Clone>(&self) -> impl Iterator<Item = Accumulator<V>> + '_ {
        debug_assert!(!self.has_custom());
        self.parts
            .iter()
            .enumerate()
            .filter_map(|(index, part)| Accumulator::initial(*part, index, &mut NoOps).ok())
    }

    /// Whether a fresh window taking `inputs` needs the host: to make a
    /// custom accumulator, or to add an input Rust cannot.
    #[must_use]
    pub fn fresh_needs_ops<V: Clone>(&self, inputs: &[Input<V>]) -> bool {
        // One accumulator at a time, none collected: this is asked for
        // every window an event opens.
        self.has_custom()
            || self
                .parts
                .iter()
                .enumerate()
                .zip(inputs)
                .any(|((index, part), input)| {
                    Accumulator::initial(*part, index, &mut NoOps)
                        .map_or(true, |fresh| fresh.needs_ops(input))
                })
    }

    /// Whether adding `inputs` (one per part) to `accs` needs the host.
    #[must_use]
    pub fn add_needs_ops<V: Clone>(&self, accs: &[Accumulator<V>], inputs: &[Input<V>]) -> bool {
        accs.iter()
            .zip(inputs)
            .any(|(acc, input)| acc.needs_ops(input))
    }

    /// Checks `inputs` against every part, as adding them would. Callers
    /// check before anything else (a merge, a custom aggregator) runs, so
    /// a refused input is refused the same way whatever the event does.
    pub fn check<V, E>(&self, inputs: &[Input<V>]) -> Result<(), Refusal<E>> {
        self.parts
            .iter()
            .zip(inputs)
            .try_for_each(|(part, input)| match part.kind {
                Kind::Sum | Kind::Mean => numeric(part.kind, input),
                _ => Ok(()),
            })
    }

    /// Adds one event to `accs`, its inputs already passed by
    /// [`Aggregation::check`] (once per event, however many windows it
    /// enters). An error from the host may leave `accs` part-updated, so
    /// callers that let the host run add to a copy.
    pub fn add<V: Clone, O: Ops<V>>(
        &self,
        accs: &mut [Accumulator<V>],
        timestamp: u64,
        inputs: &[Input<V>],
        ops: &mut O,
    ) -> Result<(), Refusal<O::Error>> {
        for (index, ((acc, input), part)) in
            accs.iter_mut().zip(inputs).zip(&self.parts).enumerate()
        {
            acc.add(*part, index, timestamp, input, ops)?;
        }
        Ok(())
    }

    /// Whether comparing `inputs` with the extremes (Min, Max) `others`
    /// hold needs the host; only inputs Rust does not hold ever can.
    #[must_use]
    pub fn compare_needs_ops<V: Clone>(
        &self,
        others: &[Accumulator<V>],
        inputs: &[Input<V>],
    ) -> bool {
        others.iter().zip(inputs).any(|(acc, input)| {
            matches!(acc, Accumulator::Min(_) | Accumulator::Max(_)) && acc.needs_ops(input)
        })
    }

    /// Whether any input is compared with extremes (Min, Max).
    #[must_use]
    pub fn compares<V>(&self, inputs: &[Input<V>]) -> bool {
        self.parts
            .iter()
            .zip(inputs)
            .any(|(part, input)| matches!(part.kind, Kind::Min | Kind::Max) && !input.is_nil())
    }

    /// Compares `inputs` with the extremes `others` hold, so that an input
    /// the host cannot compare with them is refused when it comes, not
    /// when the two are merged.
    pub fn compare_with<V: Clone, O: Ops<V>>(
        &self,
        others: &[Accumulator<V>],
        inputs: &[Input<V>],
        ops: &mut O,
    ) -> Result<(), O::Error> {
        for (acc, input) in others.iter().zip(inputs) {
            if let Accumulator::Min(Some(held)) | Accumulator::Max(Some(held)) = acc {
                if !input.is_nil() && native_compare(input, held).is_none() {
                    ops.compare(input, held)?;
                }
            }
        }
        Ok(())
    }

    /// The extremes (Min, Max) of `one` and `other` that only the host can
    /// compare: merging the two compares them.
    #[must_use]
    pub fn host_comparisons<'a, V: Clone>(
        &self,
        one: &'a [Accumulator<V>],
        other: &'a [Accumulator<V>],
    ) -> Vec<(&'a Input<V>, &'a Input<V>)> {
        one.iter()
            .zip(other)
            .filter_map(|pair| match pair {
                (Accumulator::Min(Some(a)), Accumulator::Min(Some(b)))
                | (Accumulator::Max(Some(a)), Accumulator::Max(Some(b))) => {
                    native_compare(b, a).is_none().then_some((b, a))
                }
                _ => None,
            })
            .collect()
    }

    /// Merges `parts` in order (each arrived after the ones before it), as
    /// a window made of panes is; `None` for no parts.
    pub fn merge_all<V: Clone, O: Ops<V>>(
        &self,
        parts: Vec<Accumulators<V>>,
        ops: &mut O,
    ) -> Result<Option<Accumulators<V>>, O::Error> {
        let mut parts = parts.into_iter();
        let Some(first) = parts.next() else {
            return Ok(None);
        };
        parts
            .try_fold(first, |merged, part| self.merge(merged, part, ops))
            .map(Some)
    }

    /// Merges `earlier` with `later` (whose events arrived after).
    pub fn merge<V: Clone, O: Ops<V>>(
        &self,
        earlier: Accumulators<V>,
        later: Accumulators<V>,
        ops: &mut O,
    ) -> Result<Accumulators<V>, O::Error> {
        earlier
            .into_iter()
            .zip(later)
            .enumerate()
            .map(|(index, (a, b))| a.merge(b, index, ops))
            .collect()
    }

    /// Whether restored `accs` belong to this aggregation and could have
    /// been built from events in `first..=last`, at least one: a window is
    /// held because an event went into it.
    #[must_use]
    pub fn fits<V: Clone>(&self, accs: &[Accumulator<V>], first: u64, last: u64) -> bool {
        // What every event leaves a mark in, nil inputs included.
        let holds_no_event = |acc: &Accumulator<V>, part: &Part| match acc {
            Accumulator::Count(0) => !part.reads_field,
            Accumulator::Collect(inputs) => inputs.is_empty(),
            Accumulator::First(held) | Accumulator::Last(held) => held.is_none(),
            _ => false,
        };
        accs.len() == self.parts.len()
            && accs.iter().zip(&self.parts).all(|(acc, part)| {
                acc.kind() == part.kind && acc.fits(first, last) && !holds_no_event(acc, part)
            })
    }

    /// Whether restored `accs` could be a session's from `first` to
    /// `last`: as [`Aggregation::fits`], and with an event at each end
    /// (both ends are event times), where an aggregator marks every event:
    /// a `First` at `first`, a `Last` at `last`, a `Collect` from one to
    /// the other, a `Count` without a field of one event per end at least.
    #[must_use]
    pub fn fits_session<V: Clone>(&self, accs: &[Accumulator<V>], first: u64, last: u64) -> bool {
        let at = |held: &Option<Stamped<V>>| held.as_ref().map(|held| held.timestamp);
        let ends = if first < last { 2 } else { 1 };
        self.fits(accs, first, last)
            && accs.iter().zip(&self.parts).all(|(acc, part)| match acc {
                Accumulator::Count(count) => part.reads_field || *count >= ends,
                Accumulator::Collect(inputs) => {
                    inputs.first().map(|held| held.timestamp) == Some(first)
                        && inputs.last().map(|held| held.timestamp) == Some(last)
                }
                Accumulator::First(held) => at(held) == Some(first),
                Accumulator::Last(held) => at(held) == Some(last),
                _ => true,
            })
    }
}

/// An [`Ops`] for steps known not to need the host: every call is a bug.
pub struct NoOps;

/// Returned by [`NoOps`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsHost;

impl<V> Ops<V> for NoOps {
    type Error = NeedsHost;

    fn add(&mut self, _: Number<V>, _: Number<V>) -> Result<Number<V>, NeedsHost> {
        Err(NeedsHost)
    }

    fn compare(&mut self, _: &Input<V>, _: &Input<V>) -> Result<Ordering, NeedsHost> {
        Err(NeedsHost)
    }

    fn initial(&mut self, _: usize) -> Result<V, NeedsHost> {
        Err(NeedsHost)
    }

    fn add_custom(&mut self, _: usize, _: &V, _: &Input<V>) -> Result<V, NeedsHost> {
        Err(NeedsHost)
    }

    fn merge_custom(&mut self, _: usize, _: &V, _: &V) -> Result<V, NeedsHost> {
        Err(NeedsHost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(kind: Kind) -> Part {
        Part {
            kind,
            reads_field: false,
        }
    }

    fn add(acc: &mut Accumulator<u8>, kind: Kind, timestamp: u64, input: Input<u8>) {
        assert!(!acc.needs_ops(&input));
        acc.add(part(kind), 0, timestamp, &input, &mut NoOps)
            .unwrap();
    }

    #[test]
    fn a_fresh_window_needs_the_host_only_for_custom_parts_and_host_numbers() {
        let kinds = [
            Kind::Count,
            Kind::Sum,
            Kind::Min,
            Kind::Mean,
            Kind::Collect,
            Kind::Last,
        ];
        let aggregation = Aggregation::new(kinds.iter().map(|&kind| part(kind)).collect());
        let ints: Vec<Input<u8>> = kinds.iter().map(|_| Input::Int(7)).collect();
        assert!(!aggregation.fresh_needs_ops(&ints));
        let mut objects = ints.clone();
        objects[4] = Input::Object(1);
        assert!(!aggregation.fresh_needs_ops(&objects));
        for (summed, host) in [(1, Input::Numeric(2)), (3, Input::Object(3))] {
            let mut inputs = ints.clone();
            inputs[summed] = host;
            assert!(aggregation.fresh_needs_ops(&inputs));
        }
        let custom = Aggregation::new(vec![part(Kind::Count), part(Kind::Custom)]);
        assert!(custom.fresh_needs_ops(&[Input::<u8>::Nil, Input::Nil]));
    }

    #[test]
    fn only_counts_never_hold_host_objects() {
        let counts = Aggregation::new(vec![part(Kind::Count), part(Kind::Count)]);
        assert!(!counts.may_hold_objects());
        let mut count = Accumulator::initial(part(Kind::Count), 0, &mut NoOps).unwrap();
        add(&mut count, Kind::Count, 1, Input::Object(1_u8));
        assert!(!count.holds_objects());
        let others = Kind::BUILT_IN
            .into_iter()
            .filter(|kind| *kind != Kind::Count);
        for kind in others.chain([Kind::Custom]) {
            let aggregation = Aggregation::new(vec![part(Kind::Count), part(kind)]);
            assert!(aggregation.may_hold_objects(), "{kind:?}");
        }
    }

    #[test]
    fn sums_hand_past_64_bits_to_the_host() {
        let mut acc = Accumulator::initial(part(Kind::Sum), 0, &mut NoOps).unwrap();
        add(&mut acc, Kind::Sum, 1, Input::Int(i64::MAX - 1));
        add(&mut acc, Kind::Sum, 1, Input::Int(1));
        assert_eq!(acc, Accumulator::Sum(Number::Int(i64::MAX)));
        assert!(acc.needs_ops(&Input::Int(1)));
        assert!(!acc.needs_ops(&Input::Int(-1)));
        add(&mut acc, Kind::Sum, 1, Input::Nil);
        add(&mut acc, Kind::Sum, 1, Input::Float(0.5));
        assert!(matches!(acc, Accumulator::Sum(Number::Float(_))));
    }

    #[test]
    fn collect_orders_by_time_then_arrival() {
        let mut acc = Accumulator::Collect(Vec::new());
        add(&mut acc, Kind::Collect, 5, Input::Int(1));
        add(&mut acc, Kind::Collect, 3, Input::Int(2));
        add(&mut acc, Kind::Collect, 5, Input::Int(3));
        let mut more = Accumulator::Collect(Vec::new());
        add(&mut more, Kind::Collect, 5, Input::Int(4));
        add(&mut more, Kind::Collect, 1, Input::Int(5));
        let merged = acc.merge(more, 0, &mut NoOps).unwrap();
        let Accumulator::Collect(inputs) = merged else {
            panic!()
        };
        let got: Vec<_> = in_time_order(&inputs)
            .iter()
            .map(|held| held.input.clone())
            .collect();
        let expected = [5, 2, 1, 3, 4].map(Input::Int);
        assert_eq!(got, expected);
    }

    #[test]
    fn first_and_last_break_ties_by_arrival() {
        let mut first = Accumulator::First(None);
        let mut last = Accumulator::Last(None);
        for (ts, value) in [(5, 1), (5, 2), (7, 3), (7, 4)] {
            add(&mut first, Kind::First, ts, Input::Int(value));
            add(&mut last, Kind::Last, ts, Input::Int(value));
        }
        assert_eq!(
            first,
            Accumulator::First(Some(Stamped {
                timestamp: 5,
                input: Input::Int(1)
            }))
        );
        assert_eq!(
            last,
            Accumulator::Last(Some(Stamped {
                timestamp: 7,
                input: Input::Int(4)
            }))
        );
    }

    #[test]
    fn min_max_compare_integers_and_floats_exactly() {
        assert_eq!(
            compare_int_float(i128::from(i64::MAX), 9.223_372_036_854_776e18),
            Some(Ordering::Less)
        );
        assert_eq!(compare_int_float(3, 3.0), Some(Ordering::Equal));
        assert_eq!(compare_int_float(3, 2.5), Some(Ordering::Greater));
        assert_eq!(compare_int_float(-3, -2.5), Some(Ordering::Less));
        assert_eq!(compare_int_float(-3, -3.5), Some(Ordering::Greater));
        assert_eq!(compare_int_float(1, f64::NAN), None);
        // Past 64 bits: 2**64 + 1 against 2**64, which f64 holds exactly.
        let two_pow_64 = 18_446_744_073_709_551_616.0;
        assert_eq!(
            compare_int_float((1 << 64) + 1, two_pow_64),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare_int_float(-(1 << 64) - 1, -two_pow_64),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_int_float(i128::MAX, 1.7e38),
            Some(Ordering::Greater)
        );
        let two_pow_127 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
        assert_eq!(
            compare_int_float(i128::MAX, two_pow_127),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_int_float(i128::MIN, -two_pow_127),
            Some(Ordering::Equal)
        );
        let mut acc = Accumulator::Min(None);
        add(&mut acc, Kind::Min, 1, Input::Int(3));
        add(&mut acc, Kind::Min, 1, Input::Float(2.5));
        add(&mut acc, Kind::Min, 1, Input::Int(7));
        assert_eq!(acc, Accumulator::Min(Some(Input::Float(2.5))));
        assert!(acc.needs_ops(&Input::Object(0)));
    }

    #[test]
    fn sums_refuse_objects() {
        let aggregation = Aggregation::new(vec![part(Kind::Count), part(Kind::Sum)]);
        assert_eq!(
            aggregation.check::<u8, ()>(&[Input::Object(1), Input::Object(1)]),
            Err(Refusal::NotNumeric { kind: Kind::Sum })
        );
    }
}
