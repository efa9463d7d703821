//! `WindowMachines::Command.run_job`: hands the options the command line
//! parsed (lib/window_machines/command.rb) to window_machines_cli and its
//! result back. Every rule of the run lives there.

use std::path::PathBuf;

use magnus::{function, prelude::*, Error, RHash, RModule, Ruby, Symbol};
use window_machines_cli::{
    run, Aggregate, Duration, Failure, InputFormat, Job, OutputFormat, Source, StateFiles,
    TimeFormat, Windows,
};
use window_machines_core::Kind;

fn argument(ruby: &Ruby, message: String) -> Error {
    Error::new(ruby.exception_arg_error(), message)
}

fn get<T: magnus::TryConvert>(ruby: &Ruby, options: RHash, name: &str) -> Result<T, Error> {
    options.aref(ruby.to_symbol(name))
}

/// `[unit, amount]`: `"ns"` and nanoseconds, or `"units"` and a bare
/// number in the time field's unit.
fn duration(ruby: &Ruby, options: RHash, name: &str) -> Result<Duration, Error> {
    let (unit, amount): (String, u128) = get(ruby, options, name)?;
    match unit.as_str() {
        "ns" => Ok(Duration::Nanos(amount)),
        "units" => u64::try_from(amount)
            .map(Duration::Units)
            .map_err(|_| argument(ruby, format!("{name} is past 2**64-1"))),
        _ => Err(argument(ruby, format!("{name}: unknown unit {unit:?}"))),
    }
}

fn input_format(ruby: &Ruby, name: &str) -> Result<InputFormat, Error> {
    match name {
        "jsonl" => Ok(InputFormat::Jsonl),
        "csv" => Ok(InputFormat::Csv),
        _ => Err(argument(ruby, format!("unknown input format {name:?}"))),
    }
}

fn job(ruby: &Ruby, options: RHash) -> Result<Job, Error> {
    let kind: Symbol = get(ruby, options, "windows")?;
    let windows = match kind.name()?.as_ref() {
        "sessions" => Windows::Sessions {
            gap: duration(ruby, options, "gap")?,
        },
        "tumbling" | "hopping" => Windows::Hopping {
            size: duration(ruby, options, "size")?,
            advance: duration(ruby, options, "advance")?,
            grace: duration(ruby, options, "grace")?,
            offset: duration(ruby, options, "offset")?,
        },
        other => return Err(argument(ruby, format!("unknown windows {other:?}"))),
    };
    let time_format = match get::<Option<String>>(ruby, options, "time_format")? {
        Some(name) => Some(
            TimeFormat::named(&name)
                .ok_or_else(|| argument(ruby, format!("unknown time format {name:?}")))?,
        ),
        None => None,
    };
    let aggregates = get::<Vec<(String, Option<String>, String)>>(ruby, options, "aggregates")?
        .into_iter()
        .map(|(kind, field, name)| {
            let kind = Kind::named(&kind)
                .ok_or_else(|| argument(ruby, format!("unknown aggregator {kind:?}")))?;
            Ok(Aggregate { kind, field, name })
        })
        .collect::<Result<_, Error>>()?;
    let sources = get::<Vec<(Option<String>, String)>>(ruby, options, "sources")?
        .into_iter()
        .map(|(path, format)| {
            Ok(Source {
                path: path.map(PathBuf::from),
                format: input_format(ruby, &format)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    let output_format = match get::<String>(ruby, options, "output_format")?.as_str() {
        "jsonl" => OutputFormat::Jsonl,
        "csv" => OutputFormat::Csv,
        "table" => OutputFormat::Table,
        other => return Err(argument(ruby, format!("unknown output format {other:?}"))),
    };
    let path =
        |name| get::<Option<String>>(ruby, options, name).map(|path| path.map(PathBuf::from));
    let state = match (path("state")?, path("state_scratch")?) {
        (Some(path), Some(scratch)) => Some(StateFiles { path, scratch }),
        (None, None) => None,
        _ => {
            return Err(argument(
                ruby,
                "a state file needs its scratch file".to_owned(),
            ))
        }
    };
    Ok(Job {
        windows,
        keys: get(ruby, options, "keys")?,
        time: get(ruby, options, "time")?,
        time_format,
        lag: duration(ruby, options, "lag")?,
        aggregates,
        sources,
        output: path("output")?,
        output_format,
        late: path("late")?,
        bad: path("bad")?,
        skip_bad: get(ruby, options, "skip_bad")?,
        state,
        fingerprint: get(ruby, options, "fingerprint")?,
        progress: get(ruby, options, "progress")?,
    })
}

/// Runs the job `options` describes. Returns the counts, or how it failed
/// as `{failure: kind, message: text}`; a signal that arrives meanwhile is
/// raised once the state is saved.
fn run_job(ruby: &Ruby, options: RHash) -> Result<RHash, Error> {
    let job = job(ruby, options)?;
    let mut interrupted = None;
    let mut stop = || match ruby.thread_check_ints() {
        Ok(()) => false,
        Err(error) => {
            interrupted = Some(error);
            true
        }
    };
    let outcome = run(&job, &mut stop);
    let result = ruby.hash_new();
    match outcome {
        Ok(summary) => {
            result.aset(ruby.to_symbol("events"), summary.events)?;
            result.aset(ruby.to_symbol("late"), summary.late)?;
            result.aset(ruby.to_symbol("outside"), summary.outside)?;
            result.aset(ruby.to_symbol("bad"), summary.bad)?;
            result.aset(ruby.to_symbol("results"), summary.results)?;
            result.aset(ruby.to_symbol("first_bad"), summary.first_bad)?;
            result.aset(ruby.to_symbol("resumed"), summary.resumed)?;
        }
        Err(Failure::Stopped) => {
            return Err(interrupted
                .unwrap_or_else(|| Error::new(ruby.exception_interrupt(), "stopped".to_owned())))
        }
        Err(failure) => {
            let (kind, message) = match failure {
                Failure::Usage(message) => ("usage", message),
                Failure::BadInput(message) => ("bad_input", message),
                Failure::BadLine(message) => ("bad_line", message),
                Failure::Output {
                    message,
                    broken_pipe,
                } => (if broken_pipe { "broken_pipe" } else { "output" }, message),
                Failure::Stopped => ("stopped", String::new()),
            };
            result.aset(ruby.to_symbol("failure"), ruby.to_symbol(kind))?;
            result.aset(ruby.to_symbol("message"), message)?;
        }
    }
    Ok(result)
}

pub fn define(module: RModule) -> Result<(), Error> {
    let command = module.define_module("Command")?;
    command.define_singleton_method("run_job", function!(run_job, 1))
}
