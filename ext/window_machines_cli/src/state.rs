//! The state file: everything a stopped run needs to go on exactly where it
//! left off, written atomically (a temporary file renamed over the old
//! one), read back as untrusted input.

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use window_machines_core::{in_time_order, Accumulator, Accumulators, Input, Number, Stamped};

use crate::job::StateFiles;
use crate::json_fields::kind_of_value;
use crate::keys;
use crate::timestamps::TimeFormat;
use crate::values::Value;

/// What a state file starts with: the name, then the version of its form.
const MAGIC: &[u8; 8] = b"WMSTATE7";
const MAGIC_NAME: &[u8; 7] = b"WMSTATE";

/// Where the input was consumed to, and what was counted and written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Which input, the bytes of it consumed, and the last line's number.
    pub source: u64,
    pub offset: u64,
    pub line: u64,
    /// The CRC-32 of those bytes.
    pub crc: u32,
    /// Each input before `source`: its length and CRC-32.
    pub read_before: Vec<(u64, u32)>,
    pub events: u64,
    pub late: u64,
    pub outside: u64,
    pub bad: u64,
    /// Lengths of the output, late and bad files (`None`: not a file).
    pub output: Option<u64>,
    pub late_file: Option<u64>,
    pub bad_file: Option<u64>,
    /// The CSV header the rows ending the late and bad files are under
    /// (`None`: empty, or a JSON line last).
    pub late_header: Option<Vec<u8>>,
    pub bad_header: Option<Vec<u8>>,
    /// Where the late and bad files kept are, as absolute paths: a resumed
    /// run cuts back only the file the lengths are of.
    pub late_path: Option<Vec<u8>>,
    pub bad_path: Option<Vec<u8>>,
    /// The first bad line skipped, and why, as the run's summary names it.
    pub first_bad: Option<String>,
}

/// `path` as a kept file's path is recorded: absolute, `..` taken back by
/// name as Ruby's `File.absolute_path` makes the fingerprint's, so that a run
/// resumed from another directory names the same file alike.
#[must_use]
pub fn recorded_path(path: &Path) -> Vec<u8> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut expanded = std::path::PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::ParentDir => {
                expanded.pop();
            }
            std::path::Component::CurDir => {}
            part => expanded.push(part),
        }
    }
    expanded.into_os_string().into_encoded_bytes()
}

/// One held window or session: start, end (or last event), a pane's first
/// window, accumulators.
pub type Part = (u64, u64, Option<u64>, Accumulators<Value>);

/// A state file read back.
#[derive(Debug, Clone)]
pub struct Saved {
    pub fingerprint: String,
    pub time_format: Option<TimeFormat>,
    pub clock_time: Option<u64>,
    pub tracker_late: u64,
    pub progress: Progress,
    pub keys: Vec<(Box<[u8]>, Vec<Part>)>,
}

/// A held part, borrowed from the tracker.
pub type HeldPart<'a> = (u64, u64, Option<u64>, &'a [Accumulator<Value>]);

/// What the tracker holds, borrowed for writing.
pub struct Tracked<'a> {
    pub clock_time: Option<u64>,
    pub late: u64,
    pub keys: Vec<(&'a [u8], Vec<HeldPart<'a>>)>,
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn option(&mut self, value: Option<u64>) {
        match value {
            Some(value) => {
                self.0.push(1);
                self.u64(value);
            }
            None => self.0.push(0),
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn optional_bytes(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            Some(bytes) => {
                self.0.push(1);
                self.bytes(bytes);
            }
            None => self.0.push(0),
        }
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Big(big) => {
                self.0.push(0);
                self.0.extend_from_slice(&big.to_le_bytes());
            }
            Value::Json(json) => {
                self.0.push(1);
                self.bytes(json);
            }
        }
    }

    fn number(&mut self, number: &Number<Value>) {
        match number {
            Number::Int(int) => {
                self.0.push(0);
                self.0.extend_from_slice(&int.to_le_bytes());
            }
            Number::Float(float) => {
                self.0.push(1);
                self.u64(float.to_bits());
            }
            Number::Host(value) => {
                self.0.push(2);
                self.value(value);
            }
        }
    }

    fn input(&mut self, input: &Input<Value>) {
        match input {
            Input::Nil => self.0.push(0),
            Input::Int(int) => {
                self.0.push(1);
                self.0.extend_from_slice(&int.to_le_bytes());
            }
            Input::Float(float) => {
                self.0.push(2);
                self.u64(float.to_bits());
            }
            Input::Numeric(value) => {
                self.0.push(3);
                self.value(value);
            }
            Input::Object(value) => {
                self.0.push(4);
                self.value(value);
            }
        }
    }

    fn optional_input(&mut self, input: Option<&Input<Value>>) {
        match input {
            Some(input) => {
                self.0.push(1);
                self.input(input);
            }
            None => self.0.push(0),
        }
    }

    fn stamped(&mut self, stamped: &Stamped<Value>) {
        self.u64(stamped.timestamp);
        self.input(&stamped.input);
    }

    fn optional_stamped(&mut self, stamped: Option<&Stamped<Value>>) {
        match stamped {
            Some(stamped) => {
                self.0.push(1);
                self.stamped(stamped);
            }
            None => self.0.push(0),
        }
    }

    fn accumulator(&mut self, acc: &Accumulator<Value>) {
        match acc {
            Accumulator::Count(count) => {
                self.0.push(0);
                self.u64(*count);
            }
            Accumulator::Sum(sum) => {
                self.0.push(1);
                self.number(sum);
            }
            Accumulator::Min(held) => {
                self.0.push(2);
                self.optional_input(held.as_ref());
            }
            Accumulator::Max(held) => {
                self.0.push(3);
                self.optional_input(held.as_ref());
            }
            Accumulator::Mean { sum, count } => {
                self.0.push(4);
                self.number(sum);
                self.u64(*count);
            }
            Accumulator::Collect(inputs) => {
                self.0.push(5);
                self.u64(inputs.len() as u64);
                for stamped in in_time_order(inputs).iter() {
                    self.stamped(stamped);
                }
            }
            Accumulator::First(held) => {
                self.0.push(6);
                self.optional_stamped(held.as_ref());
            }
            Accumulator::Last(held) => {
                self.0.push(7);
                self.optional_stamped(held.as_ref());
            }
            // The command has no custom aggregators.
            Accumulator::Custom(_) => self.0.push(8),
        }
    }
}

/// Removes the state file, once the run has finished, and the scratch file
/// if a checkpoint left it there (one killed while it was written): a file
/// whose bytes, however few, begin as a state file does, and nothing else.
pub fn remove(files: &StateFiles) -> io::Result<()> {
    let left_by_a_checkpoint = fs::symlink_metadata(&files.scratch)
        .is_ok_and(|metadata| metadata.is_file())
        && fs::File::open(&files.scratch).is_ok_and(|file| {
            let mut start = Vec::new();
            let read = file.take(MAGIC_NAME.len() as u64).read_to_end(&mut start);
            read.is_ok() && MAGIC_NAME.starts_with(&start)
        });
    let scratch = left_by_a_checkpoint.then_some(&files.scratch);
    for path in std::iter::once(&files.path).chain(scratch) {
        match fs::remove_file(path) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => {
                return Err(io::Error::new(
                    error.kind(),
                    format!("{}: {error}", path.display()),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes the state to its file atomically, through the scratch file.
pub fn save(
    files: &StateFiles,
    fingerprint: &str,
    time_format: Option<TimeFormat>,
    progress: &Progress,
    tracked: Option<&Tracked>,
) -> io::Result<()> {
    let mut out = Encoder(MAGIC.to_vec());
    out.bytes(fingerprint.as_bytes());
    out.bytes(time_format.map_or("", TimeFormat::name).as_bytes());
    for value in [
        progress.source,
        progress.offset,
        progress.line,
        u64::from(progress.crc),
        progress.events,
        progress.late,
        progress.outside,
        progress.bad,
    ] {
        out.u64(value);
    }
    out.u64(progress.read_before.len() as u64);
    for &(length, crc) in &progress.read_before {
        out.u64(length);
        out.u64(u64::from(crc));
    }
    for length in [progress.output, progress.late_file, progress.bad_file] {
        out.option(length);
    }
    for bytes in [
        &progress.late_header,
        &progress.bad_header,
        &progress.late_path,
        &progress.bad_path,
    ] {
        out.optional_bytes(bytes.as_deref());
    }
    out.optional_bytes(progress.first_bad.as_deref().map(str::as_bytes));
    out.option(tracked.and_then(|tracked| tracked.clock_time));
    out.u64(tracked.map_or(0, |tracked| tracked.late));
    let keys = tracked.map_or(&[][..], |tracked| &tracked.keys[..]);
    out.u64(keys.len() as u64);
    for (key, parts) in keys {
        out.bytes(key);
        out.u64(parts.len() as u64);
        for (start, end, from, accs) in parts {
            out.u64(*start);
            out.u64(*end);
            out.option(*from);
            out.u64(accs.len() as u64);
            for acc in accs.iter() {
                out.accumulator(acc);
            }
        }
    }
    let checksum = keys::hash(&out.0);
    out.u64(checksum);
    {
        let mut file = fs::File::create(&files.scratch)?;
        file.write_all(&out.0)?;
        file.sync_data()?;
    }
    fs::rename(&files.scratch, &files.path)
}

struct Decoder<'a> {
    bytes: &'a [u8],
}

type Decoded<T> = Result<T, String>;

fn damaged() -> String {
    "the state file is damaged".to_owned()
}

impl Decoder<'_> {
    fn take(&mut self, count: usize) -> Decoded<&[u8]> {
        if self.bytes.len() < count {
            return Err(damaged());
        }
        let (taken, rest) = self.bytes.split_at(count);
        self.bytes = rest;
        Ok(taken)
    }

    fn byte(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        self.take(N)?.try_into().map_err(|_| damaged())
    }

    fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A count of things each at least `unit` bytes long, checked against
    /// what is left so a damaged count cannot ask for huge allocations.
    fn count(&mut self, unit: usize) -> Decoded<usize> {
        let count = usize::try_from(self.u64()?).map_err(|_| damaged())?;
        if count.saturating_mul(unit) > self.bytes.len() {
            return Err(damaged());
        }
        Ok(count)
    }

    fn option(&mut self) -> Decoded<Option<u64>> {
        match self.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.u64()?)),
            _ => Err(damaged()),
        }
    }

    fn bytes(&mut self) -> Decoded<&[u8]> {
        let length = self.count(1)?;
        self.take(length)
    }

    fn optional_bytes(&mut self) -> Decoded<Option<Vec<u8>>> {
        match self.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.bytes()?.to_vec())),
            _ => Err(damaged()),
        }
    }

    fn value(&mut self) -> Decoded<Value> {
        match self.byte()? {
            0 => Ok(Value::Big(Box::new(i128::from_le_bytes(self.array()?)))),
            1 => {
                // Written out as it is: it must be JSON.
                let json = self.bytes()?;
                kind_of_value(json).ok_or_else(damaged)?;
                Ok(Value::Json(json.into()))
            }
            _ => Err(damaged()),
        }
    }

    /// A number past 64 bits: the command keeps no other kind.
    fn number_value(&mut self) -> Decoded<Value> {
        match self.value()? {
            big @ Value::Big(_) => Ok(big),
            Value::Json(_) => Err(damaged()),
        }
    }

    fn number(&mut self) -> Decoded<Number<Value>> {
        match self.byte()? {
            0 => Ok(Number::Int(i64::from_le_bytes(self.array()?))),
            1 => Ok(Number::Float(f64::from_bits(self.u64()?))),
            2 => Ok(Number::Host(self.number_value()?)),
            _ => Err(damaged()),
        }
    }

    fn input(&mut self) -> Decoded<Input<Value>> {
        match self.byte()? {
            0 => Ok(Input::Nil),
            1 => Ok(Input::Int(i64::from_le_bytes(self.array()?))),
            2 => Ok(Input::Float(f64::from_bits(self.u64()?))),
            3 => Ok(Input::Numeric(self.number_value()?)),
            4 => Ok(Input::Object(self.value()?)),
            _ => Err(damaged()),
        }
    }

    fn optional_input(&mut self) -> Decoded<Option<Input<Value>>> {
        match self.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.input()?)),
            _ => Err(damaged()),
        }
    }

    fn stamped(&mut self) -> Decoded<Stamped<Value>> {
        Ok(Stamped {
            timestamp: self.u64()?,
            input: self.input()?,
        })
    }

    fn optional_stamped(&mut self) -> Decoded<Option<Stamped<Value>>> {
        match self.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.stamped()?)),
            _ => Err(damaged()),
        }
    }

    fn accumulator(&mut self) -> Decoded<Accumulator<Value>> {
        Ok(match self.byte()? {
            0 => Accumulator::Count(self.u64()?),
            1 => Accumulator::Sum(self.number()?),
            2 => Accumulator::Min(self.optional_input()?),
            3 => Accumulator::Max(self.optional_input()?),
            4 => Accumulator::Mean {
                sum: self.number()?,
                count: self.u64()?,
            },
            5 => {
                let count = self.count(9)?;
                Accumulator::Collect((0..count).map(|_| self.stamped()).collect::<Decoded<_>>()?)
            }
            6 => Accumulator::First(self.optional_stamped()?),
            7 => Accumulator::Last(self.optional_stamped()?),
            _ => return Err(damaged()),
        })
    }
}

/// Reads the state file at `path`; `None` if there is none. A message
/// says what is wrong with it; the caller names the file.
pub fn load(path: &Path) -> Result<Option<Saved>, String> {
    // A device or a pipe could give bytes without end, or none ever.
    match fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => return Err("not a regular file".to_owned()),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    }
    let bytes = fs::read(path).map_err(|error| error.to_string())?;
    if bytes.starts_with(MAGIC_NAME) && !bytes.starts_with(MAGIC) {
        return Err(
            "written by another version of window_machines; remove it to start over".to_owned(),
        );
    }
    if !bytes.starts_with(MAGIC) {
        return Err("not a window_machines state file".to_owned());
    }
    // Damage that still decodes is caught here.
    let (body, checksum) = bytes
        .split_at_checked(bytes.len().saturating_sub(8))
        .ok_or_else(damaged)?;
    if checksum != keys::hash(body).to_le_bytes() {
        return Err(damaged());
    }
    let mut input = Decoder {
        bytes: body.get(MAGIC.len()..).ok_or_else(damaged)?,
    };
    let fingerprint = String::from_utf8(input.bytes()?.to_vec()).map_err(|_| damaged())?;
    let format_name = input.bytes()?;
    let time_format = if format_name.is_empty() {
        None
    } else {
        let name = std::str::from_utf8(format_name).map_err(|_| damaged())?;
        Some(TimeFormat::named(name).ok_or_else(damaged)?)
    };
    let mut progress = Progress {
        source: input.u64()?,
        offset: input.u64()?,
        line: input.u64()?,
        crc: u32::try_from(input.u64()?).map_err(|_| damaged())?,
        events: input.u64()?,
        late: input.u64()?,
        outside: input.u64()?,
        bad: input.u64()?,
        ..Progress::default()
    };
    let read_before = input.count(16)?;
    for _ in 0..read_before {
        let length = input.u64()?;
        let crc = u32::try_from(input.u64()?).map_err(|_| damaged())?;
        progress.read_before.push((length, crc));
    }
    // One for each input before the one being read.
    if progress.read_before.len() as u64 != progress.source {
        return Err(damaged());
    }
    progress.output = input.option()?;
    progress.late_file = input.option()?;
    progress.bad_file = input.option()?;
    progress.late_header = input.optional_bytes()?;
    progress.bad_header = input.optional_bytes()?;
    progress.late_path = input.optional_bytes()?;
    progress.bad_path = input.optional_bytes()?;
    // A kept file's length and its path come together.
    if progress.late_path.is_some() != progress.late_file.is_some()
        || progress.bad_path.is_some() != progress.bad_file.is_some()
    {
        return Err(damaged());
    }
    progress.first_bad = input
        .optional_bytes()?
        .map(String::from_utf8)
        .transpose()
        .map_err(|_| damaged())?;
    let clock_time = input.option()?;
    let tracker_late = input.u64()?;
    let key_count = input.count(16)?;
    let mut keys = Vec::with_capacity(key_count);
    for _ in 0..key_count {
        let key: Box<[u8]> = input.bytes()?.into();
        let part_count = input.count(25)?;
        let mut parts = Vec::with_capacity(part_count);
        for _ in 0..part_count {
            let start = input.u64()?;
            let end = input.u64()?;
            let from = input.option()?;
            let acc_count = input.count(1)?;
            let accs = (0..acc_count)
                .map(|_| input.accumulator())
                .collect::<Decoded<Accumulators<Value>>>()?;
            parts.push((start, end, from, accs));
        }
        keys.push((key, parts));
    }
    if !input.bytes.is_empty() {
        return Err(damaged());
    }
    Ok(Some(Saved {
        fingerprint,
        time_format,
        clock_time,
        tracker_late,
        progress,
        keys,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_accumulator() {
        let accs: Accumulators<Value> = [
            Accumulator::Count(3),
            Accumulator::Sum(Number::Host(Value::Big(Box::new(i128::MAX)))),
            Accumulator::Min(Some(Input::Float(1.5))),
            Accumulator::Max(None),
            Accumulator::Mean {
                sum: Number::Int(-4),
                count: 2,
            },
            Accumulator::Collect(vec![Stamped {
                timestamp: 9,
                input: Input::Object(Value::Json(b"\"x\"".to_vec().into())),
            }]),
            Accumulator::First(Some(Stamped {
                timestamp: 1,
                input: Input::Nil,
            })),
            Accumulator::Last(None),
        ]
        .into_iter()
        .collect();
        let progress = Progress {
            source: 1,
            offset: 99,
            line: 7,
            read_before: vec![(4096, 0xDEAD_BEEF)],
            output: Some(120),
            late_header: Some(b"k,ts".to_vec()),
            late_file: Some(31),
            late_path: Some(b"/runs/late.jsonl".to_vec()),
            first_bad: Some("in.jsonl:3: not JSON".to_owned()),
            ..Progress::default()
        };
        let tracked = Tracked {
            clock_time: Some(50),
            late: 2,
            keys: vec![(&b"key"[..], vec![(0, 60, Some(3), &accs)])],
        };
        let dir = std::env::temp_dir().join(format!("wm-state-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state");
        let files = StateFiles {
            path: path.clone(),
            scratch: dir.join("scratch"),
        };
        save(
            &files,
            "fp",
            Some(TimeFormat::Millis),
            &progress,
            Some(&tracked),
        )
        .unwrap();
        let saved = load(&path).unwrap().unwrap();
        assert_eq!(saved.fingerprint, "fp");
        assert_eq!(saved.time_format, Some(TimeFormat::Millis));
        assert_eq!(saved.progress, progress);
        assert_eq!((saved.clock_time, saved.tracker_late), (Some(50), 2));
        assert_eq!(saved.keys[0].0.as_ref(), b"key");
        assert_eq!(saved.keys[0].1, vec![(0, 60, Some(3), accs)]);
        // Every truncation and every flipped bit is refused, none panics.
        let bytes = fs::read(&path).unwrap();
        for length in 0..bytes.len() {
            fs::write(&path, &bytes[..length]).unwrap();
            assert!(load(&path).is_err(), "{length}");
        }
        for bit in 0..bytes.len() * 8 {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            fs::write(&path, &flipped).unwrap();
            assert!(load(&path).is_err(), "{bit}");
        }
        let mut older = bytes.clone();
        older[..MAGIC.len()].copy_from_slice(b"WMSTATE1");
        fs::write(&path, &older).unwrap();
        assert!(load(&path).is_err_and(|error| error.contains("another version")));
        assert!(!files.scratch.exists());
        // A device or a directory is refused before anything is read.
        for odd in [dir.as_path(), Path::new("/dev/zero")] {
            assert!(load(odd).is_err_and(|error| error == "not a regular file"));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn removing_takes_a_scratch_file_only_when_a_checkpoint_left_it() {
        let dir = std::env::temp_dir().join(format!("wm-remove-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let files = StateFiles {
            path: dir.join("state"),
            scratch: dir.join("state.tmp"),
        };
        let cases: [(&[u8], bool); 5] = [
            (b"WMSTATE7 half written", true),
            (b"WMSTATE", true),
            (b"WMS", true),
            (b"", true),
            (b"someone else's file", false),
        ];
        for (scratch, removed) in cases {
            fs::write(&files.path, b"state").unwrap();
            fs::write(&files.scratch, scratch).unwrap();
            remove(&files).unwrap();
            assert!(!files.path.exists());
            assert_eq!(files.scratch.exists(), !removed, "{scratch:?}");
        }
        fs::remove_file(&files.scratch).unwrap();
        fs::create_dir(&files.scratch).unwrap();
        remove(&files).unwrap();
        assert!(files.scratch.is_dir());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kept_paths_are_recorded_as_absolute_path_spells_them() {
        let here = std::env::current_dir().unwrap();
        let late = here
            .join("late.jsonl")
            .into_os_string()
            .into_encoded_bytes();
        for spelling in [
            "late.jsonl",
            "./late.jsonl",
            "sub/../late.jsonl",
            "sub/./../late.jsonl",
        ] {
            assert_eq!(recorded_path(Path::new(spelling)), late, "{spelling}");
        }
        assert_eq!(recorded_path(Path::new("/a/../../b")), b"/b");
    }

    /// A state saved holding `accumulator`, then read back.
    fn saved_with(accumulator: Accumulator<Value>) -> Result<Option<Saved>, String> {
        let accs: Accumulators<Value> = [accumulator].into_iter().collect();
        let tracked = Tracked {
            clock_time: None,
            late: 0,
            keys: vec![(&b"key"[..], vec![(0, 60, None, &accs)])],
        };
        let dir = std::env::temp_dir().join(format!("wm-forged-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let files = StateFiles {
            path: dir.join("state"),
            scratch: dir.join("scratch"),
        };
        save(&files, "fp", None, &Progress::default(), Some(&tracked)).unwrap();
        let loaded = load(&files.path);
        fs::remove_dir_all(&dir).unwrap();
        loaded
    }

    #[test]
    fn values_that_are_not_json_or_not_numbers_where_numbers_go_are_refused() {
        // Checksums catch damage, not a file written to pass them: what is
        // written out as it stands is checked for what it must be.
        let object = |json: &[u8]| Input::Object(Value::Json(json.to_vec().into()));
        let first = |input| {
            Accumulator::First(Some(Stamped {
                timestamp: 1,
                input,
            }))
        };
        assert!(saved_with(first(object(b"{\"a\":[1,\"x\"]}"))).is_ok());
        for json in [&b"{not json"[..], b"\x00\xff{", b"1 2", b""] {
            assert!(saved_with(first(object(json))).is_err(), "{json:?}");
        }
        let host = Number::Host(Value::Json(b"12".to_vec().into()));
        assert!(saved_with(Accumulator::Sum(host)).is_err());
        let numeric = Input::Numeric(Value::Json(b"12".to_vec().into()));
        assert!(saved_with(Accumulator::Max(Some(numeric))).is_err());
    }
}
