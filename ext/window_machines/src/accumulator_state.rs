//! Accumulators in checkpoints: each aggregator's state as plain Ruby
//! values (`to_h`, checked to come back from JSON unchanged) or any object
//! (`marshal_dump`), and read back as untrusted input.

use magnus::{prelude::*, Error, Float, RArray, Ruby, Value};
use window_machines_core::{in_time_order, Accumulator, Accumulators, Kind, Number, Stamped};

use crate::aggregation::{
    acc_value, input_of, input_value, number_of, number_value, Held, RubyAggregation,
};
use crate::convert::entry;
use crate::errors::{shown, wrong_type};

/// How a checkpoint writes accumulators.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// What JSON carries back exactly (`to_h`).
    Json,
    /// Anything (`marshal_dump`: Marshal decides what it can carry).
    Any,
}

impl RubyAggregation {
    /// The accumulators of one window as a checkpoint holds them: one
    /// aggregator's state, or an Array of them in the order given.
    pub fn state(
        &self,
        ruby: &Ruby,
        accs: &Accumulators<Held>,
        form: Form,
    ) -> Result<Value, Error> {
        if let (false, [one]) = (self.is_named(), accs.as_slice()) {
            return acc_state(ruby, one, form);
        }
        // Each state goes into the Array as soon as it is made: a new
        // object kept only in Rust memory could be freed or moved.
        let states = ruby.ary_new_capa(accs.len());
        for acc in accs {
            states.push(acc_state(ruby, acc, form)?)?;
        }
        Ok(states.as_value())
    }

    /// Reads back what [`RubyAggregation::state`] wrote, as untrusted input:
    /// the shapes here, the rest by the core.
    pub fn read_state(&self, ruby: &Ruby, state: Value) -> Result<Accumulators<Held>, Error> {
        let parts = self.core().parts();
        if !self.is_named() {
            return parts
                .iter()
                .map(|part| acc_from_state(ruby, part.kind, state))
                .collect();
        }
        let array = RArray::from_value(state)
            .filter(|array| array.len() == parts.len())
            .ok_or_else(|| bad_state(ruby, "an Array with one state per aggregator", state))?;
        parts
            .iter()
            .enumerate()
            .map(|(index, part)| acc_from_state(ruby, part.kind, entry(ruby, array, index)?))
            .collect()
    }
}

fn bad_state(ruby: &Ruby, expected: &str, got: Value) -> Error {
    wrong_type(
        ruby,
        format!(
            "an aggregate in the checkpoint must be {expected}, got {}",
            shown(got)
        ),
    )
}

/// `value` if JSON carries it back exactly (finite Floats included).
fn json_checked(ruby: &Ruby, value: Value, form: Form) -> Result<Value, Error> {
    if form == Form::Any {
        return Ok(value);
    }
    if Float::from_value(value).is_some_and(|float| float.to_f64().is_finite()) {
        return Ok(value);
    }
    match crate::hash_key::json_problem(ruby, value) {
        None => Ok(value),
        Some(problem) => Err(wrong_type(
            ruby,
            format!(
                "an aggregate holds {}, which has no exact JSON form ({problem}); use Marshal",
                shown(value)
            ),
        )),
    }
}

fn stamped_state(ruby: &Ruby, held: &Stamped<Held>, form: Form) -> Result<Value, Error> {
    let value = json_checked(ruby, input_value(ruby, &held.input), form)?;
    Ok(ruby
        .ary_new_from_values(&[ruby.integer_from_u64(held.timestamp).as_value(), value])
        .as_value())
}

fn acc_state(ruby: &Ruby, acc: &Accumulator<Held>, form: Form) -> Result<Value, Error> {
    let nil = ruby.qnil().as_value();
    Ok(match acc {
        Accumulator::Mean { sum, count } => {
            let sum = json_checked(ruby, number_value(ruby, sum)?, form)?;
            ruby.ary_new_from_values(&[sum, ruby.integer_from_u64(*count).as_value()])
                .as_value()
        }
        Accumulator::Collect(inputs) => {
            let states = ruby.ary_new_capa(inputs.len());
            for held in in_time_order(inputs).iter() {
                states.push(stamped_state(ruby, held, form)?)?;
            }
            states.as_value()
        }
        Accumulator::First(held) | Accumulator::Last(held) => match held {
            Some(held) => stamped_state(ruby, held, form)?,
            None => nil,
        },
        Accumulator::Custom(_) if form == Form::Json => {
            return Err(wrong_type(
                ruby,
                "a custom aggregator's accumulator has no JSON form; use Marshal".into(),
            ))
        }
        other => json_checked(ruby, acc_value(ruby, other)?, form)?,
    })
}

fn stamped_from(ruby: &Ruby, state: Value) -> Result<Stamped<Held>, Error> {
    let pair = RArray::from_value(state)
        .filter(|pair| pair.len() == 2)
        .ok_or_else(|| bad_state(ruby, "[timestamp, value]", state))?;
    let timestamp = crate::convert::to_u64(ruby, "an aggregate's timestamp", pair.entry(0)?)?;
    Ok(Stamped {
        timestamp,
        input: input_of(ruby, pair.entry(1)?),
    })
}

fn number_from(ruby: &Ruby, state: Value) -> Result<Number<Held>, Error> {
    if !state.is_kind_of(ruby.class_numeric()) {
        return Err(bad_state(ruby, "a Numeric", state));
    }
    Ok(number_of(ruby, state))
}

fn acc_from_state(ruby: &Ruby, kind: Kind, state: Value) -> Result<Accumulator<Held>, Error> {
    let optional_input = |state: Value| {
        if state.is_nil() {
            None
        } else {
            Some(input_of(ruby, state))
        }
    };
    let optional_stamped = |state: Value| -> Result<Option<Stamped<Held>>, Error> {
        if state.is_nil() {
            Ok(None)
        } else {
            stamped_from(ruby, state).map(Some)
        }
    };
    Ok(match kind {
        Kind::Count => Accumulator::Count(crate::convert::to_u64(ruby, "a count", state)?),
        Kind::Sum => Accumulator::Sum(number_from(ruby, state)?),
        Kind::Min => Accumulator::Min(optional_input(state)),
        Kind::Max => Accumulator::Max(optional_input(state)),
        Kind::Mean => {
            let pair = RArray::from_value(state)
                .filter(|pair| pair.len() == 2)
                .ok_or_else(|| bad_state(ruby, "[sum, count]", state))?;
            Accumulator::Mean {
                sum: number_from(ruby, pair.entry(0)?)?,
                count: crate::convert::to_u64(ruby, "a mean's count", pair.entry(1)?)?,
            }
        }
        Kind::Collect => {
            let array = RArray::from_value(state)
                .ok_or_else(|| bad_state(ruby, "an Array of [timestamp, value]", state))?;
            Accumulator::Collect(
                (0..array.len())
                    .map(|index| stamped_from(ruby, entry(ruby, array, index)?))
                    .collect::<Result<_, _>>()?,
            )
        }
        Kind::First => Accumulator::First(optional_stamped(state)?),
        Kind::Last => Accumulator::Last(optional_stamped(state)?),
        Kind::Custom => Accumulator::Custom(state.into()),
    })
}
