//! What one run of the command does, as the options said it.

use std::path::PathBuf;

use window_machines_core::Kind;

use crate::timestamps::TimeFormat;

/// A length of time as written on the command line: with a unit, or a bare
/// number in the time field's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duration {
    Nanos(u128),
    Units(u64),
}

impl Duration {
    /// In ticks of `format`; refused unless a whole number of them.
    pub fn ticks(self, format: TimeFormat, name: &str) -> Result<u64, String> {
        let past = || format!("--{name} is past 2**64-1 {}", format.tick_name());
        match self {
            Duration::Units(units) => units.checked_mul(format.ticks_per_unit()).ok_or_else(past),
            Duration::Nanos(nanos) => {
                let tick = u128::from(format.tick_nanos());
                if nanos % tick != 0 {
                    return Err(format!(
                        "--{name} is not a whole number of {}, the unit of the time field",
                        format.unit_name()
                    ));
                }
                u64::try_from(nanos / tick).map_err(|_| past())
            }
        }
    }
}

/// Which windows, and their lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Windows {
    Sessions {
        gap: Duration,
    },
    /// Tumbling windows are hopping windows whose advance is their size.
    Hopping {
        size: Duration,
        advance: Duration,
        grace: Duration,
        offset: Duration,
    },
}

/// One aggregator: what it is, the field it reads, its column name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    pub kind: Kind,
    pub field: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Jsonl,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Jsonl,
    Csv,
    Table,
}

/// An input: a file, or standard input when `path` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: Option<PathBuf>,
    pub format: InputFormat,
}

impl Source {
    /// How messages name it.
    #[must_use]
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "-".to_owned(), |path| path.display().to_string())
    }
}

/// Where a run keeps its state: the file, and the one each checkpoint is
/// written to first, then renamed over it. The options keep both apart from
/// every other file the run reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFiles {
    pub path: PathBuf,
    pub scratch: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub windows: Windows,
    /// Dotted paths of the key fields; none for one key.
    pub keys: Vec<String>,
    pub time: String,
    pub time_format: Option<TimeFormat>,
    pub lag: Duration,
    pub aggregates: Vec<Aggregate>,
    pub sources: Vec<Source>,
    /// Standard output when `None`.
    pub output: Option<PathBuf>,
    pub output_format: OutputFormat,
    pub late: Option<PathBuf>,
    pub bad: Option<PathBuf>,
    pub skip_bad: bool,
    pub state: Option<StateFiles>,
    /// What a resumed run must have been started with: the options that
    /// shape the output, as the caller wrote them down.
    pub fingerprint: String,
    pub progress: bool,
}

impl Job {
    /// The state file, if the run keeps one.
    #[must_use]
    pub fn state_path(&self) -> Option<&std::path::Path> {
        self.state.as_ref().map(|state| state.path.as_path())
    }

    /// The fields each event is read for: keys, then the time, then each
    /// aggregator's field.
    #[must_use]
    pub fn fields(&self) -> Vec<String> {
        let mut fields = self.keys.clone();
        fields.push(self.time.clone());
        fields.extend(self.aggregates.iter().filter_map(|agg| agg.field.clone()));
        fields
    }
}
