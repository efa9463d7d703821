//! The values aggregators read from files, what Rust cannot hold in the
//! core's small numbers (Integers past 64 bits, text), and how results are
//! written.

use std::cmp::Ordering;
use std::io::Write;

use window_machines_core::{
    compare_int_float, in_time_order, Accumulator, Input, Number, Ops, Stamped,
};

use crate::json_fields::write_string;

/// What the core holds for the host: an exact Integer past 64 bits, or any
/// other value as its JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Boxed, so a value (and an accumulator holding one) stays small.
    Big(Box<i128>),
    Json(Box<[u8]>),
}

/// An Integer of up to 18 digits (most of what files hold) as JSON writes
/// it, read in one pass; `None` for anything else.
fn small_integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let leading_zero = digits.len() > 1 && digits.first() == Some(&b'0');
    if digits.is_empty() || digits.len() > 18 || leading_zero {
        return None;
    }
    let mut value = 0_i64;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(digit - b'0');
    }
    Some(if negative { -value } else { value })
}

/// Whether `text` is a number as JSON writes one.
#[must_use]
pub fn is_number(text: &[u8]) -> bool {
    let mut at = usize::from(text.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while text.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    let leading_zero = text.get(at) == Some(&b'0');
    let whole = digits(&mut at);
    if whole == 0 || (leading_zero && whole > 1) {
        return false;
    }
    if text.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return false;
        }
    }
    if matches!(text.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(text.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return false;
        }
    }
    at == text.len()
}

/// A JSON value to pass on as it was written (`first`, `last`, `collect`):
/// an Integer whose digits are the ones it writes (most of what files
/// hold) as that Integer, kept without allocating; anything else as its
/// text. Each event's value boxed cost those aggregators an allocation and
/// a free, and another for every copy.
#[must_use]
pub fn written_input(text: &[u8]) -> Input<Value> {
    match small_integer(text) {
        // `-0` would come back as `0`.
        Some(int) if text != b"-0" => Input::Int(int),
        _ => Input::Object(Value::Json(text.into())),
    }
}

/// The input a number written as `text` gives: exact for Integers, a
/// Float otherwise. `None` unless `text` is a JSON number.
#[must_use]
pub fn number_input(text: &[u8]) -> Option<Input<Value>> {
    if let Some(int) = small_integer(text) {
        return Some(Input::Int(int));
    }
    if !is_number(text) {
        return None;
    }
    // A JSON number is ASCII.
    let text = std::str::from_utf8(text).ok()?;
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(int) = text.parse::<i64>() {
            return Some(Input::Int(int));
        }
        if let Ok(big) = text.parse::<i128>() {
            return Some(Input::Numeric(Value::Big(Box::new(big))));
        }
    }
    text.parse::<f64>().ok().map(Input::Float)
}

fn as_int(number: &Number<Value>) -> Option<i128> {
    match number {
        Number::Int(int) => Some(i128::from(*int)),
        Number::Host(Value::Big(big)) => Some(**big),
        _ => None,
    }
}

#[allow(clippy::cast_precision_loss)]
fn as_float(number: &Number<Value>) -> Option<f64> {
    match number {
        Number::Int(int) => Some(*int as f64),
        Number::Float(float) => Some(*float),
        Number::Host(Value::Big(big)) => Some(**big as f64),
        Number::Host(Value::Json(_)) => None,
    }
}

fn number_of(input: &Input<Value>) -> Option<Number<Value>> {
    match input {
        Input::Int(int) => Some(Number::Int(*int)),
        Input::Float(float) => Some(Number::Float(*float)),
        Input::Numeric(big @ Value::Big(_)) => Some(Number::Host(big.clone())),
        _ => None,
    }
}

fn exact(sum: i128) -> Number<Value> {
    i64::try_from(sum).map_or_else(|_| Number::Host(Value::Big(Box::new(sum))), Number::Int)
}

/// The host's side of the built-in aggregators: Integers past 64 bits, and
/// comparing them. Custom aggregators do not exist here.
pub struct FileOps;

impl Ops<Value> for FileOps {
    type Error = String;

    fn add(&mut self, a: Number<Value>, b: Number<Value>) -> Result<Number<Value>, String> {
        if let (Some(a), Some(b)) = (as_int(&a), as_int(&b)) {
            if let Some(sum) = a.checked_add(b) {
                return Ok(exact(sum));
            }
        }
        match (as_float(&a), as_float(&b)) {
            (Some(a), Some(b)) => Ok(Number::Float(a + b)),
            _ => Err("a sum of something that is not a number".to_owned()),
        }
    }

    fn compare(&mut self, a: &Input<Value>, b: &Input<Value>) -> Result<Ordering, String> {
        let (Some(a), Some(b)) = (number_of(a), number_of(b)) else {
            return Err("a comparison of something that is not a number".to_owned());
        };
        // Exactly, as Ruby compares them: an Integer past 53 bits and a
        // Float may differ where both round to one f64.
        let order = match (as_int(&a), as_int(&b), &a, &b) {
            (Some(a), Some(b), ..) => Some(a.cmp(&b)),
            (Some(int), None, _, Number::Float(float)) => compare_int_float(int, *float),
            (None, Some(int), Number::Float(float), _) => {
                compare_int_float(int, *float).map(Ordering::reverse)
            }
            _ => as_float(&a)
                .zip(as_float(&b))
                .and_then(|(a, b)| a.partial_cmp(&b)),
        };
        order.ok_or_else(|| "numbers that do not compare".to_owned())
    }

    fn initial(&mut self, _part: usize) -> Result<Value, String> {
        Err("no custom aggregators".to_owned())
    }

    fn add_custom(&mut self, _: usize, _: &Value, _: &Input<Value>) -> Result<Value, String> {
        Err("no custom aggregators".to_owned())
    }

    fn merge_custom(&mut self, _: usize, _: &Value, _: &Value) -> Result<Value, String> {
        Err("no custom aggregators".to_owned())
    }
}

/// Writes an Integer's digits, with no String in between (writing into a
/// Vec cannot fail).
fn write_display(number: impl std::fmt::Display, out: &mut Vec<u8>) {
    write!(out, "{number}").unwrap_or(());
}

/// "00" to "99", so digits are written two at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes `number`'s digits without the formatting machinery: counts,
/// sums and epoch times are most of what the command writes.
pub fn write_u64(mut number: u64, out: &mut Vec<u8>) {
    let mut digits = [0_u8; 20];
    let mut at = digits.len();
    let mut put_pair = |pair: u64, at: &mut usize| {
        // Below 100: a pair of DIGIT_PAIRS.
        let from = usize::try_from(pair).unwrap_or(0) * 2;
        *at -= 2;
        digits[*at..*at + 2].copy_from_slice(&DIGIT_PAIRS[from..from + 2]);
    };
    while number >= 100 {
        put_pair(number % 100, &mut at);
        number /= 100;
    }
    if number >= 10 {
        put_pair(number, &mut at);
    } else {
        at -= 1;
        // Below 10.
        digits[at] = b'0' + u8::try_from(number).unwrap_or(0);
    }
    out.extend_from_slice(&digits[at..]);
}

fn write_i64(number: i64, out: &mut Vec<u8>) {
    if number < 0 {
        out.push(b'-');
    }
    write_u64(number.unsigned_abs(), out);
}

/// A finite float as JSON, always with a point or an exponent so it reads
/// back as a float; JSON has no NaN or infinity.
fn write_float(float: f64, out: &mut Vec<u8>) {
    if float.is_finite() {
        // Debug prints the shortest text that reads back exactly, with
        // ".0" on whole numbers.
        write!(out, "{float:?}").unwrap_or(());
    } else {
        out.extend_from_slice(b"null");
    }
}

fn write_number(number: &Number<Value>, out: &mut Vec<u8>) {
    match number {
        Number::Int(int) => write_i64(*int, out),
        Number::Float(float) => write_float(*float, out),
        Number::Host(value) => write_value(value, out),
    }
}

fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Big(big) => write_display(big, out),
        Value::Json(json) => out.extend_from_slice(json),
    }
}

fn write_input(input: &Input<Value>, out: &mut Vec<u8>) {
    match input {
        Input::Nil => out.extend_from_slice(b"null"),
        Input::Int(int) => write_i64(*int, out),
        Input::Float(float) => write_float(*float, out),
        Input::Numeric(value) | Input::Object(value) => write_value(value, out),
    }
}

fn write_stamped(stamped: Option<&Stamped<Value>>, out: &mut Vec<u8>) {
    match stamped {
        Some(stamped) => write_input(&stamped.input, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// `sum / count` as Ruby's `fdiv` gives it: an Integer sum divided
/// exactly, then rounded once; `None` with no count.
fn mean(sum: &Number<Value>, count: u64) -> Option<f64> {
    if count == 0 {
        return None;
    }
    match as_int(sum) {
        Some(int) => Some(exact_quotient(int, count)),
        #[allow(clippy::cast_precision_loss)]
        None => as_float(sum).map(|sum| sum / count as f64),
    }
}

/// `int / count`, rounded once to the nearest f64. The quotient is worked
/// out bit by bit until it holds at least 55 bits, the rest of the
/// division kept as a sticky low bit, so converting it rounds as the
/// exact quotient would.
fn exact_quotient(int: i128, count: u64) -> f64 {
    let divisor = u128::from(count);
    let mut quotient = int.unsigned_abs() / divisor;
    let mut remainder = int.unsigned_abs() % divisor;
    let mut exponent = 0_i32;
    while quotient < 1 << 55 && (quotient != 0 || remainder != 0) {
        // remainder < divisor <= 2**64, so doubling it cannot overflow.
        remainder <<= 1;
        quotient <<= 1;
        if remainder >= divisor {
            remainder -= divisor;
            quotient |= 1;
        }
        exponent -= 1;
    }
    let sticky = u128::from(remainder != 0);
    #[allow(clippy::cast_precision_loss)]
    let magnitude = (quotient | sticky) as f64 * 2_f64.powi(exponent);
    if int < 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// An aggregator's result as JSON.
pub fn write_result(acc: &Accumulator<Value>, out: &mut Vec<u8>) {
    match acc {
        Accumulator::Count(count) => write_u64(*count, out),
        Accumulator::Sum(sum) => write_number(sum, out),
        Accumulator::Min(extreme) | Accumulator::Max(extreme) => match extreme {
            Some(input) => write_input(input, out),
            None => out.extend_from_slice(b"null"),
        },
        Accumulator::Mean { sum, count } => match mean(sum, *count) {
            Some(mean) => write_float(mean, out),
            None => out.extend_from_slice(b"null"),
        },
        Accumulator::Collect(inputs) => {
            out.push(b'[');
            for (index, stamped) in in_time_order(inputs).iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_input(&stamped.input, out);
            }
            out.push(b']');
        }
        Accumulator::First(stamped) | Accumulator::Last(stamped) => {
            write_stamped(stamped.as_ref(), out);
        }
        Accumulator::Custom(value) => write_value(value, out),
    }
}

/// A text cell as the JSON value a file's reader keeps for it.
#[must_use]
pub fn json_of_text(text: &[u8]) -> Value {
    let mut out = Vec::with_capacity(text.len() + 2);
    write_string(text, &mut out);
    Value::Json(out.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_integers_read_as_the_general_path_reads_them() {
        let cases: [&[u8]; 14] = [
            b"0",
            b"-0",
            b"7",
            b"-7",
            b"10",
            b"01",
            b"-01",
            b"999999999999999999",
            b"-999999999999999999",
            b"1234567890123456789",
            b"1.5",
            b"1e3",
            b"-",
            b"",
        ];
        for text in cases {
            let general = is_number(text)
                .then(|| std::str::from_utf8(text).ok()?.parse::<i64>().ok())
                .flatten();
            assert_eq!(small_integer(text).or(general), general, "{text:?}");
        }
        assert_eq!(
            small_integer(b"-999999999999999999"),
            Some(-999_999_999_999_999_999)
        );
    }

    #[test]
    fn values_passed_on_keep_their_text_whether_held_as_integers_or_not() {
        for text in [
            &b"0"[..],
            b"-0",
            b"7",
            b"-7",
            b"999999999999999999",
            b"1234567890123456789",
            b"1.50",
            b"1e3",
            b"\"5\"",
            b"true",
            b"[1]",
        ] {
            match written_input(text) {
                Input::Int(int) => assert_eq!(int.to_string().as_bytes(), text),
                Input::Object(Value::Json(json)) => {
                    assert_eq!(&*json, text);
                    assert!(small_integer(text).is_none() || text == b"-0", "{text:?}");
                }
                other => panic!("{text:?} became {other:?}"),
            }
        }
    }

    #[test]
    fn integers_are_written_as_display_writes_them() {
        let cases = [0, 1, -1, 9, 10, 99, 1_000, i64::MAX, i64::MIN, -(1 << 53)];
        for number in cases {
            let mut out = Vec::new();
            write_i64(number, &mut out);
            assert_eq!(out, number.to_string().into_bytes());
        }
        // Every length, with zeros where digits are taken in pairs.
        let mut power: u64 = 1;
        for _ in 0..20 {
            for number in [
                power - 1,
                power,
                power + 1,
                power.saturating_mul(7).saturating_add(5),
            ] {
                let mut out = Vec::new();
                write_u64(number, &mut out);
                assert_eq!(out, number.to_string().into_bytes());
            }
            power = power.saturating_mul(10);
        }
        let mut out = Vec::new();
        write_u64(u64::MAX, &mut out);
        assert_eq!(out, u64::MAX.to_string().into_bytes());
    }

    #[test]
    fn a_mean_divides_the_exact_sum_and_rounds_once() {
        // Each expected value is Ruby's Integer#fdiv of the same numbers.
        let cases: [(i128, u64, f64); 6] = [
            (752_495_136_207_658_932, 3, 2.508_317_120_692_196_5e17),
            (-752_495_136_207_658_932, 3, -2.508_317_120_692_196_5e17),
            (i128::MAX, 7, 2.430_588_335_149_560_3e37),
            (1, 3, 0.333_333_333_333_333_3),
            (18_014_398_509_481_985, 2, 9.007_199_254_740_992e15),
            (0, 5, 0.0),
        ];
        for (sum, count, expected) in cases {
            assert_eq!(
                mean(&Number::Host(Value::Big(Box::new(sum))), count),
                Some(expected),
                "{sum} / {count}"
            );
        }
        assert_eq!(mean(&Number::Int(7), 0), None);
    }

    #[test]
    fn extremes_compare_wide_integers_and_floats_exactly() {
        let two_pow_64 = Input::Float(18_446_744_073_709_551_616.0);
        let above = Input::Numeric(Value::Big(Box::new((1 << 64) + 1)));
        assert_eq!(FileOps.compare(&above, &two_pow_64), Ok(Ordering::Greater));
        assert_eq!(FileOps.compare(&two_pow_64, &above), Ok(Ordering::Less));
        let below = Input::Numeric(Value::Big(Box::new(-(1 << 63) - 1)));
        assert_eq!(
            FileOps.compare(&below, &Input::Float(-9_223_372_036_854_775_808.0)),
            Ok(Ordering::Less)
        );
    }

    #[test]
    fn numbers_are_exact_where_they_can_be() {
        assert_eq!(number_input(b"42"), Some(Input::Int(42)));
        assert_eq!(
            number_input(b"-170141183460469231731687303715884105728"),
            Some(Input::Numeric(Value::Big(Box::new(i128::MIN))))
        );
        assert_eq!(number_input(b"1.5e2"), Some(Input::Float(150.0)));
        assert_eq!(number_input(b"1e999"), Some(Input::Float(f64::INFINITY)));
        for text in ["", "-", "01", "1.", ".5", "+1", "1e", "nan", "inf", "0x10"] {
            assert_eq!(number_input(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn sums_past_64_bits_stay_exact() {
        let sum = FileOps
            .add(Number::Int(i64::MAX), Number::Int(i64::MAX))
            .unwrap();
        let mut out = Vec::new();
        write_number(&sum, &mut out);
        assert_eq!(out, b"18446744073709551614");
        let back = FileOps.add(sum, Number::Int(-i64::MAX)).unwrap();
        assert_eq!(back, Number::Int(i64::MAX));
    }

    #[test]
    fn floats_read_back_as_floats() {
        let mut out = Vec::new();
        write_float(12.0, &mut out);
        out.push(b' ');
        write_float(0.1 + 0.2, &mut out);
        out.push(b' ');
        write_float(f64::NAN, &mut out);
        assert_eq!(out, b"12.0 0.30000000000000004 null");
    }
}
