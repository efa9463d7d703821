//! The `aggregate:` argument of the aggregating classes: which built-ins
//! (and custom objects) to run, what field each reads, and how results are
//! named; the Ruby side of the core's [`Ops`]; results back to Ruby.

use std::cmp::Ordering;

use magnus::r_hash::ForEach;
use magnus::{
    prelude::*,
    rb_sys::{AsRawId, AsRawValue},
    value::{LazyId, Opaque},
    Error, Float, Integer, RHash, RModule, Ruby, Symbol, Value,
};
use rb_sys::{FIX2LONG, FIXNUM_P};
use window_machines_core::{
    in_time_order, Accumulator, Accumulators, Aggregation, Input, Inputs, Kind, Number, Ops, Part,
    Refusal, Stamped,
};

use crate::errors::{invalid_argument, shown, wrong_type};
use crate::hash_key::in_hash_without_ruby;
pub use crate::held::Keep;

pub type Held = Opaque<Value>;

/// One aggregator as given.
#[derive(Clone, Copy)]
struct Given {
    /// The field it reads, if any.
    field: Option<Held>,
    /// The object itself: a built-in, or a custom aggregator.
    object: Held,
}

/// What a tracker aggregates, with the Ruby objects that say so.
#[derive(Clone)]
pub struct RubyAggregation {
    core: Aggregation,
    given: Vec<Given>,
    /// The names of a Hash `aggregate:`, in order; `None` for one aggregator.
    names: Option<Vec<Held>>,
    /// For names a Hash finds by running Ruby code (their `hash`, `eql?`):
    /// a Hash of each name to its index, made here, from which results are
    /// copied (see [`RubyAggregation::result`]).
    template: Option<Held>,
    /// The `aggregate:` argument as given.
    argument: Option<Held>,
}

impl RubyAggregation {
    /// Reads `aggregate:`. `needs_merge`: whether the class merges
    /// accumulators, so custom aggregators must define `merge`.
    pub fn new(ruby: &Ruby, argument: Value, needs_merge: bool) -> Result<Self, Error> {
        // User code runs while the objects are read (an aggregator's
        // `respond_to?`, a name's `hash`) and may compact the heap: each
        // object is pinned before it is kept in Rust memory, until the
        // tracker holds them.
        let mut kept = Keep::ready(ruby);
        let builtin: Value = ruby
            .class_object()
            .const_get::<_, RModule>("WindowMachines")?
            .const_get::<_, RModule>("Aggregate")?
            .const_get("Builtin")?;
        let read = |object: Value, kept: &mut Keep| -> Result<(Part, Given), Error> {
            if object.is_kind_of(magnus::RClass::from_value(builtin).ok_or_else(|| {
                invalid_argument(
                    ruby,
                    "WindowMachines::Aggregate::Builtin is not a class".into(),
                )
            })?) {
                let kind: Symbol = object.funcall("kind", ())?;
                let kind = Kind::named(&kind.name()?).ok_or_else(|| {
                    invalid_argument(ruby, format!("unknown aggregator {}", shown(object)))
                })?;
                let field: Value = object.funcall("field", ())?;
                kept.push(ruby, field)?;
                let field = (!field.is_nil()).then(|| Held::from(field));
                let part = Part {
                    kind,
                    reads_field: field.is_some(),
                };
                return Ok((
                    part,
                    Given {
                        field,
                        object: object.into(),
                    },
                ));
            }
            let mut wanted = vec!["initial", "add"];
            if needs_merge {
                wanted.push("merge");
            }
            // What a `respond_to?` raises (or throws) goes on as it is.
            let mut missing = Vec::new();
            for method in wanted {
                if !object.respond_to(method, false)? {
                    missing.push(method);
                }
            }
            if !missing.is_empty() {
                return Err(invalid_argument(
                    ruby,
                    format!(
                        "aggregate: {} is not an aggregator: it lacks {}{}",
                        shown(object),
                        missing.join(" and "),
                        if needs_merge {
                            " (sessions and hopping windows merge accumulators)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            let part = Part {
                kind: Kind::Custom,
                reads_field: false,
            };
            Ok((
                part,
                Given {
                    field: None,
                    object: object.into(),
                },
            ))
        };
        let mut parts = Vec::new();
        let mut given = Vec::new();
        // A Hash is read from a frozen copy, taken before any user code
        // runs, which is also what `aggregate` and checkpoints give back:
        // whatever code run meanwhile does to the caller's Hash, they
        // describe the aggregators read. `Hash[]` copies the pairs alone,
        // into a plain Hash: a default proc (which Marshal refuses) or a
        // subclass would say nothing about the aggregators.
        let argument = match RHash::from_value(argument) {
            Some(hash) => {
                let copy: RHash = ruby.class_hash().funcall("[]", (hash,))?;
                copy.freeze();
                copy.as_value()
            }
            None => argument,
        };
        let names = if let Some(hash) = RHash::from_value(argument) {
            if hash.is_empty() {
                return Err(invalid_argument(
                    ruby,
                    "aggregate: must name at least one aggregator".into(),
                ));
            }
            // Collected with no Ruby code run, each pinned: reading them
            // runs user code, which may compact.
            let mut pairs = Vec::new();
            hash.foreach(|name: Value, object: Value| {
                kept.push(ruby, name)?;
                kept.push(ruby, object)?;
                pairs.push((name, object));
                Ok(ForEach::Continue)
            })?;
            let mut names = Vec::new();
            let template = ruby.hash_new();
            let mut found_without_ruby = true;
            for (name, object) in pairs {
                let (part, one) = read(object, &mut kept)?;
                parts.push(part);
                given.push(one);
                found_without_ruby &= in_hash_without_ruby(ruby, name);
                template.aset(name, names.len())?;
                names.push(Held::from(name));
            }
            if template.len() != names.len() {
                return Err(invalid_argument(
                    ruby,
                    format!(
                        "aggregate: {} names two aggregators alike, and a result Hash holds one \
                         value per name",
                        shown(argument)
                    ),
                ));
            }
            template.freeze();
            Some((
                names,
                (!found_without_ruby).then(|| Held::from(template.as_value())),
            ))
        } else {
            let (part, one) = read(argument, &mut kept)?;
            parts.push(part);
            given.push(one);
            None
        };
        let (names, template) = names.unzip();
        Ok(RubyAggregation {
            core: Aggregation::new(parts),
            given,
            names,
            template: template.flatten(),
            argument: Some(argument.into()),
        })
    }

    /// Aggregates nothing: the state of a tracker not yet initialised.
    pub fn placeholder() -> Self {
        RubyAggregation {
            core: Aggregation::new(Vec::new()),
            given: Vec::new(),
            names: None,
            template: None,
            argument: None,
        }
    }

    /// Whether results are a Hash of named aggregators.
    pub fn is_named(&self) -> bool {
        self.names.is_some()
    }

    pub fn core(&self) -> &Aggregation {
        &self.core
    }

    pub fn argument(&self, ruby: &Ruby) -> Value {
        self.argument.map_or_else(
            || ruby.qnil().as_value(),
            |argument| ruby.get_inner(argument),
        )
    }

    /// Every Ruby object it holds.
    pub fn each_object(&self, f: &mut dyn FnMut(Held)) {
        self.argument.into_iter().for_each(&mut *f);
        for one in &self.given {
            f(one.object);
            if let Some(field) = one.field {
                f(field);
            }
        }
        for name in self.names.iter().flatten() {
            f(*name);
        }
        self.template.into_iter().for_each(f);
    }

    /// Whether an event's inputs are read with no Ruby code: no custom
    /// aggregator, and no field to read from the value (a Hash's default
    /// proc, or a value's `[]`, could run any).
    pub fn adds_without_ruby(&self) -> bool {
        !self.core.has_custom() && self.given.iter().all(|one| one.field.is_none())
    }

    /// Whether `add` uses any of its objects after user code may have run
    /// (a field read, a key's `hash`): only custom aggregators and fields
    /// that are not immediates are, so only then must `add` pin them.
    pub fn add_needs_pins(&self, ruby: &Ruby) -> bool {
        self.core.has_custom()
            || self.given.iter().any(|one| {
                one.field
                    .is_some_and(|field| !rb_sys::SPECIAL_CONST_P(ruby.get_inner(field).as_raw()))
            })
    }

    /// Pins the aggregation's objects (aggregators, fields, names) for the
    /// length of a call, in a value the caller keeps in a local: user code
    /// the call runs may replace the tracker's state, after which the
    /// tracker no longer marks them, while the call still uses them. The
    /// first few sit on the machine stack, which the GC scans and pins;
    /// more go to `keep`.
    pub fn pin_for_call(&self, ruby: &Ruby, keep: &mut Keep) -> Result<OnStack, Error> {
        let mut on_stack = OnStack([ruby.qnil().as_value(); ON_STACK]);
        let mut count = 0;
        let mut more: Vec<Held> = Vec::new();
        self.each_object(&mut |object| {
            if rb_sys::SPECIAL_CONST_P(ruby.get_inner(object).as_raw()) {
                return;
            }
            match on_stack.0.get_mut(count) {
                Some(slot) => {
                    *slot = ruby.get_inner(object);
                    count += 1;
                }
                None => more.push(object),
            }
        });
        // The tracker still marks these: no Ruby code has run since it
        // was read.
        for object in more {
            keep.push(ruby, ruby.get_inner(object))?;
        }
        Ok(on_stack)
    }

    /// One input per part for `value`. Objects read from fields are pushed
    /// to `keep`, so they outlive the call whatever the value does.
    pub fn inputs(
        &self,
        ruby: &Ruby,
        value: Value,
        keep: &mut Keep,
    ) -> Result<Inputs<Held>, Error> {
        self.core
            .parts()
            .iter()
            .zip(&self.given)
            .map(|(part, one)| {
                if part.kind == Kind::Custom {
                    return Ok(Input::Object(value.into()));
                }
                let read = match one.field {
                    None => value,
                    Some(_) if value.is_nil() => value,
                    Some(field) => {
                        let field = ruby.get_inner(field);
                        let read = match plain_hash(ruby, value) {
                            Some(hash) => hash.aref(field)?,
                            None => value.funcall("[]", (field,))?,
                        };
                        keep.push(ruby, read)?;
                        read
                    }
                };
                Ok(input_of(ruby, read))
            })
            .collect()
    }

    /// A window's (or session's) result: the one aggregator's value, or a
    /// Hash of them by name. The window has left the tracker by now, so no
    /// name's `hash` or `eql?` may run here: raising, it would lose the
    /// window. Names a Hash finds without Ruby code go in directly; others
    /// are copied with the template, which `transform_values` does without
    /// hashing them again.
    pub fn result(&self, ruby: &Ruby, accs: &Accumulators<Held>) -> Result<Value, Error> {
        let Some(names) = &self.names else {
            return accs
                .first()
                .map_or(Ok(ruby.qnil().as_value()), |acc| acc_value(ruby, acc));
        };
        if let Some(template) = self.template {
            let values = ruby.ary_new_capa(accs.len());
            for acc in accs {
                values.push(acc_value(ruby, acc)?)?;
            }
            return ruby
                .class_object()
                .const_get::<_, RModule>("WindowMachines")?
                .const_get::<_, RModule>("Aggregate")?
                .funcall("named_results", (ruby.get_inner(template), values));
        }
        let hash = ruby.hash_new();
        for (name, acc) in names.iter().zip(accs) {
            hash.aset(ruby.get_inner(*name), acc_value(ruby, acc)?)?;
        }
        Ok(hash.as_value())
    }

    /// The Ruby side of the core's steps, for this aggregation.
    pub fn ops<'a>(&'a self, ruby: &'a Ruby, keep: &'a mut Keep) -> RubyOps<'a> {
        RubyOps {
            ruby,
            given: &self.given,
            keep,
        }
    }
}

/// How many of an aggregation's objects [`OnStack`] holds.
const ON_STACK: usize = 8;

/// Objects pinned by being on the machine stack until dropped.
pub struct OnStack([Value; ON_STACK]);

impl Drop for OnStack {
    fn drop(&mut self) {
        // Keeps the array in memory, on the stack, until here.
        std::hint::black_box(&self.0);
    }
}

/// How Rust sees a Ruby value given to an aggregator.
pub fn input_of(ruby: &Ruby, value: Value) -> Input<Held> {
    let raw = value.as_raw();
    if value.is_nil() {
        return Input::Nil;
    }
    if FIXNUM_P(raw) {
        // SAFETY: raw was just checked to be a Fixnum.
        return Input::Int(unsafe { FIX2LONG(raw) });
    }
    if let Some(float) = Float::from_value(value) {
        return Input::Float(float.to_f64());
    }
    if value.is_kind_of(ruby.class_numeric()) {
        return Input::Numeric(value.into());
    }
    Input::Object(value.into())
}

pub fn input_value(ruby: &Ruby, input: &Input<Held>) -> Value {
    match input {
        Input::Nil => ruby.qnil().as_value(),
        Input::Int(int) => ruby.integer_from_i64(*int).as_value(),
        Input::Float(float) => ruby.float_from_f64(*float).as_value(),
        Input::Numeric(value) | Input::Object(value) => ruby.get_inner(*value),
    }
}

pub fn number_value(ruby: &Ruby, number: &Number<Held>) -> Result<Value, Error> {
    match number {
        Number::Int(int) => Ok(ruby.integer_from_i64(*int).as_value()),
        Number::Float(float) => Ok(ruby.float_from_f64(*float).as_value()),
        Number::Host(value) => Ok(ruby.get_inner(*value)),
    }
}

pub fn number_of(ruby: &Ruby, value: Value) -> Number<Held> {
    match input_of(ruby, value) {
        Input::Int(int) => Number::Int(int),
        Input::Float(float) => Number::Float(float),
        _ => Number::Host(value.into()),
    }
}

fn stamped_value(ruby: &Ruby, held: Option<&Stamped<Held>>) -> Value {
    held.map_or(ruby.qnil().as_value(), |held| {
        input_value(ruby, &held.input)
    })
}

pub fn acc_value(ruby: &Ruby, acc: &Accumulator<Held>) -> Result<Value, Error> {
    Ok(match acc {
        Accumulator::Count(count) => ruby.integer_from_u64(*count).as_value(),
        Accumulator::Sum(sum) => number_value(ruby, sum)?,
        Accumulator::Min(held) | Accumulator::Max(held) => held
            .as_ref()
            .map_or(ruby.qnil().as_value(), |held| input_value(ruby, held)),
        Accumulator::Mean { count: 0, .. } => ruby.qnil().as_value(),
        Accumulator::Mean { sum, count } => {
            number_value(ruby, sum)?.funcall("fdiv", (ruby.integer_from_u64(*count),))?
        }
        Accumulator::Collect(inputs) => {
            // Pushed as made: a new Integer or Float kept only in Rust
            // memory could be freed or moved.
            let values = ruby.ary_new_capa(inputs.len());
            for held in in_time_order(inputs).iter() {
                values.push(input_value(ruby, &held.input))?;
            }
            values.as_value()
        }
        Accumulator::First(held) | Accumulator::Last(held) => stamped_value(ruby, held.as_ref()),
        Accumulator::Custom(acc) => ruby.get_inner(*acc),
    })
}

/// Where Ruby is called for the core: big or foreign numbers, comparisons
/// Rust cannot make, custom aggregators. Each object it makes is kept.
pub struct RubyOps<'a> {
    ruby: &'a Ruby,
    given: &'a [Given],
    keep: &'a mut Keep,
}

impl RubyOps<'_> {
    fn custom(&self, part: usize) -> Result<Value, Error> {
        self.given
            .get(part)
            .map(|one| self.ruby.get_inner(one.object))
            .ok_or_else(|| invalid_argument(self.ruby, format!("no aggregator {part}")))
    }

    fn kept(&mut self, value: Value) -> Result<Held, Error> {
        self.keep.push(self.ruby, value)?;
        Ok(value.into())
    }
}

impl Ops<Held> for RubyOps<'_> {
    type Error = Error;

    fn add(&mut self, a: Number<Held>, b: Number<Held>) -> Result<Number<Held>, Error> {
        let (a, b) = (number_value(self.ruby, &a)?, number_value(self.ruby, &b)?);
        let sum: Value = a.funcall("+", (b,))?;
        self.keep.push(self.ruby, sum)?;
        Ok(number_of(self.ruby, sum))
    }

    fn compare(&mut self, a: &Input<Held>, b: &Input<Held>) -> Result<Ordering, Error> {
        let (a, b) = (input_value(self.ruby, a), input_value(self.ruby, b));
        let order: Value = a.funcall("<=>", (b,))?;
        match Integer::from_value(order).map(|order| order.to_i64()) {
            Some(Ok(order)) => Ok(order.cmp(&0)),
            _ => Err(Error::new(
                self.ruby.exception_arg_error(),
                format!("comparison of {} with {} failed", a.class(), shown(b)),
            )),
        }
    }

    fn initial(&mut self, part: usize) -> Result<Held, Error> {
        let acc: Value = self.custom(part)?.funcall("initial", ())?;
        self.kept(acc)
    }

    fn add_custom(&mut self, part: usize, acc: &Held, value: &Input<Held>) -> Result<Held, Error> {
        let value = input_value(self.ruby, value);
        let acc: Value = self
            .custom(part)?
            .funcall("add", (self.ruby.get_inner(*acc), value))?;
        self.kept(acc)
    }

    fn merge_custom(&mut self, part: usize, a: &Held, b: &Held) -> Result<Held, Error> {
        let acc: Value = self
            .custom(part)?
            .funcall("merge", (self.ruby.get_inner(*a), self.ruby.get_inner(*b)))?;
        self.kept(acc)
    }

    fn check_mean(&mut self, sum: &Held) -> Result<(), Error> {
        // What handing the mean over does, with the count at 1. A Complex
        // divides without raising, into a Complex, which is no Float mean.
        let sum = self.ruby.get_inner(*sum);
        let mean: Value = sum.funcall("fdiv", (1,))?;
        if Float::from_value(mean).is_none() {
            // SAFETY: the class name is copied out before Ruby runs again.
            let class = unsafe { mean.classname() }.into_owned();
            return Err(Error::new(
                self.ruby.exception_type_error(),
                format!("Mean averages into a Float, and this input's mean would be a {class}"),
            ));
        }
        Ok(())
    }
}

/// `value` if it is a Hash whose `[]` is Hash's own, so that reading its
/// table is what `value[field]` does: a subclass's `[]`, a singleton's,
/// or one a module prepended to Hash (HashWithIndifferentAccess, an
/// indifferent-access patch) must be called instead.
fn plain_hash(ruby: &Ruby, value: Value) -> Option<RHash> {
    static AREF: LazyId = LazyId::new("[]");
    let hash = RHash::from_value(value)?;
    let class = ruby.class_hash().as_raw();
    if value.class().as_raw() != class {
        return None;
    }
    let aref = LazyId::get_inner_with(&AREF, ruby).as_raw();
    // SAFETY: Hash is a class and `[]` an interned name; the call looks the
    // method up without running Ruby code.
    let basic = unsafe { rb_sys::rb_method_basic_definition_p(class, aref) };
    (basic != 0).then_some(hash)
}

/// A core refusal as the Ruby error.
pub fn refusal(ruby: &Ruby, refusal: Refusal<Error>) -> Error {
    match refusal {
        Refusal::Host(error) => error,
        Refusal::NotNumeric { kind } => wrong_type(
            ruby,
            format!("{} takes Numeric values (or nil)", kind.name()),
        ),
    }
}
