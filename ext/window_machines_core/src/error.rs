use std::fmt;

/// Every way a call into the core can be refused.
///
/// The core never wraps, saturates or truncates a returned value: when a
/// result does not fit it says so here instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A size, width, slide or gap of zero: a window or gap that holds nothing.
    ZeroLength { name: &'static str },
    /// A window whose end would lie past `u64::MAX`.
    EndOverflow { start: u64, length: u64 },
    /// A window given with its start after its finish.
    StartAfterFinish { start: u64, finish: u64 },
    /// An event at or below the watermark: it may belong to a window that
    /// was already reported, so it is refused rather than misfiled.
    Late { timestamp: u64, watermark: u64 },
    /// A width-to-slide ratio that would put a timestamp in too many windows.
    TooManyWindows { width: u64, slide: u64 },
    /// A new session when the tracker already holds its limit.
    TooManySessions { limit: usize },
    /// A restored session whose first event is after its last.
    ReversedSpan { first: u64, last: u64 },
    /// Restored sessions out of order, overlapping, or not more than a gap apart.
    SpansTooClose {
        earlier: (u64, u64),
        later: (u64, u64),
        gap: u64,
    },
    /// More restored sessions than a tracker holds.
    TooManySpans { count: usize, limit: usize },
    /// A new key when a tracker already holds as many keys as it can index.
    TooManyKeys { limit: u64 },
    /// Hopping windows that would leave gaps between them.
    AdvancePastSize { size: u64, advance: u64 },
    /// An offset that is not below the step it shifts.
    OffsetPastStep { offset: u64, step: u64 },
    /// Hopping windows that would put an event in more windows than a
    /// tracker keeps accumulators for.
    TooManyHoppingWindows { size: u64, advance: u64, limit: u64 },
    /// A restored window that does not start where windows start.
    MisalignedWindow { start: u64 },
    /// A key's restored windows (or pane parts) out of order.
    WindowsOutOfOrder { earlier: u64, later: u64 },
    /// Restored accumulators that do not fit the aggregators or the window.
    BadAccumulators { start: u64 },
    /// A key's restored versions not in increasing time order.
    VersionsOutOfOrder { earlier: u64, later: u64 },
    /// A key's restored versions given in two places.
    KeyRepeated,
    /// A restored version newer than the stream time it was saved with.
    VersionAfterStreamTime { timestamp: u64, stream_time: u64 },
    /// Restored versions with no stream time: nothing was ever put.
    VersionsWithoutStreamTime,
    /// Restored windows or sessions under a clock whose input had ended,
    /// which hands everything over.
    HeldAfterEnd,
    /// A restored window (or pane) starting, or session ending, after the
    /// stream time, which has seen every event held.
    HeldAfterStreamTime { at: u64, stream_time: Option<u64> },
    /// Late events counted with no stream time or watermark they could have
    /// been late by.
    LateWithoutWatermark { late_count: u64 },
    /// A restored version no query could reach any more, which a table
    /// would have dropped.
    ExpiredVersion { timestamp: u64, cutoff: u64 },
}

/// The broad class of an [`Error`], which bindings map onto their own
/// exception hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The arguments contradict each other or the call's rules.
    Argument,
    /// A value or result outside what can be represented.
    Range,
    /// An event at or below the watermark.
    Late,
    /// A fixed capacity would be exceeded.
    Capacity,
}

impl Error {
    /// The capacity a [`ErrorKind::Capacity`] error would have exceeded.
    #[must_use]
    pub fn limit(&self) -> Option<u64> {
        match *self {
            Error::TooManyWindows { .. } => u64::try_from(crate::MAX_SLIDING_WINDOWS).ok(),
            Error::TooManySessions { limit } | Error::TooManySpans { limit, .. } => {
                u64::try_from(limit).ok()
            }
            Error::TooManyKeys { limit } | Error::TooManyHoppingWindows { limit, .. } => {
                Some(limit)
            }
            _ => None,
        }
    }

    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::ZeroLength { .. }
            | Error::StartAfterFinish { .. }
            | Error::ReversedSpan { .. }
            | Error::SpansTooClose { .. }
            | Error::AdvancePastSize { .. }
            | Error::OffsetPastStep { .. }
            | Error::MisalignedWindow { .. }
            | Error::WindowsOutOfOrder { .. }
            | Error::BadAccumulators { .. }
            | Error::VersionsOutOfOrder { .. }
            | Error::KeyRepeated
            | Error::VersionAfterStreamTime { .. }
            | Error::VersionsWithoutStreamTime
            | Error::HeldAfterEnd
            | Error::HeldAfterStreamTime { .. }
            | Error::LateWithoutWatermark { .. }
            | Error::ExpiredVersion { .. } => ErrorKind::Argument,
            Error::EndOverflow { .. } => ErrorKind::Range,
            Error::Late { .. } => ErrorKind::Late,
            Error::TooManyWindows { .. }
            | Error::TooManySessions { .. }
            | Error::TooManySpans { .. }
            | Error::TooManyKeys { .. }
            | Error::TooManyHoppingWindows { .. } => ErrorKind::Capacity,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ZeroLength { name } => write!(f, "{name} must be positive, got 0"),
            Error::EndOverflow { start, length } => write!(
                f,
                "the window starting at {start} ends past 2**64-1 ({start} + {length})"
            ),
            Error::StartAfterFinish { start, finish } => write!(
                f,
                "start must not be after finish, got start {start} and finish {finish}"
            ),
            Error::Late {
                timestamp,
                watermark,
            } => write!(
                f,
                "late event: timestamp {timestamp} is at or below the watermark {watermark}"
            ),
            Error::TooManyWindows { width, slide } => write!(
                f,
                "width {width} with slide {slide} puts a timestamp in up to {} windows, more than {}",
                width.div_ceil(slide),
                crate::MAX_SLIDING_WINDOWS
            ),
            Error::TooManySessions { limit } => write!(
                f,
                "a new session would exceed the {limit} sessions held at once; \
                 advance the watermark and take_closed to make room"
            ),
            Error::ReversedSpan { first, last } => write!(
                f,
                "session [{first}, {last}] must not end before it starts"
            ),
            Error::SpansTooClose {
                earlier: (earlier_first, earlier_last),
                later: (later_first, later_last),
                gap,
            } => write!(
                f,
                "sessions must be sorted and more than the gap {gap} apart, \
                 got [{earlier_first}, {earlier_last}] then [{later_first}, {later_last}]"
            ),
            Error::TooManyKeys { limit } => write!(
                f,
                "a new key would exceed the {limit} keys a tracker holds at once"
            ),
            Error::AdvancePastSize { size, advance } => write!(
                f,
                "advance must not exceed size, got size {size} and advance {advance}"
            ),
            Error::OffsetPastStep { offset, step } => write!(
                f,
                "offset must be below the step {step} it shifts windows by, got {offset}"
            ),
            Error::TooManyHoppingWindows {
                size,
                advance,
                limit,
            } => write!(
                f,
                "size {size} with advance {advance} puts an event in up to {} windows, more than {limit}",
                size.div_ceil(advance)
            ),
            Error::MisalignedWindow { start } => {
                write!(
                    f,
                    "nothing held can start at {start} and end where given \
                     (size, advance and offset, or the kind of tracker, say otherwise)"
                )
            }
            Error::WindowsOutOfOrder { earlier, later } => write!(
                f,
                "a key's windows must be sorted by start, a pane's first window not repeated, got {earlier} then {later}"
            ),
            Error::BadAccumulators { start } => write!(
                f,
                "the aggregates of the window at {start} do not match the aggregators, \
                 hold events outside it, count none, or (a session's) lack an event at either end"
            ),
            Error::TooManySpans { count, limit } => write!(
                f,
                "{count} sessions given, more than the {limit} a tracker holds"
            ),
            Error::VersionsOutOfOrder { earlier, later } => write!(
                f,
                "a key's versions must be in increasing time order, got {earlier} then {later}"
            ),
            Error::KeyRepeated => write!(f, "a key's versions must be given together, in one run"),
            Error::VersionAfterStreamTime {
                timestamp,
                stream_time,
            } => write!(
                f,
                "version at {timestamp} is newer than the stream time {stream_time}"
            ),
            Error::VersionsWithoutStreamTime => {
                write!(f, "versions are given but the stream time is nil")
            }
            Error::HeldAfterEnd => write!(f, "checkpoint of ended input holds windows"),
            Error::HeldAfterStreamTime {
                at,
                stream_time: Some(stream_time),
            } => write!(
                f,
                "a window or session held at {at} is after the stream time {stream_time}, \
                 which has seen every event held"
            ),
            Error::HeldAfterStreamTime {
                at,
                stream_time: None,
            } => write!(
                f,
                "a window or session is held at {at} but the stream time is nil: no event was added"
            ),
            Error::LateWithoutWatermark { late_count } => write!(
                f,
                "{late_count} late events are counted but there is no stream time or watermark \
                 they were late by"
            ),
            Error::ExpiredVersion { timestamp, cutoff } => write!(
                f,
                "version at {timestamp} is no longer reachable at the cutoff {cutoff} \
                 (stream time - history retention): a table would have dropped it"
            ),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
