use crate::error::{Error, Result};

/// The claim that no event at or below `value` will still arrive.
///
/// It starts unset (nothing seen yet) and only ever moves forward.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Watermark {
    value: Option<u64>,
}

impl Watermark {
    #[must_use]
    pub fn new(value: Option<u64>) -> Watermark {
        Watermark { value }
    }

    #[must_use]
    pub fn value(&self) -> Option<u64> {
        self.value
    }

    /// Moves the watermark to `timestamp` if that is forward; says whether it moved.
    pub fn advance(&mut self, timestamp: u64) -> bool {
        let moves = self.value.is_none_or(|value| timestamp > value);
        if moves {
            self.value = Some(timestamp);
        }
        moves
    }

    /// Refuses a late `timestamp`.
    pub fn admit(&self, timestamp: u64) -> Result<()> {
        match self.value {
            Some(watermark) if timestamp <= watermark => Err(Error::Late {
                timestamp,
                watermark,
            }),
            _ => Ok(()),
        }
    }

    /// Whether everything up to `time + lateness` is settled.
    ///
    /// A sum past `u64::MAX` counts as `u64::MAX`: once the watermark is
    /// there no event can still arrive, so the answer is exact.
    #[must_use]
    pub fn has_passed(&self, time: u64, lateness: u64) -> bool {
        self.value
            .is_some_and(|value| time.saturating_add(lateness) <= value)
    }

    /// Whether the window `[start, finish)` has waited `lateness` past its end.
    pub fn closes(&self, start: u64, finish: u64, lateness: u64) -> Result<bool> {
        if start > finish {
            return Err(Error::StartAfterFinish { start, finish });
        }
        Ok(self.has_passed(finish, lateness))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = u64::MAX;

    #[test]
    fn starts_unset_and_closes_nothing() {
        let watermark = Watermark::default();
        assert_eq!(watermark.value(), None);
        assert_eq!(watermark.closes(0, 0, 0), Ok(false));
        assert_eq!(watermark.admit(0), Ok(()));
    }

    #[test]
    fn advances_only_forward() {
        let mut watermark = Watermark::default();
        assert!(watermark.advance(22));
        assert!(!watermark.advance(9));
        assert!(!watermark.advance(22));
        assert_eq!(watermark.value(), Some(22));
        assert!(watermark.advance(23));
        assert_eq!(watermark.value(), Some(23));
    }

    #[test]
    fn first_advance_to_zero_moves() {
        let mut watermark = Watermark::default();
        assert!(watermark.advance(0));
        assert_eq!(watermark.value(), Some(0));
        assert!(watermark.admit(0).is_err());
        assert_eq!(watermark.admit(1), Ok(()));
    }

    #[test]
    fn closes_readme_examples() {
        let watermark = Watermark::new(Some(22));
        assert_eq!(watermark.closes(10, 20, 2), Ok(true));
        assert_eq!(watermark.closes(10, 20, 3), Ok(false));
        assert_eq!(watermark.closes(20, 30, 0), Ok(false));
    }

    #[test]
    fn closes_rejects_reversed_windows() {
        let watermark = Watermark::new(Some(5));
        assert_eq!(
            watermark.closes(3, 2, 0),
            Err(Error::StartAfterFinish {
                start: 3,
                finish: 2
            })
        );
        assert_eq!(watermark.closes(3, 3, 0), Ok(true));
    }

    #[test]
    fn closes_counts_overflowing_sums_as_the_top() {
        let below_top = Watermark::new(Some(MAX - 1));
        assert_eq!(below_top.closes(0, MAX, 1), Ok(false));
        assert_eq!(below_top.closes(0, MAX - 2, 1), Ok(true));
        assert_eq!(below_top.closes(0, MAX - 2, 2), Ok(false));
        let top = Watermark::new(Some(MAX));
        assert_eq!(top.closes(0, MAX, MAX), Ok(true));
        assert_eq!(top.closes(MAX, MAX, 1), Ok(true));
    }

    #[test]
    fn admit_refuses_at_and_below() {
        let watermark = Watermark::new(Some(40));
        assert_eq!(
            watermark.admit(40),
            Err(Error::Late {
                timestamp: 40,
                watermark: 40
            })
        );
        assert!(watermark.admit(39).is_err());
        assert_eq!(watermark.admit(41), Ok(()));
        assert_eq!(Watermark::default().admit(0), Ok(()));
    }
}
