//! Event times as they appear in files: epoch numbers in a unit, or ISO
//! 8601 / RFC 3339 text, read into ticks (the unit's; nanoseconds for epoch
//! seconds, which may have a fraction, and for ISO) and written back in the
//! same form.

use std::io::Write;

use crate::values::write_u64;

/// How the time field is written, and so what a tick is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// Whole or with up to nine decimal places; held as nanoseconds.
    Seconds,
    Millis,
    Micros,
    Nanos,
    /// Text; held as nanoseconds since 1970-01-01T00:00:00Z.
    Iso,
    /// A time of day (`14:01`, `14:01:30.5`), for a single day's log; held
    /// as nanoseconds since midnight.
    Clock,
}

const NANOS_PER_SECOND: u64 = 1_000_000_000;

impl TimeFormat {
    /// The name a checkpoint and the options use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TimeFormat::Seconds => "s",
            TimeFormat::Millis => "ms",
            TimeFormat::Micros => "us",
            TimeFormat::Nanos => "ns",
            TimeFormat::Iso => "iso",
            TimeFormat::Clock => "clock",
        }
    }

    #[must_use]
    pub fn named(name: &str) -> Option<TimeFormat> {
        [
            TimeFormat::Seconds,
            TimeFormat::Millis,
            TimeFormat::Micros,
            TimeFormat::Nanos,
            TimeFormat::Iso,
            TimeFormat::Clock,
        ]
        .into_iter()
        .find(|format| format.name() == name)
    }

    /// Nanoseconds in one tick.
    #[must_use]
    pub fn tick_nanos(self) -> u64 {
        match self {
            TimeFormat::Millis => 1_000_000,
            TimeFormat::Micros => 1_000,
            TimeFormat::Seconds | TimeFormat::Nanos | TimeFormat::Iso | TimeFormat::Clock => 1,
        }
    }

    /// Ticks in one unit of the time field as written, the unit of a bare
    /// number on the command line: a second of epoch seconds, a tick of
    /// the others.
    #[must_use]
    pub fn ticks_per_unit(self) -> u64 {
        match self {
            TimeFormat::Seconds => NANOS_PER_SECOND,
            _ => 1,
        }
    }

    /// Says what unit a time written as `text` (a JSON number, or the inside
    /// of a string) is in, as the first event's time decides it: text that
    /// is not digits (with a fraction or not) is a time of day when it
    /// starts like one (`14:01`), ISO otherwise; epoch values are told apart
    /// by the magnitude of their whole part. A JSON `number` is always an
    /// epoch value (so that `1e3` is refused as not written in digits, not
    /// as not ISO).
    #[must_use]
    pub fn detect(text: &[u8], number: bool) -> TimeFormat {
        if number {
            let whole = text
                .iter()
                .take_while(|byte| byte.is_ascii_digit() || **byte == b'-');
            let digits: Vec<u8> = whole.copied().filter(u8::is_ascii_digit).collect();
            return TimeFormat::by_magnitude(&digits);
        }
        let colon = text.iter().position(|&byte| byte == b':');
        if matches!(colon, Some(1 | 2)) && text[..colon.unwrap_or(0)].iter().all(u8::is_ascii_digit)
        {
            return TimeFormat::Clock;
        }
        // A minus sign reads as an epoch value's (so that a time before 1970
        // is refused as such).
        match split_decimal(text.strip_prefix(b"-").unwrap_or(text)) {
            Some((whole, _)) => TimeFormat::by_magnitude(whole),
            None => TimeFormat::Iso,
        }
    }

    /// The epoch unit of a number with these whole digits.
    fn by_magnitude(digits: &[u8]) -> TimeFormat {
        let digits = digits.iter().skip_while(|&&digit| digit == b'0').count();
        match digits {
            0..=11 => TimeFormat::Seconds,
            12..=14 => TimeFormat::Millis,
            15..=17 => TimeFormat::Micros,
            _ => TimeFormat::Nanos,
        }
    }

    /// Reads a time: for epoch seconds a number of them with at most nine
    /// decimal places, for the other epoch formats a whole number of ticks,
    /// for ISO a timestamp with an offset.
    pub fn parse(self, text: &[u8]) -> Result<u64, String> {
        match self {
            TimeFormat::Iso => parse_iso(text),
            TimeFormat::Clock => parse_clock(text),
            TimeFormat::Seconds => parse_seconds(text),
            _ => parse_ticks(text, self.unit_name()),
        }
    }

    /// Writes `ticks` as the input wrote it: a JSON number for epoch
    /// formats, a quoted string for ISO when `quoted`.
    pub fn write(self, ticks: u64, quoted: bool, out: &mut Vec<u8>) {
        match self {
            TimeFormat::Iso | TimeFormat::Clock => {
                if quoted {
                    out.push(b'"');
                }
                if self == TimeFormat::Iso {
                    write_iso(ticks, out);
                } else {
                    write_clock(ticks, out);
                }
                if quoted {
                    out.push(b'"');
                }
            }
            TimeFormat::Seconds => write_seconds(ticks, out),
            _ => write_u64(ticks, out),
        }
    }

    /// The unit the time field is written in, for messages.
    #[must_use]
    pub fn unit_name(self) -> &'static str {
        match self {
            TimeFormat::Seconds => "seconds",
            _ => self.tick_name(),
        }
    }

    /// What one tick is, for messages.
    #[must_use]
    pub fn tick_name(self) -> &'static str {
        match self {
            TimeFormat::Millis => "milliseconds",
            TimeFormat::Micros => "microseconds",
            TimeFormat::Seconds | TimeFormat::Nanos | TimeFormat::Iso | TimeFormat::Clock => {
                "nanoseconds"
            }
        }
    }
}

/// A time as messages show it; made only when a message is.
struct Shown<'a>(&'a [u8]);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.0))
    }
}

/// `text` without a minus sign that only makes a zero negative (-0 is 0,
/// as JSON.parse reads it); refused when the minus makes it below 0.
fn unsigned<'a>(text: &'a [u8], shown: &Shown, unit: &str) -> Result<&'a [u8], String> {
    let Some(number) = text.strip_prefix(b"-") else {
        return Ok(text);
    };
    match split_decimal(number) {
        Some((whole, fraction)) if whole.iter().chain(fraction).all(|digit| *digit == b'0') => {
            Ok(number)
        }
        Some(_) => Err(format!("time {shown} is before 1970 (below 0 {unit})")),
        None => Ok(text),
    }
}

/// Digits, and the digits after a decimal point if there is one; `None`
/// unless `text` is written that way (`12`, `12.5`; not `12.`, `.5`, `1e3`).
fn split_decimal(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let is_digits = |part: &[u8]| !part.is_empty() && part.iter().all(u8::is_ascii_digit);
    let (whole, fraction) = match text.iter().position(|&byte| byte == b'.') {
        Some(point) => (&text[..point], Some(&text[point + 1..])),
        None => (text, None),
    };
    if !is_digits(whole) || fraction.is_some_and(|fraction| !is_digits(fraction)) {
        return None;
    }
    Some((whole, fraction.unwrap_or_default()))
}

/// Digits alone, as most times are written, read in one pass; `None` for
/// anything else, or a value past 2**64-1.
fn plain_digits(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0_u64, |sum, &digit| {
        let digit = digit.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        sum.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// A whole number of ticks, in digits; a fraction of zeros (`1.0`, as
/// floats are written) is whole too.
fn parse_ticks(text: &[u8], unit: &str) -> Result<u64, String> {
    if let Some(ticks) = plain_digits(text) {
        return Ok(ticks);
    }
    let shown = Shown(text);
    let whole = match split_decimal(unsigned(text, &shown, unit)?) {
        Some((whole, fraction)) if fraction.iter().all(|digit| *digit == b'0') => whole,
        _ => {
            return Err(format!(
                "time {shown} is not a whole number of {unit} written in digits"
            ))
        }
    };
    plain_digits(whole).ok_or_else(|| format!("time {shown} is past 2**64-1 {unit}"))
}

/// Epoch seconds, whole or with up to nine decimal places, in nanoseconds.
fn parse_seconds(text: &[u8]) -> Result<u64, String> {
    const NANO_DIGITS: usize = 9;
    let shown = Shown(text);
    let (whole, fraction) = split_decimal(unsigned(text, &shown, "seconds")?).ok_or_else(|| {
        format!("time {shown} is not a number of seconds written in digits (like 1764500000.25)")
    })?;
    if fraction.len() > NANO_DIGITS {
        return Err(format!(
            "time {shown} has more than nine decimal places, finer than the nanoseconds held"
        ));
    }
    let mut nanos = [b'0'; NANO_DIGITS];
    nanos[..fraction.len()].copy_from_slice(fraction);
    plain_digits(whole)
        .and_then(|seconds| seconds.checked_mul(NANOS_PER_SECOND))
        .zip(plain_digits(&nanos))
        .and_then(|(seconds, nanos)| seconds.checked_add(nanos))
        .ok_or_else(|| {
            format!("time {shown} is past 18446744073.709551615 seconds (2**64-1 nanoseconds)")
        })
}

/// Nanoseconds as epoch seconds, with a fraction as ISO times have one.
fn write_seconds(nanos: u64, out: &mut Vec<u8>) {
    write_u64(nanos / NANOS_PER_SECOND, out);
    write_fraction(nanos % NANOS_PER_SECOND, out);
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date of a day count from 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A cursor over ISO text, reading fixed-width numbers and separators.
struct IsoText<'a> {
    text: &'a [u8],
    at: usize,
}

impl IsoText<'_> {
    fn digits(&mut self, count: usize) -> Option<i64> {
        let digits = self.text.get(self.at..self.at + count)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += count;
        Some(
            digits
                .iter()
                .fold(0, |sum, digit| sum * 10 + i64::from(digit - b'0')),
        )
    }

    fn one_of(&mut self, accepted: &[u8]) -> Option<u8> {
        let byte = *self.text.get(self.at)?;
        if !accepted.contains(&byte) {
            return None;
        }
        self.at += 1;
        Some(byte)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }
}

fn parse_iso(text: &[u8]) -> Result<u64, String> {
    let shown = Shown(text);
    let not_iso =
        || format!("time {shown} is not ISO 8601 (like 2026-11-30T10:00:00Z, with an offset)");
    let mut iso = IsoText { text, at: 0 };
    let fields = (|| {
        let year = iso.digits(4)?;
        iso.one_of(b"-")?;
        let month = iso.digits(2)?;
        iso.one_of(b"-")?;
        let day = iso.digits(2)?;
        iso.one_of(b"Tt ")?;
        let hour = iso.digits(2)?;
        iso.one_of(b":")?;
        let minute = iso.digits(2)?;
        let in_minute = seconds_and_fraction(&mut iso, false)?;
        let offset = match iso.one_of(b"Zz+-")? {
            b'Z' | b'z' => 0,
            sign => {
                let hours = iso.digits(2)?;
                iso.one_of(b":");
                let minutes = iso.digits(2)?;
                if hours > 23 || minutes > 59 {
                    return None;
                }
                let offset = (hours * 60 + minutes) * 60;
                if sign == b'-' {
                    -offset
                } else {
                    offset
                }
            }
        };
        if iso.at != text.len() {
            return None;
        }
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
        {
            return None;
        }
        Some((year, month, day, hour, minute, in_minute, offset))
    })()
    .ok_or_else(|| finer_than_nanoseconds(text).unwrap_or_else(not_iso))?;
    let (year, month, day, hour, minute, in_minute, offset) = fields;
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 - offset;
    let total = i128::from(seconds) * i128::from(NANOS_PER_SECOND) + i128::from(in_minute);
    u64::try_from(total).map_err(|_| {
        format!("time {shown} is outside 1970-01-01T00:00:00Z plus 0..2**64-1 nanoseconds")
    })
}

/// Reads the seconds and fraction after `HH:MM`: `:SS` and `.fraction`,
/// both optional; nanoseconds.
fn seconds_and_fraction(iso: &mut IsoText, optional_seconds: bool) -> Option<i64> {
    let second = if optional_seconds && iso.peek() != Some(b':') {
        0
    } else {
        iso.one_of(b":")?;
        iso.digits(2)?
    };
    if second > 60 {
        return None;
    }
    let mut nanos = 0;
    if iso.one_of(b".,").is_some() {
        let mut scale = 100_000_000;
        let mut digits = 0;
        while let Some(digit) = iso.peek().filter(u8::is_ascii_digit) {
            iso.at += 1;
            digits += 1;
            if digits > 9 {
                // Zeros past nanoseconds lose nothing (RFC 3339 allows any
                // number of digits); anything else would be cut off.
                if digit != b'0' {
                    return None;
                }
                continue;
            }
            nanos += i64::from(digit - b'0') * scale;
            scale /= 10;
        }
        if digits == 0 {
            return None;
        }
    }
    Some(second * 1_000_000_000 + nanos)
}

fn parse_clock(text: &[u8]) -> Result<u64, String> {
    let shown = Shown(text);
    let mut clock = IsoText { text, at: 0 };
    let parsed = (|| {
        let width = if text.get(1) == Some(&b':') { 1 } else { 2 };
        let hour = clock.digits(width)?;
        clock.one_of(b":")?;
        let minute = clock.digits(2)?;
        let nanos = seconds_and_fraction(&mut clock, true)?;
        // 24:00:00, the end of the day, is how a window ending then is
        // written, so it reads back.
        let end_of_day = hour == 24 && minute == 0 && nanos == 0;
        (clock.at == text.len() && (hour <= 23 || end_of_day) && minute <= 59)
            .then(|| (hour * 3600 + minute * 60) * 1_000_000_000 + nanos)
    })();
    parsed
        .and_then(|nanos| u64::try_from(nanos).ok())
        .ok_or_else(|| {
            finer_than_nanoseconds(text).unwrap_or_else(|| {
                format!("time {shown} is not a time of day (like 14:01 or 14:01:30)")
            })
        })
}

/// Why a time written with more than nine digits after the second is
/// refused, if `text` is one: its ticks, nanoseconds, could not hold it.
fn finer_than_nanoseconds(text: &[u8]) -> Option<String> {
    let fraction = text.iter().position(|byte| matches!(byte, b'.' | b','))?;
    let fraction = &text[fraction + 1..];
    let digits = fraction
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    let finer = fraction[..digits]
        .iter()
        .skip(9)
        .any(|&digit| digit != b'0');
    finer.then(|| {
        format!(
            "time {} has {digits} digits after the second; nanoseconds (9) are the finest the \
             command keeps",
            Shown(text)
        )
    })
}

/// `nanos` since midnight as `HH:MM:SS`, with a fraction when it has one.
fn write_clock(nanos: u64, out: &mut Vec<u8>) {
    let seconds = nanos / NANOS_PER_SECOND;
    write!(
        out,
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
    .unwrap_or(());
    write_fraction(nanos % NANOS_PER_SECOND, out);
}

/// A fraction of a second in 3, 6 or 9 digits, or nothing for none.
fn write_fraction(fraction: u64, out: &mut Vec<u8>) {
    if fraction == 0 {
        return;
    }
    if fraction.is_multiple_of(1_000_000) {
        write!(out, ".{:03}", fraction / 1_000_000).unwrap_or(());
    } else if fraction.is_multiple_of(1_000) {
        write!(out, ".{:06}", fraction / 1_000).unwrap_or(());
    } else {
        write!(out, ".{fraction:09}").unwrap_or(());
    }
}

/// `nanos` since the epoch in UTC, with as many fraction digits as it
/// needs: none, 3, 6 or 9.
fn write_iso(nanos: u64, out: &mut Vec<u8>) {
    let seconds = nanos / NANOS_PER_SECOND;
    let fraction = nanos % NANOS_PER_SECOND;
    // Under 2**64 nanoseconds: about 584 years, far inside i64 days.
    let days = i64::try_from(seconds / 86_400).unwrap_or(i64::MAX);
    let (year, month, day) = civil_from_days(days);
    let in_day = seconds % 86_400;
    write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
    .unwrap_or(());
    write_fraction(fraction, out);
    out.push(b'Z');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(nanos: u64) -> String {
        let mut out = Vec::new();
        write_iso(nanos, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn iso_round_trips_through_nanoseconds() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-11-30T10:00:00Z",
            "2024-02-29T23:59:59.250Z",
            "2000-03-01T00:00:00.000001Z",
            "2554-07-21T23:34:33.709551615Z",
        ] {
            let nanos = parse_iso(text.as_bytes()).unwrap();
            assert_eq!(iso(nanos), text);
        }
    }

    #[test]
    fn offsets_are_applied() {
        let utc = parse_iso(b"2026-11-30T10:00:00Z").unwrap();
        assert_eq!(parse_iso(b"2026-11-30T11:30:00+01:30").unwrap(), utc);
        assert_eq!(parse_iso(b"2026-11-30 05:00:00-0500").unwrap(), utc);
        assert_eq!(parse_iso(b"2026-11-30t10:00:00.0z").unwrap(), utc);
    }

    #[test]
    fn impossible_dates_and_ranges_are_refused() {
        for text in [
            "2026-02-29T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T10:00:00",
            "2026-11-30T10:00:00.Z",
            "2026-11-30T10:00:00.1234567891Z",
            "1969-12-31T23:59:59Z",
            "2554-07-21T23:34:33.709551616Z",
            "20261130T100000Z",
        ] {
            assert!(parse_iso(text.as_bytes()).is_err(), "{text}");
        }
    }

    #[test]
    fn a_fraction_finer_than_nanoseconds_is_refused_as_such() {
        for text in ["2026-11-30T10:00:00.1234567891Z", "10:00:00.0000000001"] {
            let refused = TimeFormat::detect(text.as_bytes(), false)
                .parse(text.as_bytes())
                .unwrap_err();
            assert!(refused.contains("10 digits after the second"), "{refused}");
        }
        let refused = parse_iso(b"2026-11-30T10:00:00.5").unwrap_err();
        assert!(refused.contains("not ISO 8601"), "{refused}");
    }

    #[test]
    fn the_end_of_the_day_reads_back_as_written() {
        let clock = TimeFormat::detect(b"24:00:00", false);
        let end = clock.parse(b"24:00:00").unwrap();
        assert_eq!(end, clock.parse(b"23:59:59").unwrap() + 1_000_000_000);
        let mut written = Vec::new();
        clock.write(end, false, &mut written);
        assert_eq!(written, b"24:00:00");
        for past in ["24:00:01", "24:01:00", "24:00:00.5", "25:00:00"] {
            assert!(clock.parse(past.as_bytes()).is_err(), "{past}");
        }
    }

    #[test]
    fn zeros_past_nanoseconds_are_read() {
        assert_eq!(
            parse_iso(b"2026-11-30T10:00:00.123456789000Z").unwrap(),
            parse_iso(b"2026-11-30T10:00:00.123456789Z").unwrap()
        );
        let clock = TimeFormat::detect(b"10:00:00.0000000000", false);
        assert_eq!(
            clock.parse(b"10:00:00.0000000000").unwrap(),
            clock.parse(b"10:00:00").unwrap()
        );
    }

    #[test]
    fn times_of_day_read_and_write() {
        assert_eq!(TimeFormat::detect(b"14:01", false), TimeFormat::Clock);
        assert_eq!(TimeFormat::detect(b"9:05:30.25", false), TimeFormat::Clock);
        assert_eq!(parse_clock(b"14:01"), Ok(50_460_000_000_000));
        let mut out = Vec::new();
        write_clock(parse_clock(b"9:05:30.25").unwrap(), &mut out);
        assert_eq!(out, b"09:05:30.250");
        for text in ["24:00:01", "14:1", "14:01:", "14:01x", "14"] {
            assert!(parse_clock(text.as_bytes()).is_err(), "{text}");
        }
    }

    #[test]
    fn epoch_units_are_told_by_magnitude() {
        assert_eq!(
            TimeFormat::detect(b"1764500000", false),
            TimeFormat::Seconds
        );
        assert_eq!(
            TimeFormat::detect(b"1764500000123", false),
            TimeFormat::Millis
        );
        assert_eq!(
            TimeFormat::detect(b"1764500000123456", false),
            TimeFormat::Micros
        );
        assert_eq!(
            TimeFormat::detect(b"1764500000123456789", false),
            TimeFormat::Nanos
        );
        assert_eq!(
            TimeFormat::detect(b"2026-11-30T10:00:00Z", false),
            TimeFormat::Iso
        );
        assert_eq!(
            TimeFormat::detect(b"1764500000.5", true),
            TimeFormat::Seconds
        );
        assert_eq!(TimeFormat::detect(b"1E2", true), TimeFormat::Seconds);
    }

    #[test]
    fn ticks_are_whole_and_in_range() {
        assert_eq!(parse_ticks(b"18446744073709551615", "s"), Ok(u64::MAX));
        assert!(parse_ticks(b"18446744073709551616", "s").is_err());
        assert!(parse_ticks(b"-1", "s").unwrap_err().contains("before 1970"));
        assert_eq!(parse_ticks(b"-0", "s"), Ok(0));
        assert_eq!(parse_ticks(b"-000", "s"), Ok(0));
        assert!(parse_ticks(b"-", "s")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_ticks(b"1000.5", "milliseconds")
            .unwrap_err()
            .ends_with("is not a whole number of milliseconds written in digits"));
        assert_eq!(parse_ticks(b"1000.00", "ms"), Ok(1000));
        assert!(parse_ticks(b"1000.", "ms").is_err());
        assert!(parse_ticks(b"-1.5", "ms")
            .unwrap_err()
            .contains("before 1970"));
        assert!(parse_ticks(b"1e3", "ms").is_err());
        // The bytes either side of the digits are no digits.
        assert_eq!(parse_ticks(b"0017", "ms"), Ok(17));
        for text in [&b""[..], b"17:", b"1/7", b" 17", b"17\x80"] {
            assert!(parse_ticks(text, "ms").is_err(), "{text:?}");
        }
    }

    #[test]
    fn epoch_seconds_may_have_a_fraction() {
        let second = NANOS_PER_SECOND;
        assert_eq!(parse_seconds(b"1764500000"), Ok(1_764_500_000 * second));
        assert_eq!(
            parse_seconds(b"1764500000.25"),
            Ok(1_764_500_000 * second + 250_000_000)
        );
        assert_eq!(parse_seconds(b"0.000000001"), Ok(1));
        assert_eq!(parse_seconds(b"18446744073.709551615"), Ok(u64::MAX));
        assert_eq!(parse_seconds(b"-0.0"), Ok(0));
        for (text, reason) in [
            (
                "18446744073.709551616",
                "past 18446744073.709551615 seconds",
            ),
            ("18446744074", "past 18446744073.709551615 seconds"),
            ("1.0000000001", "more than nine decimal places"),
            ("-0.5", "before 1970"),
            ("1.", "not a number of seconds"),
            (".5", "not a number of seconds"),
            ("1e3", "not a number of seconds"),
            ("1.2.3", "not a number of seconds"),
            ("", "not a number of seconds"),
        ] {
            let refused = parse_seconds(text.as_bytes()).unwrap_err();
            assert!(refused.contains(reason), "{text}: {refused}");
        }
        for (nanos, written) in [
            (1_764_500_000 * second, "1764500000"),
            (1_764_500_000 * second + 250_000_000, "1764500000.250"),
            (1_500, "0.000001500"),
        ] {
            let mut out = Vec::new();
            TimeFormat::Seconds.write(nanos, false, &mut out);
            assert_eq!(out, written.as_bytes());
        }
        assert_eq!(
            TimeFormat::detect(b"1764500000.617300", false),
            TimeFormat::Seconds
        );
        assert_eq!(
            TimeFormat::detect(b"1764500000617.5", false),
            TimeFormat::Millis
        );
        assert_eq!(TimeFormat::detect(b"1764500000.", false), TimeFormat::Iso);
        assert_eq!(
            TimeFormat::detect(b"-1764500000", false),
            TimeFormat::Seconds
        );
    }
}
