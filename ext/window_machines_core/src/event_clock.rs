//! The watermark of the aggregating trackers: stream time (the largest
//! timestamp seen) or a value the caller advances, less the grace period.

use crate::error::{Error, Result};
use crate::watermark::Watermark;

/// Where the time a watermark trails comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockMode {
    /// The largest timestamp added, as Kafka Streams and Quix keep it.
    Stream,
    /// What `advance` last set, for input merged from several sources.
    Manual,
}

/// How far behind that time the watermark sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trail {
    /// Windows: the watermark is time - grace, saturating at 0. A window
    /// `[start, end)` closes once `end <= watermark`.
    Windows,
    /// Sessions: late means at or below the watermark, so under stream time
    /// the watermark trails by one more tick and an event at the stream
    /// time is never late; it is unset until there is room.
    Sessions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventClock {
    mode: ClockMode,
    trail: Trail,
    grace: u64,
    time: Watermark,
    /// Set by [`EventClock::finish`]: a checkpoint carries it, since
    /// every event after it is late.
    ended: bool,
}

impl EventClock {
    #[must_use]
    pub fn new(mode: ClockMode, trail: Trail, grace: u64, time: Option<u64>) -> EventClock {
        EventClock {
            mode,
            trail,
            grace,
            time: Watermark::new(time),
            ended: false,
        }
    }

    #[must_use]
    pub fn mode(&self) -> ClockMode {
        self.mode
    }

    #[must_use]
    pub fn grace(&self) -> u64 {
        self.grace
    }

    /// Whether [`EventClock::finish`] ended the input.
    #[must_use]
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Checks a restored tracker against this clock: it holds `held`
    /// windows or sessions, the latest of them starting (a session: ending)
    /// at `latest`, and counted `late_count` late events. Ending the input
    /// hands everything over; under stream time an event held is one the
    /// stream time has seen; and an event is late only by a watermark.
    pub fn check_restored(&self, held: usize, latest: Option<u64>, late_count: u64) -> Result<()> {
        if self.ended && held > 0 {
            return Err(Error::HeldAfterEnd);
        }
        let stream_time = self.time();
        if let Some(at) = latest.filter(|_| self.mode == ClockMode::Stream) {
            if stream_time.is_none_or(|time| at > time) {
                return Err(Error::HeldAfterStreamTime { at, stream_time });
            }
        }
        if late_count > 0 && self.watermark().is_none() {
            return Err(Error::LateWithoutWatermark { late_count });
        }
        Ok(())
    }

    /// Stream time, or the value last advanced to.
    #[must_use]
    pub fn time(&self) -> Option<u64> {
        self.time.value()
    }

    #[must_use]
    pub fn watermark(&self) -> Option<u64> {
        self.watermark_at(self.time.value())
    }

    /// The watermark once an event at `timestamp` is seen.
    #[must_use]
    pub fn watermark_after(&self, timestamp: u64) -> Option<u64> {
        match self.mode {
            ClockMode::Stream => {
                let time = self
                    .time
                    .value()
                    .map_or(timestamp, |time| time.max(timestamp));
                self.watermark_at(Some(time))
            }
            ClockMode::Manual => self.watermark(),
        }
    }

    fn watermark_at(&self, time: Option<u64>) -> Option<u64> {
        if self.ended {
            return Some(u64::MAX);
        }
        let time = time?;
        match (self.trail, self.mode) {
            (Trail::Windows, _) => Some(time.saturating_sub(self.grace)),
            (Trail::Sessions, ClockMode::Stream) => time.checked_sub(self.grace)?.checked_sub(1),
            (Trail::Sessions, ClockMode::Manual) => time.checked_sub(self.grace),
        }
    }

    /// The same clock at `time` (a checkpoint's).
    #[must_use]
    pub fn at(self, time: Option<u64>) -> EventClock {
        EventClock {
            time: Watermark::new(time),
            ..self
        }
    }

    /// Records an event that was applied.
    /// Ends the input, whatever the mode: the watermark is `u64::MAX` from
    /// now on, so every window has closed and every event is late.
    pub fn finish(&mut self) {
        self.ended = true;
    }

    pub fn observe(&mut self, timestamp: u64) {
        if self.mode == ClockMode::Stream {
            self.time.advance(timestamp);
        }
    }

    /// Moves the manual time forward; says whether it moved. Stream clocks
    /// follow events only: `None`.
    pub fn advance(&mut self, time: u64) -> Option<bool> {
        match self.mode {
            ClockMode::Stream => None,
            ClockMode::Manual => Some(self.time.advance(time)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_time_holds_nothing_back() {
        for (mode, trail) in [
            (ClockMode::Stream, Trail::Windows),
            (ClockMode::Stream, Trail::Sessions),
            (ClockMode::Manual, Trail::Windows),
            (ClockMode::Manual, Trail::Sessions),
        ] {
            let mut clock = EventClock::new(mode, trail, 10, Some(50));
            clock.finish();
            assert_eq!(clock.watermark(), Some(u64::MAX));
            assert_eq!(clock.watermark_after(3), Some(u64::MAX));
        }
    }

    #[test]
    fn windows_trail_stream_time_by_grace_saturating() {
        let mut clock = EventClock::new(ClockMode::Stream, Trail::Windows, 10, None);
        assert_eq!(clock.watermark(), None);
        assert_eq!(clock.watermark_after(4), Some(0));
        clock.observe(25);
        clock.observe(20);
        assert_eq!(clock.watermark(), Some(15));
        assert_eq!(clock.advance(100), None);
    }

    #[test]
    fn a_restored_tracker_holds_only_what_its_clock_has_seen() {
        let stream = EventClock::new(ClockMode::Stream, Trail::Windows, 0, Some(50));
        assert_eq!(stream.check_restored(1, Some(50), 2), Ok(()));
        assert_eq!(
            stream.check_restored(1, Some(51), 0),
            Err(Error::HeldAfterStreamTime {
                at: 51,
                stream_time: Some(50)
            })
        );
        let unseen = stream.at(None);
        assert_eq!(unseen.check_restored(0, None, 0), Ok(()));
        assert_eq!(
            unseen.check_restored(1, Some(0), 0),
            Err(Error::HeldAfterStreamTime {
                at: 0,
                stream_time: None
            })
        );
        assert_eq!(
            unseen.check_restored(0, None, 3),
            Err(Error::LateWithoutWatermark { late_count: 3 })
        );
        // A manual clock holds windows ahead of what it was advanced to.
        let manual = EventClock::new(ClockMode::Manual, Trail::Windows, 0, None);
        assert_eq!(manual.check_restored(1, Some(500), 0), Ok(()));
        let mut ended = manual;
        ended.finish();
        assert_eq!(ended.check_restored(0, None, 1), Ok(()));
        assert_eq!(
            ended.check_restored(1, Some(5), 0),
            Err(Error::HeldAfterEnd)
        );
    }

    #[test]
    fn sessions_trail_one_tick_more_under_stream_time() {
        let mut clock = EventClock::new(ClockMode::Stream, Trail::Sessions, 0, None);
        assert_eq!(clock.watermark_after(0), None);
        clock.observe(10);
        assert_eq!(clock.watermark(), Some(9));
        let mut manual = EventClock::new(ClockMode::Manual, Trail::Sessions, 2, None);
        assert_eq!(manual.advance(1), Some(true));
        assert_eq!(manual.watermark(), None);
        assert_eq!(manual.advance(5), Some(true));
        assert_eq!(manual.watermark(), Some(3));
        assert_eq!(manual.watermark_after(100), Some(3));
    }
}
